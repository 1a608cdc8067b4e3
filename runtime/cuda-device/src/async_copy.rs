//! Asynchronous copies from global to shared memory (`cp.async`, sm_80): a thread starts copies
//! of 4, 8 or 16 bytes, groups them with [`cp_async_commit_group`], and waits for all but the
//! newest `N` groups with [`wait_group`] — so the next tile loads while this one is computed on
//! (software pipelining). Copies of a group are visible to the issuing thread after the wait;
//! other threads of the block see them after the wait and a `sync_threads()`.
//!
//! The function names follow NVIDIA's cuda-oxide (`cp_async_ca_16`, `cp_async_commit_group`, …).
//!
//! ```no_run
//! # use cuda_device::{SharedMemory, async_copy, cuda_module, kernel, launch_bounds, sync_threads, thread, vector::F32x4};
//! #[cuda_module]
//! mod kernels {
//!     use super::*;
//!
//!     /// Stages 16 bytes per thread in shared memory with `cp.async`, then reads a neighbour's.
//!     #[kernel]
//!     #[launch_bounds(256)]
//!     pub fn staged(src: &[F32x4], out: &mut [F32x4]) {
//!         static TILE: SharedMemory<F32x4, 256> = SharedMemory::UNINIT;
//!         let t = thread::threadIdx_x() as usize;
//!         let g = thread::index_1d().get();
//!         if g < src.len() {
//!             let dst = TILE.element_ptr(t).cast::<u32>();
//!             // SAFETY: `dst` is this thread's slot of the tile, `src[g]` exists.
//!             unsafe { async_copy::cp_async_cg_16(dst, src.as_ptr().wrapping_add(g).cast()) };
//!         }
//!         async_copy::cp_async_commit_group();
//!         async_copy::wait_group::<0>(); // this thread's copies have landed
//!         sync_threads(); // and every other thread's
//!         if g < out.len() && g < src.len() {
//!             out[g] = unsafe { TILE.read(255 - t) };
//!         }
//!     }
//! }
//! # fn main() {}
//! ```

use crate::barrier::Barrier;
use crate::intrinsics;

/// Copies 4 bytes from global `src` to shared `dst`, cached in L1 (`cp.async.ca … 4`).
///
/// # Safety
/// `dst` points into this block's shared memory and `src` into global memory, both 4-byte
/// aligned and valid for 4 bytes; nothing reads `dst` before the copy's group is waited for.
#[inline(always)]
pub unsafe fn cp_async_ca_4(dst: *mut u32, src: *const u32) {
    intrinsics::cp_async_ca_4(dst.cast(), src.cast())
}

/// 8 bytes, cached in L1 (`cp.async.ca … 8`).
///
/// # Safety
/// As [`cp_async_ca_4`], for 8 bytes with 8-byte alignment.
#[inline(always)]
pub unsafe fn cp_async_ca_8(dst: *mut u32, src: *const u32) {
    intrinsics::cp_async_ca_8(dst.cast(), src.cast())
}

/// 16 bytes, cached in L1 (`cp.async.ca … 16`).
///
/// # Safety
/// As [`cp_async_ca_4`], for 16 bytes with 16-byte alignment.
#[inline(always)]
pub unsafe fn cp_async_ca_16(dst: *mut u32, src: *const u32) {
    intrinsics::cp_async_ca_16(dst.cast(), src.cast())
}

/// 16 bytes, bypassing L1 (`cp.async.cg … 16`): for data read once per block.
///
/// # Safety
/// As [`cp_async_ca_16`].
#[inline(always)]
pub unsafe fn cp_async_cg_16(dst: *mut u32, src: *const u32) {
    intrinsics::cp_async_cg_16(dst.cast(), src.cast())
}

/// 4 bytes of which the first `src_size` come from `src`; the rest of `dst` becomes zero.
///
/// # Safety
/// As [`cp_async_ca_4`]; `src` is valid for `src_size` (≤ 4) bytes.
#[inline(always)]
pub unsafe fn cp_async_ca_zfill_4(dst: *mut u32, src: *const u8, src_size: u32) {
    intrinsics::cp_async_ca_zfill_4(dst.cast(), src, src_size)
}

/// 8 bytes, the first `src_size` from `src`, the rest zero.
///
/// # Safety
/// As [`cp_async_ca_8`]; `src` is valid for `src_size` (≤ 8) bytes.
#[inline(always)]
pub unsafe fn cp_async_ca_zfill_8(dst: *mut u32, src: *const u8, src_size: u32) {
    intrinsics::cp_async_ca_zfill_8(dst.cast(), src, src_size)
}

