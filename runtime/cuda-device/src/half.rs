//! Half precision: Rust's `f16` (nightly feature `f16`) and [`bf16`] as kernel parameters,
//! buffer elements and arithmetic, the packed pairs [`F16x2`] / [`Bf16x2`] that PTX computes
//! on two at a time (`add.rn.f16x2`, `fma.rn.bf16x2`, …), and the 16-byte vectors [`F16x8`] /
//! [`Bf16x8`] (eight halves per load; `as_vectors::<F16x8>(&[f16])` views a half slice as them).
//!
//! `f16` is Rust's own type: `a + b`, `a * b + c` (contracted to `fma.rn.f16`), comparisons and
//! `as f32` compile to PTX's half instructions. `bf16` is this crate's (Rust has none yet); its
//! operators compile to the bf16 instructions of sm_80/sm_90. Both are `DeviceCopy`, so
//! `DeviceBuffer<f16>` and `DeviceBuffer<bf16>` hold them; on the host, convert from and to the
//! `half` crate's types ([`f16_from_half`], [`f16_to_half`], `bf16::from(half::bf16)`).
//!
//! ```
//! #![feature(f16)]
//! use cuda_device::half::{bf16, Bf16x2, F16x2};
//!
//! let a = bf16::from_f32(1.5);
//! assert_eq!((a * a + a).to_f32(), 3.75);
//! let pair = F16x2::new(1.0, -2.0);
//! assert_eq!((pair * pair).hi(), 4.0);
//! assert_eq!(Bf16x2::from_f32(0.5, 8.0).lo().to_f32(), 0.5);
//! ```
//!
//! ```no_run
//! # use cuda_device::{DisjointSlice, cuda_module, kernel, thread, half::{Bf16x2, F16x2, bf16}};
//! #[cuda_module]
//! mod kernels {
//!     use super::*;
//!
//!     /// `y = a * x + y` on pairs of bf16, one `fma.rn.bf16x2` per pair.
//!     #[kernel]
//!     pub fn axpy_bf16(a: f32, x: &[Bf16x2], mut y: DisjointSlice<Bf16x2>) {
//!         let idx = thread::index_1d();
//!         let a2 = Bf16x2::splat(bf16::from_f32(a));
//!         if let Some(y2) = y.get_mut(idx) {
//!             *y2 = a2.mul_add(x[idx.get()], *y2);
//!         }
//!     }
//!
//!     /// Pairs of f32 packed into f16 pairs.
//!     #[kernel]
//!     pub fn pack(f: &[f32], mut out: DisjointSlice<F16x2>) {
//!         let idx = thread::index_1d();
//!         let i = idx.get();
//!         if let Some(o) = out.get_mut(idx) {
//!             *o = F16x2::from_f32(f[2 * i], f[2 * i + 1]);
//!         }
//!     }
//! }
//! # fn main() {}
//! ```

use core::cmp::Ordering;
use core::ops::{Add, AddAssign, Div, Mul, MulAssign, Neg, Sub, SubAssign};

use crate::intrinsics;

mod vectors;

pub use vectors::{Bf16x8, F16x8};

/// A bfloat16: the upper 16 bits of an `f32` (8 exponent bits, 7 mantissa bits).
#[allow(non_camel_case_types)]
#[repr(transparent)]
#[derive(Clone, Copy, Default, PartialEq)]
pub struct bf16(u16);

impl bf16 {
    /// `0.0`.
    pub const ZERO: bf16 = bf16(0);
    /// `1.0`.
    pub const ONE: bf16 = bf16(0x3f80);
    /// Positive infinity.
    pub const INFINITY: bf16 = bf16(0x7f80);
    /// A quiet NaN.
    pub const NAN: bf16 = bf16(0x7fc0);

    /// The value with these bits.
    #[inline(always)]
    pub const fn from_bits(bits: u16) -> bf16 {
        bf16(bits)
    }

    /// The bits of the value.
    #[inline(always)]
    pub const fn to_bits(self) -> u16 {
        self.0
    }

