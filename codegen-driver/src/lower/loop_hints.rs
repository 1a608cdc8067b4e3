//! `#[unroll]` / `#[unroll(N)]`: the marker call a hinted loop's body starts with becomes
//! `!llvm.loop` unroll metadata on that loop's latch branches when the module is printed.
//!
//! The marker (`cuda_device::intrinsics::loop_unroll::<N>()`, put there by the `#[kernel]` /
//! `#[device]` macros or `cuda_device::unroll!`) is not emitted as a call; the builder records
//! its block ([`super::ir::LoopHint`]). The loop is the innermost natural loop of the function's
//! CFG that contains that block; its back-edges (branches to the header from inside) carry the
//! metadata, which LLVM keeps through rotation and simplification until the unroller reads it.

use rustc_middle::ty::Instance;

use super::builder::Builder;
use super::ir::{BlockData, LoopHint};

/// Called for every call: a call of the `loop_unroll::<N>` marker is recorded instead of emitted.
pub fn is_marker<'tcx>(bx: &Builder<'_, 'tcx>, callee: Option<Instance<'tcx>>) -> bool {
    let Some(callee) = callee else { return false };
    let tcx = bx.cx.tcx;
    if !super::attrs::is_intrinsic(tcx, callee.def_id()) || tcx.item_name(callee.def_id()).as_str() != "loop_unroll" {
        return false;
    }
    let count = callee.args.const_at(0).to_leaf().to_u32();
    bx.cx.module.borrow_mut().loop_hints.push(LoopHint { func: bx.block.func, block: bx.block.idx, count });
    true
}

/// What a hint asks for, as LLVM loop metadata properties.
pub fn properties(count: u32) -> String {
    match count {
        0 => "!{!\"llvm.loop.unroll.full\"}".to_string(),
        1 => "!{!\"llvm.loop.unroll.disable\"}".to_string(),
        n => format!("!{{!\"llvm.loop.unroll.count\", i32 {n}}}"),
    }
}

/// The blocks whose terminators are back-edges of the innermost loop around `marker`, or none
/// when `marker` is not in a loop.
pub fn latches(blocks: &[BlockData], marker: usize) -> Vec<usize> {
    let index = |label: &str| blocks.iter().position(|b| b.label == label);
    let succ: Vec<Vec<usize>> = blocks
        .iter()
        .map(|b| b.instrs.last().map(|t| targets(t)).unwrap_or_default().iter().filter_map(|l| index(l)).collect())
        .collect();
    let mut pred: Vec<Vec<usize>> = vec![Vec::new(); blocks.len()];
    for (b, ss) in succ.iter().enumerate() {
        for &s in ss {
            pred[s].push(b);
        }
    }
    // Back-edges: edges to a block on the depth-first path (reducible CFGs, as MIR's are).
    let mut back = Vec::new();
    let mut state = vec![0u8; blocks.len()];
    let mut stack = vec![(0usize, 0usize)];
    if !blocks.is_empty() {
        state[0] = 1;
    }
    while let Some(&mut (b, ref mut next)) = stack.last_mut() {
        if let Some(&s) = succ[b].get(*next) {
            *next += 1;
            match state[s] {
                0 => {
                    state[s] = 1;
                    stack.push((s, 0));
                }
                1 => back.push((b, s)),
                _ => {}
            }
        } else {
            state[b] = 2;
            stack.pop();
        }
    }
    // The natural loop of each header: everything that reaches one of its latches without
    // passing the header. Keep the smallest loop that contains the marker.
    let mut best: Option<(usize, Vec<usize>)> = None;
    let headers: Vec<usize> = {
        let mut h: Vec<usize> = back.iter().map(|&(_, h)| h).collect();
        h.sort_unstable();
        h.dedup();
        h
    };
    for header in headers {
        let latches: Vec<usize> = back.iter().filter(|&&(_, h)| h == header).map(|&(l, _)| l).collect();
        let mut body = vec![false; blocks.len()];
        body[header] = true;
        let mut work: Vec<usize> = latches.clone();
        while let Some(b) = work.pop() {
            if !body[b] {
                body[b] = true;
                work.extend(pred[b].iter().copied());
            }
        }
        if body[marker] {
            let size = body.iter().filter(|&&x| x).count();
            if best.as_ref().is_none_or(|(s, _)| size < *s) {
                best = Some((size, latches));
            }
        }
    }
    best.map(|(_, l)| l).unwrap_or_default()
}

/// The labels a terminator branches to.
fn targets(terminator: &str) -> Vec<String> {
    terminator
        .split("label %")
        .skip(1)
        .map(|rest| rest.chars().take_while(|c| c.is_ascii_alphanumeric() || "._$-".contains(*c)).collect())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(label: &str, term: &str) -> BlockData {
        BlockData { label: label.into(), instrs: vec![term.into()] }
    }

    #[test]
    fn the_innermost_loop_gets_the_hint() {
        // start → outer ⇄ (inner ⇄ inner.body) → exit
        let blocks = vec![
            block("start.0", "br label %outer.1"),
            block("outer.1", "br i1 %c, label %inner.2, label %exit.4"),
            block("inner.2", "br i1 %d, label %body.3, label %outer.1"),
            block("body.3", "br label %inner.2"),
            block("exit.4", "ret void"),
        ];
        assert_eq!(latches(&blocks, 3), vec![3]);
        assert_eq!(latches(&blocks, 1), vec![2]);
        assert!(latches(&blocks, 4).is_empty());
        assert_eq!(properties(0), "!{!\"llvm.loop.unroll.full\"}");
        assert_eq!(properties(4), "!{!\"llvm.loop.unroll.count\", i32 4}");
    }
}
