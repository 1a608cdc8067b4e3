//! Cooperative groups, as CUDA C++'s `cooperative_groups` and NVIDIA's cuda-oxide shape them:
//! handles for the grid, the cluster, the block, a tile of `N` lanes of a warp and the lanes that
//! are active together, each with its size, this thread's rank in it and a barrier
//! ([`ThreadGroup`]); the warp-sized ones also vote, shuffle and match within the group
//! ([`WarpCollective`]). On top: reductions and scans over a tile or a block with an operation of
//! [`ops`].
//!
//! ```no_run
//! # use cuda_device::{SharedMemory, cuda_module, kernel, thread, cooperative_groups::{block_reduce, ops::Sum, this_thread_block}};
//! #[cuda_module]
//! mod kernels {
//!     use super::*;
//!
//!     /// `sums[b]` = the sum of block `b` (256 threads: 8 warps).
//!     #[kernel]
//!     pub fn block_sums(x: &[u32], sums: &mut [u32]) {
//!         static SMEM: SharedMemory<u32, 8> = SharedMemory::UNINIT;
//!         let i = thread::index_1d().get();
//!         let v = if i < x.len() { x[i] } else { 0 };
//!         let total = block_reduce::<u32, Sum, 8>(&this_thread_block(), v, &SMEM);
//!         let b = thread::blockIdx_x() as usize;
//!         if thread::threadIdx_x() == 0 && b < sums.len() {
//!             sums[b] = total;
//!         }
//!     }
//! }
//! # fn main() {}
//! ```
//! Ranks and shuffle sources of a tile are relative to the tile; a shuffle whose source would lie
//! outside the group returns the caller's own value.

use crate::{cluster, sync, thread, warp};

mod collectives;

pub use collectives::{BlockScratch, WarpShuffle, block_reduce, block_scan, ops, warp_reduce, warp_scan};

/// What every group has: a size, this thread's rank in it, and a barrier over it.
///
/// ```ignore
/// let block = this_thread_block();
/// if block.thread_rank() == 0 { /* once per block */ }
/// block.sync();
/// ```
pub trait ThreadGroup: Copy {
    /// Threads in the group.
    fn size(&self) -> u32;
    /// This thread's index in the group, `0..size()`.
    fn thread_rank(&self) -> u32;
    /// Waits until every thread of the group has arrived (all of them must call it).
    fn sync(&self);
}

/// The warp-level operations of a group within one warp ([`WarpTile`], [`CoalescedThreads`]).
/// Every thread of the group must make the same call.
///
/// ```ignore
/// let tile = this_thread_block().tiled_partition::<8>();
/// let from_rank0 = tile.shfl(v, 0);
/// ```
pub trait WarpCollective: ThreadGroup {
    /// Bit `k` set when the thread of rank `k` passed `true` (for a [`CoalescedThreads`] group:
    /// bit = warp lane).
    fn ballot(&self, predicate: bool) -> u32;
    /// Whether every thread of the group passed `true`.
    fn all(&self, predicate: bool) -> bool;
    /// Whether some thread of the group passed `true`.
    fn any(&self, predicate: bool) -> bool;
    /// `var` of the thread of rank `src_rank` (taken modulo the group for a tile).
    fn shfl(&self, var: u32, src_rank: u32) -> u32;
    /// `var` of the thread whose lane is this one's XOR `lane_mask`, own value if that thread is
    /// not in the group.
    fn shfl_xor(&self, var: u32, lane_mask: u32) -> u32;
    /// `var` of the thread `delta` lanes up, own value if that thread is not in the group.
    fn shfl_down(&self, var: u32, delta: u32) -> u32;
    /// `var` of the thread `delta` lanes down, own value if that thread is not in the group.
    fn shfl_up(&self, var: u32, delta: u32) -> u32;
    /// [`shfl`](Self::shfl) of an `f32`.
    fn shfl_f32(&self, var: f32, src_rank: u32) -> f32;
    /// [`shfl_xor`](Self::shfl_xor) of an `f32`.
    fn shfl_xor_f32(&self, var: f32, lane_mask: u32) -> f32;
    /// [`shfl_down`](Self::shfl_down) of an `f32`.
    fn shfl_down_f32(&self, var: f32, delta: u32) -> f32;
    /// [`shfl_up`](Self::shfl_up) of an `f32`.
    fn shfl_up_f32(&self, var: f32, delta: u32) -> f32;
    /// The warp lanes of the group holding the same `value` as this thread.
    fn match_any(&self, value: u32) -> u32;
    /// [`match_any`](Self::match_any) of a 64-bit value.
    fn match_any_i64(&self, value: u64) -> u32;
    /// The group's warp lanes if all of them hold the same `value`, else 0.
    fn match_all(&self, value: u32) -> u32;
    /// [`match_all`](Self::match_all) of a 64-bit value.
    fn match_all_i64(&self, value: u64) -> u32;
}

