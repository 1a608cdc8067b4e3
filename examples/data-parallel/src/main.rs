//! One data-parallel training step of a small MLP (64 → 128 ReLU → 16, squared error, batch 512)
//! on every visible GPU, or on `--devices N`:
//!
//! 1. each GPU holds the same parameters and a shard of the batch (`Replica`);
//! 2. forward and backward run on all GPUs at once: one `DeviceOperation` per GPU, `zip_all`ed;
//! 3. the gradients are summed over the GPUs with NCCL (`cuda_nccl::Communicators`, the four
//!    all-reduces in one group), on a stream of each GPU's pool;
//! 4. each GPU applies the same SGD update after its all-reduce, on that stream.
//!
//! Checks: every GPU ends with identical parameters; the step equals the same program on
//! GPU 0 alone (bit for bit with one GPU; within float32 rounding with more, whose sums add in
//! another order); both match a float64 CPU step; the loss goes down. Exit 0 when all hold, 1
//! when a check fails, 2 on an error.
mod device;
mod model;
mod replica;

use std::process::ExitCode;
use std::sync::Arc;

use cuda_async::device_context::{device_context, init_device_contexts};
use cuda_async::device_operation::zip_all;
use cuda_core::{CudaContext, CudaStream};
use cuda_nccl::{Communicators, ReduceOp, group};

use model::{BATCH, LR, Params, Problem, cpu_step, loss, shard};
use replica::Replica;

type Error = Box<dyn std::error::Error>;

/// The parameters and gradients each GPU ended the step with.
struct Step {
    params: Vec<Params<Vec<f32>>>,
    grads: Vec<Params<Vec<f32>>>,
}

/// One step on GPUs `0..n`, the batch split among them.
fn train_step(p: &Problem, n: usize) -> Result<Step, Error> {
    if n > BATCH {
        return Err(format!("{n} GPUs for a batch of {BATCH}: at most one GPU per sample").into());
    }
    let comms = Communicators::for_devices(0..n)?;
    let mut replicas = (0..n).map(|d| Replica::new(d, p, shard(d, n))).collect::<Result<Vec<_>, _>>()?;
    // 2. Forward and backward on every GPU at once.
    zip_all(replicas.iter_mut().map(Replica::forward_backward_op)).sync()?;
    // 3. The gradients summed over the GPUs, on one stream of each GPU's pool.
    let streams: Vec<Arc<CudaStream>> =
        (0..n).map(|d| device_context(d).map(|dev| Arc::clone(&dev.streams()[0]))).collect::<Result<_, _>>()?;
    let mut by_tensor: [Vec<&mut cuda_core::DeviceBuffer<f32>>; 4] = Default::default();
    for replica in &mut replicas {
        for (tensor, buf) in by_tensor.iter_mut().zip(replica.grads_mut()) {
            tensor.push(buf);
        }
    }
    group(|| by_tensor.iter_mut().try_for_each(|bufs| comms.all_reduce_in_place(&streams, bufs, ReduceOp::Sum)))?;
    // 4. The same update everywhere, after the all-reduce on the same stream.
    for (replica, stream) in replicas.iter_mut().zip(&streams) {
        replica.sgd(stream, LR)?;
    }
    let mut step = Step { params: Vec::new(), grads: Vec::new() };
    for (replica, stream) in replicas.iter().zip(&streams) {
        step.params.push(replica.params.try_map(|b| b.to_host_vec(stream))?);
        step.grads.push(replica.grads.try_map(|b| b.to_host_vec(stream))?);
    }
    Ok(step)
}

/// The largest difference between `got` and `want` per tensor, over the tensor's largest value;
/// `Err` naming the tensor when one is over `tolerance`.
fn compare(what: &str, got: &Params<Vec<f32>>, want: &Params<Vec<f64>>, tolerance: f64) -> Result<f64, String> {
    let mut worst = 0.0f64;
    for ((name, g), (_, w)) in got.named().into_iter().zip(want.named()) {
        let scale = w.iter().fold(0.0f64, |m, x| m.max(x.abs())).max(f64::MIN_POSITIVE);
        let err = g.iter().zip(w.iter()).map(|(g, w)| (*g as f64 - w).abs()).fold(0.0, f64::max) / scale;
        if err > tolerance || err.is_nan() {
            return Err(format!(
                "{what}: {name} differs by {err:.2e} of its largest value (tolerance {tolerance:.0e})"
            ));
        }
        worst = worst.max(err);
    }
    Ok(worst)
}

fn widen(p: &Params<Vec<f32>>) -> Params<Vec<f64>> {
    p.try_map(|v| Ok::<_, ()>(v.iter().map(|&x| x as f64).collect())).expect("infallible")
}

/// The number of GPUs: `--devices N|all`, all visible ones by default.
fn devices(available: usize) -> Result<usize, Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n = match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        [] | ["--devices", "all"] => available,
        ["--devices", n] => n.parse().map_err(|_| format!("--devices {n}: not a number nor `all`"))?,
        _ => return Err("usage: data-parallel [--devices N|all]".into()),
    };
    if n == 0 || n > available {
        return Err(format!("--devices {n}: the driver reports {available} GPU(s)").into());
    }
    Ok(n)
}

fn run() -> Result<bool, Error> {
    let n = devices(CudaContext::device_count()?)?;
    init_device_contexts(0, n)?;
    let p = Problem::random(2024);
    println!("one SGD step of a 64-128-16 MLP, batch {BATCH}, on {n} GPU(s) ({} samples each)", BATCH / n);
    let step = train_step(&p, n)?;
    let single = train_step(&p, 1)?;
    let (cpu_grads, cpu_params) = cpu_step(&p);
    let mut ok = true;
    let mut check = |name: &str, result: Result<String, String>| match result {
        Ok(note) => println!("PASS data-parallel/{name}{note}"),
        Err(why) => {
            ok = false;
            println!("FAIL data-parallel/{name}: {why}");
        }
    };
    check(
        "replicas_identical",
        match step.params.iter().position(|w| *w != step.params[0]) {
            None => Ok(format!(" ({n} GPU(s) hold the same parameters)")),
            Some(r) => Err(format!("GPU {r}'s parameters differ from GPU 0's")),
        },
    );
    check(
        "equals_one_gpu",
        if n == 1 {
            if step.params[0] == single.params[0] && step.grads[0] == single.grads[0] {
                Ok(" (bit for bit)".into())
            } else {
                Err("two runs of one GPU differ".into())
            }
        } else {
            compare("gradients vs one GPU", &step.grads[0], &widen(&single.grads[0]), 1e-4)
                .and_then(|g| {
                    compare("parameters vs one GPU", &step.params[0], &widen(&single.params[0]), 1e-5).map(|w| (g, w))
                })
                .map(|(g, w)| format!(" (gradients within {g:.1e}, parameters within {w:.1e} of their largest values)"))
        },
    );
    check(
        "matches_the_cpu",
        compare("gradients vs CPU", &step.grads[0], &cpu_grads, 1e-4)
            .and_then(|g| compare("parameters vs CPU", &step.params[0], &cpu_params, 1e-5).map(|w| (g, w)))
            .map(|(g, w)| format!(" (gradients within {g:.1e}, parameters within {w:.1e} of their largest values)")),
    );
    let (before, after) = (loss(&p, &p.params), loss(&p, &step.params[0]));
    check(
        "loss_goes_down",
        if after < before { Ok(format!(" ({before:.5} -> {after:.5})")) } else { Err(format!("{before} -> {after}")) },
    );
    Ok(ok)
}

fn main() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
