//! Scoped atomics: `atomic_rmw[_ordered]` → `atomicrmw`, `atomic_cas[_ordered]` → `cmpxchg`,
//! `atomic_load` / `atomic_store` → `load atomic` / `store atomic`, each with an NVPTX `syncscope`
//! and an LLVM ordering.
//!
//! LLVM 22's NVPTX backend emits every `atomicrmw` as a relaxed `.gpu` `atom` whatever its ordering
//! and scope (loads, stores and `cmpxchg` keep both). So a read-modify-write with an ordering gets
//! the fences around it that the PTX memory model asks for (release: `fence` before, acquire:
//! `fence` after, seq_cst: `fence.sc` both sides), and one with system scope, which `.gpu` would
//! weaken, is written as inline PTX `atom.<sem>.sys`. `core::sync::atomic`'s read-modify-writes
//! (the builder's `atomic_rmw`) take the same path with system scope: Rust's atomics know no
//! narrower one.

use oxide_contract::atomic::{AtomicOp, AtomicOrdering, AtomicScope};
use rustc_codegen_ssa::common::AtomicRmwBinOp;
use rustc_codegen_ssa::traits::*;
use rustc_middle::ty::{self, Instance, Ty};

use super::super::builder::Builder;
use super::super::ir::{self, TypeData};

/// NVPTX's `syncscope` for an atomic scope (the system scope is LLVM's default).
fn syncscope(scope: AtomicScope) -> &'static str {
    match scope {
        AtomicScope::Block => "syncscope(\"block\") ",
        AtomicScope::Cluster => "syncscope(\"cluster\") ",
        AtomicScope::Device => "syncscope(\"device\") ",
        AtomicScope::System => "",
    }
}

/// LLVM's spelling of an ordering.
fn llvm_ordering(order: AtomicOrdering) -> &'static str {
    match order {
        AtomicOrdering::Relaxed => "monotonic",
        AtomicOrdering::Acquire => "acquire",
        AtomicOrdering::Release => "release",
        AtomicOrdering::AcqRel => "acq_rel",
        AtomicOrdering::SeqCst => "seq_cst",
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

/// The ordering in const argument `i`.
fn ordering_arg<'tcx>(instance: Instance<'tcx>, i: usize) -> AtomicOrdering {
    let code = const_arg(instance, i);
    AtomicOrdering::from_code(code).unwrap_or_else(|| rustc_middle::bug!("cuda-oxide: atomic ordering code {code}"))
}

/// Builds the atomic intrinsic `name`; `false` if `name` is not one.
pub fn build<'tcx>(bx: &mut Builder<'_, 'tcx>, name: &str, instance: Instance<'tcx>) -> bool {
    let elem = match name {
        "atomic_rmw" | "atomic_rmw_ordered" | "atomic_cas" | "atomic_cas_ordered" | "atomic_load" | "atomic_store" => {
            instance.args.type_at(0)
        }
        _ => return false,
    };
    match name {
        "atomic_rmw" | "atomic_rmw_ordered" => {
            let code = const_arg(instance, 1);
            let op = AtomicOp::from_code(code)
                .unwrap_or_else(|| rustc_middle::bug!("cuda-oxide: atomic_rmw op {code} on `{elem}`"));
            let scope = scope_arg(instance, 2);
            let order = if name == "atomic_rmw" { AtomicOrdering::Relaxed } else { ordering_arg(instance, 3) };
            let old = rmw(bx, elem, op, scope, order);
            bx.ret(old);
        }
        "atomic_cas" | "atomic_cas_ordered" => {
            let scope = scope_arg(instance, 1);
            let (success, failure) = if name == "atomic_cas" {
                (AtomicOrdering::Relaxed, AtomicOrdering::Relaxed)
            } else {
                (ordering_arg(instance, 2), ordering_arg(instance, 3))
            };
            let old = cas(bx, scope, success, failure);
            bx.ret(old);
        }
        "atomic_load" | "atomic_store" => {
            let scope = scope_arg(instance, 1);
            let order = ordering_arg(instance, 2);
            load_store(bx, name == "atomic_load", scope, order, elem);
        }
        _ => return false,
    }
    true
}

