//! 16-byte vectors of halves, [`F16x8`] and [`Bf16x8`]: eight values loaded or stored with one
//! access (`ld.global.nc.v4.b32`), computed on as four packed pairs (`fma.rn.f16x2`, …).

use core::ops::{Add, AddAssign, Index, IndexMut, Mul, Neg, Sub};

use super::{Bf16x2, F16x2, bf16};
use crate::vector::Vector;

// Lane `2k` is the low half of pair `k` and comes first in memory: the `Vector` layout holds on
// little-endian targets, which the host (x86-64, aarch64) and NVPTX are.
const _: () = assert!(cfg!(target_endian = "little"), "half vectors assume little-endian lanes");

macro_rules! half_vectors {
    ($( $(#[$doc:meta])* $name:ident: $elem:ident in $pair:ident; )*) => {$(
        $(#[$doc])*
        #[repr(C, align(16))]
        #[derive(Clone, Copy, Default, PartialEq, Eq)]
        pub struct $name([$pair; 4]);

        // SAFETY: four 4-byte pairs, each two lanes low half first: eight `$elem` in order, no
        // padding, aligned to its size of 16 (checked in the tests).
        unsafe impl Vector for $name {
            type Elem = $elem;
            const LANES: usize = 8;
        }

        // SAFETY: sixteen bytes, every bit pattern is a value.
        unsafe impl cuda_core::DeviceCopy for $name {}

        impl $name {
            /// The vector of these lanes.
            #[inline(always)]
            pub fn new(lanes: [$elem; 8]) -> $name {
                let [a, b, c, d, e, f, g, h] = lanes;
                $name([$pair::new(a, b), $pair::new(c, d), $pair::new(e, f), $pair::new(g, h)])
            }

            /// Every lane `value`.
            #[inline(always)]
            pub fn splat(value: $elem) -> $name {
                $name([$pair::splat(value); 4])
            }

            /// The vector of four packed pairs: lanes `2k` and `2k + 1` are pair `k`'s low and
            /// high halves.
            #[inline(always)]
            pub const fn from_pairs(pairs: [$pair; 4]) -> $name {
                $name(pairs)
            }

            /// The four packed pairs (see [`from_pairs`](Self::from_pairs)).
            #[inline(always)]
            pub const fn pairs(self) -> [$pair; 4] {
                self.0
            }

            /// The lanes.
            #[inline(always)]
            pub fn to_array(self) -> [$elem; 8] {
                let p = self.0;
                [p[0].lo(), p[0].hi(), p[1].lo(), p[1].hi(), p[2].lo(), p[2].hi(), p[3].lo(), p[3].hi()]
            }

            /// Eight `f32` rounded to nearest-even halves, two per conversion instruction.
            #[inline(always)]
            pub fn from_f32(x: [f32; 8]) -> $name {
                $name([
                    $pair::from_f32(x[0], x[1]),
                    $pair::from_f32(x[2], x[3]),
                    $pair::from_f32(x[4], x[5]),
                    $pair::from_f32(x[6], x[7]),
                ])
            }

            /// The lanes as `f32` (exact).
            #[inline(always)]
            pub fn to_f32(self) -> [f32; 8] {
                let mut out = [0.0; 8];
                let mut k = 0;
                while k < 4 {
                    let (lo, hi) = self.0[k].to_f32();
                    out[2 * k] = lo;
                    out[2 * k + 1] = hi;
                    k += 1;
                }
                out
            }

            /// The lanes as a slice.
            #[inline(always)]
            pub fn as_slice(&self) -> &[$elem] {
                // SAFETY: eight lanes in order (the `Vector` layout above).
                unsafe { core::slice::from_raw_parts((self as *const $name).cast::<$elem>(), 8) }
            }

            /// The lanes as a mutable slice.
            #[inline(always)]
            pub fn as_mut_slice(&mut self) -> &mut [$elem] {
                // SAFETY: as in `as_slice`; the borrow is unique.
                unsafe { core::slice::from_raw_parts_mut((self as *mut $name).cast::<$elem>(), 8) }
            }

            /// `self * a + b` lane by lane with one rounding each: four packed fmas.
            #[inline(always)]
            pub fn mul_add(self, a: $name, b: $name) -> $name {
                self.zip(a, b, $pair::mul_add)
            }

            /// Lane-wise minimum (four packed `min`).
            #[inline(always)]
            pub fn min(self, other: $name) -> $name {
                self.zip(other, other, |x, y, _| x.min(y))
            }

            /// Lane-wise maximum (four packed `max`).
            #[inline(always)]
            pub fn max(self, other: $name) -> $name {
                self.zip(other, other, |x, y, _| x.max(y))
            }

            /// `op` on each pair of `self`, `a` and `b`.
            #[inline(always)]
            fn zip(self, a: $name, b: $name, op: impl Fn($pair, $pair, $pair) -> $pair) -> $name {
                let (s, a, b) = (self.0, a.0, b.0);
                $name([op(s[0], a[0], b[0]), op(s[1], a[1], b[1]), op(s[2], a[2], b[2]), op(s[3], a[3], b[3])])
            }
        }

        impl Index<usize> for $name {
            type Output = $elem;
            /// Lane `i` (out of range panics, like an array's index).
            #[inline(always)]
            fn index(&self, i: usize) -> &$elem {
                &self.as_slice()[i]
            }
        }

        impl IndexMut<usize> for $name {
            #[inline(always)]
            fn index_mut(&mut self, i: usize) -> &mut $elem {
                &mut self.as_mut_slice()[i]
            }
        }

        half_vectors!(@op $name $pair Add add);
        half_vectors!(@op $name $pair Sub sub);
        half_vectors!(@op $name $pair Mul mul);

        impl AddAssign for $name {
            #[inline(always)]
            fn add_assign(&mut self, rhs: $name) {
                *self = *self + rhs;
            }
        }

        impl Neg for $name {
            type Output = $name;
            /// Flips every sign bit.
            #[inline(always)]
            fn neg(self) -> $name {
                $name(self.0.map(|p| -p))
            }
        }

        impl core::fmt::Debug for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.debug_tuple(stringify!($name)).field(&self.to_f32()).finish()
            }
        }
    )*};
    (@op $name:ident $pair:ident $trait:ident $method:ident) => {
        impl $trait for $name {
            type Output = $name;
            /// Lane by lane, one packed instruction per pair.
            #[inline(always)]
            fn $method(self, rhs: $name) -> $name {
                self.zip(rhs, rhs, |x, y, _| $trait::$method(x, y))
            }
        }
    };
}

