//! [`Operand<E, MN, K, L>`]: an `MN × K` operand of `wgmma` (A with `MN` = M, or B with `MN` = N)
//! in shared memory, stored the way its matrix is in global memory — [`KMajor`] (K contiguous:
//! A row-major, B column-major) or [`MnMajor`] (M or N contiguous: A column-major, B row-major)
//! — so that one GEMM body serves every layout cuBLAS takes. The layout picks the
//! [`SmemTile`] shape, the TMA box and the descriptor; `wgmma` transposes MN-major 16-bit operands
//! itself ([`KMajorMma::mma_major`]).
//!
//! ```ignore
//! type A<L> = Operand<bf16, 128, 64, L>;           // 128 rows of M × 64 of K, 16 KiB
//! let a = unsafe { A::<MnMajor>::from_ptr(smem) };
//! unsafe { a.load(&a_map, row0, k0, full) };       // the map's box: A::<MnMajor>::tma_box()
//! let desc = a.part::<64>(1).descriptor(16);       // M 64..128, K 16..32
//! unsafe { operand::mma(&mut acc, a.part::<64>(1), b, 16, true) }  // that slice times B's
//! ```

use core::marker::PhantomData;
use core::mem::size_of;

use crate::mbarrier::MBarrier;
use crate::tile::{KMajorMma, SmemTile};
use crate::tma::TensorMap;
use crate::wgmma::Accumulator;

/// How an operand is stored: [`KMajor`] or [`MnMajor`]. Each does the layout-specific steps of
/// [`Operand`] (so that an fp8 body never mentions the MN-major forms fp8 lacks).
pub trait Major: Copy {
    #[doc(hidden)]
    fn box_of<E, const MN: usize, const K: usize>() -> (u32, u32);
    // The unsafe ones take an `Operand`'s address: `Operand::from_ptr`'s contract holds for it.
    #[doc(hidden)]
    unsafe fn part<E, const MN: usize, const K: usize, const SUB: usize>(ptr: *mut u8, i: usize) -> *mut u8;
    #[doc(hidden)]
    unsafe fn descriptor<E, const MN: usize, const K: usize>(ptr: *mut u8, k: usize) -> u64;
    #[doc(hidden)]
    unsafe fn load<E, const MN: usize, const K: usize>(ptr: *mut u8, map: &TensorMap, mn: i32, k: i32, bar: MBarrier);
    // The `wgmma` of A stored as `Self` and B as `LB`, by double dispatch, so that only the
    // form in use is instantiated (fp8 bodies never mention a transposed one).
    #[doc(hidden)]
    unsafe fn mma_as_a<E: KMajorMma, const R: usize, LB: Major>(
        acc: &mut Accumulator<R>,
        a: u64,
        b: u64,
        scale_d: bool,
    );
    #[doc(hidden)]
    unsafe fn mma_as_b<E: KMajorMma, const R: usize, const A_MN: bool>(
        acc: &mut Accumulator<R>,
        a: u64,
        b: u64,
        scale_d: bool,
    );
    #[doc(hidden)]
    unsafe fn load_multicast<E, const MN: usize, const K: usize>(
        ptr: *mut u8,
        map: &TensorMap,
        mn: i32,
        k: i32,
        bar: MBarrier,
        cta_mask: u16,
    );
}

/// K contiguous: the tile is a `SmemTile<E, MN, K>` (A row-major, B column-major).
#[derive(Clone, Copy, Debug)]
pub struct KMajor;

/// M or N contiguous: the tile is a `SmemTile<E, K, MN>` (A column-major, B row-major); 16-bit
/// elements only where it feeds `wgmma`.
#[derive(Clone, Copy, Debug)]
pub struct MnMajor;

