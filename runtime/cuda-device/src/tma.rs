//! Tensor memory accelerator (sm_90): whole 2D/3D tiles copied between global and shared memory
//! by one thread, described by a [`TensorMap`] that the host encodes
//! (`cuda_core::tma::TensorMap::tiled_2d` / `tiled_3d`, through `cuTensorMapEncodeTiled`). Loads
//! complete on an [`MBarrier`] (as transaction bytes: [`MBarrier::arrive_expect_tx`] first), and
//! can be multicast to several blocks of a cluster ([`load_2d_multicast`]); stores are grouped
//! with [`commit_group`]. [`bulk_load`] is the same engine without a map: contiguous bytes
//! into shared memory, counted on an mbarrier.
//!
//! The map reaches the kernel in one of two ways, both valid for TMA:
//! - by value, `fn k(map: TensorMap, ..)`: a 64-byte aligned 128-byte `.param` that the kernel
//!   reads in place (CUDA's `const __grid_constant__ CUtensorMap`); pass `&map`. Such a parameter
//!   cannot be `mut` (parameter memory is read-only).
//! - in global memory: the host copies it into a `DeviceBuffer<TensorMap>` and the kernel takes
//!   `&[TensorMap]`; pass `maps.as_ptr()`.

use crate::barrier::Barrier;
use crate::intrinsics;
use crate::mbarrier::MBarrier;

pub use cuda_core::tma::{TensorMap, TmaSwizzle};

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

/// Starts loading the 3D box at (`x` innermost, `y`, `z`) of `map` into `dst`, its bytes counted
/// on `bar` (`cp.async.bulk.tensor.3d…mbarrier::complete_tx::bytes`). The box lands as
/// `z`-slices of `y` rows of `x` elements, one after the other.
///
/// # Safety
/// As [`load_2d`], for a map of rank 3.
#[inline(always)]
pub unsafe fn load_3d(dst: *mut u8, map: *const TensorMap, x: i32, y: i32, z: i32, bar: MBarrier) {
    intrinsics::cp_async_bulk_tensor_3d_g2s(dst, map.cast(), x, y, z, bar.as_ptr())
}

/// Starts storing the shared 3D box `src` to (`x`, `y`, `z`) of `map`
/// (`cp.async.bulk.tensor.3d.global.shared::cta.bulk_group`); out-of-bounds parts are dropped.
///
/// # Safety
/// As [`store_2d`], for a map of rank 3.
#[inline(always)]
pub unsafe fn store_3d(map: *const TensorMap, x: i32, y: i32, z: i32, src: *const u8) {
    intrinsics::cp_async_bulk_tensor_3d_s2g(map.cast(), x, y, z, src)
}

/// Starts loading the tile at (`x`, `y`) of `map` into every block of this cluster whose rank
/// bit is set in `cta_mask` (`….multicast::cluster`): the tile lands at `dst`'s offset in each
/// of their shared memories, and its bytes are counted on the mbarrier at `bar`'s offset in each.
///
/// # Safety
/// As [`load_2d`], and for every block in `cta_mask`: the kernel runs in clusters that hold
/// it, its barrier at `bar`'s offset was initialised (and the initialisation made visible to
/// the cluster: [`crate::mbarrier::fence_init`] then [`crate::cluster::sync`]) before this
/// call, its phase expects these bytes, and it does not exit before the phase completes.
#[inline(always)]
pub unsafe fn load_2d_multicast(dst: *mut u8, map: *const TensorMap, x: i32, y: i32, bar: MBarrier, cta_mask: u16) {
    intrinsics::cp_async_bulk_tensor_2d_g2s_multicast(dst, map.cast(), x, y, bar.as_ptr(), cta_mask)
}

/// [`load_2d_multicast`] for a 3D box.
///
/// # Safety
/// As [`load_2d_multicast`], for a map of rank 3.
#[inline(always)]
pub unsafe fn load_3d_multicast(
    dst: *mut u8,
    map: *const TensorMap,
    x: i32,
    y: i32,
    z: i32,
    bar: MBarrier,
    cta_mask: u16,
) {
    intrinsics::cp_async_bulk_tensor_3d_g2s_multicast(dst, map.cast(), x, y, z, bar.as_ptr(), cta_mask)
}

