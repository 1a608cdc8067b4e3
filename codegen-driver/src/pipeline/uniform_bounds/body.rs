//! A kernel body as the bounds see it: definitions and types of values, dominators, and the
//! guards that hold in a block.

use std::collections::HashMap;

use super::facts::{Fact, icmp_facts};
use crate::pipeline::ir::{BinOp, CastOp, Cfg, Function, I1, Op, Type, Value};

/// A kernel body's definitions, control flow and guards.
pub(super) struct Body<'a> {
    pub(super) f: &'a Function,
    pub(super) cfg: Cfg,
    /// Name → (block, instruction).
    pub(super) defs: HashMap<&'a str, (usize, usize)>,
    types: HashMap<String, Type>,
}

impl<'a> Body<'a> {
    pub(super) fn new(f: &'a Function) -> Self {
        Body { f, cfg: Cfg::new(f), defs: f.defs(), types: f.value_types() }
    }

    /// The operation defining `v`, if an instruction of the body does. A signed compare says
    /// something about unsigned values only with `samesign`, so others are not given.
    pub(super) fn inst(&self, v: &Value) -> Option<&'a Op> {
        let &(b, i) = self.defs.get(v.as_local()?)?;
        let op = self.f.blocks[b].insts[i].op();
        if let Op::Icmp { pred, samesign: false, .. } = op
            && pred.is_signed()
        {
            return None;
        }
        Some(op)
    }

    /// The block defining `v`.
    pub(super) fn block_of(&self, v: &Value) -> Option<usize> {
        self.defs.get(v.as_local()?).map(|&(b, _)| b)
    }

    /// The type of a named value (parameter or result).
    pub(super) fn type_of(&self, v: &Value) -> Option<&Type> {
        self.types.get(v.as_local()?)
    }

    /// The kernel parameter `v` is: its index and type.
    pub(super) fn param(&self, v: &Value) -> Option<(usize, &'a Type)> {
        let name = v.as_local()?;
        if self.defs.contains_key(name) {
            return None;
        }
        self.f.param(name)
    }

    /// Whether the body calls `name`.
    pub(super) fn calls(&self, name: &str) -> bool {
        self.f.blocks.iter().flat_map(|b| &b.insts).any(|i| i.callee() == Some(name))
    }

    /// The facts that hold in `block`: the conditions of the guarded edges that dominate it,
    /// and those of the `llvm.assume`s in the blocks that strictly dominate it (the launch
    /// bounds' `tid.x < 256`), with `block`'s own at its end only (`at_end`): an assume holds
    /// after it runs.
    pub(super) fn facts_at(&self, block: usize, at_end: bool) -> Vec<Fact<'a>> {
        let mut facts = Vec::new();
        let mut b = block;
        loop {
            if b != block || at_end {
                self.assumed(b, &mut facts);
            }
            if let [p] = self.cfg.preds[b][..]
                && let Some((cond, then, els)) = self.cfg.cond_branch(self.f, p)
                && then != els
            {
                self.condition_facts(cond, b == then, 0, &mut facts);
            }
            match self.cfg.idom[b] {
                Some(d) if d != b => b = d,
                _ => break,
            }
        }
        facts
    }

    /// The facts of the `llvm.assume(i1 %c)` calls in `block`.
    fn assumed(&self, block: usize, out: &mut Vec<Fact<'a>>) {
        for inst in &self.f.blocks[block].insts {
            if let Op::Call(call) = inst.op()
                && call.name() == Some("llvm.assume")
                && let [(_, cond @ Value::Local(_))] = &call.args[..]
            {
                self.condition_facts(cond, true, 0, out);
            }
        }
    }

    /// The facts that hold on the edge `pred → succ`: those at the end of `pred` and, where
    /// `pred` ends in a conditional branch with two targets, the condition that takes the edge.
    pub(super) fn edge_facts(&self, pred: &str, succ: usize) -> Option<Vec<Fact<'a>>> {
        let p = self.f.block_index(pred)?;
        let mut facts = self.facts_at(p, true);
        if let Some((cond, then, els)) = self.cfg.cond_branch(self.f, p)
            && then != els
        {
            self.condition_facts(cond, succ == then, 0, &mut facts);
        }
        Some(facts)
    }

    fn condition_facts(&self, cond: &'a Value, outcome: bool, depth: usize, out: &mut Vec<Fact<'a>>) {
        if depth > 8 {
            return;
        }
        let is = |v: &Value, c: &str| *v == Value::Const(c.to_string());
        match self.inst(cond) {
            Some(Op::Icmp { pred, ty, a, b, .. }) => out.extend(icmp_facts(*pred, a, b, ty, outcome)),
            // `a && b` holds both on its true edge, `a || b` neither on its false edge.
            Some(Op::Bin { op: BinOp::And, ty, a, b, .. }) if *ty == I1 && outcome => {
                self.condition_facts(a, true, depth + 1, out);
                self.condition_facts(b, true, depth + 1, out);
            }
            Some(Op::Bin { op: BinOp::Or, ty, a, b, .. }) if *ty == I1 && !outcome => {
                self.condition_facts(a, false, depth + 1, out);
                self.condition_facts(b, false, depth + 1, out);
            }
            Some(Op::Bin { op: BinOp::Xor, ty, a, b, .. }) if *ty == I1 && is(b, "true") => {
                self.condition_facts(a, !outcome, depth + 1, out)
            }
            Some(Op::Select { cond: c, ty, a, b }) if *ty == I1 && is(b, "false") && outcome => {
                self.condition_facts(c, true, depth + 1, out);
                self.condition_facts(a, true, depth + 1, out);
            }
            Some(Op::Select { cond: c, ty, a, b }) if *ty == I1 && is(a, "true") && !outcome => {
                self.condition_facts(c, false, depth + 1, out);
                self.condition_facts(b, false, depth + 1, out);
            }
            _ => {}
        }
    }

    /// The largest `k` (up to 63) such that `facts` say `v` is a multiple of `2^k`: a fact
    /// `v & (2^k - 1) <= 0`, on `v` itself or on its zero-extension or the value it extends.
    pub(super) fn alignment(&self, v: &Value, facts: &[Fact<'a>]) -> u32 {
        let zext_of = |x: &Value| match self.inst(x) {
            Some(Op::Cast { op: CastOp::ZExt, a, .. }) => Some(a),
            _ => None,
        };
        let same = |x: &Value| x == v || zext_of(x) == Some(v) || zext_of(v) == Some(x);
        let mut best = 0;
        for fact in facts.iter().filter(|f| f.is_zero()) {
            let Some(Op::Bin { op: BinOp::And, ty, a, b, .. }) = self.inst(fact.lhs) else { continue };
            let (x, mask) = match (a.as_int(ty), b.as_int(ty)) {
                (None, Some(m)) => (a, m),
                (Some(m), None) => (b, m),
                _ => continue,
            };
            if same(x) && mask != u64::MAX && (mask + 1).is_power_of_two() {
                best = best.max((mask + 1).trailing_zeros().min(63));
            }
        }
        best
    }

    /// The largest `k` (up to 63) such that `v` is a multiple of `2^k` by its definition:
    /// constants, `shl` by a constant, `mul` by a constant, `add`/`or` of multiples, and a phi
    /// of multiples — with the phi itself assumed to be one while its arms are looked at, which
    /// is induction over the loop's iterations (`t = phi [0, …], [t + 32, …]`).
    pub(super) fn multiple_of(&self, v: &Value, ty: &Type, assumed: &mut Vec<(Value, u32)>, depth: usize) -> u32 {
        if let Some(c) = v.as_int(ty) {
            return if c == 0 { 63 } else { c.trailing_zeros().min(63) };
        }
        if depth > 12 {
            return 0;
        }
        if let Some(&(_, k)) = assumed.iter().find(|(a, _)| a == v) {
            return k;
        }
        match self.inst(v) {
            Some(Op::Bin { op: BinOp::Shl, ty, a, b, .. }) => match b.as_int(ty) {
                Some(k) if k < 64 => (self.multiple_of(a, ty, assumed, depth + 1) + k as u32).min(63),
                _ => 0,
            },
            Some(Op::Bin { op: BinOp::Mul, ty, a, b, .. }) => {
                (self.multiple_of(a, ty, assumed, depth + 1) + self.multiple_of(b, ty, assumed, depth + 1)).min(63)
            }
            Some(Op::Bin { op: BinOp::Add | BinOp::Or, ty, a, b, .. }) => {
                self.multiple_of(a, ty, assumed, depth + 1).min(self.multiple_of(b, ty, assumed, depth + 1))
            }
            Some(Op::Cast { op: CastOp::ZExt, from, a, .. }) => self.multiple_of(a, from, assumed, depth + 1),
            Some(Op::Phi { ty, arms }) => {
                // The largest k every arm keeps, assuming the phi has it: start from 63 and
                // lower until the assumption reproduces itself.
                let mut k = 63;
                loop {
                    assumed.push((v.clone(), k));
                    let got = arms.iter().map(|(a, _)| self.multiple_of(a, ty, assumed, depth + 1)).min().unwrap_or(0);
                    assumed.pop();
                    if got >= k {
                        return k;
                    }
                    k = got;
                }
            }
            _ => 0,
        }
    }

    /// The largest value `v` of type `ty` can have, from its type and `zext`, `add`, `mul`
    /// (clamped to the type: a wrapped result is below it too).
    pub(super) fn value_max(&self, v: &Value, ty: &Type, depth: usize) -> u128 {
        let full = (1u128 << ty.int_bits().unwrap_or(64)) - 1;
        if let Some(c) = v.as_int(ty) {
            return u128::from(c);
        }
        if depth > 8 {
            return full;
        }
        match self.inst(v) {
            Some(Op::Cast { op: CastOp::ZExt, from, a, .. }) => self.value_max(a, from, depth + 1).min(full),
            Some(Op::Bin { op: BinOp::Add, ty, a, b, .. }) => {
                (self.value_max(a, ty, depth + 1) + self.value_max(b, ty, depth + 1)).min(full)
            }
            Some(Op::Bin { op: BinOp::Mul, ty, a, b, .. }) => {
                (self.value_max(a, ty, depth + 1).saturating_mul(self.value_max(b, ty, depth + 1))).min(full)
            }
            _ => full,
        }
    }
}
