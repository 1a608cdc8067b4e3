//! 8-bit floats, the element types of the fp8 tensor-core products ([`crate::wgmma::mma_e4m3`],
//! [`crate::wgmma::mma_e5m2`]): [`E4M3`] (4 exponent bits, 3 mantissa bits, bias 7, largest
//! finite ±448, no infinities, NaN `0x7f`/`0xff`) and [`E5M2`] (5 exponent bits, 2 mantissa
//! bits, bias 15, largest finite ±57344, IEEE-style infinities and NaNs), CUDA's
//! `__nv_fp8_e4m3` and `__nv_fp8_e5m2`.
//!
//! They are storage types: one byte each, `DeviceCopy`, converted to and from `f32` the way
//! `cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32` does (nearest, ties to even; a finite value or an
//! infinity beyond the largest finite becomes the largest finite of its sign; NaN stays NaN).
//! The conversions are plain integer code, the same on the host (CPU references, filling
//! buffers) and in kernels (any arch). A TMA map moves them as `TmaElement::U8`.
//!
//! ```
//! use cuda_device::fp8::{E4M3, E5M2};
//! assert_eq!(E4M3::from_f32(0.875).to_f32(), 0.875);
//! assert_eq!(E4M3::from_f32(1000.0).to_f32(), 448.0); // saturates
//! assert_eq!(E4M3::from_f32(1.0625).to_f32(), 1.0); // tie to even
//! assert_eq!(E5M2::from_f32(-3.0).to_bits(), 0xc2);
//! assert!(E4M3::from_f32(f32::NAN).to_f32().is_nan());
//! ```

/// An fp8 format: mantissa width, bias, largest finite encoding, canonical NaN, and whether
/// the all-ones exponent holds infinities and NaNs (IEEE style, E5M2) or ordinary values
/// (E4M3, whose only NaN is all ones).
struct Format {
    man: u32,
    bias: i32,
    max_finite: u8,
    nan: u8,
    ieee: bool,
}

const E4M3_FORMAT: Format = Format { man: 3, bias: 7, max_finite: 0x7e, nan: 0x7f, ieee: false };
const E5M2_FORMAT: Format = Format { man: 2, bias: 15, max_finite: 0x7b, nan: 0x7f, ieee: true };

/// `x` rounded to the format (nearest, ties to even, saturating to the largest finite).
const fn encode(x: f32, f: &Format) -> u8 {
    let bits = x.to_bits();
    let sign = ((bits >> 31) as u8) << 7;
    let exp32 = ((bits >> 23) & 0xff) as i32;
    if exp32 == 0xff && bits & 0x7f_ffff != 0 {
        return sign | f.nan;
    }
    if exp32 == 0xff {
        return sign | f.max_finite;
    }
    if exp32 == 0 {
        // Zero or an f32 subnormal: far below half the smallest fp8 subnormal.
        return sign;
    }
    // |x| = sig · 2^(e - 23), sig with its implicit bit. The result's quantum is 2^(E - man)
    // with E = max(e, 1 - bias) (the subnormals share the smallest normal's quantum).
    let sig = (bits & 0x7f_ffff) | 0x80_0000;
    let e = exp32 - 127;
    let min_e = 1 - f.bias;
    let big_e = if e > min_e { e } else { min_e };
    let shift = (big_e - f.man as i32 - (e - 23)) as u32; // at least 23 - man
    let q = if shift >= 32 {
        0
    } else {
        let (whole, rest) = (sig >> shift, sig & ((1u32 << shift) - 1));
        let half = 1u32 << (shift - 1);
        if rest > half || (rest == half && whole & 1 == 1) { whole + 1 } else { whole }
    };
    // Normal: exponent field E + bias, mantissa q - 2^man (a carry of q into 2^(man+1) moves
    // into the exponent by itself); subnormal (E = 1 - bias): q itself.
    let code = (((big_e + f.bias - 1) as u32) << f.man) + q;
    if code > f.max_finite as u32 { sign | f.max_finite } else { sign | code as u8 }
}

/// The exact `f32` of the encoding `b`.
const fn decode(b: u8, f: &Format) -> f32 {
    let (exp, man) = (((b & 0x7f) >> f.man) as u32, (b as u32) & ((1 << f.man) - 1));
    let all_ones = (0x7f >> f.man) as u32;
    let mag = if f.ieee && exp == all_ones {
        if man == 0 { f32::INFINITY } else { f32::NAN }
    } else if !f.ieee && b & 0x7f == 0x7f {
        f32::NAN
    } else if exp == 0 {
        // man · 2^(1 - bias - man), exact in f32.
        man as f32 * f32::from_bits(((127 + 1 - f.bias - f.man as i32) as u32) << 23)
    } else {
        f32::from_bits(((exp as i32 - f.bias + 127) as u32) << 23 | man << (23 - f.man))
    };
    if b & 0x80 != 0 { -mag } else { mag }
}

