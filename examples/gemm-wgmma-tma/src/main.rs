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
use cuda_core::tma::{TensorMap, TmaElement, TmaSwizzle};
use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
use cuda_device::half::{Bf16x2, bf16};
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

/// A small xorshift generator: reproducible inputs without a dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// Uniform in [-1, 1), rounded to bf16.
    fn bf16(&mut self) -> bf16 {
        bf16::from_f32((self.next() >> 40) as f32 / (1u64 << 23) as f32 - 1.0)
    }
}

fn main() {
    let dim: usize = std::env::args().nth(1).map(|s| s.parse().expect("size: a multiple of 128")).unwrap_or(4096);
    assert!(dim.is_multiple_of(BM) && dim >= BM, "size must be a positive multiple of {BM}");
    let (m, n, k) = (dim, dim, dim);
    let ctx = CudaContext::new(0).expect("CUDA context");
    let stream = ctx.default_stream();
    let module = kernels::load(&ctx).expect("load the kernels (this example needs an sm_90 GPU, built for sm_90a)");

    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let a: Vec<bf16> = (0..m * k).map(|_| rng.bf16()).collect();
    let b: Vec<bf16> = (0..n * k).map(|_| rng.bf16()).collect();
    let ad = DeviceBuffer::from_host(&stream, &a).expect("upload a");
    let bd = DeviceBuffer::from_host(&stream, &b).expect("upload b");
    let map = |buf: &DeviceBuffer<bf16>, rows: usize| {
        TensorMap::tiled_2d(
            buf.as_device_ptr(),
            TmaElement::Bf16,
            rows as u64,
            k as u64,
            BM as u32,
            BK as u32,
            TmaSwizzle::B128,
        )
        .expect("encode a tensor map")
    };
    let maps = DeviceBuffer::from_host(&stream, &[map(&ad, m), map(&bd, n)]).expect("upload the maps");
    let nan = Bf16x2::from_f32(f32::NAN, f32::NAN);
    let mut cd = DeviceBuffer::from_host(&stream, &vec![nan; m * n / 2]).expect("upload c");
    let cfg = LaunchConfig {
        grid_dim: ((n / BM) as u32, (m / BM) as u32, 1),
        block_dim: (384, 1, 1),
        shared_mem_bytes: SMEM_BYTES as u32,
    };
    let run = |cd: &mut DeviceBuffer<Bf16x2>| module.gemm_wgmma(&stream, cfg, &maps, cd, m as u32, n as u32, k as u32);
    run(&mut cd).expect("launch gemm_wgmma");
    let c: Vec<Bf16x2> = cd.to_host_vec(&stream).expect("download c");

    // Sampled entries against float64 sums: within 2^-8 of the sum of |products| (bf16 output
    // rounding is at most 2^-9 of |c|, f32 accumulation far less).
    let entries = if dim <= 512 { m * n } else { 4096 };
    let mut worst = 0f64;
    for e in 0..entries {
        let idx = if dim <= 512 { e } else { (rng.next() % (m * n) as u64) as usize };
        let (i, j) = (idx / n, idx % n);
        let (mut want, mut scale) = (0f64, 0f64);
        for p in 0..k {
            let t = a[i * k + p].to_f32() as f64 * b[j * k + p].to_f32() as f64;
            want += t;
            scale += t.abs();
        }
        let (lo, hi) = c[idx / 2].to_f32();
        let got = if idx % 2 == 0 { lo } else { hi } as f64;
        let err = (got - want).abs() / (scale + 1e-6);
        worst = worst.max(err);
        if err.is_nan() || err > 2f64.powi(-8) {
            println!("FAIL gemm-wgmma-tma {dim}^3: C[{i}][{j}] = {got}, want {want} (error {err:.2e} of {scale:.3e})");
            std::process::exit(1);
        }
    }
    println!(
        "PASS gemm-wgmma-tma {dim}^3: {entries} entries checked, worst error {worst:.1e} of the sum of |products|"
    );

    let reps = 20;
    let start = std::time::Instant::now();
    for _ in 0..reps {
        run(&mut cd).expect("launch gemm_wgmma");
    }
    stream.synchronize().expect("synchronize");
    let secs = start.elapsed().as_secs_f64() / reps as f64;
    println!("gemm-wgmma-tma {dim}^3: {:.3} ms, {:.1} TFLOP/s", secs * 1e3, 2.0 * (m * n * k) as f64 / secs / 1e12);
}
