//! Row operations on a warpgroup's `wgmma` accumulator (64 × N f32), the steps of an online
//! softmax: row max and row sum (each thread's values, then the 4 lanes that share the rows),
//! scaling rows, and `2^(x·scale − shift)`.
//!
//! Thread `t` (lane `l`) holds two rows, `16 (t / 32) + l / 4` and 8 below it ([`rows_of`]):
//! register `i` is in the first when `(i / 2) % 2 == 0`. The 4 lanes `4 (l / 4) ..` hold the same
//! two rows, so a row's reduction is the thread's own values then two XOR shuffles (1 and 2).
//! Every result comes as `[first row, second row]`.
//!
//! ```ignore
//! use cuda_device::tile::RowOps;
//! let m = s.row_max();                           // [f32; 2], the same in the 4 lanes of a row
//! s.exp2_rows(scale_log2e, [m[0] * scale_log2e, m[1] * scale_log2e]); // p = 2^(s·c − m·c)
//! let l = s.row_sum();
//! o.scale_rows([1.0 / l[0], 1.0 / l[1]]);
//! ```

use crate::warp;
use crate::wgmma::Accumulator;

/// The two rows (of 64) that thread `t` of the warpgroup holds in an accumulator.
pub const fn rows_of(t: u32) -> [usize; 2] {
    let r = 16 * (t as usize / 32) + (t as usize % 32) / 4;
    [r, r + 8]
}

/// Which of the thread's two rows register `i` is in (0 or 1).
pub const fn row_half(i: usize) -> usize {
    (i / 2) % 2
}

/// `op` over this thread's values of each of its two rows (no shuffles).
#[inline(always)]
pub fn thread_reduce<const R: usize>(acc: &Accumulator<R>, init: f32, op: impl Fn(f32, f32) -> f32) -> [f32; 2] {
    let mut out = [init, init];
    crate::unroll!(for i in 0..R {
        out[row_half(i)] = op(out[row_half(i)], acc.d[i]);
    });
    out
}

/// Combines a value over the 4 lanes of a quad (lanes `4q .. 4q + 3`), given the XOR shuffle
/// to use (`shfl(v, mask)` returns `v` of lane `lane ^ mask`): afterwards all 4 hold the result.
#[inline(always)]
pub fn quad_reduce(v: f32, op: impl Fn(f32, f32) -> f32, shfl: impl Fn(f32, u32) -> f32) -> f32 {
    let v = op(v, shfl(v, 1));
    op(v, shfl(v, 2))
}

/// The warp's XOR shuffle, every lane taking part.
#[inline(always)]
pub(crate) fn shfl_xor(v: f32, mask: u32) -> f32 {
    warp::shfl_xor_sync(0xffff_ffff, v, mask)
}

/// Row operations on a `wgmma` accumulator, for the 128 threads of a warpgroup together (the
/// reductions shuffle within each warp, so every lane of the warp calls them together).
pub trait RowOps {
    /// The maximum of each of this thread's two rows (whole rows: all N columns).
    fn row_max(&self) -> [f32; 2];
    /// The sum of each of this thread's two rows.
    fn row_sum(&self) -> [f32; 2];
    /// Multiplies each of this thread's two rows by its factor.
    fn scale_rows(&mut self, by: [f32; 2]);
    /// Each value `x` of row `h` (of this thread's two) becomes `2^(x · scale − shift[h])`
    /// (`ex2.approx.ftz`: about 2 ulp, subnormals flushed; softmax with `scale = log2(e) / √d`
    /// and `shift = max · scale`).
    fn exp2_rows(&mut self, scale: f32, shift: [f32; 2]);
}

impl<const R: usize> RowOps for Accumulator<R> {
    #[inline(always)]
    fn row_max(&self) -> [f32; 2] {
        let own = thread_reduce(self, f32::NEG_INFINITY, f32::max);
        [quad_reduce(own[0], f32::max, shfl_xor), quad_reduce(own[1], f32::max, shfl_xor)]
    }

    #[inline(always)]
    fn row_sum(&self) -> [f32; 2] {
        let own = thread_reduce(self, 0.0, |a, b| a + b);
        [quad_reduce(own[0], |a, b| a + b, shfl_xor), quad_reduce(own[1], |a, b| a + b, shfl_xor)]
    }

    #[inline(always)]
    fn scale_rows(&mut self, by: [f32; 2]) {
        crate::unroll!(for i in 0..R {
            self.d[i] *= by[row_half(i)];
        });
    }

    #[inline(always)]
    fn exp2_rows(&mut self, scale: f32, shift: [f32; 2]) {
        crate::unroll!(for i in 0..R {
            self.d[i] = crate::float::ex2_approx_ftz_f32(self.d[i] * scale - shift[row_half(i)]);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    extern crate std;
    use std::vec::Vec;

    /// A 64 × 16 matrix spread over 128 threads' accumulators as `wgmma` lays it out; each row's
    /// max and sum from the thread-local reductions and simulated quad shuffles, against the
    /// matrix's own rows.
    #[test]
    fn quad_reductions_give_whole_rows() {
        const R: usize = 8; // N = 16
        let value = |row: usize, col: usize| ((row * 37 + col * 11) % 23) as f32 - 11.0;
        let accs: Vec<Accumulator<R>> = (0..128)
            .map(|t| {
                let mut a = Accumulator::<R>::ZERO;
                for i in 0..R {
                    let (row, col) = Accumulator::<R>::coord(t, i);
                    assert_eq!(row, rows_of(t)[row_half(i)]);
                    a.d[i] = value(row, col);
                }
                a
            })
            .collect();
        for (name, init, op) in [
            ("max", f32::NEG_INFINITY, f32::max as fn(f32, f32) -> f32),
            ("sum", 0.0, (|a, b| a + b) as fn(f32, f32) -> f32),
        ] {
            let own: Vec<[f32; 2]> = accs.iter().map(|a| thread_reduce(a, init, op)).collect();
            for t in 0..128usize {
                #[allow(clippy::needless_range_loop)] // `h` picks the row in `own`, `step1` and `rows_of`
                for h in 0..2 {
                    // The shuffle reads the partner lane's *current* value: one step at a time.
                    let step1: Vec<f32> = (0..128).map(|u| op(own[u][h], own[u ^ 1][h])).collect();
                    let got =
                        quad_reduce(own[t][h], op, |_, mask| if mask == 1 { own[t ^ 1][h] } else { step1[t ^ 2] });
                    let want = (0..2 * R).map(|c| value(rows_of(t as u32)[h], c)).fold(init, op);
                    assert_eq!(got, want, "{name} of row {} (thread {t})", rows_of(t as u32)[h]);
                }
            }
        }
    }

    #[test]
    fn scaling_rows_touches_each_row_by_its_factor() {
        let mut a = Accumulator::<8> { d: [1.0; 8] };
        a.scale_rows([2.0, 3.0]);
        assert_eq!(a.d, [2.0, 2.0, 3.0, 3.0, 2.0, 2.0, 3.0, 3.0]);
    }
}
