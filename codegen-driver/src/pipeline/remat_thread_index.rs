//! After `opt`: a thread index computed before a loop and used only after it is computed again
//! after the loop, so it does not occupy registers while the loop runs.
//!
//! `let idx = thread::index_1d(); … loop { … } … out.get_mut(idx)` keeps the 64-bit `idx` (and
//! `idx * 16`) alive through n-body's tile loops: four registers that ptxas takes from the inner
//! loop's schedule (317 static stall cycles per iteration against nvcc's 274; nvcc reads
//! `%ctaid`/`%ntid`/`%tid` again after the loop and gets 268 here). So a value whose expression
//! uses only special-register reads that are the same for the whole thread (`%tid`, `%ctaid`,
//! `%ntid`, `%nctaid`), the function's parameters, constants and integer arithmetic, that is used
//! in no loop, is recomputed at the start of each block after a loop that uses it. The copies
//! read the registers through inline asm: `llc`'s CSE would merge `readnone` intrinsic reads
//! with the originals, and the value would be live across the loop again.

use super::ir::Module;
use super::ir_functions::{SREG, is_plain_name, value_names};
use super::passes::{State, on_text};
use std::collections::{HashMap, HashSet};

/// The special registers that hold one value for the whole life of a thread.
const THREAD_CONSTANT_SREGS: [&str; 12] = [
    "tid.x", "tid.y", "tid.z", "ctaid.x", "ctaid.y", "ctaid.z", "ntid.x", "ntid.y", "ntid.z", "nctaid.x", "nctaid.y",
    "nctaid.z",
];

/// Largest expression recomputed (instructions): index arithmetic of three dimensions is ~30.
const MAX_NODES: usize = 48;

/// The pass (`passes.rs`).
pub fn run(module: &mut Module, _: &mut State) -> bool {
    on_text(module, rematerialize)
}

/// The module with such values recomputed after their loops (see the module docs).
pub fn rematerialize(module: &str) -> String {
    let mut counter = 0usize;
    super::ir_functions::rewrite_bodies(module, |body| rewrite_function(body, &mut counter))
}

struct Block {
    label: String,
    /// First and one-past-last line.
    lines: (usize, usize),
    succ: Vec<usize>,
}

