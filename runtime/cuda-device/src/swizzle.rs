//! Shared-memory bank arithmetic and XOR swizzles: where a warp's accesses fall among the 32
//! banks, how many of them collide, and `Swizzle<B, M, S>`, which moves element offsets apart so
//! that a column of a row-major tile hits 32 different banks. All `const fn`s, usable in
//! `const { assert!(…) }` as well as on the device.
//!
//! ```ignore
//! type S = Swizzle<5, 0, 5>;                        // for a 32 × 32 tile of f32
//! let at = S::apply(row * 32 + col);                // write and read through the same mapping
//! const { assert!(swizzle::conflict_degree(&swizzle::column_offsets(32, 0), 4) == 32) };
//! ```

/// Banks of shared memory.
pub const BANKS: usize = 32;
/// Bytes per bank word.
pub const BANK_WIDTH_BYTES: usize = 4;
/// Lanes of a warp (the `[usize; WARP_LANES]` offsets of one warp-wide access).
pub const WARP_LANES: usize = 32;

/// The XOR swizzle `offset ^ (((offset >> S) & (2^B - 1)) << M)`: `B` bits taken at bit `S`
/// are XOR-ed into the bits at `M`. With `M + B <= S` (checked at compile time) the source bits
/// are untouched, so applying it twice gives the offset back.
///
/// ```ignore
/// assert_eq!(Swizzle::<3, 0, 3>::apply(0b1_010_001), 0b1_010_011);
/// ```
pub struct Swizzle<const B: usize, const M: usize, const S: usize>;

impl<const B: usize, const M: usize, const S: usize> Swizzle<B, M, S> {
    const VALID: () = assert!(M + B <= S, "Swizzle<B, M, S> needs M + B <= S (else it is not its own inverse)");

    /// `B`.
    pub const BITS: usize = B;
    /// `2^B`: how many different XOR patterns (bank groups) it spreads over.
    pub const SPREAD: usize = 1 << B;

    /// The swizzled offset.
    #[inline(always)]
    pub const fn apply(offset: usize) -> usize {
        let () = Self::VALID;
        offset ^ (((offset >> S) & ((1 << B) - 1)) << M)
    }

    /// The inverse of [`Swizzle::apply`], which is itself.
    #[inline(always)]
    pub const fn undo(offset: usize) -> usize {
        Self::apply(offset)
    }
}

/// The bank of element `elem_offset` of `elem_size`-byte elements (from a bank-aligned base).
///
/// ```ignore
/// assert_eq!(swizzle::bank_of(33, 4), 1);
/// ```
#[inline(always)]
pub const fn bank_of(elem_offset: usize, elem_size: usize) -> usize {
    elem_offset * elem_size / BANK_WIDTH_BYTES % BANKS
}

/// Bank use of one warp-wide access: per bank, how many lanes hit it.
const fn bank_counts(offsets: &[usize; WARP_LANES], elem_size: usize) -> [usize; BANKS] {
    let mut counts = [0; BANKS];
    let mut lane = 0;
    while lane < WARP_LANES {
        counts[bank_of(offsets[lane], elem_size)] += 1;
        lane += 1;
    }
    counts
}

/// How many lanes share the busiest bank: 1 is conflict-free, 32 fully serialised. (Lanes reading
/// the same word also count, although the hardware broadcasts those.)
///
/// ```ignore
/// assert_eq!(swizzle::conflict_degree(&swizzle::row_offsets(0, 32), 4), 1);
/// ```
pub const fn conflict_degree(offsets: &[usize; WARP_LANES], elem_size: usize) -> usize {
    let counts = bank_counts(offsets, elem_size);
    let mut worst = 0;
    let mut b = 0;
    while b < BANKS {
        if counts[b] > worst {
            worst = counts[b];
        }
        b += 1;
    }
    worst
}

/// How many different banks one warp-wide access touches.
///
/// ```ignore
/// assert_eq!(swizzle::banks_used(&swizzle::column_offsets(32, 0), 4), 1);
/// ```
pub const fn banks_used(offsets: &[usize; WARP_LANES], elem_size: usize) -> usize {
    let counts = bank_counts(offsets, elem_size);
    let mut used = 0;
    let mut b = 0;
    while b < BANKS {
        if counts[b] > 0 {
            used += 1;
        }
        b += 1;
    }
    used
}

/// Offsets of a warp reading column `col` of a row-major tile, lane `i` taking row `i`.
///
/// ```ignore
/// let down = swizzle::column_offsets(33, 5); // padded rows: conflict-free
/// ```
pub const fn column_offsets(row_stride_elems: usize, col: usize) -> [usize; WARP_LANES] {
    let mut out = [0; WARP_LANES];
    let mut lane = 0;
    while lane < WARP_LANES {
        out[lane] = lane * row_stride_elems + col;
        lane += 1;
    }
    out
}

/// Offsets of a warp reading row `row` of a row-major tile, lane `i` taking column `i`.
///
/// ```ignore
/// let across = swizzle::row_offsets(2, 32);
/// ```
pub const fn row_offsets(row: usize, row_stride_elems: usize) -> [usize; WARP_LANES] {
    let mut out = [0; WARP_LANES];
    let mut lane = 0;
    while lane < WARP_LANES {
        out[lane] = row * row_stride_elems + lane;
        lane += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_of_a_32_wide_tile_collide_and_padding_or_swizzling_fixes_it() {
        assert_eq!(conflict_degree(&column_offsets(32, 0), 4), 32);
        assert_eq!(banks_used(&column_offsets(32, 0), 4), 1);
        assert_eq!(conflict_degree(&column_offsets(33, 0), 4), 1);
        let mut swizzled = column_offsets(32, 7);
        for o in swizzled.iter_mut() {
            *o = Swizzle::<5, 0, 5>::apply(*o);
        }
        assert_eq!(conflict_degree(&swizzled, 4), 1);
        assert_eq!(conflict_degree(&row_offsets(3, 32), 4), 1);
    }

    #[test]
    fn a_swizzle_is_its_own_inverse() {
        for o in 0..4096 {
            assert_eq!(Swizzle::<3, 4, 7>::undo(Swizzle::<3, 4, 7>::apply(o)), o);
        }
        assert_eq!(Swizzle::<3, 0, 3>::apply(0b1_010_001), 0b1_010_011);
        assert_eq!(Swizzle::<2, 1, 4>::SPREAD, 4);
    }
}