/// Threads per block.
#[inline(always)]
fn block_threads() -> u32 {
    thread::block_size()
}

/// This block's linear index in the grid, x fastest.
#[inline(always)]
fn block_rank_in_grid() -> u32 {
    let (gx, gy) = (thread::gridDim_x(), thread::gridDim_y());
    (thread::blockIdx_z() * gy + thread::blockIdx_y()) * gx + thread::blockIdx_x()
}

/// Blocks in the grid.
#[inline(always)]
fn grid_blocks() -> u32 {
    thread::gridDim_x() * thread::gridDim_y() * thread::gridDim_z()
}

/// Every thread of the launch. Its [`sync`](ThreadGroup::sync) is [`crate::grid::sync`], which
/// needs a cooperative launch.
///
/// ```ignore
/// let grid = this_grid();
/// let i = grid.thread_rank();
/// grid.sync();
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Grid {
    _private: (),
}

/// This thread's [`Grid`].
#[inline(always)]
pub fn this_grid() -> Grid {
    Grid { _private: () }
}

impl Grid {
    /// Blocks in the grid.
    #[inline(always)]
    pub fn num_blocks(&self) -> u32 {
        grid_blocks()
    }

    /// This block's linear index in the grid, `0..num_blocks()`.
    #[inline(always)]
    pub fn block_rank(&self) -> u32 {
        block_rank_in_grid()
    }
}

impl ThreadGroup for Grid {
    #[inline(always)]
    fn size(&self) -> u32 {
        grid_blocks() * block_threads()
    }

    #[inline(always)]
    fn thread_rank(&self) -> u32 {
        block_rank_in_grid() * block_threads() + thread::block_thread_index()
    }

    #[inline(always)]
    fn sync(&self) {
        crate::grid::sync()
    }
}

/// Every thread of this block's cluster (sm_90; without a cluster launch, the block alone).
///
/// ```ignore
/// let c = this_cluster();
/// c.sync();
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Cluster {
    _private: (),
}

/// This thread's [`Cluster`].
#[inline(always)]
pub fn this_cluster() -> Cluster {
    Cluster { _private: () }
}

impl Cluster {
    /// Blocks in the cluster.
    #[inline(always)]
    pub fn num_blocks(&self) -> u32 {
        cluster::num_blocks()
    }

    /// This block's rank in the cluster.
    #[inline(always)]
    pub fn block_rank(&self) -> u32 {
        cluster::block_rank()
    }
}

impl ThreadGroup for Cluster {
    #[inline(always)]
    fn size(&self) -> u32 {
        cluster::num_blocks() * block_threads()
    }

    #[inline(always)]
    fn thread_rank(&self) -> u32 {
        cluster::block_rank() * block_threads() + thread::block_thread_index()
    }

    #[inline(always)]
    fn sync(&self) {
        cluster::sync()
    }
}

/// Every thread of this block.
///
/// ```ignore
/// let block = this_thread_block();
/// let warp = block.tiled_partition::<32>();
/// ```
#[derive(Clone, Copy, Debug)]
pub struct ThreadBlock {
    _private: (),
}

/// This thread's [`ThreadBlock`].
#[inline(always)]
pub fn this_thread_block() -> ThreadBlock {
    ThreadBlock { _private: () }
}

impl ThreadBlock {
    /// This thread's tile of `N` consecutive lanes of its warp; `N` is 1, 2, 4, 8, 16 or 32
    /// (anything else does not compile). Tiles are whole only where the block's size is a
    /// multiple of 32 (or of `N`).
    #[inline(always)]
    pub fn tiled_partition<const N: u32>(self) -> WarpTile<N> {
        const { assert!(N.is_power_of_two() && N <= 32, "tiled_partition::<N>: N must be 1, 2, 4, 8, 16 or 32") };
        WarpTile { _private: () }
    }
}

impl ThreadGroup for ThreadBlock {
    #[inline(always)]
    fn size(&self) -> u32 {
        block_threads()
    }

    #[inline(always)]
    fn thread_rank(&self) -> u32 {
        thread::block_thread_index()
    }

    #[inline(always)]
    fn sync(&self) {
        sync::sync_threads()
    }
}

