//! A kernel that reaches `core` code written with SIMD intrinsics (`[u8]::is_ascii` on x86_64).
use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
use cuda_device::{DisjointSlice, cuda_module, kernel, thread};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn uses_simd_in_core(mut out: DisjointSlice<u32>) {
        let idx = thread::index_1d();
        let bytes = [(idx.get() % 200) as u8; 32];
        let ascii = bytes.is_ascii(); //~ ERROR not supported in device code yet
        if let Some(o) = out.get_mut(idx) {
            *o = ascii as u32;
        }
    }
}

fn main() {
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.default_stream();
    let module = kernels::load(&ctx).unwrap();
    let mut out = DeviceBuffer::<u32>::zeroed(&stream, 256).unwrap();
    module.uses_simd_in_core(&stream, LaunchConfig::for_num_elems(256), &mut out).unwrap();
}
