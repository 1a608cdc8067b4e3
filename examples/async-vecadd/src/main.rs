//! The launching-kernels chapter's typed async launch: its snippets unchanged (borrowed with
//! `.sync()`, owned through `tokio::spawn(op.into_future()).await??`, `and_then`, `zip!`) around
//! the chapter's vecadd kernel, each result checked.
use std::future::IntoFuture;

use cuda_async::device_context::init_device_contexts;
use cuda_async::device_operation::DeviceOperation;
use cuda_async::zip;
use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
use cuda_device::{DisjointSlice, cuda_module, kernel, thread};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn vecadd(a: &[f32], b: &[f32], mut c: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(c_elem) = c.get_mut(idx) {
            *c_elem = a[i] + b[i];
        }
    }
}

type Buffers = (DeviceBuffer<f32>, DeviceBuffer<f32>, DeviceBuffer<f32>);

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ctx = CudaContext::new(0)?;
    let stream = ctx.default_stream();
    let a_dev = DeviceBuffer::from_host(&stream, &[1.0f32; 1024])?;
    let b_dev = DeviceBuffer::from_host(&stream, &[2.0f32; 1024])?;
    let mut c_dev = DeviceBuffer::<f32>::zeroed(&stream, 1024)?;
    // The operations run on the async runtime's own streams: finish the uploads first.
    stream.synchronize()?;

    // Borrowed form.
    init_device_contexts(0, 1)?;
    let module = kernels::load_async(0)?;

    let op = module.vecadd_async(LaunchConfig::for_num_elems(1024), &a_dev, &b_dev, &mut c_dev)?;

    // 执行并等待
    op.sync()?;
    assert!(c_dev.to_host_vec(&stream)?.iter().all(|x| *x == 3.0));
    println!("borrowed vecadd_async + sync(): 1 + 2 = 3");

    // Owned form.
    let op = module.vecadd_async_owned(LaunchConfig::for_num_elems(1024), a_dev, b_dev, c_dev)?;

    let (a_dev, b_dev, c_dev) = tokio::spawn(op.into_future()).await??;
    assert!(c_dev.to_host_vec(&stream)?.iter().all(|x| *x == 3.0));
    println!("owned vecadd_async_owned + tokio::spawn: 1 + 2 = 3, buffers returned");

    // Composition: each layer adds b again (c = a + b, then a = c + b, then c = a + b).
    let cfg = LaunchConfig::for_num_elems(1024);
    let layer1_op = module.vecadd_async_owned(cfg, a_dev, b_dev, c_dev)?;
    let layer2_op = |(a, b, c): Buffers| module.vecadd_async_owned(cfg, c, b, a);
    let layer3_op = |(c, b, a): Buffers| module.vecadd_async_owned(cfg, a, b, c);
    let forward_pass = layer1_op.and_then(|output1| layer2_op(output1)).and_then(|output2| layer3_op(output2));
    let (a_dev, b_dev, c_dev) = forward_pass.await?;
    assert!(c_dev.to_host_vec(&stream)?.iter().all(|x| *x == 7.0));
    println!("and_then chain of three vecadds: 1 + 2 + 2 + 2 = 7");

    // 并发运行两个独立操作
    let x_dev = DeviceBuffer::from_host(&stream, &[10.0f32; 1024])?;
    let y_dev = DeviceBuffer::<f32>::zeroed(&stream, 1024)?;
    stream.synchronize()?;
    let branch_a = module.vecadd_async_owned(cfg, a_dev, b_dev, c_dev)?;
    let branch_b = module.vecadd_async_owned(cfg, x_dev, DeviceBuffer::from_host(&stream, &[0.5f32; 1024])?, y_dev)?;
    stream.synchronize()?;
    let combined = zip!(branch_a, branch_b);
    let (result_a, result_b) = combined.sync()?;
    assert!(result_a.2.to_host_vec(&stream)?.iter().all(|x| *x == 7.0));
    assert!(result_b.2.to_host_vec(&stream)?.iter().all(|x| *x == 10.5));
    let _: DeviceOperation<'static, u8> = DeviceOperation::value(0, 0);
    println!("zip!(a, b): 5 + 2 = 7 and 10 + 0.5 = 10.5, on two streams");
    println!("async-vecadd: all results correct");
    Ok(())
}
