//! A library of kernels. `#[cuda_module]` gives `kernels::load` and one typed launch method per
//! kernel; any crate that depends on this one (here: `src/main.rs`) can launch them. A generic
//! kernel is compiled for the type arguments its users launch it with.
use cuda_device::{DisjointSlice, cuda_module, kernel, thread};

/// The runtime this library was built with, for its users.
pub use cuda_core;

#[cuda_module]
pub mod kernels {
    use super::*;

    /// `y[i] = a * x[i] + y[i]`, one thread per element.
    #[kernel]
    pub fn saxpy(a: f32, x: &[f32], mut y: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(y_elem) = y.get_mut(idx) {
            *y_elem = a * x[i] + *y_elem;
        }
    }

    /// `out[i] = x[i] * k` for any numeric `T`.
    #[kernel]
    pub fn scale<T: Copy + core::ops::Mul<Output = T>>(x: &[T], k: T, mut out: DisjointSlice<T>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = out.get_mut(idx) {
            *o = x[i] * k;
        }
    }
}
