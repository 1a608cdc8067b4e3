//! `SharedArray` as a local variable: it would be private to each thread (local memory), so threads
//! would read each other's uninitialised data. It must be a `static`; the help writes the `static`
//! with the element type and length used here.
use cuda_device::{DisjointSlice, SharedArray, cuda_module, kernel, sync_threads, thread};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn reverse(input: &[u32], mut out: DisjointSlice<u32>) {
        let tile = SharedArray::<u32, 256>::new(); //~ ERROR must be a `static`
        let t = thread::threadIdx_x() as usize;
        unsafe { tile.write(t, input[thread::index_1d().get()]) };
        sync_threads();
        if let Some(o) = out.get_mut(thread::index_1d()) {
            *o = unsafe { tile.read(255 - t) };
        }
    }
}

fn main() {
    let _ = kernels::load;
}
