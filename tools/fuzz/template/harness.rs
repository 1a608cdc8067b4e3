//! The host side of an oxide-fuzz batch binary (copied into every generated crate by `oxide-fuzz`;
//! edit it in tools/fuzz/template/). Runs each program's `run` on the CPU for every thread and, unless
//! `--cpu-only`, as a kernel on the GPU over the same seeds and input (output poisoned first, every
//! CUDA call checked), and compares the checksums thread by thread.
//!
//! Flags: `--cpu-only`, `--write-refs FILE` (one `id digest` line per program), `--expect FILE`
//! (the digests the CPU of the build machine computed: checked too), `--from K` (skip the first K
//! programs: run.sh restarts after a program that broke the context), `--only ID`.
//! Output: `RUN <k> <id>` before each GPU launch, then `PASS <id>` or `FAIL <id>: why`; finally
//! `N passed, N failed`. Exit status 0 when all passed, 1 when some failed, 3 when the CUDA context
//! broke (`ABORT next=<k>`: rerun with `--from <k>`), 2 on a usage or setup error.
use std::collections::HashMap;
use std::fmt::Display;
use std::sync::Arc;

use cuda_core::{CudaContext, CudaStream, DeviceBuffer, DriverError, LaunchConfig};

use crate::common::{POISON, THREADS, cpu_sums, digest, input};

/// The GPU launch of one program's kernel.
pub type Launch<M> = fn(
    &M,
    &CudaStream,
    LaunchConfig,
    &DeviceBuffer<u64>,
    &mut DeviceBuffer<u64>,
) -> Result<(), DriverError>;

pub struct Program<M: 'static> {
    /// `seed:index`, as `oxide-fuzz gen` takes it.
    pub id: &'static str,
    pub cpu: fn(u64, &[u64]) -> u64,
    pub gpu: Launch<M>,
}

struct Args {
    cpu_only: bool,
    write_refs: Option<String>,
    expect: Option<String>,
    from: usize,
    only: Option<String>,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        cpu_only: std::env::var_os("FUZZ_CPU_ONLY").is_some_and(|v| v != "0"),
        write_refs: None,
        expect: None,
        from: 0,
        only: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value"));
        match arg.as_str() {
            "--cpu-only" => a.cpu_only = true,
            "--write-refs" => a.write_refs = Some(value("--write-refs")?),
            "--expect" => a.expect = Some(value("--expect")?),
            "--from" => {
                a.from = value("--from")?
                    .parse()
                    .map_err(|e| format!("--from: {e}"))?
            }
            "--only" => a.only = Some(value("--only")?),
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Ok(a)
}

fn read_refs(path: &str) -> Result<HashMap<String, u64>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("read {path}: {e}"))?;
    let mut refs = HashMap::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let (id, d) = line
            .split_once(' ')
            .ok_or_else(|| format!("{path}: bad line `{line}`"))?;
        let d = u64::from_str_radix(d.trim(), 16).map_err(|e| format!("{path}: `{line}`: {e}"))?;
        refs.insert(id.to_string(), d);
    }
    Ok(refs)
}

/// Device state of a GPU run.
struct Gpu<M> {
    _ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    module: M,
    input: DeviceBuffer<u64>,
    out: DeviceBuffer<u64>,
}

fn setup<M, E: Display>(
    load: fn(&Arc<CudaContext>) -> Result<M, E>,
    input: &[u64],
) -> Result<Gpu<M>, String> {
    let ctx = CudaContext::new(0).map_err(|e| format!("CudaContext::new(0): {e}"))?;
    let stream = ctx.default_stream();
    let module = load(&ctx).map_err(|e| format!("kernels::load: {e}"))?;
    let input = DeviceBuffer::from_host(&stream, input)
        .map_err(|e| format!("copy the input to the device: {e}"))?;
    let out = DeviceBuffer::from_host(&stream, &vec![POISON; THREADS])
        .map_err(|e| format!("allocate the output: {e}"))?;
    stream
        .synchronize()
        .map_err(|e| format!("synchronize after setup: {e}"))?;
    Ok(Gpu {
        _ctx: ctx,
        stream,
        module,
        input,
        out,
    })
}

/// What went wrong with one GPU run: a mismatch (the context is fine) or a broken context.
enum GpuError {
    Mismatch(String),
    Broken(String),
}

