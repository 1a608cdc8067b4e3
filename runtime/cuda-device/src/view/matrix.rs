//! Read-only views of a row-major matrix in a `&[T]`: a row or a column checked once, then read
//! without checks, and the two zipped for a dot product.
//!
//! ```ignore
//! let (a, b) = (MatrixView32::new(a, k), MatrixView32::new(b, n));
//! if let Some(row) = a.row(r, k) && let Some(col) = b.col(c, k) && let Some(pairs) = row.zip_exact(col) {
//!     let dot: f32 = pairs.map(|(x, y)| x * y).sum();
//! }
//! ```

use core::marker::PhantomData;

use super::{ConstStride32, Stride32};

/// A row-major matrix `stride` elements wide over a slice.
pub struct MatrixView32<'a, T> {
    slice: &'a [T],
    stride: u32,
}

impl<T> Clone for MatrixView32<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for MatrixView32<'_, T> {}

impl<'a, T> MatrixView32<'a, T> {
    /// The matrix in `slice` whose rows are `stride` elements apart.
    #[inline(always)]
    pub fn new(slice: &'a [T], stride: u32) -> Self {
        MatrixView32 { slice, stride }
    }

    /// The first `cols` elements of row `row`, or `None` when `cols` is 0 or wider than the
    /// matrix, or the row is past the slice.
    #[inline(always)]
    pub fn row(&self, row: u32, cols: u32) -> Option<RowView32<'a, T>> {
        if cols == 0 || cols > self.stride {
            return None;
        }
        let start = u64::from(row) * u64::from(self.stride);
        let last = start + u64::from(cols) - 1;
        if last >= self.slice.len() as u64 {
            return None;
        }
        Some(RowView32 {
            // SAFETY: `start + cols - 1` is below the slice's length.
            ptr: unsafe { self.slice.as_ptr().add(start as usize) },
            len: cols,
            stride: ConstStride32,
            _slice: PhantomData,
        })
    }

    /// The first `rows` elements of column `col`, or `None` when `rows` is 0, the column is past
    /// the matrix's width, or the last of them is past the slice.
    #[inline(always)]
    pub fn col(&self, col: u32, rows: u32) -> Option<ColView32<'a, T>> {
        if rows == 0 || col >= self.stride {
            return None;
        }
        let last = u64::from(rows - 1) * u64::from(self.stride) + u64::from(col);
        if last >= self.slice.len() as u64 {
            return None;
        }
        Some(ColView32 {
            // SAFETY: `col` is below `last`, itself below the slice's length.
            ptr: unsafe { self.slice.as_ptr().add(col as usize) },
            len: rows,
            stride: self.stride,
            _slice: PhantomData,
        })
    }

    /// The row width.
    #[inline(always)]
    pub const fn stride(&self) -> u32 {
        self.stride
    }

    /// The number of elements of the slice.
    #[inline(always)]
    pub const fn len(&self) -> usize {
        self.slice.len()
    }

    /// `len() == 0`.
    #[inline(always)]
    pub const fn is_empty(&self) -> bool {
        self.slice.is_empty()
    }
}

/// Elements of one row or column, `S` apart, all in bounds: [`RowView32`] (consecutive) or
/// [`ColView32`] (a row width apart).
pub struct LineView32<'a, T, S: Stride32> {
    ptr: *const T,
    len: u32,
    stride: S,
    _slice: PhantomData<&'a [T]>,
}

/// Consecutive elements of one row, all in bounds.
pub type RowView32<'a, T> = LineView32<'a, T, ConstStride32<1>>;

/// Elements of one column, `stride` apart, all in bounds.
pub type ColView32<'a, T> = LineView32<'a, T, u32>;

impl<T, S: Stride32> Clone for LineView32<'_, T, S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T, S: Stride32> Copy for LineView32<'_, T, S> {}

impl<'a, T, S: Stride32> LineView32<'a, T, S> {
    /// A view of no elements (every `get` is `None`).
    #[inline(always)]
    pub const fn empty() -> Self {
        LineView32 { ptr: core::ptr::NonNull::dangling().as_ptr(), len: 0, stride: S::UNUSED, _slice: PhantomData }
    }

    /// Element `i`, or `None` past the end.
    #[inline(always)]
    pub fn get(&self, i: u32) -> Option<T>
    where
        T: Copy,
    {
        // SAFETY: `i < len`: element `i * stride` is at most the last one, which is in bounds.
        (i < self.len).then(|| unsafe { self.get_unchecked(i) })
    }

    /// Element `i`, unchecked.
    ///
    /// # Safety
    /// `i < len`.
    #[inline(always)]
    unsafe fn get_unchecked(&self, i: u32) -> T
    where
        T: Copy,
    {
        unsafe { *self.ptr.add(i as usize * self.stride.elements()) }
    }

    /// The elements in order.
    #[inline(always)]
    pub fn iter(&self) -> LineViewIter32<'a, T, S> {
        LineViewIter32 { view: *self, next: 0 }
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

impl<'a, T> RowView32<'a, T> {
    /// This row and `col` element by element, or `None` when their lengths differ.
    #[inline(always)]
    pub fn zip_exact(self, col: ColView32<'a, T>) -> Option<ZipView32<'a, T>> {
        (self.len == col.len).then_some(ZipView32 { row: self, col, next: 0 })
    }
}

impl<T> ColView32<'_, T> {
    /// The distance between two elements.
    #[inline(always)]
    pub const fn stride(&self) -> u32 {
        self.stride
    }
}

/// The elements of a [`LineView32`] in order.
pub struct LineViewIter32<'a, T, S: Stride32> {
    view: LineView32<'a, T, S>,
    next: u32,
}

/// The elements of a [`RowView32`].
pub type RowViewIter32<'a, T> = LineViewIter32<'a, T, ConstStride32<1>>;

/// The elements of a [`ColView32`].
pub type ColViewIter32<'a, T> = LineViewIter32<'a, T, u32>;

impl<T: Copy, S: Stride32> Iterator for LineViewIter32<'_, T, S> {
    type Item = T;

    #[inline(always)]
    fn next(&mut self) -> Option<T> {
        let v = self.view.get(self.next)?;
        self.next += 1;
        Some(v)
    }
}

/// A row and a column of equal length, element by element ([`RowView32::zip_exact`]).
pub struct ZipView32<'a, T> {
    row: RowView32<'a, T>,
    col: ColView32<'a, T>,
    next: u32,
}

impl<T: Copy> Iterator for ZipView32<'_, T> {
    type Item = (T, T);

    #[inline(always)]
    fn next(&mut self) -> Option<(T, T)> {
        let i = self.next;
        if i >= self.row.len {
            return None;
        }
        self.next += 1;
        // SAFETY: `i` is below both lengths (equal by construction).
        Some(unsafe { (self.row.get_unchecked(i), self.col.get_unchecked(i)) })
    }
}
