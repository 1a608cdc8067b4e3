//! Launches the library's kernels and checks every element against the CPU.
use {{crate_name}}::cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
use {{crate_name}}::kernels;

fn main() {
    if let Err(err) = run() {
        eprintln!("error: {err}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    const N: usize = 10_007;
    let x: Vec<f32> = (0..N).map(|i| (i % 100) as f32 * 0.25).collect();
    let y: Vec<f32> = (0..N).map(|i| (i % 9) as f32).collect();

    let ctx = CudaContext::new(0)?;
    let stream = ctx.default_stream();
    let module = kernels::load(&ctx)?;
    let cfg = LaunchConfig::for_num_elems(N as u32);

    let x_dev = DeviceBuffer::from_host(&stream, &x)?;
    let mut y_dev = DeviceBuffer::from_host(&stream, &y)?;
    module.saxpy(&stream, cfg, 2.0f32, &x_dev, &mut y_dev)?;
    let mut scaled = DeviceBuffer::<f32>::zeroed(&stream, N)?;
    module.scale(&stream, cfg, &x_dev, 3.0f32, &mut scaled)?;
    stream.synchronize()?;

    let (y_gpu, scaled_gpu) = (y_dev.to_host_vec(&stream)?, scaled.to_host_vec(&stream)?);
    let wrong = (0..N).filter(|&i| y_gpu[i] != 2.0 * x[i] + y[i] || scaled_gpu[i] != x[i] * 3.0).count();
    if wrong > 0 {
        return Err(format!("{wrong} of {N} elements differ from the CPU result").into());
    }
    println!("saxpy and scale::<f32>: all {N} elements match the CPU result");
    Ok(())
}