impl Major for KMajor {
    #[inline(always)]
    unsafe fn mma_as_a<E: KMajorMma, const R: usize, LB: Major>(
        acc: &mut Accumulator<R>,
        a: u64,
        b: u64,
        scale_d: bool,
    ) {
        unsafe { LB::mma_as_b::<E, R, false>(acc, a, b, scale_d) }
    }
    #[inline(always)]
    unsafe fn mma_as_b<E: KMajorMma, const R: usize, const A_MN: bool>(
        acc: &mut Accumulator<R>,
        a: u64,
        b: u64,
        scale_d: bool,
    ) {
        unsafe { E::mma_major::<R, A_MN, false>(acc, a, b, scale_d) }
    }
    fn box_of<E, const MN: usize, const K: usize>() -> (u32, u32) {
        (SmemTile::<E, MN, K>::BOX_COLS, SmemTile::<E, MN, K>::BOX_ROWS)
    }
    #[inline(always)]
    unsafe fn part<E, const MN: usize, const K: usize, const SUB: usize>(ptr: *mut u8, i: usize) -> *mut u8 {
        unsafe { SmemTile::<E, MN, K>::from_ptr(ptr) }.rows::<SUB>(i).as_ptr().cast()
    }
    #[inline(always)]
    unsafe fn descriptor<E, const MN: usize, const K: usize>(ptr: *mut u8, k: usize) -> u64 {
        unsafe { SmemTile::<E, MN, K>::from_ptr(ptr) }.descriptor(k)
    }
    #[inline(always)]
    unsafe fn load<E, const MN: usize, const K: usize>(ptr: *mut u8, map: &TensorMap, mn: i32, k: i32, bar: MBarrier) {
        unsafe { SmemTile::<E, MN, K>::from_ptr(ptr).load(map, k, mn, bar) }
    }
    #[inline(always)]
    unsafe fn load_multicast<E, const MN: usize, const K: usize>(
        ptr: *mut u8,
        map: &TensorMap,
        mn: i32,
        k: i32,
        bar: MBarrier,
        cta_mask: u16,
    ) {
        unsafe { SmemTile::<E, MN, K>::from_ptr(ptr).load_multicast(map, k, mn, bar, cta_mask) }
    }
}

impl Major for MnMajor {
    #[inline(always)]
    unsafe fn mma_as_a<E: KMajorMma, const R: usize, LB: Major>(
        acc: &mut Accumulator<R>,
        a: u64,
        b: u64,
        scale_d: bool,
    ) {
        unsafe { LB::mma_as_b::<E, R, true>(acc, a, b, scale_d) }
    }
    #[inline(always)]
    unsafe fn mma_as_b<E: KMajorMma, const R: usize, const A_MN: bool>(
        acc: &mut Accumulator<R>,
        a: u64,
        b: u64,
        scale_d: bool,
    ) {
        unsafe { E::mma_major::<R, A_MN, true>(acc, a, b, scale_d) }
    }
    fn box_of<E, const MN: usize, const K: usize>() -> (u32, u32) {
        (SmemTile::<E, K, MN>::BOX_COLS, SmemTile::<E, K, MN>::BOX_ROWS)
    }
    #[inline(always)]
    unsafe fn part<E, const MN: usize, const K: usize, const SUB: usize>(ptr: *mut u8, i: usize) -> *mut u8 {
        unsafe { SmemTile::<E, K, MN>::from_ptr(ptr) }.cols::<SUB>(i).as_ptr().cast()
    }
    #[inline(always)]
    unsafe fn descriptor<E, const MN: usize, const K: usize>(ptr: *mut u8, k: usize) -> u64 {
        unsafe { SmemTile::<E, K, MN>::from_ptr(ptr) }.descriptor_mn_major(k)
    }
    #[inline(always)]
    unsafe fn load<E, const MN: usize, const K: usize>(ptr: *mut u8, map: &TensorMap, mn: i32, k: i32, bar: MBarrier) {
        unsafe { SmemTile::<E, K, MN>::from_ptr(ptr).load(map, mn, k, bar) }
    }
    #[inline(always)]
    unsafe fn load_multicast<E, const MN: usize, const K: usize>(
        ptr: *mut u8,
        map: &TensorMap,
        mn: i32,
        k: i32,
        bar: MBarrier,
        cta_mask: u16,
    ) {
        unsafe { SmemTile::<E, K, MN>::from_ptr(ptr).load_multicast(map, mn, k, bar, cta_mask) }
    }
}

/// An `MN × K` `wgmma` operand of `E` in shared memory, stored as `L` says (module docs). A
/// handle: copying it copies the address.
pub struct Operand<E, const MN: usize, const K: usize, L: Major> {
    ptr: *mut u8,
    _t: PhantomData<(E, L)>,
}

impl<E, const MN: usize, const K: usize, L: Major> Clone for Operand<E, MN, K, L> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<E, const MN: usize, const K: usize, L: Major> Copy for Operand<E, MN, K, L> {}

impl<E, const MN: usize, const K: usize, L: Major> Operand<E, MN, K, L> {
    /// Bytes of the tile.
    pub const BYTES: usize = MN * K * size_of::<E>();

    /// The TMA box (innermost extent, rows) a map needs for [`load`](Self::load): over the
    /// stored matrix (`rows × K` for [`KMajor`], `K × cols` for [`MnMajor`]), 128-byte swizzle.
    pub fn tma_box() -> (u32, u32) {
        L::box_of::<E, MN, K>()
    }

