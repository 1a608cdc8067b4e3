//! Barriers and memory fences.
//!
//! ```no_run
//! # use cuda_device::{cuda_module, kernel, launch_bounds, sync, thread};
//! #[cuda_module]
//! mod kernels {
//!     use super::*;
//!
//!     /// `flags[b]` = whether every element of block `b` is positive.
//!     #[kernel]
//!     #[launch_bounds(256)]
//!     pub fn all_positive(x: &[f32], flags: &mut [u32]) {
//!         let i = thread::index_1d().get();
//!         let ok = i >= x.len() || x[i] > 0.0;
//!         let all = sync::sync_threads_and(ok); // a barrier that also combines a predicate
//!         let b = thread::blockIdx_x() as usize;
//!         if thread::threadIdx_x() == 0 && b < flags.len() {
//!             flags[b] = all as u32;
//!             sync::fence_device(); // the flag is visible to the whole GPU before what follows
//!         }
//!     }
//! }
//! # fn main() {}
//! ```

use crate::intrinsics;

/// `__syncthreads()`: waits until every thread of the block has reached this point, and makes the
/// block's shared and global writes before it visible to the block after it (`bar.sync 0`).
/// Every thread of the block must reach the same call.
#[inline(always)]
pub fn sync_threads() {
    intrinsics::sync_threads()
}

/// `__syncthreads_count(pred)`: a barrier that returns how many threads of the block passed `true`.
#[inline(always)]
pub fn sync_threads_count(pred: bool) -> u32 {
    intrinsics::sync_threads_count(pred as u32)
}

/// `__syncthreads_and(pred)`: a barrier that returns whether every thread passed `true`.
#[inline(always)]
pub fn sync_threads_and(pred: bool) -> bool {
    intrinsics::sync_threads_and(pred as u32) != 0
}

/// `__syncthreads_or(pred)`: a barrier that returns whether any thread passed `true`.
#[inline(always)]
pub fn sync_threads_or(pred: bool) -> bool {
    intrinsics::sync_threads_or(pred as u32) != 0
}

/// `__syncwarp(mask)`: the lanes in `mask` wait for each other (`bar.warp.sync`).
#[inline(always)]
pub fn sync_warp(mask: u32) {
    intrinsics::sync_warp(mask)
}

/// `__threadfence_block()`: orders this thread's memory accesses as seen by its block.
#[inline(always)]
pub fn fence_block() {
    intrinsics::threadfence_block()
}

/// `__threadfence()`: orders this thread's memory accesses as seen by the whole device.
#[inline(always)]
pub fn fence_device() {
    intrinsics::threadfence()
}

/// `__threadfence_system()`: orders this thread's memory accesses as seen by the device, the
/// host and peer devices.
#[inline(always)]
pub fn fence_system() {
    intrinsics::threadfence_system()
}