    /// `x` rounded to the nearest bf16, ties to even (`cvt.rn.bf16.f32`).
    #[inline(always)]
    pub fn from_f32(x: f32) -> bf16 {
        bf16(intrinsics::bf16_from_f32(x))
    }

    /// The exact `f32` of the same value.
    #[inline(always)]
    pub fn to_f32(self) -> f32 {
        f32::from_bits((self.0 as u32) << 16)
    }

    /// `self * a + b` with one rounding (`fma.rn.bf16`).
    #[inline(always)]
    pub fn mul_add(self, a: bf16, b: bf16) -> bf16 {
        bf16(intrinsics::bf16_fma(self.0, a.0, b.0))
    }

    /// `true` for NaN.
    #[inline(always)]
    pub fn is_nan(self) -> bool {
        self.0 & 0x7fff > 0x7f80
    }
}

macro_rules! bf16_op {
    ($trait:ident $method:ident $assign:ident $assign_method:ident $intrinsic:ident) => {
        impl $trait for bf16 {
            type Output = bf16;
            #[inline(always)]
            fn $method(self, rhs: bf16) -> bf16 {
                bf16(intrinsics::$intrinsic(self.0, rhs.0))
            }
        }
        impl $assign for bf16 {
            #[inline(always)]
            fn $assign_method(&mut self, rhs: bf16) {
                *self = $trait::$method(*self, rhs);
            }
        }
    };
}
bf16_op!(Add add AddAssign add_assign bf16_add);
bf16_op!(Sub sub SubAssign sub_assign bf16_sub);
bf16_op!(Mul mul MulAssign mul_assign bf16_mul);

impl Div for bf16 {
    type Output = bf16;
    /// Divided in `f32`, then rounded (PTX has no bf16 division either).
    #[inline(always)]
    fn div(self, rhs: bf16) -> bf16 {
        bf16::from_f32(self.to_f32() / rhs.to_f32())
    }
}

impl Neg for bf16 {
    type Output = bf16;
    #[inline(always)]
    fn neg(self) -> bf16 {
        bf16(self.0 ^ 0x8000)
    }
}

impl PartialOrd for bf16 {
    #[inline(always)]
    fn partial_cmp(&self, other: &bf16) -> Option<Ordering> {
        self.to_f32().partial_cmp(&other.to_f32())
    }
}

impl core::fmt::Debug for bf16 {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        core::fmt::Debug::fmt(&self.to_f32(), f)
    }
}

impl From<bf16> for f32 {
    #[inline(always)]
    fn from(x: bf16) -> f32 {
        x.to_f32()
    }
}

// SAFETY: two bytes, every bit pattern is a value.
unsafe impl cuda_core::DeviceCopy for bf16 {}

impl From<::half::bf16> for bf16 {
    fn from(x: ::half::bf16) -> bf16 {
        bf16(x.to_bits())
    }
}

impl From<bf16> for ::half::bf16 {
    fn from(x: bf16) -> ::half::bf16 {
        ::half::bf16::from_bits(x.0)
    }
}

/// The `half` crate's `f16` as Rust's `f16` (same bits). A function, not `From`: both types are
/// defined outside this crate, and Rust's orphan rule lets only `core` or `half` implement a trait
/// of `core` between them. `f16::from_bits(x.to_bits())` is the same.
pub fn f16_from_half(x: ::half::f16) -> f16 {
    f16::from_bits(x.to_bits())
}

/// Rust's `f16` as the `half` crate's (same bits); see [`f16_from_half`] for why not `From`.
pub fn f16_to_half(x: f16) -> ::half::f16 {
    ::half::f16::from_bits(x.to_bits())
}

/// A slice of the `half` crate's `f16` as Rust's, without copying: host data in
/// `Vec<half::f16>` goes to `DeviceBuffer::<f16>::from_host(&stream, f16_slice_from_half(&v))`.
pub fn f16_slice_from_half(x: &[::half::f16]) -> &[f16] {
    // SAFETY: both are two bytes, 2-byte aligned, and take every bit pattern (`half::f16` is a
    // `repr(transparent)` `u16`).
    unsafe { core::slice::from_raw_parts(x.as_ptr().cast(), x.len()) }
}

