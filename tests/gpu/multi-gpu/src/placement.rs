//! Operations placed per device: device ranges past the driver's count, `load_async(d)` and the
//! scheduling policy keeping each device's work on its own streams, `zip!` across devices running
//! at once, and buffers of another context refused at launch.

use std::sync::Arc;

use cuda_async::device_context::{device_context, init_device_contexts, open_devices};
use cuda_async::device_operation::{DeviceOperation, zip_all};
use cuda_async::zip;
use cuda_core::{CudaContext, DeviceBuffer, DeviceCopy, DriverError, LaunchConfig, PinnedBuffer};

use crate::harness::{Lcg, Report, ck};
use crate::kernels::{self, Module};
use crate::{random_u32, same};

/// Elements per `scale_add` check: not a multiple of the block size.
const LEN: usize = 1_000_003;

/// How long `wait_for_flag` waits for the other kernel: about 2 s at 2 GHz. Kernels running at
/// the same time meet within microseconds; kernels run one after the other never meet.
const MAX_CYCLES: u64 = 4_000_000_000;

/// A copy of `data` on device `d`, through the async runtime (uploaded on a stream of its pool
/// and waited for).
pub fn upload<T: DeviceCopy + Send + Sync>(d: usize, data: &[T]) -> Result<DeviceBuffer<T>, String> {
    ck(
        DeviceOperation::new(d, |exec| DeviceBuffer::from_host(exec.stream(), data)).sync(),
        &format!("upload to device {d}"),
    )
}

/// The contents of `buf`, read on a stream of its own context.
pub fn download<T: DeviceCopy>(buf: &DeviceBuffer<T>) -> Result<Vec<T>, String> {
    let stream = ck(buf.context().new_stream(), "new_stream")?;
    ck(buf.to_host_vec(&stream), "to_host_vec")
}

