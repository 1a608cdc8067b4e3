//! CUDA graphs: 1,000 dependent small kernels launched one by one on a stream, then captured once
//! into a graph and replayed with one launch; one kernel's argument updated in the instance. A
//! benchmark: it prints a table of the time per kernel (GPU time between two events, median of
//! `--reps` passes) next to the same work in CUDA C++ with graphs (`cuda/graph_chain.cu`, built by
//! nvcc and run by this program in the same run). Every result is checked against the CPU first.
//!
//! ```sh
//! cargo oxide run --release -p graph-replay -- [--kernels 1000] [--elems 4096] [--reps 20] [--cuda PATH]
//! ```
//! `--cuda`: the nvcc-built twin (default: `$GRAPH_CHAIN_CUDA`, else `cuda/graph_chain` or
//! `graph_chain` beside this binary, else built from `cuda/graph_chain.cu` with the `nvcc` of
//! `$NVCC`, `PATH` or `/usr/local/cuda/bin`). Exit status: 0 when every check passed, 1 when a
//! result was wrong, 2 on an error.
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

use cuda_core::{CudaContext, CudaStream, DeviceBuffer, DriverError, Graph, LaunchConfig};
use cuda_device::{DisjointSlice, cuda_module, kernel, thread};

#[cuda_module]
mod kernels {
    use super::*;

    /// `x[i] = x[i] * 3 + k` (wrapping): small, and each launch depends on the previous one.
    #[kernel]
    pub fn step(k: u32, mut x: DisjointSlice<u32>) {
        let idx = thread::index_1d();
        if let Some(v) = x.get_mut(idx) {
            *v = v.wrapping_mul(3).wrapping_add(k);
        }
    }
}

struct Options {
    kernels: usize,
    elems: usize,
    reps: usize,
    cuda: Option<PathBuf>,
}

fn options() -> Result<Options, String> {
    let mut o = Options { kernels: 1000, elems: 4096, reps: 20, cuda: None };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} needs a value"));
        let mut number = || -> Result<usize, String> {
            let v = value()?;
            v.parse().map_err(|_| format!("{arg}: `{v}` is not a number"))
        };
        match arg.as_str() {
            "--kernels" => o.kernels = number()?.max(1),
            "--elems" => o.elems = number()?.max(1),
            "--reps" => o.reps = number()?.max(1),
            "--cuda" => o.cuda = Some(PathBuf::from(value()?)),
            _ => return Err(format!("unknown argument `{arg}`; see the top of examples/graph-replay/src/main.rs")),
        }
    }
    Ok(o)
}

fn main() {
    let code = match options().and_then(|o| run(&o)) {
        Ok(true) => 0,
        Ok(false) => 1,
        Err(e) => {
            eprintln!("error: {e}");
            2
        }
    };
    std::process::exit(code);
}

/// Turns a runtime error into text naming what failed.
fn ck<T>(r: Result<T, DriverError>, what: &str) -> Result<T, String> {
    r.map_err(|e| format!("{what}: {e}"))
}

/// The chain on the CPU: `passes` times every kernel.
fn cpu_chain(x0: &[u32], ks: &[u32], passes: usize) -> Vec<u32> {
    x0.iter()
        .map(|&v| (0..passes).fold(v, |v, _| ks.iter().fold(v, |v, &k| v.wrapping_mul(3).wrapping_add(k))))
        .collect()
}

/// Reproducible inputs (same generator as the CUDA C++ twin).
fn random(seed: &mut u64, n: usize) -> Vec<u32> {
    (0..n)
        .map(|_| {
            *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let x = *seed ^ (*seed >> 29) ^ (*seed << 17);
            (x >> 32) as u32
        })
        .collect()
}

/// The median of GPU milliseconds per pass, in µs per kernel.
fn median_us(mut ms: Vec<f32>, kernels: usize) -> f64 {
    ms.sort_by(f32::total_cmp);
    f64::from(ms[ms.len() / 2]) * 1000.0 / kernels as f64
}

/// GPU time of `reps` passes of `pass`, each between two events on `stream`.
fn time_passes(
    stream: &Arc<CudaStream>,
    reps: usize,
    mut pass: impl FnMut() -> Result<(), DriverError>,
) -> Result<Vec<f32>, DriverError> {
    let mut ms = Vec::with_capacity(reps);
    for _ in 0..reps {
        let start = stream.record_timed_event()?;
        pass()?;
        let end = stream.record_timed_event()?;
        end.synchronize()?;
        ms.push(start.elapsed_ms(&end)?);
    }
    Ok(ms)
}

