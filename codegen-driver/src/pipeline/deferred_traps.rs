//! After `opt`: turns the failure markers of deferred bounds checks (`lower/bounds.rs`) into a
//! per-thread flag and a trap where the optimised code leaves the region it was scheduled in.
//!
//! In each function that has markers, `call @__oxide_bounds_fail_if(i1 %c)` becomes
//! `flag |= %c` on a stack slot (one `i32` per block with markers), and `@(any flag) trap` (a predicated
//! PTX `trap`, no IR branch) goes before every `ret`, every loop back-edge and every call of a
//! function (a call through a pointer included). Doing this after
//! `opt` is the point: by then loops are unrolled and callees inlined, so the checks of an
//! unrolled body share one trap at its end instead of one branch per element. A second, short
//! `opt` run (`sroa`, `instcombine`) promotes the flag to registers.
//!
//! Two refinements keep traps out of ptxas's way: a loop without markers is checked before it
//! is entered instead of at its back-edge (`loop_checks`), and a marker whose own access
//! faults anyway gets no flag (`covered_markers`). After that `opt` run, `drop_dead_traps`
//! removes the traps whose flag folded to `false`.

use std::collections::{HashMap, HashSet};

use super::ir::{
    BinOp, Call, Callee, CastOp, Cfg, Flags, Function, I1, I32, Inst, Module, Namer, Op, Pred, Type, Value,
};
use super::passes::State;
/// The marker `lower/bounds.rs` emits.
use crate::markers::BOUNDS_FAIL_IF as MARKER;
use crate::markers::TRAP_IF_ASM;

/// Prefix of the names this pass makes: the flag slots `%oxide.oob.<block>`, the checks'
/// `%oxide.fail<n>`, …
const PREFIX: &str = "oxide.";

/// The pass (`passes.rs`): places the traps of a module with markers.
pub fn run(module: &mut Module, _: &mut State) -> bool {
    if !needed(module) {
        return false;
    }
    // Numbers the names of the whole module, in the order the checks are made.
    let mut counter = 0usize;
    let mut changed = false;
    for f in module.functions_mut() {
        if f.blocks.iter().flat_map(|b| &b.insts).any(is_marker) {
            place(f, &mut counter);
            changed = true;
        }
    }
    changed
}

/// After the second `opt`: drops the traps whose flag folded to `false` (every check before them
/// was proven to pass); LLVM keeps them because inline asm has side effects.
pub fn drop_dead_traps(module: &mut Module, _: &mut State) -> bool {
    let mut changed = false;
    for block in module.functions_mut().flat_map(|f| &mut f.blocks) {
        let before = block.insts.len();
        block.insts.retain(|i| !is_trap_if(i, &Value::bool(false)));
        changed |= block.insts.len() != before;
    }
    changed
}

/// Whether `module` has markers to place traps for.
pub fn needed(module: &Module) -> bool {
    module.has_function(MARKER)
}

fn is_marker(inst: &Inst) -> bool {
    inst.callee() == Some(MARKER)
}

/// The condition a marker records (`true` for a marker without one).
fn marker_condition(inst: &Inst) -> Value {
    let arg = match inst.op() {
        Op::Call(c) => c.args.first().map(|(_, v)| v.clone()),
        _ => None,
    };
    arg.unwrap_or_else(|| Value::bool(true))
}

/// `call void asm sideeffect "@$0 trap;", "b"(i1 <cond>)`: traps where `cond` holds.
fn trap_if(cond: Value) -> Inst {
    let call = Call { callee: Callee::Asm(TRAP_IF_ASM.to_string()), ..Call::new("", Type::Void, vec![(I1, cond)]) };
    Inst::effect(Op::Call(call))
}

/// Whether `inst` is a predicated trap on `cond` (`tail` or attributes aside).
fn is_trap_if(inst: &Inst, cond: &Value) -> bool {
    let Op::Call(c) = inst.op() else { return false };
    matches!(&c.callee, Callee::Asm(asm) if asm == TRAP_IF_ASM)
        && matches!(&c.args[..], [(ty, v)] if *ty == I1 && v == cond)
}

/// A call of a function that is not an LLVM intrinsic, the marker or inline asm: the callee may
/// not return, so a pending failure must trap before it.
fn is_real_call(inst: &Inst) -> bool {
    let Op::Call(c) = inst.op() else { return false };
    match &c.callee {
        Callee::Global(name) => !name.starts_with("llvm.") && name != MARKER,
        Callee::Local(_) => true,
        Callee::Asm(_) => false,
    }
}

