//! Warp-level operations: shuffles, votes, match, leader election, and warp-wide reductions and
//! scans.
//!
//! `mask` names the lanes that take part (all of them must execute the call); use [`FULL_MASK`]
//! when the whole warp is converged. Shuffles work for 32- and 64-bit values: the generic
//! [`shfl_sync`] family, and the type-named `shuffle_*` functions NVIDIA's cuda-oxide spells
//! (`shuffle_xor_f32(v, 1)` = `shfl_xor_sync(FULL_MASK, v, 1)`).
//!
//! ```ignore
//! let total = warp::reduce_sum(x);                  // every lane gets the warp's sum
//! let leader = warp::ballot(x > 0.0).trailing_zeros();
//! ```

use crate::intrinsics;

mod float_reduce;
mod shuffle_typed;

pub use float_reduce::*;
pub use shuffle_typed::*;

/// Threads per warp.
pub const WARP_SIZE: u32 = 32;

/// Every lane of the warp.
pub const FULL_MASK: u32 = 0xffff_ffff;

pub use crate::thread::{lane_id, warp_id};

/// `__syncwarp(mask)`.
pub use crate::sync::sync_warp;

mod sealed {
    pub trait Sealed {}
}

/// A value `shfl.sync` can move: `u32`, `i32`, `f32`, `u64`, `i64`, `f64` (64-bit values take
/// two shuffles).
pub trait ShuffleValue: Copy + sealed::Sealed {
    #[doc(hidden)]
    fn shuffle(self, f: impl Fn(u32) -> u32) -> Self;
}

macro_rules! shuffle32 {
    ($($t:ty => |$v:ident| $to:expr, |$b:ident| $from:expr;)*) => {$(
        impl sealed::Sealed for $t {}
        impl ShuffleValue for $t {
            #[inline(always)]
            fn shuffle(self, f: impl Fn(u32) -> u32) -> Self {
                let $v = self;
                let $b = f($to);
                $from
            }
        }
    )*};
}
shuffle32! {
    u32 => |v| v, |b| b;
    i32 => |v| v as u32, |b| b as i32;
    f32 => |v| v.to_bits(), |b| f32::from_bits(b);
}

macro_rules! shuffle64 {
    ($($t:ty => |$v:ident| $to:expr, |$b:ident| $from:expr;)*) => {$(
        impl sealed::Sealed for $t {}
        impl ShuffleValue for $t {
            #[inline(always)]
            fn shuffle(self, f: impl Fn(u32) -> u32) -> Self {
                let $v = self;
                let bits: u64 = $to;
                let lo = f(bits as u32) as u64;
                let hi = f((bits >> 32) as u32) as u64;
                let $b = lo | (hi << 32);
                $from
            }
        }
    )*};
}
shuffle64! {
    u64 => |v| v, |b| b;
    i64 => |v| v as u64, |b| b as i64;
    f64 => |v| v.to_bits(), |b| f64::from_bits(b);
}

/// PTX's `c` operand for a segment of `width` lanes (a power of two ≤ 32).
#[inline(always)]
fn clamp(width: u32, up: bool) -> u32 {
    let seg = (WARP_SIZE - width) << 8;
    if up { seg } else { seg | 0x1f }
}

/// `__shfl_sync(mask, val, src_lane)`: the value of `val` in lane `src_lane`.
#[inline(always)]
pub fn shfl_sync<T: ShuffleValue>(mask: u32, val: T, src_lane: u32) -> T {
    shfl_sync_width(mask, val, src_lane, WARP_SIZE)
}

/// `__shfl_sync` within segments of `width` lanes (a power of two ≤ 32).
#[inline(always)]
pub fn shfl_sync_width<T: ShuffleValue>(mask: u32, val: T, src_lane: u32, width: u32) -> T {
    let c = clamp(width, false);
    val.shuffle(|b| intrinsics::shfl_sync_idx_i32(mask, b, src_lane, c))
}

