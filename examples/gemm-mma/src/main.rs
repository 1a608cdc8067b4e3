//! Runs `gemm_mma::kernels::gemm_mma` (see the library for the algorithm) on random bf16
//! matrices, checks sampled entries against f64 sums, and times it.
use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
use cuda_device::half::{Bf16x2, bf16};
use gemm_mma::{BM, kernels};

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

/// C[i][j] in f64 from bf16 inputs, and the sum of |products| (the scale of rounding errors).
fn reference(a: &[bf16], b: &[bf16], k: usize, i: usize, j: usize) -> (f64, f64) {
    let (mut s, mut scale) = (0f64, 0f64);
    for p in 0..k {
        let t = a[i * k + p].to_f32() as f64 * b[j * k + p].to_f32() as f64;
        s += t;
        scale += t.abs();
    }
    (s, scale)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let dim: usize = args.next().map(|s| s.parse().expect("size: a multiple of 128")).unwrap_or(4096);
    assert!(dim.is_multiple_of(BM) && dim >= BM, "size must be a positive multiple of {BM}");
    let (m, n, k) = (dim, dim, dim);
    let ctx = CudaContext::new(0).expect("CUDA context");
    let stream = ctx.default_stream();
    let module = kernels::load(&ctx).expect("load the kernels");

    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let a: Vec<bf16> = (0..m * k).map(|_| rng.bf16()).collect();
    let b: Vec<bf16> = (0..n * k).map(|_| rng.bf16()).collect();
    let ad = DeviceBuffer::from_host(&stream, &a).expect("upload a");
    let bd = DeviceBuffer::from_host(&stream, &b).expect("upload b");
    let nan = Bf16x2::from_f32(f32::NAN, f32::NAN);
    let mut cd = DeviceBuffer::from_host(&stream, &vec![nan; m * n / 2]).expect("upload c");
    let cfg =
        LaunchConfig { grid_dim: ((n / BM) as u32, (m / BM) as u32, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
    let run = |cd: &mut DeviceBuffer<Bf16x2>| module.gemm_mma(&stream, cfg, &ad, &bd, cd, m as u32, n as u32, k as u32);
    run(&mut cd).expect("launch gemm_mma");
    let c: Vec<Bf16x2> = cd.to_host_vec(&stream).expect("download c");

    // 4096 sampled entries (every entry below 512): bf16 output rounding (2^-8 relative) plus
    // f32 accumulation (about sqrt(k) 2^-24 of the sum of |products|).
    let entries = if dim <= 512 { m * n } else { 4096 };
    let mut worst = 0f64;
    for e in 0..entries {
        let idx = if dim <= 512 { e } else { (rng.next() % (m * n) as u64) as usize };
        let (i, j) = (idx / n, idx % n);
        let (want, scale) = reference(&a, &b, k, i, j);
        let (lo, hi) = c[idx / 2].to_f32();
        let got = if idx % 2 == 0 { lo } else { hi } as f64;
        let tol = want.abs() * 2f64.powi(-8) + scale * 1e-6 * (k as f64).sqrt() + 1e-6;
        let err = (got - want).abs();
        worst = worst.max(err / tol);
        if err.is_nan() || err > tol {
            println!("FAIL gemm-mma {dim}^3: C[{i}][{j}] = {got}, want {want} (tolerance {tol:.2e})");
            std::process::exit(1);
        }
    }
    println!("PASS gemm-mma {dim}^3: {entries} entries checked, worst error {worst:.2} of tolerance");

    // Timing: 20 launches between events.
    let reps = 20;
    let start = std::time::Instant::now();
    for _ in 0..reps {
        run(&mut cd).expect("launch gemm_mma");
    }
    stream.synchronize().expect("synchronize");
    let secs = start.elapsed().as_secs_f64() / reps as f64;
    println!("gemm-mma {dim}^3: {:.3} ms, {:.1} TFLOP/s", secs * 1e3, 2.0 * (m * n * k) as f64 / secs / 1e12);
}
