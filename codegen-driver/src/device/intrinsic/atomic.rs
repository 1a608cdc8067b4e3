//! Scoped atomics: `atomic_rmw::<T, OP, SCOPE>` → `atomicrmw`, `atomic_cas::<T, SCOPE>` →
//! `cmpxchg`, with an NVPTX `syncscope`; LLVM picks `atom{.scope}{.global|.shared}`.

use rustc_codegen_ssa::traits::*;
use rustc_middle::ty::{self, Instance};

use super::super::builder::Builder;
use super::super::ir::TypeData;

/// Operation codes of `atomic_rmw`; the same numbers as `cuda_device::atomic::op`.
mod op {
    pub const ADD: u8 = 0;
    pub const SUB: u8 = 1;
    pub const AND: u8 = 2;
    pub const OR: u8 = 3;
    pub const XOR: u8 = 4;
    pub const MIN: u8 = 5;
    pub const MAX: u8 = 6;
    pub const EXCH: u8 = 7;
    pub const INC: u8 = 8;
    pub const DEC: u8 = 9;
}

/// NVPTX's `syncscope` for `cuda_device::atomic::scope` (0 block, 1 cluster, 2 device, 3 system).
fn syncscope(scope: u8) -> &'static str {
    match scope {
        0 => "syncscope(\"block\") ",
        1 => "syncscope(\"cluster\") ",
        2 => "syncscope(\"device\") ",
        _ => "",
    }
}

fn const_arg<'tcx>(instance: Instance<'tcx>, i: usize) -> u8 {
    instance.args.const_at(i).to_leaf().to_u8()
}

/// Builds `atomic_rmw` / `atomic_cas`; `false` if `name` is neither.
pub fn build<'tcx>(bx: &mut Builder<'_, 'tcx>, name: &str, instance: Instance<'tcx>) -> bool {
    if !matches!(name, "atomic_rmw" | "atomic_cas") {
        return false;
    }
    let elem = instance.args.type_at(0);
    let (float, signed) = match elem.kind() {
        ty::Float(_) => (true, false),
        ty::Int(_) => (false, true),
        _ => (false, false),
    };
    match name {
        "atomic_rmw" => {
            let (code, scope) = (const_arg(instance, 1), const_arg(instance, 2));
            let ptr = bx.get_param(0);
            let val = bx.get_param(1);
            let op = match (code, float, signed) {
                (op::ADD, true, _) => "fadd",
                (op::SUB, true, _) => "fsub",
                (op::MIN, true, _) => "fmin",
                (op::MAX, true, _) => "fmax",
                (op::EXCH, _, _) => "xchg",
                (op::ADD, ..) => "add",
                (op::SUB, ..) => "sub",
                (op::AND, ..) => "and",
                (op::OR, ..) => "or",
                (op::XOR, ..) => "xor",
                (op::MIN, _, true) => "min",
                (op::MIN, _, false) => "umin",
                (op::MAX, _, true) => "max",
                (op::MAX, _, false) => "umax",
                (op::INC, ..) => "uinc_wrap",
                (op::DEC, ..) => "udec_wrap",
                _ => rustc_middle::bug!("cuda-oxide: atomic_rmw op {code} on `{elem}`"),
            };
            let ty = bx.cx.val_ty(val);
            let text = format!(
                "atomicrmw {op} {}, {} {}monotonic",
                bx.cx.operand(ptr),
                bx.cx.operand(val),
                syncscope(scope)
            );
            let old = bx.emit_value(ty, text);
            bx.ret(old);
        }
        "atomic_cas" => {
            let scope = const_arg(instance, 1);
            let ptr = bx.get_param(0);
            let mut cmp = bx.get_param(1);
            let mut new = bx.get_param(2);
            let ty = bx.cx.val_ty(cmp);
            // `cmpxchg` takes integers (and pointers) only: compare floats by their bits.
            let int_ty = match bx.cx.type_data(ty) {
                TypeData::Float => Some(bx.cx.type_i32()),
                TypeData::Double => Some(bx.cx.type_i64()),
                _ => None,
            };
            if let Some(it) = int_ty {
                cmp = bx.bitcast(cmp, it);
                new = bx.bitcast(new, it);
            }
            let cty = int_ty.unwrap_or(ty);
            let pair = bx.cx.type_struct(&[cty, bx.cx.type_i1()], false);
            let text = format!(
                "cmpxchg {}, {}, {} {}monotonic monotonic",
                bx.cx.operand(ptr),
                bx.cx.operand(cmp),
                bx.cx.operand(new),
                syncscope(scope)
            );
            let res = bx.emit_value(pair, text);
            let mut old = bx.extract_value(res, 0);
            if int_ty.is_some() {
                old = bx.bitcast(old, ty);
            }
            bx.ret(old);
        }
        _ => return false,
    }
    true
}
