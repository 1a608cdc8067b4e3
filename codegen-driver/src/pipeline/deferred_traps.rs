//! After `opt`: turns the failure markers of deferred bounds checks (`lower/bounds.rs`) into a
//! per-thread flag and a trap where the optimised code leaves the region it was scheduled in.
//!
//! In each function that has markers, `call @__oxide_bounds_fail_if(i1 %c)` becomes
//! `flag |= %c` on a stack slot (one `i32` per block with markers), and `@(any flag) trap` (a predicated
//! PTX `trap`, no IR branch) goes before every `ret`, every loop back-edge and every call of a
//! function. Doing this after
//! `opt` is the point: by then loops are unrolled and callees inlined, so the checks of an
//! unrolled body share one trap at its end instead of one branch per element. A second, short
//! `opt` run (`sroa`, `instcombine`) promotes the flag to registers.

use std::collections::{HashMap, HashSet};

use super::ir_functions::{Block, split_blocks, successor_indices, terminator_start};

use super::ir::Module;
use super::ir_functions::value_names;
use super::passes::{State, on_text};

/// The marker `lower/bounds.rs` emits.
use crate::markers::BOUNDS_FAIL_IF as MARKER;

const FLAG: &str = "%oxide.oob";
/// A predicated trap: ptxas keeps it where it is, with a short branch around it.
const TRAP_IF: &str = "call void asm sideeffect \"@$0 trap;\", \"b\"";

/// The pass (`passes.rs`): places the traps of a module with markers.
pub fn run(module: &mut Module, _: &mut State) -> bool {
    on_text(module, |text| if needed(text) { place(text) } else { text.to_string() })
}

/// The pass after the second `opt` (see [`drop_dead_traps_text`]).
pub fn drop_dead_traps(module: &mut Module, _: &mut State) -> bool {
    on_text(module, drop_dead_traps_text)
}

/// Whether `module` has markers to place traps for.
pub fn needed(module: &str) -> bool {
    module.contains(&format!("@{MARKER}("))
}

/// The module with every function's markers replaced (see the module docs).
pub fn place(module: &str) -> String {
    let mut counter = 0usize;
    super::ir_functions::rewrite_bodies(module, |body| {
        if body.iter().any(|l| is_marker_call(l)) {
            rewrite_function(body, &mut counter)
        } else {
            body.iter().map(|l| l.to_string()).collect()
        }
    })
}

/// After the second `opt`: drops the traps whose flag folded to `false` (every check before them
/// was proven to pass); LLVM keeps them because inline asm has side effects.
pub fn drop_dead_traps_text(module: &str) -> String {
    let dead = format!("{TRAP_IF}(i1 false)");
    let mut out = String::with_capacity(module.len());
    for line in module.lines().filter(|l| !l.contains(&dead)) {
        out.push_str(line);
        out.push('\n');
    }
    out
}

fn is_marker_call(line: &str) -> bool {
    line.contains(&format!("@{MARKER}(")) && !line.starts_with("declare")
}

/// For each block, the targets of its branches back to a block on the depth-first path to it:
/// the loops' back-edges (empty for a block that closes no loop).
fn back_edges(succ: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let mut back = vec![Vec::new(); succ.len()];
    if succ.is_empty() {
        return back;
    }
    // 0 unvisited, 1 on the path, 2 done.
    let mut state = vec![0u8; succ.len()];
    let mut stack = vec![(0usize, 0usize)];
    state[0] = 1;
    while let Some(&mut (b, ref mut next)) = stack.last_mut() {
        if let Some(&s) = succ[b].get(*next) {
            *next += 1;
            match state[s] {
                0 => {
                    state[s] = 1;
                    stack.push((s, 0));
                }
                1 => back[b].push(s),
                _ => {}
            }
        } else {
            state[b] = 2;
            stack.pop();
        }
    }
    back
}

