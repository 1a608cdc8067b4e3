//! Epilogues: a warpgroup's f32 `wgmma` accumulator (64 × N) → an [`EpilogueOp`] per value
//! (scale, bias, activation, or any closure of the value, row and column) → bf16 → global memory,
//! either
//! - directly ([`store_accumulator`]): each thread stores its value pairs (`Bf16x2`, 4 bytes)
//!   into a row-major matrix, masked to the matrix's rows and columns (a ragged edge is fine); or
//! - through shared memory and TMA ([`stage_accumulator_stmatrix`] + [`SmemTile::store`], put
//!   together in [`store_accumulator_tma`]): the warpgroup writes 64 × `COLS` chunks into
//!   swizzled staging tiles with `stmatrix` (16 × 16 values a warp instruction, conflict-free),
//!   and one thread stores each with TMA, which drops what is outside the tensor. The copies run
//!   while the warpgroup goes on — in examples/gemm this took a 4096³ GEMM from 88 % to 94–95 %
//!   of cuBLAS's speed on an H100 ([`stage_accumulator`] writes pairs instead: 8× the
//!   instructions).
//!
//! [`store_rows`] stores one value per row (a row reduction: attention's log-sum-exp).
//!
//! ```ignore
//! let out = Bf16Out::new(c, m, n)?;                         // checked once
//! let op = Linear { alpha, bias, act: Relu };              // relu(alpha · acc + bias[col])
//! store_accumulator(&acc, &out, row0, col0, &|v, r, c| op.apply(v, r, c));
//! ```
//!
//! **Inlining.** These functions take the accumulator by reference; they must be inlined into
//! the kernel, or the accumulator is moved to local memory (kilobytes of spills). The device
//! compiler does not yet turn `#[inline(always)]` into LLVM's `alwaysinline`, and LLVM will not
//! inline a fully unrolled epilogue on cost — except into its only caller. So call each of them
//! once per kernel for a given `op` type (inside the tile loop, not in two branches), or give
//! each call site its own closure as `op`, as above: a closure has a type of its own.

use core::marker::PhantomData;

use crate::half::{Bf16x2, bf16};
use crate::mbarrier;
use crate::tile::rows::rows_of;
use crate::tile::smem::SmemTile;
use crate::tile::warpgroup;
use crate::tma::{self, TensorMap};
use crate::wgmma::Accumulator;

/// What an epilogue does to each accumulator value (at `row`, `col` of the output) before it is
/// rounded to bf16. Closures `Fn(f32, usize, usize) -> f32` are epilogue ops.
pub trait EpilogueOp {
    /// The value to store for accumulator value `v` at (`row`, `col`).
    fn apply(&self, v: f32, row: usize, col: usize) -> f32;
}

impl<F: Fn(f32, usize, usize) -> f32> EpilogueOp for F {
    #[inline(always)]
    fn apply(&self, v: f32, row: usize, col: usize) -> f32 {
        self(v, row, col)
    }
}

/// Stores the accumulator as it is.
#[derive(Clone, Copy, Debug, Default)]
pub struct Identity;

impl EpilogueOp for Identity {
    #[inline(always)]
    fn apply(&self, v: f32, _row: usize, _col: usize) -> f32 {
        v
    }
}

/// An activation function applied after scale and bias, chosen by type ([`NoAct`], [`Relu`],
/// [`Gelu`]), so that the epilogue holds only its own code (see the module docs on inlining).
pub trait Activation: Copy {
    /// The activation of `x`.
    fn apply(self, x: f32) -> f32;
}

/// No activation: `x`.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoAct;

impl Activation for NoAct {
    #[inline(always)]
    fn apply(self, x: f32) -> f32 {
        x
    }
}

/// `max(x, 0)`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Relu;

impl Activation for Relu {
    #[inline(always)]
    fn apply(self, x: f32) -> f32 {
        x.max(0.0)
    }
}

/// GELU, tanh form: `x/2 · (1 + tanh(√(2/π) (x + 0.044715 x³)))`, with `tanh.approx` (device
/// only).
#[derive(Clone, Copy, Debug, Default)]
pub struct Gelu;

impl Activation for Gelu {
    #[inline(always)]
    fn apply(self, x: f32) -> f32 {
        let inner = 0.797_884_6 * (x + 0.044_715 * x * x * x);
        0.5 * x * (1.0 + crate::float::tanh_approx_f32(inner))
    }
}

