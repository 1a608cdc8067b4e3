//! GPU test: CUDA C++ kernels (`src/caller.cu`, named in Cargo.toml's `cuda-sources`) calling
//! Rust `#[device]` exports; nvJitLink links both at build time. Random inputs, outputs poisoned
//! first, compared with the same Rust functions run on the CPU.
use std::ffi::c_void;

use cuda_core::{DeviceBuffer, EmbeddedKernels, LaunchConfig};
use cuda_device::device;

#[path = "../../harness.rs"]
mod harness;
use harness::{Lcg, Report, ck, compare, same_bits_f32};

/// `a*x + y`, fused (the CPU reference calls the same function).
#[device]
#[unsafe(no_mangle)]
pub extern "C" fn rust_axpy(a: f32, x: f32, y: f32) -> f32 {
    a.mul_add(x, y)
}

/// Steps of the Collatz sequence from `n` to 1 (at most 1000).
#[device]
#[unsafe(no_mangle)]
pub extern "C" fn rust_collatz_steps(mut n: u64) -> u32 {
    let mut steps = 0;
    while n > 1 && steps < 1000 {
        n = if n % 2 == 0 { n / 2 } else { 3 * n + 1 };
        steps += 1;
    }
    steps
}

/// Newton's square root (five steps from x/2), 0 for x <= 0.
#[device]
pub fn fast_sqrt(x: f32) -> f32 {
    if x <= 0.0 {
        return 0.0;
    }
    let mut g = x * 0.5;
    for _ in 0..5 {
        g = 0.5 * (g + x / g);
    }
    g
}

#[device]
pub fn clamp_f32(v: f32, lo: f32, hi: f32) -> f32 {
    if v < lo {
        lo
    } else if v > hi {
        hi
    } else {
        v
    }
}

/// Calls two other exports: transitive Rust calls behind one C++ call.
#[device]
pub fn safe_sqrt(x: f32) -> f32 {
    fast_sqrt(clamp_f32(x, 0.0, 1e10))
}

/// Generic, so not exported itself; its instances are, through the wrappers below.
#[device]
pub fn fma<T: core::ops::Mul<Output = T> + core::ops::Add<Output = T>>(a: T, b: T, c: T) -> T {
    a * b + c
}

#[device]
pub fn fma_f32(a: f32, b: f32, c: f32) -> f32 {
    fma(a, b, c)
}

#[device]
pub fn fma_i32(a: i32, b: i32, c: i32) -> i32 {
    fma(a, b, c)
}

const N: usize = 50_001;
const CRATE: &str = "gpu_interop_cpp_calls_rust";

