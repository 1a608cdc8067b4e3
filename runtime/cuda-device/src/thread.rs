//! Thread and block indices: raw registers, the index values that `DisjointSlice` accepts (and
//! their index spaces), 2D/3D positions, lane and warp ids, and the grid-stride loop.
//!
//! ```no_run
//! # use cuda_device::{DisjointSlice, cuda_module, kernel, thread};
//! #[cuda_module]
//! mod kernels {
//!     use super::*;
//!
//!     /// One thread per element, and a grid-stride loop that covers any length.
//!     #[kernel]
//!     pub fn scale(k: f32, x: &[f32], mut y: DisjointSlice<f32>) {
//!         let idx = thread::index_1d(); // blockIdx.x * blockDim.x + threadIdx.x
//!         if let Some(y_i) = y.get_mut(idx) {
//!             *y_i = k * x[idx.get()];
//!         }
//!     }
//!
//!     #[kernel]
//!     pub fn fill(v: u32, mut out: DisjointSlice<u32>) {
//!         for i in thread::grid_stride(out.len()) {
//!             if let Some(o) = out.get_mut(i) {
//!                 *o = v + thread::lane_id();
//!             }
//!         }
//!     }
//! }
//! # fn main() {}
//! ```
#![allow(non_snake_case)]

use core::marker::PhantomData;

use crate::intrinsics;

mod context;
mod space;

pub(crate) use space::sealed as space_sealed;

pub use context::{
    Domain1, Domain2, Domain3, LaunchContext, LaunchContextRef, NativeCoordinates, ThreadCoord2D32, ThreadIndex32,
    U32Coordinates, UnknownDomain, coord_2d_u32, index_1d_u32,
};
pub use space::{
    FlatIndexSpace, Index1D, Index2D, IndexFormula, ResolveIndex, Runtime2DIndex, SpaceLayout, WarpIndex, index_2d,
    index_2d_runtime, warp_index,
};

pub use crate::intrinsics::{
    blockDim_x, blockDim_y, blockDim_z, blockIdx_x, blockIdx_y, blockIdx_z, gridDim_x, gridDim_y, gridDim_z,
    threadIdx_x, threadIdx_y, threadIdx_z,
};

/// `__syncthreads()`, also reachable here as NVIDIA's cuda-oxide places it: `thread::sync_threads()`.
pub use crate::sync::sync_threads;

/// This thread's index in index space `S` ([`Index1D`] unless said otherwise). Only
/// [`index_1d`], the 2D/3D linearisations, [`grid_stride`], [`index_2d`], [`index_2d_runtime`]
/// and [`warp_index`] make one, so two threads of one launch never hold equal values of one
/// space: that is what lets [`crate::DisjointSlice::get_mut`] hand out `&mut` without a data race.
///
/// ```ignore
/// let idx = thread::index_1d();
/// if let Some(y) = out.get_mut(idx) { *y = x[idx.get()] }
/// ```
pub struct ThreadIndex<S = Index1D>(usize, PhantomData<fn() -> S>);

impl<S> ThreadIndex<S> {
    /// A thread's index in space `S`; the callers make sure no two threads get the same.
    #[inline(always)]
    pub(crate) fn new(raw: usize) -> Self {
        ThreadIndex(raw, PhantomData)
    }

    /// The number the index holds (for [`Runtime2DIndex`], row and column packed).
    #[inline(always)]
    pub(crate) fn raw(self) -> usize {
        self.0
    }
}

impl<S: FlatIndexSpace> ThreadIndex<S> {
    /// The index as a plain number, for reading other slices.
    #[inline(always)]
    pub fn get(self) -> usize {
        self.0
    }

    /// Whether the index is below `len`: `if idx.in_bounds(x.len()) { y = x[idx.get()] }`.
    #[inline(always)]
    pub fn in_bounds(self, len: usize) -> bool {
        self.0 < len
    }
}

impl ThreadIndex<Runtime2DIndex> {
    /// A thread's cell (row, col); the callers make sure no two threads get the same.
    #[inline(always)]
    pub(crate) fn new_2d(row: u32, col: u32) -> Self {
        const { assert!(usize::BITS >= 64, "Runtime2DIndex packs row and column into a 64-bit usize") };
        ThreadIndex(((row as usize) << 32) | col as usize, PhantomData)
    }

    /// The thread's row, `blockIdx.y * blockDim.y + threadIdx.y`.
    #[inline(always)]
    pub fn row(self) -> usize {
        self.0 >> 32
    }

    /// The thread's column, `blockIdx.x * blockDim.x + threadIdx.x`.
    #[inline(always)]
    pub fn col(self) -> usize {
        self.0 & 0xffff_ffff
    }
}

impl<S> Clone for ThreadIndex<S> {
    #[inline(always)]
    fn clone(&self) -> Self {
        *self
    }
}