/// The body of `atomic_load` / `atomic_store`: [`emit_load_store`] on the parameters.
fn load_store<'tcx>(bx: &mut Builder<'_, 'tcx>, load: bool, scope: AtomicScope, order: AtomicOrdering, elem: Ty<'tcx>) {
    let layout = bx.cx.layout_of(elem);
    let ty = bx.cx.immediate_backend_type(layout);
    let ptr = bx.get_param(0);
    let val = if load { None } else { Some(bx.get_param(1)) };
    match emit_load_store(bx, scope, order, ty, layout.size.bytes(), ptr, val) {
        Some(v) => bx.ret(v),
        None if load => rustc_middle::bug!("cuda-oxide: atomic load of a {}-byte `{elem}`", layout.size.bytes()),
        None => bx.ret_void(),
    }
}

/// An atomic load (`val` is `None`; returns the value) or store of a `size`-byte value of type
/// `ty` as inline PTX `ld/st.<sem>.<scope>.b<bits>` (SeqCst: `fence.sc` first, then an acquire
/// load or release store, as CUDA's libcu++ does); `None` for a store, or when `size` is not 2, 4
/// or 8 (the caller then uses `load atomic`). Not `load atomic` always: through a pointer LLVM
/// believes read-only (a `&[T]` kernel parameter written through a cast, as NVIDIA's examples
/// do) llc 22 crashes selecting it as `ld.global.nc`.
pub fn emit_load_store(
    bx: &mut Builder<'_, '_>,
    scope: AtomicScope,
    order: AtomicOrdering,
    ty: ir::Type,
    size: u64,
    ptr: ir::Value,
    val: Option<ir::Value>,
) -> Option<ir::Value> {
    let ptx_scope = match scope {
        AtomicScope::Block => "cta",
        AtomicScope::Cluster => "cluster",
        AtomicScope::Device => "gpu",
        AtomicScope::System => "sys",
    };
    let load = val.is_none();
    let (fence, sem) = match (order, load) {
        (AtomicOrdering::Relaxed, _) => ("", "relaxed"),
        (AtomicOrdering::SeqCst, true) => ("fence.sc.", "acquire"),
        (AtomicOrdering::SeqCst, false) => ("fence.sc.", "release"),
        (_, true) => ("", "acquire"),
        (_, false) => ("", "release"),
    };
    let fence = if fence.is_empty() { String::new() } else { format!("{fence}{ptx_scope}; ") };
    let (bits, reg) = match size {
        2 => (16, "h"),
        4 => (32, "r"),
        8 => (64, "l"),
        _ => return None,
    };
    let int = bx.cx.type_ix(bits);
    let is_ptr = matches!(bx.cx.type_data(ty), TypeData::Ptr(_));
    match val {
        None => {
            let text = format!(
                "call i{bits} asm sideeffect \"{fence}ld.{sem}.{ptx_scope}.b{bits} $0, [$1];\", \"={reg},l,~{{memory}}\"({})",
                bx.cx.operand(ptr)
            );
            let raw = bx.emit_value(int, text);
            Some(if ty == int {
                raw
            } else if is_ptr {
                bx.inttoptr(raw, ty)
            } else {
                bx.bitcast(raw, ty)
            })
        }
        Some(mut val) => {
            if ty != int {
                val = if is_ptr { bx.ptrtoint(val, int) } else { bx.bitcast(val, int) };
            }
            bx.emit(format!(
                "call void asm sideeffect \"{fence}st.{sem}.{ptx_scope}.b{bits} [$0], $1;\", \"l,{reg},~{{memory}}\"({}, {})",
                bx.cx.operand(ptr),
                bx.cx.operand(val)
            ));
            None
        }
    }
}

