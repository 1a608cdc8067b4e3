//! Warp-level tensor-core operations: `mma.sync.aligned` m16n8k16 (bf16, f16 → f32), m16n8k8
//! (tf32 → f32) and m16n8k32 (s8 → s32), `ldmatrix` and `stmatrix` (x1/x2/x4, `.trans`). Fragments come and go through
//! pointers to the caller's register arrays, which SROA turns back into registers once inlined.

use rustc_codegen_ssa::traits::*;

use super::super::builder::Builder;
use super::asm::{self, Effect};

/// Builds the body of the mma/ldmatrix/stmatrix intrinsic `name`; `false` if `name` is not one.
pub fn build(bx: &mut Builder<'_, '_>, name: &str) -> bool {
    let (i32t, f32t) = (bx.cx.type_i32(), bx.cx.type_f32());
    if let Some(shape) = name.strip_prefix("mma_") {
        let (shape, ab) = match shape {
            "m16n8k16_bf16_f32" => ("m16n8k16", "bf16"),
            "m16n8k16_f16_f32" => ("m16n8k16", "f16"),
            "m16n8k8_tf32_f32" => ("m16n8k8", "tf32"),
            "m16n8k32_s8_s32" => ("m16n8k32", "s8"),
            _ => return false,
        };
        // The accumulator: f32, or s32 for the integer shapes (`r` registers).
        let (acc, acc_ty, acc_reg) = if ab == "s8" { ("s32", i32t, "r") } else { ("f32", f32t, "f") };
        let (d, a, b, c) = (bx.get_param(0), bx.get_param(1), bx.get_param(2), bx.get_param(3));
        let mut args = asm::load_n(bx, i32t, a, 4, 4);
        args.extend(asm::load_n(bx, i32t, b, 2, 4));
        args.extend(asm::load_n(bx, acc_ty, c, 4, 4));
        let text = format!(
            "mma.sync.aligned.{shape}.row.col.{acc}.{ab}.{ab}.{acc} {}, {}, {}, {};",
            asm::regs(0, 4),
            asm::regs(4, 4),
            asm::regs(8, 2),
            asm::regs(10, 4)
        );
        let cons =
            [asm::constraints(&format!("={acc_reg}"), 4), asm::constraints("r", 6), asm::constraints(acc_reg, 4)]
                .concat()
                .join(",");
        let out = asm::call(bx, &[acc_ty; 4], &text, &cons, &args, Effect::Pure).expect("four results");
        asm::store_n(bx, acc_ty, out, d, 4, 4);
        bx.ret_void();
        return true;
    }
    let (load, rest) = if let Some(r) = name.strip_prefix("ldmatrix_") {
        (true, r)
    } else if let Some(r) = name.strip_prefix("stmatrix_") {
        (false, r)
    } else {
        return false;
    };
    let (n, trans) = match rest {
        "x1" => (1, ""),
        "x2" => (2, ""),
        "x4" => (4, ""),
        "x1_trans" => (1, ".trans"),
        "x2_trans" => (2, ".trans"),
        "x4_trans" => (4, ".trans"),
        _ => return false,
    };
    if load {
        let (out, addr) = (bx.get_param(0), bx.get_param(1));
        let addr = asm::shared_addr(bx, addr);
        let text = format!("ldmatrix.sync.aligned.m8n8.x{n}{trans}.shared.b16 {}, [${n}];", asm::regs(0, n as usize));
        let cons = [asm::constraints("=r", n as usize), vec!["r".into()]].concat().join(",");
        let outs = vec![i32t; n as usize];
        let v = asm::call(bx, &outs, &text, &cons, &[addr], Effect::Memory).expect("results");
        asm::store_n(bx, i32t, v, out, n, 4);
    } else {
        let (addr, vals) = (bx.get_param(0), bx.get_param(1));
        let addr = asm::shared_addr(bx, addr);
        let mut args = vec![addr];
        args.extend(asm::load_n(bx, i32t, vals, n, 4));
        let text = format!("stmatrix.sync.aligned.m8n8.x{n}{trans}.shared.b16 [$0], {};", asm::regs(1, n as usize));
        let cons = [vec!["r".to_string()], asm::constraints("r", n as usize)].concat().join(",");
        asm::call(bx, &[], &text, &cons, &args, Effect::Memory);
    }
    bx.ret_void();
    true
}
