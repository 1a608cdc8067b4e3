//! All-reduce bandwidth of cuda-nccl against PyTorch's `all_reduce`, on every visible GPU (or
//! `--devices N`), 1 MiB to 1 GiB per GPU, printed as one table.
//!
//! Our side: one process, `Communicators::for_devices(0..n)`, `all_reduce_in_place` (sum, f32) on
//! a stream per GPU. PyTorch's side: `torch_allreduce.py`, started here in the same job, one
//! process per GPU (`torch.distributed`, NCCL backend), the same operation. Both: the first call's
//! result checked (every rank holds `r + 1`, so every element must be `n (n + 1) / 2`), `warmup`
//! calls, then `iters` calls between CUDA events on each GPU; the time is the slowest GPU's mean.
//! Algorithm bandwidth is bytes / time, bus bandwidth that × 2 (n − 1) / n (nccl-tests' measure of
//! the links' use; 0 with one GPU, where an all-reduce moves nothing between GPUs).
//! Exit status: 0 all results right, 1 a result wrong, 2 an error.
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::sync::Arc;

use cuda_core::{CudaContext, CudaStream, DeviceBuffer, memory};
use cuda_nccl::{Communicators, ReduceOp};

type Error = Box<dyn std::error::Error>;

struct Options {
    devices: Option<usize>,
    min_mib: usize,
    max_mib: usize,
    iters: usize,
    warmup: usize,
    torch_script: Option<PathBuf>,
    torch: bool,
}

const USAGE: &str = "usage: oxide-bench-allreduce [--devices N|all] [--min-mib 1] [--max-mib 1024] [--iters 20] \
                     [--warmup 5] [--torch-script PATH | --no-torch]";

fn options() -> Result<Options, Error> {
    let mut o =
        Options { devices: None, min_mib: 1, max_mib: 1024, iters: 20, warmup: 5, torch_script: None, torch: true };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value; {USAGE}"));
        let number = |v: String| v.parse::<usize>().map_err(|_| format!("{arg} {v}: not a number; {USAGE}"));
        match arg.as_str() {
            "--devices" => match value()?.as_str() {
                "all" => o.devices = None,
                n => o.devices = Some(number(n.to_string())?),
            },
            "--min-mib" => o.min_mib = number(value()?)?,
            "--max-mib" => o.max_mib = number(value()?)?,
            "--iters" => o.iters = number(value()?)?,
            "--warmup" => o.warmup = number(value()?)?,
            "--torch-script" => o.torch_script = Some(PathBuf::from(value()?)),
            "--no-torch" => o.torch = false,
            "--help" | "-h" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            _ => return Err(format!("unknown argument `{arg}`; {USAGE}").into()),
        }
    }
    if o.min_mib == 0 || o.min_mib > o.max_mib || o.iters == 0 {
        return Err(format!(
            "sizes {}..{} MiB, {} iterations: need 1 <= min <= max and iterations >= 1",
            o.min_mib, o.max_mib, o.iters
        )
        .into());
    }
    Ok(o)
}

/// One size's result: the mean time of one all-reduce in µs, and whether the result was right.
#[derive(Clone, Copy, Debug)]
struct Timing {
    us: f64,
    ok: bool,
}

/// Times our all-reduce of `bytes` per GPU.
fn time_ours(comms: &Communicators, streams: &[Arc<CudaStream>], bytes: usize, o: &Options) -> Result<Timing, Error> {
    let n = comms.len();
    let count = bytes / 4;
    let mut bufs = Vec::with_capacity(n);
    for (rank, stream) in streams.iter().enumerate() {
        let buf = DeviceBuffer::<f32>::zeroed(stream, count)?;
        // SAFETY: the buffer holds `count` f32s of this stream's context, which `zeroed` bound.
        unsafe {
            memory::memset_d32_async(buf.cu_deviceptr(), (rank as f32 + 1.0).to_bits(), count, stream.cu_stream())?
        };
        bufs.push(buf);
    }
    comms.all_reduce_in_place(streams, &mut bufs, ReduceOp::Sum)?;
    let want = (n * (n + 1) / 2) as f32;
    let mut ok = true;
    for (buf, stream) in bufs.iter().zip(streams) {
        stream.synchronize()?;
        for start in [0, count / 2, count.saturating_sub(4096)] {
            let len = 4096.min(count - start);
            let mut probe = vec![f32::NAN; len];
            // SAFETY: `start + len <= count` elements of the buffer, the context is current
            // (`synchronize` bound it) and the work on the buffer has finished.
            unsafe { memory::memcpy_dtoh_sync(probe.as_mut_ptr(), buf.cu_deviceptr() + 4 * start as u64, 4 * len)? };
            ok &= probe.iter().all(|&x| x == want);
        }
    }
    for _ in 0..o.warmup {
        comms.all_reduce_in_place(streams, &mut bufs, ReduceOp::Sum)?;
    }
    let starts = streams.iter().map(|s| s.record_timed_event()).collect::<Result<Vec<_>, _>>()?;
    for _ in 0..o.iters {
        comms.all_reduce_in_place(streams, &mut bufs, ReduceOp::Sum)?;
    }
    let ends = streams.iter().map(|s| s.record_timed_event()).collect::<Result<Vec<_>, _>>()?;
    let mut slowest = 0.0f64;
    for (start, end) in starts.iter().zip(&ends) {
        end.synchronize()?;
        slowest = slowest.max(start.elapsed_ms(end)? as f64);
    }
    Ok(Timing { us: slowest * 1000.0 / o.iters as f64, ok })
}

