//! The distance between consecutive rows (or column elements) of a view: a constant that costs
//! nothing at run time, or a `u32` carried in the view. One view type serves both, so each
//! checked accessor is written once.

mod sealed {
    pub trait Sealed {}
}

/// A row stride known at compile time: `N` elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConstStride32<const N: usize>;

/// Where a view's stride comes from: [`ConstStride32`] (compile time) or `u32` (run time).
/// Sealed: the views' safety rests on these two.
pub trait Stride32: sealed::Sealed + Copy {
    /// A stride for a view of no elements, which never uses it.
    const UNUSED: Self;

    /// The stride in elements.
    fn elements(self) -> usize;
}

impl<const N: usize> sealed::Sealed for ConstStride32<N> {}
impl<const N: usize> Stride32 for ConstStride32<N> {
    const UNUSED: Self = ConstStride32;

    #[inline(always)]
    fn elements(self) -> usize {
        N
    }
}

impl sealed::Sealed for u32 {}
impl Stride32 for u32 {
    const UNUSED: Self = 0;

    #[inline(always)]
    fn elements(self) -> usize {
        self as usize
    }
}
