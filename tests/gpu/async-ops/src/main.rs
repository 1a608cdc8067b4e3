//! GPU test: the launch chapter's typed async launch. The borrowed form with `.sync()` and with
//! `.await`, the owned form through `tokio::spawn(op.into_future()).await??`, `and_then` chains,
//! `zip!`, explicit streams and policies, many concurrent tasks, and invalid configurations
//! rejected when the operation is built. Random inputs, poisoned outputs, CPU reference.
use std::future::IntoFuture;

use cuda_async::device_context::{device_context, init_device_contexts};
use cuda_async::device_operation::DeviceOperation;
use cuda_async::scheduling_policy::{RoundRobin, SingleStream};
use cuda_async::zip;
use cuda_core::{DeviceBuffer, DriverError, LaunchConfig};
use cuda_device::{DisjointSlice, cuda_module, kernel, launch_bounds, thread};

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
    #[launch_bounds(256)]
    pub fn scale<T: Copy + core::ops::Mul<Output = T>>(k: T, data: &mut [T]) {
        let i = thread::index_1d().get();
        if i < data.len() {
            data[i] = data[i] * k;
        }
    }
}

const N: usize = 262_147;

fn main() {
    let mut report = Report::new("async-ops");
    let mut rng = Lcg::from_env_or_clock();
    let (module, stream) = report.setup(|| {
        // The chapter's setup.
        ck(init_device_contexts(0, 1), "init_device_contexts(0, 1)")?;
        let module = ck(kernels::load_async(0), "kernels::load_async(0)")?;
        let stream = ck(device_context(0), "device_context(0)")?.streams()[0].clone();
        Ok((module, stream))
    });
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(4).build().expect("tokio runtime");
    let m = &module;
    let s = &stream;
    let cfg = LaunchConfig::for_num_elems(N as u32);
    let (ha, hb) = (rng.vec_f32(N), rng.vec_f32(N));
    let sum: Vec<f32> = ha.iter().zip(&hb).map(|(x, y)| x + y).collect();

    report.check("borrowed_sync", || {
        let a_dev = ck(DeviceBuffer::from_host(s, &ha), "copy a")?;
        let b_dev = ck(DeviceBuffer::from_host(s, &hb), "copy b")?;
        let mut c_dev = ck(DeviceBuffer::from_host(s, &vec![f32::NAN; N]), "poison c")?;
        ck(s.synchronize(), "synchronize uploads")?;
        let op = ck(m.vecadd_async(cfg, &a_dev, &b_dev, &mut c_dev), "vecadd_async")?;
        // 执行并等待
        ck(op.sync(), "op.sync()")?;
        compare("vecadd_async", &ck(c_dev.to_host_vec(s), "copy c back")?, &sum, same_bits_f32)
    });

    report.check("borrowed_await", || {
        let a_dev = ck(DeviceBuffer::from_host(s, &ha), "copy a")?;
        let b_dev = ck(DeviceBuffer::from_host(s, &hb), "copy b")?;
        let mut c_dev = ck(DeviceBuffer::from_host(s, &vec![f32::NAN; N]), "poison c")?;
        ck(s.synchronize(), "synchronize uploads")?;
        runtime.block_on(async {
            let op = ck(m.vecadd_async(cfg, &a_dev, &b_dev, &mut c_dev), "vecadd_async")?;
            ck(op.await, "op.await")
        })?;
        compare("vecadd_async.await", &ck(c_dev.to_host_vec(s), "copy c back")?, &sum, same_bits_f32)
    });

    report.check("owned_tokio_spawn", || {
        let result: Result<Vec<f32>, Box<dyn std::error::Error>> = runtime.block_on(async {
            let a_dev = DeviceBuffer::from_host(s, &ha)?;
            let b_dev = DeviceBuffer::from_host(s, &hb)?;
            let c_dev = DeviceBuffer::from_host(s, &vec![f32::NAN; N])?;
            s.synchronize()?;
            // The chapter's owned snippet.
            let op = m.vecadd_async_owned(LaunchConfig::for_num_elems(N as u32), a_dev, b_dev, c_dev)?;

            let (a_dev, b_dev, c_dev) = tokio::spawn(op.into_future()).await??;
            if a_dev.len() != N || b_dev.len() != N {
                return Err("the inputs did not come back whole".into());
            }
            Ok(c_dev.to_host_vec(s)?)
        });
        let c = result.map_err(|e| format!("owned vecadd: {e}"))?;
        compare("vecadd_async_owned", &c, &sum, same_bits_f32)
    });

    report.check("and_then_chain", || {
        let x: Vec<f32> = rng.vec_f32(N);
        let data = ck(DeviceBuffer::from_host(s, &x), "copy x")?;
        ck(s.synchronize(), "synchronize uploads")?;
        let layer1_op = ck(m.scale_async_owned::<f32>(cfg, 2.0, data), "scale_async_owned")?;
        let forward_pass = layer1_op
            .and_then(|output1| m.scale_async_owned::<f32>(cfg, 3.0, output1))
            .and_then(|output2| m.scale_async_owned::<f32>(cfg, 0.5, output2));
        let out = ck(forward_pass.sync(), "forward_pass.sync()")?;
        let want: Vec<f32> = x.iter().map(|v| v * 2.0 * 3.0 * 0.5).collect();
        compare("and_then x2 x3 x0.5", &ck(out.to_host_vec(s), "copy back")?, &want, same_bits_f32)
    });

    report.check("zip_two_and_three", || {
        let xf = rng.vec_f32(N);
        let xi: Vec<i32> = (0..N).map(|_| (rng.next_u64() % 2001) as i32 - 1000).collect();
        let xd: Vec<f64> = (0..N).map(|_| rng.next_f64()).collect();
        let (f, i, d) = (
            ck(DeviceBuffer::from_host(s, &xf), "copy f32")?,
            ck(DeviceBuffer::from_host(s, &xi), "copy i32")?,
            ck(DeviceBuffer::from_host(s, &xd), "copy f64")?,
        );
        ck(s.synchronize(), "synchronize uploads")?;
        let branch_a = ck(m.scale_async_owned::<f32>(cfg, 4.0, f), "branch a")?;
        let branch_b = ck(m.scale_async_owned::<i32>(cfg, -3, i), "branch b")?;
        // 并发运行两个独立操作
        let combined = zip!(branch_a, branch_b);
        let (result_a, result_b) = ck(combined.sync(), "zip!(a, b).sync()")?;
        compare(
            "zip a",
            &ck(result_a.to_host_vec(s), "copy a back")?,
            &xf.iter().map(|v| v * 4.0).collect::<Vec<_>>(),
            same_bits_f32,
        )?;
        compare(
            "zip b",
            &ck(result_b.to_host_vec(s), "copy b back")?,
            &xi.iter().map(|v| v * -3).collect::<Vec<_>>(),
            |p, q| p == q,
        )?;
        let three = zip!(
            ck(m.scale_async_owned::<f32>(cfg, 0.25, result_a), "a again")?,
            ck(m.scale_async_owned::<f64>(cfg, 8.0, d), "d")?,
            DeviceOperation::value(0, 42u8),
        );
        let (ra, rd, v) = ck(runtime.block_on(async { three.await }), "zip!(a, b, c).await")?;
        if v != 42 {
            return Err(format!("zip value: {v}"));
        }
        compare(
            "zip3 a",
            &ck(ra.to_host_vec(s), "copy a back")?,
            &xf.iter().map(|v| v * 4.0 * 0.25).collect::<Vec<_>>(),
            same_bits_f32,
        )?;
        compare(
            "zip3 d",
            &ck(rd.to_host_vec(s), "copy d back")?,
            &xd.iter().map(|v| v * 8.0).collect::<Vec<_>>(),
            |p, q| p.to_bits() == q.to_bits(),
        )
    });

    report.check("policies_and_explicit_stream", || {
        let dev = ck(device_context(0), "device_context(0)")?;
        dev.set_scheduling_policy(SingleStream);
        let mut bufs = Vec::new();
        for _ in 0..4 {
            bufs.push(ck(DeviceBuffer::from_host(s, &ha), "copy")?);
        }
        ck(s.synchronize(), "synchronize uploads")?;
        for b in bufs.iter_mut() {
            ck(ck(m.scale_async::<f32>(cfg, 2.0, b), "scale_async")?.sync(), "sync with SingleStream")?;
        }
        dev.set_scheduling_policy(RoundRobin::new());
        let other = ck(dev.context().new_stream(), "new_stream")?;
        ck(ck(m.scale_async::<f32>(cfg, 2.0, &mut bufs[0]), "scale_async")?.sync_on(&other), "sync_on(stream)")?;
        let want2: Vec<f32> = ha.iter().map(|v| v * 2.0).collect();
        let want4: Vec<f32> = ha.iter().map(|v| v * 4.0).collect();
        compare("sync_on", &ck(bufs[0].to_host_vec(s), "copy back")?, &want4, same_bits_f32)?;
        for b in &bufs[1..] {
            compare("SingleStream", &ck(b.to_host_vec(s), "copy back")?, &want2, same_bits_f32)?;
        }
        Ok(())
    });

    report.check("many_concurrent_tasks", || {
        let inputs: Vec<(Vec<f32>, f32)> = (0..16).map(|_| (rng.vec_f32(N / 4), rng.next_f32())).collect();
        let results: Result<Vec<Vec<f32>>, String> = runtime.block_on(async {
            let mut handles = Vec::new();
            for (x, k) in &inputs {
                let buf = ck(DeviceBuffer::from_host(s, x), "copy")?;
                // The operation runs on a pool stream of its own: the upload must be done first.
                ck(s.synchronize(), "synchronize upload")?;
                let op = ck(
                    m.scale_async_owned::<f32>(LaunchConfig::for_num_elems(x.len() as u32), *k, buf),
                    "scale_async_owned",
                )?;
                handles.push(tokio::spawn(op.into_future()));
            }
            let mut out = Vec::new();
            for h in handles {
                let buf = ck(ck(h.await, "join")?, "task")?;
                out.push(ck(buf.to_host_vec(s), "copy back")?);
            }
            Ok(out)
        });
        for ((x, k), got) in inputs.iter().zip(results?) {
            compare("task", &got, &x.iter().map(|v| v * k).collect::<Vec<_>>(), same_bits_f32)?;
        }
        Ok(())
    });

    report.check("invalid_config_rejected_when_built", || {
        let mut buf = ck(DeviceBuffer::<f32>::zeroed(s, 16), "alloc")?;
        let bad = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (0, 1, 1), shared_mem_bytes: 0 };
        match m.scale_async::<f32>(bad, 1.0, &mut buf) {
            Err(e @ DriverError::InvalidConfig { .. }) if e.to_string().contains("block_dim.x is 0") => {}
            Err(e) => return Err(format!("unexpected error: {e}")),
            Ok(_) => return Err("an operation was built for block_dim.x = 0".into()),
        }
        let too_big = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (512, 1, 1), shared_mem_bytes: 0 };
        match m.scale_async::<f32>(too_big, 1.0, &mut buf) {
            Err(e) if e.to_string().contains("#[launch_bounds(256)]") => Ok(()),
            Err(e) => Err(format!("unexpected error: {e}")),
            Ok(_) => Err("an operation was built past #[launch_bounds(256)]".into()),
        }
    });

    report.finish()
}
