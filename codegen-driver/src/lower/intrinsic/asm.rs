//! Inline PTX for the tensor-core families (`mma.rs`, `mbarrier.rs`, `wgmma.rs`, `tma.rs`): many
//! of their instructions take or return several registers, or have no NVVM intrinsic in every
//! LLVM we meet, so they are written as `asm` calls, with their memory effects spelled out.

use rustc_codegen_ssa::traits::*;
use rustc_middle::ty::Instance;

use super::super::builder::Builder;
use super::super::ir::{self, TypeData};

/// Whether an `asm` call may be moved or merged by LLVM.
#[derive(Clone, Copy, PartialEq)]
pub enum Effect {
    /// A pure computation of its register operands (`mma.sync`).
    Pure,
    /// Reads or writes memory, or synchronises: kept in order with a `~{memory}` clobber.
    Memory,
}

/// `call <ret> asm [sideeffect] "<text>", "<constraints>"(<args>)`. `outputs` are the types of
/// the `=` constraints (none: `void`; one: that type; more: a literal struct of them).
pub fn call(
    bx: &mut Builder<'_, '_>,
    outputs: &[ir::Type],
    text: &str,
    constraints: &str,
    args: &[ir::Value],
    effect: Effect,
) -> Option<ir::Value> {
    let (sideeffect, clobber) = match effect {
        Effect::Pure => ("", String::new()),
        Effect::Memory => {
            ("sideeffect ", if constraints.is_empty() { "~{memory}".into() } else { ",~{memory}".into() })
        }
    };
    let args = args.iter().map(|&a| bx.cx.operand(a)).collect::<Vec<_>>().join(", ");
    let ret = match outputs {
        [] => None,
        [t] => Some(*t),
        many => Some(bx.cx.type_struct(many, false)),
    };
    let rhs = |t: &str| format!("call {t} asm {sideeffect}\"{text}\", \"{constraints}{clobber}\"({args})");
    match ret {
        None => {
            bx.emit(rhs("void"));
            None
        }
        Some(t) => {
            let ts = bx.cx.type_str(t);
            Some(bx.emit_value(t, rhs(&ts)))
        }
    }
}

/// The 32-bit shared-window address of the generic pointer `p` (what `cvta.to.shared` gives),
/// for the `.shared` operands of the asm (`r` constraint).
pub fn shared_addr(bx: &mut Builder<'_, '_>, p: ir::Value) -> ir::Value {
    let shared = bx.cx.ty(TypeData::Ptr(3));
    let p3 = bx.pointercast(p, shared);
    let i32t = bx.cx.type_i32();
    bx.ptrtoint(p3, i32t)
}

/// Loads `n` values of type `ty` from `p[0..n]`.
pub fn load_n(bx: &mut Builder<'_, '_>, ty: ir::Type, p: ir::Value, n: u64, align: u64) -> Vec<ir::Value> {
    (0..n)
        .map(|i| {
            let idx = bx.cx.const_usize(i);
            let at = bx.inbounds_gep(ty, p, &[idx]);
            bx.load(ty, at, rustc_abi::Align::from_bytes(align).expect("power of two"))
        })
        .collect()
}

/// Stores field `i` of the asm result `agg` (or `agg` itself when `n == 1`) to `p[i]`.
pub fn store_n(bx: &mut Builder<'_, '_>, ty: ir::Type, agg: ir::Value, p: ir::Value, n: u64, align: u64) {
    for i in 0..n {
        let v = if n == 1 { agg } else { bx.extract_value(agg, i) };
        let idx = bx.cx.const_usize(i);
        let at = bx.inbounds_gep(ty, p, &[idx]);
        bx.store(v, at, rustc_abi::Align::from_bytes(align).expect("power of two"));
    }
}

/// `{$a, $a+1, …}` for `n` consecutive operands from `first`.
pub fn regs(first: usize, n: usize) -> String {
    let list = (first..first + n).map(|i| format!("${i}")).collect::<Vec<_>>().join(", ");
    format!("{{{list}}}")
}

/// `c` repeated `n` times, comma-separated.
pub fn constraints(c: &str, n: usize) -> Vec<String> {
    vec![c.to_string(); n]
}

/// Const generic argument `i` of `instance` (a `u32`).
pub fn const_arg(instance: Instance<'_>, i: usize) -> u32 {
    instance.args.const_at(i).to_leaf().to_u32()
}

/// Const generic argument `i` of `instance` (a `usize`).
pub fn const_usize<'tcx>(bx: &Builder<'_, 'tcx>, instance: Instance<'tcx>, i: usize) -> usize {
    let c = instance.args.const_at(i).try_to_target_usize(bx.cx.tcx);
    c.expect("a usize const argument") as usize
}
