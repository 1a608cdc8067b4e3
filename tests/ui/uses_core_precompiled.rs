//! A kernel that calls a `core` function that is precompiled without MIR (`str::from_utf8`).
use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
use cuda_device::{DisjointSlice, cuda_module, kernel, thread};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn uses_core_precompiled(mut out: DisjointSlice<u32>) {
        let idx = thread::index_1d();
        let bytes = [b'0' + (idx.get() % 10) as u8];
        let ok = core::str::from_utf8(&bytes).is_ok(); //~ ERROR `core` ships `std::str::from_utf8` precompiled
        if let Some(o) = out.get_mut(idx) {
            *o = ok as u32;
        }
    }
}

fn main() {
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.default_stream();
    let module = kernels::load(&ctx).unwrap();
    let mut out = DeviceBuffer::<u32>::zeroed(&stream, 256).unwrap();
    module.uses_core_precompiled(&stream, LaunchConfig::for_num_elems(256), &mut out).unwrap();
}
