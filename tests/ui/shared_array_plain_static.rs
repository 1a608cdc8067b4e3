//! A `SharedArray` declared `static` without `mut` (the form of this crate's early releases): a
//! plain `static` needs a `Sync` type, and `SharedArray` is not (it is indexed safely). The error
//! shows both declarations that work: `SharedMemory` as a plain `static`, or the `static mut`.
use cuda_device::{DisjointSlice, SharedArray, cuda_module, kernel, sync_threads, thread};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn reverse(input: &[u32], mut out: DisjointSlice<u32>) {
        static TILE: SharedArray<u32, 256> = SharedArray::UNINIT; //~ ERROR is declared `static mut`
        let t = thread::threadIdx_x() as usize;
        unsafe { TILE.write(t, input[thread::index_1d().get()]) };
        sync_threads();
        if let Some(o) = out.get_mut(thread::index_1d()) {
            *o = unsafe { TILE.read(255 - t) };
        }
    }
}

fn main() {
    let _ = kernels::load;
}
