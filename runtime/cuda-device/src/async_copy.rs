//! Asynchronous copies from global to shared memory (`cp.async`, sm_80): a thread starts copies
//! of 4, 8 or 16 bytes, groups them with [`cp_async_commit_group`], and waits for all but the
//! newest `N` groups with [`wait_group`] — so the next tile loads while this one is computed on
//! (software pipelining). Copies of a group are visible to the issuing thread after the wait;
//! other threads of the block see them after the wait and a `sync_threads()`.
//!
//! The function names follow NVIDIA's cuda-oxide (`cp_async_ca_16`, `cp_async_commit_group`, …).
//!
//! ```ignore
//! // Double buffering: tile t + 1 is in flight while tile t is used.
//! unsafe { async_copy::cp_async_cg_16(dst_next, src_next) };
//! async_copy::cp_async_commit_group();
//! async_copy::wait_group::<1>(); // all but the newest group have landed
//! sync_threads();
//! ```

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
