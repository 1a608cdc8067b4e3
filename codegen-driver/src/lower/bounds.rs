//! Bounds checks that let loads issue together: a failed index check poisons the address of the
//! access and defers the trap, instead of branching to a trap before the access.
//!
//! A branch to `trap` between two loads ends ptxas's scheduling region: in an unrolled loop the
//! loads of `a[i]`, `a[i + k]`, … are issued one after another, each waiting for the store before
//! it (bench/notes.md, transpose). So for the checks of indexing (`slice[i]`, `array[i]`: MIR's
//! `BoundsCheck` asserts) and of the library's checked accesses (`intrinsics::bounds_checked`),
//! the compiled code is
//!
//! ```text
//! %oob = icmp uge %i, %len
//! call @__oxide_bounds_fail_if(i1 %oob)          ; remembers the failure, no branch
//! %p   = getelementptr T, ptr %base, %i
//! %q   = getelementptr i8, ptr %p, (%oob ? POISON_OFFSET : 0)
//! ```
//!
//! An out-of-bounds access therefore never touches memory: the poisoned address faults (the
//! kernel stops with `CUDA_ERROR_ILLEGAL_ADDRESS`). An out-of-bounds index that is never
//! dereferenced still stops the kernel: after `opt`, `pipeline/deferred_traps.rs` turns the
//! markers into a per-thread flag that traps at the function's next return, loop back-edge or
//! call. Both stop the whole kernel, and a stopped kernel's context is lost, so no effect of the
//! instructions between the failed check and the trap can be observed. Device debug builds
//! (`cargo oxide debug`) keep the precise branch to `trap` at the check.

use rustc_codegen_ssa::traits::*;
use rustc_hir::LangItem;
use rustc_middle::mir::BasicBlock;
use rustc_middle::ty::Instance;

use super::builder::Builder;
use super::context::CodegenCx;
use super::ir::{self, ValueKind};

use crate::markers::{BOUNDS_FAIL_IF as FAIL_IF, POISON_OFFSET};

/// A conditional branch to a `panic` block, remembered until the panic is known to be a bounds
/// check (its block calls `panic_bounds_check`).
pub struct PendingAssert {
    origin: ir::Block,
    cond: ir::Value,
    /// `true` when the branch goes to `ok` on `cond` (the assert expects `cond`).
    ok_on_true: bool,
    ok: ir::Block,
    panic: ir::Block,
}

/// A bounds check made deferred: accesses with its index in MIR blocks its origin dominates get
/// the poisoned address.
pub struct DeferredCheck {
    origin: BasicBlock,
    /// The checked index (type and spelling).
    index: (ir::Type, String),
    /// `true` when out of bounds; defined at the end of the origin block.
    oob: ir::Value,
}

/// Called by `cond_br`: remembers a branch to a fresh `panic` block (what codegen_ssa emits for
/// a MIR assert). Only asserts whose success block has no other predecessor qualify: then the
/// origin dominates every access the assert guards.
pub fn note_cond_br(bx: &Builder<'_, '_>, cond: ir::Value, then: ir::Block, els: ir::Block) {
    let cx = bx.cx;
    if !cx.deferred_bounds {
        return;
    }
    let is_fresh_panic = |b: ir::Block| {
        let m = cx.module.borrow();
        let data = &m.funcs[b.func as usize].blocks[b.idx as usize];
        data.instrs.is_empty() && data.label.starts_with("panic.")
    };
    let (ok, panic, ok_on_true) = if is_fresh_panic(els) {
        (then, els, true)
    } else if is_fresh_panic(then) {
        (els, then, false)
    } else {
        return;
    };
    if mir_block(cx, bx.block).is_none() || !single_mir_predecessor(cx, ok) {
        return;
    }
    cx.pending_asserts.borrow_mut().push(PendingAssert { origin: bx.block, cond, ok_on_true, ok, panic });
}

