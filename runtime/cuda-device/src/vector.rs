//! Vector elements: 8- and 16-byte aligned groups of lanes ([`F32x4`], [`F64x2`], [`U32x4`], …,
//! and eight halves: [`F16x8`], [`Bf16x8`]) that load and store with one access per thread
//! (`ld.global.nc.v4.f32`, `st.global.v4.f32`, `ld.shared.v4.f32`), as CUDA's `float4` does.
//!
//! Use them as slice and `DisjointSlice` elements (`&[F32x4]`, the host passing a
//! `DeviceBuffer<F32x4>`), in `SharedMemory`, or view a scalar slice as vectors with
//! [`as_vectors`] when its length and alignment allow. Lane-wise `+ - *` and [`F32x4::mul_add`]
//! work on whole vectors.
//!
//! ```
//! use cuda_device::vector::{F32x4, as_vectors};
//!
//! let a = F32x4::new([1.0, 2.0, 3.0, 4.0]);
//! assert_eq!((a + a).to_array(), [2.0, 4.0, 6.0, 8.0]);
//! assert_eq!(a.mul_add(a, F32x4::splat(1.0)).w(), 17.0);
//!
//! #[repr(align(16))]
//! struct Aligned([f32; 8]);
//! let data = Aligned([0.0; 8]);
//! assert_eq!(as_vectors::<F32x4>(&data.0).map(|v| v.len()), Some(2));
//! assert!(as_vectors::<F32x4>(&data.0[1..]).is_none()); // misaligned
//! ```
//!
//! ```no_run
//! # use cuda_device::{DisjointSlice, cuda_module, kernel, thread, vector::{F32x4, as_vectors}};
//! #[cuda_module]
//! mod kernels {
//!     use super::*;
//!
//!     /// Four floats per thread: 16-byte loads and stores.
//!     #[kernel]
//!     pub fn vecadd4(a: &[F32x4], b: &[F32x4], mut c: DisjointSlice<F32x4>) {
//!         let idx = thread::index_1d();
//!         let i = idx.get();
//!         if let Some(c4) = c.get_mut(idx) {
//!             *c4 = a[i] + b[i];
//!         }
//!     }
//!
//!     /// A scalar slice viewed as vectors when it is aligned and its length divides.
//!     #[kernel]
//!     pub fn first_lanes(x: &[f32], out: &mut [f32]) {
//!         let i = thread::index_1d().get();
//!         if let Some(x4) = as_vectors::<F32x4>(x) {
//!             if i < x4.len() && i < out.len() {
//!                 out[i] = x4[i].x();
//!             }
//!         }
//!     }
//! }
//! # fn main() {}
//! ```

use core::mem::{align_of, size_of};
use core::ops::{Add, AddAssign, Index, IndexMut, Mul, Sub};

/// Eight halves in 16 bytes (defined with the other half types): `as_vectors::<F16x8>(&[f16])`.
pub use crate::half::{Bf16x8, F16x8};

/// A vector element: `LANES` values of `Elem`, no padding, aligned to its size.
///
/// # Safety
/// `size_of::<Self>() == LANES * size_of::<Elem>()`, `align_of::<Self>() == size_of::<Self>()`,
/// and the lanes are laid out in order like `[Elem; LANES]`.
pub unsafe trait Vector: Copy {
    /// The lane type (`f32` for `F32x4`).
    type Elem: Copy;
    /// Lanes per vector (4 for `F32x4`).
    const LANES: usize;
}

