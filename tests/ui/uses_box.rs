//! A kernel that boxes a value: heap allocation has no device implementation.
use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
use cuda_device::{DisjointSlice, cuda_module, kernel, thread};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn uses_box(mut out: DisjointSlice<u32>) {
        let idx = thread::index_1d();
        let b = Box::new(idx.get() as u32); //~ ERROR heap allocation is not supported in device code
        if let Some(o) = out.get_mut(idx) {
            *o = *b;
        }
    }
}

fn main() {
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.default_stream();
    let module = kernels::load(&ctx).unwrap();
    let mut out = DeviceBuffer::<u32>::zeroed(&stream, 256).unwrap();
    module.uses_box(&stream, LaunchConfig::for_num_elems(256), &mut out).unwrap();
}
