//! [`SmemTile<T, ROWS, COLS>`]: a `ROWS × COLS` tile of `T` in shared memory, laid out the way
//! TMA's 128-byte swizzle writes it and a `wgmma` descriptor of layout type 1 reads it.
//!
//! Layout: the tile is cut into *panels* of 128 bytes of columns (`PANEL_COLS = 128 / size_of::<T>()`
//! columns, 64 for bf16); panel `p` holds rows `0..ROWS` of columns `p·PANEL_COLS..`, one
//! 128-byte line per row, at byte `p · ROWS · 128`. Inside a line, 16-byte chunk `c` of row `r`
//! sits at chunk `c ^ (r % 8)` (the swizzle, from address bits 7..9, which is why the tile must
//! be 1024-byte aligned). One TMA box of `PANEL_COLS × ROWS` elements fills one panel, so a map
//! for a tile has the box [`SmemTile::BOX_COLS`] × [`SmemTile::BOX_ROWS`] and
//! `TmaSwizzle::B128`.
//!
//! For a `wgmma` operand the tile is K-major (K along the columns, A row-major or B column-major):
//! [`SmemTile::descriptor`] describes the 16-element (bf16) K slice at column `k`. A 16-bit tile
//! whose rows are K (A column-major, B row-major, attention's V) is an MN-major operand:
//! [`SmemTile::descriptor_mn_major`] describes its 16 K rows from row `k`.
//!
//! ```ignore
//! type ATile = SmemTile<bf16, 128, 64>; // 16 KiB: one 128 × 64 box
//! let a = unsafe { ATile::from_ptr(smem) };              // 1024-byte aligned shared memory
//! unsafe { a.load(&a_map, k0 as i32, row0 as i32, full) }; // TMA, counted on `full`
//! let desc = a.rows::<64>(1).descriptor(16);              // rows 64..128, K 16..32
//! ```

use core::marker::PhantomData;
use core::mem::size_of;

use crate::mbarrier::MBarrier;
use crate::tma::{self, TensorMap};
use crate::wgmma::{self, Swizzle};

/// Bytes of one swizzled line (the 128-byte swizzle's span): one row of one panel.
pub const SPAN: usize = 128;

/// Alignment of a 128-byte-swizzled tile: the pattern repeats every 8 lines (1024 bytes) and is
/// taken from the address bits, so a tile starts on a 1024-byte boundary.
pub const ALIGN: usize = 1024;

/// A `ROWS × COLS` tile of `T` in this block's shared memory, 128-byte swizzled (see the module
/// docs for the layout). A handle: copying it copies the address, not the data.
///
/// Shapes that do not compile: `COLS` not a multiple of a panel (128 bytes), `ROWS` not a
/// multiple of 8 or above 256 (a TMA box side), elements other than 1, 2 or 4 bytes.
pub struct SmemTile<T, const ROWS: usize, const COLS: usize> {
    ptr: *mut T,
    _elem: PhantomData<T>,
}

impl<T, const ROWS: usize, const COLS: usize> Clone for SmemTile<T, ROWS, COLS> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T, const ROWS: usize, const COLS: usize> Copy for SmemTile<T, ROWS, COLS> {}

impl<T, const ROWS: usize, const COLS: usize> core::fmt::Debug for SmemTile<T, ROWS, COLS> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "SmemTile<{ROWS}x{COLS}>({:p})", self.ptr)
    }
}

impl<T, const ROWS: usize, const COLS: usize> SmemTile<T, ROWS, COLS> {
    const SHAPE: () = {
        let e = size_of::<T>();
        assert!(e == 1 || e == 2 || e == 4, "SmemTile elements are 1, 2 or 4 bytes");
        assert!(COLS > 0 && (COLS * e).is_multiple_of(SPAN), "SmemTile: COLS must fill whole 128-byte panels");
        assert!(ROWS > 0 && ROWS.is_multiple_of(8) && ROWS <= 256, "SmemTile: ROWS must be a multiple of 8 in 8..=256");
    };

    /// Elements per panel row: `128 / size_of::<T>()` (64 for bf16).
    pub const PANEL_COLS: usize = SPAN / size_of::<T>();
    /// Panels side by side: `COLS / PANEL_COLS`.
    pub const PANELS: usize = COLS / Self::PANEL_COLS;
    /// Bytes of one panel (`ROWS` lines of 128 bytes).
    pub const PANEL_BYTES: usize = ROWS * SPAN;
    /// Bytes of the tile.
    pub const BYTES: usize = ROWS * COLS * size_of::<T>();
    /// The TMA box a map must have for [`load`](Self::load) and [`store`](Self::store): this
    /// many columns (innermost) ...
    pub const BOX_COLS: u32 = Self::PANEL_COLS as u32;
    /// ... by this many rows.
    pub const BOX_ROWS: u32 = ROWS as u32;