/// `__shfl_up_sync(mask, val, delta)`: the value from lane `lane - delta` (own value in the
/// first `delta` lanes).
#[inline(always)]
pub fn shfl_up_sync<T: ShuffleValue>(mask: u32, val: T, delta: u32) -> T {
    shfl_up_sync_width(mask, val, delta, WARP_SIZE)
}

/// `__shfl_up_sync` within segments of `width` lanes.
#[inline(always)]
pub fn shfl_up_sync_width<T: ShuffleValue>(mask: u32, val: T, delta: u32, width: u32) -> T {
    let c = clamp(width, true);
    val.shuffle(|b| intrinsics::shfl_sync_up_i32(mask, b, delta, c))
}

/// `__shfl_down_sync(mask, val, delta)`: the value from lane `lane + delta` (own value in the
/// last `delta` lanes).
#[inline(always)]
pub fn shfl_down_sync<T: ShuffleValue>(mask: u32, val: T, delta: u32) -> T {
    shfl_down_sync_width(mask, val, delta, WARP_SIZE)
}

/// `__shfl_down_sync` within segments of `width` lanes.
#[inline(always)]
pub fn shfl_down_sync_width<T: ShuffleValue>(mask: u32, val: T, delta: u32, width: u32) -> T {
    let c = clamp(width, false);
    val.shuffle(|b| intrinsics::shfl_sync_down_i32(mask, b, delta, c))
}

/// `__shfl_xor_sync(mask, val, lane_mask)`: the value from lane `lane ^ lane_mask`.
#[inline(always)]
pub fn shfl_xor_sync<T: ShuffleValue>(mask: u32, val: T, lane_mask: u32) -> T {
    shfl_xor_sync_width(mask, val, lane_mask, WARP_SIZE)
}

/// `__shfl_xor_sync` within segments of `width` lanes.
#[inline(always)]
pub fn shfl_xor_sync_width<T: ShuffleValue>(mask: u32, val: T, lane_mask: u32, width: u32) -> T {
    let c = clamp(width, false);
    val.shuffle(|b| intrinsics::shfl_sync_bfly_i32(mask, b, lane_mask, c))
}

/// `__all_sync(mask, pred)`: `pred` is true in every lane of `mask`.
#[inline(always)]
pub fn all_sync(mask: u32, pred: bool) -> bool {
    intrinsics::vote_all_sync(mask, pred)
}

/// `__any_sync(mask, pred)`: `pred` is true in some lane of `mask`.
#[inline(always)]
pub fn any_sync(mask: u32, pred: bool) -> bool {
    intrinsics::vote_any_sync(mask, pred)
}

/// `__uni_sync(mask, pred)`: `pred` is the same in every lane of `mask`.
#[inline(always)]
pub fn uni_sync(mask: u32, pred: bool) -> bool {
    intrinsics::vote_uni_sync(mask, pred)
}

/// `__ballot_sync(mask, pred)`: bit `i` set when lane `i` passed `true`.
#[inline(always)]
pub fn ballot_sync(mask: u32, pred: bool) -> u32 {
    intrinsics::vote_ballot_sync(mask, pred)
}

/// [`all_sync`] over the whole (converged) warp: `warp::all(x > 0)`.
#[inline(always)]
pub fn all(pred: bool) -> bool {
    all_sync(FULL_MASK, pred)
}

/// [`any_sync`] over the whole (converged) warp.
#[inline(always)]
pub fn any(pred: bool) -> bool {
    any_sync(FULL_MASK, pred)
}

/// [`ballot_sync`] over the whole (converged) warp: `warp::ballot(x > 0).count_ones()`.
#[inline(always)]
pub fn ballot(pred: bool) -> u32 {
    ballot_sync(FULL_MASK, pred)
}

/// How many lanes of the whole (converged) warp passed `true`: `ballot(pred).count_ones()`.
#[inline(always)]
pub fn popc(pred: bool) -> u32 {
    ballot(pred).count_ones()
}