impl<S> Copy for ThreadIndex<S> {}

impl<S> PartialEq for ThreadIndex<S> {
    #[inline(always)]
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

impl<S> Eq for ThreadIndex<S> {}

impl<S> core::fmt::Debug for ThreadIndex<S> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_tuple("ThreadIndex").field(&self.0).finish()
    }
}

/// This thread's index among all threads of the launch, in 64 bits: for a 1D launch
/// `blockIdx.x * blockDim.x + threadIdx.x`; for 2D and 3D launches the same linearisation over
/// every dimension (blocks in x, then y, then z order; threads within a block likewise), so that
/// every thread of every launch shape holds a different index.
///
/// ```ignore
/// #[kernel]
/// pub fn vecadd(a: &[f32], b: &[f32], mut c: DisjointSlice<f32>) {
///     let idx = thread::index_1d();
///     let i = idx.get();
///     if let Some(c_elem) = c.get_mut(idx) {
///         *c_elem = a[i] + b[i];
///     }
/// }
/// ```
#[inline(always)]
pub fn index_1d() -> ThreadIndex {
    let block = (intrinsics::blockIdx_z() as usize * intrinsics::gridDim_y() as usize
        + intrinsics::blockIdx_y() as usize)
        * intrinsics::gridDim_x() as usize
        + intrinsics::blockIdx_x() as usize;
    ThreadIndex::new(block * block_size() as usize + block_thread_index() as usize)
}

/// How many threads the launch has: `gridDim.x * gridDim.y * gridDim.z * block_size()`.
#[inline(always)]
pub fn grid_size() -> usize {
    intrinsics::gridDim_x() as usize
        * intrinsics::gridDim_y() as usize
        * intrinsics::gridDim_z() as usize
        * block_size() as usize
}

/// This thread's global (x, y) position in a 2D launch: x is the column, y the row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadIndex2D {
    x: usize,
    y: usize,
}

impl ThreadIndex2D {
    /// Column: `blockIdx.x * blockDim.x + threadIdx.x`.
    #[inline(always)]
    pub fn x(self) -> usize {
        self.x
    }

    /// Row: `blockIdx.y * blockDim.y + threadIdx.y`.
    #[inline(always)]
    pub fn y(self) -> usize {
        self.y
    }

    /// Row-major element index `y * width + x` for a matrix `width` columns wide, or `None` when
    /// this thread's column is outside it (the usual edge guard; rows past the end are caught by
    /// `DisjointSlice::get_mut`), and when the launch has a z extent (threads that differ only
    /// in z would share the element).
    ///
    /// # Safety
    /// Every thread of the launch passes the same `width`: threads with different widths can
    /// compute the same index, and `DisjointSlice::get_mut` would then give two threads `&mut`
    /// to one element. A width that is a kernel parameter is the same in every thread. Safe
    /// alternatives: [`index_2d`]`::<WIDTH>()` (width known at compile time),
    /// [`index_2d_runtime`] (width at run time) and [`index_1d`], which is unique in every launch
    /// shape. (This method was safe before; CHANGELOG.md.)
    #[inline(always)]
    pub unsafe fn to_linear(self, width: usize) -> Option<ThreadIndex> {
        let z_extent = intrinsics::gridDim_z() as usize * intrinsics::blockDim_z() as usize;
        if self.x < width && z_extent == 1 { Some(ThreadIndex::new(self.y * width + self.x)) } else { None }
    }
}

/// This thread's global (x, y) position in a 2D launch:
/// `if let Some(i) = unsafe { thread::index_2d_xy().to_linear(width) } { /* … */ }`. It was named
/// `index_2d()` before that name went to NVIDIA cuda-oxide's const-stride index
/// [`index_2d`]`::<ROW_STRIDE>()`; in a `#[kernel]` or `#[device]` body the old use is an error
/// that names this function (CHANGELOG.md).
#[inline(always)]
pub fn index_2d_xy() -> ThreadIndex2D {
    ThreadIndex2D {
        x: intrinsics::blockIdx_x() as usize * intrinsics::blockDim_x() as usize + intrinsics::threadIdx_x() as usize,
        y: intrinsics::blockIdx_y() as usize * intrinsics::blockDim_y() as usize + intrinsics::threadIdx_y() as usize,
    }
}

/// This thread's global row in a 2D launch, `blockIdx.y * blockDim.y + threadIdx.y`
/// (= `index_2d_xy().y()`): `let (row, col) = (thread::index_2d_row(), thread::index_2d_col());`.
#[inline(always)]
pub fn index_2d_row() -> usize {
    intrinsics::blockIdx_y() as usize * intrinsics::blockDim_y() as usize + intrinsics::threadIdx_y() as usize
}

