//! Runs the GEMMs of `gemm::kernels` (build for `sm_90a`; an H100 or H200 runs them): checks
//! every variant on ragged and square shapes against float64 sums on the CPU (every entry of the
//! small shapes, sampled entries of the large ones) and against cuBLAS (`cublasGemmEx`, bf16,
//! TN; for fp8, cuBLASLt's e4m3 GEMM), `gemm` also on the three other layouts (A column-major
//! and/or B row-major, against cuBLAS given the same), then times them and cuBLAS at 4096³ and
//! 8192³.
//!
//! `gemm [--quick] [--reps N] [--only KERNEL] [--size N] [--bf16 | --fp8]`: `--quick` skips
//! 8192³, `--only` runs one kernel (`gemm`, `gemm_cluster`, `gemm_direct`, `gemm_pingpong`,
//! `gemm_fp8`, `gemm_fp8_cluster`, `gemm_fp8_pingpong`), `--size` only N³ (a profiler's run),
//! `--bf16`/`--fp8` one element type. Prints PASS/FAIL per check and a table; exits non-zero
//! when a check fails or a CUDA call errs.
use std::error::Error;

use cuda_core::{CudaContext, CudaEvent, CudaStream, DeviceBuffer};
use cuda_device::fp8::E4M3;
use cuda_device::half::{Bf16x2, bf16};
use gemm::{Gemm, Layout, Operands, Variant};

mod cublas;
mod cublaslt;
mod fp8;

/// xorshift64: reproducible inputs without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// Uniform in [-1, 1).
    fn uniform(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }
    /// Uniform in [-1, 1), rounded to bf16.
    fn bf16(&mut self) -> bf16 {
        bf16::from_f32(self.uniform())
    }
    /// Uniform in [-2, 2), rounded to E4M3 (every exponent from the subnormals to 2).
    fn e4m3(&mut self) -> E4M3 {
        E4M3::from_f32(2.0 * self.uniform())
    }
}

/// One problem on the host and the device.
struct Problem {
    m: usize,
    n: usize,
    k: usize,
    alpha: f32,
    a: Vec<bf16>,
    b: Vec<bf16>,
    bias: Vec<f32>,
    ad: DeviceBuffer<bf16>,
    bd: DeviceBuffer<bf16>,
    biasd: DeviceBuffer<f32>,
}

impl Problem {
    fn new(
        stream: &CudaStream,
        rng: &mut Rng,
        (m, n, k): (usize, usize, usize),
        alpha: f32,
        with_bias: bool,
    ) -> Result<Problem, Box<dyn Error>> {
        let a: Vec<bf16> = (0..m * k).map(|_| rng.bf16()).collect();
        let b: Vec<bf16> = (0..n * k).map(|_| rng.bf16()).collect();
        let bias: Vec<f32> = if with_bias { (0..n).map(|_| rng.bf16().to_f32()).collect() } else { Vec::new() };
        let (ad, bd, biasd) = (
            DeviceBuffer::from_host(stream, &a)?,
            DeviceBuffer::from_host(stream, &b)?,
            DeviceBuffer::from_host(stream, &bias)?,
        );
        Ok(Problem { m, n, k, alpha, a, b, bias, ad, bd, biasd })
    }

    /// Copies of A and B on the device stored as `a_layout` / `b_layout` say, where that is not
    /// how `ad` (A row-major) and `bd` (B column-major) are: `None` where it is.
    fn stored(
        &self,
        stream: &CudaStream,
        a_layout: Layout,
        b_layout: Layout,
    ) -> Result<[Option<DeviceBuffer<bf16>>; 2], Box<dyn Error>> {
        // `a` is M × K row-major and `b` N × K row-major (B column-major): a transpose of
        // either is the other layout.
        let transposed = |x: &[bf16], rows: usize, cols: usize| {
            let t: Vec<bf16> = (0..rows * cols).map(|i| x[(i % rows) * cols + i / rows]).collect();
            DeviceBuffer::from_host(stream, &t)
        };
        let a = (a_layout == Layout::ColMajor).then(|| transposed(&self.a, self.m, self.k)).transpose()?;
        let b = (b_layout == Layout::RowMajor).then(|| transposed(&self.b, self.n, self.k)).transpose()?;
        Ok([a, b])
    }

