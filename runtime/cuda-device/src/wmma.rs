//! NVIDIA cuda-oxide's names for one warp-level `mma.sync.aligned` on register arrays (sm_80):
//! `d = a·b + c` for a 16×8 tile, each lane passing its part of the fragments by value. The same
//! instructions as [`crate::mma::mma_sync`], whose typed fragments new code should prefer (the
//! lane layout is in [`crate::mma`]'s table; `a` holds 4 registers, `b` 2, `c`/`d` 4).
//!
//! # Safety
//! All four are `.sync.aligned`: the 32 lanes of a warp call them together, from converged code,
//! each with its own part of the fragments.

use crate::intrinsics;

/// `mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32`: `a`/`b` hold f16 pairs.
///
/// # Safety
/// See the [module](self) documentation.
#[inline(always)]
pub unsafe fn mma_m16n8k16_f32_f16(c: [f32; 4], a: [u32; 4], b: [u32; 2]) -> [f32; 4] {
    let mut d = [0.0f32; 4];
    intrinsics::mma_m16n8k16_f16_f32(d.as_mut_ptr(), a.as_ptr(), b.as_ptr(), c.as_ptr());
    d
}

/// `mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32`: `a`/`b` hold bf16 pairs.
///
/// # Safety
/// See the [module](self) documentation.
#[inline(always)]
pub unsafe fn mma_m16n8k16_f32_bf16(c: [f32; 4], a: [u32; 4], b: [u32; 2]) -> [f32; 4] {
    let mut d = [0.0f32; 4];
    intrinsics::mma_m16n8k16_bf16_f32(d.as_mut_ptr(), a.as_ptr(), b.as_ptr(), c.as_ptr());
    d
}

/// `mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32`: `a`/`b` hold TensorFloat-32 values
/// (from [`crate::convert::cvt_rna_tf32_f32`]).
///
/// # Safety
/// See the [module](self) documentation.
#[inline(always)]
pub unsafe fn mma_m16n8k8_f32_tf32(c: [f32; 4], a: [u32; 4], b: [u32; 2]) -> [f32; 4] {
    let mut d = [0.0f32; 4];
    intrinsics::mma_m16n8k8_tf32_f32(d.as_mut_ptr(), a.as_ptr(), b.as_ptr(), c.as_ptr());
    d
}

/// `mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32`: `a`/`b` hold four `i8` each per register
/// (A 16×32 row-major, B 32×8 column-major), `c`/`d` are `i32` (wrapping sums).
///
/// # Safety
/// See the [module](self) documentation.
#[inline(always)]
pub unsafe fn mma_m16n8k32_s32_s8(c: [i32; 4], a: [u32; 4], b: [u32; 2]) -> [i32; 4] {
    let mut d = [0i32; 4];
    intrinsics::mma_m16n8k32_s8_s32(d.as_mut_ptr(), a.as_ptr(), b.as_ptr(), c.as_ptr());
    d
}