/// PyTorch's side: its versions line, and a timing per size (or why there is none).
fn time_torch(script: &Path, n: usize, sizes: &[usize], o: &Options) -> Result<(String, Vec<Timing>), String> {
    let sizes_arg = sizes.iter().map(usize::to_string).collect::<Vec<_>>().join(",");
    let out = Command::new("python3")
        .arg(script)
        .args(["--devices", &n.to_string(), "--sizes", &sizes_arg])
        .args(["--iters", &o.iters.to_string(), "--warmup", &o.warmup.to_string()])
        .env("NCCL_NVLS_ENABLE", "0")
        .env("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")
        .env("NVSHMEM_DISABLE_NVLS", "1")
        .output()
        .map_err(|e| format!("could not start python3 {}: {e}", script.display()))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let last = err.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("no output");
        return Err(format!("{} failed: {last}", script.display()));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines().filter(|l| l.starts_with('{'));
    let header = lines.next().ok_or("torch_allreduce.py printed nothing")?.to_string();
    let field = json_field;
    let versions = format!(
        "torch {}, its NCCL {}",
        field(&header, "torch").unwrap_or_default(),
        field(&header, "nccl").unwrap_or_default()
    );
    let timings = lines
        .map(|l| {
            let us = field(l, "us").and_then(|v| v.parse().ok()).ok_or_else(|| format!("unreadable line {l}"))?;
            Ok(Timing { us, ok: field(l, "ok").as_deref() == Some("true") })
        })
        .collect::<Result<Vec<_>, String>>()?;
    if timings.len() != sizes.len() {
        return Err(format!("torch_allreduce.py gave {} results for {} sizes", timings.len(), sizes.len()));
    }
    Ok((versions, timings))
}

/// The value of `key` in one of `torch_allreduce.py`'s lines (flat JSON objects of numbers,
/// booleans and strings without commas, as `json.dumps` writes them), quotes removed.
fn json_field(line: &str, key: &str) -> Option<String> {
    let at = line.find(&format!("\"{key}\": "))? + key.len() + 4;
    let rest = &line[at..];
    let end = rest.find([',', '}']).unwrap_or(rest.len());
    Some(rest[..end].trim().trim_matches('"').to_string())
}

/// `torch_allreduce.py` beside the binary (the GPU bundle) or in the checkout.
fn torch_script(o: &Options) -> Option<PathBuf> {
    if let Some(path) = &o.torch_script {
        return Some(path.clone());
    }
    let exe = std::env::current_exe().ok()?;
    let candidates = [
        exe.with_file_name("torch_allreduce.py"),
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("torch_allreduce.py"),
    ];
    candidates.into_iter().find(|p| p.is_file())
}

fn size_name(bytes: usize) -> String {
    if bytes >= 1 << 30 { format!("{} GiB", bytes >> 30) } else { format!("{} MiB", bytes >> 20) }
}

