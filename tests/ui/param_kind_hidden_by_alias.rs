//! `#[kernel]` reads only syntax. A type alias hides a slice or a `DisjointSlice` from it, and a
//! struct of one's own named `DisjointSlice` looks like ours: the launch method would pass a value
//! where the entry point takes a buffer, or the other way round. Each is an error at the parameter.
use cuda_device::{DisjointSlice, cuda_module, kernel, thread};

type Out<'a> = DisjointSlice<'a, f32>;
type Input<'a> = &'a [f32];

mod mine {
    /// Not `cuda_device::DisjointSlice`: an ordinary struct, passed by value.
    #[derive(Clone, Copy)]
    pub struct DisjointSlice<T>(pub T);
}

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn through_alias(a: Input<'_>, mut out: Out<'_>) { //~ ERROR which the kernel ABI passes as `&mut [T]` or `DisjointSlice<T>`
        if let Some(o) = out.get_mut(thread::index_1d()) {
            *o = a[0];
        }
    }

    #[kernel]
    pub fn look_alike(value: mine::DisjointSlice<u32>, out: &mut [u32]) { //~ ERROR but #[kernel] read its type as `&mut [T]` or `DisjointSlice<T>`
        out[0] = value.0;
    }
}

fn main() {
    let _ = kernels::load;
}