/// A block barrier (`llvm.nvvm.barrier*`).
fn is_barrier(inst: &Inst) -> bool {
    inst.callee().is_some_and(|n| n.starts_with("llvm.nvvm.barrier"))
}

/// Which blocks keep the check at their back-edge, and which check before their terminator
/// because they enter a loop whose check moved in front of it.
///
/// A back-edge's check can move in front of the loop when the loop has no block that updates a
/// flag (`marked`) and is entered only through its header. Inside such a loop the flags keep the
/// value they had on entry, so a check before entering traps exactly when the one at the
/// back-edge would have, only earlier. A predicated trap inside the loop body is a scheduling
/// barrier to ptxas (the n-body inner loop: 356 stall cycles per iteration against 268 without
/// it). The loops are the natural loops of the back-edges (whose target dominates their source:
/// `opt`'s output is reducible).
fn loop_checks(cfg: &Cfg, marked: &[usize]) -> (Vec<bool>, Vec<bool>) {
    let n = cfg.len();
    let mut headers: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (latch, header) in cfg.back_edges() {
        headers[latch].push(header);
    }
    let mut back = vec![false; n];
    let mut entries = vec![false; n];
    for (latch, headers) in headers.iter().enumerate() {
        if headers.is_empty() {
            continue;
        }
        let mut to_check = Vec::new();
        let all_quiet = headers.iter().all(|&header| {
            let body = cfg.natural_loop(latch, header);
            let single_entry =
                (0..n).filter(|&b| body[b] && b != header).all(|b| cfg.preds[b].iter().all(|&p| body[p]));
            let quiet = !marked.iter().any(|&b| body[b]);
            if !(single_entry && quiet && header != 0) {
                return false;
            }
            to_check.extend(cfg.preds[header].iter().copied().filter(|&p| !body[p]));
            true
        });
        if all_quiet {
            for p in to_check {
                entries[p] = true;
            }
        } else {
            back[latch] = true;
        }
    }
    (back, entries)
}

/// Markers whose failure is certain to stop the thread anyway: an access in the marker's own
/// block goes through an address that a `select` on the marker's flag poisoned (not a stack
/// address), so if the check failed that access faults. Keeping their flags would tie each
/// guarded access to a flag update that ptxas then orders before the next load.
/// Returns them as (block, instruction).
fn covered_markers(f: &Function) -> HashSet<(usize, usize)> {
    // The selects on each condition, and what each address is computed from (for a select, its
    // values: only its condition poisons).
    let mut selects_on: HashMap<&str, Vec<&str>> = HashMap::new();
    let mut derived: HashMap<&str, Vec<&str>> = HashMap::new();
    // Stack slots: a poisoned address in local memory is not certain to fault.
    let mut allocas: HashSet<&str> = HashSet::new();
    for inst in f.blocks.iter().flat_map(|b| &b.insts) {
        let Some(result) = inst.result() else { continue };
        match inst.op() {
            Op::Alloca { .. } => {
                allocas.insert(result);
            }
            Op::Select { cond, a, b, .. } => {
                if let Some(cond) = cond.as_local() {
                    selects_on.entry(cond).or_default().push(result);
                }
                derived.entry(result).or_default().extend([a, b].into_iter().filter_map(Value::as_local));
            }
            Op::Gep { .. } | Op::Cast { op: CastOp::AddrSpaceCast | CastOp::BitCast, .. } => {
                derived.entry(result).or_default().extend(inst.uses());
            }
            _ => {}
        }
    }
    let mut covered = HashSet::new();
    for (bi, block) in f.blocks.iter().enumerate() {
        for (li, inst) in block.insts.iter().enumerate() {
            if !is_marker(inst) {
                continue;
            }
            let condition = marker_condition(inst);
            let Some(poisoned) = condition.as_local().and_then(|c| selects_on.get(c)) else { continue };
            // Is an address in this block computed from one of the poisoned values, and not from
            // a stack slot?
            let from_poison = |address: &str| {
                let mut work = vec![address];
                let mut seen = HashSet::new();
                let mut poisoned_here = false;
                while let Some(v) = work.pop() {
                    if allocas.contains(v) {
                        return false;
                    }
                    poisoned_here |= poisoned.contains(&v);
                    if seen.insert(v) {
                        work.extend(derived.get(v).into_iter().flatten().copied());
                    }
                }
                poisoned_here
            };
            if block.insts.iter().filter_map(|i| i.op().plain_access_address()?.as_local()).any(from_poison) {
                covered.insert((bi, li));
            }
        }
    }
    covered
}