    /// The tile at `ptr`.
    ///
    /// # Safety
    /// `ptr` points into this block's shared memory, is [`ALIGN`]-byte aligned and has
    /// [`BYTES`](Self::BYTES) bytes that are used as this tile (through this handle and its
    /// copies) while it is in use.
    #[inline(always)]
    pub const unsafe fn from_ptr(ptr: *mut u8) -> Self {
        let () = Self::SHAPE;
        SmemTile { ptr: ptr.cast(), _elem: PhantomData }
    }

    /// The tile's first byte.
    #[inline(always)]
    pub const fn as_ptr(self) -> *mut T {
        self.ptr
    }

    /// Byte offset of element (`row`, `col`) from the tile's start, swizzled.
    ///
    /// ```
    /// use cuda_device::tile::SmemTile;
    /// type T = SmemTile<u16, 16, 128>; // two panels of 64 columns
    /// assert_eq!(T::byte_offset(0, 9), 18); // row 0 is not permuted
    /// assert_eq!(T::byte_offset(1, 0), 128 + 16); // row 1: chunk 0 goes to chunk 1
    /// assert_eq!(T::byte_offset(3, 64), 16 * 128 + 3 * 128 + 3 * 16); // panel 1
    /// ```
    #[inline(always)]
    pub const fn byte_offset(row: usize, col: usize) -> usize {
        let (panel, c) = (col / Self::PANEL_COLS, col % Self::PANEL_COLS);
        let byte = c * size_of::<T>();
        panel * Self::PANEL_BYTES + row * SPAN + (((byte / 16) ^ (row % 8)) * 16) + byte % 16
    }

    /// Rows `i·SUB .. (i+1)·SUB` as a tile of their own (a single-panel tile only, where those
    /// rows are contiguous; `SUB` a multiple of 8, so the sub-tile stays 1024-byte aligned).
    /// Traps when `i` is past the last whole sub-tile.
    #[inline(always)]
    pub fn rows<const SUB: usize>(self, i: usize) -> SmemTile<T, SUB, COLS> {
        const {
            assert!(COLS * size_of::<T>() == SPAN, "SmemTile::rows: a single-panel tile only");
            assert!(SUB <= ROWS && ROWS.is_multiple_of(SUB), "SmemTile::rows: SUB must divide ROWS")
        };
        let () = SmemTile::<T, SUB, COLS>::SHAPE;
        if i >= ROWS / SUB {
            crate::trap()
        }
        SmemTile { ptr: self.ptr.wrapping_byte_add(i * SUB * SPAN), _elem: PhantomData }
    }

    /// Columns `i·SUB .. (i+1)·SUB` as a tile of their own: whole panels (`SUB` a multiple of
    /// [`PANEL_COLS`](Self::PANEL_COLS)), which lie one after another. Traps when `i` is past the
    /// last whole sub-tile.
    #[inline(always)]
    pub fn cols<const SUB: usize>(self, i: usize) -> SmemTile<T, ROWS, SUB> {
        const {
            assert!(SUB.is_multiple_of(SPAN / size_of::<T>()), "SmemTile::cols: SUB must be whole panels");
            assert!(SUB <= COLS && COLS.is_multiple_of(SUB), "SmemTile::cols: SUB must divide COLS")
        };
        let () = SmemTile::<T, ROWS, SUB>::SHAPE;
        if i >= COLS / SUB {
            crate::trap()
        }
        SmemTile {
            ptr: self.ptr.wrapping_byte_add(i * (SUB / Self::PANEL_COLS) * Self::PANEL_BYTES),
            _elem: PhantomData,
        }
    }

    /// Reads element (`row`, `col`).
    ///
    /// # Safety
    /// `row < ROWS`, `col < COLS`; the element was written (by this or another thread, ordered
    /// before by a barrier, or by TMA whose phase the thread has seen complete) and is not
    /// being written.
    #[inline(always)]
    pub unsafe fn read(self, row: usize, col: usize) -> T
    where
        T: Copy,
    {
        unsafe { self.ptr.byte_add(Self::byte_offset(row, col)).read() }
    }

