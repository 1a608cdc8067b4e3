//! Proof-carrying views in 32-bit arithmetic: element, tile and run views of a [`DisjointSlice`](crate::DisjointSlice)
//! handed to one thread after one up-front range check (whose elements it then reads and writes
//! without further checks), and read-only row and column views of a matrix in a `&[T]`.
//!
//! The tile spaces ([`LinearTiles`], [`RowMajorTiles`], [`RuntimeRowMajorTiles`]) are index
//! spaces of `DisjointSlice`; their views take the `u32` thread indices of a launch contract
//! (`thread::index_1d_u32`, `thread::coord_2d_u32`), which are unique per thread, so the views of
//! two threads never overlap.
//!
//! ```ignore
//! #[kernel(launch_context = lc)]
//! #[launch_contract(domain = 1, coordinates = u32, block = (64, 1, 1))]
//! pub fn add_lanes(mut v: DisjointSlice<u32, LinearTiles<4>>) {
//!     if let Some(mut tile) = v.tile_thread32(thread::index_1d_u32(lc)) {
//!         let x = tile.at_const::<0>().read();
//!         tile.at_const::<0>().write(x + 1);
//!     }
//! }
//! ```

use core::marker::PhantomData;

use crate::thread::SpaceLayout;
use crate::thread::space_sealed as sealed;

mod matrix;
mod stride;
mod tiles;

pub use matrix::{
    ColView32, ColViewIter32, LineView32, LineViewIter32, MatrixView32, RowView32, RowViewIter32, ZipView32,
};
pub use stride::{ConstStride32, Stride32};
pub use tiles::GridStrideRuns32;

/// A slice cut into runs of `N` consecutive elements, run `i` owned by thread `i`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinearTiles<const N: usize> {}

/// A row-major matrix `ROW_STRIDE` elements wide cut into `ROWS × COLS` tiles; tile (r, c) is
/// owned by the thread at (row r, column c) of a 2D launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowMajorTiles<const ROWS: usize, const COLS: usize, const ROW_STRIDE: usize> {}

/// [`RowMajorTiles`] whose row width the host binds to the slice (`cuda_host::RowWidth`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuntimeRowMajorTiles<const ROWS: usize, const COLS: usize> {}

impl<const N: usize> sealed::Sealed for LinearTiles<N> {}
impl<const N: usize> SpaceLayout for LinearTiles<N> {
    type Data = ();
}
impl<const R: usize, const C: usize, const S: usize> sealed::Sealed for RowMajorTiles<R, C, S> {}
impl<const R: usize, const C: usize, const S: usize> SpaceLayout for RowMajorTiles<R, C, S> {
    type Data = ();
}
impl<const R: usize, const C: usize> sealed::Sealed for RuntimeRowMajorTiles<R, C> {}
impl<const R: usize, const C: usize> SpaceLayout for RuntimeRowMajorTiles<R, C> {
    type Data = u32;
}

/// An index below `N`, checked once: `LocalIndex32::<4>::new(i)?`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LocalIndex32<const N: usize>(u32);

impl<const N: usize> LocalIndex32<N> {
    /// `Some` when `raw < N`.
    #[inline(always)]
    pub const fn new(raw: u32) -> Option<Self> {
        if (raw as usize) < N { Some(LocalIndex32(raw)) } else { None }
    }

    /// The constant index `I`, checked at compile time.
    #[inline(always)]
    pub const fn constant<const I: u32>() -> Self {
        const { assert!((I as usize) < N, "LocalIndex32: the index is not below N") };
        LocalIndex32(I)
    }

    /// The index.
    #[inline(always)]
    pub const fn get(&self) -> u32 {
        self.0
    }
}

/// A shared reference to one element that a view proved in bounds.
pub struct InBounds32<'a, T>(&'a T);

impl<'a, T> InBounds32<'a, T> {
    /// The element.
    #[inline(always)]
    pub fn get(&self) -> &T {
        self.0
    }

    /// A copy of the element.
    #[inline(always)]
    pub fn read(&self) -> T
    where
        T: Copy,
    {
        *self.0
    }
}

