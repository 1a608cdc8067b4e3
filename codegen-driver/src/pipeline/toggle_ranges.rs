//! After `opt`: loop-carried values that only ever hold 0 or 1 (double-buffer indices, flags)
//! get that fact as `llvm.assume(v < 2)`, so the bounds checks that depend on them fold.
//!
//! A double buffer `let mut buf = 0; loop { …tile[buf * N + i]…; buf ^= 1 }` becomes
//! `%buf = phi i64 [ 0, %pre ], [ %buf.next, %latch ]`, `%buf.next = xor i64 %buf, 1`. LLVM does
//! not derive ranges through such a recurrence (known bits of a phi look one step into its
//! incoming values), so a check `buf * N + i < 2 * N` stays in the loop; its deferred failure
//! flag is then updated every iteration and the loop keeps a predicated trap at its back-edge
//! (sgemm128's k loop, bench/notes.md "perf4").
//!
//! Which phis qualify: the greatest set of integer phis whose every incoming value is a *bit
//! value* given the set: a constant 0 or 1, a phi of the set, `xor` of two bit values or of one
//! and 1, `sub 1, b`, `or` (not `disjoint`) of two bit values, `and` of a bit value and a
//! constant, or a `zext`/`trunc` of a bit value. By induction over the execution, every value
//! such a phi takes is 0 or 1: an incoming value is computed from constants and from phis of the
//! set that already hold 0 or 1 (none of these operations can make poison from non-poison
//! operands, so the assume never sees poison). After the assumes are added, a short
//! `instcombine` run folds the checks (`passes.rs`), before the deferred traps are placed.

use std::collections::{HashMap, HashSet};

use super::ir::{BinOp, Call, CastOp, Function, I1, I64, Inst, Module, Namer, Op, Pred, Type, Value};
use super::passes::State;

/// The declaration the facts need.
const ASSUME: &str = "declare void @llvm.assume(i1 noundef)";

/// The pass (`passes.rs`): in a module with deferred bounds checks, an `llvm.assume(phi < 2)`
/// after the phis of each block that has a 0-or-1 phi (see the module docs), and the assume's
/// declaration if it was missing.
pub fn run(module: &mut Module, _: &mut State) -> bool {
    if !super::deferred_traps::needed(module) {
        return false;
    }
    // Numbers the facts of the whole module.
    let mut counter = 0usize;
    for f in module.functions_mut() {
        add_facts(f, &mut counter);
    }
    if counter == 0 {
        return false;
    }
    module.declare(ASSUME);
    true
}

/// One integer phi: its name, block, type and incoming values.
struct Phi<'f> {
    name: &'f str,
    block: usize,
    ty: &'f Type,
    incoming: Vec<&'f Value>,
}

fn add_facts(f: &mut Function, counter: &mut usize) {
    let defs = f.defs();
    let mut phis: Vec<Phi<'_>> = Vec::new();
    for (block, b) in f.blocks.iter().enumerate() {
        for inst in &b.insts {
            if let (Some(name), Op::Phi { ty: ty @ Type::Int(_), arms }) = (inst.result(), inst.op()) {
                phis.push(Phi { name, block, ty, incoming: arms.iter().map(|(v, _)| v).collect() });
            }
        }
    }
    // The greatest fixed point: drop phis with an incoming value that is not a bit value until
    // none is left to drop.
    let values = Values { f, defs: &defs };
    let mut set: HashSet<&str> = phis.iter().map(|p| p.name).collect();
    loop {
        let keep: HashSet<&str> = phis
            .iter()
            .filter(|p| set.contains(p.name) && p.incoming.iter().all(|v| values.is_bit(v, &set, 0)))
            .map(|p| p.name)
            .collect();
        let done = keep.len() == set.len();
        set = keep;
        if done {
            break;
        }
    }
    // Only the phis whose range LLVM does not already see (a phi of constants it does).
    let facts: Vec<(usize, String, Type)> = phis
        .iter()
        .filter(|p| set.contains(p.name) && *p.ty != I1 && p.incoming.iter().any(|v| v.as_local().is_some()))
        .map(|p| (p.block, p.name.to_string(), p.ty.clone()))
        .collect();
    if facts.is_empty() {
        return;
    }
    // Each fact goes after the phis (and debug records among them) of its phi's block.
    let mut namer = Namer::new(f, "oxide.");
    let mut after: HashMap<usize, Vec<Inst>> = HashMap::new();
    for (block, name, ty) in facts {
        *counter += 1;
        let bit = namer.named(&format!("bit{counter}"));
        let below_two =
            Op::Icmp { pred: Pred::Ult, samesign: false, a: Value::local(&name), b: Value::int(2, &ty), ty };
        let assume = Call::new("llvm.assume", Type::Void, vec![(I1, Value::local(&bit))]);
        let insts = after.entry(block).or_default();
        insts.push(Inst::assign(&bit, below_two));
        insts.push(Inst::effect(Op::Call(assume)));
    }
    for (block, insts) in after {
        let b = &mut f.blocks[block];
        let at = b.after_phis();
        b.insts.splice(at..at, insts);
    }
}