/// Called for every call: a call of `panic_bounds_check` in a remembered panic block makes that
/// assert deferred (its branch becomes the failure marker and a branch to the success block).
/// Every access with the checked index that the assert dominates is poisoned from here on
/// ([`checked_index_gep`]); those are all lowered later, as codegen_ssa goes in reverse
/// post-order.
pub fn note_call<'tcx>(bx: &Builder<'_, 'tcx>, callee: Option<Instance<'tcx>>, args: &[ir::Value]) {
    let cx = bx.cx;
    let Some(callee) = callee else { return };
    if !cx.deferred_bounds || cx.tcx.lang_items().get(LangItem::PanicBoundsCheck) != Some(callee.def_id()) {
        return;
    }
    let Some(&index) = args.first() else { return };
    let pos = cx.pending_asserts.borrow().iter().position(|a| a.panic == bx.block);
    let Some(pos) = pos else { return };
    let a = cx.pending_asserts.borrow_mut().swap_remove(pos);
    let Some(origin) = mir_block(cx, a.origin) else { return };
    let oob = defer_branch(cx, &a);
    let key = (cx.val_ty(index), cx.value_text(index));
    cx.deferred_checks.borrow_mut().push(DeferredCheck { origin, index: key, oob });
}

/// Called by `inbounds_nuw_gep` (codegen_ssa's `project_index`): the element address, poisoned
/// when a deferred check of this index that dominates the access failed; `None` for other GEPs.
pub fn checked_index_gep(
    bx: &mut Builder<'_, '_>,
    ty: ir::Type,
    base: ir::Value,
    index: ir::Value,
) -> Option<ir::Value> {
    let cx = bx.cx;
    if cx.deferred_checks.borrow().is_empty() {
        return None;
    }
    let here = mir_block(cx, bx.block)?;
    let key = (cx.val_ty(index), cx.value_text(index));
    let instance = cx.current.get()?;
    let oob = {
        let body = cx.tcx.instance_mir(instance.def);
        let dominators = body.basic_blocks.dominators();
        let checks = cx.deferred_checks.borrow();
        checks.iter().rev().find(|c| c.index == key && dominators.dominates(c.origin, here)).map(|c| c.oob)?
    };
    Some(poisoned_gep(bx, ty, base, index, oob))
}

/// `base + index` as an element address, poisoned when `oob` (see [`POISON_OFFSET`]). The GEPs
/// are not `inbounds`: for a failed check the address is out of bounds, and must stay a value.
///
/// For elements of a power-of-two size the index itself is replaced (`POISON_OFFSET / size`):
/// one select before the address arithmetic ptxas does anyway. That keeps a guarded access
/// small enough for ptxas to predicate it instead of branching around it (`if i < n { a[i] }`
/// in an unrolled loop: nvcc's pattern). Other sizes add the offset to the address.
pub fn poisoned_gep(
    bx: &mut Builder<'_, '_>,
    ty: ir::Type,
    base: ir::Value,
    index: ir::Value,
    oob: ir::Value,
) -> ir::Value {
    let size = store_size(&bx.cx.module.borrow(), ty);
    if let Some(size) = size.filter(|s| s.is_power_of_two() && *s <= 1 << 31) {
        let poison = bx.cx.const_u64(POISON_OFFSET / size);
        let index = bx.select(oob, poison, index);
        return bx.gep(ty, base, &[index]);
    }
    let elem = bx.gep(ty, base, &[index]);
    let poison = bx.cx.const_u64(POISON_OFFSET);
    let zero = bx.cx.const_u64(0);
    let offset = bx.select(oob, poison, zero);
    bx.gep(bx.cx.type_i8(), elem, &[offset])
}

/// Bytes between consecutive elements of `ty` in a GEP, for the types whose layout is plain
/// (scalars, arrays, vectors); `None` for structs.
fn store_size(m: &ir::Module, ty: ir::Type) -> Option<u64> {
    use ir::TypeData::*;
    Some(match m.type_data(ty) {
        Int(bits) => u64::from(bits.div_ceil(8)).next_power_of_two(),
        Half | BFloat => 2,
        Float => 4,
        Double => 8,
        Fp128 => 16,
        Ptr(_) => 8,
        Array(e, n) => store_size(m, *e)? * n,
        Vector(e, n) => (store_size(m, *e)? * n).next_power_of_two(),
        Void | Struct(..) => return None,
    })
}

