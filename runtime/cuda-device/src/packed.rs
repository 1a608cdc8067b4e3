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
    /// `fma.rn.ftz.f16x2`: as [`fma_f16x2`], with subnormal inputs and results flushed to zero.
    pub fn fma_ftz_f16x2(a: u32, b: u32, c: u32) -> u32 {
        i::f16x2_fma_ftz(a, b, c)
    }
    /// `fma.rn.sat.f16x2`: as [`fma_f16x2`], each result clamped to [0, 1] (NaN to +0).
    pub fn fma_sat_f16x2(a: u32, b: u32, c: u32) -> u32 {
        i::f16x2_fma_sat(a, b, c)
    }
    /// `fma.rn.ftz.sat.f16x2`: flush-to-zero and clamped to [0, 1].
    pub fn fma_ftz_sat_f16x2(a: u32, b: u32, c: u32) -> u32 {
        i::f16x2_fma_ftz_sat(a, b, c)
    }
    /// `fma.rn.ftz.relu.f16x2` (sm_80): flush-to-zero, negative results become 0.
    pub fn fma_ftz_relu_f16x2(a: u32, b: u32, c: u32) -> u32 {
        i::f16x2_fma_ftz_relu(a, b, c)
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
    /// `cvt.rz.f16x2.f32`: `lo` to the low half, both rounded toward zero.
    pub fn cvt_rz_f16x2_f32(lo: f32, hi: f32) -> u32 {
        i::cvt_rz_f16x2_f32(lo, hi)
    }
    /// `cvt.rz.bf16x2.f32` (sm_80): `lo` to the low half, both rounded toward zero.
    pub fn cvt_rz_bf16x2_f32(lo: f32, hi: f32) -> u32 {
        i::cvt_rz_bf16x2_f32(lo, hi)
    }
    /// `cvt.rna.tf32.f32` (sm_80): `value` rounded to TensorFloat-32 (nearest, ties away from
    /// zero), as the bits of an `f32` whose 13 low mantissa bits the tensor cores ignore: the
    /// operand format of `mma.sync … .tf32`.
    pub fn cvt_rna_tf32_f32(value: f32) -> u32 {
        i::cvt_rna_tf32_f32(value)
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
    /// Both halves of a bf16 pair as `f32` (low, high). (The opposite direction, two `f32` to a
    /// pair, is [`crate::tcgen05::cvt_f32x2_bf16x2`] in NVIDIA's naming, [`cvt_bf16x2_f32`] here.)
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

/// NVIDIA cuda-oxide's `tcgen05` module (Blackwell's fifth-generation tensor cores) holds, besides
/// the sm_100 tensor-memory and MMA instructions, conversions that every arch since sm_80 has;
/// only those are here. The tcgen05 instructions themselves (`tcgen05.alloc`, `tcgen05.mma`,
/// `tcgen05.ld`, …) need sm_100a and are not provided: a program using them fails to compile
/// with "cannot find function" rather than building for a GPU that cannot run it.
pub mod tcgen05 {
    use crate::intrinsics as i;

    /// `cvt.rn.bf16x2.f32` (sm_80): two `f32` to a bf16 pair, `lo` in the low half, each rounded
    /// to nearest even. The same operation as [`super::convert::cvt_bf16x2_f32`].
    pub fn cvt_f32x2_bf16x2(lo: f32, hi: f32) -> u32 {
        i::cvt_rn_bf16x2_f32(lo, hi)
    }
}
