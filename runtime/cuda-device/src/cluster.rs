//! Thread block clusters (sm_90+): a kernel marked `#[cluster_launch(x, y, z)]` runs its blocks in
//! groups that are scheduled together and can read and write each other's shared memory
//! (distributed shared memory). Build such kernels with `--arch sm_90` or newer.
//!
//! ```no_run
//! # use cuda_device::{DisjointSlice, SharedMemory, cluster, cluster_launch, cuda_module, kernel, thread};
//! #[cuda_module]
//! mod kernels {
//!     use super::*;
//!
//!     /// Each block reads its neighbour's shared memory (128 threads per block, clusters of 4).
//!     #[kernel]
//!     #[cluster_launch(4, 1, 1)]
//!     pub fn neighbour(x: &[u32], mut out: DisjointSlice<u32>) {
//!         static MINE: SharedMemory<u32, 128> = SharedMemory::UNINIT;
//!         let idx = thread::index_1d();
//!         let tid = thread::threadIdx_x() as usize;
//!         // SAFETY: own slot, read by others only after the cluster barrier.
//!         unsafe { MINE.write(tid, if idx.get() < x.len() { x[idx.get()] } else { 0 }) };
//!         cluster::sync();
//!         let next = (cluster::block_rank() + 1) % cluster::num_blocks();
//!         let remote = cluster::map_shared_rank(MINE.as_mut_ptr(), next);
//!         // SAFETY: `tid < 128`; the neighbour keeps its shared memory until the second barrier.
//!         let theirs = unsafe { remote.add(tid).read() };
//!         cluster::sync();
//!         if let Some(o) = out.get_mut(idx) {
//!             *o = theirs;
//!         }
//!     }
//! }
//! # fn main() {}
//! ```

use crate::intrinsics;

/// Rank of this block in its cluster, `0..num_blocks()` (`%cluster_ctarank`).
#[inline(always)]
pub fn block_rank() -> u32 {
    intrinsics::cluster_ctarank()
}

/// Blocks per cluster (`%cluster_nctarank`).
#[inline(always)]
pub fn num_blocks() -> u32 {
    intrinsics::cluster_nctarank()
}

/// This block's (x, y, z) position in its cluster (`%cluster_ctaid`).
#[inline(always)]
pub fn block_index() -> (u32, u32, u32) {
    (intrinsics::cluster_ctaid_x(), intrinsics::cluster_ctaid_y(), intrinsics::cluster_ctaid_z())
}

/// The cluster shape in blocks (`%cluster_nctaid`): the `#[cluster_launch]` dimensions.
#[inline(always)]
pub fn dim() -> (u32, u32, u32) {
    (intrinsics::cluster_nctaid_x(), intrinsics::cluster_nctaid_y(), intrinsics::cluster_nctaid_z())
}

/// This cluster's (x, y, z) position in the grid (`%clusterid`).
#[inline(always)]
pub fn cluster_index() -> (u32, u32, u32) {
    (intrinsics::clusterid_x(), intrinsics::clusterid_y(), intrinsics::clusterid_z())
}

/// Clusters in the grid per dimension (`%nclusterid`).
#[inline(always)]
pub fn grid_dim() -> (u32, u32, u32) {
    (intrinsics::nclusterid_x(), intrinsics::nclusterid_y(), intrinsics::nclusterid_z())
}

/// `cluster.sync()`: every thread of every block in the cluster waits here; shared-memory writes
/// before it are visible to the whole cluster after it (`barrier.cluster.arrive` + `.wait`).
/// Also call it before a block exits while others may still read its shared memory.
#[inline(always)]
pub fn sync() {
    intrinsics::cluster_sync()
}

/// The arrive half of [`sync`] (release semantics); pair with [`wait`].
#[inline(always)]
pub fn arrive() {
    intrinsics::cluster_arrive()
}

/// Like [`arrive`] without memory ordering.
#[inline(always)]
pub fn arrive_relaxed() {
    intrinsics::cluster_arrive_relaxed()
}

/// The wait half of [`sync`] (acquire semantics).
#[inline(always)]
pub fn wait() {
    intrinsics::cluster_wait()
}

mod sealed {
    pub trait Sealed {}
}

/// A raw pointer [`map_shared_rank`] maps: `*mut T` or `*const T` (it returns the same kind).
pub trait SharedPtr: Copy + sealed::Sealed {
    #[doc(hidden)]
    fn map_rank(self, rank: u32) -> Self;
}

impl<T> sealed::Sealed for *mut T {}
impl<T> SharedPtr for *mut T {
    #[inline(always)]
    fn map_rank(self, rank: u32) -> Self {
        intrinsics::cluster_map_shared(self.cast(), rank).cast()
    }
}

