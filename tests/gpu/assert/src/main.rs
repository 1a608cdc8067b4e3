//! GPU test: `gpu_assert!` in a kernel. A launch whose inputs all satisfy the assertion
//! synchronizes cleanly (and its output is checked); a launch with one violating element fails:
//! the error surfaces at the next synchronization as `CUDA_ERROR_ASSERT`.
use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
use cuda_device::{DisjointSlice, cuda_module, gpu_assert, kernel, thread};

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

struct Lcg(u64);

impl Lcg {
    fn next_u32(&mut self) -> u32 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) as u32
    }
}

fn main() {
    match run() {
        Ok(name) => println!("PASS assert: a passing launch succeeds; a failing gpu_assert! surfaces as {name} at synchronization"),
        Err(err) => {
            eprintln!("FAIL assert: {err}");
            std::process::exit(1);
        }
    }
}

fn run() -> Result<String, String> {
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1);
    let mut rng = Lcg(seed);
    let mut x: Vec<i32> = (0..N).map(|_| (rng.next_u32() % 1000) as i32).collect();

    let ctx = CudaContext::new(0).map_err(|e| format!("CudaContext::new(0): {e}"))?;
    let stream = ctx.default_stream();
    let module = kernels::load(&ctx).map_err(|e| format!("kernels::load: {e}"))?;
    let config = LaunchConfig::for_num_elems(N as u32);

    // 1. Every element is within the limit: no error, and the kernel did its work.
    let x_dev = DeviceBuffer::from_host(&stream, &x).map_err(|e| format!("copy x: {e}"))?;
    let mut out_dev = DeviceBuffer::from_host(&stream, &vec![-1i32; N]).map_err(|e| format!("poison out: {e}"))?;
    module.checked_double(&stream, config, &x_dev, &mut out_dev, 1000).map_err(|e| format!("launch (passing): {e}"))?;
    stream.synchronize().map_err(|e| format!("the passing launch failed at synchronize: {e}"))?;
    let out = out_dev.to_host_vec(&stream).map_err(|e| format!("copy out back: {e}"))?;
    if let Some(i) = (0..N).find(|&i| out[i] != 2 * x[i]) {
        return Err(format!("passing launch: element {i} is {} (cpu {}) (seed {seed})", out[i], 2 * x[i]));
    }

    // 2. One element over the limit: the launch is queued, the error comes at synchronization.
    let bad = (rng.next_u32() as usize) % N;
    x[bad] = 5000;
    let x_dev = DeviceBuffer::from_host(&stream, &x).map_err(|e| format!("copy x: {e}"))?;
    module.checked_double(&stream, config, &x_dev, &mut out_dev, 1000).map_err(|e| format!("launch (failing): {e}"))?;
    match stream.synchronize() {
        Ok(()) => Err(format!("x[{bad}] = 5000 broke the gpu_assert!, but synchronize returned Ok")),
        Err(e) if e.name() == "CUDA_ERROR_ASSERT" => Ok(e.name().to_string()),
        Err(e) => Err(format!("expected CUDA_ERROR_ASSERT at synchronize, got: {e}")),
    }
}