    /// The operand at `ptr`.
    ///
    /// # Safety
    /// As [`SmemTile::from_ptr`] for [`BYTES`](Self::BYTES) bytes.
    #[inline(always)]
    pub const unsafe fn from_ptr(ptr: *mut u8) -> Self {
        Operand { ptr, _t: PhantomData }
    }

    /// Rows `i·SUB .. (i+1)·SUB` of MN (a consumer warpgroup's 64 rows of A, or a half of B for
    /// a multicast) as an operand of their own. Traps when `i` is past the last whole part.
    #[inline(always)]
    pub fn part<const SUB: usize>(self, i: usize) -> Operand<E, SUB, K, L> {
        // SAFETY: `self.ptr` as `from_ptr` was given it.
        Operand { ptr: unsafe { L::part::<E, MN, K, SUB>(self.ptr, i) }, _t: PhantomData }
    }

    /// The `wgmma` descriptor of the `MN × 16` (16-bit) or `MN × 32` (fp8) slice from `k` along K.
    #[inline(always)]
    pub fn descriptor(self, k: usize) -> u64 {
        // SAFETY: `self.ptr` as `from_ptr` was given it.
        unsafe { L::descriptor::<E, MN, K>(self.ptr, k) }
    }

    /// Starts loading the operand's rows `mn..` and K `k..` with TMA, counted on `bar`; as
    /// [`SmemTile::load`].
    ///
    /// # Safety
    /// As [`SmemTile::load`], with `map` over the stored matrix in boxes of
    /// [`tma_box`](Self::tma_box).
    #[inline(always)]
    pub unsafe fn load(self, map: &TensorMap, mn: i32, k: i32, bar: MBarrier) {
        unsafe { L::load::<E, MN, K>(self.ptr, map, mn, k, bar) }
    }

    /// [`load`](Self::load) multicast to the blocks of `cta_mask`.
    ///
    /// # Safety
    /// As [`SmemTile::load_multicast`], with the map of [`load`](Self::load).
    #[inline(always)]
    pub unsafe fn load_multicast(self, map: &TensorMap, mn: i32, k: i32, bar: MBarrier, cta_mask: u16) {
        unsafe { L::load_multicast::<E, MN, K>(self.ptr, map, mn, k, bar, cta_mask) }
    }
}

/// One `wgmma` K step of a warpgroup: `acc = A·B + (scale_d ? acc : 0)` over the `64 × K_STEP`
/// slice of `a` and the `N × K_STEP` slice of `b` from `k` along K (`N = 2 R`), with the
/// transposes their layouts need.
///
/// # Safety
/// As [`wgmma::mma_bf16`](crate::wgmma::mma_bf16) (the warpgroup together, after
/// [`wgmma::fence`](crate::wgmma::fence); the tiles hold the data and stay until
/// [`wgmma::wait_group`](crate::wgmma::wait_group)).
#[inline(always)]
pub unsafe fn mma<
    E: KMajorMma,
    const R: usize,
    const N: usize,
    const KA: usize,
    const KB: usize,
    LA: Major,
    LB: Major,
>(
    acc: &mut Accumulator<R>,
    a: Operand<E, 64, KA, LA>,
    b: Operand<E, N, KB, LB>,
    k: usize,
    scale_d: bool,
) {
    const { assert!(N == 2 * R, "tile::operand::mma: B has N = 2 R rows") };
    unsafe { LA::mma_as_a::<E, R, LB>(acc, a.descriptor(k), b.descriptor(k), scale_d) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boxes_follow_the_stored_layout() {
        // K-major: 64 elements of K (128 bytes) × the rows; MN-major: 64 of MN × 64 rows of K.
        assert_eq!(Operand::<u16, 128, 64, KMajor>::tma_box(), (64, 128));
        assert_eq!(Operand::<u16, 128, 64, MnMajor>::tma_box(), (64, 64));
        assert_eq!(Operand::<u8, 128, 128, KMajor>::tma_box(), (128, 128));
    }

    #[test]
    fn parts_are_rows_or_panels() {
        let base = 0x4000 as *mut u8;
        // K-major: 64 rows of 128 bytes further; MN-major: the next panel (64 rows of K × 128 B).
        let k = unsafe { Operand::<u16, 128, 64, KMajor>::from_ptr(base) }.part::<64>(1);
        let mn = unsafe { Operand::<u16, 256, 64, MnMajor>::from_ptr(base) }.part::<128>(1);
        assert_eq!((k.ptr as usize - 0x4000, mn.ptr as usize - 0x4000), (64 * 128, 2 * 64 * 128));
    }
}
