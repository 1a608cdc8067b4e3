//! A persistent tile scheduler: launch one block (or cluster) per SM and let each walk the output
//! tiles `first, first + stride, …` instead of one block per tile. The order is grouped (a
//! "swizzled raster"): tiles go down `group_m` tile rows of one column before moving to the next
//! column, so the blocks running at one time share a few panels of A and of B in L2 instead of
//! streaming all of B past each row.
//!
//! Cluster-aware: with `cluster_m` blocks per cluster, a work unit is `cluster_m` tiles of one
//! column in consecutive rows, block rank `r` taking row `cluster_m · unit_row + r` — the
//! blocks of a cluster share the column's B panel (one TMA multicast feeds them all) and walk the
//! same units, so they take part in every multicast together. When `cluster_m` does not divide
//! the tile rows, the last cluster row holds rows past the matrix: TMA reads zeros there and the
//! epilogue stores nothing.
//!
//! ```ignore
//! let grid = TileGrid { m, n, bm: 128, bn: 256, group_m: 16, cluster_m: 1 };
//! for tile in TileScheduler::for_block(grid) {
//!     /* mainloop over K for rows tile.row.., columns tile.col.. */
//! }
//! // host: launch min(grid.units(), SMs / cluster_m) × cluster_m blocks
//! ```
//!
//! When units differ in cost (causal attention's Q tiles: up to `seq / 128`-fold), a fixed
//! stride leaves blocks idle at the end; [`UnitCounter`] hands out units from a global counter
//! instead, so a block that finishes early takes more.

use core::marker::PhantomData;

use crate::{atomic, cluster, thread};

/// One output tile: its block coordinates and its first row and column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tile {
    /// Tile row (`row / BM`).
    pub m: u32,
    /// Tile column (`col / BN`).
    pub n: u32,
    /// First row of C.
    pub row: u32,
    /// First column of C.
    pub col: u32,
}

/// The output and how it is cut: an `m × n` matrix in `bm × bn` tiles, walked in groups of
/// `group_m` tile rows, by clusters of `cluster_m` blocks along M (1: no clusters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TileGrid {
    /// Rows of C.
    pub m: u32,
    /// Columns of C.
    pub n: u32,
    /// Rows of a tile.
    pub bm: u32,
    /// Columns of a tile.
    pub bn: u32,
    /// Tile rows per group of the raster order (rounded up to whole clusters).
    pub group_m: u32,
    /// Blocks per cluster, along M.
    pub cluster_m: u32,
}

impl TileGrid {
    /// Work units: `⌈⌈m / bm⌉ / cluster_m⌉ · ⌈n / bn⌉`. A grid of more clusters than this
    /// leaves some idle.
    pub const fn units(&self) -> u32 {
        let (bm, bn, cluster_m) = (nonzero(self.bm), nonzero(self.bn), nonzero(self.cluster_m));
        self.m.div_ceil(bm).div_ceil(cluster_m) * self.n.div_ceil(bn)
    }
}

/// The tiles of one block, in grouped order (see the module docs). An iterator of [`Tile`].
#[derive(Clone, Copy, Debug)]
pub struct TileScheduler {
    unit_rows: u32,
    tiles_n: u32,
    group: u32,
    cluster_m: u32,
    rank: u32,
    bm: u32,
    bn: u32,
    next: u32,
    stride: u32,
    units: u32,
}

/// `x`, or 1 for 0 (a zero tile side or cluster would divide by zero).
const fn nonzero(x: u32) -> u32 {
    if x == 0 { 1 } else { x }
}

impl TileScheduler {
    /// The tiles of `grid` for the block of rank `rank` in its cluster, whose cluster walks
    /// units `first, first + stride, …`.
    pub const fn new(grid: TileGrid, rank: u32, first: u32, stride: u32) -> TileScheduler {
        let (bm, bn, cluster_m) = (nonzero(grid.bm), nonzero(grid.bn), nonzero(grid.cluster_m));
        TileScheduler {
            unit_rows: grid.m.div_ceil(bm).div_ceil(cluster_m),
            tiles_n: grid.n.div_ceil(bn),
            group: nonzero(grid.group_m).div_ceil(cluster_m),
            cluster_m,
            rank,
            bm,
            bn,
            next: first,
            stride: nonzero(stride),
            units: grid.units(),
        }
    }

