//! GPU test: `gpu_assert!` in a kernel. A launch whose inputs all satisfy the assertion
//! synchronizes cleanly (and its output is checked); a launch with one violating element fails:
//! the error surfaces at the next synchronization as `CUDA_ERROR_ASSERT`.
use cuda_core::{DeviceBuffer, LaunchConfig};
use cuda_device::{DisjointSlice, cuda_module, gpu_assert, kernel, thread};

#[path = "../../harness.rs"]
mod harness;
use harness::{Lcg, Report, ck, compare};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn checked_double(x: &[i32], mut out: DisjointSlice<i32>, limit: i32) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = out.get_mut(idx) {
            gpu_assert!(x[i] <= limit, "x[%lu] = %d is above the limit %d\n", i, x[i], limit);
            *o = 2 * x[i];
        }
    }
}

const N: usize = 10_007;

fn main() {
    let mut report = Report::new("assert");
    let mut rng = Lcg::from_env_or_clock();
    let mut x: Vec<i32> = (0..N).map(|_| (rng.next_u32() % 1000) as i32).collect();
    let (_ctx, stream, module) = report.load(kernels::load);
    let config = LaunchConfig::for_num_elems(N as u32);

    // 1. Every element is within the limit: no error, and the kernel did its work.
    report.check("passing_launch_succeeds", || {
        let x_dev = ck(DeviceBuffer::from_host(&stream, &x), "copy x")?;
        let mut out_dev = ck(DeviceBuffer::from_host(&stream, &vec![-1i32; N]), "poison out")?;
        ck(module.checked_double(&stream, config, &x_dev, &mut out_dev, 1000), "launch (passing)")?;
        ck(stream.synchronize(), "the passing launch failed at synchronize")?;
        let want: Vec<i32> = x.iter().map(|v| 2 * v).collect();
        compare("passing launch", &ck(out_dev.to_host_vec(&stream), "copy out back")?, &want, PartialEq::eq)
    });

    // 2. One element over the limit: the launch is queued, the error comes at synchronization.
    report.check("failing_assert_is_cuda_error_assert_at_synchronize", || {
        let bad = (rng.next_u32() as usize) % N;
        x[bad] = 5000;
        let x_dev = ck(DeviceBuffer::from_host(&stream, &x), "copy x")?;
        let mut out_dev = ck(DeviceBuffer::from_host(&stream, &vec![-1i32; N]), "poison out")?;
        ck(module.checked_double(&stream, config, &x_dev, &mut out_dev, 1000), "launch (failing)")?;
        match stream.synchronize() {
            Ok(()) => Err(format!("x[{bad}] = 5000 broke the gpu_assert!, but synchronize returned Ok")),
            Err(e) if e.name() == "CUDA_ERROR_ASSERT" => Ok(()),
            Err(e) => Err(format!("expected CUDA_ERROR_ASSERT at synchronize, got: {e}")),
        }
    });

    report.finish()
}