/// The `N` consecutive lanes of this thread's warp that form its tile (lanes `k*N..(k+1)*N`).
/// Ranks, ballot bits and shuffle sources count within the tile.
///
/// ```ignore
/// let tile = this_thread_block().tiled_partition::<4>();
/// let sum = tile.shfl_xor(v, 1) + v;     // pairs within each group of 4 lanes
/// ```
#[derive(Clone, Copy, Debug)]
pub struct WarpTile<const N: u32> {
    _private: (),
}

impl<const N: u32> WarpTile<N> {
    /// The warp lanes of this thread's tile.
    #[inline(always)]
    fn mask(&self) -> u32 {
        if N == 32 { warp::FULL_MASK } else { ((1u32 << N) - 1) << self.first_lane() }
    }

    /// The tile's lowest warp lane.
    #[inline(always)]
    fn first_lane(&self) -> u32 {
        warp::lane_id() & !(N - 1)
    }
}

impl<const N: u32> ThreadGroup for WarpTile<N> {
    #[inline(always)]
    fn size(&self) -> u32 {
        N
    }

    #[inline(always)]
    fn thread_rank(&self) -> u32 {
        warp::lane_id() & (N - 1)
    }

    #[inline(always)]
    fn sync(&self) {
        sync::sync_warp(self.mask())
    }
}

// The `_width` shuffles confine sources to segments of N lanes (PTX's `c` operand): a source
// past the caller's segment gives its own value, which is the tile semantics (`shfl_xor` also
// keeps a source below the segment from being read).
impl<const N: u32> WarpCollective for WarpTile<N> {
    #[inline(always)]
    fn ballot(&self, predicate: bool) -> u32 {
        let bits = warp::ballot_sync(self.mask(), predicate);
        if N == 32 { bits } else { (bits >> self.first_lane()) & ((1u32 << N) - 1) }
    }

    #[inline(always)]
    fn all(&self, predicate: bool) -> bool {
        warp::all_sync(self.mask(), predicate)
    }

    #[inline(always)]
    fn any(&self, predicate: bool) -> bool {
        warp::any_sync(self.mask(), predicate)
    }

    #[inline(always)]
    fn shfl(&self, var: u32, src_rank: u32) -> u32 {
        warp::shfl_sync_width(self.mask(), var, src_rank & (N - 1), N)
    }

    #[inline(always)]
    fn shfl_xor(&self, var: u32, lane_mask: u32) -> u32 {
        // PTX's `bfly` clamps only at the segment's end: a mask bit at or above N would read the
        // tile below. Such a source is outside the tile, so the caller keeps its own value.
        let lane_mask = if lane_mask & 31 & !(N - 1) == 0 { lane_mask } else { 0 };
        warp::shfl_xor_sync_width(self.mask(), var, lane_mask, N)
    }

    #[inline(always)]
    fn shfl_down(&self, var: u32, delta: u32) -> u32 {
        warp::shfl_down_sync_width(self.mask(), var, delta, N)
    }

    #[inline(always)]
    fn shfl_up(&self, var: u32, delta: u32) -> u32 {
        warp::shfl_up_sync_width(self.mask(), var, delta, N)
    }

    #[inline(always)]
    fn shfl_f32(&self, var: f32, src_rank: u32) -> f32 {
        f32::from_bits(self.shfl(var.to_bits(), src_rank))
    }

    #[inline(always)]
    fn shfl_xor_f32(&self, var: f32, lane_mask: u32) -> f32 {
        f32::from_bits(self.shfl_xor(var.to_bits(), lane_mask))
    }

    #[inline(always)]
    fn shfl_down_f32(&self, var: f32, delta: u32) -> f32 {
        f32::from_bits(self.shfl_down(var.to_bits(), delta))
    }

    #[inline(always)]
    fn shfl_up_f32(&self, var: f32, delta: u32) -> f32 {
        f32::from_bits(self.shfl_up(var.to_bits(), delta))
    }

    #[inline(always)]
    fn match_any(&self, value: u32) -> u32 {
        warp::match_any_sync(self.mask(), value) & self.mask()
    }

    #[inline(always)]
    fn match_any_i64(&self, value: u64) -> u32 {
        warp::match_any_sync(self.mask(), value) & self.mask()
    }

    #[inline(always)]
    fn match_all(&self, value: u32) -> u32 {
        warp::match_all_sync(self.mask(), value)
    }

    #[inline(always)]
    fn match_all_i64(&self, value: u64) -> u32 {
        warp::match_all_sync(self.mask(), value)
    }
}

/// The lanes of this warp that are active where it was made (`activemask`). Its ranks count the
/// group's lanes in order; ballot bits, and the sources of `shfl_xor/down/up`, are warp lanes.
/// Every lane of the group must make the same later calls.
///
/// ```ignore
/// if x > 0 {
///     let g = coalesced_threads();
///     let slot = base + g.thread_rank();  // compact the active lanes
/// }
/// ```
#[derive(Clone, Copy, Debug)]
pub struct CoalescedThreads {
    mask: u32,
}

