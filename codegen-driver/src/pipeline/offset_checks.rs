//! After `opt`: checked accesses of one slice at constant offsets from one index share one
//! check, so they share one address register with immediate offsets, as nvcc's code does.
//!
//! `lower/bounds.rs` compiles `x[i + 256 * j]`, unrolled over `j`, to one poisoned index per
//! access:
//!
//! ```text
//! %i1 = or disjoint i64 %i, 256                ; or `add nuw`
//! %ok1 = icmp ult i64 %i1, %len
//! %s1 = select i1 %ok1, i64 %i1, i64 POISON    ; POISON = POISON_OFFSET / element size
//! %a1 = getelementptr float, ptr %x, i64 %s1
//! ```
//!
//! which ptxas turns into a 64-bit add, compare, two selects and a 64-bit address per access
//! (layernorm: 12 accesses, ~100 instructions more than nvcc, bench/notes.md "perf2"). When the
//! access with the largest offset `C` is dereferenced later in the same straight-line stretch,
//! every select with offset `c <= C` becomes `select(i + C < len, i, POISON) + c`: `llc` then
//! computes one address and folds each `c` into the access as an immediate.
//!
//! Why this keeps every guarantee of the checks: if `i + c >= len` then `i + C >= len`, so the
//! access is still poisoned; if only `i + C >= len`, the access at `C` comes later in the same
//! stretch with a poisoned address (nothing between can leave the stretch: no calls other than
//! LLVM intrinsics, no inline asm), so the thread faults anyway — earlier than before, which
//! nothing can observe, since a fault stops the kernel and loses its context (`lower/bounds.rs`).
//! Only poisons of `POISON_OFFSET` itself are matched, and only through addresses of non-stack
//! memory, where a poisoned address is certain to fault. (Not matched: 1-byte elements, whose
//! poison `POISON_OFFSET` has bit 63 set and prints negative, and accesses through a `ptr
//! addrspace(N)`.)

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use super::ir::{BinOp, Callee, CastOp, Edits, Flags, Function, I64, Inst, Module, Namer, Op, Pred, Type, Value};
use super::passes::State;
use crate::markers::{POISON_OFFSET, is_poison_index};

/// Largest `offset × element size` folded (bytes): keeps bit 31 of a poisoned 32-bit shared
/// address set (`POISON_OFFSET` has it) after the offset is added.
const MAX_FOLDED_BYTES: u64 = 1 << 24;

/// The pass (`passes.rs`): the checks of each group of accesses merged (see the module docs).
pub fn run(module: &mut Module, _: &mut State) -> bool {
    // Numbers the merged checks across the module.
    let mut counter = 0usize;
    let mut changed = false;
    for f in module.functions_mut() {
        changed |= merge_function(f, &mut counter);
    }
    changed
}

/// Where each value is defined.
type Defs<'f> = HashMap<&'f str, (usize, usize)>;

/// One poisoned index: `select(i + c < len, i + c, poison)`.
struct Poisoned<'f> {
    /// The select's position in its block.
    at: usize,
    name: &'f str,
    /// The values whose sum, plus `offset`, is the index (sorted by name).
    base_index: Vec<&'f str>,
    offset: u64,
    len: &'f Value,
    poison: u64,
}

impl Poisoned<'_> {
    /// Whether `other` checks the same index (up to the offset) against the same length.
    fn same_check(&self, other: &Poisoned<'_>) -> bool {
        self.base_index == other.base_index && self.len == other.len && self.poison == other.poison
    }
}

fn merge_function(f: &mut Function, counter: &mut usize) -> bool {
    let defs = f.defs();
    let mut namer = Namer::new(f, "oxide.");
    let mut edits = Edits::new();
    for (b, block) in f.blocks.iter().enumerate() {
        for stretch in stretches(&block.insts) {
            let found: Vec<Poisoned<'_>> = stretch.clone().filter_map(|at| poisoned(f, &defs, b, at)).collect();
            // Groups: same index, length and poison, in the order of their first members.
            let mut groups: Vec<Vec<&Poisoned<'_>>> = Vec::new();
            for p in &found {
                match groups.iter_mut().find(|g| g[0].same_check(p)) {
                    Some(members) => members.push(p),
                    None => groups.push(vec![p]),
                }
            }
            for members in groups {
                let insts = &block.insts[..stretch.end];
                let Some(anchor) = members
                    .iter()
                    .filter(|p| dereferenced_later(f, &defs, insts, p.name, p.at, p.poison))
                    .map(|p| p.offset)
                    .max()
                else {
                    continue;
                };
                let merged: Vec<&&Poisoned<'_>> = members.iter().filter(|p| p.offset <= anchor).collect();
                if merged.len() < 2 {
                    continue;
                }
                *counter += 1;
                let head = members[0];
                let (checks, base) =
                    shared_check(&mut namer, *counter, &head.base_index, anchor, head.len, head.poison);
                let first = merged.iter().map(|p| p.at).min().expect("two members");
                edits.insert_before(b, first, checks);
                for p in merged {
                    let rebased = add(Flags::NONE, Value::local(&base), Value::int(p.offset, &I64));
                    edits.replace(b, p.at, vec![Inst::assign(p.name, rebased)]);
                }
            }
        }
    }
    edits.apply(f)
}

