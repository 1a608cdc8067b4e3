//! A kernel that sleeps the host thread: `std::thread` has no device implementation.
use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
use cuda_device::{DisjointSlice, cuda_module, kernel, thread};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn uses_sleep(mut out: DisjointSlice<u32>) {
        let idx = thread::index_1d();
        std::thread::sleep(std::time::Duration::from_nanos(10)); //~ ERROR `std::thread::sleep` is not available in device code
        if let Some(o) = out.get_mut(idx) {
            *o = 1;
        }
    }
}

fn main() {
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.default_stream();
    let module = kernels::load(&ctx).unwrap();
    let mut out = DeviceBuffer::<u32>::zeroed(&stream, 256).unwrap();
    module.uses_sleep(&stream, LaunchConfig::for_num_elems(256), &mut out).unwrap();
}