    /// This block's tiles in a launch of `#[cluster_launch(cluster_m, 1, 1)]` clusters (or of
    /// plain blocks, `cluster_m` 1): cluster `c` of `C` starts at unit `c` and steps by `C`.
    #[inline(always)]
    pub fn for_block(grid: TileGrid) -> TileScheduler {
        let (rank, first, stride) = if grid.cluster_m > 1 {
            (cluster::block_rank(), cluster::cluster_idx(), cluster::num_clusters())
        } else {
            (0, thread::blockIdx_x(), thread::gridDim_x())
        };
        TileScheduler::new(grid, rank, first, stride)
    }

    /// The tile of work unit `u` for this block's rank.
    pub const fn tile(&self, u: u32) -> Tile {
        let per_group = self.group * self.tiles_n;
        let first_row = u / per_group * self.group;
        let rows = if self.unit_rows - first_row < self.group { self.unit_rows - first_row } else { self.group };
        let within = u % per_group;
        let m = (first_row + within % rows) * self.cluster_m + self.rank;
        let n = within / rows;
        Tile { m, n, row: m * self.bm, col: n * self.bn }
    }
}

impl Iterator for TileScheduler {
    type Item = Tile;

    #[inline(always)]
    fn next(&mut self) -> Option<Tile> {
        if self.next >= self.units {
            return None;
        }
        let tile = self.tile(self.next);
        self.next += self.stride;
        Some(tile)
    }

    #[inline(always)]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = if self.next >= self.units { 0 } else { (self.units - self.next).div_ceil(self.stride) as usize };
        (left, Some(left))
    }
}

/// `len()` is the number of tiles left to this block (ping-pong consumers ask whether the
/// other has a next tile).
impl ExactSizeIterator for TileScheduler {}

/// The work unit ids a persistent block takes, for one thread of it (the producer): its own
/// index first, then — `dynamic` — the next id of a global counter, else every `gridDim.x`-th
/// (round-robin). The ids run past the last unit; the caller stops at the first one past it,
/// then calls [`finish`](Self::finish).
///
/// The counter is two `u32` in global memory, zero when a launch starts, and left zero by it:
/// `counter[0]` counts the units taken after each block's first, `counter[1]` the blocks done;
/// the last block done resets both (every other block has taken its last id by then).
#[derive(Debug)]
pub struct UnitCounter<'a> {
    counter: *mut u32,
    first: u32,
    grid: u32,
    taken: u32,
    dynamic: bool,
    _counter: PhantomData<&'a mut [u32]>,
}

impl<'a> UnitCounter<'a> {
    /// The ids of this block (`blockIdx.x` of `gridDim.x`), from `counter` when `dynamic`
    /// (and `counter` holds two `u32`; else round-robin).
    ///
    /// # Safety
    /// When dynamic: `counter` is zero when the launch starts and, during it, is accessed only
    /// atomically — by one `UnitCounter` per block, which calls [`finish`](Self::finish) after
    /// its last [`next_id`](Self::next_id).
    #[inline(always)]
    pub unsafe fn new(counter: &'a mut [u32], dynamic: bool) -> Self {
        let dynamic = dynamic && counter.len() >= 2;
        UnitCounter::at(counter.as_mut_ptr(), dynamic, thread::blockIdx_x(), thread::gridDim_x())
    }

    #[inline(always)]
    const fn at(counter: *mut u32, dynamic: bool, first: u32, grid: u32) -> Self {
        UnitCounter { counter, first, grid, taken: 0, dynamic, _counter: PhantomData }
    }

    /// The next unit id.
    #[inline(always)]
    pub fn next_id(&mut self) -> u32 {
        let n = self.taken;
        self.taken += 1;
        if n == 0 {
            self.first
        } else if self.dynamic {
            // SAFETY: `counter[0]` exists and is only accessed atomically (`new`'s contract).
            unsafe { atomic::add(self.counter, 1) + self.grid }
        } else {
            self.first + n * self.grid
        }
    }

