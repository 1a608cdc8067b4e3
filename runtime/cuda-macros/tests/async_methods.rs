//! With cuda-host's `async` feature, `#[cuda_module]` generates `load_async` and the borrowed and
//! owned `_async` methods; the seed's async snippets compile as written (run on a GPU in
//! tests/gpu/async-ops). Without a GPU, building an operation reports the missing driver.

use std::future::IntoFuture;

use cuda_async::device_context::init_device_contexts;
use cuda_async::device_operation::DeviceOperation;
use cuda_async::zip;
use cuda_core::{DeviceBuffer, DriverError, LaunchConfig};
use cuda_device::{DisjointSlice, cuda_module, kernel, launch_bounds, thread};

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

    #[kernel]
    #[launch_bounds(128)]
    pub fn scale<T: Copy + core::ops::Mul<Output = T>>(k: T, data: &mut [T]) {
        let i = thread::index_1d().get();
        if i < data.len() {
            data[i] = data[i] * k;
        }
    }

    #[kernel]
    pub fn fill_ptr(p: *mut u32, n: usize, marker: ()) {
        let _ = (p, n, marker);
    }
}

/// The seed's borrowed snippet, as written.
#[allow(dead_code)]
fn seed_borrowed(
    a_dev: DeviceBuffer<f32>,
    b_dev: DeviceBuffer<f32>,
    mut c_dev: DeviceBuffer<f32>,
) -> Result<(), Box<dyn std::error::Error>> {
    init_device_contexts(0, 1)?;
    let module = kernels::load_async(0)?;

    let op = module.vecadd_async(LaunchConfig::for_num_elems(1024), &a_dev, &b_dev, &mut c_dev)?;

    // 执行并等待
    op.sync()?;
    Ok(())
}

/// The seed's owned snippet, as written.
#[allow(dead_code)]
async fn seed_owned(
    module: &kernels::Module,
    a_dev: DeviceBuffer<f32>,
    b_dev: DeviceBuffer<f32>,
    c_dev: DeviceBuffer<f32>,
) -> Result<(), Box<dyn std::error::Error>> {
    let op = module.vecadd_async_owned(LaunchConfig::for_num_elems(1024), a_dev, b_dev, c_dev)?;

    let (a_dev, b_dev, c_dev) = tokio::spawn(op.into_future()).await??;
    let _ = (a_dev, b_dev, c_dev);
    Ok(())
}

/// Composition: `and_then` feeding buffers on, `zip!`, generic and raw-pointer kernels.
#[allow(dead_code)]
async fn compose(
    module: &kernels::Module,
    data: DeviceBuffer<f32>,
    other: DeviceBuffer<f64>,
) -> Result<(), DriverError> {
    let cfg = LaunchConfig::for_num_elems(1024);
    let layer1_op: DeviceOperation<'static, DeviceBuffer<f32>> = module.scale_async_owned::<f32>(cfg, 2.0, data)?;
    let forward_pass = layer1_op
        .and_then(|output1| module.scale_async_owned::<f32>(cfg, 3.0, output1))
        .and_then(|output2| module.scale_async_owned::<f32>(cfg, 4.0, output2));
    let branch_b = module.scale_async_owned::<f64>(cfg, 0.5, other)?;
    let combined = zip!(forward_pass, branch_b);
    let (result_a, result_b) = combined.await?;
    let mut flags = DeviceBuffer::<u32>::zeroed(&cuda_async::device_context::device_context(0)?.streams()[0], 4)?;
    let raw = flags.as_device_ptr() as *mut u32;
    module.fill_ptr_async(cfg, raw, 4, ())?.sync()?;
    let borrowed = module.scale_async::<u32>(cfg, 2, &mut flags)?;
    let (_, _, n) = zip!(borrowed, DeviceOperation::value(0, 1u8), DeviceOperation::value(0, 'x')).sync()?;
    let _ = (result_a, result_b, n);
    Ok(())
}

#[test]
fn without_a_gpu_load_async_reports_it() {
    if cuda_core::is_driver_present() {
        return; // a GPU machine: tests/gpu/async-ops runs these for real
    }
    let e = kernels::load_async(0).err().expect("no driver here");
    assert!(e.to_string().contains("no NVIDIA driver found"), "{e}");
    let e = init_device_contexts(0, 1).unwrap_err();
    assert!(matches!(e, DriverError::NoDriver { .. }), "{e}");
}
