//! A kernel that uses a `thread_local!`: host thread-locals do not exist on the device.
use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
use cuda_device::{DisjointSlice, cuda_module, kernel, thread};
use std::cell::Cell;

thread_local! {
    static COUNTER: Cell<u32> = const { Cell::new(0) };
}

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn uses_thread_local(mut out: DisjointSlice<u32>) {
        let idx = thread::index_1d();
        let v = COUNTER.with(|c| { //~ ERROR thread-local `COUNTER` is not supported in device code
            c.set(c.get() + 1);
            c.get()
        });
        if let Some(o) = out.get_mut(idx) {
            *o = v;
        }
    }
}

fn main() {
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.default_stream();
    let module = kernels::load(&ctx).unwrap();
    let mut out = DeviceBuffer::<u32>::zeroed(&stream, 256).unwrap();
    module.uses_thread_local(&stream, LaunchConfig::for_num_elems(256), &mut out).unwrap();
}
