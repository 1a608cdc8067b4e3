//! `oxide-bench`: the same algorithms as Rust kernels (cuda-oxide) and as CUDA C++ (nvcc cubins
//! from `bench/cuda/`), checked against a CPU reference and timed in one process; prints a table
//! against the measured device-to-device copy and FP32 FMA ceilings. See bench/README.md.

mod benches;
mod check;
mod compute_benches;
#[path = "../../examples/gemm/src/cublas.rs"]
mod cublas;
#[path = "../../examples/gemm/src/cublaslt.rs"]
mod cublaslt;
mod kernels;
mod measure;
mod row_benches;
mod sgemm;
mod vector_benches;

use std::path::PathBuf;

use benches::{Env, Outcome, Row, Work};
use check::Lcg;
use cuda_core::CudaContext;
use measure::{Nvcc, ck};

const USAGE: &str = "usage: oxide-bench [--cubin-dir DIR] [--reps N] [--warmup N] [--only NAME,…] [--quick] [--seed N]
  --cubin-dir DIR  the nvcc cubins (bench/run.sh builds them; default $BENCH_CUBIN_DIR, else cubin/ beside the binary)
  --reps N         timed launches per side (default 30; median reported)
  --warmup N       untimed launches per side first (default 3)
  --only NAMES     comma-separated subset of: vecadd saxpy reduce transpose histogram sgemm vecadd_v4
                   reduce_v4 softmax layernorm stencil5 nbody attention attention_causal scan axpy_bf16 sgemm128
                   gemm_mma_4k gemm_mma_8k gemm_wgmma_4k gemm_wgmma_8k
                   gemm_tile_4k gemm_tile_8k gemm_tile_mc_4k gemm_tile_mc_8k gemm_tile_pp_4k gemm_tile_pp_8k
                   gemm_fp8_4k gemm_fp8_8k gemm_fp8_pp_4k gemm_fp8_pp_8k
  --quick          4x fewer elements per vector, 16x fewer per matrix, 64x fewer SGEMM FLOPs (smoke test)
  --seed N         input seed (default: from the clock)";

struct Options {
    cubin_dir: Option<PathBuf>,
    reps: usize,
    warmup: usize,
    only: Option<Vec<String>>,
    shift: u32,
    seed: Option<u64>,
}

fn parse_args() -> Result<Options, String> {
    let mut o = Options { cubin_dir: None, reps: 30, warmup: 3, only: None, shift: 0, seed: None };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{a} needs a value\n{USAGE}"));
        let number = |v: String| v.parse::<u64>().map_err(|_| format!("{a}: `{v}` is not a number\n{USAGE}"));
        match a.as_str() {
            "--cubin-dir" => o.cubin_dir = Some(PathBuf::from(value()?)),
            "--reps" => o.reps = number(value()?)?.max(1) as usize,
            "--warmup" => o.warmup = number(value()?)? as usize,
            "--only" => o.only = Some(value()?.split(',').map(str::to_string).collect()),
            "--seed" => o.seed = Some(number(value()?)?),
            "--quick" => o.shift = 2,
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            _ => return Err(format!("unknown argument `{a}`\n{USAGE}")),
        }
    }
    if o.cubin_dir.is_none() {
        o.cubin_dir = std::env::var_os("BENCH_CUBIN_DIR").map(PathBuf::from).or_else(|| {
            let beside = std::env::current_exe().ok()?.parent()?.join("cubin");
            beside.is_dir().then_some(beside)
        });
    }
    Ok(o)
}