/// A slice of Rust's `f16` as the `half` crate's, without copying (the inverse of
/// [`f16_slice_from_half`]).
pub fn f16_slice_to_half(x: &[f16]) -> &[::half::f16] {
    // SAFETY: as in `f16_slice_from_half`.
    unsafe { core::slice::from_raw_parts(x.as_ptr().cast(), x.len()) }
}

/// A slice of the `half` crate's `bf16` as this crate's, without copying (single values convert
/// with `From`).
pub fn bf16_slice_from_half(x: &[::half::bf16]) -> &[bf16] {
    // SAFETY: both are `repr(transparent)` `u16`s that take every bit pattern.
    unsafe { core::slice::from_raw_parts(x.as_ptr().cast(), x.len()) }
}

/// A slice of this crate's `bf16` as the `half` crate's, without copying.
pub fn bf16_slice_to_half(x: &[bf16]) -> &[::half::bf16] {
    // SAFETY: as in `bf16_slice_from_half`.
    unsafe { core::slice::from_raw_parts(x.as_ptr().cast(), x.len()) }
}

/// Pairs and vectors of halves from and to arrays of the `half` crate's types, with `From`
/// (these types are this crate's, so the orphan rule allows it):
/// `F16x8::from([half::f16::ONE; 8])`, `<[half::bf16; 2]>::from(pair)`.
macro_rules! from_half_arrays {
    ($($ty:ident::$ctor:ident: [$half:ty; $n:literal] via $to:expr, $from:expr;)*) => {$(
        impl From<[$half; $n]> for $ty {
            #[inline(always)]
            fn from(x: [$half; $n]) -> $ty {
                $ty::$ctor(x.map($to))
            }
        }

        impl From<$ty> for [$half; $n] {
            #[inline(always)]
            fn from(x: $ty) -> [$half; $n] {
                x.to_array().map($from)
            }
        }
    )*};
}
from_half_arrays! {
    F16x2::from_array: [::half::f16; 2] via f16_from_half, f16_to_half;
    Bf16x2::from_array: [::half::bf16; 2] via bf16::from, ::half::bf16::from;
    F16x8::new: [::half::f16; 8] via f16_from_half, f16_to_half;
    Bf16x8::new: [::half::bf16; 8] via bf16::from, ::half::bf16::from;
}

/// Two `f16` in one 32-bit register, element 0 in the low half: what `add.rn.f16x2` and its
/// relatives compute on. 4-byte aligned, so a `&[F16x2]` loads both with one access.
#[repr(transparent)]
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub struct F16x2(u32);

/// Two [`bf16`] in one 32-bit register, element 0 in the low half (`fma.rn.bf16x2`, …).
#[repr(transparent)]
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub struct Bf16x2(u32);

impl F16x2 {
    /// `[lo, hi]` as a pair (the array form of [`F16x2::new`]).
    #[inline(always)]
    pub fn from_array([lo, hi]: [f16; 2]) -> F16x2 {
        F16x2::new(lo, hi)
    }

    /// `[lo, hi]`.
    #[inline(always)]
    pub fn to_array(self) -> [f16; 2] {
        [self.lo(), self.hi()]
    }

    /// `(lo, hi)`.
    #[inline(always)]
    pub fn new(lo: f16, hi: f16) -> F16x2 {
        F16x2(lo.to_bits() as u32 | (hi.to_bits() as u32) << 16)
    }

    /// Both halves `x`.
    #[inline(always)]
    pub fn splat(x: f16) -> F16x2 {
        F16x2::new(x, x)
    }

    /// Two `f32` rounded to nearest-even halves in one `cvt.rn.f16x2.f32`.
    #[inline(always)]
    pub fn from_f32(lo: f32, hi: f32) -> F16x2 {
        F16x2(intrinsics::cvt_rn_f16x2_f32(lo, hi))
    }

    /// Element 0.
    #[inline(always)]
    pub fn lo(self) -> f16 {
        f16::from_bits(self.0 as u16)
    }

