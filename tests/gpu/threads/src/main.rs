//! GPU test: a module loaded once is used from 8 host threads at once (shared by reference and
//! through an `Arc`), each with its own stream or the default stream, launching a plain and a
//! generic kernel on random inputs; every result is compared with the CPU.
use std::sync::Arc;

use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
use cuda_device::{DisjointSlice, cuda_module, kernel, thread};

#[path = "../../harness.rs"]
mod harness;
use harness::{Lcg, Report, ck, compare, same_bits_f32};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn vecadd(a: &[f32], b: &[f32], mut c: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(c_elem) = c.get_mut(idx) {
            *c_elem = a[i] + b[i];
        }
    }

    #[kernel]
    pub fn scale<T: Copy + core::ops::Mul<Output = T>>(k: T, data: &mut [T]) {
        let i = thread::index_1d().get();
        if i < data.len() {
            data[i] = data[i] * k;
        }
    }
}

const N: usize = 50_021;
const THREADS: u64 = 8;
const ROUNDS: usize = 20;

fn worker(ctx: &Arc<CudaContext>, module: &kernels::Module, seed: u64, own_stream: bool) -> Result<(), String> {
    let mut rng = Lcg(seed);
    let stream = if own_stream { ck(ctx.new_stream(), "new_stream")? } else { ctx.default_stream() };
    for round in 0..ROUNDS {
        let (a, b) = (rng.vec_f32(N), rng.vec_f32(N));
        let k = (rng.next_u64() % 100) as u32;
        let u: Vec<u32> = (0..N).map(|_| rng.next_u64() as u32).collect();
        let a_dev = ck(DeviceBuffer::from_host(&stream, &a), "copy a")?;
        let b_dev = ck(DeviceBuffer::from_host(&stream, &b), "copy b")?;
        let mut c_dev = ck(DeviceBuffer::from_host(&stream, &vec![f32::NAN; N]), "poison c")?;
        let mut u_dev = ck(DeviceBuffer::from_host(&stream, &u), "copy u")?;
        let cfg = LaunchConfig::for_num_elems(N as u32);
        ck(module.vecadd(&stream, cfg, &a_dev, &b_dev, &mut c_dev), "launch vecadd")?;
        ck(module.scale::<u32>(&stream, cfg, k, &mut u_dev), "launch scale::<u32>")?;
        ck(stream.synchronize(), "synchronize")?;
        let want: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
        compare(
            &format!("round {round} vecadd"),
            &ck(c_dev.to_host_vec(&stream), "copy c back")?,
            &want,
            same_bits_f32,
        )?;
        let want_u: Vec<u32> = u.iter().map(|x| x.wrapping_mul(k)).collect();
        compare(&format!("round {round} scale"), &ck(u_dev.to_host_vec(&stream), "copy u back")?, &want_u, |x, y| {
            x == y
        })?;
    }
    Ok(())
}

fn main() {
    let mut report = Report::new("threads");
    let mut rng = Lcg::from_env_or_clock();
    let (ctx, _stream, module) = report.load(kernels::load);
    let base = rng.next_u64();

    report.check("scoped_threads_share_one_module", || {
        let results: Vec<Result<(), String>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..THREADS)
                .map(|t| {
                    let (ctx, module) = (&ctx, &module);
                    scope.spawn(move || worker(ctx, module, base ^ t, t % 4 != 0))
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err("thread panicked".into()))).collect()
        });
        results.into_iter().enumerate().try_for_each(|(t, r)| r.map_err(|e| format!("thread {t}: {e}")))
    });

    report.check("arc_module_moved_to_threads", || {
        let module = Arc::new(module);
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let (ctx, module) = (Arc::clone(&ctx), Arc::clone(&module));
                std::thread::spawn(move || worker(&ctx, &module, base.rotate_left(7) ^ t, true))
            })
            .collect();
        handles.into_iter().enumerate().try_for_each(|(t, h)| {
            h.join().unwrap_or_else(|_| Err("thread panicked".into())).map_err(|e| format!("thread {t}: {e}"))
        })
    });

    report.finish()
}
