//! `f32`/`f64`/`f16` arithmetic and the float methods users call. Cases compared exactly avoid
//! `a * b + c` (the device contracts it into `fma.rn` by default); the others state an ulp bound
//! in `main.rs` (libdevice's documented bound plus 1 ulp for the host's libm).

pub fn f32_arith(x: (f32, f32)) -> [f32; 5] {
    let (a, b) = x;
    [a + b, a - b, a * b, a / b, -a]
}

pub fn f64_arith(x: (f64, f64)) -> [f64; 5] {
    let (a, b) = x;
    [a + b, a - b, a * b, a / b, -a]
}

/// `%` on floats is C's `fmod`: exact.
pub fn float_rem(x: (f64, f32)) -> (f64, f32, f64, u16) {
    let (a, b) = x;
    let h = (b as f16) % (a as f16);
    (a % (b as f64), b % (a as f32), a % 7.0, if h.is_nan() { 0x7e00 } else { h.to_bits() })
}

pub fn f32_exact_methods(x: (f32, f32)) -> [f32; 14] {
    let (a, b) = x;
    [
        a.sqrt(),
        a.abs(),
        a.floor(),
        a.ceil(),
        a.round(),
        a.trunc(),
        a.fract(),
        a.copysign(b),
        a.min(b),
        a.max(b),
        a.recip(),
        a.mul_add(b, 0.25),
        a.round_ties_even(),
        a.signum(),
    ]
}

pub fn f64_exact_methods(x: (f64, f64)) -> [f64; 14] {
    let (a, b) = x;
    [
        a.sqrt(),
        a.abs(),
        a.floor(),
        a.ceil(),
        a.round(),
        a.trunc(),
        a.fract(),
        a.copysign(b),
        a.min(b),
        a.max(b),
        a.recip(),
        a.mul_add(b, -1.5),
        a.round_ties_even(),
        if b.is_nan() { 0.0 } else { a.clamp(b.min(0.0), b.max(0.0)) },
    ]
}

pub fn f32_exp_log(a: f32) -> [f32; 6] {
    [a.exp(), a.exp2(), a.ln(), a.log2(), a.log10(), a.ln_1p()]
}

pub fn f64_exp_log(a: f64) -> [f64; 6] {
    [a.exp(), a.exp2(), a.ln(), a.log2(), a.log10(), a.ln_1p()]
}

pub fn f32_trig(a: f32) -> [f32; 4] {
    [a.sin(), a.cos(), a.tan(), a.tanh()]
}

pub fn f64_trig(a: f64) -> [f64; 4] {
    [a.sin(), a.cos(), a.tan(), a.tanh()]
}

pub fn f32_pow(x: (f32, f32)) -> [f32; 2] {
    let (a, b) = x;
    [a.powf(b), a.abs().powf(b.fract() * 4.0)]
}

pub fn f64_pow(x: (f64, f64)) -> [f64; 2] {
    let (a, b) = x;
    [a.powf(b), a.abs().powf(b.fract() * 4.0)]
}

pub fn f32_powi(x: (f32, i8)) -> f32 {
    x.0.powi(x.1 as i32 % 9)
}

pub fn f64_powi(x: (f64, i8)) -> f64 {
    x.0.powi(x.1 as i32 % 9)
}

pub fn f32_misc_math(x: (f32, f32)) -> [f32; 3] {
    let (a, b) = x;
    [a.cbrt(), a.hypot(b), a.atan2(b)]
}

pub fn f64_misc_math(x: (f64, f64)) -> [f64; 3] {
    let (a, b) = x;
    [a.cbrt(), a.hypot(b), a.atan2(b)]
}

pub fn float_classify(a: f64) -> (bool, bool, bool, bool, bool, u64, u32, f32) {
    let f = a as f32;
    (
        a.is_nan(),
        a.is_finite(),
        a.is_normal(),
        a.is_sign_negative(),
        f.is_subnormal(),
        a.to_bits() & !(1 << 51),
        f.to_bits() & !(1 << 22),
        f32::from_bits(a.to_bits() as u32 & 0x7f7f_ffff),
    )
}

pub fn float_compare(x: (f32, f32)) -> (i8, i8, bool, bool, bool, f64) {
    let (a, b) = x;
    (a.total_cmp(&b) as i8, a.partial_cmp(&b).map_or(9, |o| o as i8), a < b, a == b, a >= b, a as f64)
}

pub fn float_consts(a: f32) -> [f32; 3] {
    use core::f32::consts::{E, PI, SQRT_2};
    [a * PI, a / E, (a + SQRT_2) * 0.5]
}

pub fn f64_to_f32(a: f64) -> (f32, f64) {
    (a as f32, (a as f32) as f64)
}

/// Half precision through its bits (`f16` is not `DeviceCopy`); add, sub, mul, div, sqrt and the
/// conversions are correctly rounded on both sides.
pub fn f16_arith(x: (u16, u16)) -> [u16; 7] {
    let (a, b) = (f16::from_bits(x.0), f16::from_bits(x.1));
    let canon = |v: f16| if v.is_nan() { 0x7e00 } else { v.to_bits() };
    [
        canon(a + b),
        canon(a - b),
        canon(a * b),
        canon(a / b),
        canon(((a as f32).sqrt()) as f16),
        canon((x.0 as f32 * 0.001) as f16),
        ((a as f64) * 3.0) as f32 as u32 as u16,
    ]
}