    /// Writes element (`row`, `col`).
    ///
    /// # Safety
    /// `row < ROWS`, `col < COLS`; no other thread or copy reads or writes the element
    /// concurrently. TMA stores and `wgmma` read through the async proxy: the writing threads
    /// call [`crate::mbarrier::fence_proxy_async`] before the barrier that orders them.
    #[inline(always)]
    pub unsafe fn write(self, row: usize, col: usize, value: T) {
        unsafe { self.ptr.byte_add(Self::byte_offset(row, col)).write(value) }
    }

    /// Writes elements (`row`, `col`) and (`row`, `col + 1`) at once from `pair`, a value of
    /// two elements (`Bf16x2` for `bf16`).
    ///
    /// # Safety
    /// As [`write`](Self::write) for both elements; `col` is even.
    #[inline(always)]
    pub unsafe fn write_pair<P>(self, row: usize, col: usize, pair: P) {
        const { assert!(size_of::<P>() == 2 * size_of::<T>(), "write_pair: P holds two elements") };
        unsafe { self.ptr.byte_add(Self::byte_offset(row, col)).cast::<P>().write(pair) }
    }

    /// Starts loading the tile from element (`x` column, `y` row) of `map` with TMA, one box per
    /// panel, counting its [`BYTES`](Self::BYTES) on `bar`. Rows and columns outside the tensor
    /// arrive as zeros (and still count).
    ///
    /// # Safety
    /// `map` is a tensor map of `T` with the box [`BOX_COLS`](Self::BOX_COLS) ×
    /// [`BOX_ROWS`](Self::BOX_ROWS) and `TmaSwizzle::B128`, over memory that stays valid until
    /// the copy completes; `bar` is an initialised barrier of this block whose current phase
    /// expects these bytes; nothing reads or writes the tile until that phase completes.
    #[inline(always)]
    pub unsafe fn load(self, map: &TensorMap, x: i32, y: i32, bar: MBarrier) {
        let mut p = 0;
        while p < Self::PANELS {
            let dst = self.ptr.wrapping_byte_add(p * Self::PANEL_BYTES).cast::<u8>();
            unsafe { tma::load_2d(dst, map, x + (p * Self::PANEL_COLS) as i32, y, bar) };
            p += 1;
        }
    }

    /// [`load`](Self::load), delivered to this tile's place in every block of the cluster whose
    /// rank bit is set in `cta_mask`, counted on the barrier at `bar`'s place in each.
    ///
    /// # Safety
    /// As [`load`](Self::load) in every block of `cta_mask`, and the rules of
    /// [`tma::load_2d_multicast`]: those blocks run, their barriers were initialised before
    /// (with a cluster barrier in between), their phases expect these bytes, and none of them
    /// exits before its phase completes.
    #[inline(always)]
    pub unsafe fn load_multicast(self, map: &TensorMap, x: i32, y: i32, bar: MBarrier, cta_mask: u16) {
        let mut p = 0;
        while p < Self::PANELS {
            let dst = self.ptr.wrapping_byte_add(p * Self::PANEL_BYTES).cast::<u8>();
            unsafe { tma::load_2d_multicast(dst, map, x + (p * Self::PANEL_COLS) as i32, y, bar, cta_mask) };
            p += 1;
        }
    }

    /// Starts storing the tile to element (`x` column, `y` row) of `map` with TMA, one box per
    /// panel; parts outside the tensor are dropped (a ragged edge needs no mask). Close the
    /// batch with [`tma::commit_group`]; the tile may be overwritten after
    /// [`tma::wait_group_read`], and the block may exit only after that.
    ///
    /// # Safety
    /// `map` as for [`load`](Self::load); every thread that wrote the tile called
    /// [`crate::mbarrier::fence_proxy_async`] and then met this thread at a barrier.
    #[inline(always)]
    pub unsafe fn store(self, map: &TensorMap, x: i32, y: i32) {
        let mut p = 0;
        while p < Self::PANELS {
            let src = self.ptr.wrapping_byte_add(p * Self::PANEL_BYTES).cast::<u8>().cast_const();
            unsafe { tma::store_2d(map, x + (p * Self::PANEL_COLS) as i32, y, src) };
            p += 1;
        }
    }

