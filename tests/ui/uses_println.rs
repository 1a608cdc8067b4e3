//! A kernel that prints with `println!`: the device has no stdout (use `gpu_printf!`).
use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
use cuda_device::{DisjointSlice, cuda_module, kernel, thread};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn uses_println(mut out: DisjointSlice<u32>) {
        let idx = thread::index_1d();
        println!("thread {}", idx.get()); //~ ERROR `std::io::_print` is not available in device code
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
    module.uses_println(&stream, LaunchConfig::for_num_elems(256), &mut out).unwrap();
}
