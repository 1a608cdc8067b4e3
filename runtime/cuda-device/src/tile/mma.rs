//! [`KMajorMma`]: the K-major `wgmma` of an element type, so that one kernel body serves bf16,
//! f16 and fp8 (and, for the 16-bit types, [`KMajorMma::mma_major`]: operands stored MN-major).
//! A tile row is 128 bytes ([`SmemTile`]'s panel) in every
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
//!
//! Whole-tile products, one batch of `wgmma`s over all of K (between the caller's
//! [`wgmma::fence`] and [`wgmma::commit_group`]): [`mma_ss`] (both operands K-major tiles:
//! attention's `S = Q·Kᵀ`) and [`mma_rs_mn_b`] (A from registers, B an MN-major tile:
//! `O += P·V`, with `P` as [`a_fragments`] of an accumulator).

use crate::fp8::{E4M3, E5M2};
use crate::half::bf16;
use crate::tile::SmemTile;
use crate::wgmma::{self, Accumulator, FragA, HalfElement};

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
    /// [`SmemTile::descriptor_mn_major`](crate::tile::SmemTile::descriptor_mn_major)): [`wgmma::mma_major`]
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

/// The `KMajorMma` impl of a 16-bit type: every layout through [`wgmma::mma_major`].
macro_rules! half_mma {
    ($t:ty) => {
        impl KMajorMma for $t {
            const K_STEP: usize = 16;
            #[inline(always)]
            unsafe fn mma<const R: usize>(acc: &mut Accumulator<R>, desc_a: u64, desc_b: u64, scale_d: bool) {
                unsafe { wgmma::mma_major::<$t, R, false, false>(acc, desc_a, desc_b, scale_d) }
            }
            #[inline(always)]
            unsafe fn mma_major<const R: usize, const A_MN: bool, const B_MN: bool>(
                acc: &mut Accumulator<R>,
                desc_a: u64,
                desc_b: u64,
                scale_d: bool,
            ) {
                unsafe { wgmma::mma_major::<$t, R, A_MN, B_MN>(acc, desc_a, desc_b, scale_d) }
            }
        }
    };
}

half_mma!(bf16);
half_mma!(f16);

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

/// `acc = A·Bᵀ` (`acc +=` when `accumulate`) over the whole K of two K-major tiles: `a` holds A
/// (64 × K), `b` holds B as N × K (N = `2 R`); one [`KMajorMma::mma`] per K step.
///
/// # Safety
/// As [`wgmma::mma_bf16`], for every step: the warpgroup together, after [`wgmma::fence`]; the
/// tiles hold their operands (visible to the async proxy) and `acc` is left alone until
/// [`wgmma::wait_group`] says the batch is done.
#[inline(always)]
pub unsafe fn mma_ss<E: KMajorMma, const R: usize, const N: usize, const K: usize>(
    acc: &mut Accumulator<R>,
    a: SmemTile<E, 64, K>,
    b: SmemTile<E, N, K>,
    accumulate: bool,
) {
    const { assert!(N == 2 * R, "mma_ss: B has N = 2 R rows") };
    crate::unroll!(for kk in 0..K / E::K_STEP {
        unsafe { E::mma(acc, a.descriptor(kk * E::K_STEP), b.descriptor(kk * E::K_STEP), accumulate || kk > 0) };
    });
}

/// `acc += A·B` with A (64 × K) from registers, `a[j]` its columns `16 j..16 j + 16` (e.g.
/// [`a_fragments`]), and B the K × N tile `b` as stored, MN-major
/// ([`SmemTile::descriptor_mn_major`]; N = `2 R`).
///
/// # Safety
/// As [`wgmma::mma_rs`], for every step: the warpgroup together, after the [`wgmma::fence`] that
/// follows the last ordinary write of the registers `a` came from; `b` holds its operand and
/// `acc` is left alone until [`wgmma::wait_group`] says the batch is done.
#[inline(always)]
#[allow(clippy::needless_range_loop)] // unrolled: `j` names the fragment and its K rows
pub unsafe fn mma_rs_mn_b<T: HalfElement, const R: usize, const F: usize, const K: usize, const N: usize>(
    acc: &mut Accumulator<R>,
    a: &[FragA<T>; F],
    b: SmemTile<T, K, N>,
) {
    const { assert!(K == 16 * F && N == 2 * R, "mma_rs_mn_b: A is 64 × 16 F, B 16 F × 2 R") };
    crate::unroll!(for j in 0..F {
        unsafe { wgmma::mma_rs_mn_b(acc, &a[j], b.descriptor_mn_major(16 * j), true) };
    });
}

/// A 64 × N accumulator (`R = N / 2`) as the `F = N / 16` A fragments of a next product, rounded
/// to `T` ([`FragA::from_accumulator`] of each 16 columns): FlashAttention's `P` for `P·V`.
#[inline(always)]
#[allow(clippy::needless_range_loop)] // unrolled: `j` names the fragment and its columns
pub fn a_fragments<T: HalfElement, const R: usize, const F: usize>(acc: &Accumulator<R>) -> [FragA<T>; F] {
    const { assert!(R == 8 * F, "a_fragments: F = R / 8 fragments") };
    let mut frags = [FragA::from_regs([0; 4]); F];
    crate::unroll!(for j in 0..F {
        frags[j] = FragA::from_accumulator(acc, j);
    });
    frags
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