pub fn checks(report: &mut Report, rng: &mut Lcg, n: usize, available: usize) {
    report.check("a_device_range_past_the_driver_count_is_refused", || {
        let e = match init_device_contexts(0, available + 1) {
            Ok(()) => return Err(format!("init_device_contexts(0, {}) succeeded", available + 1)),
            Err(e) => e,
        };
        let text = e.to_string();
        println!("    ({text})");
        if !matches!(e, DriverError::Placement { .. }) || !text.contains("the driver reports") {
            return Err(format!("expected a placement error saying what the driver reports, got: {text}"));
        }
        if !open_devices().is_empty() {
            return Err(format!("a refused range opened devices {:?}", open_devices()));
        }
        let e = kernels::load_async(available).err().ok_or("load_async(device count) succeeded")?;
        let text = e.to_string();
        if !text.contains(&format!("asks for device {available}")) || !text.contains("use a device below") {
            return Err(format!("load_async({available}): {text}"));
        }
        Ok(())
    });

    let modules: Vec<Module> = report.setup(|| {
        ck(init_device_contexts(0, n), &format!("init_device_contexts(0, {n})"))?;
        if open_devices() != (0..n).collect::<Vec<_>>() {
            return Err(format!("open devices {:?}, expected 0..{n}", open_devices()));
        }
        (0..n).map(|d| ck(kernels::load_async(d), &format!("kernels::load_async({d})"))).collect()
    });

    report.check("load_async_and_the_policy_place_work_on_its_device", || {
        for (d, module) in modules.iter().enumerate() {
            if module.kernels().context().ordinal() != d {
                return Err(format!("load_async({d}) loaded on device {}", module.kernels().context().ordinal()));
            }
            let pool = ck(device_context(d), "device_context")?;
            // Where the policy runs an operation of device d: one of d's pool streams, each time.
            for _ in 0..2 * pool.streams().len() {
                let (ordinal, stream) = ck(
                    DeviceOperation::new(d, |exec| Ok((exec.ordinal(), Arc::clone(exec.stream())))).sync(),
                    "DeviceOperation::new(d, ..).sync()",
                )?;
                if ordinal != d || !pool.streams().iter().any(|s| Arc::ptr_eq(s, &stream)) {
                    return Err(format!("an operation of device {d} ran on device {ordinal}, stream {stream:?}"));
                }
            }
            let (k, x) = (rng_k(d), random_u32(&mut Lcg(d as u64 + 7), LEN));
            let y0 = random_u32(&mut Lcg(d as u64 + 11), LEN);
            let (xd, mut yd) = (upload(d, &x)?, upload(d, &y0)?);
            let op = ck(
                module.scale_add_async(LaunchConfig::for_num_elems(LEN as u32), k, &xd, &mut yd),
                "scale_add_async",
            )?;
            if op.device() != d {
                return Err(format!("load_async({d})'s operation is tied to device {}", op.device()));
            }
            ck(op.sync(), "op.sync()")?;
            same(&format!("scale_add on device {d}"), &download(&yd)?, &scale_add_cpu(k, &x, &y0))?;
        }
        Ok(())
    });

    report.check("zip_all_runs_one_operation_per_device", || {
        let inputs: Vec<(u32, Vec<u32>, Vec<u32>)> =
            (0..n).map(|d| (rng_k(d) ^ 0x55, random_u32(rng, 4099), random_u32(rng, 4099))).collect();
        let mut bufs = Vec::new();
        for (d, (_, x, y)) in inputs.iter().enumerate() {
            bufs.push((upload(d, x)?, upload(d, y)?));
        }
        let ops = modules.iter().zip(&inputs).zip(bufs.iter_mut()).map(|((m, (k, _, _)), (x, y))| {
            m.scale_add_async(LaunchConfig::for_num_elems(4099), *k, x, y).expect("a valid config")
        });
        ck(zip_all(ops).sync(), "zip_all(..).sync()")?;
        for (d, ((k, x, y), (_, yd))) in inputs.iter().zip(&bufs).enumerate() {
            same(&format!("device {d}"), &download(yd)?, &scale_add_cpu(*k, x, y))?;
        }
        Ok(())
    });

    report.check("zip_of_operations_on_two_devices_runs_them_at_once", || {
        // Device a's kernel waits for a flag in pinned host memory that device b's kernel
        // raises: it sees it only when both run at the same time (a is queued first). With one
        // GPU, a = b: two streams of one device.
        for a in 0..n {
            let b = (a + 1) % n;
            let ctx = modules[a].kernels().context();
            let mut flag = ck(PinnedBuffer::filled(ctx, 1, 0u32), "PinnedBuffer::filled")?;
            let flag_ptr = ck(flag.as_mut_slice(), "flag.as_mut_slice")?.as_mut_ptr();
            let mut out = upload(a, &[0xdead_beef_u32])?;
            let one = LaunchConfig::for_num_elems(1);
            // SAFETY: the flag is pinned host memory (reachable from every GPU with unified
            // addressing), alive until the operations have completed (`.sync()` below), and
            // accessed only atomically meanwhile.
            let wait = unsafe { modules[a].wait_for_flag_async(one, flag_ptr, MAX_CYCLES, &mut out) };
            let raise = unsafe { modules[b].raise_flag_async(one, flag_ptr) };
            let (wait, raise) = (ck(wait, "wait_for_flag_async")?, ck(raise, "raise_flag_async")?);
            ck(zip!(wait, raise).sync(), "zip!(wait, raise).sync()")?;
            match download(&out)?[0] {
                1 => println!("    device {a}'s kernel saw device {b}'s flag"),
                2 => return Err(format!("device {a}'s kernel never saw device {b}'s flag: they did not run at once")),
                other => return Err(format!("wait_for_flag wrote {other:#x}")),
            }
            if ck(flag.as_slice(), "flag.as_slice")?[0] != 1 {
                return Err("the flag is not set".into());
            }
        }
        Ok(())
    });

    report.check("a_buffer_of_another_context_is_refused_at_launch", || {
        let ctx0 = Arc::clone(modules[0].kernels().context());
        let private = ck(CudaContext::new_private(0), "CudaContext::new_private(0)")?;
        let (ps, s0) = (ck(private.new_stream(), "new_stream")?, ck(ctx0.new_stream(), "new_stream")?);
        let x = random_u32(rng, 257);
        let x0 = ck(DeviceBuffer::from_host(&s0, &x), "upload")?;
        let mut y_private = ck(DeviceBuffer::from_host(&ps, &x), "upload to the private context")?;
        ck(ps.synchronize(), "synchronize")?;
        let cfg = LaunchConfig::for_num_elems(257);
        let e = modules[0].scale_add(&s0, cfg, 3, &x0, &mut y_private).err().ok_or("the launch was accepted")?;
        let text = e.to_string();
        println!("    ({text})");
        if !matches!(e, DriverError::Placement { .. })
            || !text.contains("argument 2 (`y`)")
            || !text.contains("copy_peer_async")
        {
            return Err(format!("unexpected error: {text}"));
        }
        // The kernels run on the private context itself, on its own buffers.
        let m = ck(kernels::load(&private), "kernels::load(private context)")?;
        let x_private = ck(DeviceBuffer::from_host(&ps, &x), "upload")?;
        ck(m.scale_add(&ps, cfg, 3, &x_private, &mut y_private), "scale_add on the private context")?;
        same(
            "scale_add on a private context",
            &ck(y_private.to_host_vec(&ps), "download")?,
            &scale_add_cpu(3, &x, &x),
        )?;
        // Two GPUs: refused until peer access is on, where the GPUs allow it.
        if n >= 2 {
            let ctx1 = Arc::clone(modules[1].kernels().context());
            let mut y1 = upload(1, &x)?;
            let e = modules[0].scale_add(&s0, cfg, 5, &x0, &mut y1).err();
            if !matches!(e, Some(DriverError::Placement { .. })) && !ctx0.has_peer_access(&ctx1) {
                return Err(format!("a buffer of device 1 given to device 0 without peer access: {e:?}"));
            }
            if ck(ctx0.can_access_peer(&ctx1), "can_access_peer")? {
                ck(ctx0.enable_peer_access(&ctx1), "enable_peer_access")?;
                ck(modules[0].scale_add(&s0, cfg, 5, &x0, &mut y1), "scale_add over peer access")?;
                ck(s0.synchronize(), "synchronize")?;
                same("scale_add into device 1's memory", &download(&y1)?, &scale_add_cpu(5, &x, &x))?;
                println!("    device 0 reaches device 1's memory (peer access)");
            } else {
                let e =
                    ctx0.enable_peer_access(&ctx1).err().ok_or("enable_peer_access without peer-to-peer succeeded")?;
                println!("    no peer-to-peer between devices 0 and 1: {e}");
            }
        }
        Ok(())
    });
}

fn rng_k(d: usize) -> u32 {
    0x9e37_79b9_u32.wrapping_mul(d as u32 + 1) | 1
}

pub fn scale_add_cpu(k: u32, x: &[u32], y: &[u32]) -> Vec<u32> {
    x.iter().zip(y).map(|(&x, &y)| k.wrapping_mul(x).wrapping_add(y)).collect()
}
