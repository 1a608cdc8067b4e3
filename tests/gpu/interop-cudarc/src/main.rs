//! GPU test: our kernels on cudarc's memory and streams (what a candle or cudarc program holds),
//! without a second memory type: the generated methods take `CudaSlice`/`CudaView`/`CudaViewMut`
//! and cudarc's `CudaStream`; `DeviceBuffer` and `CudaSlice` convert both ways without copies;
//! streams wrap both ways. Random inputs, outputs poisoned with NaN, every element compared with
//! the CPU; every CUDA call checked. Exits non-zero on any failure.
use std::sync::Arc;

use cuda_core::cudarc::driver::{CudaContext as CudarcContext, CudaStream as CudarcStream, DevicePtr};
use cuda_core::{CudaContext, CudaStream, DeviceBuffer, LaunchConfig};
use cuda_device::{DisjointSlice, cuda_module, kernel, thread};

#[path = "../../harness.rs"]
mod harness;
use harness::{Lcg, Report, ck, compare};

#[cuda_module]
mod kernels {
    use super::*;

    /// `y[i] = a * x[i] + y[i]`.
    #[kernel]
    pub fn axpy(a: f32, x: &[f32], mut y: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(y_elem) = y.get_mut(idx) {
            *y_elem = a * x[i] + *y_elem;
        }
    }

    /// `out[i] = x[i] * k` for any `T` (a generic kernel through the same traits).
    #[kernel]
    pub fn scale<T: Copy + core::ops::Mul<Output = T>>(x: &[T], k: T, out: &mut [T]) {
        let i = thread::index_1d().get();
        if i < out.len() {
            out[i] = x[i] * k;
        }
    }
}

const N: usize = 100_003;

/// The GPU may fuse `a * x + y` into one FMA (nvcc's default too): either rounding is right.
fn axpy_ok(got: &f32, (a, x, y): &(f32, f32, f32)) -> bool {
    got.to_bits() == a.mul_add(*x, *y).to_bits() || got.to_bits() == (a * x + y).to_bits()
}

fn expected_axpy(a: f32, x: &[f32], y: &[f32]) -> Vec<(f32, f32, f32)> {
    x.iter().zip(y).map(|(&x, &y)| (a, x, y)).collect()
}

/// Device address of a cudarc slice.
fn cudarc_ptr<T>(slice: &cuda_core::cudarc::driver::CudaSlice<T>, stream: &CudarcStream) -> u64 {
    let (ptr, _record) = slice.device_ptr(stream);
    ptr
}