/// Replaces the markers of `f` (module docs); `counter` numbers the names module-wide.
fn place(f: &mut Function, counter: &mut usize) {
    let cfg = Cfg::new(f);
    let covered = covered_markers(f);
    // One flag per block with markers, not one for the function: a single flag would be a chain
    // through every guarded block (`if c { flag |= oob }` becomes a predicated update of the
    // same register), which keeps ptxas from moving the guarded loads of an unrolled loop
    // ahead of the stores before them. Separate flags are independent; the trap ORs them. They
    // are `i32`, not `i1`: as predicates they would crowd the seven predicate registers that the
    // guards of those loads need.
    // A marker that `opt` proved to pass (`i1 false`) updates nothing.
    let flagged = |b: usize, i: usize| {
        let inst = &f.blocks[b].insts[i];
        is_marker(inst) && !covered.contains(&(b, i)) && marker_condition(inst) != Value::bool(false)
    };
    let marked: Vec<usize> =
        (0..f.blocks.len()).filter(|&b| (0..f.blocks[b].insts.len()).any(|i| flagged(b, i))).collect();
    let (back, enters_quiet_loop) = loop_checks(&cfg, &marked);
    let mut names = Names { namer: Namer::new(f, PREFIX), counter };
    let slots: Vec<(usize, String)> = marked.iter().map(|&b| (b, names.named(&format!("oob.{b}")))).collect();
    let slot_of = |b: usize| slots.iter().find(|(m, _)| *m == b).map(|(_, s)| s.as_str()).expect("a marked block");
    let mut bodies: Vec<Vec<Inst>> = Vec::with_capacity(f.blocks.len());
    for (bi, block) in f.blocks.iter().enumerate() {
        let mut out = Vec::with_capacity(block.insts.len() + 16);
        if bi == 0 {
            for (_, slot) in &slots {
                out.push(Inst::assign(slot, Op::Alloca { ty: I32, align: Some(4) }));
                out.push(Inst::effect(store_i32(Value::int(0, &I32), slot)));
            }
        }
        let term = block.terminator_index();
        // The block's failures as one `i1` (`or` of its markers' conditions, which instcombine
        // can fold: the checks of an unrolled body often reduce to one compare), merged into the
        // block's slot before the terminator (and before a call, which is checked).
        let mut acc: Option<Value> = None;
        // A block that enters a loop without markers checks before its last barrier when that
        // comes after its markers: ptxas schedules the loop worse when a predicated trap sits
        // between the barrier and the loop (n-body: 338 stall cycles per iteration against 254).
        let last_marker = block.insts.iter().rposition(is_marker);
        let early_check = enters_quiet_loop[bi]
            .then(|| block.insts.iter().rposition(is_barrier))
            .flatten()
            .filter(|&b| last_marker.is_none_or(|m| m < b));
        for (li, inst) in block.insts.iter().enumerate() {
            if is_marker(inst) {
                // A covered marker's access faults if the check failed (see `covered_markers`).
                if flagged(bi, li) {
                    let condition = marker_condition(inst);
                    acc = Some(match acc.take() {
                        None => condition,
                        Some(prev) => names.or_i1(&mut out, prev, condition),
                    });
                }
                continue;
            }
            let at_term = Some(li) == term;
            let early = Some(li) == early_check;
            let call = is_real_call(inst);
            if (at_term || early || call)
                && let Some(bits) = acc.take()
            {
                names.record(&mut out, slot_of(bi), bits);
            }
            let returns = at_term && matches!(inst.op(), Op::Ret { .. });
            let enters = if early_check.is_some() { early } else { at_term && enters_quiet_loop[bi] };
            if (at_term && back[bi]) || enters || returns || call {
                names.check(&mut out, &slots);
            }
            out.push(inst.clone());
        }
        bodies.push(out);
    }
    for (block, insts) in f.blocks.iter_mut().zip(bodies) {
        block.insts = insts;
    }
}

/// `store i32 <value>, ptr <slot>, align 4`.
fn store_i32(value: Value, slot: &str) -> Op {
    let (ptr_ty, ptr) = (Type::Ptr(0), Value::local(slot));
    Op::Store { ty: I32, value, ptr_ty, ptr, align: Some(4), volatile: false, atomic: false }
}