fn main() {
    let mut report = Report::new("interop-cpp-calls-rust");
    let mut rng = Lcg::from_env_or_clock();
    let (ctx, stream, kernels) = report.load(EmbeddedKernels::new);
    let _ = ctx;
    let config = LaunchConfig::for_num_elems(N as u32);
    let n = N as i32;

    report.check("cpp_axpy", || {
        let f = ck(kernels.cuda_cpp_entry(CRATE, "cpp_axpy"), "look up cpp_axpy")?;
        let (x, y) = (rng.vec_f32(N), rng.vec_f32(N));
        let a = rng.next_f32();
        let want: Vec<f32> = x.iter().zip(&y).map(|(&x, &y)| rust_axpy(a, x, y)).collect();
        let x_dev = ck(DeviceBuffer::from_host(&stream, &x), "copy x")?;
        let y_dev = ck(DeviceBuffer::from_host(&stream, &y), "copy y")?;
        let (mut xp, mut yp, mut a, mut n) = (x_dev.as_device_ptr(), y_dev.as_device_ptr(), a, n);
        let mut params: [*mut c_void; 4] =
            [(&raw mut xp).cast(), (&raw mut yp).cast(), (&raw mut a).cast(), (&raw mut n).cast()];
        // SAFETY: one pointer per parameter of `cpp_axpy(const float*, float*, float, int)`; the
        // kernel touches the first `n` elements of the two buffers only.
        ck(unsafe { cuda_core::launch(&f, &stream, &config, None, &mut params) }, "launch cpp_axpy")?;
        compare("cpp_axpy", &ck(y_dev.to_host_vec(&stream), "copy y")?, &want, same_bits_f32)
    });

    report.check("cpp_collatz", || {
        let f = ck(kernels.cuda_cpp_entry(CRATE, "cpp_collatz"), "look up cpp_collatz")?;
        let start: Vec<u64> = (0..N).map(|_| rng.next_u64() % 1_000_000).collect();
        let want: Vec<u32> = start.iter().map(|&s| rust_collatz_steps(s)).collect();
        let start_dev = ck(DeviceBuffer::from_host(&stream, &start), "copy start")?;
        let steps_dev = ck(DeviceBuffer::from_host(&stream, &vec![u32::MAX; N]), "poison steps")?;
        let (mut sp, mut tp, mut n) = (start_dev.as_device_ptr(), steps_dev.as_device_ptr(), n);
        let mut params: [*mut c_void; 3] = [(&raw mut sp).cast(), (&raw mut tp).cast(), (&raw mut n).cast()];
        // SAFETY: one pointer per parameter of `cpp_collatz(const uint64_t*, uint32_t*, int)`.
        ck(unsafe { cuda_core::launch(&f, &stream, &config, None, &mut params) }, "launch cpp_collatz")?;
        compare("cpp_collatz", &ck(steps_dev.to_host_vec(&stream), "copy steps")?, &want, |a, b| a == b)
    });

    report.check("cpp_consumes_rust_device", || {
        let f = ck(kernels.cuda_cpp_entry(CRATE, "cpp_scenario"), "look up cpp_scenario")?;
        // Positive and negative inputs; x * 2 + 1 and the divisions are exact or correctly rounded
        // on both sides, and nothing contracts across the C++/Rust boundary differently: the
        // float results are compared within 1 ulp, the integer ones exactly.
        let x: Vec<f32> = (0..N).map(|_| rng.next_f32() * 0.1).collect();
        let want_sc: Vec<f32> = x.iter().map(|&v| clamp_f32(fast_sqrt(v), 0.0, 10.0)).collect();
        let want_safe: Vec<f32> = x.iter().map(|&v| safe_sqrt(v)).collect();
        let want_f: Vec<f32> = x.iter().map(|&v| fma_f32(v, 2.0, 1.0)).collect();
        let want_i: Vec<i32> = (0..N as i32).map(|k| fma_i32(k, 3, 10)).collect();
        let x_dev = ck(DeviceBuffer::from_host(&stream, &x), "copy x")?;
        let nan = vec![f32::NAN; N];
        let (sc, safe, fo) = (
            ck(DeviceBuffer::from_host(&stream, &nan), "poison")?,
            ck(DeviceBuffer::from_host(&stream, &nan), "poison")?,
            ck(DeviceBuffer::from_host(&stream, &nan), "poison")?,
        );
        let io = ck(DeviceBuffer::from_host(&stream, &vec![i32::MIN; N]), "poison")?;
        let mut ptrs =
            [x_dev.as_device_ptr(), sc.as_device_ptr(), safe.as_device_ptr(), fo.as_device_ptr(), io.as_device_ptr()];
        let mut n = n;
        let mut params: Vec<*mut c_void> = ptrs.iter_mut().map(|p| (p as *mut u64).cast()).collect();
        params.push((&raw mut n).cast());
        // SAFETY: one pointer per parameter of `cpp_scenario(const float*, float*, float*, float*,
        // int32_t*, int)`; each buffer holds `n` elements.
        ck(unsafe { cuda_core::launch(&f, &stream, &config, None, &mut params) }, "launch cpp_scenario")?;
        let ulp = |a: &f32, b: &f32| a.to_bits().abs_diff(b.to_bits()) <= 1;
        compare("sqrt_clamped", &ck(sc.to_host_vec(&stream), "copy")?, &want_sc, ulp)?;
        compare("safe_sqrt", &ck(safe.to_host_vec(&stream), "copy")?, &want_safe, ulp)?;
        compare("fma_f32", &ck(fo.to_host_vec(&stream), "copy")?, &want_f, ulp)?;
        compare("fma_i32", &ck(io.to_host_vec(&stream), "copy")?, &want_i, |a, b| a == b)
    });

    report.finish()
}
