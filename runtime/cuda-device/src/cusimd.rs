//! [`CuSimd<T, N>`]: `N` values of `T` that live in `N` registers of one thread (NVIDIA
//! cuda-oxide's type for the multi-register results of tensor-memory loads and vector moves),
//! with compile-time ([`CuSimd::get`]) and run-time ([`CuSimd::at`], `[i]`) element access.
//!
//! ```
//! use cuda_device::cusimd::{CuSimd, Float4};
//!
//! let v: Float4 = CuSimd::new([1.0, 2.0, 3.0, 4.0]);
//! assert_eq!(v.get::<3>(), 4.0);
//! assert_eq!(v[1] + v.z(), 5.0);
//! assert_eq!(v.hi().xy(), (3.0, 4.0));
//! ```

use core::ops::Index;

/// Element types of a [`CuSimd`]: the register-sized scalars.
pub trait SimdElement: Copy + sealed::Sealed {}

mod sealed {
    pub trait Sealed {}
}

macro_rules! elements {
    ($($t:ty)*) => {$(
        impl sealed::Sealed for $t {}
        impl SimdElement for $t {}
    )*};
}
elements!(f32 f64 u32 i32 u64 i64 u16 i16);

/// `N` values of `T`, held in registers (an array the compiler keeps in registers when the
/// indices are known).
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct CuSimd<T: SimdElement, const N: usize> {
    data: [T; N],
}

impl<T: SimdElement, const N: usize> CuSimd<T, N> {
    /// The values `data`, element 0 first.
    pub const fn new(data: [T; N]) -> Self {
        CuSimd { data }
    }

    /// Element `I`; an `I` out of range does not compile.
    pub const fn get<const I: usize>(&self) -> T {
        const { assert!(I < N, "CuSimd::get::<I>: I is out of range") };
        self.data[I]
    }

    /// Element `i`; panics (traps on the GPU) when `i >= N`.
    pub fn at(&self, i: usize) -> T {
        self.data[i]
    }

    /// The elements as an array.
    pub const fn to_array(self) -> [T; N] {
        self.data
    }

    /// `N`.
    pub const fn len(&self) -> usize {
        N
    }

    /// `N == 0`.
    pub const fn is_empty(&self) -> bool {
        N == 0
    }
}

impl<T: SimdElement, const N: usize> Index<usize> for CuSimd<T, N> {
    type Output = T;

    fn index(&self, i: usize) -> &T {
        &self.data[i]
    }
}

impl<T: SimdElement> CuSimd<T, 2> {
    /// Element 0.
    pub const fn x(&self) -> T {
        self.data[0]
    }
    /// Element 1.
    pub const fn y(&self) -> T {
        self.data[1]
    }
    /// Both elements.
    pub const fn xy(self) -> (T, T) {
        (self.data[0], self.data[1])
    }
}

impl<T: SimdElement> CuSimd<T, 4> {
    /// Element 0.
    pub const fn x(&self) -> T {
        self.data[0]
    }
    /// Element 1.
    pub const fn y(&self) -> T {
        self.data[1]
    }
    /// Element 2.
    pub const fn z(&self) -> T {
        self.data[2]
    }
    /// Element 3.
    pub const fn w(&self) -> T {
        self.data[3]
    }
    /// All four elements.
    pub const fn xyzw(self) -> (T, T, T, T) {
        (self.data[0], self.data[1], self.data[2], self.data[3])
    }
    /// Elements 0 and 1.
    pub const fn lo(&self) -> CuSimd<T, 2> {
        CuSimd::new([self.data[0], self.data[1]])
    }
    /// Elements 2 and 3.
    pub const fn hi(&self) -> CuSimd<T, 2> {
        CuSimd::new([self.data[2], self.data[3]])
    }
}

/// Two `f32`.
pub type Float2 = CuSimd<f32, 2>;
/// Four `f32`.
pub type Float4 = CuSimd<f32, 4>;
/// Two `f64`.
pub type Double2 = CuSimd<f64, 2>;
/// Two `i32`.
pub type Int2 = CuSimd<i32, 2>;
/// Four `i32`.
pub type Int4 = CuSimd<i32, 4>;
/// Two `u32`.
pub type Uint2 = CuSimd<u32, 2>;
/// Four `u32`.
pub type Uint4 = CuSimd<u32, 4>;