fn run_gpu<M>(gpu: &mut Gpu<M>, p: &Program<M>, want: &[u64]) -> Result<(), GpuError> {
    fn broken(what: &'static str) -> impl Fn(DriverError) -> GpuError {
        move |e| GpuError::Broken(format!("{what}: {e}"))
    }
    gpu.out
        .copy_from_host(&gpu.stream, &vec![POISON; THREADS])
        .map_err(broken("poison the output"))?;
    let config = LaunchConfig::for_num_elems(THREADS as u32);
    (p.gpu)(&gpu.module, &gpu.stream, config, &gpu.input, &mut gpu.out)
        .map_err(broken("launch"))?;
    gpu.stream.synchronize().map_err(broken(
        "synchronize after the launch (the kernel faulted or trapped)",
    ))?;
    let got = gpu
        .out
        .to_host_vec(&gpu.stream)
        .map_err(broken("copy the output to the host"))?;
    let wrong: Vec<usize> = (0..THREADS)
        .filter(|&i| got.get(i) != want.get(i))
        .collect();
    match wrong.first() {
        None => Ok(()),
        Some(&i) => {
            let unwritten = wrong
                .iter()
                .filter(|&&j| got.get(j) == Some(&POISON))
                .count();
            Err(GpuError::Mismatch(format!(
                "{} of {THREADS} threads differ ({unwritten} unwritten); first: thread {i} (seed {:#x}): gpu {:#018x} cpu {:#018x}",
                wrong.len(),
                crate::programs::thread_seed(i),
                got.get(i).copied().unwrap_or(0),
                want[i]
            )))
        }
    }
}

/// The binary's `main`: `load` is the `#[cuda_module]`'s `kernels::load`.
pub fn main<M, E: Display>(
    programs: &[Program<M>],
    load: fn(&Arc<CudaContext>) -> Result<M, E>,
) -> ! {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    let input = input();
    let refs = match args.expect.as_deref().map(read_refs).transpose() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    // A panicking program is reported by its FAIL line; the default hook would print it again.
    std::panic::set_hook(Box::new(|_| {}));
    let mut gpu = if args.cpu_only {
        None
    } else {
        match setup(load, &input) {
            Ok(g) => Some(g),
            Err(e) => {
                println!("FAIL setup: {e}");
                println!("(run with --cpu-only to check the CPU side without a GPU)");
                std::process::exit(2);
            }
        }
    };
    let mut lines = Vec::new();
    let (mut passed, mut failed) = (0usize, 0usize);
    for (k, p) in programs.iter().enumerate().skip(args.from) {
        if args.only.as_deref().is_some_and(|o| o != p.id) {
            continue;
        }
        let want = match cpu_sums(p.cpu, crate::programs::thread_seed, &input) {
            Ok(w) => w,
            Err(msg) => {
                failed += 1;
                println!("FAIL {}: cpu panicked: {msg}", p.id);
                continue;
            }
        };
        let d = digest(&want);
        lines.push(format!("{} {d:016x}", p.id));
        if let Some(r) = refs.as_ref().and_then(|r| r.get(p.id)) {
            if *r != d {
                failed += 1;
                println!(
                    "FAIL {}: the CPU here computes digest {d:016x}, the build machine's CPU {r:016x}",
                    p.id
                );
                continue;
            }
        }
        let Some(g) = gpu.as_mut() else {
            passed += 1;
            println!("CPU-OK {} {d:016x}", p.id);
            continue;
        };
        println!("RUN {k} {}", p.id);
        match run_gpu(g, p, &want) {
            Ok(()) => {
                passed += 1;
                println!("PASS {}", p.id);
            }
            Err(GpuError::Mismatch(why)) => {
                failed += 1;
                println!("FAIL {}: {why}", p.id);
            }
            Err(GpuError::Broken(why)) => {
                failed += 1;
                println!("FAIL {}: {why}", p.id);
                println!("{passed} passed, {failed} failed");
                println!("ABORT next={}", k + 1);
                std::process::exit(3);
            }
        }
    }
    if let Some(path) = &args.write_refs {
        if let Err(e) = std::fs::write(path, lines.join("\n") + "\n") {
            eprintln!("error: write {path}: {e}");
            std::process::exit(2);
        }
    }
    println!("{passed} passed, {failed} failed");
    std::process::exit(if failed == 0 && passed > 0 { 0 } else { 1 });
}