fn main() {
    let mut report = Report::new("interop-cudarc");
    let mut rng = Lcg::from_env_or_clock();
    // As a cudarc program starts: cudarc's context and stream; ours made from them.
    let (theirs, their_stream, ctx, module) = report.setup(|| {
        // cudarc panics without a driver; ours says so.
        ck(cuda_core::init(0), "cuda_core::init")?;
        let theirs = ck(CudarcContext::new(0), "cudarc::driver::CudaContext::new(0)")?;
        let their_stream = ck(theirs.new_stream(), "cudarc new_stream")?;
        let ctx = ck(CudaContext::from_cudarc(&theirs), "CudaContext::from_cudarc")?;
        let module = ck(kernels::load(&ctx), "kernels::load")?;
        Ok((theirs, their_stream, ctx, module))
    });
    let cfg = LaunchConfig::for_num_elems(N as u32);

    report.check("same-context", || {
        if ctx.cu_ctx() != theirs.cu_ctx() {
            return Err("CudaContext::from_cudarc made another driver context".into());
        }
        let again = ck(CudaContext::from_cudarc(&theirs), "CudaContext::from_cudarc again")?;
        if !Arc::ptr_eq(&again, &ctx) {
            return Err("from_cudarc of the same cudarc context gave another CudaContext".into());
        }
        if !Arc::ptr_eq(ctx.cudarc(), &theirs) {
            return Err("ctx.cudarc() is not the cudarc context it was made from".into());
        }
        Ok(())
    });

    report.check("cudarc-slices-on-cudarc-stream", || {
        let a = rng.next_f32() / 100.0;
        let (x, y0) = (rng.vec_f32(N), rng.vec_f32(N));
        let x_dev = ck(their_stream.clone_htod(&x), "clone_htod x")?;
        let mut y_dev = ck(their_stream.clone_htod(&y0), "clone_htod y")?;
        ck(module.axpy(&their_stream, cfg, a, &x_dev, &mut y_dev), "launch axpy on cudarc types")?;
        ck(their_stream.synchronize(), "synchronize after axpy")?;
        let got = ck(their_stream.clone_dtoh(&y_dev), "clone_dtoh y")?;
        compare("y", &got, &expected_axpy(a, &x, &y0), axpy_ok)
    });

    report.check("cudarc-views", || {
        // Views of a part: x[7..], y[7..], the first 7 elements of y untouched.
        let a = rng.next_f32() / 100.0;
        let (x, y0) = (rng.vec_f32(N), rng.vec_f32(N));
        let x_dev = ck(their_stream.clone_htod(&x), "clone_htod x")?;
        let mut y_dev = ck(their_stream.clone_htod(&y0), "clone_htod y")?;
        let part = LaunchConfig::for_num_elems((N - 7) as u32);
        ck(
            module.axpy(&their_stream, part, a, &x_dev.slice(7..), &mut y_dev.slice_mut(7..)),
            "launch axpy on CudaView / CudaViewMut",
        )?;
        ck(their_stream.synchronize(), "synchronize after axpy")?;
        let got = ck(their_stream.clone_dtoh(&y_dev), "clone_dtoh y")?;
        let mut want = expected_axpy(a, &x, &y0);
        for w in &mut want[..7] {
            *w = (0.0, 0.0, w.2); // untouched: 0 * 0 + y
        }
        compare("y", &got, &want, axpy_ok)
    });

    report.check("generic-kernel-on-cudarc", || {
        let x: Vec<u32> = (0..N).map(|_| rng.next_u32()).collect();
        let k = rng.next_u32();
        let x_dev = ck(their_stream.clone_htod(&x), "clone_htod x")?;
        let mut out = ck(their_stream.clone_htod(&vec![0xdead_beef_u32; N]), "poison out")?;
        ck(module.scale::<u32>(&their_stream, cfg, &x_dev, k, &mut out), "launch scale::<u32>")?;
        ck(their_stream.synchronize(), "synchronize after scale")?;
        let want: Vec<u32> = x.iter().map(|v| v.wrapping_mul(k)).collect();
        compare("out", &ck(their_stream.clone_dtoh(&out), "clone_dtoh out")?, &want, |g, w| g == w)
    });

    report.check("mixed-buffers-on-our-stream", || {
        // Our input buffer, cudarc's output, on our stream wrapping cudarc's.
        let ours = ck(ctx.wrap_cudarc_stream(Arc::clone(&their_stream)), "wrap_cudarc_stream")?;
        if ours.raw() != their_stream.cu_stream() || !Arc::ptr_eq(ours.cudarc(), &their_stream) {
            return Err("the wrapped stream is not cudarc's".into());
        }
        let a = rng.next_f32() / 100.0;
        let (x, y0) = (rng.vec_f32(N), rng.vec_f32(N));
        let x_dev = ck(DeviceBuffer::from_host(&ours, &x), "x to the device")?;
        let mut y_dev = ck(their_stream.clone_htod(&y0), "clone_htod y")?;
        ck(module.axpy(&ours, cfg, a, &x_dev, &mut y_dev), "launch axpy, ours + cudarc's")?;
        ck(ours.synchronize(), "synchronize after axpy")?;
        compare("y", &ck(their_stream.clone_dtoh(&y_dev), "clone_dtoh y")?, &expected_axpy(a, &x, &y0), axpy_ok)
    });

    report.check("two-cudarc-streams", || {
        // cudarc's slice written on one stream, read by our kernel on another: cudarc's events
        // (recorded through KernelSlice) must order them.
        let other = ck(theirs.new_stream(), "cudarc new_stream")?;
        let a = rng.next_f32() / 100.0;
        let (x, y0) = (rng.vec_f32(N), rng.vec_f32(N));
        let mut x_dev = ck(their_stream.alloc_zeros::<f32>(N), "alloc_zeros x")?;
        ck(their_stream.memcpy_htod(&x, &mut x_dev), "memcpy_htod x (stream 1)")?;
        let mut y_dev = ck(other.clone_htod(&y0), "clone_htod y (stream 2)")?;
        ck(module.axpy(&other, cfg, a, &x_dev, &mut y_dev), "launch axpy on stream 2")?;
        ck(other.synchronize(), "synchronize stream 2")?;
        ck(theirs.check_err(), "cudarc's recorded errors")?;
        compare("y", &ck(other.clone_dtoh(&y_dev), "clone_dtoh y")?, &expected_axpy(a, &x, &y0), axpy_ok)
    });

    report.check("from-cudarc-into-cudarc", || {
        let x = rng.vec_f32(N);
        let slice = ck(their_stream.clone_htod(&x), "clone_htod")?;
        let addr = cudarc_ptr(&slice, &their_stream);
        let mut buf = ck(DeviceBuffer::from_cudarc(slice), "DeviceBuffer::from_cudarc")?;
        if buf.as_device_ptr() != addr || buf.len() != N {
            return Err(format!("from_cudarc copied: {:#x} != {addr:#x} or len {}", buf.as_device_ptr(), buf.len()));
        }
        let stream = ctx.default_stream();
        let input = ck(DeviceBuffer::from_host(&stream, &x), "x to the device")?;
        ck(module.axpy(&stream, cfg, 1.0, &input, &mut buf), "launch axpy on the adopted buffer")?;
        ck(stream.synchronize(), "synchronize after axpy")?;
        let back = buf.into_cudarc().map_err(|e| e.to_string())?;
        if cudarc_ptr(&back, &their_stream) != addr {
            return Err("into_cudarc gave other memory".into());
        }
        let got = ck(their_stream.clone_dtoh(&back), "clone_dtoh")?;
        compare("2x", &got, &expected_axpy(1.0, &x, &x), axpy_ok)
    });

    report.check("lend-to-cudarc", || {
        let stream = ck(ctx.new_stream(), "new_stream")?;
        let x = rng.vec_f32(N);
        let mut buf = ck(DeviceBuffer::from_host(&stream, &vec![f32::NAN; N]), "poisoned buffer")?;
        let addr = buf.as_device_ptr();
        {
            let mut loan = ck(buf.as_cudarc_mut(stream.cudarc()), "as_cudarc_mut")?;
            if cudarc_ptr(&loan, stream.cudarc()) != addr {
                return Err("the loan is not the buffer's memory".into());
            }
            ck(stream.cudarc().memcpy_htod(&x, &mut loan.view_mut()), "cudarc memcpy_htod into the loan")?;
        }
        let loan = ck(buf.as_cudarc(stream.cudarc()), "as_cudarc")?;
        let read = ck(stream.cudarc().clone_dtoh(&*loan), "cudarc clone_dtoh of the loan")?;
        drop(loan);
        compare("read through cudarc", &read, &x, |g, w| g.to_bits() == w.to_bits())?;
        // Still ours, still alive: read it our way too.
        compare("read by us", &ck(buf.to_host_vec(&stream), "to_host_vec")?, &x, |g, w| g.to_bits() == w.to_bits())
    });

    report.check("errors-say-what-to-do", || {
        let stream = ctx.default_stream();
        let ours = ck(DeviceBuffer::from_host(&stream, &[1.0f32; 4]), "buffer")?;
        let err = match ours.into_cudarc() {
            Ok(_) => return Err("into_cudarc of our own memory succeeded".into()),
            Err(e) => e.to_string(),
        };
        if !err.contains("allocated by cuda-oxide") || !err.contains("as_cudarc") {
            return Err(format!("into_cudarc's error does not say what to do: {err}"));
        }
        // A stream of another (non-primary) context of the same device.
        let other = ck(CudarcContext::new_non_primary(0, 0), "cudarc new_non_primary")?;
        let other_stream = ck(other.new_stream(), "new_stream on the other context")?;
        let msg = match ctx.wrap_cudarc_stream(Arc::clone(&other_stream)) {
            Ok(_) => return Err("wrap_cudarc_stream took a stream of another context".into()),
            Err(e) => e.to_string(),
        };
        if !msg.contains("another CUDA context") {
            return Err(format!("wrap_cudarc_stream's error: {msg}"));
        }
        let (x, mut y) =
            (ck(their_stream.clone_htod(&[1.0f32; 4]), "x")?, ck(their_stream.clone_htod(&[1.0f32; 4]), "y")?);
        let msg = match module.axpy(&other_stream, LaunchConfig::for_num_elems(4), 1.0, &x, &mut y) {
            Ok(()) => return Err("a launch on another context's stream was queued".into()),
            Err(e) => e.to_string(),
        };
        if !msg.contains("another context of device 0") {
            return Err(format!("the launch's error does not name the context mismatch: {msg}"));
        }
        ck(ctx.bind_to_thread(), "bind our context again")
    });

    report.check("stream-round-trip", || {
        let ours: Arc<CudaStream> = ck(CudaStream::from_cudarc(Arc::clone(&their_stream)), "CudaStream::from_cudarc")?;
        if !Arc::ptr_eq(ours.context(), &ctx) {
            return Err("CudaStream::from_cudarc made another CudaContext for the same cudarc context".into());
        }
        let mine = ck(ctx.new_stream(), "new_stream")?;
        // Our stream handed to cudarc and back is the same driver stream.
        let back = ck(CudaStream::from_cudarc(Arc::clone(mine.cudarc())), "from_cudarc(mine.cudarc())")?;
        if back.raw() != mine.raw() {
            return Err("our stream through cudarc and back is another stream".into());
        }
        ck(mine.synchronize(), "synchronize")
    });

    report.finish()
}
