// Row-wise softmax and layer normalisation of a rows x 1024 matrix: one block of 256 threads per
// row, four elements per thread in registers, block reductions through warp shuffles and eight
// warp partials in shared memory (the same steps as the Rust kernels).
#define ROW 1024

__device__ __forceinline__ float block_sum_256(float v) {
    __shared__ float parts[8];
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
    __syncthreads();
    if ((threadIdx.x & 31) == 0) parts[threadIdx.x >> 5] = v;
    __syncthreads();
    float total = 0.0f;
    for (int w = 0; w < 8; ++w) total += parts[w];
    return total;
}

__device__ __forceinline__ float block_max_256(float v) {
    __shared__ float parts[8];
    for (int offset = 16; offset > 0; offset >>= 1) {
        float o = __shfl_xor_sync(0xffffffffu, v, offset);
        if (o > v) v = o;
    }
    __syncthreads();
    if ((threadIdx.x & 31) == 0) parts[threadIdx.x >> 5] = v;
    __syncthreads();
    float m = parts[0];
    for (int w = 1; w < 8; ++w) {
        float o = parts[w];
        if (o > m) m = o;
    }
    return m;
}

extern "C" __global__ void __launch_bounds__(256) softmax(const float* __restrict__ x, float* __restrict__ y) {
    int t = threadIdx.x;
    size_t base = (size_t)blockIdx.x * ROW;
    float v[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) v[j] = x[base + t + 256 * j];
    float m = v[0];
#pragma unroll
    for (int j = 1; j < 4; ++j)
        if (v[j] > m) m = v[j];
    m = block_max_256(m);
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        v[j] = expf(v[j] - m);
        s += v[j];
    }
    s = block_sum_256(s);
#pragma unroll
    for (int j = 0; j < 4; ++j) y[base + t + 256 * j] = v[j] / s;
}

extern "C" __global__ void __launch_bounds__(256) layernorm(const float* __restrict__ x,
                                                            const float* __restrict__ gamma,
                                                            const float* __restrict__ beta, float* __restrict__ y) {
    int t = threadIdx.x;
    size_t base = (size_t)blockIdx.x * ROW;
    float v[4];
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        v[j] = x[base + t + 256 * j];
        s += v[j];
    }
    float mean = block_sum_256(s) / (float)ROW;
    float q = 0.0f;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        v[j] -= mean;
        q += v[j] * v[j];
    }
    float var = block_sum_256(q) / (float)ROW;
    float rstd = 1.0f / sqrtf(var + 1e-5f);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        int c = t + 256 * j;
        y[base + c] = v[j] * rstd * gamma[c] + beta[c];
    }
}