/// `act(alpha · acc + bias[col])`, the usual GEMM epilogue. An empty `bias` (or columns past
/// its end) adds nothing.
#[derive(Clone, Copy, Debug)]
pub struct Linear<'a, A: Activation = NoAct> {
    /// Scale of the accumulator.
    pub alpha: f32,
    /// Per-column bias (`bias[col]`), or empty.
    pub bias: &'a [f32],
    /// Applied last.
    pub act: A,
}

impl<A: Activation> EpilogueOp for Linear<'_, A> {
    #[inline(always)]
    fn apply(&self, v: f32, _row: usize, col: usize) -> f32 {
        let b = match self.bias.get(col) {
            Some(&b) => b,
            None => 0.0,
        };
        self.act.apply(self.alpha * v + b)
    }
}

/// A row-major `rows × cols` bf16 matrix in global memory, seen as `Bf16x2` pairs, whose size
/// was checked once against its slice, so that the epilogue's stores need only compare row and
/// column (a ragged edge's mask).
#[derive(Debug)]
pub struct Bf16Out<'a> {
    ptr: *mut Bf16x2,
    rows: usize,
    cols: usize,
    _slice: PhantomData<&'a mut [Bf16x2]>,
}

impl<'a> Bf16Out<'a> {
    /// `c` as a `rows × cols` matrix (`cols` even); `None` when `cols` is odd or
    /// `rows · cols / 2` pairs do not fit in `c`.
    #[inline(always)]
    pub fn new(c: &'a mut [Bf16x2], rows: usize, cols: usize) -> Option<Self> {
        let pairs = rows.checked_mul(cols)? / 2;
        if !cols.is_multiple_of(2) || pairs > c.len() {
            return None;
        }
        Some(Bf16Out { ptr: c.as_mut_ptr(), rows, cols, _slice: PhantomData })
    }

    /// Rows.
    #[inline(always)]
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Columns.
    #[inline(always)]
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// Stores (`lo`, `hi`) at (`row`, `col`) and (`row`, `col + 1`) if `row < rows` and
    /// `col < cols` (else nothing); `col` even.
    #[inline(always)]
    pub fn store_pair(&self, row: usize, col: usize, lo: f32, hi: f32) {
        if row < self.rows && col < self.cols {
            // SAFETY: in bounds (checked against the slice in `new`); `col` even and `cols`
            // even, so the pair is one `Bf16x2` of the slice. Threads store disjoint pairs.
            unsafe { self.ptr.add((row * self.cols + col) / 2).write(Bf16x2::from_f32(lo, hi)) }
        }
    }
}

/// Stores this thread's part of a warpgroup's 64 × `2R` accumulator at (`row0`, `col0`) of
/// `out`: each value `v` at (`row`, `col`) becomes `op.apply(v, row, col)` rounded to bf16;
/// values outside `out` are not stored. `col0` even. Called by all 128 threads of the warpgroup
/// (each stores its own values; no synchronisation).
#[inline(always)]
pub fn store_accumulator<const R: usize>(
    acc: &Accumulator<R>,
    out: &Bf16Out<'_>,
    row0: usize,
    col0: usize,
    op: &impl EpilogueOp,
) {
    let t = warpgroup::thread();
    crate::unroll!(for p in 0..R / 2 {
        let i = 2 * p;
        let (r, c) = Accumulator::<R>::coord(t, i);
        let (row, col) = (row0 + r, col0 + c);
        out.store_pair(row, col, op.apply(acc.d[i], row, col), op.apply(acc.d[i + 1], row, col + 1));
    });
}

/// Stores one value per row of a warpgroup's accumulator — a row reduction's `[f32; 2]`, as
/// [`RowOps`](crate::tile::RowOps) gives it (attention's log-sum-exp) — at `out[row0 + row]`,
/// rows past `out`'s end not stored. Called by all 128 threads of the warpgroup; the first lane
/// of each quad stores (the 4 lanes hold the same rows and values).
#[inline(always)]
pub fn store_rows(out: &mut [f32], row0: usize, values: [f32; 2]) {
    let t = warpgroup::thread();
    if t.is_multiple_of(4) {
        let rows = rows_of(t);
        crate::unroll!(for h in 0..2 {
            if let Some(v) = out.get_mut(row0 + rows[h]) {
                *v = values[h];
            }
        });
    }
}