/// Back-edges whose check can move in front of the loop: loops with no block that updates a flag
/// (`marked`), entered only through their header. Inside such a loop the flags keep the value
/// they had on entry, so a check before entering traps exactly when the one at the back-edge
/// would have, only earlier. A predicated trap inside the loop body is a scheduling barrier to
/// ptxas (the n-body inner loop: 356 stall cycles per iteration against 268 without it).
/// Returns, per block, whether its back-edge check is dropped, and whether it needs a check
/// before its terminator because it enters such a loop.
fn hoistable_loop_checks(succ: &[Vec<usize>], back: &[Vec<usize>], marked: &[usize]) -> (Vec<bool>, Vec<bool>) {
    let n = succ.len();
    let mut preds = vec![Vec::new(); n];
    for (b, ss) in succ.iter().enumerate() {
        for &s in ss {
            preds[s].push(b);
        }
    }
    let mut dropped = vec![false; n];
    let mut entries = vec![false; n];
    for (latch, headers) in back.iter().enumerate() {
        if headers.is_empty() {
            continue;
        }
        let mut all_quiet = true;
        let mut to_check = Vec::new();
        for &header in headers {
            // The natural loop: the header and every block that reaches the latch without it.
            let mut body = vec![false; n];
            body[header] = true;
            let mut work = vec![latch];
            while let Some(b) = work.pop() {
                if !body[b] {
                    body[b] = true;
                    work.extend(preds[b].iter().copied());
                }
            }
            let single_entry = (0..n).filter(|&b| body[b] && b != header).all(|b| preds[b].iter().all(|&p| body[p]));
            let quiet = !marked.iter().any(|&b| body[b]);
            if !(single_entry && quiet && header != 0) {
                all_quiet = false;
                break;
            }
            to_check.extend(preds[header].iter().copied().filter(|&p| !body[p]));
        }
        if all_quiet {
            dropped[latch] = true;
            for p in to_check {
                entries[p] = true;
            }
        }
    }
    (dropped, entries)
}

/// A call of a function that is not an LLVM intrinsic, the marker or inline asm: the callee may
/// not return, so a pending failure must trap before it.
fn is_real_call(line: &str) -> bool {
    let t = line.trim_start();
    let call = t.contains(" call ") || t.starts_with("call ") || t.contains("tail call ");
    call && !t.contains("@llvm.") && !t.contains(&format!("@{MARKER}(")) && !t.contains(" asm ") && t.contains('@')
}

/// The address operand of a plain `load` or `store` line, if it is one.
fn access_address(line: &str) -> Option<&str> {
    let t = line.trim_start();
    let is_access = t.starts_with("store ") || (t.contains(" = load ") && !t.contains(" = load atomic"));
    if !is_access || t.contains("volatile") {
        return None;
    }
    let at = t.rfind("ptr ")?;
    let rest = t[at + 4..].trim_start_matches(|c: char| c != '%' && c != ',');
    value_names(rest).first().copied()
}

