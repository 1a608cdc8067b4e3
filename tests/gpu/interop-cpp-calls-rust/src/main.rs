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
        let mut params: [*mut c_void; 4] = [
            (&raw mut xp).cast(),
            (&raw mut yp).cast(),
            (&raw mut a).cast(),
            (&raw mut n).cast(),
        ];
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

    report.finish()
}