/// `__syncwarp(mask)` under NVIDIA cuda-oxide's name: `warp::sync_mask(warp::FULL_MASK)`.
#[inline(always)]
pub fn sync_mask(mask: u32) {
    crate::sync::sync_warp(mask)
}

/// `__activemask()`: the lanes executing this call (a snapshot: it does not converge them).
#[inline(always)]
pub fn activemask() -> u32 {
    intrinsics::activemask()
}

/// [`activemask`] under NVIDIA cuda-oxide's name: `let lanes = warp::active_mask();`.
#[inline(always)]
pub fn active_mask() -> u32 {
    activemask()
}

/// Bits of the lanes below this one (`%lanemask_lt`): `(ballot & lanemask_lt()).count_ones()`
/// is this lane's rank among the voters.
#[inline(always)]
pub fn lanemask_lt() -> u32 {
    intrinsics::lanemask_lt()
}

/// Bits of this lane and the lanes below it (`%lanemask_le`): an inclusive prefix mask,
/// `(ballot(p) & lanemask_le()).count_ones()`.
#[inline(always)]
pub fn lanemask_le() -> u32 {
    intrinsics::lanemask_le()
}

/// This lane's bit alone (`%lanemask_eq`, `1 << lane_id()`): `ballot(p) & lanemask_eq() != 0`.
#[inline(always)]
pub fn lanemask_eq() -> u32 {
    intrinsics::lanemask_eq()
}

/// Bits of the lanes above this one (`%lanemask_gt`): the next voter is
/// `(ballot(p) & lanemask_gt()).trailing_zeros()`.
#[inline(always)]
pub fn lanemask_gt() -> u32 {
    intrinsics::lanemask_gt()
}

/// Bits of this lane and the lanes above it (`%lanemask_ge`): `lanemask_gt() | lanemask_eq()`.
#[inline(always)]
pub fn lanemask_ge() -> u32 {
    intrinsics::lanemask_ge()
}

/// The hardware warp slot this thread runs in on its SM (`%warpid`; for diagnostics: it can
/// change while the thread runs, and it is not [`warp_id`]).
#[inline(always)]
pub fn warpid() -> u32 {
    intrinsics::warpid()
}

/// The number of warp slots of an SM (`%nwarpid`): an upper bound of [`warpid`].
#[inline(always)]
pub fn nwarpid() -> u32 {
    intrinsics::nwarpid()
}

/// A value `match.sync` can compare: `u32`, `i32`, `u64`, `i64`.
pub trait MatchValue: Copy + sealed::Sealed {
    #[doc(hidden)]
    fn match_any(self, mask: u32) -> u32;
    #[doc(hidden)]
    fn match_all(self, mask: u32) -> u32;
}

macro_rules! match_value {
    ($($t:ty, $w:ty, $any:ident, $all:ident;)*) => {$(
        impl MatchValue for $t {
            #[inline(always)]
            fn match_any(self, mask: u32) -> u32 {
                intrinsics::$any(mask, self as $w)
            }
            #[inline(always)]
            fn match_all(self, mask: u32) -> u32 {
                intrinsics::$all(mask, self as $w)
            }
        }
    )*};
}
match_value! {
    u32, u32, match_any_sync_i32, match_all_sync_i32;
    i32, u32, match_any_sync_i32, match_all_sync_i32;
    u64, u64, match_any_sync_i64, match_all_sync_i64;
    i64, u64, match_any_sync_i64, match_all_sync_i64;
}

/// `__match_any_sync(mask, val)`: the lanes of `mask` whose `val` equals this lane's.
#[inline(always)]
pub fn match_any_sync<T: MatchValue>(mask: u32, val: T) -> u32 {
    val.match_any(mask)
}

/// [`match_any_sync`] of a 64-bit value under NVIDIA cuda-oxide's name.
#[inline(always)]
pub fn match_any_i64_sync(mask: u32, val: u64) -> u32 {
    match_any_sync(mask, val)
}