fn main() {
    match run() {
        Ok(true) => {}
        Ok(false) => std::process::exit(1),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}

type Bench = fn(&mut Env<'_>) -> Result<Row, String>;
const BENCHES: [(&str, Bench); 31] = [
    ("vecadd", benches::vecadd),
    ("saxpy", benches::saxpy),
    ("reduce", benches::reduce),
    ("transpose", benches::transpose),
    ("histogram", benches::histogram),
    ("sgemm", benches::sgemm),
    ("vecadd_v4", vector_benches::vecadd_v4),
    ("reduce_v4", vector_benches::reduce_v4),
    ("softmax", row_benches::softmax),
    ("layernorm", row_benches::layernorm),
    ("stencil5", row_benches::stencil),
    ("nbody", compute_benches::nbody),
    ("attention", compute_benches::attention),
    ("attention_causal", compute_benches::attention_causal),
    ("scan", vector_benches::scan),
    ("axpy_bf16", vector_benches::axpy_bf16),
    ("sgemm128", compute_benches::sgemm128),
    ("gemm_mma_4k", compute_benches::gemm_mma_4k),
    ("gemm_mma_8k", compute_benches::gemm_mma_8k),
    ("gemm_wgmma_4k", compute_benches::gemm_wgmma_4k),
    ("gemm_wgmma_8k", compute_benches::gemm_wgmma_8k),
    ("gemm_tile_4k", compute_benches::gemm_tile_4k),
    ("gemm_tile_8k", compute_benches::gemm_tile_8k),
    ("gemm_tile_mc_4k", compute_benches::gemm_tile_mc_4k),
    ("gemm_tile_mc_8k", compute_benches::gemm_tile_mc_8k),
    ("gemm_tile_pp_4k", compute_benches::gemm_tile_pp_4k),
    ("gemm_tile_pp_8k", compute_benches::gemm_tile_pp_8k),
    ("gemm_fp8_4k", compute_benches::gemm_fp8_4k),
    ("gemm_fp8_8k", compute_benches::gemm_fp8_8k),
    ("gemm_fp8_pp_4k", compute_benches::gemm_fp8_pp_4k),
    ("gemm_fp8_pp_8k", compute_benches::gemm_fp8_pp_8k),
];

/// `Ok(false)` when some kernel failed its check.
fn run() -> Result<bool, String> {
    let o = parse_args()?;
    let started = std::time::Instant::now();
    let ctx = ck(CudaContext::new(0), "CudaContext::new(0)")?;
    let stream = ctx.default_stream();
    let (major, minor) = ctx.capability();
    let l2 = measure::l2_bytes(&ctx)?;
    println!(
        "device: {} (sm_{major}{minor}, {} SMs, {:.0} MB L2, {:.1} GB)",
        ctx.name(),
        ctx.sm_count(),
        l2 as f64 / 1e6,
        ctx.total_memory() as f64 / 1e9
    );
    let rust = ck(
        kernels::kernels::load(&ctx),
        "load the Rust kernels (build with `cargo oxide build --release --arch sm_90`)",
    )?;
    println!("rust:   kernels embedded by cargo oxide (oxide-rustc: LLVM 22 llc → PTX → ptxas)");
    let nvcc = match &o.cubin_dir {
        Some(dir) => match Nvcc::load(&ctx, dir) {
            Ok(n) => {
                println!("nvcc:   cubins from {} ({})", n.dir.display(), n.version);
                Some(n)
            }
            Err(e) => {
                println!("nvcc:   NOT LOADED: {e}; only the Rust side runs");
                None
            }
        },
        None => {
            println!(
                "nvcc:   no cubin folder (--cubin-dir, $BENCH_CUBIN_DIR, or run bench/run.sh); only the Rust side runs"
            );
            None
        }
    };

    let copy_bw = measure::copy_ceiling(&ctx, &stream)?;
    println!("ceiling: device-to-device copy {:.0} GB/s (1 GiB cuMemcpyDtoD, read + write bytes)", copy_bw / 1e9);
    let fma = match &nvcc {
        Some(n) => match measure::fma_ceiling(&ctx, &stream, n) {
            Ok(f) => {
                println!(
                    "ceiling: FP32 FMA {:.1} TFLOP/s (calibrate.cu fma_peak, 8 chains/thread, full occupancy)",
                    f / 1e12
                );
                Some(f)
            }
            Err(e) => {
                println!("ceiling: FP32 FMA not measured: {e}");
                None
            }
        },
        None => None,
    };
    let seed = o.seed.unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1)
    });
    println!("inputs: random, seed {seed} (--seed to replay); outputs poisoned with NaN before each check");
    println!(
        "timing: CUDA events around each launch, {} warm-up + {} timed launches per side, interleaved; median",
        o.warmup, o.reps
    );

    let mut env = Env {
        ctx: &ctx,
        stream: &stream,
        rust: &rust,
        nvcc: nvcc.as_ref(),
        rng: Lcg(seed),
        warmup: o.warmup,
        reps: o.reps,
        l2,
        shift: o.shift,
    };
    let (mut rows, mut errors) = (Vec::new(), 0);
    for (name, bench) in BENCHES {
        if o.only.as_ref().is_some_and(|only| !only.iter().any(|n| n == name)) {
            continue;
        }
        println!("{name}:");
        let t = std::time::Instant::now();
        match bench(&mut env) {
            Ok(row) => {
                println!("    {} ({:.1} s)", row.note, t.elapsed().as_secs_f64());
                rows.push(row);
            }
            // A launch that fails while being timed, or an allocation: report it and go on.
            Err(e) => {
                println!("    ERROR: {e}");
                errors += 1;
            }
        }
    }
    print_table(&rows, copy_bw, fma);
    println!("total {:.1} s", started.elapsed().as_secs_f64());
    let wrong = rows.iter().any(|r| matches!(r.rust, Outcome::Wrong(_)) || matches!(r.nvcc, Outcome::Wrong(_)));
    if wrong {
        println!("SOME KERNELS FAILED THEIR CHECK (see `check … FAILED` above); they were not timed");
    }
    if errors > 0 {
        println!("{errors} benchmark(s) stopped with an error (see `ERROR` above)");
    }
    Ok(!wrong && errors == 0)
}

