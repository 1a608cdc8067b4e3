//! bf16 GEMM on Hopper's warpgroup tensor cores: `C = A·B`, A row-major (M×K), B column-major
//! (stored N×K, K contiguous), f32 accumulation, bf16 C (row-major). Build for `sm_90a`.
//!
//! One block of 384 threads computes a 128×128 tile of C, warp-specialised: warpgroup 0 is the
//! producer — one thread issues TMA loads of 128×64 tiles of A and B (128-byte swizzle) into a
//! 4-stage ring of shared buffers, each completing on that stage's `full` mbarrier — and
//! warpgroups 1 and 2 are consumers: each waits for a stage, runs four `wgmma.mma_async`
//! m64n128k16 on its 64 rows, waits for them, and releases the stage on its `empty` mbarrier.
//! `setmaxnreg` moves registers from the producer to the consumers. M and N multiples of 128,
//! K of 64.
//!
//! The kernel is this library's, so that `bench/` times the very kernel `main.rs` verifies.
use cuda_core::tma::TensorMap;
use cuda_device::half::Bf16x2;
use cuda_device::mbarrier::{self, MBarrier, Ring};
use cuda_device::{DynamicSharedArray, cuda_module, kernel, launch_bounds, sync_threads, thread, tma, wgmma};

/// Block tile (M and N), K step, pipeline depth.
pub const BM: usize = 128;
pub const BK: usize = 64;
pub const STAGES: usize = 4;
/// Bytes of one stage's tile of A (or of B): 128 rows of 64 bf16.
const TILE_BYTES: usize = BM * BK * 2;
/// Dynamic shared memory: A and B rings, then 2 × STAGES mbarriers.
pub const SMEM_BYTES: usize = 2 * STAGES * TILE_BYTES + 2 * STAGES * 8;

#[cuda_module]
pub mod kernels {
    use super::*;

    #[kernel]
    #[launch_bounds(384, 1)]
    pub fn gemm_wgmma(maps: &[TensorMap], c: &mut [Bf16x2], m: u32, n: u32, k: u32) {
        let (_m, n, k) = (m as usize, n as usize, k as usize);
        let smem = DynamicSharedArray::<u8, 1024>::get_raw();
        let (a_ring, b_ring) = (smem, unsafe { smem.add(STAGES * TILE_BYTES) });
        let bars = unsafe { smem.add(2 * STAGES * TILE_BYTES) } as *mut u64;
        // full[s]: the producer's expect_tx arrival + the TMA bytes; empty[s]: one arrival per
        // consumer warpgroup.
        let full = |s: usize| unsafe { MBarrier::new(bars.add(s)) };
        let empty = |s: usize| unsafe { MBarrier::new(bars.add(STAGES + s)) };
        let t = thread::threadIdx_x() as usize;
        let (a_map, b_map) = (&maps[0] as *const TensorMap, &maps[1] as *const TensorMap);
        if t == 0 {
            for s in 0..STAGES {
                unsafe {
                    full(s).init(1);
                    empty(s).init(2);
                }
            }
            mbarrier::fence_init();
            unsafe {
                tma::prefetch(a_map);
                tma::prefetch(b_map);
            }
        }
        sync_threads();
        let (bm, bn) = (thread::blockIdx_y() as usize * BM, thread::blockIdx_x() as usize * BM);
        let ktiles = k / BK;
        let wg = t / 128;
        if wg == 0 {
            unsafe { mbarrier::setmaxnreg_dec::<40>() };
            if t == 0 {
                let mut ring = Ring::<STAGES>::new();
                for kt in 0..ktiles {
                    let s = ring.stage();
                    if kt >= STAGES {
                        // The consumers' release of this stage's previous round.
                        empty(s).wait_parity(ring.parity() ^ 1);
                    }
                    full(s).arrive_expect_tx(2 * TILE_BYTES as u32);
                    let x = (kt * BK) as i32;
                    unsafe {
                        tma::load_2d(a_ring.add(s * TILE_BYTES), a_map, x, bm as i32, full(s));
                        tma::load_2d(b_ring.add(s * TILE_BYTES), b_map, x, bn as i32, full(s));
                    }
                    ring.advance();
                }
            }
            return;
        }
        unsafe { mbarrier::setmaxnreg_inc::<232>() };
        // Consumer warpgroup 1 takes rows 0..64 of the tile, 2 rows 64..128 (8 KiB further).
        let half = (wg - 1) * 64;
        let mut acc = wgmma::Accumulator::<64>::ZERO;
        let mut ring = Ring::<STAGES>::new();
        for _ in 0..ktiles {
            let s = ring.stage();
            full(s).wait_parity(ring.parity());
            let (a_tile, b_tile) = unsafe { (a_ring.add(s * TILE_BYTES + half * BK * 2), b_ring.add(s * TILE_BYTES)) };
            unsafe {
                wgmma::fence();
                #[unroll]
                for kk in 0..4u32 {
                    let da = wgmma::descriptor_k_major_128b(a_tile, kk * 16);
                    let db = wgmma::descriptor_k_major_128b(b_tile, kk * 16);
                    wgmma::mma_bf16(&mut acc, da, db, true);
                }
                wgmma::commit_group();
                wgmma::wait_group::<0, 64>(&mut acc);
            }
            if t.is_multiple_of(128) {
                empty(s).arrive();
            }
            ring.advance();
        }
        let tw = (t % 128) as u32;
        #[unroll]
        for i in 0..32 {
            let (r, col) = wgmma::Accumulator::<64>::coord(tw, 2 * i);
            let row = bm + half + r;
            c[(row * n + bn + col) / 2] = Bf16x2::from_f32(acc.d[2 * i], acc.d[2 * i + 1]);
        }
    }
}
