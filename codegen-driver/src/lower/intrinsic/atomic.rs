//! Scoped atomics: `atomic_rmw::<T, OP, SCOPE>` → `atomicrmw`, `atomic_cas::<T, SCOPE>` →
//! `cmpxchg`, with an NVPTX `syncscope`; LLVM picks `atom{.scope}{.global|.shared}`.

use oxide_contract::atomic::{AtomicOp, AtomicScope};
use rustc_codegen_ssa::traits::*;
use rustc_middle::ty::{self, Instance};

use super::super::builder::Builder;
use super::super::ir::TypeData;

/// NVPTX's `syncscope` for an atomic scope (the system scope is LLVM's default).
fn syncscope(scope: AtomicScope) -> &'static str {
    match scope {
        AtomicScope::Block => "syncscope(\"block\") ",
        AtomicScope::Cluster => "syncscope(\"cluster\") ",
        AtomicScope::Device => "syncscope(\"device\") ",
        AtomicScope::System => "",
    }
}

fn const_arg<'tcx>(instance: Instance<'tcx>, i: usize) -> u8 {
    instance.args.const_at(i).to_leaf().to_u8()
}

/// The scope in const argument `i`; any other number is our bug (cuda_device passes the codes).
fn scope_arg<'tcx>(instance: Instance<'tcx>, i: usize) -> AtomicScope {
    let code = const_arg(instance, i);
    AtomicScope::from_code(code).unwrap_or_else(|| rustc_middle::bug!("cuda-oxide: atomic scope code {code}"))
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
            let code = const_arg(instance, 1);
            let scope = scope_arg(instance, 2);
            let op = AtomicOp::from_code(code)
                .unwrap_or_else(|| rustc_middle::bug!("cuda-oxide: atomic_rmw op {code} on `{elem}`"));
            let ptr = bx.get_param(0);
            let val = bx.get_param(1);
            let op = match (op, float, signed) {
                (AtomicOp::Add, true, _) => "fadd",
                (AtomicOp::Sub, true, _) => "fsub",
                (AtomicOp::Min, true, _) => "fmin",
                (AtomicOp::Max, true, _) => "fmax",
                (AtomicOp::Exch, _, _) => "xchg",
                (AtomicOp::Add, ..) => "add",
                (AtomicOp::Sub, ..) => "sub",
                (AtomicOp::And, ..) => "and",
                (AtomicOp::Or, ..) => "or",
                (AtomicOp::Xor, ..) => "xor",
                (AtomicOp::Min, _, true) => "min",
                (AtomicOp::Min, _, false) => "umin",
                (AtomicOp::Max, _, true) => "max",
                (AtomicOp::Max, _, false) => "umax",
                (AtomicOp::Inc, ..) => "uinc_wrap",
                (AtomicOp::Dec, ..) => "udec_wrap",
            };
            let ty = bx.cx.val_ty(val);
            let text =
                format!("atomicrmw {op} {}, {} {}monotonic", bx.cx.operand(ptr), bx.cx.operand(val), syncscope(scope));
            let old = bx.emit_value(ty, text);
            bx.ret(old);
        }
        "atomic_cas" => {
            let scope = scope_arg(instance, 1);
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
