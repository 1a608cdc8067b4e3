//! wgmma exists only on the arch-specific sm_90a target: a build for plain sm_90 is an error at
//! the call, not a ptxas failure later.
#![allow(static_mut_refs)]
use cuda_device::{cuda_module, kernel, wgmma};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn product(out: &mut [f32]) {
        let mut acc = wgmma::Accumulator::<32>::ZERO;
        unsafe { wgmma::mma_bf16(&mut acc, 0, 0, false) }; //~ ERROR needs sm_90a
        out[0] = acc.d[0];
    }
}

fn main() {}
