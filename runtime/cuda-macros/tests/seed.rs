//! The seed's `#[cuda_module]` vecadd, exactly as the guide writes it, plus generic, cluster and
//! launch-bounds kernels; runs up to the point where a GPU is needed.

use cuda_core::{CudaContext, DeviceBuffer, DriverError, LaunchConfig};
use cuda_device::{DisjointSlice, cluster_launch, cuda_module, kernel, launch_bounds, thread};

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
    #[launch_bounds(256, 2)]
    pub fn scale<T: Copy + core::ops::Mul<Output = T>>(k: T, data: &mut [T]) {
        let i = thread::index_1d().get();
        if i < data.len() {
            data[i] = data[i] * k;
        }
    }

    #[kernel]
    pub fn map<T: Copy, F: Fn(T) -> T>(f: F, input: &[T], mut out: DisjointSlice<T>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = out.get_mut(idx) {
            *o = f(input[i]);
        }
    }

    #[kernel]
    #[cluster_launch(4, 1, 1)]
    pub fn cluster_kernel(mut out: DisjointSlice<u32>, marker: (), raw: *const u32) {
        let _ = (marker, raw);
        if let Some(o) = out.get_mut(thread::index_1d()) {
            *o = 1;
        }
    }
}

/// The seed's `main`, verbatim (it needs a GPU and `cargo oxide build`, so it is not run here).
#[allow(dead_code)]
fn seed_main() {
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.default_stream();
    let module = kernels::load(&ctx).unwrap();

    let a = DeviceBuffer::from_host(&stream, &[1.0f32; 1024]).unwrap();
    let b = DeviceBuffer::from_host(&stream, &[2.0f32; 1024]).unwrap();
    let mut c = DeviceBuffer::<f32>::zeroed(&stream, 1024).unwrap();

    module.vecadd(&stream, LaunchConfig::for_num_elems(1024), &a, &b, &mut c).expect("Kernel launch failed");

    let result = c.to_host_vec(&stream).unwrap();
    assert_eq!(result[0], 3.0);
}

#[allow(dead_code)]
fn generic_calls(module: &kernels::Module, ctx: &std::sync::Arc<CudaContext>) -> Result<(), DriverError> {
    let stream = ctx.new_stream()?;
    let cfg = LaunchConfig::for_num_elems(1024);
    let input = DeviceBuffer::from_host(&stream, &[1.0f32; 1024])?;
    let mut out = DeviceBuffer::<f32>::zeroed(&stream, 1024)?;
    let mut flags = DeviceBuffer::<u32>::zeroed(&stream, 1024)?;
    let k = 2.0f32;
    module.scale::<f32>(&stream, cfg, 3.0, &mut out)?;
    module.map::<f32, _>(&stream, cfg, move |x: f32| x * k, &input, &mut out)?;
    module.cluster_kernel(&stream, cfg, &mut flags, (), std::ptr::null())?;
    Ok(())
}

#[test]
fn load_without_cargo_oxide_says_how_to_build() {
    // Without a driver the context fails first; with one, load() must explain the missing device code.
    match CudaContext::new(0) {
        Err(e) => assert!(matches!(e, DriverError::NoDriver { .. } | DriverError::NoDevice { .. }), "{e}"),
        Ok(ctx) => {
            let err = kernels::load(&ctx).err().expect("no device code without cargo oxide");
            assert!(err.to_string().contains("cargo oxide build"), "{err}");
        }
    }
    let e = DriverError::NotBuiltWithOxide.to_string();
    assert!(e.starts_with("built without cargo oxide: device code was not compiled; run `cargo oxide build`"), "{e}");
}

/// A kernel outside any `#[cuda_module]` (sideloaded with `cuda_launch!`).
#[kernel]
#[launch_bounds(128)]
pub fn standalone(mut out: DisjointSlice<u32>) {
    if let Some(o) = out.get_mut(thread::index_1d()) {
        *o = 7;
    }
}
