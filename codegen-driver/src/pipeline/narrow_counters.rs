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

use super::ir::Module;
use super::ir_functions::{is_plain_name, strip_metadata};
use super::passes::{State, on_text};
use std::collections::HashMap;

/// The pass (`passes.rs`).
pub fn run(module: &mut Module, _: &mut State) -> bool {
    on_text(module, narrow)
}

/// The module with each such counter narrowed (see the module docs).
pub fn narrow(module: &str) -> String {
    super::ir_functions::rewrite_bodies(module, rewrite_function)
}

/// A counter found in a function: the lines to change and how.
struct Counter<'a> {
    phi_line: usize,
    next_line: usize,
    cmp_line: usize,
    iv: &'a str,
    next: &'a str,
    start: u64,
    step: u64,
    end: u64,
    /// `[ S, %pre ], [ %next, %latch ]` with the blocks, in the phi's order.
    incoming: Vec<(String, &'a str)>,
    cmp_name: &'a str,
    cmp_pred: &'a str,
}

fn rewrite_function<'a>(body: &[&'a str]) -> Vec<String> {
    // Value definitions: name -> (line, right-hand side).
    let mut defs: HashMap<&str, (usize, &str)> = HashMap::new();
    // Block of each line, and each block's label.
    let mut block_of = Vec::with_capacity(body.len());
    let mut label = String::from("0");
    for (i, l) in body.iter().enumerate() {
        if !l.starts_with(' ')
            && !l.is_empty()
            && !l.starts_with(';')
            && let Some(name) = l.split(':').next()
        {
            label = name.to_string();
        }
        block_of.push(label.clone());
        if let Some((lhs, rhs)) = l.trim_start().split_once(" = ")
            && is_plain_name(lhs)
        {
            defs.insert(lhs, (i, rhs));
        }
    }
    let counters: Vec<Counter<'a>> = (0..body.len()).filter_map(|i| counter_at(body, i, &defs, &block_of)).collect();
    if counters.is_empty() {
        return body.iter().map(|l| l.to_string()).collect();
    }
    let mut replaced: HashMap<usize, Vec<String>> = HashMap::new();
    let mut after_phis: HashMap<usize, Vec<String>> = HashMap::new();
    for c in &counters {
        let n32 = |v: &str| format!("{v}.n32");
        let incoming: Vec<String> = c
            .incoming
            .iter()
            .map(|(v, b)| {
                let v = if *v == c.next { n32(c.next) } else { v.clone() };
                format!("[ {v}, {b} ]")
            })
            .collect();
        replaced.insert(c.phi_line, vec![format!("  {} = phi i32 {}", n32(c.iv), incoming.join(", "))]);
        // The zero-extended counter goes after the header's last phi.
        let last_phi = (c.phi_line..body.len())
            .take_while(|&l| body[l].trim_start().contains(" = phi ") || body[l].trim_start().starts_with("#dbg"))
            .last()
            .unwrap_or(c.phi_line);
        after_phis.entry(last_phi).or_default().push(format!("  {} = zext nneg i32 {} to i64", c.iv, n32(c.iv)));
        replaced.insert(
            c.next_line,
            vec![
                format!("  {} = add nuw nsw i32 {}, {}", n32(c.next), n32(c.iv), c.step),
                format!("  {} = zext nneg i32 {} to i64", c.next, n32(c.next)),
            ],
        );
        replaced
            .insert(c.cmp_line, vec![format!("  {} = icmp {} i32 {}, {}", c.cmp_name, c.cmp_pred, n32(c.next), c.end)]);
        debug_assert!(c.start <= c.end);
    }
    let mut out = Vec::with_capacity(body.len() + 2 * counters.len());
    for (i, line) in body.iter().enumerate() {
        match replaced.remove(&i) {
            Some(lines) => out.extend(lines),
            None => out.push(line.to_string()),
        }
        out.extend(after_phis.remove(&i).unwrap_or_default());
    }
    out
}