fn run() -> Result<bool, Error> {
    let o = options()?;
    let available = CudaContext::device_count()?;
    let n = o.devices.unwrap_or(available);
    if n == 0 || n > available {
        return Err(format!("--devices {n}: the driver reports {available} GPU(s)").into());
    }
    let comms = Communicators::for_devices(0..n)?;
    let streams: Vec<Arc<CudaStream>> = comms.iter().map(|c| c.context().new_stream()).collect::<Result<_, _>>()?;
    let (major, minor, patch) = cuda_nccl::version()?;
    let name = comms.get(0).map(|c| c.context().name().to_string()).unwrap_or_default();
    let sizes: Vec<usize> = (0..).map(|i| o.min_mib << i).take_while(|&m| m <= o.max_mib).map(|m| m << 20).collect();

    // PyTorch first, while our communicators sit idle: the two never share the GPUs at once.
    let torch = match torch_script(&o) {
        _ if !o.torch => Err("--no-torch".to_string()),
        None => Err("torch_allreduce.py not found (give --torch-script)".to_string()),
        Some(script) => time_torch(&script, n, &sizes, &o),
    };
    let mut ours = Vec::with_capacity(sizes.len());
    for &bytes in &sizes {
        ours.push(time_ours(&comms, &streams, bytes, &o)?);
    }

    let bus = 2.0 * (n as f64 - 1.0) / n as f64;
    println!(
        "all-reduce, sum of f32 in place, on {n} GPU(s) ({name}); {} iterations after {} warm-up",
        o.iters, o.warmup
    );
    println!("  ours:  cuda-nccl, one process, NCCL {major}.{minor}.{patch}");
    match &torch {
        Ok((versions, _)) => println!("  torch: torch.distributed.all_reduce, one process per GPU, {versions}"),
        Err(why) => println!("  torch: not run: {why}"),
    }
    if n == 1 {
        println!("  (one GPU: bus bandwidth is 0 by definition, 2 (n - 1) / n; compare the times and algbw)");
    }
    println!();
    println!(
        "{:>9} | {:>10} {:>11} {:>11} | {:>10} {:>11} {:>11} | {:>10}",
        "size", "ours µs", "algbw GB/s", "busbw GB/s", "torch µs", "algbw GB/s", "busbw GB/s", "ours/torch"
    );
    println!("{}", "-".repeat(102));
    let mut all_ok = true;
    for (i, &bytes) in sizes.iter().enumerate() {
        let t = ours[i];
        all_ok &= t.ok;
        let bw = |us: f64| bytes as f64 / (us * 1e-6) / 1e9;
        let ours_cols = if t.ok {
            format!("{:>10.1} {:>11.1} {:>11.1}", t.us, bw(t.us), bw(t.us) * bus)
        } else {
            format!("{:>10} {:>11} {:>11}", "WRONG", "-", "-")
        };
        let (torch_cols, ratio) = match &torch {
            Ok((_, timings)) if timings[i].ok => {
                let u = timings[i].us;
                (format!("{:>10.1} {:>11.1} {:>11.1}", u, bw(u), bw(u) * bus), format!("{:>10.2}", t.us / u))
            }
            Ok(_) => (format!("{:>10} {:>11} {:>11}", "WRONG", "-", "-"), format!("{:>10}", "-")),
            Err(_) => (format!("{:>10} {:>11} {:>11}", "n/a", "", ""), format!("{:>10}", "-")),
        };
        println!("{:>9} | {ours_cols} | {torch_cols} | {ratio}", size_name(bytes));
    }
    if let Ok((_, timings)) = &torch {
        let ratios: Vec<f64> =
            ours.iter().zip(timings).filter(|(a, b)| a.ok && b.ok).map(|(a, b)| (a.us / b.us).ln()).collect();
        if !ratios.is_empty() {
            println!("geomean ours/torch time: {:.3}", (ratios.iter().sum::<f64>() / ratios.len() as f64).exp());
        }
        all_ok &= timings.iter().all(|t| t.ok);
    }
    Ok(all_ok)
}

fn main() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => {
            println!("a result was WRONG (every element must be n (n + 1) / 2)");
            ExitCode::from(1)
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_torch_allreduce_py_lines() {
        let header = r#"{"torch": "2.11.0+cu130", "nccl": "2.27.7", "gpus": 8}"#;
        assert_eq!(json_field(header, "torch").as_deref(), Some("2.11.0+cu130"));
        assert_eq!(json_field(header, "gpus").as_deref(), Some("8"));
        let line = r#"{"bytes": 1048576, "us": 12.5, "ok": true}"#;
        assert_eq!(json_field(line, "us").as_deref(), Some("12.5"));
        assert_eq!(json_field(line, "ok").as_deref(), Some("true"));
        assert_eq!(json_field(line, "missing"), None);
        assert_eq!(size_name(1 << 20), "1 MiB");
        assert_eq!(size_name(512 << 20), "512 MiB");
        assert_eq!(size_name(1 << 30), "1 GiB");
    }
}
