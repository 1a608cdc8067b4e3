//! Warp reductions of `f32`/`f64` under NVIDIA cuda-oxide's names: over the whole warp
//! (`reduce_sum_f32`), and over the live lanes of a short last warp (`reduce_sum_f32_partial(v,
//! live_lanes_1d())`), where the full-warp butterfly would read lanes that were never launched.
//!
//! Max and min follow `f32::max`/`f32::min`: a NaN lane is ignored unless every lane is NaN.

use super::{FULL_MASK, WARP_SIZE, lane_id, shfl_sync, shfl_xor_sync};
use crate::thread::{blockDim_x, threadIdx_x};

/// Lanes of this thread's warp that exist in a 1D block: 32, except in a last warp cut short by
/// `blockDim.x`. The same in every lane of a warp, as the `_partial` reductions need.
///
/// ```ignore
/// let total = warp::reduce_sum_f32_partial(x, warp::live_lanes_1d());
/// ```
#[inline(always)]
pub fn live_lanes_1d() -> u32 {
    let first = threadIdx_x() / WARP_SIZE * WARP_SIZE;
    (blockDim_x() - first).min(WARP_SIZE)
}

/// The member mask of lanes `0..live` (`live` in 1..=32).
#[inline(always)]
fn low_lanes(live: u32) -> u32 {
    if live >= WARP_SIZE { FULL_MASK } else { (1u32 << live) - 1 }
}

macro_rules! float_reductions {
    ($($t:ty: $sum:ident $max:ident $min:ident, $sum_p:ident $max_p:ident $min_p:ident;)*) => {$(
        #[doc = concat!("Sum of a `", stringify!($t), "` over the whole (converged) warp, in every lane (butterfly: `v + shfl_xor(v, 16)`, then 8, 4, 2, 1).")]
        ///
        /// ```ignore
        #[doc = concat!("let total = warp::", stringify!($sum), "(x);")]
        /// ```
        #[inline(always)]
        pub fn $sum(val: $t) -> $t {
            butterfly(val, FULL_MASK, WARP_SIZE, |a, b| a + b)
        }

        #[doc = concat!("Maximum of a `", stringify!($t), "` over the whole (converged) warp, in every lane (`", stringify!($t), "::max`: NaN lanes are ignored).")]
        ///
        /// ```ignore
        #[doc = concat!("let m = warp::", stringify!($max), "(x);")]
        /// ```
        #[inline(always)]
        pub fn $max(val: $t) -> $t {
            butterfly(val, FULL_MASK, WARP_SIZE, <$t>::max)
        }

        #[doc = concat!("Minimum of a `", stringify!($t), "` over the whole (converged) warp, in every lane (`", stringify!($t), "::min`: NaN lanes are ignored).")]
        ///
        /// ```ignore
        #[doc = concat!("let m = warp::", stringify!($min), "(x);")]
        /// ```
        #[inline(always)]
        pub fn $min(val: $t) -> $t {
            butterfly(val, FULL_MASK, WARP_SIZE, <$t>::min)
        }

        #[doc = concat!("[`", stringify!($sum), "`] over lanes `0..live_lanes` of this warp (clamped to 1..=32), in each of them. `live_lanes` must be the same in all of them, and only they may execute the call.")]
        ///
        /// ```ignore
        #[doc = concat!("let total = warp::", stringify!($sum_p), "(x, warp::live_lanes_1d());")]
        /// ```
        #[inline(always)]
        pub fn $sum_p(val: $t, live_lanes: u32) -> $t {
            partial(val, live_lanes, |a, b| a + b)
        }

        #[doc = concat!("[`", stringify!($max), "`] over lanes `0..live_lanes` of this warp (as [`", stringify!($sum_p), "`]).")]
        ///
        /// ```ignore
        #[doc = concat!("let m = warp::", stringify!($max_p), "(x, warp::live_lanes_1d());")]
        /// ```
        #[inline(always)]
        pub fn $max_p(val: $t, live_lanes: u32) -> $t {
            partial(val, live_lanes, <$t>::max)
        }

        #[doc = concat!("[`", stringify!($min), "`] over lanes `0..live_lanes` of this warp (as [`", stringify!($sum_p), "`]).")]
        ///
        /// ```ignore
        #[doc = concat!("let m = warp::", stringify!($min_p), "(x, warp::live_lanes_1d());")]
        /// ```
        #[inline(always)]
        pub fn $min_p(val: $t, live_lanes: u32) -> $t {
            partial(val, live_lanes, <$t>::min)
        }
    )*};
}

float_reductions! {
    f32: reduce_sum_f32 reduce_max_f32 reduce_min_f32,
        reduce_sum_f32_partial reduce_max_f32_partial reduce_min_f32_partial;
    f64: reduce_sum_f64 reduce_max_f64 reduce_min_f64,
        reduce_sum_f64_partial reduce_max_f64_partial reduce_min_f64_partial;
}

/// XOR butterfly over `lanes` (a power of two) lanes of `mask`: every lane ends with the
/// combination of all of them.
#[inline(always)]
fn butterfly<T: super::ShuffleValue>(val: T, mask: u32, lanes: u32, f: impl Fn(T, T) -> T) -> T {
    let mut v = val;
    let mut offset = lanes / 2;
    while offset > 0 {
        v = f(v, shfl_xor_sync(mask, v, offset));
        offset /= 2;
    }
    v
}

/// Combination over lanes `0..live` with `f`, in every one of them. A power-of-two count is a
/// butterfly within the mask. Any other count folds the upper part of the span onto the lower
/// part until one lane holds the result, then broadcasts it. Every shuffle reads a live lane
/// (sources past the span are clamped to the last live lane and their values discarded), so no
/// lane reads one that was never launched.
#[inline(always)]
fn partial<T: super::ShuffleValue>(val: T, live: u32, f: impl Fn(T, T) -> T) -> T {
    let live = live.clamp(1, WARP_SIZE);
    let mask = low_lanes(live);
    if live.is_power_of_two() {
        return butterfly(val, mask, live, f);
    }
    let lane = lane_id();
    let mut v = val;
    let mut span = live;
    while span > 1 {
        let half = span.div_ceil(2);
        let src = (lane + half).min(live - 1);
        let other = shfl_sync(mask, v, src);
        if lane + half < span {
            v = f(v, other);
        }
        span = half;
    }
    shfl_sync(mask, v, 0)
}
