//! NVIDIA cuda-oxide's names for packed-half arithmetic and conversions, as free functions over
//! the bits (`u32` holds two halves, element 0 in the low 16 bits). They are the same operations
//! as the methods of [`crate::half::F16x2`] / [`crate::half::Bf16x2`], which new code should
//! prefer; these keep programs written against those names compiling.
//!
//! ```
//! use cuda_device::{convert, f16x2};
//!
//! let a = convert::cvt_f16x2_f32(1.0, 2.0);
//! let b = f16x2::fma_f16x2(a, a, a);
//! assert_eq!(convert::cvt_f32x2_f16x2(b), (2.0, 6.0));
//! ```

/// `f16x2` arithmetic (`add.rn.f16x2`, `fma.rn.f16x2`, …) on packed bits.
pub mod f16x2 {
    use crate::intrinsics as i;

    /// `add.rn.f16x2`.
    pub fn add_f16x2(a: u32, b: u32) -> u32 {
        i::f16x2_add(a, b)
    }
    /// `sub.rn.f16x2`.
    pub fn sub_f16x2(a: u32, b: u32) -> u32 {
        i::f16x2_sub(a, b)
    }
    /// `mul.rn.f16x2`.
    pub fn mul_f16x2(a: u32, b: u32) -> u32 {
        i::f16x2_mul(a, b)
    }
    /// `fma.rn.f16x2`: `a * b + c`.
    pub fn fma_f16x2(a: u32, b: u32, c: u32) -> u32 {
        i::f16x2_fma(a, b, c)
    }
    /// `fma.rn.relu.f16x2` (sm_80).
    pub fn fma_relu_f16x2(a: u32, b: u32, c: u32) -> u32 {
        i::f16x2_fma_relu(a, b, c)
    }
    /// `neg.f16x2`: flips both sign bits.
    pub fn neg_f16x2(a: u32) -> u32 {
        a ^ 0x8000_8000
    }
    /// `abs.f16x2`: clears both sign bits.
    pub fn abs_f16x2(a: u32) -> u32 {
        a & 0x7fff_7fff
    }
    /// `min.f16x2` (sm_80).
    pub fn min_f16x2(a: u32, b: u32) -> u32 {
        i::f16x2_min(a, b)
    }
    /// `max.f16x2` (sm_80).
    pub fn max_f16x2(a: u32, b: u32) -> u32 {
        i::f16x2_max(a, b)
    }
}

/// `bf16x2` arithmetic (`fma.rn.bf16x2`, …) on packed bits.
pub mod bf16x2 {
    use crate::intrinsics as i;

    /// `add.rn.bf16x2`.
    pub fn add_bf16x2(a: u32, b: u32) -> u32 {
        i::bf16x2_add(a, b)
    }
    /// `sub.rn.bf16x2`.
    pub fn sub_bf16x2(a: u32, b: u32) -> u32 {
        i::bf16x2_sub(a, b)
    }
    /// `mul.rn.bf16x2`.
    pub fn mul_bf16x2(a: u32, b: u32) -> u32 {
        i::bf16x2_mul(a, b)
    }
    /// `fma.rn.bf16x2`: `a * b + c`.
    pub fn fma_bf16x2(a: u32, b: u32, c: u32) -> u32 {
        i::bf16x2_fma(a, b, c)
    }
    /// `fma.rn.relu.bf16x2` (sm_80).
    pub fn fma_relu_bf16x2(a: u32, b: u32, c: u32) -> u32 {
        i::bf16x2_fma_relu(a, b, c)
    }
    /// `neg.bf16x2`: flips both sign bits.
    pub fn neg_bf16x2(a: u32) -> u32 {
        a ^ 0x8000_8000
    }
    /// `abs.bf16x2`: clears both sign bits.
    pub fn abs_bf16x2(a: u32) -> u32 {
        a & 0x7fff_7fff
    }
    /// `min.bf16x2` (sm_80).
    pub fn min_bf16x2(a: u32, b: u32) -> u32 {
        i::bf16x2_min(a, b)
    }
    /// `max.bf16x2` (sm_80).
    pub fn max_bf16x2(a: u32, b: u32) -> u32 {
        i::bf16x2_max(a, b)
    }
}

/// Conversions between `f32` and packed halves.
pub mod convert {
    use crate::half::{Bf16x2, F16x2};
    use crate::intrinsics as i;

    /// `cvt.rn.f16x2.f32`: `lo` to the low half.
    pub fn cvt_f16x2_f32(lo: f32, hi: f32) -> u32 {
        i::cvt_rn_f16x2_f32(lo, hi)
    }
    /// `cvt.rn.relu.f16x2.f32` (sm_80).
    pub fn cvt_rn_relu_f16x2_f32(lo: f32, hi: f32) -> u32 {
        i::cvt_rn_relu_f16x2_f32(lo, hi)
    }
    /// `cvt.rn.bf16x2.f32` (sm_80): `lo` to the low half.
    pub fn cvt_bf16x2_f32(lo: f32, hi: f32) -> u32 {
        i::cvt_rn_bf16x2_f32(lo, hi)
    }
    /// `cvt.rn.relu.bf16x2.f32` (sm_80).
    pub fn cvt_rn_relu_bf16x2_f32(lo: f32, hi: f32) -> u32 {
        i::cvt_rn_relu_bf16x2_f32(lo, hi)
    }
    /// Both halves of an f16 pair as `f32` (low, high).
    pub fn cvt_f32x2_f16x2(packed: u32) -> (f32, f32) {
        F16x2::from_bits(packed).to_f32()
    }
    /// The low half of an f16 pair as `f32`.
    pub fn cvt_f32_f16x2_lo(packed: u32) -> f32 {
        F16x2::from_bits(packed).lo() as f32
    }
    /// The high half of an f16 pair as `f32`.
    pub fn cvt_f32_f16x2_hi(packed: u32) -> f32 {
        F16x2::from_bits(packed).hi() as f32
    }
    /// Both halves of a bf16 pair as `f32` (low, high).
    pub fn cvt_f32x2_bf16x2(packed: u32) -> (f32, f32) {
        Bf16x2::from_bits(packed).to_f32()
    }
    /// The low half of a bf16 pair as `f32`.
    pub fn cvt_f32_bf16x2_lo(packed: u32) -> f32 {
        Bf16x2::from_bits(packed).to_f32().0
    }
    /// The high half of a bf16 pair as `f32`.
    pub fn cvt_f32_bf16x2_hi(packed: u32) -> f32 {
        Bf16x2::from_bits(packed).to_f32().1
    }
}