/// Exclusive access to one element that a view proved in bounds and owned by this thread.
pub struct InBoundsMut32<'a, T>(&'a mut T);

impl<'a, T> InBoundsMut32<'a, T> {
    /// # Safety
    /// `ptr` is valid for reads and writes, and nothing else accesses it during `'a`.
    #[inline(always)]
    pub(crate) unsafe fn from_ptr(ptr: *mut T) -> Self {
        InBoundsMut32(unsafe { &mut *ptr })
    }

    /// The element.
    #[inline(always)]
    pub fn get(&self) -> &T {
        self.0
    }

    /// The element, mutably.
    #[inline(always)]
    pub fn get_mut(&mut self) -> &mut T {
        self.0
    }

    /// A copy of the element.
    #[inline(always)]
    pub fn read(&self) -> T
    where
        T: Copy,
    {
        *self.0
    }

    /// Overwrites the element.
    #[inline(always)]
    pub fn write(&mut self, value: T) {
        *self.0 = value;
    }
}

/// `N` consecutive elements owned by this thread.
pub struct StaticViewMut32<'a, T, const N: usize> {
    ptr: *mut T,
    _elements: PhantomData<&'a mut [T; N]>,
}

impl<'a, T, const N: usize> StaticViewMut32<'a, T, N> {
    /// # Safety
    /// `ptr..ptr + N` is valid and owned by this thread during `'a`.
    #[inline(always)]
    pub(crate) unsafe fn from_checked_ptr(ptr: *mut T) -> Self {
        StaticViewMut32 { ptr, _elements: PhantomData }
    }

    /// The first `N` elements of `slice`, or `None` when it is shorter.
    #[inline(always)]
    pub fn from_slice(slice: &'a mut [T]) -> Option<Self> {
        (slice.len() >= N).then_some(StaticViewMut32 { ptr: slice.as_mut_ptr(), _elements: PhantomData })
    }

    /// Element `index`.
    #[inline(always)]
    pub fn at(&mut self, index: LocalIndex32<N>) -> InBoundsMut32<'_, T> {
        // SAFETY: `index < N` and the view owns N elements.
        unsafe { InBoundsMut32::from_ptr(self.ptr.add(index.get() as usize)) }
    }

    /// Element `I`, checked against `N` at compile time: `tile.at_const::<0>().read()`.
    #[inline(always)]
    pub fn at_const<const I: u32>(&mut self) -> InBoundsMut32<'_, T> {
        self.at(LocalIndex32::constant::<I>())
    }

    /// `N`.
    #[inline(always)]
    pub const fn len(&self) -> u32 {
        N as u32
    }

    /// `N == 0`.
    #[inline(always)]
    pub const fn is_empty(&self) -> bool {
        N == 0
    }
}

/// Up to `u32::MAX` consecutive elements owned by this thread, their number known at run time.
pub struct RuntimeViewMut32<'a, T> {
    ptr: *mut T,
    len: u32,
    _elements: PhantomData<&'a mut [T]>,
}

impl<'a, T> RuntimeViewMut32<'a, T> {
    /// # Safety
    /// `ptr..ptr + len` is valid and owned by this thread during `'a`.
    #[inline(always)]
    pub(crate) unsafe fn from_checked_ptr(ptr: *mut T, len: u32) -> Self {
        RuntimeViewMut32 { ptr, len, _elements: PhantomData }
    }