fn print_table(rows: &[Row], copy_bw: f64, fma: Option<f64>) {
    println!();
    println!(
        "{:<10} {:<28} {:>10} {:>9} {:>9} {:>9} {:>7} {:>13} {:>13} {:>10} {:>10}",
        "benchmark",
        "size",
        "counted",
        "floor ms",
        "rust ms",
        "nvcc ms",
        "rust/nv",
        "rust",
        "nvcc",
        "% ceiling",
        "% cuBLAS"
    );
    let mut ratios = Vec::new();
    for r in rows {
        let (counted, floor, rate) = match r.work {
            Work::Bytes(b) => (
                format!("{:.0} MB", b / 1e6),
                Some(b / copy_bw * 1e3),
                Box::new(move |ms: f64| (b / (ms * 1e-3) / 1e9, "GB/s", copy_bw / 1e9))
                    as Box<dyn Fn(f64) -> (f64, &'static str, f64)>,
            ),
            Work::Flops(f) => (
                format!("{:.1} GFLOP", f / 1e9),
                fma.map(|p| f / p * 1e3),
                Box::new(move |ms: f64| (f / (ms * 1e-3) / 1e9, "GFLOP/s", fma.unwrap_or(f64::NAN) / 1e9))
                    as Box<dyn Fn(f64) -> (f64, &'static str, f64)>,
            ),
        };
        let ms = |o: &Outcome| match o {
            Outcome::Timed(t) => Some(t.median_ms),
            _ => None,
        };
        let cell = |o: &Outcome| match o {
            Outcome::Timed(t) => format!("{:.3}", t.median_ms),
            Outcome::Wrong(_) => "WRONG".into(),
            Outcome::Missing(_) => "-".into(),
        };
        let achieved = |o: &Outcome| match ms(o) {
            Some(m) => {
                let (v, unit, _) = rate(m);
                format!("{v:.0} {unit}")
            }
            None => "-".into(),
        };
        let pct = |o: &Outcome| match ms(o) {
            Some(m) => {
                let (v, _, ceil) = rate(m);
                if ceil.is_nan() { "?".into() } else { format!("{:.0}%", 100.0 * v / ceil) }
            }
            None => "-".into(),
        };
        let ratio = match (ms(&r.rust), ms(&r.nvcc)) {
            (Some(a), Some(b)) => {
                ratios.push((r.name, a / b));
                format!("{:.2}", a / b)
            }
            _ => "-".into(),
        };
        // Speed as a fraction of cuBLAS's on the same problem: cuBLAS time / our time.
        let of_blas = match r.cublas.as_ref().and_then(ms) {
            Some(b) => {
                let pct = |o: &Outcome| ms(o).map_or("-".to_string(), |t| format!("{:.0}%", 100.0 * b / t));
                format!("{}/{}", pct(&r.rust), pct(&r.nvcc))
            }
            None if r.cublas.is_some() => "n/a".into(),
            None => String::new(),
        };
        let floor = floor.map(|f| format!("{f:.3}")).unwrap_or_else(|| "?".into());
        println!(
            "{:<10} {:<28} {:>10} {:>9} {:>9} {:>9} {:>7} {:>13} {:>13} {:>10} {:>10}",
            r.name,
            r.size,
            counted,
            floor,
            cell(&r.rust),
            cell(&r.nvcc),
            ratio,
            achieved(&r.rust),
            achieved(&r.nvcc),
            format!("{}/{}", pct(&r.rust), pct(&r.nvcc)),
            of_blas
        );
    }
    if !ratios.is_empty() {
        let geomean = (ratios.iter().map(|(_, r)| r.ln()).sum::<f64>() / ratios.len() as f64).exp();
        let (worst, max) = ratios.iter().fold(("", 0f64), |w, &(n, r)| if r > w.1 { (n, r) } else { w });
        println!();
        println!(
            "rust/nvcc over {} benchmarks: geomean {geomean:.3}, highest {max:.2} ({worst}); targets: geomean <= 1.00, none above 1.05",
            ratios.len()
        );
    }
    let spread: Vec<String> = rows
        .iter()
        .filter_map(|r| match (&r.rust, &r.nvcc) {
            (Outcome::Timed(a), Outcome::Timed(b)) => {
                Some(format!("{} {:.0}%/{:.0}%", r.name, 100.0 * a.spread, 100.0 * b.spread))
            }
            (Outcome::Timed(a), _) => Some(format!("{} {:.0}%/-", r.name, 100.0 * a.spread)),
            _ => None,
        })
        .collect();
    println!();
    println!(
        "counted: the fewest bytes through device memory (inputs read once, outputs written once) or the FLOPs (2n^3);"
    );
    println!(
        "floor: counted / ceiling (copy bandwidth for bytes, FP32 FMA rate for FLOPs): no version runs much faster."
    );
    println!("rust/nv: Rust median over nvcc median; below 1.00 the Rust kernel is faster. % ceiling: rust/nvcc.");
    println!("% cuBLAS: cuBLAS SGEMM time over each side's time on the same matrices (100% = as fast as cuBLAS).");
    println!("noise (p90-p10 over median, rust/nvcc): {}; ratios within that of 1.00 are a tie.", spread.join(", "));
    for r in rows {
        for (side, o) in [("rust", &r.rust), ("nvcc", &r.nvcc)] {
            match o {
                Outcome::Wrong(e) => println!("{} {side}: WRONG (not timed): {e}", r.name),
                Outcome::Missing(e) => println!("{} {side}: not run: {e}", r.name),
                Outcome::Timed(_) => {}
            }
        }
    }
}