impl<T> sealed::Sealed for *const T {}
impl<T> SharedPtr for *const T {
    #[inline(always)]
    fn map_rank(self, rank: u32) -> Self {
        self.cast_mut().map_rank(rank).cast_const()
    }
}

/// `cluster.map_shared_rank(ptr, rank)`: the address of the same shared-memory location in the
/// block of rank `rank` of this cluster (`mapa`), for a `*mut T` or a `*const T`. `ptr` must point
/// into this block's shared memory (a `SharedArray` or dynamic shared memory); the result is a
/// generic pointer usable with ordinary loads, stores and atomics (which are `unsafe`, with the
/// usual rules: the other block is running, and its writes are ordered by [`sync`]).
///
/// ```ignore
/// let theirs = unsafe { cluster::map_shared_rank(&raw const MINE, next).cast::<u32>().read() };
/// ```
#[inline(always)]
pub fn map_shared_rank<P: SharedPtr>(ptr: P, rank: u32) -> P {
    ptr.map_rank(rank)
}

/// [`map_shared_rank`] of a `*mut T`, under NVIDIA cuda-oxide's name.
#[inline(always)]
pub fn map_shared_rank_mut<T>(ptr: *mut T, rank: u32) -> *mut T {
    map_shared_rank(ptr, rank)
}

/// Reads the `u32` at the place of `local` in the shared memory of block `rank` of this cluster.
///
/// ```ignore
/// let next = unsafe { cluster::dsmem_read_u32(&raw const MINE as *const u32, (rank + 1) % size) };
/// ```
///
/// # Safety
/// `local` points to an aligned `u32` in this block's shared memory, block `rank` of the cluster
/// is running, and its write of the value is ordered before this read (by [`sync`]).
#[inline(always)]
pub unsafe fn dsmem_read_u32(local: *const u32, rank: u32) -> u32 {
    unsafe { map_shared_rank(local, rank).read() }
}

// NVIDIA cuda-oxide's names for the registers and helpers above.

/// `%cluster_ctaid.x` (= `block_index().0`), under NVIDIA cuda-oxide's name.
#[allow(non_snake_case)]
#[inline(always)]
pub fn cluster_ctaidX() -> u32 {
    intrinsics::cluster_ctaid_x()
}

/// `%cluster_ctaid.y`, under NVIDIA cuda-oxide's name.
#[allow(non_snake_case)]
#[inline(always)]
pub fn cluster_ctaidY() -> u32 {
    intrinsics::cluster_ctaid_y()
}

/// `%cluster_ctaid.z`, under NVIDIA cuda-oxide's name.
#[allow(non_snake_case)]
#[inline(always)]
pub fn cluster_ctaidZ() -> u32 {
    intrinsics::cluster_ctaid_z()
}

/// `%cluster_nctaid.x` (= `dim().0`), under NVIDIA cuda-oxide's name.
#[allow(non_snake_case)]
#[inline(always)]
pub fn cluster_nctaidX() -> u32 {
    intrinsics::cluster_nctaid_x()
}

/// `%cluster_nctaid.y`, under NVIDIA cuda-oxide's name.
#[allow(non_snake_case)]
#[inline(always)]
pub fn cluster_nctaidY() -> u32 {
    intrinsics::cluster_nctaid_y()
}

/// `%cluster_nctaid.z`, under NVIDIA cuda-oxide's name.
#[allow(non_snake_case)]
#[inline(always)]
pub fn cluster_nctaidZ() -> u32 {
    intrinsics::cluster_nctaid_z()
}

/// This cluster's linear index in the grid, `x + y * nx + z * nx * ny` of [`cluster_index`] and
/// [`grid_dim`]: `let c = cluster::cluster_idx();`.
#[inline(always)]
pub fn cluster_idx() -> u32 {
    let (x, y, z) = cluster_index();
    let (nx, ny, _) = grid_dim();
    x + y * nx + z * nx * ny
}

/// Clusters in the grid, the product of [`grid_dim`].
#[inline(always)]
pub fn num_clusters() -> u32 {
    let (nx, ny, nz) = grid_dim();
    nx * ny * nz
}

/// Blocks per cluster ([`num_blocks`]), under NVIDIA cuda-oxide's name.
#[inline(always)]
pub fn cluster_size() -> u32 {
    num_blocks()
}

/// [`sync`] under NVIDIA cuda-oxide's name: `cluster::cluster_sync()`.
#[inline(always)]
pub fn cluster_sync() {
    sync()
}

/// Whether `ptr` points into the shared memory of some block of this cluster.
#[inline(always)]
pub fn is_cluster_shared<T>(ptr: *const T) -> bool {
    intrinsics::is_cluster_shared(ptr.cast())
}
