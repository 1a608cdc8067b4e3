//! Arithmetic without a Rust operator: the integer dot products `dp4a` and `dp2a` (sm_61), and
//! float instructions with an explicit rounding, flush-to-zero, saturation or approximation
//! (`float_add_rz_ftz_f32` → `add.rz.ftz.f32`).

use rustc_codegen_ssa::traits::*;

use super::super::builder::Builder;
use super::super::ir;

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
        _ if name.starts_with("float_") => float_instruction(bx, &name["float_".len()..]),
        _ => return false,
    };
    bx.ret(v);
    true
}

/// `<mnemonic> $0, $1, …;` as inline PTX, for the intrinsic `float_<mnemonic>` (`_` for `.`,
/// `nan` for `.NaN`). Pure: LLVM may merge or drop it like any arithmetic.
fn float_instruction(bx: &mut Builder<'_, '_>, name: &str) -> ir::Value {
    let op = name.split('_').next().unwrap_or_default();
    let arity = match op {
        "fma" => 3,
        "add" | "sub" | "mul" | "div" | "max" | "min" => 2,
        _ => 1,
    };
    let (ty, reg) = if name.ends_with("f64") { (bx.cx.type_f64(), "d") } else { (bx.cx.type_f32(), "f") };
    let mnemonic = name.split('_').map(|t| if t == "nan" { "NaN" } else { t }).collect::<Vec<_>>().join(".");
    let operands = (1..=arity).map(|i| format!("${i}")).collect::<Vec<_>>().join(", ");
    let constraints = std::iter::once(format!("={reg}")).chain((0..arity).map(|_| reg.to_string())).collect::<Vec<_>>();
    let args = (0..arity).map(|i| bx.cx.operand(bx.get_param(i))).collect::<Vec<_>>().join(", ");
    let t = bx.cx.type_str(ty);
    bx.emit_value(ty, format!("call {t} asm \"{mnemonic} $0, {operands};\", \"{}\"({args})", constraints.join(",")))
}