/// Deepest expression followed from one incoming value (the unrolled bodies stay shallow).
const MAX_DEPTH: usize = 8;

/// The values of one function, by definition.
struct Values<'a, 'f> {
    f: &'f Function,
    defs: &'a HashMap<&'f str, (usize, usize)>,
}

impl Values<'_, '_> {
    /// Whether `v` is 0 or 1 whenever the phis of `set` are (module docs).
    fn is_bit(&self, v: &Value, set: &HashSet<&str>, depth: usize) -> bool {
        let name = match v {
            Value::Local(name) => name.as_str(),
            // `0`, `1`, `false`, `true`.
            constant => return constant.as_int(&I64).is_some_and(|c| c < 2),
        };
        if set.contains(name) {
            return true;
        }
        if depth >= MAX_DEPTH {
            return false;
        }
        let Some(&(b, i)) = self.defs.get(name) else { return false };
        let bit = |x: &Value| self.is_bit(x, set, depth + 1);
        let constant = |x: &Value, ty: &Type| x.as_int(ty).is_some();
        match self.f.blocks[b].insts[i].op() {
            Op::Bin { op: BinOp::Xor, ty: Type::Int(_), a, b, .. } => bit(a) && bit(b),
            // `or disjoint` is poison when both bits are set.
            Op::Bin { op: BinOp::Or, flags, ty: Type::Int(_), a, b } => !flags.disjoint && bit(a) && bit(b),
            // `sub 1, b` (flags are harmless: 1 - b neither wraps nor overflows for b ∈ {0, 1}).
            Op::Bin { op: BinOp::Sub, ty: ty @ Type::Int(_), a, b, .. } => a.as_int(ty) == Some(1) && bit(b),
            Op::Bin { op: BinOp::And, ty: ty @ Type::Int(_), a, b, .. } => {
                (bit(a) && constant(b, ty)) || (bit(b) && constant(a, ty))
            }
            Op::Cast { op: CastOp::ZExt | CastOp::Trunc, from: Type::Int(_), a, .. } => bit(a),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use oxide_contract::config::DeviceDebugInfo;

    use super::*;

    /// `case` after the pass: whether it changed, and per function the values assumed below 2,
    /// each right after its block's phis.
    fn facts(case: &str) -> (bool, Module, Vec<(String, Vec<String>)>) {
        let mut m = Module::parse(case);
        let changed = run(&mut m, &mut State::new(DeviceDebugInfo::Lines));
        let mut out = Vec::new();
        for f in m.functions() {
            let mut assumed = Vec::new();
            for b in &f.blocks {
                for (i, pair) in b.insts.windows(2).enumerate() {
                    let Op::Icmp { pred: Pred::Ult, a, b: two, .. } = pair[0].op() else { continue };
                    let assume =
                        Call::new("llvm.assume", Type::Void, vec![(I1, Value::local(pair[0].result().unwrap_or("")))]);
                    if *two == Value::Const("2".into()) && *pair[1].op() == Op::Call(assume) {
                        assert!(
                            b.insts[..i]
                                .iter()
                                .all(|p| matches!(p.op(), Op::Phi { .. } | Op::Icmp { .. } | Op::Call(_)))
                        );
                        assumed.push(a.to_string());
                    }
                }
            }
            out.push((f.name.clone(), assumed));
        }
        (changed, m, out)
    }

    #[test]
    fn toggled_values_get_their_range() {
        let (changed, m, assumed) = facts(include_str!("../../tests/passes/toggle_ranges/toggles.ll"));
        assert!(changed);
        for (f, values) in &assumed {
            let expected = match f.as_str() {
                "cast" => vec!["%buf", "%last"],
                "pair" => vec!["%x", "%y"],
                _ => vec!["%buf"],
            };
            assert_eq!(values, &expected, "@{f}");
        }
        assert_eq!(assumed.len(), 9);
        // Declared once (it was already).
        assert_eq!(m.lines().filter(|l| l.starts_with("declare void @llvm.assume(")).count(), 1);
        let (_, m, _) = facts(include_str!("../../tests/passes/toggle_ranges/double_buffer.ll"));
        assert!(m.has_function("llvm.assume"));
    }

    #[test]
    fn values_that_can_take_other_values_get_nothing() {
        for case in [
            include_str!("../../tests/passes/toggle_ranges/not_bits.ll"),
            include_str!("../../tests/passes/toggle_ranges/no_markers.ll"),
        ] {
            let (changed, m, _) = facts(case);
            assert!(!changed);
            assert_eq!(m.to_string(), case);
        }
    }
}