fn run(o: &Options) -> Result<bool, String> {
    let ctx = ck(CudaContext::new(0), "CudaContext::new(0)")?;
    let module = ck(kernels::load(&ctx), "kernels::load")?;
    // A stream of our own: the legacy default stream cannot be captured.
    let stream = ck(ctx.new_stream(), "new_stream")?;
    let seed0 = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_secs());
    let mut seed = seed0;
    let ks = random(&mut seed, o.kernels);
    let x0 = random(&mut seed, o.elems);
    let cfg = LaunchConfig::for_num_elems(o.elems as u32);
    let mut x = ck(DeviceBuffer::from_host(&stream, &x0), "x to the device")?;
    let chain = |x: &mut DeviceBuffer<u32>, s: &CudaStream| -> Result<(), DriverError> {
        for &k in &ks {
            module.step(s, cfg, k, x)?;
        }
        Ok(())
    };
    let mut all_ok = true;
    let mut check = |what: &str, x: &DeviceBuffer<u32>, passes: usize, ks: &[u32]| -> Result<(), String> {
        let got = ck(x.to_host_vec(&stream), "x to the host")?;
        let ok = got == cpu_chain(&x0, ks, passes);
        println!("check {what}: {}", if ok { "ok" } else { "WRONG" });
        all_ok &= ok;
        Ok(())
    };

    println!(
        "{} dependent launches of `step` ({} elements, {} blocks of 256), {} timed passes, seed {seed0}, {}",
        o.kernels,
        o.elems,
        cfg.grid_dim.0,
        o.reps,
        ctx.name()
    );

    // 1. Stream launches: one pass is checked, then timed passes.
    ck(chain(&mut x, &stream), "stream launches")?;
    check("stream launches", &x, 1, &ks)?;
    let host = Instant::now();
    let stream_ms = ck(time_passes(&stream, o.reps, || chain(&mut x, &stream)), "timing stream launches")?;
    let stream_host_us = host.elapsed().as_secs_f64() * 1e6 / (o.reps * o.kernels) as f64;

    // 2. The same launches captured once, instantiated, replayed.
    ck(x.copy_from_host(&stream, &x0), "reset x")?;
    let capture_start = Instant::now();
    let graph: Graph = ck(stream.capture(|s| chain(&mut x, s)), "capture")?;
    let capture_us = capture_start.elapsed().as_secs_f64() * 1e6;
    let instantiate_start = Instant::now();
    let mut exec = ck(graph.instantiate(), "instantiate")?;
    let instantiate_us = instantiate_start.elapsed().as_secs_f64() * 1e6;
    ck(exec.upload(&stream), "upload")?;
    ck(exec.launch(&stream), "replay")?;
    check("graph replay", &x, 1, &ks)?;
    let graph_ms = ck(time_passes(&stream, o.reps, || exec.launch(&stream)), "timing replays")?;

    // 3. One kernel's argument changed in the instance (no new capture of the whole chain).
    let mut ks2 = ks.clone();
    let last = o.kernels - 1;
    ks2[last] = ks[last] ^ 0x5555_5555;
    let update_start = Instant::now();
    ck(exec.update_kernel(last, &stream, |s| module.step(s, cfg, ks2[last], &mut x)), "update_kernel")?;
    let update_us = update_start.elapsed().as_secs_f64() * 1e6;
    ck(x.copy_from_host(&stream, &x0), "reset x")?;
    ck(exec.launch(&stream), "replay after the update")?;
    check("replay after update_kernel", &x, 1, &ks2)?;
    drop(exec);
    drop(graph);

    // 4. The CUDA C++ twin, in this run.
    let cpp = cuda_twin(o).and_then(|exe| {
        let out = Command::new(&exe)
            .args([o.elems.to_string(), o.kernels.to_string(), o.reps.to_string(), seed0.to_string()])
            .output()
            .map_err(|e| format!("running {}: {e}", exe.display()))?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        if !out.status.success() {
            return Err(format!("{} failed: {text}{}", exe.display(), String::from_utf8_lossy(&out.stderr)));
        }
        parse_twin(&text).ok_or_else(|| format!("unexpected output of {}: {text}", exe.display()))
    });

    let ours_stream = median_us(stream_ms, o.kernels);
    let ours_graph = median_us(graph_ms, o.kernels);
    println!();
    println!("| {:<30} | {:>12} |", "per kernel (GPU time, median)", "µs");
    println!("|{:-<32}|{:->14}|", "", "");
    println!("| {:<30} | {:>12.3} |", "cuda-oxide: stream launches", ours_stream);
    println!("| {:<30} | {:>12.3} |", "cuda-oxide: graph replay", ours_graph);
    match &cpp {
        Ok((s, g, ok)) => {
            println!("| {:<30} | {:>12.3} |", "CUDA C++: stream launches", s);
            println!("| {:<30} | {:>12.3} |", "CUDA C++: graph replay", g);
            println!("check CUDA C++ twin: {}", if *ok { "ok" } else { "WRONG" });
            all_ok &= *ok;
        }
        Err(e) => println!("| {:<30} | {:>12} |  ({e})", "CUDA C++", "n/a"),
    }
    println!();
    println!("host time per stream launch (ours): {stream_host_us:.3} µs");
    println!("capture of {} launches: {capture_us:.0} µs; instantiate: {instantiate_us:.0} µs", o.kernels);
    println!("update_kernel (one node, re-captured launch): {update_us:.1} µs");
    let speedup = ours_stream / ours_graph;
    println!(
        "graph replay vs stream launches (ours): {speedup:.2}x faster  [target >= 3x: {}]",
        if speedup >= 3.0 { "met" } else { "MISSED" }
    );
    if let Ok((_, g, _)) = &cpp {
        let ratio = ours_graph / g;
        println!(
            "graph replay, ours / CUDA C++: {ratio:.3}  [target <= 1.1: {}]",
            if ratio <= 1.1 { "met" } else { "MISSED" }
        );
    }
    Ok(all_ok)
}

