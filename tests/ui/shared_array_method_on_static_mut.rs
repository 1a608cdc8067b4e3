//! A method of a `static mut` `SharedArray` (`TILE.read(i)`) takes a reference to the `static
//! mut`, which edition 2024 refuses (rustc's `static_mut_refs`); rustc's help is to drop the `mut`,
//! which `shared_array_plain_static` then answers with the `SharedMemory` declaration. Indexing
//! (`TILE[i]`) and `&raw mut TILE` compile.
use cuda_device::{DisjointSlice, SharedArray, cuda_module, kernel, sync_threads, thread};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn reverse(input: &[u32], mut out: DisjointSlice<u32>) {
        static mut TILE: SharedArray<u32, 256> = SharedArray::UNINIT;
        let t = thread::threadIdx_x() as usize;
        unsafe { TILE[t] = input[thread::index_1d().get()] };
        let _base = SharedArray::as_raw_mut_ptr(&raw mut TILE);
        sync_threads();
        if let Some(o) = out.get_mut(thread::index_1d()) {
            *o = unsafe { TILE.read(255 - t) }; //~ ERROR creating a shared reference to mutable static
        }
    }
}

fn main() {
    let _ = kernels::load;
}
