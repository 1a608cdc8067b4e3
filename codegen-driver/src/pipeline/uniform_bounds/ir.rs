//! The few LLVM IR instructions the bounds reason about, parsed from their text, and the facts
//! a compare gives.

pub(super) use super::SREG;
use super::strip_metadata;

/// `u < v` (`strict`) or `u <= v`, unsigned, known to hold; `u != v` if `ne`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) struct Fact<'a> {
    pub(super) lhs: &'a str,
    pub(super) rhs: &'a str,
    pub(super) strict: bool,
    pub(super) ne: bool,
}

/// An instruction the bounds reason about.
#[derive(Clone, Copy, Debug)]
pub(super) enum Inst<'a> {
    Bin {
        op: &'a str,
        ty: &'a str,
        a: &'a str,
        b: &'a str,
        nuw: bool,
    },
    Cast {
        op: &'a str,
        from: &'a str,
        a: &'a str,
        to: &'a str,
    },
    Icmp {
        pred: &'a str,
        ty: &'a str,
        a: &'a str,
        b: &'a str,
    },
    Select {
        c: &'a str,
        ty: &'a str,
        a: &'a str,
        b: &'a str,
    },
    Phi {
        ty: &'a str,
        incoming: &'a str,
    },
    /// A call of an intrinsic with up to two operands of type `ty`.
    Call {
        name: &'a str,
        ty: &'a str,
        args: [Option<&'a str>; 2],
    },
}

pub(super) fn parse(rhs: &str) -> Option<Inst<'_>> {
    const FLAGS: [&str; 7] = ["nuw", "nsw", "exact", "disjoint", "nneg", "samesign", "fast"];
    let rhs = strip_metadata(rhs);
    let (op, rest) = rhs.split_once(' ')?;
    let nuw = rest.split(' ').take_while(|w| FLAGS.contains(w)).any(|w| w == "nuw");
    match op {
        "add" | "sub" | "mul" | "and" | "or" | "xor" | "shl" | "lshr" | "ashr" | "udiv" | "urem" => {
            let rest = skip_words(rest, &FLAGS);
            let (ty, rest) = rest.split_once(' ')?;
            let (a, b) = rest.split_once(", ")?;
            Some(Inst::Bin { op, ty, a, b, nuw })
        }
        "zext" | "sext" | "trunc" => {
            let rest = skip_words(rest, &FLAGS);
            let (from, rest) = rest.split_once(' ')?;
            let (a, to) = rest.split_once(" to ")?;
            Some(Inst::Cast { op, from, a, to: to.trim() })
        }
        "icmp" => {
            let rest = skip_words(rest, &FLAGS);
            let (pred, rest) = rest.split_once(' ')?;
            let (ty, rest) = rest.split_once(' ')?;
            let (a, b) = rest.split_once(", ")?;
            Some(Inst::Icmp { pred, ty, a, b })
        }
        "select" => {
            let rest = rest.strip_prefix("i1 ")?;
            let [c, x, y] = rest.split(", ").collect::<Vec<_>>()[..] else { return None };
            let (ty, a) = x.split_once(' ')?;
            let (ty2, b) = y.split_once(' ')?;
            (ty == ty2).then_some(Inst::Select { c, ty, a, b })
        }
        "phi" => {
            let (ty, incoming) = rest.split_once(' ')?;
            Some(Inst::Phi { ty, incoming })
        }
        "call" | "tail" => {
            let at = rest.find(" @")?;
            let ty = rest[..at].rsplit(' ').next()?;
            let (name, args) = rest[at + 2..].split_once('(')?;
            let args = args.strip_suffix(')')?;
            let mut ops = [None, None];
            if !args.is_empty() {
                for (k, arg) in args.split(", ").enumerate() {
                    let (_, v) = arg.rsplit_once(' ')?;
                    *ops.get_mut(k)? = Some(v);
                }
            }
            name.starts_with("llvm.").then_some(Inst::Call { name, ty, args: ops })
        }
        _ => None,
    }
}

/// A phi's `[ value, %label ]` arms as (value, label without `%`).
pub(super) fn phi_arms(incoming: &str) -> Vec<(&str, &str)> {
    incoming
        .split("], ")
        .filter_map(|arm| {
            let (value, label) = arm.trim_start_matches(['[', ' ']).trim_end_matches([']', ' ']).split_once(", ")?;
            Some((value.trim(), label.trim().strip_prefix('%')?))
        })
        .collect()
}

/// `s` without its leading words that are in `words`.
fn skip_words<'s>(mut s: &'s str, words: &[&str]) -> &'s str {
    while let Some((w, r)) = s.split_once(' ')
        && words.contains(&w)
    {
        s = r;
    }
    s
}

/// Bits of an integer type (`i32` → 32).
pub(super) fn bits(ty: &str) -> Option<u32> {
    ty.strip_prefix('i')?.parse().ok().filter(|b| (1..=64).contains(b))
}

/// An integer constant of type `ty`, as unsigned.
pub(super) fn constant(v: &str, ty: &str) -> Option<u64> {
    let bits = bits(ty)?;
    let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
    let value = match v {
        "true" => 1,
        "false" => 0,
        _ => v.parse::<i128>().ok()? as u64,
    };
    Some(value & mask)
}

/// The facts an `icmp pred a, b` with result `outcome` gives.
pub(super) fn icmp_facts<'a>(pred: &str, a: &'a str, b: &'a str, outcome: bool) -> Option<Vec<Fact<'a>>> {
    let f = |lhs, rhs, strict| Fact { lhs, rhs, strict, ne: false };
    let ne = |lhs, rhs| Fact { lhs, rhs, strict: false, ne: true };
    // Signed predicates appear only with `samesign` (parse drops the flag; the caller checks).
    let pred = match pred {
        "slt" => "ult",
        "sle" => "ule",
        "sgt" => "ugt",
        "sge" => "uge",
        p => p,
    };
    Some(match (pred, outcome) {
        ("ult", true) | ("uge", false) => vec![f(a, b, true)],
        ("ule", true) | ("ugt", false) => vec![f(a, b, false)],
        ("ugt", true) | ("ule", false) => vec![f(b, a, true)],
        ("uge", true) | ("ult", false) => vec![f(b, a, false)],
        ("eq", true) | ("ne", false) => vec![f(a, b, false), f(b, a, false)],
        ("eq", false) | ("ne", true) => vec![ne(a, b), ne(b, a)],
        _ => return None,
    })
}

/// Whether the constant `c` of type `ty` is negative as a signed value.
pub(super) fn negative(c: u64, ty: &str) -> bool {
    bits(ty).is_some_and(|w| c >> (w - 1) & 1 == 1)
}
