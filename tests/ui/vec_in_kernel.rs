//! A kernel that allocates: heap allocation has no device implementation.
use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
use cuda_device::{DisjointSlice, cuda_module, kernel, thread};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn uses_vec(mut out: DisjointSlice<u32>) {
        let v = vec![1u32]; //~ ERROR not supported
        let idx = thread::index_1d();
        if let Some(o) = out.get_mut(idx) {
            *o = v[0];
        }
    }
}

fn main() {
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.default_stream();
    let module = kernels::load(&ctx).unwrap();
    let mut out = DeviceBuffer::<u32>::zeroed(&stream, 256).unwrap();
    module.uses_vec(&stream, LaunchConfig::for_num_elems(256), &mut out).unwrap();
}
