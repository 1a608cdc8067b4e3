//! [`KMajorMma`]: the K-major `wgmma` of an element type, so that one kernel body serves bf16,
//! f16 and fp8 (and, for the 16-bit types, [`KMajorMma::mma_major`]: operands stored MN-major). A tile row is 128 bytes ([`SmemTile`](crate::tile::SmemTile)'s panel) in every
//! case: 64 elements of K for 16-bit types, 128 for fp8; one `wgmma` consumes
//! [`KMajorMma::K_STEP`] of them (32 bytes), so a 128-byte K slice is 4 of them whatever the type.
//!
//! ```ignore
//! fn mainloop<E: KMajorMma, const BK: usize>(acc: &mut Accumulator<128>, a: SmemTile<E, 64, BK>, b: SmemTile<E, 256, BK>) {
//!     cuda_device::unroll!(for kk in 0..BK / E::K_STEP {
//!         unsafe { E::mma(acc, a.descriptor(kk * E::K_STEP), b.descriptor(kk * E::K_STEP), true) };
//!     });
//! }
//! ```

use crate::fp8::{E4M3, E5M2};
use crate::half::bf16;
use crate::wgmma::{self, Accumulator};

/// An element type with a K-major `wgmma` (`m64nNk{K_STEP}`, f32 accumulation): [`bf16`], `f16`
/// ([`wgmma::mma_bf16`], [`wgmma::mma_f16`], K 16), [`E4M3`], [`E5M2`] ([`wgmma::mma_e4m3`],
/// [`wgmma::mma_e5m2`], K 32).
pub trait KMajorMma: Copy {
    /// Elements of K one `wgmma` reads: `32 / size_of::<Self>()`.
    const K_STEP: usize;
    /// `acc = A·B + (scale_d ? acc : 0)` on K-major tiles at `desc_a` (64 × `K_STEP`) and `desc_b`
    /// (N × `K_STEP`).
    ///
    /// # Safety
    /// As [`wgmma::mma_bf16`].
    unsafe fn mma<const R: usize>(acc: &mut Accumulator<R>, desc_a: u64, desc_b: u64, scale_d: bool);

    /// [`mma`](Self::mma) with A M-major when `A_MN` and B N-major when `B_MN` (descriptors from
    /// [`SmemTile::mn_descriptor`](crate::tile::SmemTile::mn_descriptor)): [`wgmma::mma_major`]
    /// for the 16-bit types; for fp8, which only has the K-major form, anything but
    /// `<false, false>` does not compile. [`tile::operand::mma`](crate::tile::operand::mma)
    /// picks the form from the operands' layouts.
    ///
    /// # Safety
    /// As [`mma`](Self::mma).
    #[inline(always)]
    unsafe fn mma_major<const R: usize, const A_MN: bool, const B_MN: bool>(
        acc: &mut Accumulator<R>,
        desc_a: u64,
        desc_b: u64,
        scale_d: bool,
    ) {
        const { assert!(!A_MN && !B_MN, "fp8 wgmma reads K-major operands only") };
        unsafe { Self::mma(acc, desc_a, desc_b, scale_d) }
    }
}

impl KMajorMma for bf16 {
    const K_STEP: usize = 16;
    #[inline(always)]
    unsafe fn mma<const R: usize>(acc: &mut Accumulator<R>, desc_a: u64, desc_b: u64, scale_d: bool) {
        unsafe { wgmma::mma_bf16(acc, desc_a, desc_b, scale_d) }
    }
    #[inline(always)]
    unsafe fn mma_major<const R: usize, const A_MN: bool, const B_MN: bool>(
        acc: &mut Accumulator<R>,
        desc_a: u64,
        desc_b: u64,
        scale_d: bool,
    ) {
        unsafe { wgmma::mma_major::<bf16, R, A_MN, B_MN>(acc, desc_a, desc_b, scale_d) }
    }
}

impl KMajorMma for f16 {
    const K_STEP: usize = 16;
    #[inline(always)]
    unsafe fn mma<const R: usize>(acc: &mut Accumulator<R>, desc_a: u64, desc_b: u64, scale_d: bool) {
        unsafe { wgmma::mma_f16(acc, desc_a, desc_b, scale_d) }
    }
    #[inline(always)]
    unsafe fn mma_major<const R: usize, const A_MN: bool, const B_MN: bool>(
        acc: &mut Accumulator<R>,
        desc_a: u64,
        desc_b: u64,
        scale_d: bool,
    ) {
        unsafe { wgmma::mma_major::<f16, R, A_MN, B_MN>(acc, desc_a, desc_b, scale_d) }
    }
}

impl KMajorMma for E4M3 {
    const K_STEP: usize = 32;
    #[inline(always)]
    unsafe fn mma<const R: usize>(acc: &mut Accumulator<R>, desc_a: u64, desc_b: u64, scale_d: bool) {
        unsafe { wgmma::mma_e4m3(acc, desc_a, desc_b, scale_d) }
    }
}

impl KMajorMma for E5M2 {
    const K_STEP: usize = 32;
    #[inline(always)]
    unsafe fn mma<const R: usize>(acc: &mut Accumulator<R>, desc_a: u64, desc_b: u64, scale_d: bool) {
        unsafe { wgmma::mma_e5m2(acc, desc_a, desc_b, scale_d) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One `wgmma` reads 32 bytes of K, so a 128-byte tile row is 4 of them for every type.
    #[test]
    fn a_k_step_is_32_bytes() {
        fn bytes<E: KMajorMma>() -> usize {
            E::K_STEP * core::mem::size_of::<E>()
        }
        assert_eq!([bytes::<bf16>(), bytes::<f16>(), bytes::<E4M3>(), bytes::<E5M2>()], [32; 4]);
    }
}
