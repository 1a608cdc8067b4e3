//! A function's control flow: successors and predecessors, reachability, dominators, natural
//! loops, and where each value is defined and used.

use std::collections::HashMap;

use super::function::Function;
use super::inst::Op;

/// The control flow of one function, by block index.
pub struct Cfg {
    pub succs: Vec<Vec<usize>>,
    pub preds: Vec<Vec<usize>>,
    pub reachable: Vec<bool>,
    /// Immediate dominators (the entry's is itself; `None` for unreachable blocks).
    pub idom: Vec<Option<usize>>,
}

impl Cfg {
    pub fn new(f: &Function) -> Cfg {
        let index: HashMap<&str, usize> =
            f.blocks.iter().enumerate().filter_map(|(i, b)| Some((b.label.as_deref()?, i))).collect();
        let succs: Vec<Vec<usize>> = f
            .blocks
            .iter()
            .map(|b| b.successors().into_iter().filter_map(|s| index.get(s).copied()).collect())
            .collect();
        let n = succs.len();
        let mut preds = vec![Vec::new(); n];
        for (b, ss) in succs.iter().enumerate() {
            for &s in ss {
                preds[s].push(b);
            }
        }
        // Post-order by an iterative depth-first search from the entry.
        let mut order = Vec::new();
        let mut reachable = vec![false; n];
        if n > 0 {
            let mut stack = vec![(0usize, 0usize)];
            reachable[0] = true;
            while let Some(&mut (b, ref mut next)) = stack.last_mut() {
                if let Some(&s) = succs[b].get(*next) {
                    *next += 1;
                    if !reachable[s] {
                        reachable[s] = true;
                        stack.push((s, 0));
                    }
                } else {
                    order.push(b);
                    stack.pop();
                }
            }
        }
        order.reverse();
        let idom = dominators(&order, &preds, n);
        Cfg { succs, preds, reachable, idom }
    }

    pub fn len(&self) -> usize {
        self.succs.len()
    }

    /// Whether block `a` dominates block `b` (every block dominates itself).
    pub fn dominates(&self, a: usize, mut b: usize) -> bool {
        loop {
            if a == b {
                return true;
            }
            match self.idom[b] {
                Some(d) if d != b => b = d,
                _ => return false,
            }
        }
    }

    /// The back-edges `latch → header` (the header dominates the latch), in block order.
    pub fn back_edges(&self) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for b in 0..self.len() {
            if !self.reachable[b] {
                continue;
            }
            for &s in &self.succs[b] {
                if self.dominates(s, b) {
                    out.push((b, s));
                }
            }
        }
        out
    }

    /// The natural loop of the back-edge `latch → header`: the header and every block that
    /// reaches the latch without passing through it.
    pub fn natural_loop(&self, latch: usize, header: usize) -> Vec<bool> {
        let mut body = vec![false; self.len()];
        body[header] = true;
        let mut work = vec![latch];
        while let Some(b) = work.pop() {
            if !body[b] {
                body[b] = true;
                work.extend(self.preds[b].iter().copied());
            }
        }
        body
    }

    /// Whether each block is in some loop.
    pub fn in_loop(&self) -> Vec<bool> {
        let mut in_loop = vec![false; self.len()];
        for (latch, header) in self.back_edges() {
            for (b, inside) in self.natural_loop(latch, header).into_iter().enumerate() {
                in_loop[b] |= inside;
            }
        }
        in_loop
    }

    /// Whether the function has a loop.
    pub fn has_loop(&self) -> bool {
        !self.back_edges().is_empty()
    }

    /// The blocks reachable from `from` (not counting `from` itself unless on a cycle).
    pub fn reachable_from(&self, from: &[bool]) -> Vec<bool> {
        let mut seen = vec![false; self.len()];
        let mut work: Vec<usize> =
            from.iter().enumerate().filter(|(_, f)| **f).flat_map(|(b, _)| self.succs[b].iter().copied()).collect();
        while let Some(b) = work.pop() {
            if !seen[b] {
                seen[b] = true;
                work.extend(self.succs[b].iter().copied());
            }
        }
        seen
    }

    /// The conditional branch ending `block`: (condition, then, else) as block indices.
    pub fn cond_branch<'f>(&self, f: &'f Function, block: usize) -> Option<(&'f super::types::Value, usize, usize)> {
        let Op::CondBr { cond, .. } = f.blocks[block].terminator()?.op() else { return None };
        let [then, els] = self.succs[block][..] else { return None };
        Some((cond, then, els))
    }
}

/// Immediate dominators by the iterative algorithm of Cooper, Harvey and Kennedy over `rpo`.
fn dominators(rpo: &[usize], preds: &[Vec<usize>], n: usize) -> Vec<Option<usize>> {
    let mut number = vec![usize::MAX; n];
    for (i, &b) in rpo.iter().enumerate() {
        number[b] = i;
    }
    let mut idom: Vec<Option<usize>> = vec![None; n];
    let Some(&entry) = rpo.first() else { return idom };
    idom[entry] = Some(entry);
    let mut changed = true;
    while changed {
        changed = false;
        for &b in rpo.iter().skip(1) {
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
                            while number[x] > number[y] {
                                x = idom[x].expect("processed");
                            }
                            while number[y] > number[x] {
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
    idom
}

/// Where each value is used: name → (block, instruction) of each use (debug records aside).
pub fn uses(f: &Function) -> HashMap<&str, Vec<(usize, usize)>> {
    let mut uses: HashMap<&str, Vec<(usize, usize)>> = HashMap::new();
    for (b, block) in f.blocks.iter().enumerate() {
        for (i, inst) in block.insts.iter().enumerate() {
            for u in inst.uses() {
                uses.entry(u).or_default().push((b, i));
            }
        }
    }
    uses
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loops_and_dominators() {
        let body = [
            "entry:",
            "  br label %head",
            "head:",
            "  %i = phi i64 [ 0, %entry ], [ %j, %latch ]",
            "  %c = icmp ult i64 %i, 8",
            "  br i1 %c, label %latch, label %exit",
            "latch:",
            "  %j = add i64 %i, 1",
            "  br label %head",
            "exit:",
            "  ret void",
            "dead:",
            "  br label %exit",
        ];
        let f = Function::parse("define void @f() {", &body).expect("parses");
        let cfg = Cfg::new(&f);
        assert_eq!(cfg.back_edges(), vec![(2, 1)]);
        assert_eq!(cfg.in_loop(), vec![false, true, true, false, false]);
        assert!(cfg.dominates(1, 3) && !cfg.dominates(2, 3));
        assert_eq!(cfg.reachable, vec![true, true, true, true, false]);
        assert_eq!(cfg.preds[3], vec![1, 4]);
        let uses = uses(&f);
        assert_eq!(uses["i"], vec![(1, 1), (2, 0)]);
    }
}