    /// The `wgmma` descriptor of this tile as a K-major operand (A `ROWS × 16`, or B with
    /// `ROWS` = N), starting `k` elements along K (the columns): `k` a multiple of
    /// `32 / size_of::<T>()` (16 for bf16, one `wgmma` K step).
    ///
    /// ```ignore
    /// for kk in 0..4 { wgmma::mma_bf16(&mut acc, a.descriptor(16 * kk), b.descriptor(16 * kk), true) }
    /// ```
    #[inline(always)]
    pub fn descriptor(self, k: usize) -> u64 {
        let (panel, c) = (k / Self::PANEL_COLS, k % Self::PANEL_COLS);
        // SAFETY: `from_ptr`'s contract: the tile is in this block's shared memory.
        let base = unsafe { crate::shared::cvta_generic_to_shared_offset(self.ptr.cast_const().cast()) } as u32;
        let at = base + (panel * Self::PANEL_BYTES + c * size_of::<T>()) as u32;
        // Leading offset unused for swizzled K-major tiles (1 by convention), 1024 bytes between
        // groups of 8 rows: constant bits, folded; the address field (bits 0..14, `addr >> 4`)
        // in 32-bit arithmetic, which keeps the per-k-step work between two `wgmma` short.
        const FIXED: u64 = wgmma::descriptor(0, 16, 8 * SPAN as u32, Swizzle::B128);
        FIXED | ((at >> 4) & 0x3FFF) as u64
    }

    /// The `wgmma` descriptor of this tile as an MN-major operand, as TMA stored it: the rows
    /// are K, the columns M (A column-major) or N (B row-major; attention's V, `[keys][d]`, for
    /// `O += P·V`), each panel a 64-wide block of them, starting `k` rows along K (`k` a multiple
    /// of 16). Use with [`wgmma::mma_major`] or the `*_mn_b` forms. 16-bit elements only: `wgmma`
    /// has no MN-major fp8 form.
    #[inline(always)]
    pub fn descriptor_mn_major(self, k: usize) -> u64 {
        const { assert!(size_of::<T>() == 2, "SmemTile::descriptor_mn_major: 16-bit elements only") };
        // SAFETY: `from_ptr`'s contract: the tile is in this block's shared memory.
        unsafe { wgmma::descriptor_mn_major_128b(self.ptr.cast_const(), k as u32, ROWS as u32) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The swizzle TMA documents: byte address bits 4..6 XOR-ed with bits 7..9.
    fn tma_swizzle(addr: usize) -> usize {
        addr ^ (((addr >> 7) & 7) << 4)
    }

    #[test]
    fn descriptors_match_the_wgmma_encoding() {
        // The address part of `descriptor`, against `wgmma::descriptor` of the whole address.
        for at in [0u32, 0x400, 0x1_2340, 0x3_FFF0] {
            let fixed = wgmma::descriptor(0, 16, 1024, Swizzle::B128);
            assert_eq!(fixed | ((at >> 4) & 0x3FFF) as u64, wgmma::descriptor(at, 16, 1024, Swizzle::B128));
        }
    }

    #[test]
    fn offsets_follow_the_tma_128_byte_swizzle() {
        type T = SmemTile<u16, 64, 64>;
        for row in 0..64 {
            for col in 0..64 {
                assert_eq!(T::byte_offset(row, col), tma_swizzle(row * 128 + col * 2), "({row}, {col})");
            }
        }
    }

    #[test]
    fn every_element_has_its_own_place() {
        type T = SmemTile<u16, 32, 192>;
        let mut seen = [false; 32 * 192];
        for row in 0..32 {
            for col in 0..192 {
                let o = T::byte_offset(row, col);
                assert!(o < T::BYTES && o.is_multiple_of(2));
                assert!(!seen[o / 2], "({row}, {col}) collides");
                seen[o / 2] = true;
            }
        }
        assert_eq!((T::PANELS, T::PANEL_COLS, T::BOX_COLS, T::BOX_ROWS), (3, 64, 64, 32));
    }

    #[test]
    fn a_warps_pair_writes_of_an_accumulator_fragment_hit_32_banks() {
        // Lane l writes the pair at row l / 4, column 8 j + 2 (l % 4): 4 bytes each.
        type T = SmemTile<u16, 64, 64>;
        for j in 0..8 {
            let mut banks = [0u32; 32];
            for l in 0..32 {
                banks[T::byte_offset(l / 4, 8 * j + 2 * (l % 4)) / 4 % 32] += 1;
            }
            assert!(banks.iter().all(|&b| b == 1), "column block {j}: {banks:?}");
        }
    }
}