/// `load i32, ptr <slot>, align 4`.
fn load_i32(slot: &str) -> Op {
    let (ptr_ty, ptr) = (Type::Ptr(0), Value::local(slot));
    Op::Load { ty: I32, ptr_ty, ptr, align: Some(4), volatile: false, atomic: false }
}

/// The names of one function's new values: `<PREFIX><what><n>`, `n` counted module-wide.
struct Names<'c> {
    namer: Namer,
    counter: &'c mut usize,
}

impl Names<'_> {
    fn next(&mut self) -> usize {
        *self.counter += 1;
        *self.counter
    }

    fn named(&mut self, base: &str) -> String {
        self.namer.named(base)
    }

    /// `%oxide.any<n> = or i1 <a>, <b>`.
    fn or_i1(&mut self, out: &mut Vec<Inst>, a: Value, b: Value) -> Value {
        let n = self.next();
        let any = self.named(&format!("any{n}"));
        out.push(Inst::assign(&any, Op::Bin { op: BinOp::Or, flags: Flags::NONE, ty: I1, a, b }));
        Value::local(&any)
    }

    /// `slot |= zext(bits)`.
    fn record(&mut self, out: &mut Vec<Inst>, slot: &str, bits: Value) {
        let n = self.next();
        let old = self.named(&format!("old{n}"));
        let bit = self.named(&format!("bit{n}"));
        let new = self.named(&format!("new{n}"));
        out.push(Inst::assign(&old, load_i32(slot)));
        out.push(Inst::assign(&bit, Op::Cast { op: CastOp::ZExt, flags: Flags::NONE, from: I1, a: bits, to: I32 }));
        let (a, b) = (Value::local(&old), Value::local(&bit));
        out.push(Inst::assign(&new, Op::Bin { op: BinOp::Or, flags: Flags::NONE, ty: I32, a, b }));
        out.push(Inst::effect(store_i32(Value::local(&new), slot)));
    }

    /// A trap if any of the `slots` is set.
    fn check(&mut self, out: &mut Vec<Inst>, slots: &[(usize, String)]) {
        let n = self.next();
        let mut acc = Value::int(0, &I32);
        for (k, (_, slot)) in slots.iter().enumerate() {
            let chk = self.named(&format!("chk{n}.{k}"));
            out.push(Inst::assign(&chk, load_i32(slot)));
            if k == 0 {
                acc = Value::local(&chk);
            } else {
                let any = self.named(&format!("any{n}.{k}"));
                let (a, b) = (acc, Value::local(&chk));
                out.push(Inst::assign(&any, Op::Bin { op: BinOp::Or, flags: Flags::NONE, ty: I32, a, b }));
                acc = Value::local(&any);
            }
        }
        let fail = self.named(&format!("fail{n}"));
        let ne = Op::Icmp { pred: Pred::Ne, samesign: false, ty: I32, a: acc, b: Value::int(0, &I32) };
        out.push(Inst::assign(&fail, ne));
        out.push(trap_if(Value::local(&fail)));
    }
}

#[cfg(test)]
mod tests {
    use oxide_contract::config::DeviceDebugInfo;

    use super::*;

    /// `case` of tests/passes/<pass>/ after `pass`.
    fn after(pass: fn(&mut Module, &mut State) -> bool, case: &str) -> Module {
        let mut m = Module::parse(case);
        pass(&mut m, &mut State::new(DeviceDebugInfo::Lines));
        m
    }

    /// Each block of `f` as (label, the calls it makes: `trap`, `record <bits>`, `@callee`).
    fn calls(m: &Module, f: &str) -> Vec<(String, Vec<String>)> {
        let f = m.function(f).expect("a function");
        let mut out = Vec::new();
        for b in &f.blocks {
            let mut seen = Vec::new();
            for inst in &b.insts {
                match inst.op() {
                    Op::Call(c) if c.callee == Callee::Asm(TRAP_IF_ASM.to_string()) => seen.push("trap".to_string()),
                    Op::Cast { op: CastOp::ZExt, from, a, .. } if *from == I1 => seen.push(format!("record {a}")),
                    Op::Call(c) => match &c.callee {
                        Callee::Global(g) => seen.push(format!("@{g}")),
                        Callee::Local(l) => seen.push(format!("call %{l}")),
                        Callee::Asm(_) => {}
                    },
                    _ => {}
                }
            }
            out.push((b.label.clone().unwrap_or_default(), seen));
        }
        out
    }