/// 16 bytes, the first `src_size` from `src`, the rest zero (cached in L1).
///
/// # Safety
/// As [`cp_async_ca_16`]; `src` is valid for `src_size` (≤ 16) bytes.
#[inline(always)]
pub unsafe fn cp_async_ca_zfill_16(dst: *mut u32, src: *const u8, src_size: u32) {
    intrinsics::cp_async_ca_zfill_16(dst.cast(), src, src_size)
}

/// 16 bytes, the first `src_size` from `src`, the rest zero (bypassing L1).
///
/// # Safety
/// As [`cp_async_ca_16`]; `src` is valid for `src_size` (≤ 16) bytes.
#[inline(always)]
pub unsafe fn cp_async_cg_zfill_16(dst: *mut u32, src: *const u8, src_size: u32) {
    intrinsics::cp_async_cg_zfill_16(dst.cast(), src, src_size)
}

/// Closes the group of copies this thread started since the last commit (`cp.async.commit_group`).
#[inline(always)]
pub fn cp_async_commit_group() {
    intrinsics::cp_async_commit_group()
}

/// Waits until at most `max_pending` of this thread's committed groups are still in flight
/// (`cp.async.wait_group`; the count must be a constant after inlining, at most 7).
#[inline(always)]
pub fn cp_async_wait_group(max_pending: u32) {
    intrinsics::cp_async_wait_group(max_pending)
}

/// [`cp_async_wait_group`] with the count as a const parameter.
#[inline(always)]
pub fn wait_group<const N: u32>() {
    intrinsics::cp_async_wait_group(N)
}

/// Waits for every copy this thread started (`cp.async.wait_all`).
#[inline(always)]
pub fn cp_async_wait_all() {
    intrinsics::cp_async_wait_all()
}

/// `cp.async.mbarrier.arrive`: one arrival on `barrier` when every `cp.async` this thread
/// started before it has completed (sm_80). The barrier's pending count is raised first, so the
/// count given to `mbarrier_init` does not include this arrival: a thread that also arrives
/// itself completes the phase only once its copies have landed.
///
/// ```ignore
/// mbarrier_init(&raw mut BAR, 1);
/// cp_async_ca_4(dst, src);
/// cp_async_mbarrier_arrive(&raw mut BAR);
/// let token = mbarrier_arrive(&raw const BAR); // completes once the copy is done
/// mbarrier_wait(&raw const BAR, token);
/// ```
///
/// # Safety
/// `barrier` is an initialised [`Barrier`] of this block.
#[inline(always)]
pub unsafe fn cp_async_mbarrier_arrive(barrier: *mut Barrier) {
    intrinsics::cp_async_mbarrier_arrive(barrier.cast())
}

/// `cp.async.mbarrier.arrive.noinc`: as [`cp_async_mbarrier_arrive`], but the arrival counts
/// towards the count given to `mbarrier_init` (a thread that also arrives itself needs 2).
///
/// # Safety
/// As [`cp_async_mbarrier_arrive`].
#[inline(always)]
pub unsafe fn cp_async_mbarrier_arrive_noinc(barrier: *mut Barrier) {
    intrinsics::cp_async_mbarrier_arrive_noinc(barrier.cast())
}

/// [`cp_async_mbarrier_arrive`] with the barrier's `.shared::cta` address spelled out; a
/// [`Barrier`] is always in shared memory, so this is the same instruction (NVIDIA's crate has
/// both names).
///
/// # Safety
/// As [`cp_async_mbarrier_arrive`].
#[inline(always)]
pub unsafe fn cp_async_mbarrier_arrive_shared(barrier: *mut Barrier) {
    intrinsics::cp_async_mbarrier_arrive(barrier.cast())
}

/// [`cp_async_mbarrier_arrive_noinc`] with the `.shared::cta` address spelled out (the same
/// instruction, see [`cp_async_mbarrier_arrive_shared`]).
///
/// # Safety
/// As [`cp_async_mbarrier_arrive`].
#[inline(always)]
pub unsafe fn cp_async_mbarrier_arrive_noinc_shared(barrier: *mut Barrier) {
    intrinsics::cp_async_mbarrier_arrive_noinc(barrier.cast())
}