macro_rules! vectors {
    ($( $(#[$doc:meta])* $name:ident($elem:ty; $lanes:literal), align $align:literal, lanes $($lane:ident)*; )*) => {$(
        $(#[$doc])*
        #[repr(C, align($align))]
        #[derive(Clone, Copy, Debug, Default, PartialEq)]
        pub struct $name(pub [$elem; $lanes]);

        // SAFETY: `repr(C)` over `[$elem; $lanes]`, aligned to its size (checked in the tests).
        unsafe impl Vector for $name {
            type Elem = $elem;
            const LANES: usize = $lanes;
        }

        // SAFETY: plain lanes, every bit pattern is a value.
        unsafe impl cuda_core::DeviceCopy for $name {}

        impl $name {
            /// The vector of these lanes.
            #[inline(always)]
            pub const fn new(lanes: [$elem; $lanes]) -> Self {
                $name(lanes)
            }

            /// Every lane `value`.
            #[inline(always)]
            pub const fn splat(value: $elem) -> Self {
                $name([value; $lanes])
            }

            /// The lanes.
            #[inline(always)]
            pub const fn to_array(self) -> [$elem; $lanes] {
                self.0
            }

            /// The lanes as a slice.
            #[inline(always)]
            pub fn as_slice(&self) -> &[$elem] {
                &self.0
            }

            /// The lanes as a mutable slice.
            #[inline(always)]
            pub fn as_mut_slice(&mut self) -> &mut [$elem] {
                &mut self.0
            }

            vectors!(@lanes $elem; 0; $($lane)*);
        }

        impl Index<usize> for $name {
            type Output = $elem;
            #[inline(always)]
            fn index(&self, i: usize) -> &$elem {
                &self.0[i]
            }
        }

        impl IndexMut<usize> for $name {
            #[inline(always)]
            fn index_mut(&mut self, i: usize) -> &mut $elem {
                &mut self.0[i]
            }
        }

        vectors!(@op $name Add add +);
        vectors!(@op $name Sub sub -);
        vectors!(@op $name Mul mul *);

        impl AddAssign for $name {
            #[inline(always)]
            fn add_assign(&mut self, rhs: Self) {
                *self = *self + rhs;
            }
        }
    )*};
    (@lanes $elem:ty; $i:expr; $lane:ident $($rest:ident)*) => {
        #[doc = concat!("Lane ", stringify!($i), ".")]
        #[inline(always)]
        pub const fn $lane(self) -> $elem {
            self.0[$i]
        }
        vectors!(@lanes $elem; $i + 1; $($rest)*);
    };
    (@lanes $elem:ty; $i:expr;) => {};
    (@op $name:ident $trait:ident $method:ident $op:tt) => {
        impl $trait for $name {
            type Output = $name;
            /// Lane by lane.
            #[inline(always)]
            fn $method(self, rhs: $name) -> $name {
                let mut out = self;
                let mut i = 0;
                while i < out.0.len() {
                    out.0[i] = self.0[i] $op rhs.0[i];
                    i += 1;
                }
                out
            }
        }
    };
}

vectors! {
    /// Two `f32` (`float2`), 8-byte aligned.
    F32x2(f32; 2), align 8, lanes x y;
    /// Four `f32` (`float4`), 16-byte aligned.
    F32x4(f32; 4), align 16, lanes x y z w;
    /// Two `f64` (`double2`), 16-byte aligned.
    F64x2(f64; 2), align 16, lanes x y;
    /// Two `i32` (`int2`), 8-byte aligned.
    I32x2(i32; 2), align 8, lanes x y;
    /// Four `i32` (`int4`), 16-byte aligned.
    I32x4(i32; 4), align 16, lanes x y z w;
    /// Two `u32` (`uint2`), 8-byte aligned.
    U32x2(u32; 2), align 8, lanes x y;
    /// Four `u32` (`uint4`), 16-byte aligned.
    U32x4(u32; 4), align 16, lanes x y z w;
}

macro_rules! mul_add {
    ($($name:ident)*) => {$(
        impl $name {
            /// `self * a + b` lane by lane, each one `fma.rn`.
            #[inline(always)]
            pub fn mul_add(self, a: $name, b: $name) -> $name {
                let mut out = b;
                let mut i = 0;
                while i < out.0.len() {
                    out.0[i] = self.0[i].mul_add(a.0[i], b.0[i]);
                    i += 1;
                }
                out
            }
        }
    )*};
}
mul_add!(F32x2 F32x4 F64x2);

/// `slice` as vectors of `V` when its address is aligned for `V` and its length a multiple of
/// `V::LANES`; `None` otherwise (then fall back to scalar code).
#[must_use]
#[inline(always)]
pub fn as_vectors<V: Vector>(slice: &[V::Elem]) -> Option<&[V]> {
    let len = vector_len::<V>(slice.len(), slice.as_ptr() as usize)?;
    // SAFETY: `vector_len` checked alignment and length; `V` is `LANES` elements with no padding.
    Some(unsafe { core::slice::from_raw_parts(slice.as_ptr().cast::<V>(), len) })
}

/// [`as_vectors`] for a mutable slice.
#[must_use]
#[inline(always)]
pub fn as_vectors_mut<V: Vector>(slice: &mut [V::Elem]) -> Option<&mut [V]> {
    let len = vector_len::<V>(slice.len(), slice.as_ptr() as usize)?;
    // SAFETY: as in `as_vectors`; the borrow is unique.
    Some(unsafe { core::slice::from_raw_parts_mut(slice.as_mut_ptr().cast::<V>(), len) })
}

/// Whether [`as_vectors`] succeeds on `slice`.
#[must_use]
#[inline(always)]
pub fn is_viewable<V: Vector>(slice: &[V::Elem]) -> bool {
    vector_len::<V>(slice.len(), slice.as_ptr() as usize).is_some()
}

/// The vectors of a scalar slice as a flat slice of its lanes (always possible).
#[must_use]
#[inline(always)]
pub fn as_lanes<V: Vector>(vectors: &[V]) -> &[V::Elem] {
    // SAFETY: `V` is exactly `LANES` elements in order (the `Vector` contract).
    unsafe { core::slice::from_raw_parts(vectors.as_ptr().cast::<V::Elem>(), vectors.len() * V::LANES) }
}

/// Lane-by-lane access to a [`SharedMemory`](crate::SharedMemory) or
/// [`SharedArray`](crate::SharedArray) of vectors: for tiles that are written one element at a
/// time (a transposed load) and read a whole vector at a time.
pub trait SharedLanes {
    /// The lane type of the array's vectors.
    type Elem;

    /// Element `i` of the array seen as `N * LANES` scalars (bounds-checked).
    ///
    /// # Safety
    /// As for [`SharedMemory::read`](crate::SharedMemory::read).
    unsafe fn read_lane(&self, i: usize) -> Self::Elem;

    /// Writes element `i` of the array seen as `N * LANES` scalars (bounds-checked).
    ///
    /// # Safety
    /// As for [`SharedMemory::write`](crate::SharedMemory::write).
    unsafe fn write_lane(&self, i: usize, value: Self::Elem);
}

macro_rules! shared_lanes {
    ($($array:ident)*) => {$(
        impl<V: Vector, const N: usize, const ALIGN: usize> SharedLanes for crate::$array<V, N, ALIGN> {
            type Elem = V::Elem;

            #[inline(always)]
            unsafe fn read_lane(&self, i: usize) -> V::Elem {
                let lanes = self.as_mut_ptr().cast::<V::Elem>();
                unsafe { crate::intrinsics::shared_index_checked(lanes, i, N * V::LANES).read() }
            }

            #[inline(always)]
            unsafe fn write_lane(&self, i: usize, value: V::Elem) {
                let lanes = self.as_mut_ptr().cast::<V::Elem>();
                unsafe { crate::intrinsics::shared_index_checked(lanes, i, N * V::LANES).write(value) }
            }
        }
    )*};
}
shared_lanes!(SharedMemory SharedArray);

#[inline(always)]
fn vector_len<V: Vector>(elems: usize, addr: usize) -> Option<usize> {
    const { assert!(size_of::<V>() == V::LANES * size_of::<V::Elem>(), "a Vector has no padding") };
    if !elems.is_multiple_of(V::LANES) || !addr.is_multiple_of(align_of::<V>()) {
        return None;
    }
    Some(elems / V::LANES)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contract<V: Vector>() {
        assert_eq!(size_of::<V>(), V::LANES * size_of::<V::Elem>());
        assert_eq!(align_of::<V>(), size_of::<V>());
    }

    #[test]
    fn layouts_keep_the_contract() {
        contract::<F32x2>();
        contract::<F32x4>();
        contract::<F64x2>();
        contract::<I32x2>();
        contract::<I32x4>();
        contract::<U32x2>();
        contract::<U32x4>();
    }

    #[test]
    fn views_need_alignment_and_whole_vectors() {
        let data = [U32x4::splat(7); 3];
        let lanes = as_lanes(&data);
        assert_eq!(lanes.len(), 12);
        assert_eq!(as_vectors::<U32x4>(lanes).map(<[_]>::len), Some(3));
        assert!(as_vectors::<U32x4>(&lanes[..11]).is_none());
        assert!(as_vectors::<U32x4>(&lanes[1..5]).is_none());
        assert_eq!(as_vectors::<U32x2>(&lanes[2..6]).map(<[_]>::len), Some(2));
        assert_eq!(F32x4::new([1.0, 2.0, 3.0, 4.0]).z(), 3.0);
    }
}