/// `__match_all_sync(mask, val, &pred)`'s value: `mask` when every lane of `mask` holds the same
/// `val`, else 0 (as CUDA C++ and NVIDIA's cuda-oxide return it):
/// `if warp::match_all_sync(FULL_MASK, key) == FULL_MASK { … }`. [`all_equal_sync`] says the
/// same as an `Option`.
#[inline(always)]
pub fn match_all_sync<T: MatchValue>(mask: u32, val: T) -> u32 {
    val.match_all(mask)
}

/// [`match_all_sync`] of a 64-bit value under NVIDIA cuda-oxide's name.
#[inline(always)]
pub fn match_all_i64_sync(mask: u32, val: u64) -> u32 {
    match_all_sync(mask, val)
}

/// Whether every lane of `mask` holds the same `val`: `Some(mask)` if so, else `None`
/// (`match.all.sync`): `if let Some(lanes) = warp::all_equal_sync(FULL_MASK, key) { … }`.
#[inline(always)]
pub fn all_equal_sync<T: MatchValue>(mask: u32, val: T) -> Option<u32> {
    let m = val.match_all(mask);
    if m != 0 { Some(m) } else { None }
}

/// Sum of `val` over the whole (converged) warp, returned in every lane.
#[inline(always)]
pub fn reduce_sum<T: ShuffleValue + core::ops::Add<Output = T>>(val: T) -> T {
    let mut v = val;
    let mut offset = 16;
    while offset > 0 {
        v = v + shfl_xor_sync(FULL_MASK, v, offset);
        offset >>= 1;
    }
    v
}

/// Minimum of `val` over the whole (converged) warp, returned in every lane.
#[inline(always)]
pub fn reduce_min<T: ShuffleValue + PartialOrd>(val: T) -> T {
    let mut v = val;
    let mut offset = 16;
    while offset > 0 {
        let o = shfl_xor_sync(FULL_MASK, v, offset);
        if o < v {
            v = o;
        }
        offset >>= 1;
    }
    v
}

/// Maximum of `val` over the whole (converged) warp, returned in every lane.
#[inline(always)]
pub fn reduce_max<T: ShuffleValue + PartialOrd>(val: T) -> T {
    let mut v = val;
    let mut offset = 16;
    while offset > 0 {
        let o = shfl_xor_sync(FULL_MASK, v, offset);
        if o > v {
            v = o;
        }
        offset >>= 1;
    }
    v
}

/// `__reduce_add_sync(mask, val)` (`redux.sync`, sm_80): the sum over the lanes of `mask`.
#[inline(always)]
pub fn reduce_add_sync_u32(mask: u32, val: u32) -> u32 {
    intrinsics::redux_sync_add_u32(mask, val)
}

/// `__reduce_min_sync(mask, val)` (`redux.sync`, sm_80).
#[inline(always)]
pub fn reduce_min_sync_u32(mask: u32, val: u32) -> u32 {
    intrinsics::redux_sync_min_u32(mask, val)
}

/// `__reduce_max_sync(mask, val)` (`redux.sync`, sm_80).
#[inline(always)]
pub fn reduce_max_sync_u32(mask: u32, val: u32) -> u32 {
    intrinsics::redux_sync_max_u32(mask, val)
}

/// `__reduce_min_sync(mask, val)` for `i32` (`redux.sync`, sm_80).
#[inline(always)]
pub fn reduce_min_sync_i32(mask: u32, val: i32) -> i32 {
    intrinsics::redux_sync_min_i32(mask, val)
}

/// `__reduce_max_sync(mask, val)` for `i32` (`redux.sync`, sm_80).
#[inline(always)]
pub fn reduce_max_sync_i32(mask: u32, val: i32) -> i32 {
    intrinsics::redux_sync_max_i32(mask, val)
}

/// `__reduce_and_sync(mask, val)` (`redux.sync.and.b32`, sm_80): the bitwise AND over the lanes
/// of `mask`.
#[inline(always)]
pub fn reduce_and_sync_u32(mask: u32, val: u32) -> u32 {
    intrinsics::redux_sync_and_b32(mask, val)
}

