//! `f128` in device code: the GPU has no 128-bit floating point (LLVM would abort on it).
#![feature(f128)]
use cuda_device::{DisjointSlice, cuda_module, kernel, thread};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn quad(a: &[f64], mut out: DisjointSlice<f64>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = out.get_mut(idx) {
            let wide = a[i] as f128 * 3.0; //~ ERROR `f128` is not supported in device code
            *o = wide as f64;
        }
    }
}

fn main() {
    let _ = kernels::load;
}
