//! Float arithmetic with an explicit rounding mode (`_rn` nearest, `_rz` toward zero, `_rm` down,
//! `_rp` up), flush-to-zero of subnormals (`_ftz`), saturation to [0, 1] (`_sat`), or a fast
//! approximation (`_approx`): one function per PTX instruction, named after it
//! (`add_rz_ftz_f32` is `add.rz.ftz.f32`). Rust's own `+ - * /` and `sqrt` round to nearest.
//!
//! ```ignore
//! let lo = float::add_rm_f32(a, b);   // the sum rounded down
//! let hi = float::add_rp_f32(a, b);   // … and up: [lo, hi] encloses a + b
//! let s = float::sin_approx_ftz_f32(x);
//! ```
//! `max/min_*_xorsign_abs_f32` need sm_86 or newer, `tanh_approx_f32` sm_75.

use crate::intrinsics;

macro_rules! float_ops {
    ($($name:ident($($arg:ident: $t:ty),*) -> $ret:ty => $intr:ident, $ptx:literal;)*) => {$(
        #[doc = concat!("PTX `", $ptx, "`.")]
        ///
        /// ```ignore
        #[doc = concat!("let r = float::", stringify!($name), "(", stringify!($($arg),*), ");")]
        /// ```
        #[inline(always)]
        pub fn $name($($arg: $t),*) -> $ret {
            intrinsics::$intr($($arg),*)
        }
    )*};
}

