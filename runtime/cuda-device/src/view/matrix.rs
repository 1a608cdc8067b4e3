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
        // SAFETY: `start + cols - 1` is below the slice's length.
        Some(RowView32 { ptr: unsafe { self.slice.as_ptr().add(start as usize) }, len: cols, _slice: PhantomData })
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

/// Consecutive elements of one row, all in bounds.
pub struct RowView32<'a, T> {
    ptr: *const T,
    len: u32,
    _slice: PhantomData<&'a [T]>,
}

impl<T> Clone for RowView32<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for RowView32<'_, T> {}

impl<'a, T> RowView32<'a, T> {
    /// A row of no elements (every `get` is `None`).
    #[inline(always)]
    pub const fn empty() -> Self {
        RowView32 { ptr: core::ptr::NonNull::dangling().as_ptr(), len: 0, _slice: PhantomData }
    }

    /// Element `i`, or `None` past the end.
    #[inline(always)]
    pub fn get(&self, i: u32) -> Option<T>
    where
        T: Copy,
    {
        // SAFETY: `i < len`, and the view's `len` elements are in bounds.
        (i < self.len).then(|| unsafe { *self.ptr.add(i as usize) })
    }

    /// The elements in order.
    #[inline(always)]
    pub fn iter(&self) -> RowViewIter32<'a, T> {
        RowViewIter32 { view: *self, next: 0 }
    }

    /// This row and `col` element by element, or `None` when their lengths differ.
    #[inline(always)]
    pub fn zip_exact(self, col: ColView32<'a, T>) -> Option<ZipView32<'a, T>> {
        (self.len == col.len).then_some(ZipView32 { row: self, col, next: 0 })
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

/// Elements of one column, `stride` apart, all in bounds.
pub struct ColView32<'a, T> {
    ptr: *const T,
    len: u32,
    stride: u32,
    _slice: PhantomData<&'a [T]>,
}

impl<T> Clone for ColView32<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for ColView32<'_, T> {}

impl<'a, T> ColView32<'a, T> {
    /// A column of no elements.
    #[inline(always)]
    pub const fn empty() -> Self {
        ColView32 { ptr: core::ptr::NonNull::dangling().as_ptr(), len: 0, stride: 0, _slice: PhantomData }
    }

    /// Element `i` (row `i`), or `None` past the end.
    #[inline(always)]
    pub fn get(&self, i: u32) -> Option<T>
    where
        T: Copy,
    {
        // SAFETY: `i < len`: element `i * stride` is at most the last one, which is in bounds.
        (i < self.len).then(|| unsafe { *self.ptr.add(i as usize * self.stride as usize) })
    }

    /// The elements in order.
    #[inline(always)]
    pub fn iter(&self) -> ColViewIter32<'a, T> {
        ColViewIter32 { view: *self, next: 0 }
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

    /// The distance between two elements.
    #[inline(always)]
    pub const fn stride(&self) -> u32 {
        self.stride
    }
}

/// The elements of a [`RowView32`].
pub struct RowViewIter32<'a, T> {
    view: RowView32<'a, T>,
    next: u32,
}

impl<T: Copy> Iterator for RowViewIter32<'_, T> {
    type Item = T;

    #[inline(always)]
    fn next(&mut self) -> Option<T> {
        let v = self.view.get(self.next)?;
        self.next += 1;
        Some(v)
    }
}

/// The elements of a [`ColView32`].
pub struct ColViewIter32<'a, T> {
    view: ColView32<'a, T>,
    next: u32,
}

impl<T: Copy> Iterator for ColViewIter32<'_, T> {
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
        Some(unsafe { (*self.row.ptr.add(i as usize), *self.col.ptr.add(i as usize * self.col.stride as usize)) })
    }
}
