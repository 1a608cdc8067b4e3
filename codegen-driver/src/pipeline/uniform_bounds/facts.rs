//! What a compare that held (or failed) says: unsigned order facts about two values.

use crate::pipeline::ir::{Pred, Type, Value};

/// `lhs < rhs` (`strict`) or `lhs <= rhs`, unsigned, known to hold; `lhs != rhs` if `ne`. Both
/// sides are of type `ty`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) struct Fact<'a> {
    pub(super) lhs: &'a Value,
    pub(super) rhs: &'a Value,
    pub(super) ty: &'a Type,
    pub(super) strict: bool,
    pub(super) ne: bool,
}

impl Fact<'_> {
    /// Whether the fact is `lhs <= 0` (or `lhs < 1`): `lhs` is zero.
    pub(super) fn is_zero(&self) -> bool {
        !self.ne
            && ((!self.strict && self.rhs.as_int(self.ty) == Some(0))
                || (self.strict && self.rhs.as_int(self.ty) == Some(1)))
    }
}

/// The facts `icmp pred a, b` (on `ty`) with result `outcome` gives. Signed predicates are read
/// as unsigned: the caller passes them only with `samesign`.
pub(super) fn icmp_facts<'a>(pred: Pred, a: &'a Value, b: &'a Value, ty: &'a Type, outcome: bool) -> Vec<Fact<'a>> {
    let f = |lhs, rhs, strict| Fact { lhs, rhs, ty, strict, ne: false };
    let ne = |lhs, rhs| Fact { lhs, rhs, ty, strict: false, ne: true };
    let pred = match pred {
        Pred::Slt => Pred::Ult,
        Pred::Sle => Pred::Ule,
        Pred::Sgt => Pred::Ugt,
        Pred::Sge => Pred::Uge,
        p => p,
    };
    match (pred, outcome) {
        (Pred::Ult, true) | (Pred::Uge, false) => vec![f(a, b, true)],
        (Pred::Ule, true) | (Pred::Ugt, false) => vec![f(a, b, false)],
        (Pred::Ugt, true) | (Pred::Ule, false) => vec![f(b, a, true)],
        (Pred::Uge, true) | (Pred::Ult, false) => vec![f(b, a, false)],
        (Pred::Eq, true) | (Pred::Ne, false) => vec![f(a, b, false), f(b, a, false)],
        (Pred::Eq, false) | (Pred::Ne, true) => vec![ne(a, b), ne(b, a)],
        _ => Vec::new(),
    }
}

/// Whether the constant `c` of type `ty` is negative as a signed value.
pub(super) fn negative(c: u64, ty: &Type) -> bool {
    ty.int_bits().is_some_and(|w| c >> (w - 1) & 1 == 1)
}
