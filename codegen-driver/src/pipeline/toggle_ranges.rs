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
//! `instcombine` run folds the checks (`pipeline/llvm.rs`), before the deferred traps are placed.

use super::ir::Module;
use super::ir_functions::{is_plain_name, strip_metadata};
use super::passes::{State, on_text};
use std::collections::{HashMap, HashSet};

/// The pass (`passes.rs`): in a module with deferred bounds checks.
pub fn run(module: &mut Module, _: &mut State) -> bool {
    if !super::deferred_traps::needed(module) {
        return false;
    }
    on_text(module, |text| add_facts(text).unwrap_or_else(|| text.to_string()))
}

/// The module with an `llvm.assume(phi < 2)` after the phis of each block that has a 0-or-1 phi
/// (see the module docs), and the assume's declaration if it was missing; `None` when no phi
/// qualifies.
pub fn add_facts(module: &str) -> Option<String> {
    let mut counter = 0usize;
    let out = super::ir_functions::rewrite_bodies(module, |body| rewrite_function(body, &mut counter));
    if counter == 0 {
        return None;
    }
    let mut out = out;
    if !out.contains("declare void @llvm.assume(") {
        out.push_str("\ndeclare void @llvm.assume(i1 noundef)\n");
    }
    Some(out)
}

/// One integer phi: its line, name, type and incoming values.
struct Phi<'a> {
    line: usize,
    name: &'a str,
    ty: &'a str,
    incoming: Vec<&'a str>,
}

fn rewrite_function(body: &[&str], counter: &mut usize) -> Vec<String> {
    let mut defs: HashMap<&str, &str> = HashMap::new();
    let mut phis: Vec<Phi<'_>> = Vec::new();
    for (i, l) in body.iter().enumerate() {
        let Some((lhs, rhs)) = l.trim_start().split_once(" = ") else { continue };
        if !is_plain_name(lhs) {
            continue;
        }
        defs.insert(lhs, rhs);
        if let Some(phi) = parse_phi(i, lhs, rhs) {
            phis.push(phi);
        }
    }
    // The greatest fixed point: drop phis with an incoming value that is not a bit value until
    // none is left to drop.
    let mut set: HashSet<&str> = phis.iter().map(|p| p.name).collect();
    loop {
        let before = set.len();
        let keep: HashSet<&str> = phis
            .iter()
            .filter(|p| set.contains(p.name) && p.incoming.iter().all(|v| is_bit_value(v, &defs, &set, 0)))
            .map(|p| p.name)
            .collect();
        set = keep;
        if set.len() == before {
            break;
        }
    }
    // Only the phis whose range LLVM does not already see (a phi of constants it does).
    let facts: Vec<&Phi<'_>> = phis
        .iter()
        .filter(|p| set.contains(p.name) && p.ty != "i1" && p.incoming.iter().any(|v| v.parse::<u64>().is_err()))
        .collect();
    if facts.is_empty() {
        return body.iter().map(|l| l.to_string()).collect();
    }
    // Each fact goes after the last phi (or debug record) of its phi's block.
    let mut after: HashMap<usize, Vec<String>> = HashMap::new();
    for p in facts {
        let last = (p.line..body.len())
            .take_while(|&l| {
                let t = body[l].trim_start();
                t.contains(" = phi ") || t.starts_with("#dbg")
            })
            .last()
            .unwrap_or(p.line);
        *counter += 1;
        let n = *counter;
        let lines = after.entry(last).or_default();
        lines.push(format!("  %oxide.bit{n} = icmp ult {} {}, 2", p.ty, p.name));
        lines.push(format!("  call void @llvm.assume(i1 %oxide.bit{n})"));
    }
    let mut out = Vec::with_capacity(body.len() + 2 * after.len());
    for (i, line) in body.iter().enumerate() {
        out.push(line.to_string());
        out.extend(after.remove(&i).unwrap_or_default());
    }
    out
}

