//! Arithmetic without a Rust operator: the integer dot products `dp4a` and `dp2a` (sm_61).

use rustc_codegen_ssa::traits::*;

use super::super::builder::Builder;

/// Builds the body of the arithmetic intrinsic `name`; `false` if `name` is not one.
pub fn build(bx: &mut Builder<'_, '_>, name: &str) -> bool {
    let i32t = bx.cx.type_i32();
    let v = match name {
        "dp4a_s32" | "dp4a_u32" => {
            let sign = if name.ends_with("s32") { "s.s" } else { "u.u" };
            let args = [bx.get_param(0), bx.get_param(1), bx.get_param(2)];
            bx.call_named(&format!("llvm.nvvm.idp4a.{sign}"), i32t, &args)
        }
        "dp2a_lo_s32" | "dp2a_lo_u32" => {
            let sign = if name.ends_with("s32") { "s.s" } else { "u.u" };
            // The i1 operand picks the bytes of `b`: false for the low two (`.lo`).
            let lo = bx.cx.const_bool(false);
            let args = [bx.get_param(0), bx.get_param(1), lo, bx.get_param(2)];
            bx.call_named(&format!("llvm.nvvm.idp2a.{sign}"), i32t, &args)
        }
        _ => return false,
    };
    bx.ret(v);
    true
}
