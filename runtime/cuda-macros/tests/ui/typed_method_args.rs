//! Wrong argument count or types to a generated launch method fail at the call.
use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
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

    #[kernel]
    pub fn scale(k: f32, data: &mut [f32]) {
        let _ = (k, data);
    }
}

fn main() {
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.default_stream();
    let module = kernels::load(&ctx).unwrap();
    let a = DeviceBuffer::from_host(&stream, &[1.0f32; 4]).unwrap();
    let ints = DeviceBuffer::from_host(&stream, &[1u32; 4]).unwrap();
    let mut c = DeviceBuffer::<f32>::zeroed(&stream, 4).unwrap();
    let cfg = LaunchConfig::for_num_elems(4);

    // Missing an argument.
    let _ = module.vecadd(&stream, cfg, &a, &mut c);
    // Wrong element type.
    let _ = module.vecadd(&stream, cfg, &a, &ints, &mut c);
    // An output buffer must be passed as `&mut`.
    let _ = module.vecadd(&stream, cfg, &a, &a, &c);
    // A scalar where the kernel takes f32.
    let _ = module.scale(&stream, cfg, 2u64, &mut c);
}
