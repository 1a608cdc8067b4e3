//! Integer dot products with accumulation (`dp4a`, `dp2a`): four 8-bit products, or two 16×8-bit
//! products, summed into a 32-bit accumulator in one instruction (quantised inference).
//!
//! ```ignore
//! // c + a.byte0*b.byte0 + a.byte1*b.byte1 + a.byte2*b.byte2 + a.byte3*b.byte3
//! let acc = dotprod::dp4a_s32(a_bytes, b_bytes, acc);
//! ```

use crate::intrinsics;

/// `c` + the dot product of the four bytes of `a` and the four bytes of `b`, all signed
/// (`dp4a.s32.s32`).
///
/// ```ignore
/// let d = dotprod::dp4a_s32(0x01_02_03_04, 0xff_ff_ff_ff, 10); // 10 - (1 + 2 + 3 + 4) = 0
/// ```
#[inline(always)]
pub fn dp4a_s32(a: u32, b: u32, c: i32) -> i32 {
    intrinsics::dp4a_s32(a, b, c)
}

/// `c` + the dot product of the four bytes of `a` and of `b`, all unsigned (`dp4a.u32.u32`).
///
/// ```ignore
/// let d = dotprod::dp4a_u32(0x01_01_01_01, 0x02_02_02_02, 0); // 8
/// ```
#[inline(always)]
pub fn dp4a_u32(a: u32, b: u32, c: u32) -> u32 {
    intrinsics::dp4a_u32(a, b, c)
}

/// `c` + `a.half0 * b.byte0 + a.half1 * b.byte1`: the two 16-bit halves of `a` times the low two
/// bytes of `b`, all signed (`dp2a.lo.s32.s32`).
///
/// ```ignore
/// let d = dotprod::dp2a_s32(0x0002_0003, 0x0000_0505, 1); // 1 + 3*5 + 2*5 = 26
/// ```
#[inline(always)]
pub fn dp2a_s32(a: u32, b: u32, c: i32) -> i32 {
    intrinsics::dp2a_lo_s32(a, b, c)
}

/// As [`dp2a_s32`], all unsigned (`dp2a.lo.u32.u32`).
///
/// ```ignore
/// let d = dotprod::dp2a_u32(0x0002_0003, 0x0000_0505, 1); // 26
/// ```
#[inline(always)]
pub fn dp2a_u32(a: u32, b: u32, c: u32) -> u32 {
    intrinsics::dp2a_lo_u32(a, b, c)
}