/// The counter whose phi is on line `at`, if it is one (module docs).
fn counter_at<'a>(
    body: &[&'a str],
    at: usize,
    defs: &HashMap<&'a str, (usize, &'a str)>,
    block_of: &[String],
) -> Option<Counter<'a>> {
    let (iv, rhs) = body[at].trim_start().split_once(" = ")?;
    if !is_plain_name(iv) {
        return None;
    }
    let rest = strip_metadata(rhs.strip_prefix("phi i64 ")?);
    let incoming: Vec<(&str, &str)> = rest
        .split("], ")
        .map(|e| {
            let e = e.trim().trim_start_matches('[').trim_end_matches(']').trim();
            e.split_once(", ").map(|(v, b)| (v.trim(), b.trim()))
        })
        .collect::<Option<_>>()?;
    let [(a, a_block), (b, b_block)] = incoming[..] else { return None };
    let (start, next, latch) = match (a.parse::<u64>(), b.parse::<u64>()) {
        (Ok(s), Err(_)) => (s, b, b_block),
        (Err(_), Ok(s)) => (s, a, a_block),
        _ => return None,
    };
    let &(next_line, next_rhs) = defs.get(next)?;
    let step_text = strip_metadata(next_rhs)
        .strip_prefix("add nuw nsw i64 ")
        .or_else(|| strip_metadata(next_rhs).strip_prefix("add nuw i64 "))?
        .strip_prefix(iv)?
        .strip_prefix(", ")?;
    let step: u64 = step_text.parse().ok().filter(|&s| s > 0)?;
    // The latch: ends in `br i1 %c, label %x, label %y`, one of which is the header.
    let header = format!("%{}", block_of[at]);
    if format!("%{}", latch.trim_start_matches('%')) != latch || block_of[next_line] != latch.trim_start_matches('%') {
        return None;
    }
    let br = (next_line..body.len())
        .take_while(|&l| block_of[l] == block_of[next_line])
        .filter(|&l| !body[l].trim().is_empty())
        .last()?;
    let br_text = strip_metadata(body[br].trim_start().strip_prefix("br i1 ")?);
    let [cond, t, f] = br_text.split(", ").collect::<Vec<_>>()[..] else { return None };
    let (t, f) = (t.strip_prefix("label ")?, f.strip_prefix("label ")?);
    let &(cmp_line, cmp_rhs) = defs.get(cond)?;
    let cmp = strip_metadata(cmp_rhs).strip_prefix("icmp ")?;
    let (pred, operands) = cmp.split_once(" i64 ")?;
    let (lhs, rhs) = operands.split_once(", ")?;
    let end: u64 = if lhs == next { rhs.parse().ok()? } else { return None };
    // Leaves exactly when `next == end`: `eq` exits on true, `ne` stays on true.
    let stays = match pred {
        "eq" => f == header && t != header,
        "ne" => t == header && f != header,
        _ => false,
    };
    if !stays || end > i32::MAX as u64 || start >= end || !(end - start).is_multiple_of(step) {
        return None;
    }
    // Other uses of `iv` and `next` keep their `i64` names (zero-extensions of the new counter).
    Some(Counter {
        phi_line: at,
        next_line,
        cmp_line,
        iv,
        next,
        start,
        step,
        end,
        incoming: vec![(a.to_string(), a_block), (b.to_string(), b_block)],
        cmp_name: cond,
        cmp_pred: pred,
    })
}
#[cfg(test)]
mod tests {
    use super::narrow;

    fn kernel(step: u32, end: u32, exit_pred: &str) -> String {
        let (t, f) = if exit_pred == "eq" { ("%exit", "%loop") } else { ("%loop", "%exit") };
        format!(
            "define void @k(ptr %p) {{\nstart:\n  br label %loop\n\nloop:                 ; preds = %loop, %start\n  \
             %j = phi i64 [ 0, %start ], [ %next, %loop ]\n  %a = getelementptr float, ptr %p, i64 %j\n  \
             store float 0.0, ptr %a, align 4\n  %next = add nuw nsw i64 %j, {step}, !dbg !3\n  \
             %done = icmp {exit_pred} i64 %next, {end}\n  br i1 %done, label {t}, label {f}, !llvm.loop !4\n\nexit:\n  ret void\n}}\n"
        )
    }

    #[test]
    fn a_constant_range_counter_becomes_32_bit() {
        let out = narrow(&kernel(8, 128, "eq"));
        for line in [
            "  %j.n32 = phi i32 [ 0, %start ], [ %next.n32, %loop ]\n  %j = zext nneg i32 %j.n32 to i64\n",
            "  %next.n32 = add nuw nsw i32 %j.n32, 8\n  %next = zext nneg i32 %next.n32 to i64\n",
            "  %done = icmp eq i32 %next.n32, 128\n",
        ] {
            assert!(out.contains(line), "{out}");
        }
        let out = narrow(&kernel(1, 64, "ne"));
        assert!(out.contains("  %done = icmp ne i32 %next.n32, 64\n"), "{out}");
    }

    #[test]
    fn counters_that_might_leave_the_range_stay_64_bit() {
        // End past `i32::MAX`, end not reached by the step, exit on the wrong side.
        for input in [
            kernel(8, 1 << 31, "eq"),
            kernel(3, 128, "eq"),
            kernel(8, 128, "eq").replace("label %exit, label %loop", "label %loop, label %exit"),
        ] {
            assert_eq!(narrow(&input), input);
        }
        // An end that is not a constant.
        let runtime = kernel(8, 128, "eq").replace("i64 %next, 128", "i64 %next, %n");
        assert_eq!(narrow(&runtime), runtime);
    }
}
