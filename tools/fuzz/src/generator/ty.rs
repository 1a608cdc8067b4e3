//! The types generated programs compute with: every integer width, `f32`, `f64`, `bool`, and
//! literals of each that the compiler accepts without a lint error.
use crate::rng::Rng;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Int {
    U8,
    U16,
    U32,
    U64,
    U128,
    Usize,
    I8,
    I16,
    I32,
    I64,
    I128,
    Isize,
}

impl Int {
    pub const ALL: [Int; 12] = [
        Int::U8,
        Int::U16,
        Int::U32,
        Int::U64,
        Int::U128,
        Int::Usize,
        Int::I8,
        Int::I16,
        Int::I32,
        Int::I64,
        Int::I128,
        Int::Isize,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Int::U8 => "u8",
            Int::U16 => "u16",
            Int::U32 => "u32",
            Int::U64 => "u64",
            Int::U128 => "u128",
            Int::Usize => "usize",
            Int::I8 => "i8",
            Int::I16 => "i16",
            Int::I32 => "i32",
            Int::I64 => "i64",
            Int::I128 => "i128",
            Int::Isize => "isize",
        }
    }

    /// Both host and device are 64-bit, so `usize`/`isize` have 64 bits.
    pub fn bits(self) -> u32 {
        match self {
            Int::U8 | Int::I8 => 8,
            Int::U16 | Int::I16 => 16,
            Int::U32 | Int::I32 => 32,
            Int::U64 | Int::I64 | Int::Usize | Int::Isize => 64,
            Int::U128 | Int::I128 => 128,
        }
    }

    pub fn signed(self) -> bool {
        matches!(self, Int::I8 | Int::I16 | Int::I32 | Int::I64 | Int::I128 | Int::Isize)
    }

    pub fn is_128(self) -> bool {
        self.bits() == 128
    }

    /// A literal of this type: edge values often, small values often, any value sometimes.
    pub fn literal(self, rng: &mut Rng) -> String {
        let n = self.name();
        let bits = self.bits();
        match rng.below(10) {
            0 => format!("{n}::MAX"),
            1 if self.signed() => format!("{n}::MIN"),
            1 => format!("0{n}"),
            2..=4 => {
                let v = rng.below(17) as i64 - if self.signed() { 8 } else { 0 };
                signed_lit(v as i128, n)
            }
            5 => signed_lit(1i128 << rng.below(bits as usize - 1), n),
            _ => {
                let raw = (rng.next_u64() as u128) << 64 | rng.next_u64() as u128;
                let v = raw >> (128 - bits) >> rng.below(bits as usize);
                if self.signed() {
                    // Half the magnitude range, negated half the time: never MIN, which is spelled
                    // `MIN` above because `-128i8` needs the negation lint's special case.
                    let v = (v >> 1) as i128;
                    signed_lit(if rng.chance(50) { -v } else { v }, n)
                } else {
                    format!("{v}{n}")
                }
            }
        }
    }
}

fn signed_lit(v: i128, n: &str) -> String {
    if v < 0 { format!("(-{}{n})", v.unsigned_abs()) } else { format!("{v}{n}") }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scalar {
    Int(Int),
    F32,
    F64,
    Bool,
}

impl Scalar {
    pub fn name(self) -> &'static str {
        match self {
            Scalar::Int(i) => i.name(),
            Scalar::F32 => "f32",
            Scalar::F64 => "f64",
            Scalar::Bool => "bool",
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, Scalar::F32 | Scalar::F64)
    }

    pub fn int(self) -> Option<Int> {
        match self {
            Scalar::Int(i) => Some(i),
            _ => None,
        }
    }

    pub fn literal(self, rng: &mut Rng) -> String {
        match self {
            Scalar::Int(i) => i.literal(rng),
            Scalar::Bool => if rng.chance(50) { "true" } else { "false" }.to_string(),
            Scalar::F32 | Scalar::F64 => float_literal(self.name(), rng),
        }
    }
}

/// A float literal: the special values, signed zeros, subnormals, exact and inexact decimals.
fn float_literal(n: &str, rng: &mut Rng) -> String {
    const SPECIAL: [&str; 8] = ["INFINITY", "NEG_INFINITY", "NAN", "MAX", "MIN", "MIN_POSITIVE", "EPSILON", "MAX"];
    match rng.below(12) {
        0 => format!("{n}::{}", rng.pick(&SPECIAL)),
        1 => format!("(-0.0{n})"),
        2 => format!("0.0{n}"),
        3 => {
            // A subnormal of this type: the device must not flush it to zero.
            let e = if n == "f32" { rng.range(38, 44) } else { rng.range(308, 322) };
            format!("{}e-{e}{n}", rng.range(1, 9))
        }
        4..=6 => {
            let v = rng.below(33) as i64 - 16;
            let frac = *rng.pick(&["0", "5", "25", "125", "1", "3"]);
            let s = format!("{}.{frac}{n}", v.unsigned_abs());
            if v < 0 { format!("(-{s})") } else { s }
        }
        _ => {
            let mant = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            let exp = rng.range(0, 24) as i32 - 12;
            let v = mant * 10f64.powi(exp);
            let s = if n == "f32" { format!("{:?}", v as f32) } else { format!("{v:?}") };
            let s = if s.contains('.') || s.contains('e') { s } else { format!("{s}.0") };
            if rng.chance(40) { format!("(-{s}{n})") } else { format!("{s}{n}") }
        }
    }
}

/// Scalars to pick from, with `i128`/`u128` and floats only when enabled.
pub fn scalar_pool(with_128: bool, with_floats: bool) -> Vec<Scalar> {
    let mut v: Vec<Scalar> = Int::ALL.iter().filter(|i| with_128 || !i.is_128()).map(|&i| Scalar::Int(i)).collect();
    if with_floats {
        v.extend([Scalar::F32, Scalar::F64, Scalar::F32, Scalar::F64]);
    }
    v.push(Scalar::Bool);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_have_their_type_suffix_or_path() {
        let mut rng = Rng::new(11);
        for _ in 0..2000 {
            for i in Int::ALL {
                let l = i.literal(&mut rng);
                assert!(l.contains(i.name()), "{l} for {}", i.name());
                assert!(i.signed() || !l.contains('-'), "negative unsigned literal {l}");
            }
            for f in [Scalar::F32, Scalar::F64] {
                let l = f.literal(&mut rng);
                assert!(l.contains(f.name()), "{l}");
            }
        }
    }
}
