//! Casts between floats and 128-bit integers. NVPTX has no libcalls (`__fixdfti`, `__floattidf`, …),
//! so llc aborts on them; we build them from 64-bit conversions, with Rust's semantics
//! (float → int saturates, NaN → 0; int → float rounds to nearest, ties to even).

use rustc_codegen_ssa::common::{IntPredicate, RealPredicate};
use rustc_codegen_ssa::traits::*;

use super::builder::Builder;
use super::ir::{self, TypeData};

/// `true` when `t` is `i128`.
pub fn is_i128(bx: &Builder<'_, '_>, t: ir::Type) -> bool {
    matches!(bx.cx.type_data(t), TypeData::Int(128))
}

/// 2^e as an `f64` (exact).
fn pow2(e: i32) -> f64 {
    f64::from_bits(((1023 + e) as u64) << 52)
}

fn f64_const(bx: &Builder<'_, '_>, x: f64) -> ir::Value {
    let t = bx.cx.type_f64();
    bx.cx.const_real(t, x)
}

/// `fpto{s,u}i.sat` from `f32`/`f64` to `i128`.
pub fn float_to_i128_sat(bx: &mut Builder<'_, '_>, v: ir::Value, signed: bool) -> ir::Value {
    let cx = bx.cx;
    let (f64t, i64t, i128t) = (cx.type_f64(), cx.type_i64(), cx.type_i128());
    let x = if cx.val_ty(v) == f64t { v } else { bx.fpext(v, f64t) };
    let t = bx.call_intrinsic("trunc", &[f64t], f64t, &[x]);
    // |t| < 2^63: one 64-bit conversion.
    let abs = bx.call_intrinsic("fabs", &[f64t], f64t, &[t]);
    let small = bx.fcmp(RealPredicate::RealOLT, abs, f64_const(bx, pow2(63)));
    let small_i = bx.fptosi(t, i64t);
    let small_i = bx.sext(small_i, i128t);
    // Otherwise `t` is a multiple of 2^11: high and low 64-bit halves are exact in f64.
    let scaled = bx.fmul(t, f64_const(bx, pow2(-64)));
    let hi_f = bx.call_intrinsic("floor", &[f64t], f64t, &[scaled]);
    let hi_part = bx.fmul(hi_f, f64_const(bx, pow2(64)));
    let lo_f = bx.fsub(t, hi_part);
    let hi = if signed { bx.fptosi(hi_f, i64t) } else { bx.fptoui(hi_f, i64t) };
    let hi = if signed { bx.sext(hi, i128t) } else { bx.zext(hi, i128t) };
    let lo = bx.fptoui(lo_f, i64t);
    let lo = bx.zext(lo, i128t);
    let hi = bx.shl(hi, cx.const_uint(i128t, 64));
    let large = bx.or(hi, lo);
    let r = bx.select(small, small_i, large);
    // Saturation and NaN.
    let (min_f, max_f, min_i, max_i) = if signed {
        (-pow2(127), pow2(127), cx.const_uint_big(i128t, 1u128 << 127), cx.const_uint_big(i128t, (1u128 << 127) - 1))
    } else {
        (0.0, pow2(128), cx.const_uint(i128t, 0), cx.const_uint_big(i128t, u128::MAX))
    };
    let too_big = bx.fcmp(RealPredicate::RealOGE, t, f64_const(bx, max_f));
    let r = bx.select(too_big, max_i, r);
    let too_small = bx.fcmp(RealPredicate::RealOLT, t, f64_const(bx, min_f));
    let r = bx.select(too_small, min_i, r);
    let nan = bx.fcmp(RealPredicate::RealUNO, x, x);
    bx.select(nan, cx.const_uint(i128t, 0), r)
}

/// `{s,u}itofp` from `i128` to the float type `dest`, correctly rounded.
pub fn i128_to_float(bx: &mut Builder<'_, '_>, v: ir::Value, dest: ir::Type, signed: bool) -> ir::Value {
    let cx = bx.cx;
    if matches!(cx.type_data(dest), TypeData::Half) {
        // Through f32 (may round twice; f16 from i128 is rare).
        let f = i128_to_float(bx, v, cx.type_f32(), signed);
        return bx.fptrunc(f, dest);
    }
    let (i64t, i128t) = (cx.type_i64(), cx.type_i128());
    let zero = cx.const_uint(i128t, 0);
    let neg = if signed { bx.icmp(IntPredicate::IntSLT, v, zero) } else { cx.const_bool(false) };
    let negated = bx.sub(zero, v);
    let m = if signed { bx.select(neg, negated, v) } else { v };
    // Shift right by s = max(0, 64 - leading_zeros) so the value fits in 64 bits, keeping a
    // sticky bit for the bits shifted out: one 64-bit conversion then rounds correctly.
    let lz = bx.call_intrinsic("ctlz", &[i128t], i128t, &[m, cx.const_bool(false)]);
    let c64 = cx.const_uint(i128t, 64);
    let fits = bx.icmp(IntPredicate::IntUGE, lz, c64);
    let s_raw = bx.sub(c64, lz);
    let s = bx.select(fits, zero, s_raw);
    let shifted = bx.lshr(m, s);
    let one = cx.const_uint(i128t, 1);
    let mask = bx.shl(one, s);
    let mask = bx.sub(mask, one);
    let lost = bx.and(m, mask);
    let sticky = bx.icmp(IntPredicate::IntNE, lost, zero);
    let sticky = bx.zext(sticky, i128t);
    let y = bx.or(shifted, sticky);
    let y = bx.trunc(y, i64t);
    let f = bx.uitofp(y, dest);
    // Scale by 2^s (s <= 64) through the exponent bits: exact, or overflow to infinity.
    let s64 = bx.trunc(s, i64t);
    let is_f64 = matches!(cx.type_data(dest), TypeData::Double);
    let (bias, mant, int_t) = if is_f64 { (1023, 52, i64t) } else { (127, 23, cx.type_i32()) };
    let s_n = bx.intcast(s64, int_t, false);
    let e = bx.add(s_n, cx.const_uint(int_t, bias));
    let bits = bx.shl(e, cx.const_uint(int_t, mant));
    let scale = bx.bitcast(bits, dest);
    let r = bx.fmul(f, scale);
    if signed {
        let nr = bx.fneg(r);
        bx.select(neg, nr, r)
    } else {
        r
    }
}
