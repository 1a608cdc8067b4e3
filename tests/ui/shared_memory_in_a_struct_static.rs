//! A static whose type holds shared memory without being it (a struct or tuple of tiles) would be
//! one global variable for the whole grid, not shared memory of each block: refused at the static.
use cuda_device::{DisjointSlice, SharedMemory, cuda_module, kernel, sync_threads, thread};

pub struct Tiles {
    pub a: SharedMemory<f32, 128>,
    pub b: SharedMemory<f32, 128>,
}

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn swap(input: &[f32], mut out: DisjointSlice<f32>) {
        static TILES: Tiles = Tiles { a: SharedMemory::UNINIT, b: SharedMemory::UNINIT }; //~ ERROR holds shared memory inside
        let t = thread::threadIdx_x() as usize;
        unsafe { TILES.a.write(t, input[thread::index_1d().get()]) };
        sync_threads();
        if let Some(o) = out.get_mut(thread::index_1d()) {
            *o = unsafe { TILES.a.read(127 - t) };
        }
    }
}

fn main() {
    let _ = kernels::load;
}
