//! A kernel that formats with `format!`: it allocates a `String`.
use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
use cuda_device::{DisjointSlice, cuda_module, kernel, thread};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn uses_format(mut out: DisjointSlice<u32>) {
        let idx = thread::index_1d();
        let s = format!("thread {}", idx.get()); //~ ERROR heap allocation is not supported in device code
        if let Some(o) = out.get_mut(idx) {
            *o = s.len() as u32;
        }
    }
}

fn main() {
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.default_stream();
    let module = kernels::load(&ctx).unwrap();
    let mut out = DeviceBuffer::<u32>::zeroed(&stream, 256).unwrap();
    module.uses_format(&stream, LaunchConfig::for_num_elems(256), &mut out).unwrap();
}
