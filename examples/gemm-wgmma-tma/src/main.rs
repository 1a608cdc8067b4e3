//! Runs `gemm_wgmma_tma::kernels::gemm_wgmma` (see the library for the algorithm; build for
//! `sm_90a`) on random bf16 matrices, checks sampled entries against f64 sums, and times it.
use cuda_core::tma::{TensorMap, TmaElement, TmaSwizzle};
use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
use cuda_device::half::{Bf16x2, bf16};
use gemm_wgmma_tma::{BK, BM, SMEM_BYTES, kernels};

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