    /// Element `index`, or `None` past the end.
    #[inline(always)]
    pub fn at(&mut self, index: u32) -> Option<InBoundsMut32<'_, T>> {
        // SAFETY: `index < len` and the view owns `len` elements.
        (index < self.len).then(|| unsafe { InBoundsMut32::from_ptr(self.ptr.add(index as usize)) })
    }

    /// The number of elements.
    #[inline(always)]
    pub const fn len(&self) -> u32 {
        self.len
    }

    /// `len() == 0`.
    #[inline(always)]
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// One thread's run of a [`LinearTiles<N>`] slice: all `N` elements, or the shorter tail of the
/// slice (clipped).
pub enum ThreadRunMut32<'a, T, const N: usize> {
    /// A whole run of `N` elements.
    Full(StaticViewMut32<'a, T, N>),
    /// The last run, cut short by the end of the slice.
    Clipped(RuntimeViewMut32<'a, T>),
}

impl<'a, T, const N: usize> ThreadRunMut32<'a, T, N> {
    /// `N` for a whole run, what is left of the slice for a clipped one.
    #[inline(always)]
    pub fn len(&self) -> u32 {
        match self {
            ThreadRunMut32::Full(v) => v.len(),
            ThreadRunMut32::Clipped(v) => v.len(),
        }
    }

    /// `len() == 0`.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `true` for the run cut short by the end of the slice.
    #[inline(always)]
    pub fn is_clipped(&self) -> bool {
        matches!(self, ThreadRunMut32::Clipped(_))
    }

    /// Element `index` of the run, or `None` past its end.
    #[inline(always)]
    pub fn at(&mut self, index: u32) -> Option<InBoundsMut32<'_, T>> {
        match self {
            ThreadRunMut32::Full(v) => LocalIndex32::new(index).map(|i| v.at(i)),
            ThreadRunMut32::Clipped(v) => v.at(index),
        }
    }
}

/// A `ROWS × COLS` tile of a row-major matrix whose rows are `S` apart, owned by this thread:
/// [`StaticTileMut32`] (row width known at compile time) or [`RuntimeTileMut32`] (at run time).
pub struct TileMut32<'a, T, const ROWS: usize, const COLS: usize, S: Stride32> {
    ptr: *mut T,
    stride: S,
    _elements: PhantomData<&'a mut [T]>,
}

/// A `ROWS × COLS` tile of a row-major matrix `ROW_STRIDE` wide, owned by this thread.
pub type StaticTileMut32<'a, T, const ROWS: usize, const COLS: usize, const ROW_STRIDE: usize> =
    TileMut32<'a, T, ROWS, COLS, ConstStride32<ROW_STRIDE>>;

/// A `ROWS × COLS` tile of a row-major matrix whose row width is known at run time.
pub type RuntimeTileMut32<'a, T, const ROWS: usize, const COLS: usize> = TileMut32<'a, T, ROWS, COLS, u32>;

impl<'a, T, const ROWS: usize, const COLS: usize, S: Stride32> TileMut32<'a, T, ROWS, COLS, S> {
    /// # Safety
    /// Every element of the tile at `ptr` with rows `stride` apart is valid and owned by this
    /// thread during `'a`.
    #[inline(always)]
    pub(crate) unsafe fn from_checked_ptr(ptr: *mut T, stride: S) -> Self {
        TileMut32 { ptr, stride, _elements: PhantomData }
    }

    /// The element at (`row`, `col`) of the tile.
    #[inline(always)]
    pub fn at(&mut self, row: LocalIndex32<ROWS>, col: LocalIndex32<COLS>) -> InBoundsMut32<'_, T> {
        let offset = row.get() as usize * self.stride.elements() + col.get() as usize;
        // SAFETY: row < ROWS and col < COLS: the element is inside the owned tile.
        unsafe { InBoundsMut32::from_ptr(self.ptr.add(offset)) }
    }

    /// The element at (`ROW`, `COL`), checked at compile time: `tile.at_const::<0, 1>().read()`.
    #[inline(always)]
    pub fn at_const<const ROW: u32, const COL: u32>(&mut self) -> InBoundsMut32<'_, T> {
        self.at(LocalIndex32::constant::<ROW>(), LocalIndex32::constant::<COL>())
    }

    /// `ROWS`.
    #[inline(always)]
    pub const fn rows(&self) -> u32 {
        ROWS as u32
    }

    /// `COLS`.
    #[inline(always)]
    pub const fn cols(&self) -> u32 {
        COLS as u32
    }
}

impl<T, const ROWS: usize, const COLS: usize> RuntimeTileMut32<'_, T, ROWS, COLS> {
    /// The row width of the matrix.
    #[inline(always)]
    pub const fn stride(&self) -> u32 {
        self.stride
    }
}
