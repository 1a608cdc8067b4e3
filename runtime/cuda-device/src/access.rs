//! Planning vectorised global-memory accesses, in `const fn`s: what a transaction width (32, 64
//! or 128 bits per thread) means for elements per thread and per block and for the tile shapes
//! that avoid partial accesses ([`plan`], [`AccessPlan`], [`widest`]); and how many 128-byte cache
//! lines a warp's access pattern touches compared with the fewest it could ([`lines_touched`],
//! [`is_fully_coalesced`]).
//!
//! ```ignore
//! const PLAN: AccessPlan = match access::plan::<f32>(access::TXN_128, 256) { Some(p) => p, None => panic!() };
//! const { assert!(PLAN.elems_per_thread == 4 && PLAN.fits_tile(4096)) };
//! ```

use crate::swizzle::WARP_LANES;

/// A 32-bit access per thread, in bytes.
pub const TXN_32: usize = 4;
/// A 64-bit access per thread, in bytes.
pub const TXN_64: usize = 8;
/// A 128-bit access per thread (the widest load/store), in bytes.
pub const TXN_128: usize = 16;
/// Bytes of a cache line.
pub const LINE_BYTES: usize = 128;
/// Bytes of an L2 sector (a quarter line).
pub const SECTOR_BYTES: usize = 32;

/// What moving a tile with one transaction width takes.
///
/// ```ignore
/// let p = access::plan_for_elem_size(2, access::TXN_128, 128).unwrap();
/// assert_eq!((p.elems_per_thread, p.elems_per_block, p.min_extent(32)), (8, 1024, Some(32)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AccessPlan {
    /// Bytes per thread per access.
    pub txn_bytes: usize,
    /// The alignment the data needs for that width (bytes).
    pub align: usize,
    /// Elements per thread per access.
    pub elems_per_thread: usize,
    /// Threads taking part.
    pub threads: usize,
    /// Elements the threads move together in one access.
    pub elems_per_block: usize,
}

impl AccessPlan {
    /// For a tile whose rows are `other` elements long (rows not adjacent in memory), the fewest
    /// rows one block-wide access covers: `None` unless a thread's access divides a row and rows
    /// divide the block-wide access.
    pub const fn min_extent(&self, other: usize) -> Option<usize> {
        if other == 0 || !other.is_multiple_of(self.elems_per_thread) || !self.elems_per_block.is_multiple_of(other) {
            return None;
        }
        Some(self.elems_per_block / other)
    }

    /// Whether block-wide accesses move `tile_elems` elements exactly (no partial access).
    pub const fn fits_tile(&self, tile_elems: usize) -> bool {
        self.elems_per_block != 0 && tile_elems != 0 && tile_elems.is_multiple_of(self.elems_per_block)
    }

    /// How many block-wide accesses move `tile_elems` elements, when [`fits_tile`](Self::fits_tile).
    pub const fn passes_for_tile(&self, tile_elems: usize) -> Option<usize> {
        if self.fits_tile(tile_elems) { Some(tile_elems / self.elems_per_block) } else { None }
    }
}

/// The plan for elements of type `T`, `txn_bytes` per thread (one of the `TXN_*`), `threads`
/// threads; `None` for another width, zero threads, or a width that is not whole elements.
///
/// ```ignore
/// assert_eq!(access::plan::<f32>(access::TXN_128, 32).unwrap().elems_per_thread, 4);
/// ```
pub const fn plan<T>(txn_bytes: usize, threads: usize) -> Option<AccessPlan> {
    plan_for_elem_size(core::mem::size_of::<T>(), txn_bytes, threads)
}

/// [`plan`] for elements of `elem_size` bytes.
///
/// ```ignore
/// assert!(access::plan_for_elem_size(8, access::TXN_32, 32).is_none()); // an f64 is 64 bits
/// ```
pub const fn plan_for_elem_size(elem_size: usize, txn_bytes: usize, threads: usize) -> Option<AccessPlan> {
    if threads == 0 || elem_size == 0 {
        return None;
    }
    if txn_bytes != TXN_32 && txn_bytes != TXN_64 && txn_bytes != TXN_128 {
        return None;
    }
    if !txn_bytes.is_multiple_of(elem_size) {
        return None;
    }
    let elems_per_thread = txn_bytes / elem_size;
    match threads.checked_mul(elems_per_thread) {
        Some(elems_per_block) => {
            Some(AccessPlan { txn_bytes, align: txn_bytes, elems_per_thread, threads, elems_per_block })
        }
        None => None,
    }
}

