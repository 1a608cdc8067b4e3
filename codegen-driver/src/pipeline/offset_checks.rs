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
//! memory, where a poisoned address is certain to fault.

use super::ir::Module;
use super::passes::{State, on_text};
use std::collections::{HashMap, HashSet};

use super::ir_functions::strip_metadata;
use crate::markers::POISON_OFFSET;

/// Largest `offset × element size` folded (bytes): keeps bit 31 of a poisoned 32-bit shared
/// address set (`POISON_OFFSET` has it) after the offset is added.
const MAX_FOLDED_BYTES: u64 = 1 << 24;

/// The pass (`passes.rs`).
pub fn run(module: &mut Module, _: &mut State) -> bool {
    on_text(module, merge)
}

/// The module with the checks of each group of accesses merged (see the module docs).
pub fn merge(module: &str) -> String {
    let mut counter = 0usize;
    super::ir_functions::rewrite_bodies(module, |body| rewrite_function(body, &mut counter))
}

/// One poisoned index: `select(i + c < len, i + c, poison)`.
struct Poisoned<'a> {
    line: usize,
    name: &'a str,
    /// The values whose sum, plus `offset`, is the index.
    base_index: Vec<&'a str>,
    offset: u64,
    len: &'a str,
    poison: u64,
}

fn rewrite_function<'a>(body: &[&'a str], counter: &mut usize) -> Vec<String> {
    let defs: HashMap<&str, &str> = body
        .iter()
        .filter_map(|l| {
            let (lhs, rhs) = l.trim_start().split_once(" = ")?;
            lhs.starts_with('%').then_some((lhs, rhs))
        })
        .collect();
    let mut replaced: HashMap<usize, String> = HashMap::new();
    let mut inserted: HashMap<usize, Vec<String>> = HashMap::new();
    for stretch in stretches(body) {
        let found: Vec<Poisoned<'a>> = stretch.clone().filter_map(|l| poisoned(body[l], l, &defs)).collect();
        // Groups: same index, length and poison.
        let mut groups: HashMap<(&[&str], &str, u64), Vec<&Poisoned<'a>>> = HashMap::new();
        for p in &found {
            groups.entry((&p.base_index[..], p.len, p.poison)).or_default().push(p);
        }
        let mut keys: Vec<_> = groups.keys().copied().collect();
        keys.sort_by_key(|k| groups[k][0].line);
        for key in keys {
            let members = &groups[&key];
            let Some(anchor) = members
                .iter()
                .filter(|p| dereferenced_later(body, stretch.clone(), p.name, p.line, p.poison, &defs))
                .map(|p| p.offset)
                .max()
            else {
                continue;
            };
            let merged: Vec<&&Poisoned<'a>> = members.iter().filter(|p| p.offset <= anchor).collect();
            if merged.len() < 2 {
                continue;
            }
            *counter += 1;
            let n = *counter;
            let (terms, len, poison) = key;
            let first = merged.iter().map(|p| p.line).min().expect("two members");
            // The terms are operands of the first member's index, so defined before it.
            let mut lines = Vec::new();
            let mut index = terms[0].to_string();
            for (k, term) in terms.iter().enumerate().skip(1) {
                lines.push(format!("  %oxide.sum{n}.{k} = add nuw i64 {index}, {term}"));
                index = format!("%oxide.sum{n}.{k}");
            }
            lines.push(format!("  %oxide.last{n} = add nuw i64 {index}, {anchor}"));
            lines.push(format!("  %oxide.inb{n} = icmp ult i64 %oxide.last{n}, {len}"));
            lines.push(format!("  %oxide.base{n} = select i1 %oxide.inb{n}, i64 {index}, i64 {poison}"));
            inserted.insert(first, lines);
            for p in merged {
                replaced.insert(p.line, format!("  {} = add i64 %oxide.base{n}, {}", p.name, p.offset));
            }
        }
    }
    let mut out = Vec::with_capacity(body.len() + 3 * inserted.len());
    for (i, line) in body.iter().enumerate() {
        out.extend(inserted.remove(&i).unwrap_or_default());
        out.push(replaced.remove(&i).unwrap_or_else(|| line.to_string()));
    }
    out
}