fn rewrite_function(body: &[&str], counter: &mut usize) -> Vec<String> {
    let keep = || body.iter().map(|l| l.to_string()).collect();
    if !body.iter().any(|l| l.contains(SREG)) {
        return keep();
    }
    let blocks = split_blocks(body);
    let in_loop = loop_blocks(&blocks);
    if !in_loop.iter().any(|&b| b) {
        return keep();
    }
    let after_loop = reachable_from(&blocks, &in_loop);
    let mut block_of = vec![0usize; body.len()];
    for (b, block) in blocks.iter().enumerate() {
        block_of[block.lines.0..block.lines.1].fill(b);
    }
    let mut defs: HashMap<&str, (usize, &str)> = HashMap::new();
    for (i, l) in body.iter().enumerate() {
        if let Some((lhs, rhs)) = l.trim_start().split_once(" = ")
            && is_plain_name(lhs)
        {
            defs.insert(lhs, (i, rhs));
        }
    }
    // Uses of each value: (line, block), phis apart (their use is on an edge).
    let mut uses: HashMap<&str, Vec<(usize, usize, bool)>> = HashMap::new();
    for (i, l) in body.iter().enumerate() {
        // Debug records name values without using them (the original stays defined).
        if l.trim_start().starts_with("#dbg") {
            continue;
        }
        let rhs = l.trim_start().split_once(" = ").map_or(l.trim_start(), |(_, r)| r);
        let is_phi = rhs.starts_with("phi ");
        for v in value_names(strip_debug(rhs)) {
            uses.entry(v).or_default().push((i, block_of[i], is_phi));
        }
    }
    // Candidates: roots of a thread-constant expression defined outside loops, used in no loop
    // and by no phi, with a use in a block after a loop.
    let mut clones: HashMap<usize, Vec<String>> = HashMap::new();
    let mut renamed: HashMap<usize, Vec<(String, String)>> = HashMap::new();
    let mut roots: Vec<&str> = defs.keys().copied().collect();
    roots.sort_by_key(|v| defs[v].0);
    for root in roots {
        let (line, _) = defs[root];
        let Some(us) = uses.get(root) else { continue };
        if in_loop[block_of[line]] || us.iter().any(|&(_, b, phi)| phi || in_loop[b]) {
            continue;
        }
        let targets: Vec<usize> = {
            let mut t: Vec<usize> =
                us.iter().map(|&(_, b, _)| b).filter(|&b| b != block_of[line] && after_loop[b]).collect();
            t.sort_unstable();
            t.dedup();
            t
        };
        if targets.is_empty() {
            continue;
        }
        let Some(tree) = thread_constant_tree(root, &defs) else { continue };
        // A bare register read is left to ptxas (it reads it again where it needs it).
        if tree.len() < 2 {
            continue;
        }
        for b in targets {
            *counter += 1;
            let copy_of = copy_namer(*counter);
            let copy: HashSet<&str> = tree.iter().copied().collect();
            let mut lines = Vec::new();
            for &v in &tree {
                let rhs = strip_debug(defs[v].1);
                let rhs = match sreg_read(rhs) {
                    Some(reg) => format!("call i32 asm \"mov.u32 $0, %{reg};\", \"=r\"()"),
                    None => rename(rhs, &copy, &copy_of),
                };
                lines.push(format!("  {} = {rhs}", copy_of(v)));
            }
            // After the block's phis.
            let (start, end) = blocks[b].lines;
            let at = (start..end)
                .take_while(|&l| {
                    let t = body[l].trim_start();
                    l == start && !body[l].starts_with(' ') || t.contains(" = phi ") || t.starts_with("#dbg")
                })
                .last()
                .unwrap_or(start);
            clones.entry(at).or_default().extend(lines);
            for &(l, ub, _) in us {
                if ub == b {
                    renamed.entry(l).or_default().push((root.to_string(), copy_of(root)));
                }
            }
        }
    }
    if clones.is_empty() {
        return keep();
    }
    let mut out = Vec::with_capacity(body.len() + 64);
    for (i, line) in body.iter().enumerate() {
        let mut text = line.to_string();
        if let Some(pairs) = renamed.get(&i) {
            for (from, to) in pairs {
                text = replace_name(&text, from, to);
            }
        }
        out.push(text);
        out.extend(clones.remove(&i).unwrap_or_default());
    }
    out
}

/// The values of `root`'s expression in definition order (operands first), if every leaf is a
/// thread-constant register read, a parameter or a constant, and every node integer arithmetic.
fn thread_constant_tree<'a>(root: &'a str, defs: &HashMap<&'a str, (usize, &'a str)>) -> Option<Vec<&'a str>> {
    let mut order = Vec::new();
    let mut seen = HashSet::new();
    let mut stack = vec![(root, false)];
    while let Some((v, expanded)) = stack.pop() {
        if expanded {
            order.push(v);
            continue;
        }
        if !seen.insert(v) {
            continue;
        }
        let Some(&(_, rhs)) = defs.get(v) else {
            // A parameter (not defined in the body).
            seen.remove(v);
            continue;
        };
        let rhs = strip_debug(rhs);
        if sreg_read(rhs).is_some() {
            order.push(v);
            continue;
        }
        let op = rhs.split(' ').next().unwrap_or("");
        let arithmetic = ["add", "sub", "mul", "shl", "lshr", "and", "or", "xor", "zext", "sext", "trunc"];
        if !arithmetic.contains(&op) || rhs.contains('<') {
            return None;
        }
        stack.push((v, true));
        for o in value_names(rhs) {
            stack.push((o, false));
        }
        if seen.len() > MAX_NODES {
            return None;
        }
    }
    Some(order)
}

/// `reg` of `call … i32 @llvm.nvvm.read.ptx.sreg.<reg>()` for a thread-constant register.
fn sreg_read(rhs: &str) -> Option<&'static str> {
    let at = rhs.find(SREG)?;
    let rest = &rhs[at + SREG.len()..];
    let name = rest.strip_suffix("()").or_else(|| rest.split_once("()").map(|(n, _)| n))?;
    let is_call = rhs.starts_with("call ") || rhs.starts_with("tail call ");
    THREAD_CONSTANT_SREGS.iter().copied().find(|r| *r == name).filter(|_| is_call)
}