/// This thread's global column in a 2D launch, `blockIdx.x * blockDim.x + threadIdx.x`
/// (= `index_2d_xy().x()`).
#[inline(always)]
pub fn index_2d_col() -> usize {
    intrinsics::blockIdx_x() as usize * intrinsics::blockDim_x() as usize + intrinsics::threadIdx_x() as usize
}

/// This thread's global (x, y, z) position in a 3D launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadIndex3D {
    x: usize,
    y: usize,
    z: usize,
}

impl ThreadIndex3D {
    /// `blockIdx.x * blockDim.x + threadIdx.x`.
    #[inline(always)]
    pub fn x(self) -> usize {
        self.x
    }

    /// `blockIdx.y * blockDim.y + threadIdx.y`.
    #[inline(always)]
    pub fn y(self) -> usize {
        self.y
    }

    /// `blockIdx.z * blockDim.z + threadIdx.z`.
    #[inline(always)]
    pub fn z(self) -> usize {
        self.z
    }

    /// `(z * height + y) * width + x` for a `width × height × depth` volume, or `None` when x or y
    /// is outside it.
    ///
    /// # Safety
    /// Every thread of the launch passes the same `width` and `height` (see
    /// [`ThreadIndex2D::to_linear`]).
    #[inline(always)]
    pub unsafe fn to_linear(self, width: usize, height: usize) -> Option<ThreadIndex> {
        if self.x < width && self.y < height {
            Some(ThreadIndex::new((self.z * height + self.y) * width + self.x))
        } else {
            None
        }
    }
}

/// This thread's global (x, y, z) position in a 3D launch.
#[inline(always)]
pub fn index_3d() -> ThreadIndex3D {
    let d2 = index_2d_xy();
    ThreadIndex3D {
        x: d2.x,
        y: d2.y,
        z: intrinsics::blockIdx_z() as usize * intrinsics::blockDim_z() as usize + intrinsics::threadIdx_z() as usize,
    }
}

/// This thread's index within its block: `threadIdx.x + threadIdx.y * blockDim.x + threadIdx.z * blockDim.x * blockDim.y`.
#[inline(always)]
pub fn block_thread_index() -> u32 {
    let (dx, dy) = (intrinsics::blockDim_x(), intrinsics::blockDim_y());
    intrinsics::threadIdx_x() + intrinsics::threadIdx_y() * dx + intrinsics::threadIdx_z() * dx * dy
}

/// Threads per block: `blockDim.x * blockDim.y * blockDim.z`.
#[inline(always)]
pub fn block_size() -> u32 {
    intrinsics::blockDim_x() * intrinsics::blockDim_y() * intrinsics::blockDim_z()
}

/// Lane of this thread within its warp (0..32).
#[inline(always)]
pub fn lane_id() -> u32 {
    intrinsics::laneid()
}

/// Warp of this thread within its block: [`block_thread_index`] / 32.
#[inline(always)]
pub fn warp_id() -> u32 {
    block_thread_index() / 32
}

/// The SM this thread runs on (`%smid`; for diagnostics, it may change between reads).
#[inline(always)]
pub fn sm_id() -> u32 {
    intrinsics::smid()
}

/// [`sm_id`] under NVIDIA cuda-oxide's name: `let sm = thread::smid();`.
#[inline(always)]
pub fn smid() -> u32 {
    sm_id()
}

/// The number of SM identifiers (`%nsmid`): an upper bound of [`sm_id`] (not the SM count: the
/// numbering may have gaps).
#[inline(always)]
pub fn nsmid() -> u32 {
    intrinsics::nsmid()
}

/// This launch's grid identifier (`%gridid`): distinct for launches that run at the same time.
///
/// ```ignore
/// let grid = thread::gridid();
/// ```
#[inline(always)]
pub fn gridid() -> u64 {
    intrinsics::gridid()
}

/// The element indices a thread visits in a grid-stride loop over `0..n`: `index_1d()`,
/// `index_1d() + grid_size()`, … Each index is visited by exactly one thread, whatever the launch
/// shape, so the items are [`ThreadIndex`] values that `DisjointSlice::get_mut` accepts.
#[derive(Clone, Debug)]
pub struct GridStride {
    next: usize,
    step: usize,
    end: usize,
}

impl Iterator for GridStride {
    type Item = ThreadIndex;

    #[inline(always)]
    fn next(&mut self) -> Option<ThreadIndex> {
        if self.next < self.end {
            let i = self.next;
            self.next += self.step;
            Some(ThreadIndex::new(i))
        } else {
            None
        }
    }
}

/// A grid-stride loop over `0..n` (a launch of any size and shape covers all of `n`):
/// `for i in thread::grid_stride(n) { if let Some(y) = out.get_mut(i) { *y = x[i.get()] } }`.
#[inline(always)]
pub fn grid_stride(n: usize) -> GridStride {
    GridStride { next: index_1d().get(), step: grid_size(), end: n }
}
