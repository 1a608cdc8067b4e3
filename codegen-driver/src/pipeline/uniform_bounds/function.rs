//! A kernel body's control flow: definitions, dominators, and the guards that hold in a block.

use std::collections::HashMap;

use super::ir::{Fact, Inst, bits, constant, icmp_facts, parse, phi_arms};
use super::{Block, strip_metadata, successor_indices, terminator_start};

/// A kernel body's definitions, dominators and guards.
pub(super) struct Function<'a> {
    pub(super) blocks: &'a [Block<'a>],
    /// `%name` → (block, right-hand side).
    pub(super) defs: HashMap<&'a str, (usize, &'a str)>,
    pub(super) preds: Vec<Vec<usize>>,
    pub(super) idom: Vec<Option<usize>>,
    pub(super) reachable: Vec<bool>,
}

impl<'a> Function<'a> {
    pub(super) fn new(blocks: &'a [Block<'a>]) -> Self {
        let mut defs = HashMap::new();
        for (b, block) in blocks.iter().enumerate() {
            for line in &block.lines {
                if let Some((lhs, rhs)) = line.trim_start().split_once(" = ")
                    && lhs.starts_with('%')
                {
                    defs.insert(lhs, (b, rhs));
                }
            }
        }
        let succ = successor_indices(blocks);
        let n = blocks.len();
        let mut preds = vec![Vec::new(); n];
        for (b, ss) in succ.iter().enumerate() {
            for &s in ss {
                preds[s].push(b);
            }
        }
        // Reverse post-order from the entry, then the iterative dominator algorithm.
        let mut order = Vec::new();
        let mut state = vec![0u8; n];
        let mut stack = vec![(0usize, 0usize)];
        state[0] = 1;
        while let Some(&mut (b, ref mut next)) = stack.last_mut() {
            if let Some(&s) = succ[b].get(*next) {
                *next += 1;
                if state[s] == 0 {
                    state[s] = 1;
                    stack.push((s, 0));
                }
            } else {
                order.push(b);
                stack.pop();
            }
        }
        order.reverse();
        let mut rpo = vec![usize::MAX; n];
        for (i, &b) in order.iter().enumerate() {
            rpo[b] = i;
        }
        let mut idom: Vec<Option<usize>> = vec![None; n];
        idom[0] = Some(0);
        let mut changed = true;
        while changed {
            changed = false;
            for &b in order.iter().skip(1) {
                let mut new: Option<usize> = None;
                for &p in &preds[b] {
                    if idom[p].is_none() {
                        continue;
                    }
                    new = Some(match new {
                        None => p,
                        Some(mut x) => {
                            let mut y = p;
                            while x != y {
                                while rpo[x] > rpo[y] {
                                    x = idom[x].expect("processed");
                                }
                                while rpo[y] > rpo[x] {
                                    y = idom[y].expect("processed");
                                }
                            }
                            x
                        }
                    });
                }
                if new.is_some() && idom[b] != new {
                    idom[b] = new;
                    changed = true;
                }
            }
        }
        let reachable = (0..n).map(|b| state[b] != 0).collect();
        Function { blocks, defs, preds, idom, reachable }
    }

    /// Whether the body has a loop: an edge to a block that dominates its source.
    pub(super) fn has_loop(&self) -> bool {
        let dominates = |a: usize, mut b: usize| loop {
            if a == b {
                return true;
            }
            match self.idom[b] {
                Some(d) if d != b => b = d,
                _ => return false,
            }
        };
        (0..self.blocks.len()).any(|s| self.reachable[s] && self.preds[s].iter().any(|&p| dominates(s, p)))
    }

    pub(super) fn inst(&self, v: &str) -> Option<Inst<'a>> {
        let inst = parse(self.defs.get(v)?.1)?;
        // A signed compare says something about unsigned values only with `samesign`.
        if let Inst::Icmp { pred, .. } = inst
            && pred.starts_with('s')
            && !self.defs.get(v)?.1.starts_with("icmp samesign ")
        {
            return None;
        }
        Some(inst)
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
            if let [p] = self.preds[b][..]
                && let Some((cond, then, els)) = self.cond_branch(p)
                && then != els
            {
                self.condition_facts(cond, b == then, 0, &mut facts);
            }
            match self.idom[b] {
                Some(d) if d != b => b = d,
                _ => break,
            }
        }
        facts
    }

    /// The facts of the `llvm.assume(i1 %c)` calls in `block`.
    fn assumed(&self, block: usize, out: &mut Vec<Fact<'a>>) {
        for line in &self.blocks[block].lines {
            let Some(rest) = line.trim_start().split("call void @llvm.assume(i1 ").nth(1) else { continue };
            let cond = rest.split(')').next().unwrap_or_default();
            if cond.starts_with('%') {
                self.condition_facts(cond, true, 0, out);
            }
        }
    }

    /// The largest `k` (up to 63) such that `facts` say `v` is a multiple of `2^k`: a fact
    /// `v & (2^k - 1) <= 0`, on `v` itself or on its zero-extension or the value it extends.
    pub(super) fn alignment(&self, v: &str, facts: &[Fact<'a>]) -> u32 {
        let same = |x: &str| {
            x == v
                || matches!(self.inst(x), Some(Inst::Cast { op: "zext", a, .. }) if a == v)
                || matches!(self.inst(v), Some(Inst::Cast { op: "zext", a, .. }) if a == x)
        };
        let mut best = 0;
        for fact in facts {
            let zero = fact.rhs == "0" && !fact.strict || fact.rhs == "1" && fact.strict;
            if !zero || fact.ne {
                continue;
            }
            let Some(Inst::Bin { op: "and", ty, a, b, .. }) = self.inst(fact.lhs) else { continue };
            let (x, mask) = match (constant(a, ty), constant(b, ty)) {
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

    /// The facts that hold on the edge `pred → succ`: those at the end of `pred` and, where
    /// `pred` ends in a conditional branch with two targets, the condition that takes the edge.
    pub(super) fn edge_facts(&self, pred: &str, succ: usize) -> Option<Vec<Fact<'a>>> {
        let p = self.blocks.iter().position(|b| b.label.as_deref() == Some(pred))?;
        let mut facts = self.facts_at(p, true);
        if let Some((cond, then, els)) = self.cond_branch(p)
            && then != els
        {
            self.condition_facts(cond, succ == then, 0, &mut facts);
        }
        Some(facts)
    }

    /// The largest `k` (up to 63) such that `v` is a multiple of `2^k` by its definition:
    /// constants, `shl` by a constant, `mul` by a constant, `add`/`or` of multiples, and a phi
    /// of multiples — with the phi itself assumed to be one while its arms are looked at, which
    /// is induction over the loop's iterations (`t = phi [0, …], [t + 32, …]`).
    pub(super) fn multiple_of(&self, v: &str, ty: &str, assumed: &mut Vec<(String, u32)>, depth: usize) -> u32 {
        if let Some(c) = constant(v, ty) {
            return if c == 0 { 63 } else { c.trailing_zeros().min(63) };
        }
        if depth > 12 {
            return 0;
        }
        if let Some(&(_, k)) = assumed.iter().find(|(a, _)| a == v) {
            return k;
        }
        match self.inst(v) {
            Some(Inst::Bin { op: "shl", ty, a, b, .. }) => match constant(b, ty) {
                Some(k) if k < 64 => (self.multiple_of(a, ty, assumed, depth + 1) + k as u32).min(63),
                _ => 0,
            },
            Some(Inst::Bin { op: "mul", ty, a, b, .. }) => {
                (self.multiple_of(a, ty, assumed, depth + 1) + self.multiple_of(b, ty, assumed, depth + 1)).min(63)
            }
            Some(Inst::Bin { op: "add" | "or", ty, a, b, .. }) => {
                self.multiple_of(a, ty, assumed, depth + 1).min(self.multiple_of(b, ty, assumed, depth + 1))
            }
            Some(Inst::Cast { op: "zext", from, a, .. }) => self.multiple_of(a, from, assumed, depth + 1),
            Some(Inst::Phi { ty, incoming }) => {
                // The largest k every arm keeps, assuming the phi has it: start from the
                // non-recursive arms' and lower until the assumption reproduces itself.
                let arms = phi_arms(incoming);
                let mut k = 63;
                loop {
                    assumed.push((v.to_string(), k));
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
    pub(super) fn value_max(&self, v: &str, ty: &str, depth: usize) -> u128 {
        let full = (1u128 << bits(ty).unwrap_or(64)) - 1;
        if let Some(c) = constant(v, ty) {
            return u128::from(c);
        }
        if depth > 8 {
            return full;
        }
        match self.inst(v) {
            Some(Inst::Cast { op: "zext", from, a, .. }) => self.value_max(a, from, depth + 1).min(full),
            Some(Inst::Bin { op: "add", ty, a, b, .. }) => {
                (self.value_max(a, ty, depth + 1) + self.value_max(b, ty, depth + 1)).min(full)
            }
            Some(Inst::Bin { op: "mul", ty, a, b, .. }) => {
                (self.value_max(a, ty, depth + 1).saturating_mul(self.value_max(b, ty, depth + 1))).min(full)
            }
            _ => full,
        }
    }

    /// `br i1 %c, label %then, label %else` ending `block`, as (c, then, else).
    fn cond_branch(&self, block: usize) -> Option<(&'a str, usize, usize)> {
        let lines = &self.blocks[block].lines;
        let term = strip_metadata(lines[terminator_start(lines)?].trim_start());
        let rest = term.strip_prefix("br i1 ")?;
        let [c, t, e] = rest.split(", ").collect::<Vec<_>>()[..] else { return None };
        let find = |l: &str| {
            let l = l.strip_prefix("label %")?;
            self.blocks.iter().position(|b| b.label.as_deref() == Some(l))
        };
        Some((c, find(t)?, find(e)?))
    }

    fn condition_facts(&self, cond: &'a str, outcome: bool, depth: usize, out: &mut Vec<Fact<'a>>) {
        if depth > 8 {
            return;
        }
        match self.inst(cond) {
            Some(Inst::Icmp { pred, a, b, .. }) => out.extend(icmp_facts(pred, a, b, outcome).unwrap_or_default()),
            // `a && b` holds both on its true edge, `a || b` neither on its false edge.
            Some(Inst::Bin { op: "and", ty: "i1", a, b, .. }) if outcome => {
                self.condition_facts(a, true, depth + 1, out);
                self.condition_facts(b, true, depth + 1, out);
            }
            Some(Inst::Bin { op: "or", ty: "i1", a, b, .. }) if !outcome => {
                self.condition_facts(a, false, depth + 1, out);
                self.condition_facts(b, false, depth + 1, out);
            }
            Some(Inst::Bin { op: "xor", ty: "i1", a, b: "true", .. }) => {
                self.condition_facts(a, !outcome, depth + 1, out)
            }
            Some(Inst::Select { c, ty: "i1", a, b: "false" }) if outcome => {
                self.condition_facts(c, true, depth + 1, out);
                self.condition_facts(a, true, depth + 1, out);
            }
            Some(Inst::Select { c, ty: "i1", a: "true", b }) if !outcome => {
                self.condition_facts(c, false, depth + 1, out);
                self.condition_facts(b, false, depth + 1, out);
            }
            _ => {}
        }
    }
}