/// `core::sync::atomic`'s atomic load (`val` is `None`) or store, with system scope: through
/// [`emit_load_store`] when the size allows, else `load atomic` / `store atomic`.
pub fn core_load_store(
    bx: &mut Builder<'_, '_>,
    ty: ir::Type,
    ptr: ir::Value,
    val: Option<ir::Value>,
    order: rustc_middle::ty::AtomicOrdering,
    size: u64,
) -> Option<ir::Value> {
    let ours = ordering_of(order);
    if matches!(size, 2 | 4 | 8) {
        return emit_load_store(bx, AtomicScope::System, ours, ty, size, ptr, val);
    }
    let order = llvm_ordering(ours);
    match val {
        None => {
            let t = bx.cx.type_str(ty);
            let text = format!("load atomic {t}, {} {order}, align {size}", bx.cx.operand(ptr));
            Some(bx.emit_value(ty, text))
        }
        Some(val) => {
            bx.emit(format!("store atomic {}, {} {order}, align {size}", bx.cx.operand(val), bx.cx.operand(ptr)));
            None
        }
    }
}

/// Our ordering for rustc's.
fn ordering_of(order: rustc_middle::ty::AtomicOrdering) -> AtomicOrdering {
    use rustc_middle::ty::AtomicOrdering as Rust;
    match order {
        Rust::Relaxed => AtomicOrdering::Relaxed,
        Rust::Acquire => AtomicOrdering::Acquire,
        Rust::Release => AtomicOrdering::Release,
        Rust::AcqRel => AtomicOrdering::AcqRel,
        Rust::SeqCst => AtomicOrdering::SeqCst,
    }
}

/// `atomicrmw` (with the fences its ordering needs), or inline PTX for the system scope.
fn rmw<'tcx>(
    bx: &mut Builder<'_, 'tcx>,
    elem: Ty<'tcx>,
    op: AtomicOp,
    scope: AtomicScope,
    order: AtomicOrdering,
) -> ir::Value {
    let (float, signed) = match elem.kind() {
        ty::Float(_) => (true, false),
        ty::Int(_) => (false, true),
        _ => (false, false),
    };
    let ptr = bx.get_param(0);
    let val = bx.get_param(1);
    let ty = bx.cx.val_ty(val);
    let half = matches!(bx.cx.type_data(ty), TypeData::Half);
    if scope == AtomicScope::System && !half {
        return system_rmw(bx, ty, op, float, signed, order, ptr, val);
    }
    if scope == AtomicScope::System && op == AtomicOp::Add {
        return system_half_add(bx, order, ptr, val);
    }
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
    fenced_rmw(bx, op, scope, order, ptr, val)
}

/// `atomicrmw <op> ptr, val <scope> monotonic` between the fences `order` asks for.
fn fenced_rmw(
    bx: &mut Builder<'_, '_>,
    op: &str,
    scope: AtomicScope,
    order: AtomicOrdering,
    ptr: ir::Value,
    val: ir::Value,
) -> ir::Value {
    let ty = bx.cx.val_ty(val);
    let (before, after) = match order {
        AtomicOrdering::Relaxed => (None, None),
        AtomicOrdering::Acquire => (None, Some("acquire")),
        AtomicOrdering::Release => (Some("release"), None),
        AtomicOrdering::AcqRel => (Some("release"), Some("acquire")),
        AtomicOrdering::SeqCst => (Some("seq_cst"), Some("seq_cst")),
    };
    let scope_text = syncscope(scope);
    if let Some(fence) = before {
        bx.emit(format!("fence {scope_text}{fence}"));
    }
    let text = format!("atomicrmw {op} {}, {} {scope_text}monotonic", bx.cx.operand(ptr), bx.cx.operand(val));
    let old = bx.emit_value(ty, text);
    if let Some(fence) = after {
        bx.emit(format!("fence {scope_text}{fence}"));
    }
    old
}

