//! `SharedMemory` as a local variable (`let`, or a `const` whose every use is a fresh local): private
//! to each thread, not the block's. The help writes the `static` with this element type, length
//! and alignment.
use cuda_device::{DisjointSlice, SharedMemory, cuda_module, kernel, sync_threads, thread};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn reverse(input: &[f32], mut out: DisjointSlice<f32>) {
        let tile: SharedMemory<f32, 128, 16> = SharedMemory::UNINIT; //~ ERROR must be a `static`
        let t = thread::threadIdx_x() as usize;
        unsafe { tile.write(t, input[thread::index_1d().get()]) };
        sync_threads();
        if let Some(o) = out.get_mut(thread::index_1d()) {
            *o = unsafe { tile.read(127 - t) };
        }
    }
}

fn main() {
    let _ = kernels::load;
}