    /// C[i][j] in float64 from the bf16 inputs, and the scale its error is measured against:
    /// |alpha| · Σ|products| + |bias|.
    fn reference(&self, i: usize, j: usize) -> (f64, f64) {
        let (mut sum, mut abs) = (0f64, 0f64);
        for p in 0..self.k {
            let t = self.a[i * self.k + p].to_f32() as f64 * self.b[j * self.k + p].to_f32() as f64;
            sum += t;
            abs += t.abs();
        }
        let bias = self.bias.get(j).map_or(0.0, |&b| b as f64);
        (self.alpha as f64 * sum + bias, (self.alpha as f64).abs() * abs + bias.abs() + 1e-6)
    }
}

/// Value `idx` of a row-major bf16 matrix held as pairs.
fn at(c: &[Bf16x2], idx: usize) -> f64 {
    let (lo, hi) = c[idx / 2].to_f32();
    (if idx.is_multiple_of(2) { lo } else { hi }) as f64
}

/// A problem whose C has float64 reference values.
trait Reference {
    /// M and N.
    fn mn(&self) -> (usize, usize);
    /// C[i][j] in float64 from the inputs, and the scale its error is measured against (the sum
    /// of the products' magnitudes, times the scalars).
    fn reference(&self, i: usize, j: usize) -> (f64, f64);
}

impl Reference for Problem {
    fn mn(&self) -> (usize, usize) {
        (self.m, self.n)
    }
    fn reference(&self, i: usize, j: usize) -> (f64, f64) {
        Problem::reference(self, i, j)
    }
}

/// Checks `c` against float64 sums: every entry when `all`, else 2048 sampled ones. The error
/// allowed is 2^-8 of the scale (bf16 rounding of C is at most 2^-9 of it; f32 accumulation
/// adds about √K · 2^-24).
fn check_reference(p: &impl Reference, c: &[Bf16x2], all: bool, rng: &mut Rng) -> Result<f64, String> {
    let (m, n) = p.mn();
    let entries: Vec<usize> =
        if all { (0..m * n).collect() } else { (0..2048).map(|_| (rng.next() % (m * n) as u64) as usize).collect() };
    let mut worst = 0f64;
    for idx in entries {
        let (i, j) = (idx / n, idx % n);
        let (want, scale) = p.reference(i, j);
        let got = at(c, idx);
        let err = (got - want).abs() / scale;
        if err.is_nan() || err > 2f64.powi(-8) {
            return Err(format!("C[{i}][{j}] = {got}, want {want} (error {err:.2e} of the scale {scale:.3e})"));
        }
        worst = worst.max(err);
    }
    Ok(worst)
}

/// What `got` is compared with besides the float64 sums: a library's result, the relative
/// distance allowed from it, and the library's name.
type Library<'a> = Option<(&'a [Bf16x2], f64, &'a str)>;

/// `got` against float64 sums ([`check_reference`]) and, when given, a library's result;
/// prints PASS or FAIL for `what` and returns whether it passed.
fn check(p: &impl Reference, what: &str, got: &[Bf16x2], library: Library<'_>, all: bool, rng: &mut Rng) -> bool {
    let (m, n) = p.mn();
    let verdict = check_reference(p, got, all, rng).and_then(|worst| match library {
        Some((want, allowed, name)) => {
            let d = distance(got, want, m * n);
            if d.is_nan() || d > allowed {
                Err(format!("‖C − {name}‖/‖{name}‖ = {d:.2e}"))
            } else {
                Ok((worst, format!(", {d:.1e} from {name}")))
            }
        }
        None => Ok((worst, String::new())),
    });
    match verdict {
        Ok((worst, from)) => {
            let entries = if all { "all" } else { "2048 sampled" };
            println!("PASS {what}: {entries} entries, worst error {worst:.1e} of the scale{from}");
            true
        }
        Err(e) => {
            println!("FAIL {what}: {e}");
            false
        }
    }
}

/// ‖ours − cuBLAS‖ / ‖cuBLAS‖ over every entry (NaN if any entry of ours is NaN).
fn distance(ours: &[Bf16x2], theirs: &[Bf16x2], len: usize) -> f64 {
    let (mut d, mut s) = (0f64, 0f64);
    for idx in 0..len {
        let (x, y) = (at(ours, idx), at(theirs, idx));
        d += (x - y) * (x - y);
        s += y * y;
    }
    (d / s.max(1e-30)).sqrt()
}

/// The layouts `gemm` takes, TN (A row-major, B column-major: every kernel's) first.
const LAYOUTS: [(Layout, Layout); 4] = [
    (Layout::RowMajor, Layout::ColMajor),
    (Layout::ColMajor, Layout::ColMajor),
    (Layout::RowMajor, Layout::RowMajor),
    (Layout::ColMajor, Layout::RowMajor),
];

