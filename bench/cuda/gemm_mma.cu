// bf16 GEMM on the tensor cores, C = A * B: A row-major m x k, B column-major k x n (stored n x k,
// k contiguous), f32 accumulation, bf16 C row-major; m, n multiples of 128, k of 32. 128 x 128
// block tiles, 256 threads as 2 x 4 warps of 64 x 32, mma.sync.m16n8k16 fed by ldmatrix.x4 from
// shared tiles 32 wide whose 16-byte chunk c of row r sits at c ^ (r / 2 % 4), a 3-stage cp.async
// pipeline. The Rust kernel (gemm_mma in bench/src/kernels.rs, examples/gemm-mma) is the same
// algorithm with the same instructions.
#include <stdint.h>

#define BM 128
#define BK 32
#define STAGES 3
#define TILE (BM * BK)

__device__ __forceinline__ int swz(int row, int col) { return row * BK + (((col / 8) ^ ((row >> 1) & 3)) * 8) + (col % 8); }

// Two floats to bf16x2 (round to nearest even), `lo` in the low half (cuda_bf16.h's
// __floats2bfloat162_rn; written out so the twin needs no CUDA C++ headers).
__device__ __forceinline__ uint32_t pack_bf16x2(float lo, float hi) {
    uint32_t r;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}

__device__ __forceinline__ uint32_t smem(const void* p) { return (uint32_t)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void cp16(void* dst, const void* src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem(dst)), "l"(src) : "memory");
}

__device__ __forceinline__ void ldsm_x4(uint32_t (&r)[4], const void* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem(p))
                 : "memory");
}

__device__ __forceinline__ void mma(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

extern "C" __global__ void __launch_bounds__(256) gemm_mma(const uint16_t* __restrict__ a,
                                                          const uint16_t* __restrict__ b,
                                                          uint32_t* __restrict__ c, int m, int n, int k) {
    __shared__ __align__(128) uint16_t as[STAGES * TILE];
    __shared__ __align__(128) uint16_t bs[STAGES * TILE];
    int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    int wm = warp / 4, wn = warp % 4;
    int bm = blockIdx.y * BM, bn = blockIdx.x * BM;
    int ktiles = k / BK;
    auto load = [&](int kt, int s) {
#pragma unroll
        for (int h = 0; h < 2; h++) {
            int id = tid + 256 * h, row = id / 4, col = (id % 4) * 8, k0 = kt * BK + col;
            cp16(&as[s * TILE + swz(row, col)], &a[(size_t)(bm + row) * k + k0]);
            cp16(&bs[s * TILE + swz(row, col)], &b[(size_t)(bn + row) * k + k0]);
        }
    };
    float acc[4][4][4] = {};
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < ktiles) load(s, s);
        asm volatile("cp.async.commit_group;" ::: "memory");
    }
    for (int kt = 0; kt < ktiles; kt++) {
        asm volatile("cp.async.wait_group %0;" ::"n"(STAGES - 2) : "memory");
        __syncthreads();
        int next = kt + STAGES - 1;
        if (next < ktiles) load(next, next % STAGES);
        asm volatile("cp.async.commit_group;" ::: "memory");
        const uint16_t* at = &as[(kt % STAGES) * TILE];
        const uint16_t* bt = &bs[(kt % STAGES) * TILE];
#pragma unroll
        for (int kq = 0; kq < 2; kq++) {
            int kk = kq * 16;
            uint32_t fa[4][4], fb[4][2];
#pragma unroll
            for (int i = 0; i < 4; i++) {
                int row = wm * 64 + i * 16 + lane % 16;
                ldsm_x4(fa[i], &at[swz(row, kk + (lane / 16) * 8)]);
            }
#pragma unroll
            for (int jp = 0; jp < 2; jp++) {
                int row = wn * 32 + jp * 16 + lane % 8 + 8 * (lane / 16);
                uint32_t r[4];
                ldsm_x4(r, &bt[swz(row, kk + ((lane / 8) % 2) * 8)]);
                fb[2 * jp][0] = r[0];
                fb[2 * jp][1] = r[1];
                fb[2 * jp + 1][0] = r[2];
                fb[2 * jp + 1][1] = r[3];
            }
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
                for (int j = 0; j < 4; j++) mma(acc[i][j], fa[i], fb[j][0], fb[j][1]);
        }
    }
    int g = lane / 4, t = lane % 4;
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++) {
            int row = bm + wm * 64 + i * 16 + g, col = bn + wn * 32 + j * 8 + 2 * t;
            c[((size_t)row * n + col) / 2] = pack_bf16x2(acc[i][j][0], acc[i][j][1]);
            c[((size_t)(row + 8) * n + col) / 2] = pack_bf16x2(acc[i][j][2], acc[i][j][3]);
        }
}