half_vectors! {
    /// Eight `f16` in 16 bytes, 16-byte aligned: one `ld.global.nc.v4.b32` loads them, and the
    /// arithmetic runs on four [`F16x2`] pairs. `as_vectors::<F16x8>(&[f16])` views a half slice
    /// as these.
    F16x8: f16 in F16x2;
    /// Eight [`bf16`] in 16 bytes, 16-byte aligned, computed on as four [`Bf16x2`] pairs;
    /// `as_vectors::<Bf16x8>(&[bf16])` views a bf16 slice as these.
    Bf16x8: bf16 in Bf16x2;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vector::{as_lanes, as_vectors};
    use core::mem::{align_of, size_of};

    #[test]
    fn layouts_keep_the_vector_contract() {
        assert_eq!((size_of::<F16x8>(), align_of::<F16x8>()), (16, 16));
        assert_eq!((size_of::<Bf16x8>(), align_of::<Bf16x8>()), (16, 16));
        let lanes: [f16; 8] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0];
        let v = F16x8::new(lanes);
        assert_eq!(as_lanes(core::slice::from_ref(&v)), &lanes[..], "lanes in memory order");
        assert_eq!(v.to_array(), lanes);
        assert_eq!(v[5], 6.0);
        assert_eq!(v.pairs()[2].to_f32(), (5.0, 6.0));
    }

    #[test]
    fn half_slices_view_as_vectors() {
        #[repr(align(16))]
        struct Aligned([bf16; 24]);
        let data = Aligned([bf16::ONE; 24]);
        assert_eq!(as_vectors::<Bf16x8>(&data.0).map(<[_]>::len), Some(3));
        assert!(as_vectors::<Bf16x8>(&data.0[1..17]).is_none(), "misaligned");
        assert!(as_vectors::<Bf16x8>(&data.0[..12]).is_none(), "not whole vectors");
    }

    #[test]
    fn arithmetic_is_lane_by_lane() {
        let a = F16x8::from_f32([1.0, -2.0, 0.5, 4.0, 8.0, -0.25, 3.0, 0.0]);
        let b = F16x8::splat(2.0);
        assert_eq!((a * b + a).to_f32(), [3.0, -6.0, 1.5, 12.0, 24.0, -0.75, 9.0, 0.0]);
        assert_eq!(a.mul_add(b, -a).to_f32(), a.to_f32());
        assert_eq!(a.max(F16x8::splat(0.0)).to_f32(), [1.0, 0.0, 0.5, 4.0, 8.0, 0.0, 3.0, 0.0]);
        let c = Bf16x8::from_f32([1.5, 2.0, -3.0, 0.125, 1.0, 2.0, 3.0, 4.0]);
        assert_eq!((c - c).to_f32(), [0.0; 8]);
        assert_eq!(c.mul_add(c, Bf16x8::splat(bf16::ONE)).to_f32(), [3.25, 5.0, 10.0, 1.015625, 2.0, 5.0, 10.0, 17.0]);
        assert_eq!((-c).min(c)[2].to_f32(), -3.0);
    }
}