/// `__reduce_or_sync(mask, val)` (`redux.sync.or.b32`, sm_80).
#[inline(always)]
pub fn reduce_or_sync_u32(mask: u32, val: u32) -> u32 {
    intrinsics::redux_sync_or_b32(mask, val)
}

/// `__reduce_xor_sync(mask, val)` (`redux.sync.xor.b32`, sm_80).
#[inline(always)]
pub fn reduce_xor_sync_u32(mask: u32, val: u32) -> u32 {
    intrinsics::redux_sync_xor_b32(mask, val)
}

/// [`reduce_add_sync_u32`] under NVIDIA cuda-oxide's name: `warp::redux_sync_add(FULL_MASK, x)`.
#[inline(always)]
pub fn redux_sync_add(mask: u32, val: u32) -> u32 {
    reduce_add_sync_u32(mask, val)
}

/// [`reduce_min_sync_u32`] under NVIDIA cuda-oxide's name.
#[inline(always)]
pub fn redux_sync_min_u32(mask: u32, val: u32) -> u32 {
    reduce_min_sync_u32(mask, val)
}

/// [`reduce_max_sync_u32`] under NVIDIA cuda-oxide's name.
#[inline(always)]
pub fn redux_sync_max_u32(mask: u32, val: u32) -> u32 {
    reduce_max_sync_u32(mask, val)
}

/// [`reduce_min_sync_i32`] under NVIDIA cuda-oxide's name.
#[inline(always)]
pub fn redux_sync_min_i32(mask: u32, val: i32) -> i32 {
    reduce_min_sync_i32(mask, val)
}

/// [`reduce_max_sync_i32`] under NVIDIA cuda-oxide's name.
#[inline(always)]
pub fn redux_sync_max_i32(mask: u32, val: i32) -> i32 {
    reduce_max_sync_i32(mask, val)
}

/// [`reduce_and_sync_u32`] under NVIDIA cuda-oxide's name.
#[inline(always)]
pub fn redux_sync_and(mask: u32, val: u32) -> u32 {
    reduce_and_sync_u32(mask, val)
}

/// [`reduce_or_sync_u32`] under NVIDIA cuda-oxide's name.
#[inline(always)]
pub fn redux_sync_or(mask: u32, val: u32) -> u32 {
    reduce_or_sync_u32(mask, val)
}

/// [`reduce_xor_sync_u32`] under NVIDIA cuda-oxide's name.
#[inline(always)]
pub fn redux_sync_xor(mask: u32, val: u32) -> u32 {
    reduce_xor_sync_u32(mask, val)
}

/// CUDA's `elect.sync`: one lane of `mask` is chosen, the same one for the same mask (the lowest);
/// every lane of `mask` gets `(leader lane, whether it is the leader)`. All lanes of `mask` must
/// execute the call, which waits for them (`bar.warp.sync`). It is written without the sm_90
/// instruction (which needs PTX ISA 8.0), so it runs on every arch.
///
/// ```ignore
/// let (leader, me) = warp::elect_sync(warp::FULL_MASK);
/// if me { /* once per warp */ }
/// ```
#[inline(always)]
pub fn elect_sync(mask: u32) -> (u32, bool) {
    crate::sync::sync_warp(mask);
    let leader = mask.trailing_zeros();
    (leader, lane_id() == leader)
}

/// Whether this lane is the one [`elect_sync`] chooses from `mask`.
#[inline(always)]
pub fn is_elected_sync(mask: u32) -> bool {
    elect_sync(mask).1
}

/// Inclusive prefix sum over the lanes of the whole (converged) warp: lane `i` gets
/// `val(0) + … + val(i)`.
#[inline(always)]
pub fn inclusive_scan_sum<T: ShuffleValue + core::ops::Add<Output = T>>(val: T) -> T {
    let lane = lane_id();
    let mut v = val;
    let mut offset = 1;
    while offset < WARP_SIZE {
        let o = shfl_up_sync(FULL_MASK, v, offset);
        if lane >= offset {
            v = v + o;
        }
        offset <<= 1;
    }
    v
}
