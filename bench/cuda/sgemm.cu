// Tiled SGEMM, C = A * B for n x n row-major matrices (n a multiple of 32): blocks of 32 x 32
// threads, one C element per thread, 32 x 32 tiles of A and B in shared memory, FP32 FMA (no
// tensor cores).
#define TILE 32

extern "C" __global__ void __launch_bounds__(1024) sgemm(const float* __restrict__ a,
                                                         const float* __restrict__ b,
                                                         float* __restrict__ c, int n) {
    __shared__ float as[TILE * TILE];
    __shared__ float bs[TILE * TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int t = 0; t < n; t += TILE) {
        as[ty * TILE + tx] = a[row * n + t + tx];
        bs[ty * TILE + tx] = b[(t + ty) * n + col];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k) acc += as[ty * TILE + k] * bs[k * TILE + tx];
        __syncthreads();
    }
    c[row * n + col] = acc;
}
