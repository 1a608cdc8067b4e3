//! Index spaces: the type parameter of [`ThreadIndex`] and of [`DisjointSlice`] that says what an
//! index counts, so that a slice indexed per warp cannot be given a per-thread index (or a 2D
//! index of another row length). [`index_2d`]`::<ROW_STRIDE>()`, [`warp_index`] and
//! [`index_2d_runtime`] make indices of their spaces.

use super::{ThreadIndex, blockDim_x, blockDim_y, blockDim_z, gridDim_y, gridDim_z};
use crate::DisjointSlice;
use crate::intrinsics;

pub(crate) mod sealed {
    pub trait Sealed {}
}

/// An index space, and the layout data a [`DisjointSlice`] of it carries at run time: `()` for
/// spaces whose geometry is in the type (the kernel ABI passes pointer + length), `u32` for those
/// with a row width the host binds to the slice (`cuda_host::RowWidth`; pointer + length + width).
pub trait SpaceLayout: sealed::Sealed {
    /// What the slice carries beside its pointer and length.
    type Data: Copy;
}

/// Index spaces whose indices are plain element numbers (`ThreadIndex::get`).
pub trait FlatIndexSpace: SpaceLayout<Data = ()> {}

/// Index spaces whose index a thread can make from the hardware registers alone:
/// `DisjointSlice::get_mut_indexed` mints it.
pub trait IndexFormula: FlatIndexSpace + Sized {
    /// This thread's index, or `None` when the launch gives it none.
    fn current() -> Option<ThreadIndex<Self>>;
}

/// How a slice of a space turns one of its indices into an element number.
pub trait ResolveIndex: SpaceLayout + Sized {
    /// The element `idx` names in a slice of `len` elements carrying `data`, if in bounds.
    fn resolve(idx: ThreadIndex<Self>, data: Self::Data, len: usize) -> Option<usize>;
}

/// Threads of a launch, one index each ([`super::index_1d`]).
///
/// ```ignore
/// let idx: ThreadIndex<Index1D> = thread::index_1d();
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Index1D {}

/// Elements of a row-major matrix `ROW_STRIDE` columns wide, one per thread of a 2D launch:
/// `row * ROW_STRIDE + col` ([`index_2d`]).
///
/// ```ignore
/// let idx: Option<ThreadIndex<Index2D<64>>> = thread::index_2d::<64>();
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Index2D<const ROW_STRIDE: usize> {}

/// Warps of a 1D launch, `blockIdx.x * ceil(blockDim.x / 32) + threadIdx.x / 32`, held by lane 0
/// of each warp ([`warp_index`]).
///
/// ```ignore
/// if let Some(w) = thread::warp_index() { sums[w.get()] = sum }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WarpIndex {}

/// Cells `(row, col)` of a row-major matrix whose row width is bound to the slice at launch
/// (`cuda_host::RowWidth`); an index holds the thread's (row, col) and each slice resolves it
/// against its own width ([`index_2d_runtime`]).
///
/// ```ignore
/// if let Some(idx) = thread::index_2d_runtime(&out) && let Some(cell) = out.get_mut(idx) { /* … */ }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Runtime2DIndex {}

macro_rules! flat_space {
    ($($space:ty $(, const $n:ident)?);*) => {$(
        impl<$(const $n: usize)?> sealed::Sealed for $space {}
        impl<$(const $n: usize)?> SpaceLayout for $space {
            type Data = ();
        }
        impl<$(const $n: usize)?> FlatIndexSpace for $space {}
        impl<$(const $n: usize)?> ResolveIndex for $space {
            #[inline(always)]
            fn resolve(idx: ThreadIndex<Self>, _: (), len: usize) -> Option<usize> {
                (idx.raw() < len).then_some(idx.raw())
            }
        }
    )*};
}

flat_space!(Index1D; Index2D<N>, const N; WarpIndex);

impl sealed::Sealed for Runtime2DIndex {}
impl SpaceLayout for Runtime2DIndex {
    type Data = u32;
}

impl ResolveIndex for Runtime2DIndex {
    #[inline(always)]
    fn resolve(idx: ThreadIndex<Self>, width: u32, len: usize) -> Option<usize> {
        let (row, col) = (idx.row(), idx.col());
        if col >= width as usize {
            return None;
        }
        let flat = row.checked_mul(width as usize)?.checked_add(col)?;
        (flat < len).then_some(flat)
    }
}

