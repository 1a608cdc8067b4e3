// Register-blocked SGEMM, C = A * B (m x k times k x n, row-major, multiples of 128 / 8): 128 x 128
// block tiles, 8-deep k tiles, 256 threads with 8 x 8 outputs each as two 4 x 4 quadrants 64 apart
// (conflict-free float4 reads of shared memory), float4 global loads, and double-buffered shared
// memory: the next k tile goes to registers while this one is multiplied. The Rust kernel
// (sgemm128 in bench/src/kernels.rs) is the same algorithm.
#define BM 128
#define BK 8

extern "C" __global__ void __launch_bounds__(256, 2) sgemm128(const float* __restrict__ a, const float* __restrict__ b,
                                                           float* __restrict__ c, int m, int n, int k) {
    __shared__ __align__(16) float as[2][BK][BM];
    __shared__ __align__(16) float bs[2][BK][BM];
    int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
    int row0 = blockIdx.y * BM, col0 = blockIdx.x * BM;
    int a_row = tid / 2, a_k = (tid % 2) * 4;
    int b_row = tid / 32, b_col = (tid % 32) * 4;
    const float4* a4 = reinterpret_cast<const float4*>(a);
    const float4* b4 = reinterpret_cast<const float4*>(b);
    float acc[8][8] = {};
    size_t a_base = ((size_t)(row0 + a_row) * k + a_k) / 4, b_base = ((size_t)b_row * n + col0 + b_col) / 4;

    float4 av = a4[a_base];
    float4 bv = b4[b_base];
    as[0][a_k + 0][a_row] = av.x;
    as[0][a_k + 1][a_row] = av.y;
    as[0][a_k + 2][a_row] = av.z;
    as[0][a_k + 3][a_row] = av.w;
    *reinterpret_cast<float4*>(&bs[0][b_row][b_col]) = bv;
    __syncthreads();

    int buf = 0;
    for (int kt = 0; kt < k; kt += BK) {
        int next = kt + BK;
        float4 an = make_float4(0, 0, 0, 0), bn = make_float4(0, 0, 0, 0);
        if (next < k) {
            an = a4[a_base + next / 4];
            bn = b4[b_base + (size_t)next * n / 4];
        }
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            float4 a0 = *reinterpret_cast<const float4*>(&as[buf][kk][ty * 4]);
            float4 a1 = *reinterpret_cast<const float4*>(&as[buf][kk][64 + ty * 4]);
            float4 b0 = *reinterpret_cast<const float4*>(&bs[buf][kk][tx * 4]);
            float4 b1 = *reinterpret_cast<const float4*>(&bs[buf][kk][64 + tx * 4]);
            float ar[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
            float br[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j) acc[i][j] += ar[i] * br[j];
        }
        if (next < k) {
            int nb = buf ^ 1;
            as[nb][a_k + 0][a_row] = an.x;
            as[nb][a_k + 1][a_row] = an.y;
            as[nb][a_k + 2][a_row] = an.z;
            as[nb][a_k + 3][a_row] = an.w;
            *reinterpret_cast<float4*>(&bs[nb][b_row][b_col]) = bn;
        }
        __syncthreads();
        buf ^= 1;
    }
    float4* c4 = reinterpret_cast<float4*>(c);
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        int row = row0 + (i / 4) * 64 + ty * 4 + i % 4;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            int col = col0 + h * 64 + tx * 4;
            c4[((size_t)row * n + col) / 4] =
                make_float4(acc[i][4 * h], acc[i][4 * h + 1], acc[i][4 * h + 2], acc[i][4 * h + 3]);
        }
    }
}