/// `core::sync::atomic`'s read-modify-write (`atomic_xadd` & co., through the builder's
/// `atomic_rmw`): system scope, as inline PTX for the 32/64-bit integer operations `atom` has,
/// else `atomicrmw` between fences (8/16-bit values and `nand`, which LLVM turns into a
/// compare-and-swap loop).
pub fn core_rmw(
    bx: &mut Builder<'_, '_>,
    op: AtomicRmwBinOp,
    ptr: ir::Value,
    val: ir::Value,
    order: rustc_middle::ty::AtomicOrdering,
) -> ir::Value {
    let order = ordering_of(order);
    let ty = bx.cx.val_ty(val);
    let data = bx.cx.type_data(ty);
    let float = matches!(data, TypeData::Float | TypeData::Double | TypeData::Half);
    let word = matches!(data, TypeData::Int(32) | TypeData::Int(64));
    let ours = match op {
        AtomicRmwBinOp::AtomicXchg => Some((AtomicOp::Exch, false)),
        AtomicRmwBinOp::AtomicAdd => Some((AtomicOp::Add, false)),
        AtomicRmwBinOp::AtomicSub => Some((AtomicOp::Sub, false)),
        AtomicRmwBinOp::AtomicAnd => Some((AtomicOp::And, false)),
        AtomicRmwBinOp::AtomicOr => Some((AtomicOp::Or, false)),
        AtomicRmwBinOp::AtomicXor => Some((AtomicOp::Xor, false)),
        AtomicRmwBinOp::AtomicMax => Some((AtomicOp::Max, true)),
        AtomicRmwBinOp::AtomicMin => Some((AtomicOp::Min, true)),
        AtomicRmwBinOp::AtomicUMax => Some((AtomicOp::Max, false)),
        AtomicRmwBinOp::AtomicUMin => Some((AtomicOp::Min, false)),
        AtomicRmwBinOp::AtomicNand => None,
    };
    if let (Some((op, signed)), true, false) = (ours, word, float) {
        return system_rmw(bx, ty, op, false, signed, order, ptr, val);
    }
    let name = match op {
        AtomicRmwBinOp::AtomicXchg => "xchg",
        AtomicRmwBinOp::AtomicAdd if float => "fadd",
        AtomicRmwBinOp::AtomicAdd => "add",
        AtomicRmwBinOp::AtomicSub if float => "fsub",
        AtomicRmwBinOp::AtomicSub => "sub",
        AtomicRmwBinOp::AtomicAnd => "and",
        AtomicRmwBinOp::AtomicNand => "nand",
        AtomicRmwBinOp::AtomicOr => "or",
        AtomicRmwBinOp::AtomicXor => "xor",
        AtomicRmwBinOp::AtomicMax => "max",
        AtomicRmwBinOp::AtomicMin => "min",
        AtomicRmwBinOp::AtomicUMax => "umax",
        AtomicRmwBinOp::AtomicUMin => "umin",
    };
    fenced_rmw(bx, name, AtomicScope::System, order, ptr, val)
}

