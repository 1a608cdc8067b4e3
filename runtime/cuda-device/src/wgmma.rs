//! Warpgroup matrix multiply-accumulate (`wgmma.mma_async`, sm_90a only): the 128 threads of a
//! warpgroup (4 consecutive warps, the first a multiple of 4) compute a 64×N tile of f32
//! `D += A·B` with A (64×16) and B (16×N) read from shared memory through 64-bit
//! [matrix descriptors](descriptor). The call only starts the work: [`fence`] before the first
//! one (and after the accumulators were written by ordinary code), [`commit_group`] after a
//! batch, and [`wait_group`] before the accumulators or the shared tiles are touched again.
//!
//! Accumulator layout ([`Accumulator::coord`]): thread `t` of the warpgroup, warp `w = t / 32`,
//! lane `l`, register `i` holds row `16 w + l / 4 + 8 ((i / 2) % 2)`, column
//! `8 (i / 4) + 2 (l % 4) + i % 2`. `R = N / 2` registers per thread.
//!
//! Shapes: `N` a multiple of 8 from 8 to 256, i.e. `R` a multiple of 4 from 4 to 128 — any other
//! `R` does not compile. The build must target `sm_90a` (`cargo oxide build --arch sm_90a`):
//! `ptxas` rejects `wgmma` for `sm_90`.

use crate::intrinsics;

/// How a tile is swizzled in shared memory (the descriptor's layout type, bits 62–63).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Swizzle {
    /// No swizzle: 8×16-byte core matrices, placed by the leading and stride offsets.
    None = 0,
    /// 128-byte swizzle: rows of 128 bytes in 1024-byte, 1024-aligned atoms of 8 rows (what
    /// TMA's `CU_TENSOR_MAP_SWIZZLE_128B` writes).
    B128 = 1,
    /// 64-byte swizzle.
    B64 = 2,
    /// 32-byte swizzle.
    B32 = 3,
}

/// The shared-memory matrix descriptor of a tile at shared-window address `addr` (see
/// [`crate::shared::cvta_generic_to_shared_offset`]): start address, leading-dimension byte
/// offset, stride-dimension byte offset (each encoded `>> 4` in 14 bits) and swizzle.
pub const fn descriptor(addr: u32, leading_bytes: u32, stride_bytes: u32, swizzle: Swizzle) -> u64 {
    enc(addr) | (enc(leading_bytes) << 16) | (enc(stride_bytes) << 32) | ((swizzle as u64) << 62)
}

/// A byte address or offset as a descriptor field: bits 4..18, 14 bits.
const fn enc(x: u32) -> u64 {
    ((x as u64 & 0x3_FFFF) >> 4) & 0x3FFF
}

/// The descriptor of a K-major 16-bit tile with 64-element (128-byte) rows, 128-byte swizzled
/// as TMA writes it, starting at `tile` (1024-byte aligned) and advanced by `k` elements along
/// K (`k` a multiple of 16, below 64): stride 1024 bytes between 8-row groups.
///
/// # Safety
/// `tile` points into this block's shared memory.
#[inline(always)]
pub unsafe fn descriptor_k_major_128b<T>(tile: *const T, k: u32) -> u64 {
    let addr = unsafe { crate::shared::cvta_generic_to_shared_offset(tile.cast()) } as u32;
    descriptor(addr + k * 2, 16, 1024, Swizzle::B128)
}

/// A warpgroup's 64×N f32 accumulator tile: this thread's `R = N / 2` registers.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Accumulator<const R: usize> {
    /// `d[i]` is element [`Accumulator::coord`]`(thread, i)`.
    pub d: [f32; R],
}

impl<const R: usize> Default for Accumulator<R> {
    fn default() -> Self {
        Self::ZERO
    }
}

const fn check_r(r: usize) {
    assert!(r >= 4 && r <= 128 && r.is_multiple_of(4), "wgmma m64nNk16: N = 2 R must be a multiple of 8 in 8..=256");
}

impl<const R: usize> Accumulator<R> {
    /// All zeros.
    pub const ZERO: Self = Accumulator { d: [0.0; R] };

    /// N, the tile's width.
    pub const N: usize = 2 * R;

    /// `(row, col)` of `d[i]` for thread `t` (0..128) of the warpgroup.
    pub const fn coord(t: u32, i: usize) -> (usize, usize) {
        let (w, l) = ((t / 32) as usize, (t % 32) as usize);
        (16 * w + l / 4 + 8 * ((i / 2) % 2), 8 * (i / 4) + 2 * (l % 4) + i % 2)
    }
}

/// `wgmma.fence.sync.aligned`: orders earlier register writes of the accumulators (and shared
/// memory writes made visible with a barrier) before the next `wgmma.mma_async`.
///
/// # Safety
/// All threads of the warpgroup call it together.
#[inline(always)]
pub unsafe fn fence() {
    intrinsics::wgmma_fence()
}

/// `wgmma.commit_group.sync.aligned`: closes the batch of `mma_async`s started since the last.
///
/// # Safety
/// All threads of the warpgroup call it together.
#[inline(always)]
pub unsafe fn commit_group() {
    intrinsics::wgmma_commit_group()
}