macro_rules! fp8_type {
    ($(#[$doc:meta])* $name:ident, $format:ident) => {
        $(#[$doc])*
        #[repr(transparent)]
        #[derive(Clone, Copy, Default, PartialEq, Eq)]
        pub struct $name(u8);

        impl $name {
            /// `0.0`.
            pub const ZERO: $name = $name(0);
            /// The largest finite value.
            pub const MAX: $name = $name($format.max_finite);

            /// The value with these bits.
            #[inline(always)]
            pub const fn from_bits(bits: u8) -> $name {
                $name(bits)
            }

            /// The bits of the value.
            #[inline(always)]
            pub const fn to_bits(self) -> u8 {
                self.0
            }

            /// `x` rounded to nearest (ties to even), saturating to ±[`Self::MAX`]; NaN stays NaN.
            #[inline(always)]
            pub const fn from_f32(x: f32) -> $name {
                $name(encode(x, &$format))
            }

            /// The exact `f32` of the same value.
            #[inline(always)]
            pub const fn to_f32(self) -> f32 {
                decode(self.0, &$format)
            }
        }

        impl core::fmt::Debug for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                core::fmt::Debug::fmt(&self.to_f32(), f)
            }
        }

        impl From<$name> for f32 {
            #[inline(always)]
            fn from(x: $name) -> f32 {
                x.to_f32()
            }
        }

        // SAFETY: one byte, every bit pattern is a value.
        unsafe impl cuda_core::DeviceCopy for $name {}
    };
}

fp8_type!(
    /// fp8 E4M3 (`__nv_fp8_e4m3`): 4 exponent bits (bias 7), 3 mantissa bits, finite range
    /// ±448, smallest subnormal 2^-9; no infinities; NaN is `0x7f` / `0xff`.
    E4M3,
    E4M3_FORMAT
);

fp8_type!(
    /// fp8 E5M2 (`__nv_fp8_e5m2`): 5 exponent bits (bias 15), 2 mantissa bits, finite range
    /// ±57344, smallest subnormal 2^-16; infinities `0x7c` / `0xfc`, NaNs above them.
    E5M2,
    E5M2_FORMAT
);

#[cfg(test)]
mod tests {
    use super::*;

    /// Every encoding decodes to a value that encodes back to it (NaNs to the canonical NaN,
    /// E5M2's infinities to its largest finite, as `cvt … .satfinite` does).
    #[test]
    fn round_trips() {
        for b in 0..=255u8 {
            let (x, y) = (E4M3::from_bits(b), E5M2::from_bits(b));
            let back = E4M3::from_f32(x.to_f32()).to_bits();
            assert!(back == b || (x.to_f32().is_nan() && back == (b & 0x80) | 0x7f), "e4m3 {b:#x}");
            let back = E5M2::from_f32(y.to_f32()).to_bits();
            let want = match b & 0x7f {
                0x7c => (b & 0x80) | 0x7b,
                0x7d..=0x7f => (b & 0x80) | 0x7f,
                _ => b,
            };
            assert_eq!(back, want, "e5m2 {b:#x}");
        }
    }

    #[test]
    fn rounds_to_nearest_even_and_saturates() {
        // 1 + 1/16 lies halfway between 1 and 1.125 (E4M3): even is 1.
        assert_eq!(E4M3::from_f32(1.0625).to_f32(), 1.0);
        assert_eq!(E4M3::from_f32(1.1875).to_f32(), 1.25);
        assert_eq!(E4M3::from_f32(1.07).to_f32(), 1.125);
        assert_eq!(E4M3::from_f32(-470.0).to_f32(), -448.0);
        assert_eq!(E4M3::from_f32(f32::INFINITY).to_f32(), 448.0);
        assert_eq!(E5M2::from_f32(1e6).to_f32(), 57344.0);
        // Subnormals: E4M3's quantum there is 2^-9.
        assert_eq!(E4M3::from_f32(3.0 / 512.0).to_bits(), 3);
        assert_eq!(E4M3::from_f32(1.0 / 1024.0).to_bits(), 0); // a tie, to even 0
        assert_eq!(E4M3::from_f32(1.5 / 512.0).to_bits(), 2); // a tie, to even 2
        assert_eq!(E4M3::from_f32(15.9 / 1024.0).to_f32(), 2f32.powi(-6)); // into the normals
        assert_eq!(E5M2::from_f32(2f32.powi(-16)).to_bits(), 1);
        assert_eq!(E4M3::from_f32(-0.0).to_bits(), 0x80);
        assert_eq!(E5M2::from_bits(0xfc).to_f32(), f32::NEG_INFINITY);
    }
}
