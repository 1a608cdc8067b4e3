//! The async extras: `zip!` of five operations, `Zippable`, `value` and `with_context`,
//! `DeviceBox` (from `malloc_async` memory) passed to the generated async methods, and the raw
//! `cuda_launch_async!` on a module loaded from a file.
use cuda_async::device_box::DeviceBox;
use cuda_async::device_context::{device_context, init_device_contexts, with_cuda_context};
use cuda_async::device_operation::{DeviceOperation, Zippable, value, with_context};
use cuda_core::{DeviceBuffer, LaunchConfig, memory};
use cuda_host::cuda_launch_async;

use crate::harness::{Lcg, Report, ck, compare, same_bits_f32};
use crate::{CRATE, Env, kernels};

const N: usize = 50_021;

pub fn checks(report: &mut Report, rng: &mut Lcg, env: &Env) {
    let s = &env.stream;
    let cfg = LaunchConfig::for_num_elems(N as u32);
    let module = match ck(init_device_contexts(0, 1), "init_device_contexts")
        .and_then(|()| ck(kernels::load_async(0), "kernels::load_async(0)"))
    {
        Ok(m) => m,
        Err(why) => {
            report.check("async_setup", || Err(why));
            return;
        }
    };
    let m = &module;

    report.check("zip_of_five_and_zippable", || {
        let inputs: Vec<(Vec<f32>, Vec<f32>)> = (0..5).map(|_| (rng.vec_f32(N), rng.vec_f32(N))).collect();
        let mut a = Vec::new();
        let mut b = Vec::new();
        let mut c = Vec::new();
        for (x, y) in &inputs {
            a.push(ck(DeviceBuffer::from_host(s, x), "copy a")?);
            b.push(ck(DeviceBuffer::from_host(s, y), "copy b")?);
            c.push(ck(DeviceBuffer::from_host(s, &vec![f32::NAN; N]), "poison c")?);
        }
        ck(s.synchronize(), "synchronize uploads")?;
        {
            let mut ops = Vec::new();
            for ((a, b), c) in a.iter().zip(&b).zip(c.iter_mut()) {
                ops.push(ck(m.vecadd_async(cfg, a, b, c), "vecadd_async")?);
            }
            let mut ops = ops.into_iter();
            let mut next = || ops.next().expect("five operations");
            let (u1, u2, u3, u4, u5) =
                ck(cuda_async::zip!(next(), next(), next(), next(), next()).sync(), "zip! of 5")?;
            let _: [(); 5] = [u1, u2, u3, u4, u5];
        }
        for (i, ((x, y), c)) in inputs.iter().zip(&c).enumerate() {
            let want: Vec<f32> = x.iter().zip(y).map(|(p, q)| p + q).collect();
            compare(&format!("zip! output {i}"), &ck(c.to_host_vec(s), "copy c")?, &want, same_bits_f32)?;
        }
        let (one, two, three) = ck((value(1u8), value('2'), DeviceOperation::value(0, 3i64)).zip().sync(), "zip()")?;
        if (one, two, three) != (1, '2', 3) {
            return Err(format!("Zippable::zip gave {:?}", (one, two, three)));
        }
        Ok(())
    });

    report.check("value_and_with_context", || {
        let n = 1 + (rng.next_u32() as usize % 4096);
        let op = value(n).and_then(|n| {
            with_context(move |exec| {
                DeviceOperation::new(exec.ordinal(), move |exec| {
                    DeviceBuffer::<u32>::from_host(exec.stream(), &vec![7u32; n])
                })
            })
        });
        let buf = ck(op.sync(), "value(..).and_then(with_context(..)).sync()")?;
        compare("with_context buffer", &ck(buf.to_host_vec(s), "copy back")?, &vec![7u32; n], |x, y| x == y)
    });

    report.check("device_box_from_malloc_async", || {
        let (ha, hb) = (rng.vec_f32(N), rng.vec_f32(N));
        let boxes = ck(
            with_cuda_context(0, |ctx| -> Result<_, cuda_core::DriverError> {
                let stream = ctx.default_stream();
                let bytes = N * 4;
                // SAFETY: fresh stream-ordered allocations of `bytes` each, filled and then
                // handed to DeviceBox whole, once; the host data outlives the synchronize.
                unsafe {
                    let a = memory::malloc_async(stream.cu_stream(), bytes)?;
                    let b = memory::malloc_async(stream.cu_stream(), bytes)?;
                    let c = memory::malloc_async(stream.cu_stream(), bytes)?;
                    memory::memcpy_htod_async(a, ha.as_ptr(), bytes, stream.cu_stream())?;
                    memory::memcpy_htod_async(b, hb.as_ptr(), bytes, stream.cu_stream())?;
                    memory::memset_d32_async(c, f32::NAN.to_bits(), N, stream.cu_stream())?;
                    stream.synchronize()?;
                    Ok((
                        DeviceBox::<[f32]>::from_raw_parts(a, N, 0),
                        DeviceBox::<[f32]>::from_raw_parts(b, N, 0),
                        DeviceBox::<[f32]>::from_raw_parts(c, N, 0),
                    ))
                }
            }),
            "with_cuda_context",
        )?;
        let (a, b, mut c) = ck(boxes, "malloc_async into DeviceBox")?;
        // The boxes go where buffers go (deref coercion).
        ck(ck(m.vecadd_async(cfg, &a, &b, &mut c), "vecadd_async(DeviceBox..)")?.sync(), "sync")?;
        let want: Vec<f32> = ha.iter().zip(&hb).map(|(x, y)| x + y).collect();
        compare("DeviceBox vecadd", &ck(c.to_host_vec(s), "copy c")?, &want, same_bits_f32)?;
        if c.device_id() != 0 || c.len() != N {
            return Err(format!("DeviceBox: device {} len {}", c.device_id(), c.len()));
        }
        drop((a, b, c));
        Ok(())
    });

    report.check("cuda_launch_async_raw", || {
        let module = ck(env.ctx.load_module_from_file(&format!("{CRATE}.ptx")), "load_module_from_file")?;
        let (ha, hb) = (rng.vec_f32(N), rng.vec_f32(N));
        let a = ck(DeviceBuffer::from_host(s, &ha), "copy a")?;
        let b = ck(DeviceBuffer::from_host(s, &hb), "copy b")?;
        let mut c = ck(DeviceBuffer::from_host(s, &vec![f32::NAN; N]), "poison c")?;
        ck(s.synchronize(), "synchronize uploads")?;
        // SAFETY: a, b and c outlive the operation: it is synchronised right here.
        let op = unsafe {
            cuda_launch_async! {
                kernel: vecadd,
                module: module,
                config: cfg,
                args: [slice(a), slice(b), slice_mut(c)]
            }
        };
        let pool_stream = ck(device_context(0), "device_context(0)")?.streams()[1].clone();
        ck(op.sync_on(&pool_stream), "cuda_launch_async!(..).sync_on(stream)")?;
        let want: Vec<f32> = ha.iter().zip(&hb).map(|(x, y)| x + y).collect();
        compare("cuda_launch_async!", &ck(c.to_host_vec(s), "copy c")?, &want, same_bits_f32)?;
        // An unknown kernel is reported when the operation runs.
        // SAFETY: nothing is launched.
        let missing = unsafe {
            cuda_launch_async! {
                kernel: no_such_kernel,
                module: module,
                config: cfg,
                args: [slice(a)]
            }
        };
        match missing.sync() {
            Err(e) if e.name() == "CUDA_ERROR_NOT_FOUND" => Ok(()),
            other => Err(format!("unknown kernel: expected CUDA_ERROR_NOT_FOUND, got {other:?}")),
        }
    });
}
