//! Thread and block indices: raw registers and the index values that `DisjointSlice` accepts.
#![allow(non_snake_case)]

use crate::intrinsics;

pub use crate::intrinsics::{
    blockDim_x, blockDim_y, blockDim_z, blockIdx_x, blockIdx_y, blockIdx_z, gridDim_x, gridDim_y,
    gridDim_z, threadIdx_x, threadIdx_y, threadIdx_z,
};

/// This thread's global index in a 1D launch. Only [`index_1d`] makes one, so two threads of one
/// launch never hold equal values: that is what lets [`crate::DisjointSlice::get_mut`] hand out
/// `&mut` without a data race.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadIndex(usize);

impl ThreadIndex {
    /// The index as a plain number, for reading other slices.
    #[inline(always)]
    pub fn get(self) -> usize {
        self.0
    }
}

/// `blockIdx.x * blockDim.x + threadIdx.x`, computed in 64 bits.
#[inline(always)]
pub fn index_1d() -> ThreadIndex {
    let block = intrinsics::blockIdx_x() as usize;
    let dim = intrinsics::blockDim_x() as usize;
    let thread = intrinsics::threadIdx_x() as usize;
    ThreadIndex(block * dim + thread)
}

/// Lane of this thread within its warp (0..32).
#[inline(always)]
pub fn lane_id() -> u32 {
    intrinsics::laneid()
}
