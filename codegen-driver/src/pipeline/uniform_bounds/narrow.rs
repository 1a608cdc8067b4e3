//! A checked index computed in 32 bits in the fast copy.
//!
//! `input[(y + j) * w + x]` with `usize` coordinates is 64-bit arithmetic: each product a
//! `IMAD.WIDE.U32` plus a high-word `IMAD`, each sum an `IADD3` + `IADD3.X`, each address a
//! 64-bit shift and add. nvcc's `int` index is one `IMAD` per step and one `IMAD.WIDE` per
//! address. In the fast copy the index of a proven check is below its length, and `U` also asks
//! that length to be at most `2^32`: the index fits in 32 bits there. Truncation to 32 bits
//! commutes with `add`, `sub`, `mul`, `shl` by a constant, `and`, `or` and `xor` (arithmetic
//! modulo `2^32`), so the same expression over the 32-bit operands (the values the `zext`s
//! widen, constants truncated) gives the index's low 32 bits, whatever its intermediate values;
//! since the index is below `2^32`, zero-extending them gives the index. Only expressions whose
//! leaves are all zero-extended `i32`s or constants are rewritten (no `trunc` of a 64-bit value:
//! the point is to leave no 64-bit arithmetic behind), and only in the poison select of a proven
//! check, where the index is known to be in bounds.

use super::function::Function;
use super::ir::{Inst, constant};

/// Deepest expression rewritten.
const DEPTH: usize = 16;

/// Whether `idx` (an `i64`) is an expression the module docs rewrite and worth it: one with a
/// product of two variables (a row-major `y * w + x`, whose 64-bit multiply costs two
/// instructions and its sums two each), and not a sum with a constant (`c + 1`: in 64 bits the
/// constant folds into the address's immediate offset; in 32 bits it would need its own).
pub(super) fn narrowable(func: &Function<'_>, idx: &str) -> bool {
    let with_constant = |a: &str, b: &str| constant(a, "i64").is_some() || constant(b, "i64").is_some();
    match func.inst(idx) {
        Some(Inst::Bin { op: "add" | "sub" | "or", a, b, .. }) if with_constant(a, b) => false,
        Some(Inst::Bin { .. }) => {
            has_product(func, idx, 0) && emit_u32(func, idx, "", &mut 0, &mut Vec::new()).is_some()
        }
        _ => false,
    }
}

/// Whether `v`'s expression multiplies two non-constant values.
fn has_product(func: &Function<'_>, v: &str, depth: usize) -> bool {
    if depth > DEPTH {
        return false;
    }
    match func.inst(v) {
        Some(Inst::Bin { op: "mul", a, b, .. }) if constant(a, "i64").is_none() && constant(b, "i64").is_none() => true,
        Some(Inst::Bin { a, b, .. }) => has_product(func, a, depth + 1) || has_product(func, b, depth + 1),
        _ => false,
    }
}

/// Appends to `lines` the `i32` instructions computing `v`'s low 32 bits (named
/// `%{prefix}{n}` with `n` counting up) and returns the value, in the body's own names; `None`
/// where `v` is not such an expression (module docs: operations that commute with truncation,
/// leaves that are zero-extended `i32`s or constants, at most `DEPTH` deep).
pub(super) fn emit_u32(
    func: &Function<'_>,
    v: &str,
    prefix: &str,
    n: &mut usize,
    lines: &mut Vec<String>,
) -> Option<String> {
    emit_at(func, v, prefix, n, lines, 0)
}

fn emit_at(
    func: &Function<'_>,
    v: &str,
    prefix: &str,
    n: &mut usize,
    lines: &mut Vec<String>,
    depth: usize,
) -> Option<String> {
    if let Some(c) = constant(v, "i64") {
        return Some((c as u32 as i32).to_string());
    }
    if depth > DEPTH {
        return None;
    }
    let (op, a, b) = match func.inst(v)? {
        Inst::Cast { op: "zext", from: "i32", a, .. } => return Some(a.to_string()),
        Inst::Bin { op: op @ ("add" | "sub" | "mul" | "and" | "or" | "xor"), ty: "i64", a, b, .. } => (op, a, b),
        // By a constant below 32: the 32-bit shift is defined and keeps the low bits.
        Inst::Bin { op: "shl", ty: "i64", a, b, .. } if constant(b, "i64").is_some_and(|k| k < 32) => ("shl", a, b),
        _ => return None,
    };
    let a = emit_at(func, a, prefix, n, lines, depth + 1)?;
    let b = emit_at(func, b, prefix, n, lines, depth + 1)?;
    *n += 1;
    let name = format!("%{prefix}{n}");
    lines.push(format!("  {name} = {op} i32 {a}, {b}"));
    Some(name)
}
