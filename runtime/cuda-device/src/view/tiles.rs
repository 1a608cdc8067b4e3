//! The views a thread gets of a `DisjointSlice` from its `u32` index of a launch contract: its
//! element, its tile, its run (whole or clipped), its grid-stride runs, its 2D tile.

use super::{
    ConstStride32, InBoundsMut32, LinearTiles, RowMajorTiles, RuntimeRowMajorTiles, RuntimeTileMut32, RuntimeViewMut32,
    StaticTileMut32, StaticViewMut32, Stride32, ThreadRunMut32, TileMut32,
};
use crate::DisjointSlice;
use crate::thread::{Index1D, SpaceLayout, ThreadCoord2D32, ThreadIndex32};

/// The first element and the element count of run `run` (`N` elements each) of a slice of `len`
/// elements, or `None` when the run starts at or past the end.
#[inline(always)]
fn run_bounds<const N: usize>(run: u64, len: usize) -> Option<(usize, u32)> {
    let start = run.checked_mul(N as u64)?;
    let len = len as u64;
    if N == 0 || start >= len {
        return None;
    }
    let count = (len - start).min(N as u64);
    Some((start as usize, count as u32))
}

/// The first element of the `ROWS × COLS` tile at tile coordinates (`row`, `col`) of a row-major
/// matrix `stride` wide in a slice of `len` elements, or `None` when the tile does not fit
/// inside one row band or inside the slice.
#[inline(always)]
fn tile_start<const ROWS: usize, const COLS: usize>(row: u32, col: u32, stride: u64, len: usize) -> Option<usize> {
    if ROWS == 0 || COLS == 0 {
        return None;
    }
    let first_col = u64::from(col).checked_mul(COLS as u64)?;
    if first_col.checked_add(COLS as u64)? > stride {
        return None;
    }
    let first_row = u64::from(row).checked_mul(ROWS as u64)?;
    let start = first_row.checked_mul(stride)?.checked_add(first_col)?;
    let last = (first_row + ROWS as u64 - 1).checked_mul(stride)?.checked_add(first_col + COLS as u64 - 1)?;
    (last < len as u64).then_some(start as usize)
}

impl<'a, T> DisjointSlice<'a, T, Index1D> {
    /// This thread's element, or `None` past the end: one bounds check, then reads and writes
    /// through the proof.
    #[inline(always)]
    pub fn element_thread32(&mut self, thread: ThreadIndex32) -> Option<InBoundsMut32<'_, T>> {
        let index = thread.get() as usize;
        if size_of::<T>() == 0 || index >= self.len() {
            return None;
        }
        // SAFETY: in bounds, and `thread` (from a contracted 1D launch) is this thread's alone.
        Some(unsafe { InBoundsMut32::from_ptr(self.as_mut_ptr().add(index)) })
    }
}

impl<'a, T, const N: usize> DisjointSlice<'a, T, LinearTiles<N>> {
    /// This thread's whole run of `N` elements, or `None` when it does not fit in the slice.
    #[inline(always)]
    pub fn tile_thread32(&mut self, thread: ThreadIndex32) -> Option<StaticViewMut32<'_, T, N>> {
        match run_bounds::<N>(u64::from(thread.get()), self.len()) {
            Some((start, count)) if count as usize == N && size_of::<T>() != 0 => {
                // SAFETY: the N elements are in bounds; run `thread` is this thread's alone.
                Some(unsafe { StaticViewMut32::from_checked_ptr(self.as_mut_ptr().add(start)) })
            }
            _ => None,
        }
    }

    /// This thread's run: whole, or clipped by the end of the slice; `None` past the end.
    #[inline(always)]
    pub fn thread_run32(&mut self, thread: ThreadIndex32) -> Option<ThreadRunMut32<'_, T, N>> {
        let bounds = run_bounds::<N>(u64::from(thread.get()), self.len());
        // SAFETY: `bounds` is in the slice; run `thread` is this thread's alone.
        unsafe { run_view(self.as_mut_ptr(), bounds) }
    }

    /// This thread's runs of a grid-stride loop: run `thread`, then every run a launch's worth of
    /// threads (`gridDim.x * blockDim.x`) further, until the end of the slice.
    ///
    /// ```ignore
    /// let mut runs = data.grid_stride_runs32(thread::index_1d_u32(lc));
    /// while let Some(mut run) = runs.next_run() { /* … */ }
    /// ```
    #[inline(always)]
    pub fn grid_stride_runs32(&mut self, thread: ThreadIndex32) -> GridStrideRuns32<'_, 'a, T, N> {
        let period = u64::from(crate::thread::gridDim_x()) * u64::from(crate::thread::blockDim_x());
        GridStrideRuns32 { slice: self, next: u64::from(thread.get()), period }
    }
}

