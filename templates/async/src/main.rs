//! Device work as lazy operations: build a chain of launches, then `.await` it (or `.sync()`).
//! Each operation takes its buffers by value and hands them back, so nothing is borrowed across
//! an `.await`.
use cuda_async::device_context::init_device_contexts;
use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
use cuda_device::{DisjointSlice, cuda_module, kernel, thread};

#[cuda_module]
mod kernels {
    use super::*;

    /// One thread per element: `c[i] = a[i] + b[i]`.
    #[kernel]
    pub fn vecadd(a: &[f32], b: &[f32], mut c: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(c_elem) = c.get_mut(idx) {
            *c_elem = a[i] + b[i];
        }
    }
}

#[tokio::main]
async fn main() {
    if let Err(err) = run().await {
        eprintln!("error: {err}");
        std::process::exit(1);
    }
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    const N: usize = 100_003;
    let a: Vec<f32> = (0..N).map(|i| (i % 1000) as f32 * 0.5).collect();
    let b: Vec<f32> = (0..N).map(|i| (i % 7) as f32 - 3.0).collect();

    let ctx = CudaContext::new(0)?;
    let stream = ctx.default_stream();
    let a_dev = DeviceBuffer::from_host(&stream, &a)?;
    let b_dev = DeviceBuffer::from_host(&stream, &b)?;
    let c_dev = DeviceBuffer::<f32>::zeroed(&stream, N)?;
    // The operations run on cuda-async's own streams: finish the uploads first.
    stream.synchronize()?;

    // One context and stream pool for device 0, then the module's async launch methods.
    init_device_contexts(0, 1)?;
    let module = kernels::load_async(0)?;
    let cfg = LaunchConfig::for_num_elems(N as u32);

    // c = a + b, then c = c + b: the second launch starts from the first one's buffers.
    let first = module.vecadd_async_owned(cfg, a_dev, b_dev, c_dev)?;
    let both = first.and_then(|(a, b, c)| module.vecadd_async_owned(cfg, c, b, a));
    let (_, _, twice) = both.await?;

    let c = twice.to_host_vec(&stream)?;
    let wrong = (0..N).filter(|&i| c[i] != a[i] + b[i] + b[i]).count();
    if wrong > 0 {
        return Err(format!("{wrong} of {N} elements differ from the CPU result").into());
    }
    println!("async vecadd twice: all {N} elements match the CPU result");
    Ok(())
}