    /// Element 1.
    #[inline(always)]
    pub fn hi(self) -> f16 {
        f16::from_bits((self.0 >> 16) as u16)
    }

    /// Both elements as `f32`.
    #[inline(always)]
    pub fn to_f32(self) -> (f32, f32) {
        (self.lo() as f32, self.hi() as f32)
    }

    /// The pair with these bits: low half `lo`, high half `hi`.
    #[inline(always)]
    pub const fn from_bits(bits: u32) -> F16x2 {
        F16x2(bits)
    }

    /// The 32 bits of the pair.
    #[inline(always)]
    pub const fn to_bits(self) -> u32 {
        self.0
    }

    /// `self * a + b` per element, one rounding (`fma.rn.f16x2`).
    #[inline(always)]
    pub fn mul_add(self, a: F16x2, b: F16x2) -> F16x2 {
        F16x2(intrinsics::f16x2_fma(self.0, a.0, b.0))
    }

    /// `max(self * a + b, 0)` per element (`fma.rn.relu.f16x2`, sm_80).
    #[inline(always)]
    pub fn mul_add_relu(self, a: F16x2, b: F16x2) -> F16x2 {
        F16x2(intrinsics::f16x2_fma_relu(self.0, a.0, b.0))
    }

    /// Per-element minimum (`min.f16x2`).
    #[inline(always)]
    pub fn min(self, other: F16x2) -> F16x2 {
        F16x2(intrinsics::f16x2_min(self.0, other.0))
    }

    /// Per-element maximum (`max.f16x2`).
    #[inline(always)]
    pub fn max(self, other: F16x2) -> F16x2 {
        F16x2(intrinsics::f16x2_max(self.0, other.0))
    }
}

impl Bf16x2 {
    /// `[lo, hi]` as a pair (the array form of [`Bf16x2::new`]).
    #[inline(always)]
    pub fn from_array([lo, hi]: [bf16; 2]) -> Bf16x2 {
        Bf16x2::new(lo, hi)
    }

    /// `[lo, hi]`.
    #[inline(always)]
    pub fn to_array(self) -> [bf16; 2] {
        [self.lo(), self.hi()]
    }

    /// `(lo, hi)`.
    #[inline(always)]
    pub fn new(lo: bf16, hi: bf16) -> Bf16x2 {
        Bf16x2(lo.0 as u32 | (hi.0 as u32) << 16)
    }

    /// Both halves `x`.
    #[inline(always)]
    pub fn splat(x: bf16) -> Bf16x2 {
        Bf16x2::new(x, x)
    }

    /// Two `f32` rounded to nearest-even bf16s in one `cvt.rn.bf16x2.f32`.
    #[inline(always)]
    pub fn from_f32(lo: f32, hi: f32) -> Bf16x2 {
        Bf16x2(intrinsics::cvt_rn_bf16x2_f32(lo, hi))
    }

    /// Element 0.
    #[inline(always)]
    pub fn lo(self) -> bf16 {
        bf16(self.0 as u16)
    }

    /// Element 1.
    #[inline(always)]
    pub fn hi(self) -> bf16 {
        bf16((self.0 >> 16) as u16)
    }

    /// Both elements as `f32` (exact: two shifts).
    #[inline(always)]
    pub fn to_f32(self) -> (f32, f32) {
        (f32::from_bits(self.0 << 16), f32::from_bits(self.0 & 0xffff_0000))
    }

    /// The pair with these bits: low half `lo`, high half `hi`.
    #[inline(always)]
    pub const fn from_bits(bits: u32) -> Bf16x2 {
        Bf16x2(bits)
    }

    /// The 32 bits of the pair.
    #[inline(always)]
    pub const fn to_bits(self) -> u32 {
        self.0
    }

    /// `self * a + b` per element, one rounding (`fma.rn.bf16x2`).
    #[inline(always)]
    pub fn mul_add(self, a: Bf16x2, b: Bf16x2) -> Bf16x2 {
        Bf16x2(intrinsics::bf16x2_fma(self.0, a.0, b.0))
    }