/// Emits the failure marker for `oob` in the current block.
pub fn mark_failure(bx: &mut Builder<'_, '_>, oob: ir::Value) {
    let marker = declare_marker(bx.cx);
    bx.emit(format!("call void {}({})", bx.cx.value_text(marker), bx.cx.operand(oob)));
}

/// Replaces the assert's `br %cond, %ok, %panic` in its block with the failure marker and an
/// unconditional branch to `ok`; returns the failure flag (`true` when out of bounds).
fn defer_branch(cx: &CodegenCx<'_>, a: &PendingAssert) -> ir::Value {
    let marker = declare_marker(cx);
    let i1 = cx.type_i1();
    let mut m = cx.module.borrow_mut();
    let ok_label = m.funcs[a.ok.func as usize].blocks[a.ok.idx as usize].label.clone();
    let cond = m.operand(a.cond);
    let (oob, mut replacement) = if a.ok_on_true {
        let name = m.fresh_local();
        let v = m.value(i1, name.clone(), ValueKind::Local);
        (v, vec![format!("{name} = xor {cond}, true")])
    } else {
        (a.cond, vec![])
    };
    replacement.push(format!("call void {}({})", m.value_data(marker).text, m.operand(oob)));
    replacement.push(format!("br label %{ok_label}"));
    let instrs = &mut m.funcs[a.origin.func as usize].blocks[a.origin.idx as usize].instrs;
    let branch = instrs.pop();
    debug_assert!(branch.as_ref().is_some_and(|(b, _)| b.starts_with("br i1")), "the assert's branch ends its block");
    // The replacement keeps the source location of the branch it replaces.
    let loc = branch.and_then(|(_, loc)| loc);
    instrs.extend(replacement.into_iter().map(|inst| (inst, loc)));
    oob
}

/// `declare void @__oxide_bounds_fail_if(i1)`: it touches only memory no other code can see, so
/// `opt` keeps every call and their order, but moves loads and stores across them freely.
fn declare_marker(cx: &CodegenCx<'_>) -> ir::Value {
    let void = cx.type_void();
    let sig = cx.type_func(&[cx.type_i1()], void);
    let f = cx.declare_raw_fn(FAIL_IF, sig);
    let idx = cx.func_index(f) as usize;
    let mut m = cx.module.borrow_mut();
    if m.funcs[idx].fn_attrs.is_empty() {
        m.funcs[idx].fn_attrs =
            vec!["nounwind".into(), "willreturn".into(), "memory(inaccessiblemem: readwrite)".into()];
    }
    f
}

/// The MIR block behind `block`: codegen_ssa labels the block of MIR block `bbN` `bbN`
/// (`bbN.<k>` here), except `bb0`, which it lowers into the function's `start` block; `None`
/// for the blocks it adds (panics, landing pads). (Without `start`, a check in a kernel's first
/// MIR block, e.g. `let me = pos[idx]`, stayed a branch to a trap: a divergent region around the
/// rest of the kernel, for which ptxas kept a convergence barrier and 40 registers in n-body.)
fn mir_block(cx: &CodegenCx<'_>, block: ir::Block) -> Option<BasicBlock> {
    let instance = cx.current.get()?;
    let m = cx.module.borrow();
    let label = &m.funcs[block.func as usize].blocks[block.idx as usize].label;
    let name = label.split('.').next()?;
    let n = if name == "start" { 0 } else { name.strip_prefix("bb")?.parse::<usize>().ok()? };
    let bb = BasicBlock::from_usize(n);
    cx.tcx.instance_mir(instance.def).basic_blocks.get(bb).map(|_| bb)
}

/// Whether the MIR block behind `block` has one predecessor.
fn single_mir_predecessor(cx: &CodegenCx<'_>, block: ir::Block) -> bool {
    let (Some(bb), Some(instance)) = (mir_block(cx, block), cx.current.get()) else { return false };
    cx.tcx.instance_mir(instance.def).basic_blocks.predecessors()[bb].len() == 1
}
