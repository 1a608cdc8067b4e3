//! After `opt`: rewrites of the optimised IR that keep `ptxas` away from code it miscompiles.
//!
//! `uitofp i1 %c to float` (what `opt` makes of `(b as i32) as f32`) becomes, through `llc`,
//! `selp.b32 %r, 1, 0, %p; cvt.rn.f32.u32 %f, %r`. When the float's bits are then widened as an
//! integer (`x.to_bits() as u64`), ptxas 13.0 and 13.5 at `-O1` and above fold the pair into
//! `SEL R, RZ, 0x1`, the integer 1 instead of the bits of 1.0 (found by oxide-fuzz, program 3:467;
//! `-O0` and the PTX itself are right). A `select` of the two constants means the same, costs the
//! same (one `selp`), and is not turned back into `uitofp` by `llc`.

use super::ir::{CastOp, Module, Op, Type, Value};
use super::passes::State;

/// The pass (`passes.rs`): every `uitofp`/`sitofp` of an `i1` to a float type becomes a `select`
/// between the converted constants.
pub fn run(module: &mut Module, _: &mut State) -> bool {
    let mut changed = false;
    for inst in module.functions_mut().flat_map(|f| &mut f.blocks).flat_map(|b| &mut b.insts) {
        if let Some(select) = bool_to_float(inst.op()) {
            *inst = inst.with_op(select);
            changed = true;
        }
    }
    changed
}

/// `[u|s]itofp [nneg] i1 %c to float` → `select i1 %c, float 1.0, float 0.0` (vectors stay).
fn bool_to_float(op: &Op) -> Option<Op> {
    let Op::Cast { op: cast @ (CastOp::UIToFP | CastOp::SIToFP), from: Type::Int(1), a, to, .. } = op else {
        return None;
    };
    // `true` is 1 for uitofp and -1 for sitofp (an i1 holds 0 and -1 as a signed number).
    let one = match (to, *cast == CastOp::SIToFP) {
        (Type::Float | Type::Double, false) => "1.000000e+00",
        (Type::Float | Type::Double, true) => "-1.000000e+00",
        (Type::Half, false) => "0xH3C00",
        (Type::Half, true) => "0xHBC00",
        (Type::BFloat, false) => "0xR3F80",
        (Type::BFloat, true) => "0xRBF80",
        _ => return None,
    };
    let zero = match to {
        Type::Half => "0xH0000",
        Type::BFloat => "0xR0000",
        _ => "0.000000e+00",
    };
    let constant = |c: &str| Value::Const(c.to_string());
    Some(Op::Select { cond: a.clone(), ty: to.clone(), a: constant(one), b: constant(zero) })
}

#[cfg(test)]
mod tests {
    use oxide_contract::config::DeviceDebugInfo;

    use super::*;
    use crate::pipeline::ir::Inst;

    #[test]
    fn bool_to_float_becomes_a_select() {
        let case = include_str!("../../tests/passes/ptxas_quirks/bool_to_float.ll");
        let mut m = Module::parse(case);
        assert!(run(&mut m, &mut State::new(DeviceDebugInfo::Lines)));
        let insts = &m.function("k").expect("k").blocks[0].insts;
        let selects: Vec<(&str, String)> = insts
            .iter()
            .filter_map(|i| match i.op() {
                Op::Select { ty, a, b, .. } => Some((i.result()?, format!("{ty} {a} {b}"))),
                _ => None,
            })
            .collect();
        let expected = [
            ("a", "float 1.000000e+00 0.000000e+00"),
            ("as", "float -1.000000e+00 0.000000e+00"),
            ("b", "double -1.000000e+00 0.000000e+00"),
            ("bu", "double 1.000000e+00 0.000000e+00"),
            ("h", "half 0xH3C00 0xH0000"),
            ("hs", "half 0xHBC00 0xH0000"),
            ("f", "bfloat 0xR3F80 0xR0000"),
            ("fs", "bfloat 0xRBF80 0xR0000"),
            ("t", "float 1.000000e+00 0.000000e+00"),
        ];
        assert_eq!(selects, expected.map(|(r, s)| (r, s.to_string())));
        assert_eq!(insts[0].attachments(), ", !oxide.test !0");
        // Wider integers and vectors convert as they are.
        let casts = insts.iter().filter(|i| matches!(i.op(), Op::Cast { .. })).filter_map(Inst::result);
        assert_eq!(casts.collect::<Vec<_>>(), ["w", "v", "vs"]);
    }
}