    /// `max(self * a + b, 0)` per element (`fma.rn.relu.bf16x2`, sm_80).
    #[inline(always)]
    pub fn mul_add_relu(self, a: Bf16x2, b: Bf16x2) -> Bf16x2 {
        Bf16x2(intrinsics::bf16x2_fma_relu(self.0, a.0, b.0))
    }

    /// Per-element minimum (`min.bf16x2`).
    #[inline(always)]
    pub fn min(self, other: Bf16x2) -> Bf16x2 {
        Bf16x2(intrinsics::bf16x2_min(self.0, other.0))
    }

    /// Per-element maximum (`max.bf16x2`).
    #[inline(always)]
    pub fn max(self, other: Bf16x2) -> Bf16x2 {
        Bf16x2(intrinsics::bf16x2_max(self.0, other.0))
    }
}

macro_rules! packed_ops {
    ($ty:ident: $(($trait:ident $method:ident $intrinsic:ident))*) => {$(
        impl $trait for $ty {
            type Output = $ty;
            #[inline(always)]
            fn $method(self, rhs: $ty) -> $ty {
                $ty(intrinsics::$intrinsic(self.0, rhs.0))
            }
        }
    )*
        impl Neg for $ty {
            type Output = $ty;
            /// Flips both sign bits (`neg.f16x2` / `neg.bf16x2`).
            #[inline(always)]
            fn neg(self) -> $ty {
                $ty(self.0 ^ 0x8000_8000)
            }
        }
        impl AddAssign for $ty {
            #[inline(always)]
            fn add_assign(&mut self, rhs: $ty) {
                *self = *self + rhs;
            }
        }
        // SAFETY: four bytes, every bit pattern is a value.
        unsafe impl cuda_core::DeviceCopy for $ty {}
    };
}
packed_ops!(F16x2: (Add add f16x2_add) (Sub sub f16x2_sub) (Mul mul f16x2_mul));
packed_ops!(Bf16x2: (Add add bf16x2_add) (Sub sub bf16x2_sub) (Mul mul bf16x2_mul));

impl core::fmt::Debug for F16x2 {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_tuple("F16x2").field(&(self.lo() as f32)).field(&(self.hi() as f32)).finish()
    }
}

impl core::fmt::Debug for Bf16x2 {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_tuple("Bf16x2").field(&self.lo()).field(&self.hi()).finish()
    }
}

/// What the intrinsics compute on the host (their Rust bodies), through `f32`.
pub(crate) mod host {
    /// Round to nearest, ties to even; NaN stays a quiet NaN of the same sign.
    pub fn bf16_from_f32(x: f32) -> u16 {
        let bits = x.to_bits();
        if x.is_nan() {
            return ((bits >> 16) as u16) | 0x0040;
        }
        let round = 0x7fff + ((bits >> 16) & 1);
        (bits.wrapping_add(round) >> 16) as u16
    }

    pub fn bf16_to_f32(b: u16) -> f32 {
        f32::from_bits((b as u32) << 16)
    }

    pub fn f16_from_f32(x: f32) -> u16 {
        (x as f16).to_bits()
    }

    pub fn f16_to_f32(b: u16) -> f32 {
        f16::from_bits(b) as f32
    }

    /// Toward zero: the nearest-even result, one step toward zero when that rounded away.
    pub fn f16_rz_from_f32(x: f32) -> u16 {
        toward_zero(x, f16_from_f32(x), f16_to_f32)
    }

    pub fn bf16_rz_from_f32(x: f32) -> u16 {
        toward_zero(x, bf16_from_f32(x), bf16_to_f32)
    }

    fn toward_zero(x: f32, rn: u16, widen: fn(u16) -> f32) -> u16 {
        if x.is_nan() || widen(rn).abs() <= x.abs() { rn } else { rn - 1 }
    }

    /// TensorFloat-32 (10 mantissa bits) nearest, ties away from zero; NaN and infinity stay.
    pub fn tf32_rna(x: f32) -> u32 {
        let bits = x.to_bits();
        if !x.is_finite() {
            return bits & !0x1fff | if x.is_nan() { 0x0040_0000 } else { 0 };
        }
        bits.wrapping_add(0x1000) & !0x1fff
    }