/// `phi iN [ v, %b ], …` with `N` an integer width.
fn parse_phi<'a>(line: usize, name: &'a str, rhs: &'a str) -> Option<Phi<'a>> {
    let rest = rhs.strip_prefix("phi ")?;
    let (ty, rest) = rest.split_once(' ')?;
    ty.strip_prefix('i')?.parse::<u32>().ok()?;
    let rest = strip_metadata(rest);
    let incoming = rest
        .split("], ")
        .map(|e| {
            let e = e.trim().trim_start_matches('[').trim_end_matches(']').trim();
            e.split_once(", ").map(|(v, _)| v.trim())
        })
        .collect::<Option<Vec<_>>>()?;
    Some(Phi { line, name, ty, incoming })
}

/// Deepest expression followed from one incoming value (the unrolled bodies stay shallow).
const MAX_DEPTH: usize = 8;

/// Whether `v` is 0 or 1 whenever the phis of `set` are (module docs).
fn is_bit_value(v: &str, defs: &HashMap<&str, &str>, set: &HashSet<&str>, depth: usize) -> bool {
    if v == "0" || v == "1" || v == "true" || v == "false" {
        return true;
    }
    if set.contains(v) {
        return true;
    }
    if depth >= MAX_DEPTH || !is_plain_name(v) {
        return false;
    }
    let Some(rhs) = defs.get(v) else { return false };
    let rhs = strip_metadata(rhs);
    let bit = |x: &str| is_bit_value(x, defs, set, depth + 1);
    let (op, rest) = rhs.split_once(' ').unwrap_or((rhs, ""));
    match op {
        "xor" | "or" => {
            let Some((a, b)) = binary_operands(rest) else { return false };
            bit(a) && bit(b)
        }
        "sub" => {
            // `sub 1, b` (flags are harmless: 1 - b neither wraps nor overflows for b ∈ {0, 1}).
            let rest = strip_flags(rest, &["nuw", "nsw"]);
            let Some((a, b)) = binary_operands(rest) else { return false };
            a == "1" && bit(b)
        }
        "and" => {
            let Some((a, b)) = binary_operands(rest) else { return false };
            (bit(a) && b.parse::<u64>().is_ok()) || (bit(b) && a.parse::<u64>().is_ok())
        }
        "zext" | "trunc" => {
            let rest = strip_flags(rest, &["nneg", "nuw", "nsw"]);
            // `zext i32 %b to i64`
            let Some((_, after_ty)) = rest.split_once(' ') else { return false };
            let Some((x, _)) = after_ty.split_once(" to ") else { return false };
            bit(x.trim())
        }
        _ => false,
    }
}

/// `iN %a, %b` → (`%a`, `%b`); `None` for vectors or a flag this module does not accept
/// (`or disjoint` is poison when both bits are set).
fn binary_operands(rest: &str) -> Option<(&str, &str)> {
    let (ty, ops) = rest.split_once(' ')?;
    ty.strip_prefix('i')?.parse::<u32>().ok()?;
    let (a, b) = ops.split_once(", ")?;
    Some((a.trim(), b.trim()))
}

fn strip_flags<'a>(mut rest: &'a str, flags: &[&str]) -> &'a str {
    while let Some(f) = flags.iter().find(|f| rest.starts_with(&format!("{f} "))) {
        rest = &rest[f.len() + 1..];
    }
    rest
}
#[cfg(test)]
mod tests {
    use super::add_facts;