/// Writes this thread's values of accumulator columns `first_col .. first_col + COLS` into
/// `tile` (64 rows), through `op` (given the output's `row0 + row`, `col0 + col`) and rounded to
/// bf16. Pair stores land in 32 different banks per warp (the swizzle spreads the 8 rows).
///
/// # Safety
/// All 128 threads of the warpgroup call it; nobody else reads or writes `tile` until they meet
/// at a barrier after it (and, for a TMA store of it, after [`mbarrier::fence_proxy_async`]);
/// a previous TMA store of `tile` has finished reading it. `first_col` a multiple of 8.
#[inline(always)]
pub unsafe fn stage_accumulator<const R: usize, const COLS: usize>(
    acc: &Accumulator<R>,
    tile: SmemTile<bf16, 64, COLS>,
    first_col: usize,
    row0: usize,
    col0: usize,
    op: &impl EpilogueOp,
) {
    let t = warpgroup::thread();
    crate::unroll!(for p in 0..R / 2 {
        let i = 2 * p;
        let (r, c) = Accumulator::<R>::coord(t, i);
        if c >= first_col && c < first_col + COLS {
            let (row, col) = (row0 + r, col0 + c);
            let pair = Bf16x2::from_f32(op.apply(acc.d[i], row, col), op.apply(acc.d[i + 1], row, col + 1));
            unsafe { tile.write_pair(r, c - first_col, pair) };
        }
    });
}

/// [`stage_accumulator`] with `stmatrix`: each `stmatrix.x4` writes a warp's 16 rows × 16
/// columns (four 8 × 8 matrices, a 16-byte row each) — 8 instructions per 64 × 128 chunk and
/// thread instead of 64 pair stores, all conflict-free in the swizzled tile.
///
/// # Safety
/// As [`stage_accumulator`]; `first_col` a multiple of 16 (`COLS` is, or it does not compile).
#[inline(always)]
pub unsafe fn stage_accumulator_stmatrix<const R: usize, const COLS: usize>(
    acc: &Accumulator<R>,
    tile: SmemTile<bf16, 64, COLS>,
    first_col: usize,
    row0: usize,
    col0: usize,
    op: &impl EpilogueOp,
) {
    const { assert!(COLS.is_multiple_of(16), "stage_accumulator_stmatrix: COLS must be a multiple of 16") };
    let t = warpgroup::thread() as usize;
    let (w, l) = (t / 32, t % 32);
    // This lane's value pairs: register 4j + 2h (+1) is row 16 w + l / 4 + 8 h, columns
    // 8 j + 2 (l % 4) (+1); `stmatrix` takes exactly that as an 8 × 8 matrix's fragment.
    let pair = |i: usize| {
        let (r, c) = Accumulator::<R>::coord(t as u32, i);
        let (row, col) = (row0 + r, col0 + c);
        Bf16x2::from_f32(op.apply(acc.d[i], row, col), op.apply(acc.d[i + 1], row, col + 1)).to_bits()
    };
    // Lane l gives the address of row l % 8 of matrix l / 8: matrices (rows 0-7, block j),
    // (rows 8-15, block j), (rows 0-7, block j + 1), (rows 8-15, block j + 1).
    let (q, rr) = (l / 8, l % 8);
    let row = 16 * w + 8 * (q % 2) + rr;
    // Over every 16 columns of the accumulator, storing those in the chunk: register indices
    // known at compile time keep the accumulator in registers (`first_col` may not be).
    crate::unroll!(for j2 in 0..R / 8 {
        let j = 2 * j2; // the 8-column block of the first two matrices
        if 8 * j >= first_col && 8 * j < first_col + COLS {
            let regs = [pair(4 * j), pair(4 * j + 2), pair(4 * j + 4), pair(4 * j + 6)];
            let col = 8 * (j + q / 2) - first_col;
            // SAFETY: (row, col) is in the tile (64 rows, col + 8 ≤ COLS), its 16 bytes one
            // swizzle chunk; the caller's contract covers the rest.
            let at = unsafe { tile.as_ptr().cast::<u8>().add(SmemTile::<bf16, 64, COLS>::byte_offset(row, col)) };
            unsafe { crate::mma::stmatrix_x4(at, regs) };
        }
    });
}

/// `cp.async.bulk.wait_group.read 1`: at most one of this thread's committed bulk stores (the
/// newest) still reads its shared source; [`tma::wait_group_read`] waits for all.
#[inline(always)]
pub fn wait_group_read_all_but_newest() {
    crate::intrinsics::cp_async_bulk_wait_group_read1()
}