/// The `n`th shared check, `select(i + anchor < len, i, poison)` with `i` the sum of `terms`: its
/// instructions (the terms are operands of the first member's index, so defined before it) and
/// the name of the select.
fn shared_check(
    namer: &mut Namer,
    n: usize,
    terms: &[&str],
    anchor: u64,
    len: &Value,
    poison: u64,
) -> (Vec<Inst>, String) {
    let mut checks = Vec::new();
    let mut index = Value::local(terms[0]);
    for (k, term) in terms.iter().enumerate().skip(1) {
        let sum = namer.named(&format!("sum{n}.{k}"));
        checks.push(Inst::assign(&sum, add(Flags::NUW, index, Value::local(term))));
        index = Value::Local(sum);
    }
    let last = namer.named(&format!("last{n}"));
    let in_bounds = namer.named(&format!("inb{n}"));
    let base = namer.named(&format!("base{n}"));
    checks.push(Inst::assign(&last, add(Flags::NUW, index.clone(), Value::int(anchor, &I64))));
    checks.push(Inst::assign(
        &in_bounds,
        Op::Icmp { pred: Pred::Ult, samesign: false, ty: I64, a: Value::Local(last), b: len.clone() },
    ));
    checks.push(Inst::assign(
        &base,
        Op::Select { cond: Value::Local(in_bounds), ty: I64, a: index, b: Value::int(poison, &I64) },
    ));
    (checks, base)
}

fn add(flags: Flags, a: Value, b: Value) -> Op {
    Op::Bin { op: BinOp::Add, flags, ty: I64, a, b }
}

/// The definition of the value `v`, if it is a local defined by an instruction.
fn def<'f>(f: &'f Function, defs: &Defs<'_>, v: &Value) -> Option<&'f Op> {
    let &(b, i) = defs.get(v.as_local()?)?;
    Some(f.blocks[b].insts[i].op())
}

/// Positions of instructions that execution runs through from start to end once it enters them:
/// a block up to its terminator, split at calls that may not return (anything but an LLVM
/// intrinsic, and `llvm.nvvm.exit`) and at inline asm.
fn stretches(insts: &[Inst]) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, inst) in insts.iter().enumerate() {
        let ends = inst.is_terminator()
            || match inst.op() {
                Op::Call(c) => match &c.callee {
                    Callee::Global(g) => !g.starts_with("llvm.") || g == "llvm.nvvm.exit",
                    Callee::Asm(_) | Callee::Local(_) => true,
                },
                // A call the model does not read: it may not return either.
                Op::Other { opcode } => matches!(opcode.as_str(), "call" | "tail" | "musttail" | "notail"),
                _ => false,
            };
        if ends {
            if start < i {
                out.push(start..i);
            }
            start = i + 1;
        }
    }
    if start < insts.len() {
        out.push(start..insts.len());
    }
    out
}

/// Instruction `at` of block `b` as a poisoned index, if it is one (module docs), with its
/// compare and index looked up.
fn poisoned<'f>(f: &'f Function, defs: &Defs<'f>, b: usize, at: usize) -> Option<Poisoned<'f>> {
    let inst = &f.blocks[b].insts[at];
    let name = inst.result()?;
    let Op::Select { cond, ty: Type::Int(64), a, b: other } = inst.op() else { return None };
    // `select(in bounds, index, poison)` or `select(out of bounds, poison, index)`.
    let (index, poison, in_bounds_when_true) = match (other.as_non_negative(&I64), a.as_non_negative(&I64)) {
        (Some(p), _) => (a, p, true),
        (_, Some(p)) => (other, p, false),
        _ => return None,
    };
    if !is_poison_index(poison) {
        return None;
    }
    let size = POISON_OFFSET / poison;
    let len = compared_length(def(f, defs, cond)?, index, in_bounds_when_true)?;
    let (base_index, offset) = split_offset(f, defs, index)?;
    if offset.checked_mul(size)? >= MAX_FOLDED_BYTES {
        return None;
    }
    Some(Poisoned { at, name, base_index, offset, len, poison })
}

