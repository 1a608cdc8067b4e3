//! Launches the kernels crate's `vecadd` and checks every element against the CPU.
use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
use {{crate_name}}_kernels::kernels;

fn main() {
    if let Err(err) = run() {
        eprintln!("error: {err}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    const N: usize = 100_003;
    let a: Vec<f32> = (0..N).map(|i| (i % 1000) as f32 * 0.5).collect();
    let b: Vec<f32> = (0..N).map(|i| (i % 7) as f32 - 3.0).collect();

    let ctx = CudaContext::new(0)?;
    let stream = ctx.default_stream();
    let module = kernels::load(&ctx)?;

    let a_dev = DeviceBuffer::from_host(&stream, &a)?;
    let b_dev = DeviceBuffer::from_host(&stream, &b)?;
    let mut c_dev = DeviceBuffer::<f32>::zeroed(&stream, N)?;
    module.vecadd(&stream, LaunchConfig::for_num_elems(N as u32), &a_dev, &b_dev, &mut c_dev)?;
    stream.synchronize()?;
    let c = c_dev.to_host_vec(&stream)?;

    let wrong = (0..N).filter(|&i| c[i] != a[i] + b[i]).count();
    if wrong > 0 {
        return Err(format!("{wrong} of {N} elements differ from the CPU result").into());
    }
    println!("workspace vecadd: all {N} elements match the CPU result");
    Ok(())
}