fn split_blocks(body: &[&str]) -> Vec<Block> {
    let mut blocks: Vec<Block> = vec![Block { label: String::new(), lines: (0, 0), succ: vec![] }];
    for (i, l) in body.iter().enumerate() {
        let is_label = !l.starts_with(' ') && !l.is_empty() && !l.starts_with(';') && l.contains(':');
        if is_label && i > 0 {
            blocks.last_mut().expect("a block").lines.1 = i;
            blocks.push(Block { label: l.split(':').next().unwrap_or("").to_string(), lines: (i, i), succ: vec![] });
        } else if is_label {
            blocks[0].label = l.split(':').next().unwrap_or("").to_string();
        }
    }
    blocks.last_mut().expect("a block").lines.1 = body.len();
    let index: HashMap<String, usize> = blocks.iter().enumerate().map(|(i, b)| (format!("%{}", b.label), i)).collect();
    for block in &mut blocks {
        let (start, end) = block.lines;
        block.succ = body[start..end]
            .iter()
            .filter(|l| l.contains("label %"))
            .flat_map(|l| l.split("label ").skip(1).map(|s| s.split([',', ' ', ']']).next().unwrap_or("")))
            .filter_map(|s| index.get(s).copied())
            .collect();
    }
    blocks
}

/// Whether each block is in a loop: the natural loops of the back-edges a depth-first search
/// from the entry finds.
fn loop_blocks(blocks: &[Block]) -> Vec<bool> {
    let n = blocks.len();
    let mut preds = vec![Vec::new(); n];
    for (b, block) in blocks.iter().enumerate() {
        for &s in &block.succ {
            preds[s].push(b);
        }
    }
    let mut in_loop = vec![false; n];
    let mut state = vec![0u8; n];
    let mut stack = vec![(0usize, 0usize)];
    state[0] = 1;
    while let Some(&mut (b, ref mut next)) = stack.last_mut() {
        if let Some(&s) = blocks[b].succ.get(*next) {
            *next += 1;
            match state[s] {
                0 => {
                    state[s] = 1;
                    stack.push((s, 0));
                }
                1 => {
                    // Back-edge b -> s: s and every block reaching b without passing s.
                    let mut work = vec![b];
                    in_loop[s] = true;
                    let mut body = vec![false; n];
                    body[s] = true;
                    while let Some(x) = work.pop() {
                        if !body[x] {
                            body[x] = true;
                            in_loop[x] = true;
                            work.extend(preds[x].iter().copied());
                        }
                    }
                }
                _ => {}
            }
        } else {
            state[b] = 2;
            stack.pop();
        }
    }
    in_loop
}

/// Blocks reachable from a loop block (the blocks "after a loop", and the loops themselves).
fn reachable_from(blocks: &[Block], in_loop: &[bool]) -> Vec<bool> {
    let mut seen: Vec<bool> = in_loop.to_vec();
    let mut work: Vec<usize> = (0..blocks.len()).filter(|&b| in_loop[b]).collect();
    while let Some(b) = work.pop() {
        for &s in &blocks[b].succ {
            if !seen[s] {
                seen[s] = true;
                work.push(s);
            }
        }
    }
    seen
}

/// The names of the `n`th copy: `%x` → `%oxide.rm<n>.x` (`%0` → `%oxide.rm<n>.0`: a numbered
/// value's name cannot take a suffix).
fn copy_namer(n: usize) -> impl Fn(&str) -> String {
    move |v: &str| format!("%oxide.rm{n}.{}", &v[1..])
}

/// `text` with each whole name in `copied` replaced by its copy's.
fn rename(text: &str, copied: &HashSet<&str>, copy_of: &impl Fn(&str) -> String) -> String {
    let mut out = text.to_string();
    let mut found: Vec<&str> = value_names(text).into_iter().filter(|n| copied.contains(n)).collect();
    found.sort_unstable();
    found.dedup();
    for n in found {
        out = replace_name(&out, n, &copy_of(n));
    }
    out
}

