//! bf16 GEMM on the tensor cores: `C = A·B` with A row-major (M×K), B column-major (K×N, i.e.
//! stored N×K with K contiguous), f32 accumulation, bf16 C (row-major M×N).
//!
//! One block of 256 threads computes a 128×128 tile of C; 8 warps as 2 (M) × 4 (N), each a
//! 64×32 tile: 4×4 `mma.sync.m16n8k16` per 16-deep step, fragments from shared memory with
//! `ldmatrix.x4`. K advances 32 at a time through a 3-stage `cp.async` pipeline; shared tiles
//! are 32 elements (four 16-byte chunks) wide, chunk `c` of row `r` stored at `c ^ (r / 2 % 4)`
//! so that the 8 rows one `ldmatrix` reads hit different banks. M and N multiples of 128,
//! K of 32.
//!
//! The kernel is this library's, so that `bench/` times the very kernel `main.rs` verifies.
// Register arrays indexed by unrolled loop counters, as the CUDA C++ version writes them.
#![allow(clippy::needless_range_loop)]
use cuda_device::half::{Bf16x2, bf16};
use cuda_device::mma::{self, Accumulator, FragA, FragB};
use cuda_device::{SharedMemory, async_copy, cuda_module, kernel, launch_bounds, sync_threads, thread};

/// Block tile (M and N) and K step.
pub const BM: usize = 128;
pub const BK: usize = 32;
const STAGES: usize = 3;
const TILE: usize = BM * BK;

/// Element offset of (row, col) in a swizzled BM×BK shared tile.
#[inline(always)]
fn swz(row: usize, col: usize) -> usize {
    row * BK + (((col / 8) ^ ((row >> 1) & 3)) * 8) + (col % 8)
}

#[cuda_module]
pub mod kernels {
    use super::*;

    #[kernel]
    #[launch_bounds(256)]
    pub fn gemm_mma(a: &[bf16], b: &[bf16], c: &mut [Bf16x2], m: u32, n: u32, k: u32) {
        static AS: SharedMemory<bf16, { STAGES * TILE }, 128> = SharedMemory::UNINIT;
        static BS: SharedMemory<bf16, { STAGES * TILE }, 128> = SharedMemory::UNINIT;
        let (_m, n, k) = (m as usize, n as usize, k as usize);
        let tid = thread::threadIdx_x() as usize;
        let lane = (tid % 32) as u32;
        let warp = tid / 32;
        let (wm, wn) = (warp / 4, warp % 4);
        let (bm, bn) = (thread::blockIdx_y() as usize * BM, thread::blockIdx_x() as usize * BM);
        let (a_s, b_s) = (AS.as_mut_ptr(), BS.as_mut_ptr());
        let ktiles = k / BK;
        // Tile `kt` into stage `s`: 512 16-byte chunks of A and of B, two of each per thread.
        let load = |kt: usize, s: usize| {
            let mut h = 0;
            while h < 2 {
                let id = tid + 256 * h;
                let (row, col) = (id / 4, (id % 4) * 8);
                let k0 = kt * BK + col;
                unsafe {
                    let da = a_s.add(s * TILE + swz(row, col));
                    let db = b_s.add(s * TILE + swz(row, col));
                    async_copy::cp_async_cg_16(da.cast(), a.as_ptr().add((bm + row) * k + k0).cast());
                    async_copy::cp_async_cg_16(db.cast(), b.as_ptr().add((bn + row) * k + k0).cast());
                }
                h += 1;
            }
        };
        let mut acc = [[Accumulator::ZERO; 4]; 4];
        let mut s = 0;
        while s < STAGES - 1 {
            if s < ktiles {
                load(s, s);
            }
            async_copy::cp_async_commit_group();
            s += 1;
        }
        let mut kt = 0;
        while kt < ktiles {
            async_copy::wait_group::<{ (STAGES - 2) as u32 }>();
            sync_threads();
            // Every warp is past tile kt - 1: its stage can be refilled.
            let next = kt + STAGES - 1;
            if next < ktiles {
                load(next, next % STAGES);
            }
            async_copy::cp_async_commit_group();
            let (at, bt) = unsafe { (a_s.add((kt % STAGES) * TILE), b_s.add((kt % STAGES) * TILE)) };
            let l = lane as usize;
            #[unroll]
            for kq in 0..2 {
                let kk = kq * 16;
                let mut fa = [FragA::<bf16>::from_regs([0; 4]); 4];
                let mut fb = [FragB::<bf16>::from_regs([0; 2]); 4];
                #[unroll]
                for i in 0..4 {
                    let row = wm * 64 + i * 16 + l % 16;
                    let p = unsafe { at.add(swz(row, kk + (l / 16) * 8)) };
                    fa[i] = FragA::from_regs(unsafe { mma::ldmatrix_x4(p.cast()) });
                }
                #[unroll]
                for jp in 0..2 {
                    let row = wn * 32 + jp * 16 + l % 8 + 8 * (l / 16);
                    let p = unsafe { bt.add(swz(row, kk + ((l / 8) % 2) * 8)) };
                    let r = unsafe { mma::ldmatrix_x4(p.cast()) };
                    fb[2 * jp] = FragB::from_regs([r[0], r[1]]);
                    fb[2 * jp + 1] = FragB::from_regs([r[2], r[3]]);
                }
                #[unroll]
                for i in 0..4 {
                    #[unroll]
                    for j in 0..4 {
                        unsafe { mma::mma_sync(&fa[i], &fb[j], &mut acc[i][j]) };
                    }
                }
            }
            kt += 1;
        }
        // Registers 0,1 of tile (i, j) are C[g][2t..2t+2], registers 2,3 C[g + 8][..].
        let (g, t) = ((lane / 4) as usize, (lane % 4) as usize);
        #[unroll]
        for i in 0..4 {
            #[unroll]
            for j in 0..4 {
                let row = bm + wm * 64 + i * 16 + g;
                let col = bn + wn * 32 + j * 8 + 2 * t;
                let d = acc[i][j].d;
                c[(row * n + col) / 2] = Bf16x2::from_f32(d[0], d[1]);
                c[((row + 8) * n + col) / 2] = Bf16x2::from_f32(d[2], d[3]);
            }
        }
    }
}