impl IndexFormula for Index1D {
    #[inline(always)]
    fn current() -> Option<ThreadIndex<Self>> {
        Some(super::index_1d())
    }
}

impl<const ROW_STRIDE: usize> IndexFormula for Index2D<ROW_STRIDE> {
    #[inline(always)]
    fn current() -> Option<ThreadIndex<Self>> {
        index_2d::<ROW_STRIDE>()
    }
}

/// `blockIdx * blockDim + threadIdx` on one axis, `None` on overflow.
#[inline(always)]
fn axis(block: u32, dim: u32, thread: u32) -> Option<usize> {
    (block as usize).checked_mul(dim as usize)?.checked_add(thread as usize)
}

/// This thread's element `row * ROW_STRIDE + col` of a row-major matrix `ROW_STRIDE` columns wide
/// (row `blockIdx.y * blockDim.y + threadIdx.y`, column likewise in x), or `None` when its column
/// is past the matrix, the launch has a z extent (threads would share elements), or the index
/// overflows.
///
/// ```ignore
/// if let Some(idx) = thread::index_2d::<WIDTH>() {
///     let i = idx.get();
///     // …
/// }
/// ```
#[inline(always)]
pub fn index_2d<const ROW_STRIDE: usize>() -> Option<ThreadIndex<Index2D<ROW_STRIDE>>> {
    if blockDim_z() != 1 || gridDim_z() != 1 {
        return None;
    }
    let row = axis(intrinsics::blockIdx_y(), blockDim_y(), intrinsics::threadIdx_y())?;
    let col = axis(intrinsics::blockIdx_x(), blockDim_x(), intrinsics::threadIdx_x())?;
    if col >= ROW_STRIDE {
        return None;
    }
    Some(ThreadIndex::new(row.checked_mul(ROW_STRIDE)?.checked_add(col)?))
}

/// This thread's cell (row `blockIdx.y * blockDim.y + threadIdx.y`, column likewise in x) of the
/// row-major matrix `slice` describes, or `None` when the slice's row width is 0, the column is
/// past it, or the launch has a z extent (threads would share cells). The index keeps (row, col):
/// `get_mut` of any `Runtime2DIndex` slice resolves it against that slice's own row width.
///
/// ```ignore
/// if let Some(idx) = thread::index_2d_runtime(&out) && let Some(cell) = out.get_mut(idx) {
///     *cell = out_width;
/// }
/// ```
#[inline(always)]
pub fn index_2d_runtime<T>(slice: &DisjointSlice<'_, T, Runtime2DIndex>) -> Option<ThreadIndex<Runtime2DIndex>> {
    if blockDim_z() != 1 || gridDim_z() != 1 {
        return None;
    }
    let width = slice.row_width();
    let row = axis(intrinsics::blockIdx_y(), blockDim_y(), intrinsics::threadIdx_y())?;
    let col = axis(intrinsics::blockIdx_x(), blockDim_x(), intrinsics::threadIdx_x())?;
    if col >= width as usize || row > u32::MAX as usize {
        return None;
    }
    Some(ThreadIndex::new_2d(row as u32, col as u32))
}

/// For lane 0 of each warp of a 1D launch, the warp's index in the launch,
/// `blockIdx.x * ceil(blockDim.x / 32) + threadIdx.x / 32` (a short last warp per block counts as
/// one); `None` for the other lanes and in a launch with a y or z extent.
///
/// ```ignore
/// let sum = warp::reduce_sum_f32(v);
/// if let Some(w) = thread::warp_index() { out[w.get()] = sum }
/// ```
#[inline(always)]
pub fn warp_index() -> Option<ThreadIndex<WarpIndex>> {
    if blockDim_y() != 1 || blockDim_z() != 1 || gridDim_y() != 1 || gridDim_z() != 1 {
        return None;
    }
    if intrinsics::laneid() != 0 {
        return None;
    }
    let warps_per_block = blockDim_x().div_ceil(crate::warp::WARP_SIZE);
    let raw = (intrinsics::blockIdx_x() as usize)
        .checked_mul(warps_per_block as usize)?
        .checked_add((intrinsics::threadIdx_x() / crate::warp::WARP_SIZE) as usize)?;
    Some(ThreadIndex::new(raw))
}
