//! A kernel calling another kernel: kernels are entry points, launched from the host only.
use cuda_device::{DisjointSlice, cuda_module, kernel, thread};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn fill(mut out: DisjointSlice<u32>) {
        if let Some(o) = out.get_mut(thread::index_1d()) {
            *o = 7;
        }
    }

    #[kernel]
    pub fn fill_twice(out: DisjointSlice<u32>) {
        fill(out); //~ ERROR cannot be called from device code
    }
}

fn main() {
    let _ = kernels::load;
}