/// Median milliseconds of each of `n` launches `run(0)` … `run(n - 1)`, timed interleaved:
/// `reps` rounds of one launch of each, each between two events, after 3 warm-up rounds — so
/// that the card's clocks and temperature, which drift over a long run, weigh on all alike.
fn time_all(
    ctx: &std::sync::Arc<CudaContext>,
    stream: &CudaStream,
    reps: usize,
    n: usize,
    mut run: impl FnMut(usize) -> Result<(), Box<dyn Error>>,
) -> Result<Vec<f64>, Box<dyn Error>> {
    for _ in 0..3 {
        (0..n).try_for_each(&mut run)?;
    }
    let events: Vec<(CudaEvent, CudaEvent)> = (0..reps * n)
        .map(|_| Ok((CudaEvent::new(ctx)?, CudaEvent::new(ctx)?)))
        .collect::<Result<_, cuda_core::DriverError>>()?;
    for (e, (start, stop)) in events.iter().enumerate() {
        start.record(stream)?;
        run(e % n)?;
        stop.record(stream)?;
    }
    stream.synchronize()?;
    let mut ms = vec![Vec::with_capacity(reps); n];
    for (e, (start, stop)) in events.iter().enumerate() {
        ms[e % n].push(f64::from(start.elapsed_ms(stop)?));
    }
    Ok(ms
        .into_iter()
        .map(|mut v| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        })
        .collect())
}

