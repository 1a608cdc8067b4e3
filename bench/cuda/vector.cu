// Vector-access twins: vecadd on float4, block_sum reading float4 in its grid-stride loop, and
// y = a * x + y on bf16 pairs, one fma.rn.bf16x2 per thread (what __hfma2 on __nv_bfloat162
// compiles to, written as inline PTX so that no CCCL headers are needed).

extern "C" __global__ void vecadd_v4(const float4* __restrict__ a, const float4* __restrict__ b,
                                     float4* __restrict__ c, int n4) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 x = a[i], y = b[i];
        c[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
    }
}

extern "C" __global__ void __launch_bounds__(256) block_sum_v4(const float4* __restrict__ x,
                                                               float* __restrict__ partial, int n4) {
    __shared__ float parts[8];
    float acc = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += blockDim.x * gridDim.x) {
        float4 v = x[i];
        acc += (v.x + v.y) + (v.z + v.w);
    }
    for (int offset = 16; offset > 0; offset >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, offset);
    __syncthreads();
    if ((threadIdx.x & 31) == 0) parts[threadIdx.x >> 5] = acc;
    __syncthreads();
    float total = 0.0f;
    for (int w = 0; w < 8; ++w) total += parts[w];
    if (threadIdx.x == 0) partial[blockIdx.x] = total;
}

__device__ __forceinline__ unsigned hfma2_bf16(unsigned a, unsigned b, unsigned c) {
    unsigned d;
    asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
    return d;
}

extern "C" __global__ void axpy_bf16(unsigned a, const unsigned* __restrict__ x, unsigned* __restrict__ y, int n2) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n2) y[i] = hfma2_bf16(a, x[i], y[i]);
}
