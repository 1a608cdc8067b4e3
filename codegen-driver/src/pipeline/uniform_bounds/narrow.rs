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

use super::body::Body;
use crate::pipeline::ir::{BinOp, CastOp, Flags, I32, I64, Inst, Op, Value};

/// Deepest expression rewritten.
const DEPTH: usize = 16;

/// Whether `idx` (an `i64`) is an expression the module docs rewrite and worth it: one with a
/// product of two variables (a row-major `y * w + x`, whose 64-bit multiply costs two
/// instructions and its sums two each), and not a sum with a constant (`c + 1`: in 64 bits the
/// constant folds into the address's immediate offset; in 32 bits it would need its own).
pub(super) fn narrowable(body: &Body<'_>, idx: &Value) -> bool {
    let with_constant = |a: &Value, b: &Value| a.as_int(&I64).is_some() || b.as_int(&I64).is_some();
    match body.inst(idx) {
        Some(Op::Bin { op: BinOp::Add | BinOp::Sub | BinOp::Or, a, b, .. }) if with_constant(a, b) => false,
        Some(Op::Bin { .. }) => {
            has_product(body, idx, 0) && emit_u32(body, idx, &mut String::new, &mut Vec::new()).is_some()
        }
        _ => false,
    }
}

/// Whether `v`'s expression multiplies two non-constant values.
fn has_product(body: &Body<'_>, v: &Value, depth: usize) -> bool {
    if depth > DEPTH {
        return false;
    }
    match body.inst(v) {
        Some(Op::Bin { op: BinOp::Mul, a, b, .. }) if a.as_int(&I64).is_none() && b.as_int(&I64).is_none() => true,
        Some(Op::Bin { a, b, .. }) => has_product(body, a, depth + 1) || has_product(body, b, depth + 1),
        _ => false,
    }
}

/// Appends to `out` the `i32` instructions computing `v`'s low 32 bits (named by `fresh`) and
/// returns the value, in the body's own names; `None` where `v` is not such an expression
/// (module docs: operations that commute with truncation, leaves that are zero-extended `i32`s
/// or constants, at most `DEPTH` deep).
pub(super) fn emit_u32(
    body: &Body<'_>,
    v: &Value,
    fresh: &mut dyn FnMut() -> String,
    out: &mut Vec<Inst>,
) -> Option<Value> {
    emit_at(body, v, fresh, out, 0)
}

fn emit_at(
    body: &Body<'_>,
    v: &Value,
    fresh: &mut dyn FnMut() -> String,
    out: &mut Vec<Inst>,
    depth: usize,
) -> Option<Value> {
    if let Some(c) = v.as_int(&I64) {
        return Some(Value::int(c, &I32));
    }
    if depth > DEPTH {
        return None;
    }
    let (op, a, b) = match body.inst(v)? {
        Op::Cast { op: CastOp::ZExt, from, a, .. } if *from == I32 => return Some(a.clone()),
        Op::Bin {
            op: op @ (BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::And | BinOp::Or | BinOp::Xor),
            ty,
            a,
            b,
            ..
        } if *ty == I64 => (*op, a, b),
        // By a constant below 32: the 32-bit shift is defined and keeps the low bits.
        Op::Bin { op: BinOp::Shl, ty, a, b, .. } if *ty == I64 && b.as_int(&I64).is_some_and(|k| k < 32) => {
            (BinOp::Shl, a, b)
        }
        _ => return None,
    };
    let a = emit_at(body, a, fresh, out, depth + 1)?;
    let b = emit_at(body, b, fresh, out, depth + 1)?;
    let name = fresh();
    out.push(Inst::assign(&name, Op::Bin { op, flags: Flags::NONE, ty: I32, a, b }));
    Some(Value::Local(name))
}
