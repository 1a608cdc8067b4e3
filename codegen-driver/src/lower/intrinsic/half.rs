//! bfloat16 and packed halves: `bf16_*` on `u16` bits (`add.rn.bf16`, `fma.rn.bf16`,
//! `cvt.rn.bf16.f32`), `f16x2_*` / `bf16x2_*` on `u32` bits (`<2 x half>` / `<2 x bfloat>` in
//! LLVM: `add.rn.f16x2`, `fma.rn.relu.bf16x2`, `fma.rn.ftz.sat.f16x2`, …), the pair conversions
//! from `f32` (`cvt.rn/rz{.relu}.f16x2.f32`), `cvt.rna.tf32.f32` and the packed atomic adds
//! (`atom.add.noftz.f16x2`).

use rustc_codegen_ssa::traits::*;

use super::super::builder::Builder;
use super::super::ir::{self, TypeData};

/// Builds the body of the half-precision intrinsic `name`; `false` if `name` is not one.
pub fn build(bx: &mut Builder<'_, '_>, name: &str) -> bool {
    let cx = bx.cx;
    let (half, bfloat) = (cx.type_f16(), cx.ty(TypeData::BFloat));
    let (h2, b2) = (cx.type_vector(half, 2), cx.type_vector(bfloat, 2));
    let (i16t, i32t, f32t) = (cx.type_i16(), cx.type_i32(), cx.type_f32());
    if name == "bf16_from_f32" {
        let x = bx.get_param(0);
        let b = bx.fptrunc(x, bfloat);
        let bits = bx.bitcast(b, i16t);
        bx.ret(bits);
        return true;
    }
    if name == "cvt_rna_tf32_f32" {
        let x = bx.get_param(0);
        let bits = bx.call_named("llvm.nvvm.f2tf32.rna", i32t, &[x]);
        bx.ret(bits);
        return true;
    }
    if let Some(op) = name.strip_prefix("atom_add_noftz_") {
        // No `atomicrmw` on vectors: `atom` through 32-bit registers, generic address.
        let (ptr, val) = (bx.get_param(0), bx.get_param(1));
        let text = format!("atom.add.noftz.{op} $0, [$1], $2;");
        let old = super::asm::call(bx, &[i32t], &text, "=r,l,r", &[ptr, val], super::asm::Effect::Memory);
        bx.ret(old.expect("one output"));
        return true;
    }
    let pack = name.strip_prefix("cvt_").and_then(|r| r.strip_suffix("_f32")).and_then(|r| r.split_once('_'));
    if let Some((rounding @ ("rn" | "rz"), target)) = pack {
        // PTX `cvt.rn.f16x2.f32 d, a, b` puts `a` in the HIGH half: pass (hi, lo).
        let (relu, target, ty) = match target {
            "f16x2" => ("", "f16x2", h2),
            "relu_f16x2" => (".relu", "f16x2", h2),
            "bf16x2" => ("", "bf16x2", b2),
            "relu_bf16x2" => (".relu", "bf16x2", b2),
            _ => return false,
        };
        let (lo, hi) = (bx.get_param(0), bx.get_param(1));
        let v = bx.call_named(&format!("llvm.nvvm.ff2{target}.{rounding}{relu}"), ty, &[hi, lo]);
        let bits = bx.bitcast(v, i32t);
        bx.ret(bits);
        return true;
    }
    let (ty, bits, op) = if let Some(op) = name.strip_prefix("bf16x2_") {
        (b2, i32t, op)
    } else if let Some(op) = name.strip_prefix("f16x2_") {
        (h2, i32t, op)
    } else if let Some(op) = name.strip_prefix("bf16_") {
        (bfloat, i16t, op)
    } else {
        return false;
    };
    let arity = if op.starts_with("fma") { 3 } else { 2 };
    let args: Vec<ir::Value> = (0..arity)
        .map(|i| {
            let p = bx.get_param(i);
            bx.bitcast(p, ty)
        })
        .collect();
    let r = match op {
        "add" => bx.fadd(args[0], args[1]),
        "sub" => bx.fsub(args[0], args[1]),
        "mul" => bx.fmul(args[0], args[1]),
        "fma" => bx.call_intrinsic("fma", &[ty], ty, &args),
        "min" => bx.call_intrinsic("minnum", &[ty], ty, &args),
        "max" => bx.call_intrinsic("maxnum", &[ty], ty, &args),
        // `fma.rn{.ftz}{.sat|.relu}`: NVVM intrinsics named after the modifiers.
        "fma_relu" | "fma_ftz" | "fma_sat" | "fma_ftz_sat" | "fma_ftz_relu" => {
            let suffix = if ty == h2 { "f16x2" } else { "bf16x2" };
            let modifiers = op["fma".len()..].replace('_', ".");
            bx.call_named(&format!("llvm.nvvm.fma.rn{modifiers}.{suffix}"), ty, &args)
        }
        _ => rustc_middle::bug!("cuda-oxide: no half-precision operation `{name}`"),
    };
    let _ = f32t;
    let out = bx.bitcast(r, bits);
    bx.ret(out);
    true
}
