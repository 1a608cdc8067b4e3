//! Shuffles with the value type in their name, as NVIDIA's cuda-oxide spells them
//! (`shuffle_xor_f32(v, 1)`, `shuffle_down_u64_sync(mask, v, 2)`): thin names over the generic
//! [`shfl_sync`](super::shfl_sync) family. The forms without `_sync` use the whole warp
//! ([`FULL_MASK`](super::FULL_MASK)), so all 32 lanes must execute them.

use super::{FULL_MASK, shfl_down_sync, shfl_sync, shfl_up_sync, shfl_xor_sync};

macro_rules! typed_shuffles {
    ($($t:ty => $idx:ident $xor:ident $down:ident $up:ident, $idx_s:ident $xor_s:ident $down_s:ident $up_s:ident;)*) => {$(
        #[doc = concat!("[`shfl_sync`] of a `", stringify!($t), "`: the value of `var` in lane `src_lane` of `mask`.")]
        ///
        /// ```ignore
        #[doc = concat!("let from_lane0 = warp::", stringify!($idx_s), "(warp::FULL_MASK, var, 0);")]
        /// ```
        #[inline(always)]
        pub fn $idx_s(mask: u32, var: $t, src_lane: u32) -> $t {
            shfl_sync(mask, var, src_lane)
        }

        #[doc = concat!("[`shfl_xor_sync`] of a `", stringify!($t), "`: the value from lane `lane ^ lane_mask`.")]
        ///
        /// ```ignore
        #[doc = concat!("let pair = warp::", stringify!($xor_s), "(warp::FULL_MASK, var, 1);")]
        /// ```
        #[inline(always)]
        pub fn $xor_s(mask: u32, var: $t, lane_mask: u32) -> $t {
            shfl_xor_sync(mask, var, lane_mask)
        }

        #[doc = concat!("[`shfl_down_sync`] of a `", stringify!($t), "`: the value from lane `lane + delta` (own value past the end).")]
        ///
        /// ```ignore
        #[doc = concat!("let next = warp::", stringify!($down_s), "(warp::FULL_MASK, var, 1);")]
        /// ```
        #[inline(always)]
        pub fn $down_s(mask: u32, var: $t, delta: u32) -> $t {
            shfl_down_sync(mask, var, delta)
        }

        #[doc = concat!("[`shfl_up_sync`] of a `", stringify!($t), "`: the value from lane `lane - delta` (own value below `delta`).")]
        ///
        /// ```ignore
        #[doc = concat!("let prev = warp::", stringify!($up_s), "(warp::FULL_MASK, var, 1);")]
        /// ```
        #[inline(always)]
        pub fn $up_s(mask: u32, var: $t, delta: u32) -> $t {
            shfl_up_sync(mask, var, delta)
        }

        #[doc = concat!("[`", stringify!($idx_s), "`] over the whole warp: `warp::", stringify!($idx), "(var, 0)` broadcasts lane 0's value.")]
        #[inline(always)]
        pub fn $idx(var: $t, src_lane: u32) -> $t {
            $idx_s(FULL_MASK, var, src_lane)
        }

        #[doc = concat!("[`", stringify!($xor_s), "`] over the whole warp: `sum += warp::", stringify!($xor), "(sum, 16)`.")]
        #[inline(always)]
        pub fn $xor(var: $t, lane_mask: u32) -> $t {
            $xor_s(FULL_MASK, var, lane_mask)
        }

        #[doc = concat!("[`", stringify!($down_s), "`] over the whole warp: `warp::", stringify!($down), "(var, 1)`.")]
        #[inline(always)]
        pub fn $down(var: $t, delta: u32) -> $t {
            $down_s(FULL_MASK, var, delta)
        }

        #[doc = concat!("[`", stringify!($up_s), "`] over the whole warp: `warp::", stringify!($up), "(var, 1)`.")]
        #[inline(always)]
        pub fn $up(var: $t, delta: u32) -> $t {
            $up_s(FULL_MASK, var, delta)
        }
    )*};
}

typed_shuffles! {
    u32 => shuffle shuffle_xor shuffle_down shuffle_up,
        shuffle_sync shuffle_xor_sync shuffle_down_sync shuffle_up_sync;
    f32 => shuffle_f32 shuffle_xor_f32 shuffle_down_f32 shuffle_up_f32,
        shuffle_f32_sync shuffle_xor_f32_sync shuffle_down_f32_sync shuffle_up_f32_sync;
    u64 => shuffle_u64 shuffle_xor_u64 shuffle_down_u64 shuffle_up_u64,
        shuffle_u64_sync shuffle_xor_u64_sync shuffle_down_u64_sync shuffle_up_u64_sync;
    f64 => shuffle_f64 shuffle_xor_f64 shuffle_down_f64 shuffle_up_f64,
        shuffle_f64_sync shuffle_xor_f64_sync shuffle_down_f64_sync shuffle_up_f64_sync;
}
