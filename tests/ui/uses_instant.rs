//! A kernel that reads the host clock: `std::time::Instant` has no device implementation.
use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
use cuda_device::{DisjointSlice, cuda_module, kernel, thread};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn uses_instant(mut out: DisjointSlice<u32>) {
        let idx = thread::index_1d();
        let t = std::time::Instant::now(); //~ ERROR `std::time::Instant::now` is not available in device code
        if let Some(o) = out.get_mut(idx) {
            *o = t.elapsed().subsec_nanos(); //~ ERROR `std::time::Instant::elapsed` is not available in device code
        }
    }
}

fn main() {
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.default_stream();
    let module = kernels::load(&ctx).unwrap();
    let mut out = DeviceBuffer::<u32>::zeroed(&stream, 256).unwrap();
    module.uses_instant(&stream, LaunchConfig::for_num_elems(256), &mut out).unwrap();
}