/// `(stream µs, graph µs, check ok)` from the twin's one line.
fn parse_twin(text: &str) -> Option<(f64, f64, bool)> {
    let line = text.lines().find(|l| l.starts_with("cuda_cpp "))?;
    let field = |name: &str| line.split_whitespace().find_map(|f| f.strip_prefix(name));
    Some((field("stream_us=")?.parse().ok()?, field("graph_us=")?.parse().ok()?, field("check=")? == "ok"))
}

/// The nvcc-built twin: given, beside this binary, or built now from its source.
fn cuda_twin(o: &Options) -> Result<PathBuf, String> {
    if let Some(path) = o.cuda.clone().or_else(|| std::env::var_os("GRAPH_CHAIN_CUDA").map(PathBuf::from)) {
        return Ok(path);
    }
    let exe_dir = std::env::current_exe().ok().and_then(|e| e.parent().map(Path::to_path_buf)).unwrap_or_default();
    for candidate in
        [exe_dir.join("graph_chain"), exe_dir.join("cuda/graph_chain"), exe_dir.join("../cuda/graph_chain")]
    {
        if candidate.is_file() {
            return Ok(candidate);
        }
    }
    let source =
        [Path::new(env!("CARGO_MANIFEST_DIR")).join("cuda/graph_chain.cu"), exe_dir.join("../cuda/graph_chain.cu")]
            .into_iter()
            .find(|p| p.is_file())
            .ok_or("no CUDA C++ twin: pass --cuda PATH (nvcc -O3 -arch=sm_90 -o graph_chain cuda/graph_chain.cu)")?;
    let nvcc = std::env::var_os("NVCC")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("PATH")
                .and_then(|p| std::env::split_paths(&p).map(|d| d.join("nvcc")).find(|n| n.is_file()))
        })
        .or_else(|| Some(PathBuf::from("/usr/local/cuda/bin/nvcc")).filter(|n| n.is_file()))
        .ok_or("no CUDA C++ twin and no nvcc to build it (set NVCC, or pass --cuda PATH)")?;
    let out = std::env::temp_dir().join(format!("graph_chain-{}", std::process::id()));
    let status = Command::new(&nvcc)
        .args(["-O3", "-arch=native", "-o"])
        .arg(&out)
        .arg(&source)
        .status()
        .map_err(|e| format!("running {}: {e}", nvcc.display()))?;
    if !status.success() {
        return Err(format!("{} could not build {}", nvcc.display(), source.display()));
    }
    Ok(out)
}