    fn block(label: &str, calls: &[&str]) -> (String, Vec<String>) {
        (label.to_string(), calls.iter().map(|c| c.to_string()).collect())
    }

    #[test]
    fn markers_become_a_flag_checked_at_back_edges_calls_and_returns() {
        let m = after(run, include_str!("../../tests/passes/deferred_traps/loop.ll"));
        assert_eq!(
            calls(&m, "k"),
            [
                block("entry", &[]),
                block("loop", &["record %oob", "trap"]),
                block("exit", &["trap", "@vprintf", "trap"])
            ]
        );
        // The back-edge's check is the last thing before the branch; the declaration stays.
        let latch = &m.function("k").expect("k").blocks[1].insts;
        assert!(is_trap_if(&latch[latch.len() - 2], &Value::local("oxide.fail2")));
        assert!(needed(&m));
    }

    #[test]
    fn a_loop_without_markers_is_checked_before_it_is_entered() {
        let m = after(run, include_str!("../../tests/passes/deferred_traps/quiet_loop.ll"));
        let entered = [block("entry", &["record %oob", "trap"]), block("inner", &[]), block("exit", &["trap"])];
        assert_eq!(calls(&m, "k"), entered);
        // After a barrier that follows the markers, the check goes before the barrier.
        let m = after(run, include_str!("../../tests/passes/deferred_traps/barrier.ll"));
        let barrier = "@llvm.nvvm.barrier.cta.sync.aligned.all";
        assert_eq!(calls(&m, "k")[0], block("entry", &["record %oob", "trap", barrier]));
        // A marker in the loop that `opt` proved to pass does not count.
        let m = after(run, include_str!("../../tests/passes/deferred_traps/proven_false.ll"));
        assert_eq!(calls(&m, "k"), entered);
        assert_eq!(calls(&m, "proven"), [block("start", &["trap"])]);
    }

    #[test]
    fn markers_of_poisoned_accesses_need_no_flag() {
        let m = after(run, include_str!("../../tests/passes/deferred_traps/covered.ll"));
        // The first marker's access faults on failure: no flag; the second has no access.
        assert_eq!(calls(&m, "k")[1], block("body", &["record %oob2", "trap"]));
        // Through a stack slot both keep their flag: local memory need not fault.
        let stack = &m.function("stack").expect("stack").blocks[1].insts;
        let or = Op::Bin { op: BinOp::Or, flags: Flags::NONE, ty: I1, a: Value::local("oob"), b: Value::local("oob2") };
        assert!(stack.iter().any(|i| *i.op() == or));
        let input = Module::parse(include_str!("../../tests/passes/deferred_traps/covered.ll"));
        assert_eq!(m.function("plain"), input.function("plain"));
    }

    #[test]
    fn flags_are_per_block_and_recorded_before_calls() {
        let m = after(run, include_str!("../../tests/passes/deferred_traps/blocks.ll"));
        let then = ["record %oxide.any2", "trap", "call %f", "@llvm.nvvm.read.ptx.sreg.tid.x"];
        assert_eq!(calls(&m, "k"), [block("entry", &["record %oob"]), block("then", &then), block("join", &["trap"])]);
        let slots = m.function("k").expect("k").blocks[0].insts.iter().filter(|i| matches!(i.op(), Op::Alloca { .. }));
        assert_eq!(slots.count(), 2);
        // A switch (with branch weights) is the terminator the flag is recorded before.
        let m = after(run, include_str!("../../tests/passes/deferred_traps/switch.ll"));
        let start = &m.function("k").expect("k").blocks[0];
        assert!(matches!(start.terminator().expect("a switch").op(), Op::Switch { .. }));
        assert_eq!(calls(&m, "k")[0], block("start", &["record %oob"]));
    }

    #[test]
    fn traps_on_a_false_flag_are_dropped() {
        let m = after(drop_dead_traps, include_str!("../../tests/passes/drop_dead_traps/false_flags.ll"));
        let k = &m.function("k").expect("k").blocks[0].insts;
        assert_eq!(k.len(), 2);
        assert!(is_trap_if(&k[0], &Value::local("f")));
    }

    #[test]
    fn modules_without_markers_are_unchanged() {
        let text = include_str!("../../tests/passes/deferred_traps/no_markers.ll");
        let mut m = Module::parse(text);
        assert!(!run(&mut m, &mut State::new(DeviceDebugInfo::Lines)));
        assert_eq!(m.to_string(), text);
    }
}