    /// `.sat`: clamps to [0, 1]; NaN becomes +0.
    pub fn sat(x: f32) -> f32 {
        if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) }
    }

    /// An f16 with a zero exponent field (zero or subnormal) as a zero of the same sign.
    fn f16_ftz(b: u16) -> u16 {
        if b & 0x7c00 == 0 { b & 0x8000 } else { b }
    }

    /// `fma.rn{.ftz}{post}.f16x2`: `ftz` flushes subnormal inputs and results.
    pub fn f16x2_fma_with(a: u32, b: u32, c: u32, ftz: bool, post: fn(f32) -> f32) -> u32 {
        let flush = |x: u16| if ftz { f16_ftz(x) } else { x };
        let (a, b, c) = (lanes(a), lanes(b), lanes(c));
        let r = [0, 1].map(|i| {
            let (x, y, z) = (f16_to_f32(flush(a[i])), f16_to_f32(flush(b[i])), f16_to_f32(flush(c[i])));
            flush(f16_from_f32(post(f16_to_f32(f16_from_f32(x.mul_add(y, z))))))
        });
        pack(r[0], r[1])
    }

    pub fn relu(x: f32) -> f32 {
        if x.is_nan() { x } else { x.max(0.0) }
    }

    pub fn pack(lo: u16, hi: u16) -> u32 {
        lo as u32 | (hi as u32) << 16
    }

    pub fn bf16_op2(a: u16, b: u16, op: impl Fn(f32, f32) -> f32) -> u16 {
        bf16_from_f32(op(bf16_to_f32(a), bf16_to_f32(b)))
    }

    fn lanes(x: u32) -> [u16; 2] {
        [x as u16, (x >> 16) as u16]
    }

    pub fn f16x2_op2(a: u32, b: u32, op: impl Fn(f32, f32) -> f32) -> u32 {
        let (a, b) = (lanes(a), lanes(b));
        let r = [0, 1].map(|i| f16_from_f32(op(f16_to_f32(a[i]), f16_to_f32(b[i]))));
        pack(r[0], r[1])
    }

    pub fn f16x2_op3(a: u32, b: u32, c: u32, op: impl Fn(f32, f32, f32) -> f32) -> u32 {
        let (a, b, c) = (lanes(a), lanes(b), lanes(c));
        let r = [0, 1].map(|i| f16_from_f32(op(f16_to_f32(a[i]), f16_to_f32(b[i]), f16_to_f32(c[i]))));
        pack(r[0], r[1])
    }

    pub fn bf16x2_op2(a: u32, b: u32, op: impl Fn(f32, f32) -> f32) -> u32 {
        let (a, b) = (lanes(a), lanes(b));
        let r = [0, 1].map(|i| bf16_from_f32(op(bf16_to_f32(a[i]), bf16_to_f32(b[i]))));
        pack(r[0], r[1])
    }

    pub fn bf16x2_op3(a: u32, b: u32, c: u32, op: impl Fn(f32, f32, f32) -> f32) -> u32 {
        let (a, b, c) = (lanes(a), lanes(b), lanes(c));
        let r = [0, 1].map(|i| bf16_from_f32(op(bf16_to_f32(a[i]), bf16_to_f32(b[i]), bf16_to_f32(c[i]))));
        pack(r[0], r[1])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bf16_rounds_to_nearest_even() {
        assert_eq!(bf16::from_f32(1.0).to_bits(), 0x3f80);
        // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even (1).
        assert_eq!(bf16::from_f32(1.0 + 1.0 / 256.0).to_bits(), 0x3f80);
        assert_eq!(bf16::from_f32(1.0 + 3.0 / 256.0).to_bits(), 0x3f82);
        assert!(bf16::from_f32(f32::NAN).is_nan());
        assert_eq!(bf16::from_f32(f32::INFINITY), bf16::INFINITY);
        assert_eq!((-bf16::ONE).to_f32(), -1.0);
    }

    #[test]
    fn host_references_of_the_nvidia_named_operations() {
        use super::host::*;
        // 1.0065 rounds up to 0x3c07 at nearest, down toward zero (NVIDIA's cvt_packed values).
        assert_eq!(f16_rz_from_f32(1.0065), 0x3c06);
        assert_eq!(f16_rz_from_f32(-1.0065), 0xbc06);
        assert_eq!(bf16_rz_from_f32(1.0065), 0x3f80);
        assert_eq!(f16_rz_from_f32(1.0e6), 0x7bff, "overflow toward zero gives the largest finite");
        assert_eq!(tf32_rna(f32::from_bits(0x3f80_1000)), 0x3f80_2000, "a tie goes away from zero");
        assert_eq!(tf32_rna(f32::from_bits(0x3f80_0fff)), 0x3f80_0000);
        let (sub, one) = (0x0002_0001, 0x3c00_3c00);
        assert_eq!(f16x2_fma_with(sub, one, 0, false, |x| x), sub, "subnormals kept");
        assert_eq!(f16x2_fma_with(sub, one, 0, true, |x| x), 0, "subnormals flushed");
        assert_eq!(f16x2_fma_with(0x4400_4000, 0x4500_4200, 0x4980_4700, false, sat), one, "13 and 31 clamp to 1");
    }

    #[test]
    fn half_crate_round_trips() {
        let h = ::half::bf16::from_f32(3.25);
        assert_eq!(::half::bf16::from(bf16::from(h)), h);
        let b: bf16 = h.into();
        let back: ::half::bf16 = b.into();
        assert_eq!(back, h);
        let x = f16_from_half(::half::f16::from_f32(-0.5));
        assert_eq!(x as f32, -0.5);
        assert_eq!(f16_to_half(x).to_f32(), -0.5);
    }

    #[test]
    fn half_crate_slices_and_arrays() {
        let hs: [::half::f16; 8] = core::array::from_fn(|i| ::half::f16::from_f32(i as f32 - 3.5));
        let xs = f16_slice_from_half(&hs);
        assert_eq!(xs[0] as f32, -3.5);
        assert_eq!(f16_slice_to_half(xs), &hs[..]);
        let v = F16x8::from(hs);
        assert_eq!(v.to_f32()[7], 3.5);
        assert_eq!(<[::half::f16; 8]>::from(v), hs);
        let bs: [::half::bf16; 2] = [::half::bf16::from_f32(0.75), ::half::bf16::from_f32(-2.0)];
        assert_eq!(bf16_slice_from_half(&bs)[1].to_f32(), -2.0);
        assert_eq!(bf16_slice_to_half(bf16_slice_from_half(&bs)), &bs[..]);
        let pair = Bf16x2::from(bs);
        assert_eq!(pair.to_f32(), (0.75, -2.0));
        assert_eq!(<[::half::bf16; 2]>::from(pair), bs);
        let p = F16x2::from([::half::f16::ONE, ::half::f16::NEG_ONE]);
        assert_eq!(<[::half::f16; 2]>::from(p), [::half::f16::ONE, ::half::f16::NEG_ONE]);
        let b8 = Bf16x8::from([::half::bf16::ONE; 8]);
        assert_eq!(<[::half::bf16; 8]>::from(b8), [::half::bf16::ONE; 8]);
    }

    #[test]
    fn packed_pairs() {
        let p = F16x2::new(1.5, 2.0);
        assert_eq!((p + p).to_f32(), (3.0, 4.0));
        assert_eq!((-p).lo(), -1.5);
        assert_eq!(p.mul_add(p, F16x2::splat(-10.0)).to_f32(), (-7.75, -6.0));
        assert_eq!(p.mul_add_relu(p, F16x2::splat(-3.0)).to_f32(), (0.0, 1.0));
        let b = Bf16x2::from_f32(0.25, -4.0);
        assert_eq!((b * b).to_f32(), (0.0625, 16.0));
        assert_eq!(b.max(Bf16x2::splat(bf16::ZERO)).to_f32(), (0.25, 0.0));
    }
}