/// Line ranges of `body` that execution runs through from start to end once it enters them:
/// a block up to its terminator, split at calls that may not return (anything but an LLVM
/// intrinsic) and at inline asm.
fn stretches(body: &[&str]) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, line) in body.iter().enumerate() {
        let t = line.trim_start();
        let is_label = !line.starts_with(' ') && !line.is_empty() && !line.starts_with(';');
        let is_call = t.contains("call ")
            && (t.contains(" asm ") || t.contains("@llvm.nvvm.exit") || (t.contains('@') && !t.contains("@llvm.")));
        let is_terminator = ["br ", "ret ", "ret\n", "switch ", "unreachable", "indirectbr ", "callbr "]
            .iter()
            .any(|k| t.starts_with(k))
            || t == "ret void";
        if is_label || is_call || is_terminator {
            if start < i {
                out.push(start..i);
            }
            start = i + 1;
        }
    }
    if start < body.len() {
        out.push(start..body.len());
    }
    out
}

/// `line` as a poisoned index, if it is one (module docs), with its compare and index looked up.
fn poisoned<'a>(line: &'a str, at: usize, defs: &HashMap<&'a str, &'a str>) -> Option<Poisoned<'a>> {
    let (name, rhs) = line.trim_start().split_once(" = ")?;
    let rest = strip_metadata(rhs.strip_prefix("select i1 ")?);
    let ops: Vec<&str> = rest.split(", ").collect();
    let [cond, a, b] = ops[..] else { return None };
    let a = a.strip_prefix("i64 ")?;
    let b = b.strip_prefix("i64 ")?;
    // `select(in bounds, index, poison)` or `select(out of bounds, poison, index)`.
    let (index, poison, in_bounds_when_true) = match (b.parse::<u64>(), a.parse::<u64>()) {
        (Ok(p), _) => (a, p, true),
        (_, Ok(p)) => (b, p, false),
        _ => return None,
    };
    if !(0..=31).any(|k| POISON_OFFSET >> k == poison) {
        return None;
    }
    let size = POISON_OFFSET / poison;
    let len = compared_length(defs.get(cond)?, index, in_bounds_when_true)?;
    let (base_index, offset) = split_offset(index, defs);
    if base_index.is_empty() || !base_index.iter().all(|t| t.starts_with('%')) {
        return None;
    }
    if offset.checked_mul(size)? >= MAX_FOLDED_BYTES {
        return None;
    }
    Some(Poisoned { line: at, name, base_index, offset, len, poison })
}

/// `len` of `icmp ult i64 index, len` (in bounds) or `icmp uge i64 index, len` (out of bounds),
/// whichever `in_bounds` asks for, also spelled with the operands swapped.
fn compared_length<'a>(icmp: &'a str, index: &str, in_bounds: bool) -> Option<&'a str> {
    let rest = strip_metadata(icmp.strip_prefix("icmp ")?);
    let rest = rest.strip_prefix("samesign ").unwrap_or(rest);
    let (pred, rest) = rest.split_once(' ')?;
    let (x, y) = rest.strip_prefix("i64 ")?.split_once(", ")?;
    let (len, pred) = if x == index {
        (y, pred)
    } else if y == index {
        let swapped = match pred {
            "ugt" => "ult",
            "ule" => "uge",
            _ => return None,
        };
        (x, swapped)
    } else {
        return None;
    };
    (pred == if in_bounds { "ult" } else { "uge" }).then_some(len)
}

/// `index` as a sum of values and a constant, through `add nuw` and `or disjoint` (sums that do
/// not wrap); the values sorted by name, so equal sums compare equal.
fn split_offset<'a>(index: &'a str, defs: &HashMap<&'a str, &'a str>) -> (Vec<&'a str>, u64) {
    let mut terms = Vec::new();
    let mut offset = 0u64;
    let mut stack = vec![index];
    while let Some(v) = stack.pop() {
        if let Ok(c) = v.parse::<u64>() {
            offset = offset.saturating_add(c);
            continue;
        }
        let sum = defs.get(v).map(|rhs| strip_metadata(rhs)).and_then(|rhs| {
            let rest = rhs
                .strip_prefix("or disjoint i64 ")
                .or_else(|| rhs.strip_prefix("add nuw nsw i64 "))
                .or_else(|| rhs.strip_prefix("add nuw i64 "))?;
            rest.split_once(", ")
        });
        match sum {
            Some((a, b)) if terms.len() + stack.len() < 8 => stack.extend([b, a]),
            _ => terms.push(v),
        }
    }
    terms.sort_unstable();
    (terms, offset)
}

