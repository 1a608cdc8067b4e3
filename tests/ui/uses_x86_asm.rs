//! A kernel with x86 inline assembly: the device compiler cannot run another target's `asm!`.
use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
use cuda_device::{DisjointSlice, cuda_module, kernel, thread};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn uses_x86_asm(mut out: DisjointSlice<u32>) {
        let idx = thread::index_1d();
        let mut x: u64 = idx.get() as u64;
        unsafe { core::arch::asm!("add {0}, 1", inout(reg) x) }; //~ ERROR inline `asm!` is not supported in device code
        if let Some(o) = out.get_mut(idx) {
            *o = x as u32;
        }
    }
}

fn main() {
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.default_stream();
    let module = kernels::load(&ctx).unwrap();
    let mut out = DeviceBuffer::<u32>::zeroed(&stream, 256).unwrap();
    module.uses_x86_asm(&stream, LaunchConfig::for_num_elems(256), &mut out).unwrap();
}