fn main() {
    if let Err(e) = run() {
        println!("FAIL gemm: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    let value = |flag: &str| args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1));
    let reps = value("--reps").map_or(Ok(20), |s| s.parse())?;
    let (bf16_only, fp8_only) = (args.iter().any(|a| a == "--bf16"), args.iter().any(|a| a == "--fp8"));
    let variants: Vec<Variant> =
        Variant::ALL.into_iter().filter(|v| !fp8_only && value("--only").is_none_or(|o| o == v.name())).collect();
    let fp8_variants: Vec<Variant> = Variant::FP8
        .into_iter()
        .filter(|v| !bf16_only && value("--only").is_none_or(|o| Some(o.as_str()) == v.fp8_name()))
        .collect();
    if variants.is_empty() && fp8_variants.is_empty() {
        return Err("--only: expected a kernel of gemm::kernels".into());
    }
    let ctx = CudaContext::new(0)?;
    let stream = ctx.default_stream();
    let gemm = Gemm::new(&ctx).map_err(|e| format!("load the kernels (an sm_90 GPU, built for sm_90a): {e}"))?;
    let blas = cublas::Cublas::new(&stream);
    if let Err(e) = &blas {
        println!("(cuBLAS not available: {e}; its comparisons are skipped)");
    }
    let seed =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64) | 1;
    println!("gemm on {} ({} SMs), seed {seed:#x}", ctx.name(), ctx.sm_count());
    let mut rng = Rng(seed);
    let nan = Bf16x2::from_f32(f32::NAN, f32::NAN);
    let mut failed = 0;

    // Correctness: ragged shapes (every entry), then the timed sizes (sampled entries + cuBLAS).
    let mut shapes = vec![
        ((16, 16, 16), 1.0, false, true),
        ((272, 528, 208), 0.5, true, true),
        ((1040, 784, 1088), -1.0, true, false),
    ];
    let mut sizes: Vec<usize> = if quick { vec![4096] } else { vec![4096, 8192] };
    if let Some(size) = value("--size") {
        shapes.clear();
        sizes = vec![size.parse()?];
    }
    shapes.extend(sizes.iter().map(|&d| ((d, d, d), 1.0, false, false)));
    let (mut table, mut layout_rows) = (Vec::new(), Vec::new());
    let fp8_shapes = shapes.clone();
    for (shape, alpha, with_bias, all) in shapes {
        if variants.is_empty() {
            break;
        }
        let p = Problem::new(&stream, &mut rng, shape, alpha, with_bias)?;
        let (m, n, k) = shape;
        let mut c = DeviceBuffer::from_host(&stream, &vec![nan; m * n / 2])?;
        // TN with every kernel, then the other layouts with `gemm` (the same matrices stored
        // transposed): each checked against the float64 sums and cuBLAS given the same layouts,
        // then timed against that cuBLAS call.
        for (la, lb) in LAYOUTS {
            let tn = (la, lb) == LAYOUTS[0];
            let here: Vec<Variant> = variants.iter().copied().filter(|&v| tn || v == Variant::Plain).collect();
            if here.is_empty() {
                continue;
            }
            let [a_copy, b_copy] = p.stored(&stream, la, lb)?;
            let (a, b) = (a_copy.as_ref().unwrap_or(&p.ad), b_copy.as_ref().unwrap_or(&p.bd));
            let ops = Operands::with_layouts((a, la), (b, lb), &p.biasd, shape)?;
            let (ap, bp, cp) = (a.as_device_ptr(), b.as_device_ptr(), c.as_device_ptr());
            let want = match &blas {
                Ok(h) if alpha == 1.0 && !with_bias => {
                    let cb = DeviceBuffer::from_host(&stream, &vec![nan; m * n / 2])?;
                    h.gemm_bf16(shape, (ap, la), (bp, lb), cb.as_device_ptr())?;
                    Some(cb.to_host_vec(&stream)?)
                }
                _ => None,
            };
            let tag = if tn { String::new() } else { format!(" A {la:?} B {lb:?}") };
            for &variant in &here {
                c.copy_from_host(&stream, &vec![nan; m * n / 2])?;
                gemm.run(&stream, variant, &ops, &mut c, alpha)?;
                let got = c.to_host_vec(&stream)?;
                let bias = if with_bias { ", bias" } else { "" };
                let what = format!("{}{tag} {m}x{n}x{k} (alpha {alpha}{bias})", variant.name());
                let library = want.as_deref().map(|w| (w, 2f64.powi(-8), "cuBLAS"));
                failed += usize::from(!check(&p, &what, &got, library, all, &mut rng));
            }
            if m < 4096 || failed > 0 {
                continue;
            }
            // Timing: only checked kernels, at the square sizes. Ours, then cuBLAS (when there),
            // interleaved.
            if tn {
                for &variant in &here {
                    let cfg = gemm.config(variant, m, n);
                    let (blocks, smem) = (cfg.grid_dim.0, cfg.shared_mem_bytes);
                    println!("  {} launch: {blocks} blocks of 384 threads, {smem} B of shared memory", variant.name());
                }
            }
            let ms = time_all(&ctx, &stream, reps, here.len() + usize::from(blas.is_ok()), |i| match here.get(i) {
                Some(&v) => gemm.run(&stream, v, &ops, &mut c, 1.0),
                None => Ok(blas.as_ref().map_err(|e| e.clone())?.gemm_bf16(shape, (ap, la), (bp, lb), cp)?),
            })?;
            let flops = 2.0 * (m * n * k) as f64;
            let (ours, theirs) = ms.split_at(here.len());
            let blas_ms = theirs.first().copied();
            if tn {
                let mut row = vec![format!("{m}^3")];
                for &t in ours {
                    let pct = blas_ms.map_or(String::new(), |b| format!(" {:>4.0}%", 100.0 * b / t));
                    row.push(format!("{:>7.3} ms {:>5.0} TF{pct}", t, flops / t / 1e9));
                }
                row.push(blas_ms.map_or("-".into(), |b| format!("{b:.3} ms {:.0} TF", flops / b / 1e9)));
                table.push(row);
            } else {
                let theirs = blas_ms.map_or(String::new(), |b| {
                    format!(" | cuBLAS {b:.3} ms {:.0} TF | {:.0}%", flops / b / 1e9, 100.0 * b / ours[0])
                });
                let ours = format!("gemm {:.3} ms {:.0} TF", ours[0], flops / ours[0] / 1e9);
                layout_rows.push(format!("{m}^3{tag}: {ours}{theirs}"));
            }
        }
    }
    let fp8_table = fp8::check_and_time(&ctx, &stream, &gemm, &fp8_variants, &fp8_shapes, reps, &mut rng, &mut failed)?;
    if !variants.is_empty() {
        let names: Vec<String> = variants.iter().map(|v| format!("{:^24}", v.name())).collect();
        println!("\nsize    | {} | cuBLAS", names.join(" | "));
        for row in &table {
            println!("{}", row.join(" | "));
        }
    }
    for row in &layout_rows {
        println!("{row}");
    }
    if !fp8_variants.is_empty() {
        let names: Vec<String> = fp8_variants.iter().filter_map(|v| v.fp8_name()).map(|n| format!("{n:^24}")).collect();
        println!("\nfp8     | {} | cuBLASLt fast accum | cuBLASLt", names.join(" | "));
        for row in &fp8_table {
            println!("{}", row.join(" | "));
        }
    }
    println!("(median of {reps} launches each; % = cuBLAS time / ours; fp8: % of cuBLASLt with fast accumulation)");
    if failed > 0 {
        return Err(format!("{failed} checks failed").into());
    }
    Ok(())
}
