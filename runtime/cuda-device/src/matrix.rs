//! Read-only 2D views of a slice that check their bounds once: [`Matrix::new`] checks that
//! `rows × cols` elements fit, after which an element access only compares `row < rows` and
//! `col < cols` — the same compares as a kernel's edge guard, so the compiler folds them away
//! instead of checking `row * cols + col < len` (which it cannot derive) at every access.
//!
//! ```
//! use cuda_device::matrix::Matrix;
//!
//! let data = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
//! let m = Matrix::new(&data, 2, 3).unwrap();
//! assert_eq!(m.get(1, 2), Some(&6.0));
//! assert_eq!(m.get(2, 0), None);
//! assert_eq!(m.row(0), Some(&data[..3]));
//! // In a kernel: `if x < w && y < h { tile.write(.., m[(y, x)]) }` — the guard is the check.
//! assert_eq!(m[(0, 1)], 2.0);
//! ```

use core::ops::Index;

/// `rows × cols` elements of a slice, row-major, with `pitch` elements between row starts.
#[derive(Clone, Copy, Debug)]
pub struct Matrix<'a, T> {
    data: &'a [T],
    rows: usize,
    cols: usize,
    pitch: usize,
}

impl<'a, T> Matrix<'a, T> {
    /// A view of `data` as `rows × cols`, rows back to back; `None` when it does not fit.
    #[inline(always)]
    pub fn new(data: &'a [T], rows: usize, cols: usize) -> Option<Self> {
        Matrix::with_pitch(data, rows, cols, cols)
    }

    /// A view of `rows × cols` elements whose rows start `pitch` elements apart (`pitch ≥ cols`);
    /// `None` when it does not fit in `data`.
    #[inline(always)]
    pub fn with_pitch(data: &'a [T], rows: usize, cols: usize, pitch: usize) -> Option<Self> {
        let needed = if rows == 0 { 0 } else { (rows - 1).checked_mul(pitch)?.checked_add(cols)? };
        (cols <= pitch && needed <= data.len()).then_some(Matrix { data, rows, cols, pitch })
    }

    #[inline(always)]
    pub fn rows(&self) -> usize {
        self.rows
    }

    #[inline(always)]
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// Element `(row, col)`, or `None` outside the view.
    #[inline(always)]
    pub fn get(&self, row: usize, col: usize) -> Option<&'a T> {
        if row < self.rows && col < self.cols {
            // SAFETY: `new` checked that `(rows - 1) * pitch + cols <= len`.
            Some(unsafe { self.data.get_unchecked(row * self.pitch + col) })
        } else {
            None
        }
    }

    /// Row `row` as a slice, or `None` outside the view.
    #[inline(always)]
    pub fn row(&self, row: usize) -> Option<&'a [T]> {
        if row < self.rows {
            // SAFETY: as in `get`; the row's `cols` elements fit.
            Some(unsafe { self.data.get_unchecked(row * self.pitch..row * self.pitch + self.cols) })
        } else {
            None
        }
    }
}

impl<T> Index<(usize, usize)> for Matrix<'_, T> {
    type Output = T;

    /// Element `(row, col)`; outside the view it panics (traps on the device).
    #[inline(always)]
    fn index(&self, (row, col): (usize, usize)) -> &T {
        match self.get(row, col) {
            Some(v) => v,
            None => out_of_view(row, col),
        }
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn out_of_view(row: usize, col: usize) -> ! {
    panic!("matrix index ({row}, {col}) out of the view")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_check_once_and_per_coordinate() {
        let data: [u32; 10] = core::array::from_fn(|i| i as u32);
        let m = Matrix::with_pitch(&data, 3, 2, 4).unwrap();
        assert_eq!(m.get(2, 1), Some(&9));
        assert_eq!(m.get(1, 2), None);
        assert_eq!(m.row(2), Some(&data[8..10]));
        assert!(Matrix::with_pitch(&data, 3, 3, 4).is_none());
        assert!(Matrix::new(&data, 3, 5).is_none());
        assert!(Matrix::new(&data, usize::MAX, 2).is_none());
        assert_eq!(Matrix::new(&data[..0], 0, 7).map(|m| m.rows()), Some(0));
    }
}