/// Starts copying the elements of `src` (global memory, contiguous) to `dst` in this block's
/// shared memory with one bulk copy (`cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes`,
/// sm_90): TMA without a tensor map. Its `size_of_val(src)` bytes are counted on `bar`, whose
/// current phase must expect them ([`MBarrier::arrive_expect_tx`]); they are visible to a
/// thread once it has seen that phase complete.
///
/// Traps when `src`'s or `dst`'s address, or the size, is not a multiple of 16 bytes (the
/// hardware's rule; it would fault otherwise).
///
/// ```ignore
/// if thread::threadIdx_x() == 0 {
///     bar.arrive_expect_tx(1024);
///     unsafe { tma::bulk_load(TILE.as_mut_ptr(), &x[base..base + 256], bar) }; // 256 f32
/// }
/// Phase::new(bar).wait();
/// ```
///
/// # Safety
/// `dst` points into this block's shared memory with room for `src.len()` elements; nothing
/// reads or writes them until `bar`'s phase completes, and that phase expects these bytes.
#[inline(always)]
pub unsafe fn bulk_load<T: Copy>(dst: *mut T, src: &[T], bar: MBarrier) {
    let bytes = core::mem::size_of_val(src);
    if !(src.as_ptr() as usize | dst as usize | bytes).is_multiple_of(16) || bytes > u32::MAX as usize {
        crate::trap()
    }
    intrinsics::cp_async_bulk_g2s(dst.cast(), src.as_ptr().cast(), bytes as u32, bar.as_ptr())
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

/// NVIDIA cuda-oxide's spelling of [`store_2d`] (source first).
///
/// # Safety
/// As [`store_2d`].
#[inline(always)]
pub unsafe fn cp_async_bulk_tensor_2d_s2g(src: *const u8, tensor_map: *const TmaDescriptor, coord0: i32, coord1: i32) {
    intrinsics::cp_async_bulk_tensor_2d_s2g(tensor_map.cast(), coord0, coord1, src)
}

/// NVIDIA cuda-oxide's spelling of [`load_3d`].
///
/// # Safety
/// As [`load_3d`]; `barrier` is an initialised [`Barrier`] of this block.
#[inline(always)]
pub unsafe fn cp_async_bulk_tensor_3d_g2s(
    dst: *mut u8,
    tensor_map: *const TmaDescriptor,
    coord0: i32,
    coord1: i32,
    coord2: i32,
    barrier: *mut Barrier,
) {
    intrinsics::cp_async_bulk_tensor_3d_g2s(dst, tensor_map.cast(), coord0, coord1, coord2, barrier.cast())
}

/// NVIDIA cuda-oxide's spelling of [`store_3d`] (source first).
///
/// # Safety
/// As [`store_3d`].
#[inline(always)]
pub unsafe fn cp_async_bulk_tensor_3d_s2g(
    src: *const u8,
    tensor_map: *const TmaDescriptor,
    coord0: i32,
    coord1: i32,
    coord2: i32,
) {
    intrinsics::cp_async_bulk_tensor_3d_s2g(tensor_map.cast(), coord0, coord1, coord2, src)
}

/// NVIDIA cuda-oxide's spelling of [`load_2d_multicast`].
///
/// # Safety
/// As [`load_2d_multicast`]; `barrier` is an initialised [`Barrier`] of this block.
#[inline(always)]
pub unsafe fn cp_async_bulk_tensor_2d_g2s_multicast(
    dst: *mut u8,
    tensor_map: *const TmaDescriptor,
    coord0: i32,
    coord1: i32,
    barrier: *mut Barrier,
    cta_mask: u16,
) {
    intrinsics::cp_async_bulk_tensor_2d_g2s_multicast(dst, tensor_map.cast(), coord0, coord1, barrier.cast(), cta_mask)
}