/// `atom.<sem>.sys.<op>.<type>` as inline PTX: a system-scope read-modify-write that LLVM would
/// emit with `.gpu` scope. A sequentially consistent one is `fence.sc.sys` + `atom.acq_rel.sys`.
#[allow(clippy::too_many_arguments)]
fn system_rmw(
    bx: &mut Builder<'_, '_>,
    ty: ir::Type,
    op: AtomicOp,
    float: bool,
    signed: bool,
    order: AtomicOrdering,
    ptr: ir::Value,
    val: ir::Value,
) -> ir::Value {
    let wide = matches!(bx.cx.type_data(ty), TypeData::Int(64) | TypeData::Double);
    // PTX has no `atom.sub`: add the negated value.
    let (op, val) = match op {
        AtomicOp::Sub if float => (AtomicOp::Add, bx.fneg(val)),
        AtomicOp::Sub => (AtomicOp::Add, bx.neg(val)),
        _ => (op, val),
    };
    let (bits, reg) = if wide { ("64", "l") } else { ("32", "r") };
    let (suffix, reg) = match (op, float) {
        (AtomicOp::Add, true) => (format!("f{bits}"), if wide { "d" } else { "f" }),
        (AtomicOp::Exch, true) => (format!("b{bits}"), if wide { "d" } else { "f" }),
        (AtomicOp::Add | AtomicOp::Inc | AtomicOp::Dec, false) => (format!("u{bits}"), reg),
        (AtomicOp::Min | AtomicOp::Max, false) => (format!("{}{bits}", if signed { 's' } else { 'u' }), reg),
        (AtomicOp::And | AtomicOp::Or | AtomicOp::Xor | AtomicOp::Exch, false) => (format!("b{bits}"), reg),
        _ => rustc_middle::bug!("cuda-oxide: system-scope atomic {op:?} on a float"),
    };
    let op_name = match op {
        AtomicOp::Add => "add",
        AtomicOp::Sub => "sub",
        AtomicOp::And => "and",
        AtomicOp::Or => "or",
        AtomicOp::Xor => "xor",
        AtomicOp::Min => "min",
        AtomicOp::Max => "max",
        AtomicOp::Exch => "exch",
        AtomicOp::Inc => "inc",
        AtomicOp::Dec => "dec",
    };
    let (fence, sem) = match order {
        AtomicOrdering::Relaxed => ("", "relaxed"),
        AtomicOrdering::Acquire => ("", "acquire"),
        AtomicOrdering::Release => ("", "release"),
        AtomicOrdering::AcqRel => ("", "acq_rel"),
        AtomicOrdering::SeqCst => ("fence.sc.sys; ", "acq_rel"),
    };
    let t = bx.cx.type_str(ty);
    let text = format!(
        "call {t} asm sideeffect \"{fence}atom.{sem}.sys.{op_name}.{suffix} $0, [$1], $2;\", \"={reg},l,{reg},~{{memory}}\"({}, {})",
        bx.cx.operand(ptr),
        bx.cx.operand(val)
    );
    bx.emit_value(ty, text)
}

/// `atom.<sem>.sys.add.noftz.f16` as inline PTX (an `f16` add with system scope, which LLVM would
/// emit with `.gpu` scope), through 16-bit integer registers.
fn system_half_add(bx: &mut Builder<'_, '_>, order: AtomicOrdering, ptr: ir::Value, val: ir::Value) -> ir::Value {
    let (fence, sem) = match order {
        AtomicOrdering::Relaxed => ("", "relaxed"),
        AtomicOrdering::Acquire => ("", "acquire"),
        AtomicOrdering::Release => ("", "release"),
        AtomicOrdering::AcqRel => ("", "acq_rel"),
        AtomicOrdering::SeqCst => ("fence.sc.sys; ", "acq_rel"),
    };
    let half = bx.cx.val_ty(val);
    let i16t = bx.cx.type_i16();
    let bits = bx.bitcast(val, i16t);
    let text = format!(
        "call i16 asm sideeffect \"{fence}atom.{sem}.sys.add.noftz.f16 $0, [$1], $2;\", \"=h,l,h,~{{memory}}\"({}, {})",
        bx.cx.operand(ptr),
        bx.cx.operand(bits)
    );
    let old = bx.emit_value(i16t, text);
    bx.bitcast(old, half)
}

/// `cmpxchg` with both orderings (floats compared by their bits); returns the old value.
fn cas(bx: &mut Builder<'_, '_>, scope: AtomicScope, success: AtomicOrdering, failure: AtomicOrdering) -> ir::Value {
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
        "cmpxchg {}, {}, {} {}{} {}",
        bx.cx.operand(ptr),
        bx.cx.operand(cmp),
        bx.cx.operand(new),
        syncscope(scope),
        llvm_ordering(success),
        llvm_ordering(failure)
    );
    let res = bx.emit_value(pair, text);
    let mut old = bx.extract_value(res, 0);
    if int_ty.is_some() {
        old = bx.bitcast(old, ty);
    }
    old
}