/// The widest width whose plan moves `tile_elems` elements of `T` exactly with `threads` threads.
///
/// ```ignore
/// assert_eq!(access::widest::<f32>(32 * 4, 32).unwrap().txn_bytes, access::TXN_128);
/// ```
pub const fn widest<T>(tile_elems: usize, threads: usize) -> Option<AccessPlan> {
    let widths = [TXN_128, TXN_64, TXN_32];
    let mut i = 0;
    while i < widths.len() {
        if let Some(p) = plan::<T>(widths[i], threads)
            && p.fits_tile(tile_elems)
        {
            return Some(p);
        }
        i += 1;
    }
    None
}

/// First and last cache line of one lane's `elem_size`-byte access at element `elem_offset`.
const fn lines_of(elem_offset: usize, elem_size: usize) -> (usize, usize) {
    let first_byte = elem_offset.saturating_mul(elem_size);
    let last_byte = first_byte.saturating_add(elem_size - 1);
    (first_byte / LINE_BYTES, last_byte / LINE_BYTES)
}

/// Distinct cache lines a warp touches when lane `i` accesses `elem_size` bytes at element
/// `offsets[i]` (from a line-aligned base); a lane straddling two lines counts both.
///
/// ```ignore
/// let lanes: [usize; 32] = core::array::from_fn(|i| i);
/// assert_eq!(access::lines_touched(&lanes, 16), 4);  // 512 contiguous bytes
/// ```
pub const fn lines_touched(offsets: &[usize; WARP_LANES], elem_size: usize) -> usize {
    if elem_size == 0 {
        return 0;
    }
    let mut count = 0;
    let mut lane = 0;
    while lane < WARP_LANES {
        let (first, last) = lines_of(offsets[lane], elem_size);
        let mut line = first;
        loop {
            // Counted once: by the first lane that touches it.
            let mut earlier = 0;
            let mut seen = false;
            while earlier < lane {
                let (f, l) = lines_of(offsets[earlier], elem_size);
                seen |= f <= line && line <= l;
                earlier += 1;
            }
            if !seen {
                count += 1;
            }
            if line >= last {
                break;
            }
            line += 1;
        }
        lane += 1;
    }
    count
}

/// The fewest cache lines `total_bytes` can occupy.
///
/// ```ignore
/// assert_eq!(access::minimum_lines(129), 2);
/// ```
pub const fn minimum_lines(total_bytes: usize) -> usize {
    total_bytes.div_ceil(LINE_BYTES)
}

/// Lines a warp's access touches beyond the fewest its bytes need.
///
/// ```ignore
/// assert_eq!(access::wasted_lines(&swizzle::column_offsets(32, 0), 4), 31);
/// ```
pub const fn wasted_lines(offsets: &[usize; WARP_LANES], elem_size: usize) -> usize {
    lines_touched(offsets, elem_size).saturating_sub(minimum_lines(WARP_LANES.saturating_mul(elem_size)))
}

/// Whether a warp's access touches no more lines than its bytes need (no wasted lines).
///
/// ```ignore
/// const { assert!(access::is_fully_coalesced(&swizzle::row_offsets(0, 32), 4)) };
/// ```
pub const fn is_fully_coalesced(offsets: &[usize; WARP_LANES], elem_size: usize) -> bool {
    wasted_lines(offsets, elem_size) == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::swizzle::{column_offsets, row_offsets};

    #[test]
    fn plans_and_tile_shapes() {
        let p = plan_for_elem_size(2, TXN_128, 128).unwrap();
        assert_eq!((p.elems_per_thread, p.elems_per_block, p.align), (8, 1024, 16));
        assert_eq!(p.min_extent(32), Some(32));
        assert_eq!(p.min_extent(12), None);
        assert_eq!(p.passes_for_tile(4096), Some(4));
        assert!(plan::<f64>(TXN_32, 32).is_none());
        assert!(plan::<f32>(12, 32).is_none());
        assert_eq!(widest::<f32>(64, 32).map(|p| p.txn_bytes), Some(TXN_64));
    }

    #[test]
    fn coalescing() {
        let lanes: [usize; 32] = core::array::from_fn(|i| i);
        assert_eq!(lines_touched(&lanes, 16), 4);
        assert!(is_fully_coalesced(&row_offsets(0, 32), 4));
        assert_eq!(wasted_lines(&column_offsets(32, 0), 4), 31);
        // One lane straddling a line boundary costs a line more.
        let mut odd = lanes;
        odd[31] = 1000;
        assert_eq!(lines_touched(&odd, 4), 2);
    }
}
