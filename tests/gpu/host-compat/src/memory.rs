//! Raw memory calls (`cuda_core::memory`), buffer casts and raw parts, a raw-pointer kernel,
//! events from `record_event`, context queries, `init`, `IntoResult` and `err.0`.
use cuda_core::error::IntoResult;
use cuda_core::{DeviceBuffer, DriverError, LaunchConfig, memory, sys};

use crate::harness::{Lcg, Report, ck, compare, same_bits_f32};
use crate::{Celsius, Env};

const N: usize = 65_537;

pub fn checks(report: &mut Report, rng: &mut Lcg, env: &Env) {
    let (ctx, s, m) = (&env.ctx, &env.stream, &env.module);

    report.check("context_queries", || {
        let (major, minor) = ck(ctx.compute_capability(), "compute_capability")?;
        if (major as u32, minor as u32) != ctx.capability() {
            return Err(format!("compute_capability {major}.{minor} differs from capability {:?}", ctx.capability()));
        }
        if ck(ctx.device_name(), "device_name")? != ctx.name() {
            return Err("device_name differs from name".into());
        }
        let clusters = ck(ctx.supports_cluster_launch(), "supports_cluster_launch")?;
        if clusters != (major >= 9) {
            return Err(format!("supports_cluster_launch is {clusters} on sm_{major}{minor}"));
        }
        let mut sms = 0;
        let attr = sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT;
        // SAFETY: a plain attribute query on the context's device.
        ck(unsafe { sys::cuDeviceGetAttribute(&mut sms, attr, ctx.cu_device()) }.result(), "cuDeviceGetAttribute")?;
        if sms as u32 != ctx.sm_count() || ctx.cu_ctx().is_null() {
            return Err(format!("cu_device gives {sms} SMs, the context says {}", ctx.sm_count()));
        }
        Ok(())
    });

    report.check("init_and_into_result", || {
        ck(cuda_core::init(0), "init(0)")?;
        match cuda_core::init(1) {
            Err(e) if e.0 == sys::cudaError_enum_CUDA_ERROR_INVALID_VALUE => {}
            other => return Err(format!("init(1): expected CUDA_ERROR_INVALID_VALUE, got {other:?}")),
        }
        let mut count = 0;
        // SAFETY: the driver is initialised; cuDeviceGetCount writes one i32.
        ck(IntoResult::result(unsafe { sys::cuDeviceGetCount(&mut count) }), "cuDeviceGetCount")?;
        if count < 1 {
            return Err(format!("{count} devices"));
        }
        // A failing raw call: the error's `.0` is the driver's code.
        let mut dev = 0;
        // SAFETY: an out-of-range ordinal is an error, not undefined behaviour.
        let e: DriverError = match IntoResult::result(unsafe { sys::cuDeviceGet(&mut dev, count + 7) }) {
            Ok(()) => return Err("cuDeviceGet of a missing ordinal succeeded".into()),
            Err(e) => e,
        };
        if e.0 != sys::cudaError_enum_CUDA_ERROR_INVALID_DEVICE || e.code() != Some(e.0 as u32) {
            return Err(format!("expected CUDA_ERROR_INVALID_DEVICE as err.0, got {e}"));
        }
        Ok(())
    });

    report.check("raw_memory_calls", || {
        let stream = ck(ctx.new_stream(), "new_stream")?;
        let host: Vec<u32> = (0..N).map(|_| rng.next_u32()).collect();
        let bytes = N * 4;
        let mut back = vec![0u32; N];
        ck(ctx.bind_to_thread(), "bind_to_thread")?;
        // SAFETY: every pointer is an allocation of `bytes` bytes made here on the current
        // context, freed once at the end; host memory lives until the stream is synchronised.
        unsafe {
            let a = ck(memory::malloc_async(stream.cu_stream(), bytes), "malloc_async")?;
            let b = ck(memory::malloc_sync(bytes), "malloc_sync")?;
            ck(memory::memset_d8_async(a, 0xab, bytes, stream.cu_stream()), "memset_d8_async")?;
            ck(memory::memcpy_dtoh_async(back.as_mut_ptr(), a, bytes, stream.cu_stream()), "memcpy_dtoh_async")?;
            ck(stream.synchronize(), "synchronize")?;
            compare("memset_d8_async", &back, &vec![0xabab_abab; N], |x, y| x == y)?;
            ck(memory::memcpy_htod_async(a, host.as_ptr(), bytes, stream.cu_stream()), "memcpy_htod_async")?;
            ck(memory::memcpy_dtod_async(b, a, bytes, stream.cu_stream()), "memcpy_dtod_async")?;
            ck(stream.synchronize(), "synchronize")?;
            back.fill(0);
            ck(memory::memcpy_dtoh_sync(back.as_mut_ptr(), b, bytes), "memcpy_dtoh_sync")?;
            compare("htod, dtod, dtoh", &back, &host, |x, y| x == y)?;
            ck(memory::memset_d32_async(a, 0x3f80_0000, N, stream.cu_stream()), "memset_d32_async")?;
            let pinned = ck(memory::malloc_host(bytes), "malloc_host")?.cast::<u32>();
            ck(memory::memcpy_dtoh_async(pinned, a, bytes, stream.cu_stream()), "memcpy_dtoh_async to pinned")?;
            ck(stream.synchronize(), "synchronize")?;
            let words = std::slice::from_raw_parts(pinned, N).to_vec();
            ck(memory::free_host(pinned.cast()), "free_host")?;
            compare("memset_d32_async", &words, &vec![0x3f80_0000; N], |x, y| x == y)?;
            ck(memory::memcpy_htod_sync(b, host.as_ptr(), bytes), "memcpy_htod_sync")?;
            ck(memory::free_async(a, stream.cu_stream()), "free_async")?;
            ck(stream.synchronize(), "synchronize")?;
            back.fill(0);
            ck(memory::memcpy_dtoh_sync(back.as_mut_ptr(), b, bytes), "memcpy_dtoh_sync")?;
            ck(memory::free_sync(b), "free_sync")?;
            compare("memcpy_htod_sync", &back, &host, |x, y| x == y)
        }
    });

    report.check("raw_pointer_kernel", || {
        let n = N as u32;
        let base = rng.next_u32() >> 1;
        let buf = ck(DeviceBuffer::from_host(s, &vec![u32::MAX; N]), "poison")?;
        if buf.cu_deviceptr() != buf.as_device_ptr() || buf.num_bytes() != N * 4 {
            return Err("cu_deviceptr / num_bytes disagree with as_device_ptr / len".into());
        }
        let p = buf.cu_deviceptr() as *mut u32;
        ck(m.iota_at(s, LaunchConfig::for_num_elems(n), p, n, base), "iota_at")?;
        let want: Vec<u32> = (0..n).map(|i| base.wrapping_add(i)).collect();
        compare("iota_at through cu_deviceptr", &ck(buf.to_host_vec(s), "copy back")?, &want, |x, y| x == y)
    });

    report.check("buffer_casts_and_raw_parts", || {
        let xs = rng.vec_f32(4 * N);
        let buf = ck(DeviceBuffer::from_host(s, &xs), "copy")?;
        // Same bytes as u32.
        let bits = buf.cast_elem::<u32>();
        let want: Vec<u32> = xs.iter().map(|x| x.to_bits()).collect();
        compare("cast_elem::<u32>", &ck(bits.to_host_vec(s), "copy bits")?, &want, |x, y| x == y)?;
        // As 4-float chunks: a quarter of the length, same values.
        let quads =
            bits.cast_elem::<f32>().cast_chunks::<[f32; 4]>().map_err(|b| format!("cast_chunks refused {b:?}"))?;
        if quads.len() != N {
            return Err(format!("cast_chunks: {} quads of {} floats", quads.len(), 4 * N));
        }
        let got: Vec<f32> = ck(quads.to_host_vec(s), "copy quads")?.into_iter().flatten().collect();
        compare("cast_chunks::<[f32; 4]>", &got, &xs, same_bits_f32)?;
        // A length that is not a whole number of chunks gives the buffer back.
        let odd = ck(DeviceBuffer::from_host(s, &xs[..4 * N - 1]), "copy odd")?;
        if odd.can_cast_chunks::<[f32; 4]>() {
            return Err("can_cast_chunks accepted a partial chunk".into());
        }
        let odd = match odd.cast_chunks::<[f32; 4]>() {
            Ok(_) => return Err("cast_chunks accepted a partial chunk".into()),
            Err(back) => back,
        };
        compare("refused cast keeps the data", &ck(odd.to_host_vec(s), "copy odd")?, &xs[..4 * N - 1], same_bits_f32)?;
        // Raw parts and back.
        let (ptr, len, owner) = odd.into_raw_parts();
        // SAFETY: the parts of the buffer just given up, adopted once.
        let again = unsafe { DeviceBuffer::<f32>::from_raw_parts(ptr, len, owner) };
        compare("from_raw_parts", &ck(again.to_host_vec(s), "copy again")?, &xs[..4 * N - 1], same_bits_f32)?;
        // A kernel over a transparent wrapper type, fed through cast_elem.
        let celsius = ck(DeviceBuffer::from_host(s, &xs[..N]), "copy celsius")?.cast_elem::<Celsius>();
        let mut kelvin = ck(DeviceBuffer::from_host(s, &vec![f32::NAN; N]), "poison kelvin")?;
        ck(m.to_kelvin(s, LaunchConfig::for_num_elems(N as u32), &celsius, &mut kelvin), "to_kelvin")?;
        let want: Vec<f32> = xs[..N].iter().map(|c| c + 273.15).collect();
        compare("to_kelvin(cast_elem::<Celsius>)", &ck(kelvin.to_host_vec(s), "copy kelvin")?, &want, same_bits_f32)
    });

    report.check("record_event", || {
        let stream = ck(ctx.new_stream(), "new_stream")?;
        let start = ck(stream.record_event(Some(sys::CUevent_flags_enum_CU_EVENT_DEFAULT)), "record_event(DEFAULT)")?;
        let buf = ck(DeviceBuffer::<u32>::zeroed(&stream, N), "zeroed")?;
        let p = buf.cu_deviceptr() as *mut u32;
        ck(m.iota_at(&stream, LaunchConfig::for_num_elems(N as u32), p, N as u32, 1), "iota_at")?;
        let end = ck(stream.record_event(Some(sys::CUevent_flags_enum_CU_EVENT_DEFAULT)), "record_event(DEFAULT)")?;
        let ms = ck(start.elapsed_ms(&end), "elapsed_ms")?;
        if !(ms.is_finite() && ms >= 0.0) {
            return Err(format!("elapsed_ms = {ms}"));
        }
        // `None` makes events without timing, as NVIDIA's does: timing them is an error.
        let a = ck(stream.record_event(None), "record_event(None)")?;
        let b = ck(ctx.new_event(None), "new_event(None)")?;
        ck(b.record(&stream), "record")?;
        if a.elapsed_ms(&b).is_ok() {
            return Err("events without timing were timed".into());
        }
        ck(b.synchronize(), "synchronize the event")
    });
}
