//! The online softmax of FlashAttention over a warpgroup's `wgmma` accumulator of scores
//! (64 query rows × N keys per tile, `S = Q·Kᵀ`), kept in registers from one key tile to the
//! next: [`OnlineSoftmax`] holds each row's running max `m` and sum `l`, turns a tile of scores
//! into probabilities `P` and says by how much to rescale what was accumulated before
//! (`O = P·V`); [`KeyMask`] masks the keys a tile must not count (past the sequence, or causal).
//!
//! Everything is in the log2 domain: with `c = log2(e) · scale` (attention's `scale = 1/√d`),
//! `P = 2^(S·c − m·c)` is one FFMA and one `ex2` per value, and the rescale factor of a row whose
//! max moved from `m_old` to `m` is `2^((m_old − m)·c)`.
//!
//! ```ignore
//! let mut sm = OnlineSoftmax::new(LOG2_E / (d as f32).sqrt());
//! for j in 0..kv_tiles {
//!     /* s = Q·K_jᵀ (wgmma, waited for) */
//!     let mask = (j + 1 == kv_tiles).then_some(KeyMask { first_query: q0, first_key: j * BN, keys: seq, causal });
//!     let (p, corr) = sm.step(&s, mask);
//!     o.scale_rows(corr);
//!     /* o += p·V_j (wgmma RS: tile::mma::a_fragments(&p)) */
//! }
//! let lse = sm.finish(&mut o); // o /= l; each row's log-sum-exp
//! ```

use crate::tile::rows::{RowOps, quad_reduce, row_half, shfl_xor};
use crate::tile::warpgroup;
use crate::wgmma::Accumulator;

/// Which keys of a tile of scores a row may see: column `c` is key `first_key + c`, row `r` is
/// the query at position `first_query + r`; a key at or past `keys` (the sequence's end: the next
/// head's rows, or zeros past the tensor) and, `causal`, a key past the query's own position
/// count as `−∞`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyMask {
    /// The query position of the accumulator's row 0.
    pub first_query: usize,
    /// The key position of the accumulator's column 0.
    pub first_key: usize,
    /// Keys in the sequence: positions `0..keys` count.
    pub keys: usize,
    /// Whether a query sees only keys at or before its own position.
    pub causal: bool,
}

impl KeyMask {
    /// Whether register `i` of thread `t` (of the warpgroup) of an accumulator `Accumulator<R>`
    /// is masked.
    #[inline(always)]
    pub const fn masks<const R: usize>(&self, t: u32, i: usize) -> bool {
        let (row, col) = Accumulator::<R>::coord(t, i);
        let key = self.first_key + col;
        key >= self.keys || (self.causal && key > self.first_query + row)
    }

    /// Sets this thread's masked values of `x` to `−∞` (no shuffles: each thread on its own).
    #[inline(always)]
    pub fn apply<const R: usize>(&self, x: &mut Accumulator<R>) {
        let t = warpgroup::thread();
        crate::unroll!(for i in 0..R {
            if self.masks::<R>(t, i) {
                x.d[i] = f32::NEG_INFINITY;
            }
        });
    }
}

/// One thread's part of an online softmax over its two accumulator rows ([`rows_of`]): the
/// running max `m` of each row (the same in the 4 lanes of a quad) and this thread's part of
/// each row sum `l` (its own columns only; [`finish`](Self::finish) adds the quad's parts once,
/// at the end, since the quad's lanes rescale theirs by the same factors). Called by the 128
/// threads of the warpgroup together (the max shuffles within each warp).
///
/// [`rows_of`]: crate::tile::rows::rows_of
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OnlineSoftmax {
    m: [f32; 2],
    l: [f32; 2],
    scale_log2: f32,
}

impl OnlineSoftmax {
    /// No keys seen yet (`m = −∞`, `l = 0`), for scores scaled by `scale_log2 = log2(e) · scale`.
    #[inline(always)]
    pub const fn new(scale_log2: f32) -> Self {
        OnlineSoftmax { m: [f32::NEG_INFINITY; 2], l: [0.0; 2], scale_log2 }
    }