/// `len` of `icmp ult i64 index, len` (in bounds) or `icmp uge i64 index, len` (out of bounds),
/// whichever `in_bounds` asks for, also spelled with the operands swapped.
fn compared_length<'f>(icmp: &'f Op, index: &Value, in_bounds: bool) -> Option<&'f Value> {
    let Op::Icmp { pred, ty: Type::Int(64), a, b, .. } = icmp else { return None };
    let (len, pred) = if a == index {
        (b, *pred)
    } else if b == index {
        (a, pred.swapped())
    } else {
        return None;
    };
    (pred == if in_bounds { Pred::Ult } else { Pred::Uge }).then_some(len)
}

/// `index` as a sum of values and a constant, through `add nuw` and `or disjoint` (sums that do
/// not wrap); the values sorted by name, so equal sums compare equal. `None` unless every term
/// is a local value.
fn split_offset<'f>(f: &'f Function, defs: &Defs<'f>, index: &'f Value) -> Option<(Vec<&'f str>, u64)> {
    let mut terms = Vec::new();
    let mut offset = 0u64;
    let mut stack = vec![index];
    while let Some(v) = stack.pop() {
        if let Some(c) = v.as_non_negative(&I64) {
            offset = offset.saturating_add(c);
            continue;
        }
        let sum = match def(f, defs, v) {
            Some(Op::Bin { op: BinOp::Or, flags, ty: Type::Int(64), a, b }) if flags.disjoint => Some((a, b)),
            Some(Op::Bin { op: BinOp::Add, flags, ty: Type::Int(64), a, b }) if flags.nuw => Some((a, b)),
            _ => None,
        };
        match sum {
            Some((a, b)) if terms.len() + stack.len() < 8 => stack.extend([b, a]),
            _ => terms.push(v),
        }
    }
    let mut names: Vec<&str> = terms.iter().map(|t| t.as_local()).collect::<Option<_>>()?;
    if names.is_empty() {
        return None;
    }
    names.sort_unstable();
    Some((names, offset))
}

/// Whether the poisoned index `name` (at position `at` of `insts`, its stretch up to the end) is
/// the index of an address that a plain load or store after it goes through, into memory that is
/// not the stack, with an element as large as the poison assumes. The address is a `getelementptr`
/// without flags (`lower/bounds.rs` writes none on a poisoned index) and the access goes through
/// a generic `ptr`: the text version of this pass matched only those, and the port keeps it so.
fn dereferenced_later(f: &Function, defs: &Defs<'_>, insts: &[Inst], name: &str, at: usize, poison: u64) -> bool {
    let size = POISON_OFFSET / poison;
    let index = [(I64, Value::local(name))];
    let mut addresses: HashSet<&str> = HashSet::new();
    for inst in &insts[at + 1..] {
        if let Op::Gep { flags, source, base, indices, .. } = inst.op() {
            if let Some(address) = inst.result()
                && flags.is_empty()
                && indices[..] == index
                && element_size(source) == Some(size)
                && !is_stack(f, defs, base)
            {
                addresses.insert(address);
            }
            continue;
        }
        let generic =
            matches!(inst.op(), Op::Load { ptr_ty: Type::Ptr(0), .. } | Op::Store { ptr_ty: Type::Ptr(0), .. });
        if generic && inst.op().plain_access_address().and_then(Value::as_local).is_some_and(|a| addresses.contains(a))
        {
            return true;
        }
    }
    false
}

/// Bytes per element of a GEP's source type, for scalars and vectors of them.
fn element_size(ty: &Type) -> Option<u64> {
    let scalar = |t: &Type| {
        Some(match t {
            Type::Int(8) => 1,
            Type::Int(16) | Type::Half | Type::BFloat => 2,
            Type::Int(32) | Type::Float => 4,
            Type::Int(64) | Type::Double | Type::Ptr(0) => 8,
            _ => return None,
        })
    };
    match ty {
        Type::Vector(n, e) => Some(u64::from(*n) * scalar(e)?).filter(|s| s.is_power_of_two()),
        t => scalar(t),
    }
}

/// Whether `base` is (derived from) a stack slot, where a poisoned address might not fault.
fn is_stack(f: &Function, defs: &Defs<'_>, base: &Value) -> bool {
    let mut v = base;
    for _ in 0..16 {
        v = match def(f, defs, v) {
            Some(Op::Alloca { .. }) => return true,
            Some(Op::Other { opcode }) if opcode == "alloca" => return true,
            Some(Op::Gep { base_ty: Type::Ptr(0), base, .. }) => base,
            Some(Op::Cast { op: CastOp::AddrSpaceCast, from: Type::Ptr(0), a, .. }) => a,
            _ => return false,
        };
    }
    true
}