/// Stores a warpgroup's 64 × `2R` accumulator at (`row0`, `col0`) of the tensor `map`
/// describes, through `op`, in chunks of 64 × `COLS` staged alternately in `bufs[0]` and
/// `bufs[1]` ([`stage_accumulator_stmatrix`]) and stored by TMA from the warpgroup's first
/// thread. Rows and columns outside the
/// tensor are dropped by TMA. On return the last stores may still be reading `bufs`: the next
/// call waits for them, and before the block exits the leader calls [`tma::wait_group_read`].
///
/// # Safety
/// All 128 threads of the warpgroup call it together; `bar_id` (1..=15) is a named barrier no
/// other threads use meanwhile; `map` is a bf16 map with box 64 × 64 (one panel of a chunk) and
/// 128-byte swizzle; `bufs` are this warpgroup's own; `2R` is a multiple of `COLS`.
#[inline(always)]
pub unsafe fn store_accumulator_tma<const R: usize, const COLS: usize>(
    acc: &Accumulator<R>,
    bufs: [SmemTile<bf16, 64, COLS>; 2],
    map: &TensorMap,
    row0: usize,
    col0: usize,
    bar_id: u32,
    op: &impl EpilogueOp,
) {
    const { assert!((2 * R).is_multiple_of(COLS), "store_accumulator_tma: N must be a multiple of COLS") };
    let leader = warpgroup::is_leader();
    // (Selected by value, not `bufs[chunk % 2]`: an array indexed at run time stays in memory.)
    let [even, odd] = bufs;
    // A loop, not unrolled: one call of `stage_accumulator` (see the module docs on inlining).
    for chunk in 0..2 * R / COLS {
        let buf = if chunk % 2 == 0 { even } else { odd };
        // The store that last read this buffer (two chunks ago, or the previous call's) is done
        // with it: at most the newest store, from the other buffer, still reads.
        if leader {
            wait_group_read_all_but_newest();
        }
        unsafe {
            warpgroup::sync(bar_id, warpgroup::THREADS);
            stage_accumulator_stmatrix(acc, buf, chunk * COLS, row0, col0, op);
        }
        mbarrier::fence_proxy_async();
        unsafe { warpgroup::sync(bar_id, warpgroup::THREADS) };
        if leader {
            unsafe { buf.store(map, (col0 + chunk * COLS) as i32, row0 as i32) };
            tma::commit_group();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_scales_adds_bias_and_activates() {
        let bias = [1.0f32, -4.0];
        let op = Linear { alpha: 2.0, bias: &bias, act: Relu };
        assert_eq!(op.apply(1.5, 7, 0), 4.0);
        assert_eq!(op.apply(1.5, 7, 1), 0.0);
        assert_eq!(op.apply(1.5, 7, 2), 3.0); // past the bias: none
        let closure = |v: f32, row: usize, col: usize| v + (row * 10 + col) as f32;
        assert_eq!(closure.apply(0.5, 2, 3), 23.5);
        assert_eq!(Identity.apply(-0.25, 0, 0), -0.25);
    }

    #[test]
    fn an_output_checks_its_shape_once() {
        let mut c = [Bf16x2::from_bits(0); 8];
        assert!(Bf16Out::new(&mut c, 4, 4).is_some());
        assert!(Bf16Out::new(&mut c, 4, 5).is_none()); // odd columns
        assert!(Bf16Out::new(&mut c, 5, 4).is_none()); // too many rows
        let out = Bf16Out::new(&mut c, 2, 4).unwrap();
        out.store_pair(1, 2, 1.0, 2.0);
        out.store_pair(2, 0, 9.0, 9.0); // masked: row 2 of 2
        out.store_pair(0, 4, 9.0, 9.0); // masked: column 4 of 4
        assert_eq!(c[3].to_f32(), (1.0, 2.0));
        assert!(c.iter().enumerate().all(|(i, p)| i == 3 || p.to_bits() == 0));
    }

    /// Which accumulator registers the staging writes for a chunk: every (row, col) of the
    /// warpgroup's 64 × N tile exactly once over the 128 threads and the chunks.
    #[test]
    fn chunks_cover_the_accumulator_once() {
        const R: usize = 128;
        const COLS: usize = 64;
        let mut seen = [[0u8; 2 * R]; 64];
        for chunk in 0..2 * R / COLS {
            for t in 0..128 {
                for p in 0..R / 2 {
                    let (r, c) = Accumulator::<R>::coord(t, 2 * p);
                    if c >= chunk * COLS && c < (chunk + 1) * COLS {
                        seen[r][c] += 1;
                        seen[r][c + 1] += 1;
                    }
                }
            }
        }
        assert!(seen.iter().all(|row| row.iter().all(|&s| s == 1)));
    }
}