    /// The next key tile: masks a copy of `s` with `mask` (if any), moves each row's max (this
    /// thread's values, then the quad's), rescales the row sums and returns `P = 2^(S·c − m·c)`
    /// with the factors `2^((m_old − m)·c)` by which to rescale each row of what was
    /// accumulated from earlier tiles. A row must have an unmasked key in its first tile (else
    /// `m` stays `−∞` and `P` is NaN).
    ///
    /// Works on a copy: `s` keeps what `wgmma` wrote, so that no ordinary instruction redefines
    /// the registers of the next `S` while an earlier product still runs (ptxas would serialise
    /// the `wgmma`s, C7513).
    #[inline(always)]
    #[allow(clippy::needless_range_loop)] // unrolled: `i` names a register and its row
    pub fn step<const R: usize>(&mut self, s: &Accumulator<R>, mask: Option<KeyMask>) -> (Accumulator<R>, [f32; 2]) {
        let mut x = *s;
        if let Some(mask) = mask {
            mask.apply(&mut x);
        }
        let mut mx = self.m;
        crate::unroll!(for i in 0..R {
            mx[row_half(i)] = mx[row_half(i)].max(x.d[i]);
        });
        let (mut corr, mut shift) = ([0.0f32; 2], [0.0f32; 2]);
        crate::unroll!(for h in 0..2 {
            mx[h] = quad_reduce(mx[h], f32::max, shfl_xor);
            corr[h] = crate::float::ex2_approx_ftz_f32((self.m[h] - mx[h]) * self.scale_log2);
            shift[h] = mx[h] * self.scale_log2;
        });
        self.m = mx;
        let mut own = [0.0f32; 2];
        crate::unroll!(for i in 0..R {
            x.d[i] = crate::float::ex2_approx_ftz_f32(fma(x.d[i], self.scale_log2, -shift[row_half(i)]));
            own[row_half(i)] += x.d[i];
        });
        self.l = [fma(self.l[0], corr[0], own[0]), fma(self.l[1], corr[1], own[1])];
        (x, corr)
    }

    /// Ends the rows: adds up the quad's parts of each row sum, divides `o` (the product
    /// `P·V` accumulated over the tiles) by it row by row, and returns each row's log-sum-exp of
    /// the scaled scores, natural log: `ln Σ e^(S·scale) = (m·c + log2 l) · ln 2`.
    #[inline(always)]
    #[allow(clippy::needless_range_loop)] // unrolled: `h` names the row
    pub fn finish<const RO: usize>(mut self, o: &mut Accumulator<RO>) -> [f32; 2] {
        let mut inv = [0.0f32; 2];
        crate::unroll!(for h in 0..2 {
            self.l[h] = quad_reduce(self.l[h], |a, b| a + b, shfl_xor);
            inv[h] = 1.0 / self.l[h];
        });
        o.scale_rows(inv);
        let lse = |h: usize| {
            (self.m[h] * self.scale_log2 + crate::float::lg2_approx_f32(self.l[h])) * core::f32::consts::LN_2
        };
        [lse(0), lse(1)]
    }
}

/// `a · b + c` rounded once (`fma.rn.f32`), as `f32::mul_add` in `std`.
#[inline(always)]
fn fma(a: f32, b: f32, c: f32) -> f32 {
    core::f32::math::mul_add(a, b, c)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The masks of a causal diagonal tile of a ragged sequence, against the positions of every
    /// register of every thread.
    #[test]
    fn masks_keys_past_the_end_and_past_the_query() {
        const R: usize = 64; // 64 × 128
        for (first_query, first_key, keys, causal) in [(128, 128, 200, true), (64, 0, 1000, true), (0, 0, 77, false)] {
            let mask = KeyMask { first_query, first_key, keys, causal };
            let mut masked = 0;
            for t in 0..128 {
                for i in 0..R {
                    let (row, col) = Accumulator::<R>::coord(t, i);
                    let (q, k) = (first_query + row, first_key + col);
                    let want = k >= keys || (causal && k > q);
                    assert_eq!(mask.masks::<R>(t, i), want, "{mask:?}: thread {t} register {i}");
                    masked += want as usize;
                }
            }
            assert!(masked > 0 && masked < 128 * R, "{mask:?}: a mixed tile");
        }
    }
}