/// `text` with every whole occurrence of the name `from` replaced by `to`.
fn replace_name(text: &str, from: &str, to: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut rest = text;
    while let Some(i) = rest.find(from) {
        let after = rest[i + from.len()..].bytes().next();
        let whole = !after.is_some_and(|b| b.is_ascii_alphanumeric() || b"._$-".contains(&b));
        out.push_str(&rest[..i]);
        out.push_str(if whole { to } else { from });
        rest = &rest[i + from.len()..];
    }
    out.push_str(rest);
    out
}

/// `rhs` without a trailing `, !dbg !n` (and other metadata).
fn strip_debug(rhs: &str) -> &str {
    rhs.find(", !").map_or(rhs, |i| &rhs[..i]).trim_end()
}
#[cfg(test)]
mod tests {
    use super::rematerialize;

    /// A kernel whose `%idx` (block * 128 + thread) is used before a loop (`use_before`) and
    /// after it, in `%exit`.
    fn kernel(in_loop_use: &str) -> String {
        format!(
            "define void @k(ptr %p, i64 %n) {{\nstart:\n  \
             %t = tail call i32 @llvm.nvvm.read.ptx.sreg.tid.x(), !dbg !3\n  \
             %b = tail call noundef range(i32 0, 65535) i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()\n  \
             %bw = shl nuw nsw i32 %b, 7\n  %0 = add nuw nsw i32 %bw, %t\n  %idx = zext nneg i32 %0 to i64, !dbg !4\n  \
             %a = getelementptr float, ptr %p, i64 %idx\n  %v = load float, ptr %a, align 4\n  br label %loop\n\n\
             loop:                 ; preds = %loop, %start\n  \
             %j = phi i64 [ 0, %start ], [ %j.next, %loop ]\n  %acc = phi float [ %v, %start ], [ %acc.next, %loop ]\n  \
             %acc.next = fadd float %acc, 1.0\n{in_loop_use}  %j.next = add nuw i64 %j, 1\n  \
             %done = icmp eq i64 %j.next, %n\n  br i1 %done, label %exit, label %loop\n\n\
             exit:                 ; preds = %loop\n  %acc.lcssa = phi float [ %acc.next, %loop ]\n  \
             %o = getelementptr float, ptr %p, i64 %idx\n  store float %acc.lcssa, ptr %o, align 4\n  ret void\n}}\n"
        )
    }

    #[test]
    fn an_index_used_after_a_loop_is_computed_again_there() {
        let out = rematerialize(&kernel(""));
        let expected = "  %acc.lcssa = phi float [ %acc.next, %loop ]\n  \
             %oxide.rm1.t = call i32 asm \"mov.u32 $0, %tid.x;\", \"=r\"()\n  \
             %oxide.rm1.b = call i32 asm \"mov.u32 $0, %ctaid.x;\", \"=r\"()\n  \
             %oxide.rm1.bw = shl nuw nsw i32 %oxide.rm1.b, 7\n  \
             %oxide.rm1.0 = add nuw nsw i32 %oxide.rm1.bw, %oxide.rm1.t\n  \
             %oxide.rm1.idx = zext nneg i32 %oxide.rm1.0 to i64\n  \
             %o = getelementptr float, ptr %p, i64 %oxide.rm1.idx\n";
        assert!(out.contains(expected), "{out}");
        // The use before the loop keeps the original.
        assert!(out.contains("  %a = getelementptr float, ptr %p, i64 %idx\n"), "{out}");
    }

    #[test]
    fn values_live_in_a_loop_or_not_thread_constant_stay() {
        // Used in the loop too: live there anyway.
        let input = kernel("  %q = getelementptr float, ptr %p, i64 %idx\n");
        assert_eq!(rematerialize(&input), input);
        // Built from a load (not a per-thread constant) or a lane id (not in the list).
        for (from, to) in [
            ("%0 = add nuw nsw i32 %bw, %t", "%0 = add nuw nsw i32 %bw, %ld\n  %ld = load i32, ptr %p, align 4"),
            ("@llvm.nvvm.read.ptx.sreg.tid.x()", "@llvm.nvvm.read.ptx.sreg.laneid()"),
        ] {
            let input = kernel("").replace(from, to);
            assert_eq!(rematerialize(&input), input, "{to}");
        }
        // No loop: nothing to gain.
        let input = kernel("").replace("br i1 %done, label %exit, label %loop", "br label %exit");
        assert_eq!(rematerialize(&input), input);
    }
}