/// Whether the poisoned index `name` (defined at `at`) is the index of an address that a plain
/// load or store after it in `stretch` goes through, into memory that is not the stack, with an
/// element as large as the poison assumes.
fn dereferenced_later(
    body: &[&str],
    stretch: std::ops::Range<usize>,
    name: &str,
    at: usize,
    poison: u64,
    defs: &HashMap<&str, &str>,
) -> bool {
    let size = POISON_OFFSET / poison;
    let mut addresses: HashSet<&str> = HashSet::new();
    for line in &body[(at + 1)..stretch.end] {
        let t = line.trim_start();
        if let Some((lhs, rhs)) = t.split_once(" = ")
            && let Some(rest) = rhs.strip_prefix("getelementptr ")
        {
            let ops: Vec<&str> = strip_metadata(rest).split(", ").collect();
            if let [ty, base, idx] = ops[..]
                && idx == format!("i64 {name}")
                && element_size(ty) == Some(size)
                && !is_stack(base.trim_start_matches("ptr ").trim(), defs)
            {
                addresses.insert(lhs);
            }
            continue;
        }
        if access_address(t).is_some_and(|a| addresses.contains(a)) {
            return true;
        }
    }
    false
}

/// Bytes per element of a GEP's source type, for scalars and vectors of them.
fn element_size(ty: &str) -> Option<u64> {
    let scalar = |t: &str| {
        Some(match t {
            "i8" => 1,
            "i16" | "half" | "bfloat" => 2,
            "i32" | "float" => 4,
            "i64" | "double" | "ptr" => 8,
            _ => return None,
        })
    };
    if let Some(v) = ty.strip_prefix('<').and_then(|v| v.strip_suffix('>')) {
        let (n, e) = v.split_once(" x ")?;
        return Some(n.parse::<u64>().ok()? * scalar(e)?).filter(|s| s.is_power_of_two());
    }
    scalar(ty)
}

/// Whether `base` is (derived from) a stack slot, where a poisoned address might not fault.
fn is_stack(base: &str, defs: &HashMap<&str, &str>) -> bool {
    let mut v = base;
    for _ in 0..16 {
        let Some(rhs) = defs.get(v) else { return false };
        if rhs.starts_with("alloca ") {
            return true;
        }
        let Some(rest) = rhs.strip_prefix("getelementptr ").or_else(|| rhs.strip_prefix("addrspacecast ")) else {
            return false;
        };
        let Some(next) = rest.split(", ").find_map(|op| op.strip_prefix("ptr ").filter(|o| o.starts_with('%'))) else {
            return false;
        };
        v = next.split(' ').next().unwrap_or(next);
    }
    true
}

/// The address operand of a plain (not volatile, not atomic) `load` or `store`.
fn access_address(t: &str) -> Option<&str> {
    let is_access = t.starts_with("store ") || (t.contains(" = load ") && !t.contains(" = load atomic"));
    if !is_access || t.contains("volatile") || t.starts_with("store atomic") {
        return None;
    }
    let at = t.rfind("ptr %")?;
    let rest = &t[at + 4..];
    Some(rest.split([',', ' ']).next().unwrap_or(rest))
}

#[cfg(test)]
mod tests {
    use super::merge;

    const POISON_F32: u64 = super::POISON_OFFSET / 4;

    fn kernel(body: &str) -> String {
        format!("define void @k(ptr %x, i64 %len, i64 %i) {{\nstart:\n{body}  ret void\n}}\n")
    }

    fn access(n: u32, offset: u32) -> String {
        let index = if offset == 0 { "%i".to_string() } else { format!("%i{n}") };
        let add = if offset == 0 { String::new() } else { format!("  %i{n} = or disjoint i64 %i, {offset}\n") };
        format!(
            "{add}  %ok{n} = icmp ult i64 {index}, %len\n  %s{n} = select i1 %ok{n}, i64 {index}, i64 {POISON_F32}\n  \
             %a{n} = getelementptr float, ptr %x, i64 %s{n}\n  %v{n} = load float, ptr %a{n}, align 4, !dbg !7\n"
        )
    }