/// The lanes active here, as a [`CoalescedThreads`] group.
#[inline(always)]
pub fn coalesced_threads() -> CoalescedThreads {
    CoalescedThreads { mask: warp::active_mask() }
}

impl CoalescedThreads {
    /// The group's warp lanes.
    #[inline(always)]
    pub fn raw_mask(&self) -> u32 {
        self.mask
    }

    /// The lane of rank `rank`, or this lane when the group has no such rank.
    #[inline(always)]
    fn lane_of_rank(&self, rank: u32) -> u32 {
        let mut rest = self.mask;
        let mut k = rank;
        while k > 0 && rest != 0 {
            rest &= rest - 1; // drop the lowest lane
            k -= 1;
        }
        if rest == 0 { warp::lane_id() } else { rest.trailing_zeros() }
    }

    /// Whether warp lane `lane` (any `u32`) is in the group.
    #[inline(always)]
    fn has_lane(&self, lane: u32) -> bool {
        lane < 32 && self.mask & (1u32 << lane) != 0
    }

    /// `delta` when lane `source` is in the group, else 0 (the caller reads its own value).
    #[inline(always)]
    fn or_self(&self, source: u32, operand: u32) -> u32 {
        if self.has_lane(source) { operand } else { 0 }
    }
}

impl ThreadGroup for CoalescedThreads {
    #[inline(always)]
    fn size(&self) -> u32 {
        self.mask.count_ones()
    }

    #[inline(always)]
    fn thread_rank(&self) -> u32 {
        (self.mask & warp::lanemask_lt()).count_ones()
    }

    #[inline(always)]
    fn sync(&self) {
        sync::sync_warp(self.mask)
    }
}

impl WarpCollective for CoalescedThreads {
    #[inline(always)]
    fn ballot(&self, predicate: bool) -> u32 {
        warp::ballot_sync(self.mask, predicate) & self.mask
    }

    #[inline(always)]
    fn all(&self, predicate: bool) -> bool {
        warp::all_sync(self.mask, predicate)
    }

    #[inline(always)]
    fn any(&self, predicate: bool) -> bool {
        warp::any_sync(self.mask, predicate)
    }

    #[inline(always)]
    fn shfl(&self, var: u32, src_rank: u32) -> u32 {
        warp::shfl_sync(self.mask, var, self.lane_of_rank(src_rank))
    }

    #[inline(always)]
    fn shfl_xor(&self, var: u32, lane_mask: u32) -> u32 {
        let source = warp::lane_id() ^ (lane_mask & 31);
        warp::shfl_xor_sync(self.mask, var, self.or_self(source, lane_mask))
    }

    #[inline(always)]
    fn shfl_down(&self, var: u32, delta: u32) -> u32 {
        let source = warp::lane_id() + (delta & 31);
        warp::shfl_down_sync(self.mask, var, self.or_self(source, delta))
    }

    #[inline(always)]
    fn shfl_up(&self, var: u32, delta: u32) -> u32 {
        let source = warp::lane_id().wrapping_sub(delta & 31);
        warp::shfl_up_sync(self.mask, var, self.or_self(source, delta))
    }

    #[inline(always)]
    fn shfl_f32(&self, var: f32, src_rank: u32) -> f32 {
        f32::from_bits(self.shfl(var.to_bits(), src_rank))
    }

    #[inline(always)]
    fn shfl_xor_f32(&self, var: f32, lane_mask: u32) -> f32 {
        f32::from_bits(self.shfl_xor(var.to_bits(), lane_mask))
    }

    #[inline(always)]
    fn shfl_down_f32(&self, var: f32, delta: u32) -> f32 {
        f32::from_bits(self.shfl_down(var.to_bits(), delta))
    }

    #[inline(always)]
    fn shfl_up_f32(&self, var: f32, delta: u32) -> f32 {
        f32::from_bits(self.shfl_up(var.to_bits(), delta))
    }

    #[inline(always)]
    fn match_any(&self, value: u32) -> u32 {
        warp::match_any_sync(self.mask, value) & self.mask
    }

    #[inline(always)]
    fn match_any_i64(&self, value: u64) -> u32 {
        warp::match_any_sync(self.mask, value) & self.mask
    }

    #[inline(always)]
    fn match_all(&self, value: u32) -> u32 {
        warp::match_all_sync(self.mask, value)
    }

    #[inline(always)]
    fn match_all_i64(&self, value: u64) -> u32 {
        warp::match_all_sync(self.mask, value)
    }
}
