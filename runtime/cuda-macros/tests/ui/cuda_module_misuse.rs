//! #[cuda_module] on a non-module, and the errors of the kernels inside one.
#![allow(unused_imports)]

use cuda_device::{cooperative_launch, cuda_module, kernel, launch_bounds, DisjointSlice};

#[cuda_module]
fn not_a_module() {}

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    #[launch_bounds(4096)]
    pub fn too_wide(mut out: DisjointSlice<u32>) {
        let _ = &mut out;
    }

    #[kernel]
    pub fn returns(x: u32) -> u32 {
        x
    }

    #[launch_bounds(64)]
    pub fn helper() {}

    #[kernel]
    #[cooperative_launch(1)]
    pub fn cooperative_with_args() {}

    #[cooperative_launch]
    pub fn cooperative_helper() {}
}

fn main() {}