    #[test]
    fn accesses_at_offsets_share_the_check_of_the_last() {
        let body = [access(0, 0), access(1, 256), access(2, 512)].concat();
        let out = merge(&kernel(&body));
        assert!(out.contains("%oxide.last1 = add nuw i64 %i, 512"), "{out}");
        assert!(out.contains("%oxide.inb1 = icmp ult i64 %oxide.last1, %len"), "{out}");
        assert!(out.contains(&format!("%oxide.base1 = select i1 %oxide.inb1, i64 %i, i64 {POISON_F32}")), "{out}");
        for (n, c) in [(0, 0), (1, 256), (2, 512)] {
            assert!(out.contains(&format!("  %s{n} = add i64 %oxide.base1, {c}\n")), "{out}");
        }
        // The merged check comes before the first access it guards.
        assert!(out.find("%oxide.base1 =").unwrap() < out.find("%a0 =").unwrap());
    }

    #[test]
    fn sums_in_any_order_are_one_index() {
        // `(i | 256) | b` and `i | b`: the same index plus 256 (layernorm's `y[base + t + 256 * j]`).
        let store = |n: u32, index: &str| {
            format!(
                "  %ok{n} = icmp ult i64 {index}, %len\n  %s{n} = select i1 %ok{n}, i64 {index}, i64 {POISON_F32}\n  \
                 %a{n} = getelementptr float, ptr %x, i64 %s{n}\n  store float 0.0, ptr %a{n}, align 4\n"
            )
        };
        let body = format!(
            "  %ib = or disjoint i64 %i, %b\n{}  %t1 = or disjoint i64 %i, 256\n  %u1 = or disjoint i64 %t1, %b\n{}",
            store(0, "%ib"),
            store(1, "%u1")
        );
        let out = merge(&kernel(&body));
        assert!(out.contains("%oxide.sum1.1 = add nuw i64 %b, %i"), "{out}");
        assert!(out.contains("%oxide.last1 = add nuw i64 %oxide.sum1.1, 256"), "{out}");
        assert!(out.contains("  %s1 = add i64 %oxide.base1, 256\n"), "{out}");
    }

    #[test]
    fn a_larger_offset_that_is_not_dereferenced_keeps_its_own_check() {
        // `%s2` is computed but its address never loaded: its check must not poison the others.
        let body = [access(0, 0), access(1, 256)].concat()
            + &format!(
                "  %i2 = or disjoint i64 %i, 512\n  %ok2 = icmp ult i64 %i2, %len\n  \
                 %s2 = select i1 %ok2, i64 %i2, i64 {POISON_F32}\n"
            );
        let out = merge(&kernel(&body));
        assert!(out.contains("%oxide.last1 = add nuw i64 %i, 256"), "{out}");
        assert!(out.contains(&format!("  %s2 = select i1 %ok2, i64 %i2, i64 {POISON_F32}")), "{out}");
    }

    #[test]
    fn a_call_between_the_accesses_keeps_the_checks_apart() {
        // The callee might not return: the later access (and its fault) might never happen.
        let body = [access(0, 0), "  call void @other()\n".to_string(), access(1, 256)].concat();
        let input = kernel(&body);
        assert_eq!(merge(&input), input);
    }

    #[test]
    fn accesses_in_other_blocks_are_not_merged() {
        let body = [access(0, 0), "  br label %next\nnext:\n".to_string(), access(1, 256)].concat();
        let input = kernel(&body);
        assert_eq!(merge(&input), input);
    }

    #[test]
    fn other_selects_and_stack_slots_are_left_alone() {
        // Not the poison constant: a user's select.
        let user = [access(0, 0), access(1, 256)].concat().replace(&POISON_F32.to_string(), "7");
        assert_eq!(merge(&kernel(&user)), kernel(&user));
        // A stack address might not fault when poisoned.
        let stack = format!("  %x = alloca [1024 x float], align 4\n{}", [access(0, 0), access(1, 256)].concat());
        assert_eq!(merge(&kernel(&stack)), kernel(&stack));
        // Element size other than the poison's.
        let wide = [access(0, 0), access(1, 256)].concat().replace("getelementptr float", "getelementptr double");
        assert_eq!(merge(&kernel(&wide)), kernel(&wide));
    }
}
