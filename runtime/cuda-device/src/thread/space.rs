//! Index spaces: the type parameter of [`ThreadIndex`] that says what its number counts, so that
//! a slice indexed per warp cannot be given a per-thread index (or a 2D index of another row
//! length). [`index_2d`]`::<ROW_STRIDE>()` and [`warp_index`] make indices of their spaces.

use super::{ThreadIndex, blockDim_x, blockDim_y, blockDim_z, gridDim_y, gridDim_z};
use crate::intrinsics;

/// Threads of a 1D launch, `blockIdx.x * blockDim.x + threadIdx.x` ([`super::index_1d`]).
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
/// if let Some(w) = thread::warp_index() { sums[w.get()] … }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WarpIndex {}

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
///     …
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