/// Markers whose failure is certain to stop the thread anyway: an access in the marker's own
/// block goes through an address that a `select` on the marker's flag poisoned (not a stack
/// address), so if the check failed that access faults. Keeping their flags would tie each guarded access to a flag update
/// that ptxas then orders before the next load.
fn covered_markers(blocks: &[Block<'_>]) -> Vec<(usize, usize)> {
    // Definitions: value -> operands (for selects, only the condition matters).
    let mut selects_on: HashMap<&str, Vec<&str>> = HashMap::new();
    let mut derived: HashMap<&str, Vec<&str>> = HashMap::new();
    // Stack slots: a poisoned address in local memory is not certain to fault.
    let mut allocas: HashSet<&str> = HashSet::new();
    for block in blocks {
        for line in &block.lines {
            let t = line.trim_start();
            let Some((lhs, rhs)) = t.split_once(" = ") else { continue };
            if !lhs.starts_with('%') {
                continue;
            }
            let ops = value_names(rhs);
            if rhs.starts_with("alloca ") {
                allocas.insert(lhs);
            } else if rhs.starts_with("select i1 ") {
                if let Some(&cond) = ops.first() {
                    selects_on.entry(cond).or_default().push(lhs);
                }
                derived.entry(lhs).or_default().extend(ops.iter().skip(1).copied());
            } else if rhs.starts_with("getelementptr") || rhs.starts_with("addrspacecast") || rhs.starts_with("bitcast")
            {
                derived.entry(lhs).or_default().extend(ops);
            }
        }
    }
    let mut covered = Vec::new();
    for (bi, block) in blocks.iter().enumerate() {
        for (li, line) in block.lines.iter().enumerate() {
            if !is_marker_call(line) {
                continue;
            }
            let operand = line.split(&format!("@{MARKER}(")).nth(1).and_then(|r| r.split(')').next()).unwrap_or("");
            let Some(flag) = value_names(operand).first().copied() else { continue };
            let poisoned: HashSet<&str> = selects_on.get(flag).into_iter().flatten().copied().collect();
            if poisoned.is_empty() {
                continue;
            }
            // Is an address in this block computed from one of the poisoned values (and not an
            // address of the stack)?
            let from_poison = |addr: &str| {
                let mut stack = vec![addr];
                let mut seen = HashSet::new();
                let mut poisoned_here = false;
                while let Some(v) = stack.pop() {
                    if allocas.contains(v) {
                        return false;
                    }
                    poisoned_here |= poisoned.contains(v);
                    if seen.insert(v) {
                        stack.extend(derived.get(v).into_iter().flatten().copied());
                    }
                }
                poisoned_here
            };
            if block.lines.iter().filter_map(|l| access_address(l)).any(from_poison) {
                covered.push((bi, li));
            }
        }
    }
    covered
}

fn rewrite_function(body: &[&str], counter: &mut usize) -> Vec<String> {
    let blocks = split_blocks(body);
    let succ = successor_indices(&blocks);
    let back_targets = back_edges(&succ);
    let covered = covered_markers(&blocks);
    // One flag per block with markers, not one for the function: a single flag would be a chain
    // through every guarded block (`if c { flag |= oob }` becomes a predicated update of the
    // same register), which keeps ptxas from moving the guarded loads of an unrolled loop
    // ahead of the stores before them. Separate flags are independent; the trap ORs them. They
    // are `i32`, not `i1`: as predicates they would crowd the seven predicate registers that the
    // guards of those loads need.
    // A marker that `opt` proved to pass (`i1 false`) updates nothing.
    let flagged = |b: usize, l: usize| {
        let line = blocks[b].lines[l];
        is_marker_call(line) && !covered.contains(&(b, l)) && !line.contains(&format!("@{MARKER}(i1 false)"))
    };
    let marked: Vec<usize> = (0..blocks.len()).filter(|&b| (0..blocks[b].lines.len()).any(|l| flagged(b, l))).collect();
    let (dropped, enters_quiet_loop) = hoistable_loop_checks(&succ, &back_targets, &marked);
    let back: Vec<bool> = (0..blocks.len()).map(|b| !back_targets[b].is_empty() && !dropped[b]).collect();
    let slot = |b: usize| format!("{FLAG}.{b}");
    let mut out = Vec::with_capacity(body.len() + 16);
    let check = |out: &mut Vec<String>, counter: &mut usize| {
        *counter += 1;
        let n = *counter;
        let mut acc = String::from("0");
        for (k, &b) in marked.iter().enumerate() {
            out.push(format!("  %oxide.chk{n}.{k} = load i32, ptr {}, align 4", slot(b)));
            if k == 0 {
                acc = format!("%oxide.chk{n}.0");
            } else {
                out.push(format!("  %oxide.any{n}.{k} = or i32 {acc}, %oxide.chk{n}.{k}"));
                acc = format!("%oxide.any{n}.{k}");
            }
        }
        out.push(format!("  %oxide.fail{n} = icmp ne i32 {acc}, 0"));
        out.push(format!("  {TRAP_IF}(i1 %oxide.fail{n})"));
    };
    for (bi, block) in blocks.iter().enumerate() {
        if let Some(label) = &block.label {
            out.push(format!("{label}:"));
        }
        if bi == 0 {
            for &b in &marked {
                out.push(format!("  {} = alloca i32, align 4", slot(b)));
                out.push(format!("  store i32 0, ptr {}, align 4", slot(b)));
            }
        }
        let term = terminator_start(&block.lines);
        // The block's failures as one `i1` (`or` of its markers' flags, which instcombine can
        // fold: the checks of an unrolled body often reduce to one compare), merged into the
        // block's slot before the terminator (and before a call, which is checked).
        let mut acc: Option<String> = None;
        // A block that enters a loop without markers checks before its last barrier when that
        // comes after its markers: ptxas schedules the loop worse when a predicated trap sits
        // between the barrier and the loop (n-body: 338 stall cycles per iteration against 254).
        let last_marker = block.lines.iter().rposition(|l| is_marker_call(l));
        let early_check = enters_quiet_loop[bi]
            .then(|| block.lines.iter().rposition(|l| l.contains("@llvm.nvvm.barrier")))
            .flatten()
            .filter(|&b| last_marker.is_none_or(|m| m < b));
        for (li, line) in block.lines.iter().enumerate() {
            if covered.contains(&(bi, li)) {
                // Its access faults if the check failed (see `covered_markers`).
                continue;
            }
            if is_marker_call(line) && !flagged(bi, li) {
                continue;
            }
            if is_marker_call(line) {
                let operand = line.split(&format!("@{MARKER}(")).nth(1).and_then(|r| r.split(')').next()).unwrap_or("");
                let value = operand.trim().strip_prefix("i1 ").unwrap_or("true");
                acc = Some(match acc.take() {
                    None => value.to_string(),
                    Some(prev) => {
                        *counter += 1;
                        out.push(format!("  %oxide.any{n} = or i1 {prev}, {value}", n = *counter));
                        format!("%oxide.any{}", *counter)
                    }
                });
                continue;
            }
            let at_term = Some(li) == term;
            let early = Some(li) == early_check;
            if (at_term || early || is_real_call(line))
                && let Some(bits) = acc.take()
            {
                *counter += 1;
                let n = *counter;
                out.push(format!("  %oxide.old{n} = load i32, ptr {}, align 4", slot(bi)));
                out.push(format!("  %oxide.bit{n} = zext i1 {bits} to i32"));
                out.push(format!("  %oxide.new{n} = or i32 %oxide.old{n}, %oxide.bit{n}"));
                out.push(format!("  store i32 %oxide.new{n}, ptr {}, align 4", slot(bi)));
            }
            let returns = at_term && line.trim_start().starts_with("ret ");
            let enters = if early_check.is_some() { early } else { at_term && enters_quiet_loop[bi] };
            if (at_term && back[bi]) || enters || returns || is_real_call(line) {
                check(&mut out, counter);
            }
            out.push(line.to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::ir_functions::{block_label, successors};
    use super::*;

    const LOOP: &str = "define void @k(ptr %a, i64 %n) {
entry:
  br label %loop

loop:                                             ; preds = %loop, %entry
  %i = phi i64 [ 0, %entry ], [ %j, %loop ]
  %oob = icmp uge i64 %i, %n
  tail call void @__oxide_bounds_fail_if(i1 %oob) #2
  %j = add i64 %i, 1
  %c = icmp ult i64 %j, 8
  br i1 %c, label %loop, label %exit

exit:                                             ; preds = %loop
  call void @vprintf(ptr null, ptr null)
  ret void
}
declare void @__oxide_bounds_fail_if(i1) #2
";

    #[test]
    fn markers_become_a_flag_checked_at_back_edges_calls_and_returns() {
        assert!(needed(LOOP));
        let out = place(LOOP);
        assert!(!out.contains("call void @__oxide_bounds_fail_if"), "{out}");
        assert!(out.contains("declare void @__oxide_bounds_fail_if(i1) #2"), "{out}");
        assert!(out.contains("entry:\n  %oxide.oob.1 = alloca i32"), "{out}");
        assert!(out.contains("%oxide.bit1 = zext i1 %oob to i32"), "{out}");
        assert!(out.contains("store i32 %oxide.new1, ptr %oxide.oob.1"), "{out}");
        // One check before the back-edge, one before the call, one before the return.
        assert_eq!(out.matches("@$0 trap;").count(), 3, "{out}");
        let back_edge = out.find("br i1 %c, label %loop").unwrap();
        assert!(out[..back_edge].trim_end().ends_with("(i1 %oxide.fail2)"), "{out}");
    }

    #[test]
    fn a_loop_without_markers_is_checked_before_it_is_entered() {
        // The marker is before the inner loop: its flag cannot change inside it.
        let f = "define void @k(i64 %i, i64 %n) {
entry:
  %oob = icmp uge i64 %i, %n
  tail call void @__oxide_bounds_fail_if(i1 %oob) #2
  br label %inner

inner:
  %j = phi i64 [ 0, %entry ], [ %k, %inner ]
  %k = add i64 %j, 1
  %c = icmp ult i64 %k, 8
  br i1 %c, label %inner, label %exit

exit:
  ret void
}
";
        let out = place(f);
        let inner = out.find("inner:").unwrap();
        let exit = out.find("exit:").unwrap();
        assert!(!out[inner..exit].contains("trap;"), "a check remains in the loop:\n{out}");
        // One check where the loop is entered (after the flag update), one at the return.
        assert_eq!(out.matches("@$0 trap;").count(), 2, "{out}");
        let store = out.find("store i32 %oxide.new").unwrap();
        let first_trap = out.find("@$0 trap;").unwrap();
        assert!(store < first_trap && first_trap < inner, "{out}");
        // After a barrier that follows the markers, the check goes before the barrier.
        let barrier = f.replace(
            "  br label %inner\n",
            "  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)\n  br label %inner\n",
        );
        let out = place(&barrier);
        let trap = out.find("@$0 trap;").unwrap();
        assert!(trap < out.find("@llvm.nvvm.barrier").unwrap(), "{out}");
        // A marker in the loop that `opt` proved to pass does not count.
        let proven = f.replace(
            "  %k = add i64 %j, 1\n",
            "  tail call void @__oxide_bounds_fail_if(i1 false) #2\n  %k = add i64 %j, 1\n",
        );
        let out = place(&proven);
        assert!(!out[out.find("inner:").unwrap()..out.find("exit:").unwrap()].contains("trap;"), "{out}");
        // With the marker inside the loop, the back-edge keeps its check (the first test).
        assert!(place(LOOP)[place(LOOP).find("loop:").unwrap()..].contains("trap;"));
    }

    #[test]
    fn markers_of_poisoned_accesses_need_no_flag() {
        let f = "define void @k(ptr %a, i64 %i, i64 %n) {
entry:
  %oob = icmp uge i64 %i, %n
  %j = select i1 %oob, i64 2305843009750564864, i64 %i
  %p = getelementptr float, ptr %a, i64 %j
  br label %body

body:
  tail call void @__oxide_bounds_fail_if(i1 %oob)
  %v = load float, ptr %p, align 4
  tail call void @__oxide_bounds_fail_if(i1 %oob2)
  ret void
}
";
        let out = place(f);
        // The first marker's access faults on failure: no flag; the second has no access.
        assert!(!out.contains("zext i1 %oob to"), "{out}");
        assert!(out.contains("zext i1 %oob2 to i32"), "{out}");
        // The same through a stack slot keeps its flag: local memory need not fault.
        let stack = f.replace(
            "%p = getelementptr float, ptr %a, i64 %j",
            "%s = alloca [8 x float]\n  %p = getelementptr float, ptr %s, i64 %j",
        );
        assert!(place(&stack).contains("or i1 %oob, %oob2"), "{}", place(&stack));
        assert_eq!(access_address("  store float %v, ptr addrspace(1) %q, align 4"), Some("%q"));
        assert_eq!(access_address("  %x = load ptr, ptr %p.1, align 8"), Some("%p.1"));
        assert_eq!(access_address("  %x = add i32 1, 2"), None);
    }

    #[test]
    fn traps_on_a_false_flag_are_dropped() {
        let m = format!("  {TRAP_IF}(i1 false) #8\n  tail {TRAP_IF}(i1 false)\n  {TRAP_IF}(i1 %f)\n  ret void\n");
        assert_eq!(drop_dead_traps_text(&m), format!("  {TRAP_IF}(i1 %f)\n  ret void\n"));
    }

    #[test]
    fn labels_and_successors() {
        assert_eq!(block_label("bb7.16.i:      ; preds = %start"), Some("bb7.16.i".into()));
        assert_eq!(block_label("12:"), Some("12".into()));
        assert_eq!(block_label("  %x = add i32 1, 2"), None);
        assert_eq!(block_label("\"a b\":"), Some("\"a b\"".into()));
        assert_eq!(successors("  br i1 %c, label %a.1, label %\"x y\""), vec!["a.1", "\"x y\""]);
        assert_eq!(
            terminator_start(&["  %x = add i32 1, 2", "  switch i32 %x, label %d [", "    i32 0, label %a", "  ]"]),
            Some(1)
        );
        // oxide-fuzz 3:183: a switch with branch weights ends in `], !prof !3`.
        assert_eq!(terminator_start(&["  switch i16 %v, label %d [", "    i16 0, label %a", "  ], !prof !3"]), Some(0));
    }

    #[test]
    fn functions_without_markers_are_unchanged() {
        let m = "define void @f() {\n  ret void\n}\n";
        assert!(!needed(m));
        assert_eq!(place(m), m);
    }
}
