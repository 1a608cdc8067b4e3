//! The fused RMSNorm op (`candle_op::RmsNorm`) on candle tensors on the GPU: checked against
//! candle's own composition of ops and against the CPU on random inputs (its output poisoned with
//! NaN first), then timed against the composition on candle's stream. Prints a table; exit status
//! 0 when every check passed, 1 when a result was wrong, 2 on an error.
use candle_core::{DType, Device, Tensor};
use candle_op::{RmsNorm, rms_norm, rms_norm_composed};
use cuda_core::CudaStream;

const EPS: f32 = 1e-6;

fn main() {
    let code = match run() {
        Ok(true) => 0,
        Ok(false) => 1,
        Err(e) => {
            eprintln!("error: {e}");
            2
        }
    };
    std::process::exit(code);
}

/// Largest difference of `a` and `b`, relative to the largest magnitude of `b`.
fn rel_error(a: &Tensor, b: &Tensor) -> candle_core::Result<f32> {
    let diff = (a - b)?.abs()?.flatten_all()?.max(0)?.to_scalar::<f32>()?;
    let scale = b.abs()?.flatten_all()?.max(0)?.to_scalar::<f32>()?.max(f32::MIN_POSITIVE);
    Ok(diff / scale)
}

fn run() -> Result<bool, Box<dyn std::error::Error>> {
    // cudarc (inside candle) panics without a driver; ours says so.
    cuda_core::init(0)?;
    let dev = Device::new_cuda(0)?;
    let Device::Cuda(cuda) = &dev else { return Err("Device::new_cuda(0) gave no CUDA device".into()) };
    // candle's stream, wrapped as ours for timing events (the op itself takes cudarc's).
    let stream = CudaStream::from_cudarc(cuda.cuda_stream())?;
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_secs());
    dev.set_seed(seed)?;
    println!("candle-core 0.11.1 on {}, seed {seed}", stream.context().name());
    let mut all_ok = true;

    // Checks: shapes with a partial block, rows longer than the block, and 3 dimensions.
    for dims in [vec![1, 7], vec![33, 1000], vec![4, 5, 4096], vec![256, 8192]] {
        let cols = *dims.last().unwrap_or(&1);
        let x = Tensor::randn(0f32, 1.0, dims.as_slice(), &dev)?;
        let w = Tensor::randn(1f32, 0.5, cols, &dev)?;
        let ours = x.apply_op2_no_bwd(&w, &RmsNorm { eps: EPS, poison_output: true })?;
        let theirs = rms_norm_composed(&x, &w, EPS)?;
        let cpu = rms_norm(&x.to_device(&Device::Cpu)?, &w.to_device(&Device::Cpu)?, EPS)?;
        let (e_gpu, e_cpu) = (rel_error(&ours, &theirs)?, rel_error(&ours.to_device(&Device::Cpu)?, &cpu)?);
        let nan = ours.flatten_all()?.to_vec1::<f32>()?.iter().any(|v| v.is_nan());
        let ok = !nan && e_gpu < 1e-5 && e_cpu < 1e-5;
        all_ok &= ok;
        println!(
            "check {dims:?}: vs candle's composition {e_gpu:.1e}, vs the CPU {e_cpu:.1e}{}: {}",
            if nan { ", NaN left in the output" } else { "" },
            if ok { "ok" } else { "WRONG" }
        );
    }
    // Not contiguous: refused, saying what to do.
    let x = Tensor::randn(0f32, 1.0, (64, 32), &dev)?.t()?;
    let w = Tensor::ones(64, DType::F32, &dev)?;
    match rms_norm(&x, &w, EPS) {
        Ok(_) => {
            println!("check a transposed input: accepted, expected an error: WRONG");
            all_ok = false;
        }
        Err(e) => println!("check a transposed input: refused ({}): ok", e.to_string().lines().next().unwrap_or("")),
    }

    // Timing on candle's stream: GPU time between events, median of 50 after 5 warm-ups.
    println!();
    println!(
        "| {:<14} | {:>14} | {:>14} | {:>9} | {:>10} |",
        "rows × cols", "fused µs", "composed µs", "speed-up", "fused GB/s"
    );
    println!("|{:-<16}|{:->16}|{:->16}|{:->11}|{:->12}|", "", "", "", "", "");
    for (rows, cols) in [(1, 4096), (32, 4096), (4096, 4096), (16384, 8192)] {
        let x = Tensor::randn(0f32, 1.0, (rows, cols), &dev)?;
        let w = Tensor::randn(1f32, 0.5, cols, &dev)?;
        let fused = time(&stream, || rms_norm(&x, &w, EPS).map(drop))?;
        let composed = time(&stream, || rms_norm_composed(&x, &w, EPS).map(drop))?;
        // Bytes moved by the fused kernel: x read twice (L2 may hold it), w, out written.
        let gbs = (3 * rows * cols + cols) as f64 * 4.0 / (fused * 1e-6) / 1e9;
        println!(
            "| {:<14} | {:>14.2} | {:>14.2} | {:>8.2}x | {:>10.0} |",
            format!("{rows} × {cols}"),
            fused,
            composed,
            composed / fused,
            gbs
        );
    }
    Ok(all_ok)
}

/// Median GPU µs of `op` (queued on candle's stream), each between two events.
fn time(
    stream: &CudaStream,
    mut op: impl FnMut() -> candle_core::Result<()>,
) -> Result<f64, Box<dyn std::error::Error>> {
    for _ in 0..5 {
        op()?;
    }
    let mut us = Vec::with_capacity(50);
    for _ in 0..50 {
        let start = stream.record_timed_event()?;
        op()?;
        let end = stream.record_timed_event()?;
        end.synchronize()?;
        us.push(f64::from(start.elapsed_ms(&end)?) * 1000.0);
    }
    us.sort_by(f64::total_cmp);
    Ok(us[us.len() / 2])
}
