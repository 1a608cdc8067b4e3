//! The library of the `gpu-identity` package: its crate has the package's name, like the binary,
//! and kernels of its own that must reach the binary too.
use cuda_device::{DisjointSlice, cuda_module, kernel, thread};

#[cuda_module]
pub mod package_kernels {
    use super::*;

    /// `out[i] = a[i] ^ 0x5a5a_5a5a`.
    #[kernel]
    pub fn op(a: &[u32], mut out: DisjointSlice<u32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = out.get_mut(idx) {
            *o = a[i] ^ 0x5a5a_5a5a;
        }
    }
}
