//! After `opt`: the counter of a loop with a constant trip range becomes 32-bit.
//!
//! `for j in 0..128` counts in `usize`, so after unrolling the loop runs on an `i64` counter:
//! `phi i64 [0, …], [%next, …]`, `%next = add nuw i64 %j, 8`, `icmp eq i64 %next, 128`. ptxas
//! keeps that a 64-bit pair (`IADD3` + `IADD3.X`, `ISETP` + `ISETP.EX`) and schedules the loop
//! body around it worse than around nvcc's 32-bit `int` counter: n-body's inner loop, identical
//! otherwise, was 351 static stall cycles against nvcc's 274, and 288 with only the counter made
//! 32-bit (bench/notes.md "perf3"). When the start, step and end are constants with
//! `end <= i32::MAX` and the loop leaves exactly when the counter reaches the end, every value
//! the counter takes lies in `start..=end`, so the same loop on an `i32` counter, with its
//! values zero-extended where `i64` is used, computes the same values.

use std::collections::HashMap;

use super::ir::types::is_numbered;
use super::ir::{BinOp, CastOp, Edits, Flags, Function, I32, I64, Inst, Module, Namer, Op, Pred, Type, Value};
use super::passes::State;

/// The pass (`passes.rs`): each such counter narrowed (see the module docs).
pub fn run(module: &mut Module, _: &mut State) -> bool {
    let mut changed = false;
    for f in module.functions_mut() {
        changed |= narrow_function(f);
    }
    changed
}

/// Where each value is defined.
type Defs<'f> = HashMap<&'f str, (usize, usize)>;

/// A counter found in a function: where its phi, step and exit compare are, and their operands.
struct Counter<'f> {
    /// The header block and the phi's position in it.
    phi: (usize, usize),
    next_at: (usize, usize),
    cmp_at: (usize, usize),
    iv: &'f str,
    next: &'f str,
    step: u64,
    end: u64,
    /// `[ S, %pre ], [ %next, %latch ]`, in the phi's order.
    arms: &'f [(Value, String)],
    cmp: &'f str,
    pred: Pred,
}

fn narrow_function(f: &mut Function) -> bool {
    let defs = f.defs();
    let mut counters = Vec::new();
    for (b, block) in f.blocks.iter().enumerate() {
        for at in 0..block.insts.len() {
            counters.extend(counter_at(f, &defs, b, at));
        }
    }
    let mut namer = Namer::new(f, "");
    let mut edits = Edits::new();
    for c in &counters {
        let iv32 = namer.named(&format!("{}.n32", c.iv));
        let next32 = namer.named(&format!("{}.n32", c.next));
        let arms = c
            .arms
            .iter()
            .map(|(v, block)| {
                let v = if v.as_local() == Some(c.next) { Value::local(&next32) } else { v.clone() };
                (v, block.clone())
            })
            .collect();
        edits.replace(c.phi.0, c.phi.1, vec![Inst::assign(&iv32, Op::Phi { ty: I32, arms })]);
        // The zero-extended counter goes after the header's phis.
        edits.insert_before(c.phi.0, f.blocks[c.phi.0].after_phis(), [Inst::assign(c.iv, widen(&iv32))]);
        let step = Op::Bin {
            op: BinOp::Add,
            flags: Flags::NUW_NSW,
            ty: I32,
            a: Value::local(&iv32),
            b: Value::int(c.step, &I32),
        };
        edits.replace(
            c.next_at.0,
            c.next_at.1,
            vec![Inst::assign(&next32, step), Inst::assign(c.next, widen(&next32))],
        );
        let cmp =
            Op::Icmp { pred: c.pred, samesign: false, ty: I32, a: Value::local(&next32), b: Value::int(c.end, &I32) };
        edits.replace(c.cmp_at.0, c.cmp_at.1, vec![Inst::assign(c.cmp, cmp)]);
    }
    edits.apply(f)
}

/// `zext nneg i32 %v to i64`.
fn widen(v: &str) -> Op {
    Op::Cast { op: CastOp::ZExt, flags: Flags::NNEG, from: I32, a: Value::local(v), to: I64 }
}

/// A name the counter's values may have: a suffix makes a new name of it (not of a numbered or
/// quoted one).
fn suffixable(name: &str) -> bool {
    !is_numbered(name) && !name.starts_with('"')
}

/// The counter whose phi is instruction `at` of block `header`, if it is one (module docs).
fn counter_at<'f>(f: &'f Function, defs: &Defs<'f>, header: usize, at: usize) -> Option<Counter<'f>> {
    let inst = &f.blocks[header].insts[at];
    let iv = inst.result().filter(|n| suffixable(n))?;
    let Op::Phi { ty: Type::Int(64), arms } = inst.op() else { return None };
    let [(a, a_block), (b, b_block)] = &arms[..] else { return None };
    let (start, next, latch) = match (a.as_non_negative(&I64), b.as_non_negative(&I64)) {
        (Some(s), None) => (s, b, b_block),
        (None, Some(s)) => (s, a, a_block),
        _ => return None,
    };
    let next = next.as_local().filter(|n| suffixable(n))?;
    let &next_at = defs.get(next)?;
    let Op::Bin { op: BinOp::Add, flags, ty: Type::Int(64), a: Value::Local(counted), b: step } =
        f.blocks[next_at.0].insts[next_at.1].op()
    else {
        return None;
    };
    let step = step.as_non_negative(&I64).filter(|&s| s > 0 && flags.nuw && counted == iv)?;
    // The latch: holds the step and ends in `br i1 %c, label %x, label %y`, one of which is the
    // header.
    if f.block_index(latch) != Some(next_at.0) {
        return None;
    }
    let header_label = f.blocks[header].label.as_deref()?;
    let Op::CondBr { cond, then, els } = f.blocks[next_at.0].terminator()?.op() else { return None };
    let cmp = cond.as_local().filter(|n| !n.starts_with('"'))?;
    let &cmp_at = defs.get(cmp)?;
    let Op::Icmp { pred, samesign: false, ty: Type::Int(64), a: Value::Local(compared), b: end } =
        f.blocks[cmp_at.0].insts[cmp_at.1].op()
    else {
        return None;
    };
    let end = end.as_non_negative(&I64).filter(|_| compared == next)?;
    // Leaves exactly when `next == end`: `eq` exits on true, `ne` stays on true.
    let stays = match pred {
        Pred::Eq => els == header_label && then != header_label,
        Pred::Ne => then == header_label && els != header_label,
        _ => false,
    };
    if !stays || end > i32::MAX as u64 || start >= end || !(end - start).is_multiple_of(step) {
        return None;
    }
    // Other uses of `iv` and `next` keep their `i64` names (zero-extensions of the new counter).
    Some(Counter { phi: (header, at), next_at, cmp_at, iv, next, step, end, arms, cmp, pred: *pred })
}