/// `wgmma.wait_group.sync.aligned PENDING`: waits until at most `PENDING` committed batches are
/// in flight; `acc` is tied to the wait so that no read of it is scheduled above it.
///
/// # Safety
/// All threads of the warpgroup call it together.
#[inline(always)]
pub unsafe fn wait_group<const PENDING: u32, const R: usize>(acc: &mut Accumulator<R>) {
    const { check_r(R) };
    intrinsics::wgmma_wait_group::<PENDING, R>(acc.d.as_mut_ptr())
}

/// `wgmma.mma_async.sync.aligned.m64n{2R}k16.f32.bf16.bf16`: `acc = A·B + (scale_d ? acc : 0)`,
/// A K-major (64×16) at `desc_a`, B K-major (N×16, i.e. column-major K×N) at `desc_b`.
///
/// # Safety
/// All threads of the warpgroup call it together, after [`fence`]; the descriptors describe
/// shared memory holding the tiles (written before, made visible to the async proxy), which is
/// not overwritten, and `acc` not read or written, until [`wait_group`] says the batch is done.
#[inline(always)]
pub unsafe fn mma_bf16<const R: usize>(acc: &mut Accumulator<R>, desc_a: u64, desc_b: u64, scale_d: bool) {
    const { check_r(R) };
    intrinsics::wgmma_m64k16_f32::<R, 0, 0>(acc.d.as_mut_ptr(), desc_a, desc_b, scale_d as u32)
}

/// [`mma_bf16`] for f16 inputs (`.f32.f16.f16`).
///
/// # Safety
/// As [`mma_bf16`].
#[inline(always)]
pub unsafe fn mma_f16<const R: usize>(acc: &mut Accumulator<R>, desc_a: u64, desc_b: u64, scale_d: bool) {
    const { check_r(R) };
    intrinsics::wgmma_m64k16_f32::<R, 1, 0>(acc.d.as_mut_ptr(), desc_a, desc_b, scale_d as u32)
}

// --- NVIDIA cuda-oxide's names (docs/compatibility.md) -----------------------------------------

/// The descriptor NVIDIA cuda-oxide's `make_smem_desc` builds for the tile at `ptr`: leading
/// and stride byte offsets 128 and layout type 3, i.e.
/// `((shared_addr >> 4) & 0x3fff) | 0xC000_0008_0008_0000`. Layout type 3 is the 32-byte
/// swizzle ([`Swizzle::B32`]) in the PTX encoding, whatever the name suggests elsewhere; for
/// other layouts build the descriptor with [`descriptor`].
///
/// ```
/// use cuda_device::wgmma::{Swizzle, descriptor};
/// // What `make_smem_desc` returns for a tile at shared-window offset 0x1230:
/// let addr = 0x1230u32;
/// assert_eq!(descriptor(addr, 128, 128, Swizzle::B32), ((addr as u64 >> 4) & 0x3fff) | 0xC000_0008_0008_0000);
/// ```
///
/// # Safety
/// `ptr` points into this block's shared memory.
#[inline(always)]
pub unsafe fn make_smem_desc(ptr: *const u8) -> u64 {
    let addr = unsafe { crate::shared::cvta_generic_to_shared_offset(ptr) } as u32;
    descriptor(addr, 128, 128, Swizzle::B32)
}

/// [`fence`] under NVIDIA cuda-oxide's name.
///
/// # Safety
/// As [`fence`] (NVIDIA's is a safe function; ours states the warpgroup rule).
#[inline(always)]
pub unsafe fn wgmma_fence() {
    intrinsics::wgmma_fence()
}

/// [`commit_group`] under NVIDIA cuda-oxide's name.
///
/// # Safety
/// As [`commit_group`].
#[inline(always)]
pub unsafe fn wgmma_commit_group() {
    intrinsics::wgmma_commit_group()
}

/// `wgmma.wait_group.sync.aligned N` without an accumulator operand (NVIDIA cuda-oxide's
/// form). Prefer [`wait_group`], which ties the accumulator to the wait; here nothing stops the
/// compiler from reading an accumulator register above the wait, so `ptxas` has to order it
/// (it does, serialising the `wgmma` when it must).
///
/// # Safety
/// As [`wait_group`].
#[inline(always)]
pub unsafe fn wgmma_wait_group<const N: u32>() {
    intrinsics::wgmma_wait_group::<N, 0>(core::ptr::null_mut())
}

/// `wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16` accumulating into `acc`
/// (`acc += A·B`; scale-d is 1): [`mma_bf16`] on an [`Accumulator<32>`] in NVIDIA
/// cuda-oxide's form, `acc[i / 8][i % 8]` being register `i` (element
/// [`Accumulator::coord`]`(thread, i)`).
///
/// # Safety
/// As [`mma_bf16`].
#[inline(always)]
pub unsafe fn wgmma_mma_m64n64k16_f32_bf16(acc: &mut [[f32; 8]; 4], desc_a: u64, desc_b: u64) {
    intrinsics::wgmma_m64k16_f32::<32, 0, 0>(acc.as_mut_ptr().cast(), desc_a, desc_b, 1)
}
