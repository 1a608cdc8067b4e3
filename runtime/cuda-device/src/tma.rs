//! Tensor memory accelerator (sm_90): whole 2D tiles copied between global and shared memory by
//! one thread, described by a [`TensorMap`] that the host encodes (`cuda_core::tma::TensorMap::tiled_2d`, through
//! `cuTensorMapEncodeTiled`). Loads complete on an [`MBarrier`] (as transaction bytes:
//! [`MBarrier::arrive_expect_tx`] first); stores are grouped with [`commit_group`].
//!
//! The map reaches the kernel in global memory: the host copies it into a device buffer and the
//! kernel takes `&[TensorMap]` (a map in global memory is as valid for TMA as one in a
//! `__grid_constant__` parameter, and needs no special parameter ABI).

use crate::barrier::Barrier;
use crate::intrinsics;
use crate::mbarrier::MBarrier;

pub use cuda_core::tma::TensorMap;

/// Starts loading the tile at element coordinates (`x` innermost, `y`) of `map` into `dst`,
/// counting its bytes on `bar` (`cp.async.bulk.tensor.2d…mbarrier::complete_tx::bytes`).
///
/// # Safety
/// `map` points to a valid tensor map in global (or parameter) memory; `dst` is this block's
/// shared memory, aligned as the map's swizzle needs (128 bytes; 1024 for 128-byte swizzle), with
/// room for the box; nothing reads `dst` before `bar`'s phase completes, and the phase expects
/// these bytes.
#[inline(always)]
pub unsafe fn load_2d(dst: *mut u8, map: *const TensorMap, x: i32, y: i32, bar: MBarrier) {
    intrinsics::cp_async_bulk_tensor_2d_g2s(dst, map.cast(), x, y, bar.as_ptr())
}

/// Starts storing the shared tile `src` to the box at (`x`, `y`) of `map`
/// (`cp.async.bulk.tensor.2d.global.shared::cta.bulk_group`); out-of-bounds parts are dropped.
///
/// # Safety
/// As [`load_2d`]; `src`'s writes were made visible to the async proxy
/// ([`crate::mbarrier::fence_proxy_async`]), and `src` is not overwritten before
/// [`wait_group_read`].
#[inline(always)]
pub unsafe fn store_2d(map: *const TensorMap, x: i32, y: i32, src: *const u8) {
    intrinsics::cp_async_bulk_tensor_2d_s2g(map.cast(), x, y, src)
}

/// `cp.async.bulk.commit_group`: closes this thread's batch of bulk stores.
#[inline(always)]
pub fn commit_group() {
    intrinsics::cp_async_bulk_commit_group()
}

/// `cp.async.bulk.wait_group.read 0`: the shared sources of every committed store were read.
#[inline(always)]
pub fn wait_group_read() {
    intrinsics::cp_async_bulk_wait_group_read0()
}

/// `cp.async.bulk.wait_group 0`: every committed store is complete.
#[inline(always)]
pub fn wait_group() {
    intrinsics::cp_async_bulk_wait_group0()
}

/// `prefetch.tensormap`: brings the map into the cache ahead of the first copy.
///
/// # Safety
/// `map` points to a tensor map.
#[inline(always)]
pub unsafe fn prefetch(map: *const TensorMap) {
    intrinsics::prefetch_tensormap(map.cast())
}

/// NVIDIA cuda-oxide's name for a tensor map: the same 128-byte, 64-byte aligned
/// `CUtensorMap` as [`TensorMap`].
pub type TmaDescriptor = TensorMap;

/// NVIDIA cuda-oxide's spelling of [`load_2d`]: starts loading the tile at (`coord0` innermost,
/// `coord1`) of `tensor_map` into `dst`, its bytes counted on `barrier`.
///
/// # Safety
/// As [`load_2d`]; `barrier` is an initialised [`Barrier`] of this block.
#[inline(always)]
pub unsafe fn cp_async_bulk_tensor_2d_g2s(
    dst: *mut u8,
    tensor_map: *const TmaDescriptor,
    coord0: i32,
    coord1: i32,
    barrier: *mut Barrier,
) {
    intrinsics::cp_async_bulk_tensor_2d_g2s(dst, tensor_map.cast(), coord0, coord1, barrier.cast())
}
