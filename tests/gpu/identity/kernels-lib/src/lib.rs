//! Kernels of a library crate: `op` (a name the binary's modules use too) and a generic `map`,
//! whose instances the crates that call `kernels::Module::map` compile.
use cuda_device::{DisjointSlice, cuda_module, kernel, thread};

#[cuda_module]
pub mod kernels {
    use super::*;

    /// `out[i] = a[i] - 7`.
    #[kernel]
    pub fn op(a: &[u32], mut out: DisjointSlice<u32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = out.get_mut(idx) {
            *o = a[i].wrapping_sub(7);
        }
    }

    /// `out[i] = f(a[i])`.
    #[kernel]
    pub fn map<T: Copy, F: Fn(T) -> T>(f: F, a: &[T], mut out: DisjointSlice<T>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = out.get_mut(idx) {
            *o = f(a[i]);
        }
    }
}
