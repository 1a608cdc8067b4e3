//! Wrong argument count or types to the generated `_async` / `_async_owned` methods fail at the call.
use cuda_core::{DeviceBuffer, LaunchConfig};
use cuda_device::{cuda_module, kernel, thread, DisjointSlice};

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

fn main() {
    let module = kernels::load_async(0).unwrap();
    let ctx = cuda_core::CudaContext::new(0).unwrap();
    let stream = ctx.default_stream();
    let a = DeviceBuffer::from_host(&stream, &[1.0f32; 4]).unwrap();
    let ints = DeviceBuffer::from_host(&stream, &[1u32; 4]).unwrap();
    let mut c = DeviceBuffer::<f32>::zeroed(&stream, 4).unwrap();
    let cfg = LaunchConfig::for_num_elems(4);

    // Missing an argument.
    let _ = module.vecadd_async(cfg, &a, &mut c);
    // Wrong element type.
    let _ = module.vecadd_async(cfg, &a, &ints, &mut c);
    // The owned form takes the buffers, not references.
    let _ = module.vecadd_async_owned(cfg, &a, &a, &mut c);
}