float_ops! {
    add_rm_f32(a: f32, b: f32) -> f32 => float_add_rm_f32, "add.rm.f32";
    add_rm_f64(a: f64, b: f64) -> f64 => float_add_rm_f64, "add.rm.f64";
    add_rm_ftz_f32(a: f32, b: f32) -> f32 => float_add_rm_ftz_f32, "add.rm.ftz.f32";
    add_rm_ftz_sat_f32(a: f32, b: f32) -> f32 => float_add_rm_ftz_sat_f32, "add.rm.ftz.sat.f32";
    add_rm_sat_f32(a: f32, b: f32) -> f32 => float_add_rm_sat_f32, "add.rm.sat.f32";
    add_rn_f32(a: f32, b: f32) -> f32 => float_add_rn_f32, "add.rn.f32";
    add_rn_f64(a: f64, b: f64) -> f64 => float_add_rn_f64, "add.rn.f64";
    add_rn_ftz_f32(a: f32, b: f32) -> f32 => float_add_rn_ftz_f32, "add.rn.ftz.f32";
    add_rn_ftz_sat_f32(a: f32, b: f32) -> f32 => float_add_rn_ftz_sat_f32, "add.rn.ftz.sat.f32";
    add_rn_sat_f32(a: f32, b: f32) -> f32 => float_add_rn_sat_f32, "add.rn.sat.f32";
    add_rp_f32(a: f32, b: f32) -> f32 => float_add_rp_f32, "add.rp.f32";
    add_rp_f64(a: f64, b: f64) -> f64 => float_add_rp_f64, "add.rp.f64";
    add_rp_ftz_f32(a: f32, b: f32) -> f32 => float_add_rp_ftz_f32, "add.rp.ftz.f32";
    add_rp_ftz_sat_f32(a: f32, b: f32) -> f32 => float_add_rp_ftz_sat_f32, "add.rp.ftz.sat.f32";
    add_rp_sat_f32(a: f32, b: f32) -> f32 => float_add_rp_sat_f32, "add.rp.sat.f32";
    add_rz_f32(a: f32, b: f32) -> f32 => float_add_rz_f32, "add.rz.f32";
    add_rz_f64(a: f64, b: f64) -> f64 => float_add_rz_f64, "add.rz.f64";
    add_rz_ftz_f32(a: f32, b: f32) -> f32 => float_add_rz_ftz_f32, "add.rz.ftz.f32";
    add_rz_ftz_sat_f32(a: f32, b: f32) -> f32 => float_add_rz_ftz_sat_f32, "add.rz.ftz.sat.f32";
    add_rz_sat_f32(a: f32, b: f32) -> f32 => float_add_rz_sat_f32, "add.rz.sat.f32";
    div_rm_f32(a: f32, b: f32) -> f32 => float_div_rm_f32, "div.rm.f32";
    div_rm_f64(a: f64, b: f64) -> f64 => float_div_rm_f64, "div.rm.f64";
    div_rm_ftz_f32(a: f32, b: f32) -> f32 => float_div_rm_ftz_f32, "div.rm.ftz.f32";
    div_rn_f32(a: f32, b: f32) -> f32 => float_div_rn_f32, "div.rn.f32";
    div_rn_f64(a: f64, b: f64) -> f64 => float_div_rn_f64, "div.rn.f64";
    div_rn_ftz_f32(a: f32, b: f32) -> f32 => float_div_rn_ftz_f32, "div.rn.ftz.f32";
    div_rp_f32(a: f32, b: f32) -> f32 => float_div_rp_f32, "div.rp.f32";
    div_rp_f64(a: f64, b: f64) -> f64 => float_div_rp_f64, "div.rp.f64";
    div_rp_ftz_f32(a: f32, b: f32) -> f32 => float_div_rp_ftz_f32, "div.rp.ftz.f32";
    div_rz_f32(a: f32, b: f32) -> f32 => float_div_rz_f32, "div.rz.f32";
    div_rz_f64(a: f64, b: f64) -> f64 => float_div_rz_f64, "div.rz.f64";
    div_rz_ftz_f32(a: f32, b: f32) -> f32 => float_div_rz_ftz_f32, "div.rz.ftz.f32";
    fma_rm_f32(a: f32, b: f32, c: f32) -> f32 => float_fma_rm_f32, "fma.rm.f32";
    fma_rm_f64(a: f64, b: f64, c: f64) -> f64 => float_fma_rm_f64, "fma.rm.f64";
    fma_rm_ftz_f32(a: f32, b: f32, c: f32) -> f32 => float_fma_rm_ftz_f32, "fma.rm.ftz.f32";
    fma_rm_ftz_sat_f32(a: f32, b: f32, c: f32) -> f32 => float_fma_rm_ftz_sat_f32, "fma.rm.ftz.sat.f32";
    fma_rm_sat_f32(a: f32, b: f32, c: f32) -> f32 => float_fma_rm_sat_f32, "fma.rm.sat.f32";
    fma_rn_f32(a: f32, b: f32, c: f32) -> f32 => float_fma_rn_f32, "fma.rn.f32";
    fma_rn_f64(a: f64, b: f64, c: f64) -> f64 => float_fma_rn_f64, "fma.rn.f64";
    fma_rn_ftz_f32(a: f32, b: f32, c: f32) -> f32 => float_fma_rn_ftz_f32, "fma.rn.ftz.f32";
    fma_rn_ftz_sat_f32(a: f32, b: f32, c: f32) -> f32 => float_fma_rn_ftz_sat_f32, "fma.rn.ftz.sat.f32";
    fma_rn_sat_f32(a: f32, b: f32, c: f32) -> f32 => float_fma_rn_sat_f32, "fma.rn.sat.f32";
    fma_rp_f32(a: f32, b: f32, c: f32) -> f32 => float_fma_rp_f32, "fma.rp.f32";
    fma_rp_f64(a: f64, b: f64, c: f64) -> f64 => float_fma_rp_f64, "fma.rp.f64";
    fma_rp_ftz_f32(a: f32, b: f32, c: f32) -> f32 => float_fma_rp_ftz_f32, "fma.rp.ftz.f32";
    fma_rp_ftz_sat_f32(a: f32, b: f32, c: f32) -> f32 => float_fma_rp_ftz_sat_f32, "fma.rp.ftz.sat.f32";
    fma_rp_sat_f32(a: f32, b: f32, c: f32) -> f32 => float_fma_rp_sat_f32, "fma.rp.sat.f32";
    fma_rz_f32(a: f32, b: f32, c: f32) -> f32 => float_fma_rz_f32, "fma.rz.f32";
    fma_rz_f64(a: f64, b: f64, c: f64) -> f64 => float_fma_rz_f64, "fma.rz.f64";
    fma_rz_ftz_f32(a: f32, b: f32, c: f32) -> f32 => float_fma_rz_ftz_f32, "fma.rz.ftz.f32";
    fma_rz_ftz_sat_f32(a: f32, b: f32, c: f32) -> f32 => float_fma_rz_ftz_sat_f32, "fma.rz.ftz.sat.f32";
    fma_rz_sat_f32(a: f32, b: f32, c: f32) -> f32 => float_fma_rz_sat_f32, "fma.rz.sat.f32";
    mul_rm_f32(a: f32, b: f32) -> f32 => float_mul_rm_f32, "mul.rm.f32";
    mul_rm_f64(a: f64, b: f64) -> f64 => float_mul_rm_f64, "mul.rm.f64";
    mul_rm_ftz_f32(a: f32, b: f32) -> f32 => float_mul_rm_ftz_f32, "mul.rm.ftz.f32";
    mul_rn_f32(a: f32, b: f32) -> f32 => float_mul_rn_f32, "mul.rn.f32";
    mul_rn_f64(a: f64, b: f64) -> f64 => float_mul_rn_f64, "mul.rn.f64";
    mul_rn_ftz_f32(a: f32, b: f32) -> f32 => float_mul_rn_ftz_f32, "mul.rn.ftz.f32";
    mul_rp_f32(a: f32, b: f32) -> f32 => float_mul_rp_f32, "mul.rp.f32";
    mul_rp_f64(a: f64, b: f64) -> f64 => float_mul_rp_f64, "mul.rp.f64";
    mul_rp_ftz_f32(a: f32, b: f32) -> f32 => float_mul_rp_ftz_f32, "mul.rp.ftz.f32";
    mul_rz_f32(a: f32, b: f32) -> f32 => float_mul_rz_f32, "mul.rz.f32";
    mul_rz_f64(a: f64, b: f64) -> f64 => float_mul_rz_f64, "mul.rz.f64";
    mul_rz_ftz_f32(a: f32, b: f32) -> f32 => float_mul_rz_ftz_f32, "mul.rz.ftz.f32";
    cos_approx_f32(a: f32) -> f32 => float_cos_approx_f32, "cos.approx.f32";
    cos_approx_ftz_f32(a: f32) -> f32 => float_cos_approx_ftz_f32, "cos.approx.ftz.f32";
    ex2_approx_f32(a: f32) -> f32 => float_ex2_approx_f32, "ex2.approx.f32";
    ex2_approx_ftz_f32(a: f32) -> f32 => float_ex2_approx_ftz_f32, "ex2.approx.ftz.f32";
    lg2_approx_f32(a: f32) -> f32 => float_lg2_approx_f32, "lg2.approx.f32";
    lg2_approx_ftz_f32(a: f32) -> f32 => float_lg2_approx_ftz_f32, "lg2.approx.ftz.f32";
    rcp_approx_ftz_f32(a: f32) -> f32 => float_rcp_approx_ftz_f32, "rcp.approx.ftz.f32";
    rcp_approx_ftz_f64(a: f64) -> f64 => float_rcp_approx_ftz_f64, "rcp.approx.ftz.f64";
    rcp_rm_f32(a: f32) -> f32 => float_rcp_rm_f32, "rcp.rm.f32";
    rcp_rm_f64(a: f64) -> f64 => float_rcp_rm_f64, "rcp.rm.f64";
    rcp_rm_ftz_f32(a: f32) -> f32 => float_rcp_rm_ftz_f32, "rcp.rm.ftz.f32";
    rcp_rn_f32(a: f32) -> f32 => float_rcp_rn_f32, "rcp.rn.f32";
    rcp_rn_f64(a: f64) -> f64 => float_rcp_rn_f64, "rcp.rn.f64";
    rcp_rn_ftz_f32(a: f32) -> f32 => float_rcp_rn_ftz_f32, "rcp.rn.ftz.f32";
    rcp_rp_f32(a: f32) -> f32 => float_rcp_rp_f32, "rcp.rp.f32";
    rcp_rp_f64(a: f64) -> f64 => float_rcp_rp_f64, "rcp.rp.f64";
    rcp_rp_ftz_f32(a: f32) -> f32 => float_rcp_rp_ftz_f32, "rcp.rp.ftz.f32";
    rcp_rz_f32(a: f32) -> f32 => float_rcp_rz_f32, "rcp.rz.f32";
    rcp_rz_f64(a: f64) -> f64 => float_rcp_rz_f64, "rcp.rz.f64";
    rcp_rz_ftz_f32(a: f32) -> f32 => float_rcp_rz_ftz_f32, "rcp.rz.ftz.f32";
    rsqrt_approx_f32(a: f32) -> f32 => float_rsqrt_approx_f32, "rsqrt.approx.f32";
    rsqrt_approx_f64(a: f64) -> f64 => float_rsqrt_approx_f64, "rsqrt.approx.f64";
    rsqrt_approx_ftz_f32(a: f32) -> f32 => float_rsqrt_approx_ftz_f32, "rsqrt.approx.ftz.f32";
    sin_approx_f32(a: f32) -> f32 => float_sin_approx_f32, "sin.approx.f32";
    sin_approx_ftz_f32(a: f32) -> f32 => float_sin_approx_ftz_f32, "sin.approx.ftz.f32";
    sqrt_approx_f32(a: f32) -> f32 => float_sqrt_approx_f32, "sqrt.approx.f32";
    sqrt_approx_ftz_f32(a: f32) -> f32 => float_sqrt_approx_ftz_f32, "sqrt.approx.ftz.f32";
    sqrt_rm_f32(a: f32) -> f32 => float_sqrt_rm_f32, "sqrt.rm.f32";
    sqrt_rm_f64(a: f64) -> f64 => float_sqrt_rm_f64, "sqrt.rm.f64";
    sqrt_rm_ftz_f32(a: f32) -> f32 => float_sqrt_rm_ftz_f32, "sqrt.rm.ftz.f32";
    sqrt_rn_f32(a: f32) -> f32 => float_sqrt_rn_f32, "sqrt.rn.f32";
    sqrt_rn_f64(a: f64) -> f64 => float_sqrt_rn_f64, "sqrt.rn.f64";
    sqrt_rn_ftz_f32(a: f32) -> f32 => float_sqrt_rn_ftz_f32, "sqrt.rn.ftz.f32";
    sqrt_rp_f32(a: f32) -> f32 => float_sqrt_rp_f32, "sqrt.rp.f32";
    sqrt_rp_f64(a: f64) -> f64 => float_sqrt_rp_f64, "sqrt.rp.f64";
    sqrt_rp_ftz_f32(a: f32) -> f32 => float_sqrt_rp_ftz_f32, "sqrt.rp.ftz.f32";
    sqrt_rz_f32(a: f32) -> f32 => float_sqrt_rz_f32, "sqrt.rz.f32";
    sqrt_rz_f64(a: f64) -> f64 => float_sqrt_rz_f64, "sqrt.rz.f64";
    sqrt_rz_ftz_f32(a: f32) -> f32 => float_sqrt_rz_ftz_f32, "sqrt.rz.ftz.f32";
    tanh_approx_f32(a: f32) -> f32 => float_tanh_approx_f32, "tanh.approx.f32";
    max_ftz_nan_xorsign_abs_f32(a: f32, b: f32) -> f32 => float_max_ftz_nan_xorsign_abs_f32, "max.ftz.NaN.xorsign.abs.f32";
    max_ftz_xorsign_abs_f32(a: f32, b: f32) -> f32 => float_max_ftz_xorsign_abs_f32, "max.ftz.xorsign.abs.f32";
    max_nan_xorsign_abs_f32(a: f32, b: f32) -> f32 => float_max_nan_xorsign_abs_f32, "max.NaN.xorsign.abs.f32";
    max_xorsign_abs_f32(a: f32, b: f32) -> f32 => float_max_xorsign_abs_f32, "max.xorsign.abs.f32";
    min_ftz_nan_xorsign_abs_f32(a: f32, b: f32) -> f32 => float_min_ftz_nan_xorsign_abs_f32, "min.ftz.NaN.xorsign.abs.f32";
    min_ftz_xorsign_abs_f32(a: f32, b: f32) -> f32 => float_min_ftz_xorsign_abs_f32, "min.ftz.xorsign.abs.f32";
    min_nan_xorsign_abs_f32(a: f32, b: f32) -> f32 => float_min_nan_xorsign_abs_f32, "min.NaN.xorsign.abs.f32";
    min_xorsign_abs_f32(a: f32, b: f32) -> f32 => float_min_xorsign_abs_f32, "min.xorsign.abs.f32";
}
