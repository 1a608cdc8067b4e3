//! `#[constant]` (NVIDIA cuda-oxide's marker) on a `static mut`, which kernels could write, and
//! on a static that is not `ConstantMemory<T>`, which would not be in constant memory at all.
use cuda_device::{ConstantMemory, DisjointSlice, constant, cuda_module, kernel, thread};

#[cuda_module]
mod kernels {
    use super::*;

    #[constant]
    static mut SCALE: ConstantMemory<f32> = ConstantMemory::UNINIT; //~ ERROR declare it without `mut`

    #[kernel]
    pub fn scale(mut out: DisjointSlice<f32>) {
        if let Some(o) = out.get_mut(thread::index_1d()) {
            *o = 1.0;
        }
    }
}

#[constant]
static OFFSET: f32 = 0.5; //~ ERROR is not constant memory

fn main() {
    let _ = kernels::load;
    let _ = OFFSET;
}