    /// This block is done: the last block to finish resets the counter for the next launch.
    #[inline(always)]
    pub fn finish(self) {
        if self.dynamic {
            // SAFETY: `counter[0..2]` exist and are only accessed atomically (`new`'s contract).
            unsafe {
                if atomic::add(self.counter.add(1), 1) == self.grid - 1 {
                    atomic::exchange(self.counter, 0);
                    atomic::exchange(self.counter.add(1), 0);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    extern crate std;
    use std::vec;
    use std::vec::Vec;

    /// Every tile of the (cluster-rounded) grid exactly once over all blocks, the blocks of a
    /// cluster on one column in consecutive rows.
    #[test]
    fn every_tile_once_and_clusters_share_a_column() {
        for &(m, n, group, cluster, clusters) in &[
            (4096u32, 4096u32, 16u32, 1u32, 132u32),
            (4096, 4096, 16, 2, 66),
            (8192, 8192, 16, 2, 66),
            (1040, 784, 8, 1, 7),
            (1040, 784, 8, 2, 3),
            (16, 16, 16, 2, 66),
            (384, 2048, 1, 1, 5),
            (3 * 128, 5 * 256, 4, 2, 1),
        ] {
            let (bm, bn) = (128, 256);
            let tiles_m = m.div_ceil(bm).div_ceil(cluster) * cluster;
            let tiles_n = n.div_ceil(bn);
            let mut seen = vec![0u32; (tiles_m * tiles_n) as usize];
            for c in 0..clusters {
                let blocks: Vec<Vec<Tile>> = (0..cluster)
                    .map(|r| {
                        TileScheduler::new(
                            TileGrid { m, n, bm, bn, group_m: group, cluster_m: cluster },
                            r,
                            c,
                            clusters,
                        )
                        .collect()
                    })
                    .collect();
                for r in 0..cluster as usize {
                    assert_eq!(blocks[r].len(), blocks[0].len(), "the blocks of a cluster walk as many tiles");
                    for (i, t) in blocks[r].iter().enumerate() {
                        assert_eq!((t.n, t.m), (blocks[0][i].n, blocks[0][i].m + r as u32));
                        assert_eq!((t.row, t.col), (t.m * bm, t.n * bn));
                        seen[(t.m * tiles_n + t.n) as usize] += 1;
                    }
                }
            }
            assert!(seen.iter().all(|&s| s == 1), "{m}x{n} group {group} cluster {cluster}: {seen:?}");
            for c in 0..clusters {
                let mut s =
                    TileScheduler::new(TileGrid { m, n, bm, bn, group_m: group, cluster_m: cluster }, 0, c, clusters);
                while s.len() > 0 {
                    let left = s.len();
                    assert!(s.next().is_some() && s.len() == left - 1);
                }
                assert!(s.next().is_none());
            }
        }
    }

    /// Round-robin: the block's index, then every grid-th.
    #[test]
    fn static_units_go_round_robin() {
        let mut ids = UnitCounter::at(core::ptr::null_mut(), false, 3, 5);
        assert_eq!([ids.next_id(), ids.next_id(), ids.next_id()], [3, 8, 13]);
        ids.finish(); // touches no counter
    }

    /// Consecutive units go down a group of tile rows first.
    #[test]
    fn the_raster_is_grouped() {
        let grid = |m: u32, n: u32, cluster_m: u32| TileGrid { m, n, bm: 128, bn: 256, group_m: 4, cluster_m };
        let s = TileScheduler::new(grid(8 * 128, 4 * 256, 1), 0, 0, 1);
        let order: Vec<(u32, u32)> = s.map(|t| (t.m, t.n)).collect();
        assert_eq!(&order[..6], &[(0, 0), (1, 0), (2, 0), (3, 0), (0, 1), (1, 1)]);
        assert_eq!(order[16], (4, 0));
        // A short last group: 5 rows in groups of 4.
        let s = TileScheduler::new(grid(5 * 128, 2 * 256, 1), 0, 8, 1);
        let tail: Vec<(u32, u32)> = s.map(|t| (t.m, t.n)).collect();
        assert_eq!(tail, [(4, 0), (4, 1)]);
        assert_eq!(grid(5 * 128, 2 * 256, 2).units(), 6);
    }
}