/// The view of one run (`None` for none).
///
/// # Safety
/// `bounds` lies inside the allocation at `ptr`, and the run belongs to this thread alone.
#[inline(always)]
unsafe fn run_view<'v, T, const N: usize>(
    ptr: *mut T,
    bounds: Option<(usize, u32)>,
) -> Option<ThreadRunMut32<'v, T, N>> {
    let (start, count) = bounds?;
    if size_of::<T>() == 0 {
        return None;
    }
    // SAFETY: forwarded to the caller.
    Some(unsafe {
        if count as usize == N {
            ThreadRunMut32::Full(StaticViewMut32::from_checked_ptr(ptr.add(start)))
        } else {
            ThreadRunMut32::Clipped(RuntimeViewMut32::from_checked_ptr(ptr.add(start), count))
        }
    })
}

/// The runs of one thread's grid-stride loop ([`DisjointSlice::grid_stride_runs32`]).
#[must_use]
pub struct GridStrideRuns32<'s, 'a, T, const N: usize> {
    slice: &'s mut DisjointSlice<'a, T, LinearTiles<N>>,
    next: u64,
    period: u64,
}

impl<'s, 'a, T, const N: usize> GridStrideRuns32<'s, 'a, T, N> {
    /// The next run, or `None` past the end of the slice.
    #[inline(always)]
    pub fn next_run(&mut self) -> Option<ThreadRunMut32<'_, T, N>> {
        if self.period == 0 {
            return None;
        }
        let bounds = run_bounds::<N>(self.next, self.slice.len())?;
        self.next = self.next.checked_add(self.period)?;
        // SAFETY: in bounds; the runs this thread visits are its index modulo the number of
        // threads of the (contracted 1D) launch, which no other thread shares.
        unsafe { run_view(self.slice.as_mut_ptr(), Some(bounds)) }
    }

    /// The number of runs between two of this thread's: the launch's thread count.
    #[inline(always)]
    pub const fn period(&self) -> u64 {
        self.period
    }
}

impl<'a, T, L: SpaceLayout> DisjointSlice<'a, T, L> {
    /// The `ROWS × COLS` tile at `coord` of this slice read as a row-major matrix with rows
    /// `stride` apart, or `None` when it does not fit. Sound only for the tile spaces, whose
    /// `coord` (from a contracted 2D launch) is this thread's alone.
    #[inline(always)]
    fn tile_2d32_strided<const ROWS: usize, const COLS: usize, S: Stride32>(
        &mut self,
        coord: ThreadCoord2D32,
        stride: S,
    ) -> Option<TileMut32<'_, T, ROWS, COLS, S>> {
        if size_of::<T>() == 0 {
            return None;
        }
        let start = tile_start::<ROWS, COLS>(coord.row(), coord.col(), stride.elements() as u64, self.len())?;
        // SAFETY: the whole tile is in bounds and inside one row band; `coord` is this thread's
        // alone (and every thread sees the one stride), so the tile is too.
        Some(unsafe { TileMut32::from_checked_ptr(self.as_mut_ptr().add(start), stride) })
    }
}

impl<'a, T, const ROWS: usize, const COLS: usize, const ROW_STRIDE: usize>
    DisjointSlice<'a, T, RowMajorTiles<ROWS, COLS, ROW_STRIDE>>
{
    /// This thread's `ROWS × COLS` tile (tile row `coord.row()`, tile column `coord.col()`), or
    /// `None` when it does not fit in the matrix.
    #[inline(always)]
    pub fn tile_2d32(&mut self, coord: ThreadCoord2D32) -> Option<StaticTileMut32<'_, T, ROWS, COLS, ROW_STRIDE>> {
        self.tile_2d32_strided(coord, ConstStride32::<ROW_STRIDE>)
    }
}

impl<'a, T, const ROWS: usize, const COLS: usize> DisjointSlice<'a, T, RuntimeRowMajorTiles<ROWS, COLS>> {
    /// The row width the host bound to this slice (`cuda_host::RowWidth`).
    #[inline(always)]
    pub fn row_width(&self) -> u32 {
        self.space_data()
    }

    /// This thread's tile of the matrix whose row width is [`row_width`](Self::row_width), or
    /// `None` when it does not fit.
    #[inline(always)]
    pub fn tile_2d32_rt(&mut self, coord: ThreadCoord2D32) -> Option<RuntimeTileMut32<'_, T, ROWS, COLS>> {
        let stride = self.row_width();
        self.tile_2d32_strided(coord, stride)
    }
}
