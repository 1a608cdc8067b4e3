//! Thread block clusters (sm_90+): a kernel marked `#[cluster_launch(x, y, z)]` runs its blocks in
//! groups that are scheduled together and can read and write each other's shared memory
//! (distributed shared memory). Build such kernels with `--arch sm_90` or newer.

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

/// `cluster.map_shared_rank(ptr, rank)`: the address of the same shared-memory location in the
/// block of rank `rank` of this cluster (`mapa`). `ptr` must point into this block's shared memory
/// (a `SharedArray` or dynamic shared memory); the result is a generic pointer usable with
/// ordinary loads, stores and atomics.
#[inline(always)]
pub fn map_shared_rank<T>(ptr: *mut T, rank: u32) -> *mut T {
    intrinsics::cluster_map_shared(ptr.cast(), rank).cast()
}

/// Whether `ptr` points into the shared memory of some block of this cluster.
#[inline(always)]
pub fn is_cluster_shared<T>(ptr: *const T) -> bool {
    intrinsics::is_cluster_shared(ptr.cast())
}
