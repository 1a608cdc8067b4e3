// Not a benchmark: the FP32 ceiling the SGEMM row is compared with. 8 independent FMA chains
// per thread (enough to hide FMA latency at full occupancy), result stored so nothing is dead.
extern "C" __global__ void fma_peak(float* __restrict__ out, int iters, float a, float b) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x0 = i, x1 = i + 1, x2 = i + 2, x3 = i + 3, x4 = i + 4, x5 = i + 5, x6 = i + 6, x7 = i + 7;
#pragma unroll 16
    for (int k = 0; k < iters; ++k) {
        x0 = fmaf(x0, a, b); x1 = fmaf(x1, a, b); x2 = fmaf(x2, a, b); x3 = fmaf(x3, a, b);
        x4 = fmaf(x4, a, b); x5 = fmaf(x5, a, b); x6 = fmaf(x6, a, b); x7 = fmaf(x7, a, b);
    }
    out[i] = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;
}
