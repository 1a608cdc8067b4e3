//! After `opt`: rewrites of the optimised IR that keep `ptxas` away from code it miscompiles.
//!
//! `uitofp i1 %c to float` (what `opt` makes of `(b as i32) as f32`) becomes, through `llc`,
//! `selp.b32 %r, 1, 0, %p; cvt.rn.f32.u32 %f, %r`. When the float's bits are then widened as an
//! integer (`x.to_bits() as u64`), ptxas 13.0 and 13.5 at `-O1` and above fold the pair into
//! `SEL R, RZ, 0x1`, the integer 1 instead of the bits of 1.0 (found by oxide-fuzz, program 3:467;
//! `-O0` and the PTX itself are right). A `select` of the two constants means the same, costs the
//! same (one `selp`), and is not turned back into `uitofp` by `llc`.

use super::ir::Module;
use super::passes::{State, on_text};

/// The pass (`passes.rs`).
pub fn run(module: &mut Module, _: &mut State) -> bool {
    on_text(module, |text| avoid_bool_to_float(text).unwrap_or_else(|| text.to_string()))
}

/// `module` (`opt -S` text) with every `uitofp`/`sitofp` of an `i1` to a float type replaced by a
/// `select` between the converted constants; `None` when it has none.
pub fn avoid_bool_to_float(module: &str) -> Option<String> {
    if !module.contains("itofp i1 ") && !module.contains("itofp nneg i1 ") {
        return None;
    }
    let mut out = String::with_capacity(module.len());
    for line in module.split_inclusive('\n') {
        match rewrite(line) {
            Some(new) => out.push_str(&new),
            None => out.push_str(line),
        }
    }
    Some(out)
}

/// `  %x = uitofp [nneg] i1 %c to float[, !dbg …]` → `  %x = select i1 %c, float 1.0, float 0.0[, …]`.
fn rewrite(line: &str) -> Option<String> {
    let (lhs, rhs) = line.split_once(" = ")?;
    let name = lhs.trim_start();
    if !name.starts_with('%') || name.contains(' ') {
        return None;
    }
    let (signed, rest) =
        if let Some(r) = rhs.strip_prefix("uitofp ") { (false, r) } else { (true, rhs.strip_prefix("sitofp ")?) };
    let rest = rest.strip_prefix("nneg ").unwrap_or(rest);
    let rest = rest.strip_prefix("i1 ")?;
    let (value, rest) = rest.split_once(" to ")?;
    let (ty, tail) = match rest.find([',', '\n']) {
        Some(end) => rest.split_at(end),
        None => (rest, ""),
    };
    let ty = ty.trim_end();
    // `true` is 1 for uitofp and -1 for sitofp (an i1 holds 0 and -1 as a signed number).
    let one = match (ty, signed) {
        ("float" | "double", false) => "1.000000e+00",
        ("float" | "double", true) => "-1.000000e+00",
        ("half", false) => "0xH3C00",
        ("half", true) => "0xHBC00",
        ("bfloat", false) => "0xR3F80",
        ("bfloat", true) => "0xRBF80",
        _ => return None,
    };
    let zero = match ty {
        "half" => "0xH0000",
        "bfloat" => "0xR0000",
        _ => "0.000000e+00",
    };
    Some(format!("{lhs} = select i1 {value}, {ty} {one}, {ty} {zero}{tail}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bool_to_float_becomes_a_select() {
        let ir = "define void @k(i1 %c) {\n  %a = uitofp i1 %c to float, !dbg !7\n  %b = sitofp i1 %c to double\n  \
                  %h = uitofp nneg i1 %c to half\n  %w = uitofp i32 %n to float\n  ret void\n}\n";
        let out = avoid_bool_to_float(ir).expect("has a bool conversion");
        assert!(out.contains("  %a = select i1 %c, float 1.000000e+00, float 0.000000e+00, !dbg !7\n"), "{out}");
        assert!(out.contains("  %b = select i1 %c, double -1.000000e+00, double 0.000000e+00\n"), "{out}");
        assert!(out.contains("  %h = select i1 %c, half 0xH3C00, half 0xH0000\n"), "{out}");
        // Wider integers convert as they are.
        assert!(out.contains("  %w = uitofp i32 %n to float\n"), "{out}");
        assert_eq!(avoid_bool_to_float("  %w = uitofp i32 %n to float\n"), None);
    }

    #[test]
    fn vectors_and_other_text_stay() {
        let ir = "  %v = uitofp <2 x i1> %c to <2 x float>\n; uitofp i1 %c to float in a comment\n";
        assert_eq!(avoid_bool_to_float(ir).as_deref(), Some(ir));
    }
}