    /// A loop whose `%buf` starts at `start` and becomes `next` each iteration (`%buf.next`'s
    /// definition), used in an index.
    fn kernel(start: &str, next: &str) -> String {
        format!(
            "define void @k(ptr %p, i64 %n) {{\nstart:\n  br label %loop\n\nloop:                 ; preds = %loop, %start\n  \
             %i = phi i64 [ 0, %start ], [ %i.next, %loop ]\n  \
             %buf = phi i64 [ {start}, %start ], [ %buf.next, %loop ], !dbg !3\n  \
             %at = shl i64 %buf, 10\n  %a = getelementptr float, ptr %p, i64 %at\n  \
             store float 0.0, ptr %a, align 4\n  %buf.next = {next}\n  %i.next = add nuw i64 %i, 1\n  \
             %done = icmp eq i64 %i.next, %n\n  br i1 %done, label %exit, label %loop\n\nexit:\n  ret void\n}}\n"
        )
    }

    const FACT: &str = "  %buf = phi i64 [ 0, %start ], [ %buf.next, %loop ], !dbg !3\n  \
                        %oxide.bit1 = icmp ult i64 %buf, 2\n  call void @llvm.assume(i1 %oxide.bit1)\n  %at = shl";

    #[test]
    fn a_toggled_index_gets_its_range() {
        for next in ["xor i64 %buf, 1", "xor i64 1, %buf", "sub i64 1, %buf", "sub nuw nsw i64 1, %buf"] {
            let out = add_facts(&kernel("0", next)).expect(next);
            assert!(out.contains(FACT), "{next}:\n{out}");
            assert!(out.ends_with("declare void @llvm.assume(i1 noundef)\n"), "{out}");
            assert!(!out.contains("%i = phi i64 [ 0, %start ], [ %i.next, %loop ]\n  %oxide"), "{out}");
        }
        let out = add_facts(&kernel("1", "xor i64 %buf, 1")).unwrap();
        assert!(out.contains("%oxide.bit1 = icmp ult i64 %buf, 2"), "{out}");
    }

    #[test]
    fn toggles_through_casts_and_other_phis_qualify() {
        // `buf ^ 1` computed in 32 bits, and a second phi that forwards the first.
        let input = kernel("0", "zext i32 %t1 to i64")
            .replace("  %i.next = add", "  %t0 = trunc nuw i64 %buf to i32\n  %t1 = xor i32 %t0, 1\n  %i.next = add")
            .replace("exit:\n  ret void", "exit:\n  %last = phi i64 [ %buf.next, %loop ]\n  ret void");
        let out = add_facts(&input).unwrap();
        assert!(out.contains("%oxide.bit1 = icmp ult i64 %buf, 2"), "{out}");
        assert!(out.contains("%last = phi i64 [ %buf.next, %loop ]\n  %oxide.bit2 = icmp ult i64 %last, 2"), "{out}");
        // The declaration is added once only.
        let declared = format!("{input}declare void @llvm.assume(i1 noundef)\n");
        assert_eq!(add_facts(&declared).unwrap().matches("declare void @llvm.assume").count(), 1);
    }

    #[test]
    fn phis_that_can_take_other_values_get_nothing() {
        for (start, next) in [
            // Starts at 2; steps by 2; xor with 3; 2 - buf; a sum; `or disjoint` (poison at 1 | 1);
            // an and with a runtime value; a value from memory; undef.
            ("2", "xor i64 %buf, 1"),
            ("0", "add i64 %buf, 1"),
            ("0", "xor i64 %buf, 3"),
            ("0", "sub i64 2, %buf"),
            ("0", "or disjoint i64 %buf, 1"),
            ("0", "and i64 %buf, %n"),
            ("0", "load i64, ptr %p, align 8"),
            ("undef", "xor i64 %buf, 1"),
        ] {
            let input = kernel(start, next);
            assert_eq!(add_facts(&input), None, "{start}, {next}");
        }
        // A phi fed by a counter (not in the set) through xor.
        let input = kernel("0", "xor i64 %buf, %i");
        assert_eq!(add_facts(&input), None);
        // A phi of constants only: LLVM knows its range already.
        let input = kernel("0", "xor i64 %buf, 1").replace("[ %buf.next, %loop ]", "[ 1, %loop ]");
        assert_eq!(add_facts(&input), None);
    }
}
