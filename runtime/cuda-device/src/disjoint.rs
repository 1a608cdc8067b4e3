//! `DisjointSlice<T>`: an output slice in which each thread may write only its own element (or
//! its own tile, through the views of [`crate::view`]).

use core::marker::PhantomData;

use crate::thread::{Index1D, IndexFormula, ResolveIndex, Runtime2DIndex, SpaceLayout, ThreadIndex};

mod raw;

/// A device buffer shared by all threads of a launch, each of which gets at most the element at
/// its own [`ThreadIndex`] of index space `S` ([`Index1D`] unless said otherwise:
/// `DisjointSlice<f32, thread::WarpIndex>` is written per warp). The kernel ABI passes it as
/// pointer + length, plus the row width for spaces that carry one ([`Runtime2DIndex`]).
#[repr(C)]
#[cfg_attr(cuda_oxide, oxide::lang = "disjoint_slice")]
pub struct DisjointSlice<'a, T, S: SpaceLayout = Index1D> {
    ptr: *mut T,
    len: usize,
    space: S::Data,
    _elements: PhantomData<&'a mut [T]>,
}

impl<'a, T, S: SpaceLayout> DisjointSlice<'a, T, S> {
    /// Number of elements.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// `true` when the slice has no elements.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The index space's layout data (a row width, or `()`).
    #[inline(always)]
    pub(crate) fn space_data(&self) -> S::Data {
        self.space
    }
}

impl<'a, T, S: ResolveIndex> DisjointSlice<'a, T, S> {
    /// This thread's element, or `None` when its index is past the end (the usual tail guard).
    #[inline(always)]
    pub fn get_mut(&mut self, idx: ThreadIndex<S>) -> Option<&mut T> {
        let i = S::resolve(idx, self.space, self.len)?;
        // SAFETY: `i` is in bounds, and no other thread of the launch holds an index of this
        // space that resolves to it, so this `&mut` is unique.
        Some(unsafe { &mut *self.ptr.add(i) })
    }
}

impl<'a, T, S: IndexFormula + ResolveIndex> DisjointSlice<'a, T, S> {
    /// This thread's element and index in one call (the index from [`crate::thread::index_1d`],
    /// or `index_2d::<S>()` for `Index2D<S>`), or `None` past the end:
    /// `if let Some((y, idx)) = out.get_mut_indexed() { *y = x[idx.get()] }`.
    #[inline(always)]
    pub fn get_mut_indexed(&mut self) -> Option<(&mut T, ThreadIndex<S>)> {
        let idx = S::current()?;
        self.get_mut(idx).map(|element| (element, idx))
    }
}

impl<'a, T> DisjointSlice<'a, T, Runtime2DIndex> {
    /// The row width the host bound to this slice (`cuda_host::RowWidth`).
    #[inline(always)]
    pub fn row_width(&self) -> u32 {
        self.space
    }
}
