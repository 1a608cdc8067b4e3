//! Integers of every width and their methods; Rust's exact shift, division and cast semantics.
//! Every case must be panic-free on every input (debug and release): overflow is explicit.

/// `Option<T>` as plain data: (is_some, value or 0).
macro_rules! opt {
    ($e:expr) => {
        match $e {
            Some(v) => (true, v),
            None => (false, Default::default()),
        }
    };
}

pub fn i128_mul_div(x: (i128, i128)) -> [i128; 4] {
    let (a, b) = x;
    [a.wrapping_mul(b), a.checked_div(b).unwrap_or(-1), a.checked_rem(b).unwrap_or(-2), a.wrapping_add(b) >> 3]
}

pub fn u128_ops(x: (u128, u128)) -> [u128; 5] {
    let (a, b) = x;
    let (m, o) = a.overflowing_mul(b);
    [
        a.wrapping_sub(b),
        m,
        o as u128,
        a.checked_div(b).unwrap_or(7),
        (a | 1).leading_zeros() as u128 + b.count_ones() as u128,
    ]
}

pub fn wrapping_i8(x: (i8, i8)) -> [i8; 7] {
    let (a, b) = x;
    [
        a.wrapping_add(b),
        a.wrapping_sub(b),
        a.wrapping_mul(b),
        a.wrapping_neg(),
        a.wrapping_abs(),
        if b == 0 { 0 } else { a.wrapping_div(b) },
        if b == 0 { 0 } else { a.wrapping_rem(b) },
    ]
}

pub fn checked_u16(x: (u16, u16)) -> [(bool, u16); 6] {
    let (a, b) = x;
    [
        opt!(a.checked_add(b)),
        opt!(a.checked_sub(b)),
        opt!(a.checked_mul(b)),
        opt!(a.checked_div(b)),
        opt!(a.checked_rem(b)),
        opt!(a.checked_pow(b as u32 % 20)),
    ]
}

pub fn saturating_i32(x: (i32, i32)) -> [i32; 6] {
    let (a, b) = x;
    [
        a.saturating_add(b),
        a.saturating_sub(b),
        a.saturating_mul(b),
        a.saturating_pow(b as u32 % 40),
        a.saturating_neg(),
        a.saturating_abs(),
    ]
}

pub fn saturating_u64(x: (u64, u64)) -> [u64; 3] {
    let (a, b) = x;
    [a.saturating_add(b), a.saturating_sub(b), a.saturating_mul(b)]
}

pub fn overflowing_u64(x: (u64, u64)) -> [(u64, bool); 4] {
    let (a, b) = x;
    [a.overflowing_add(b), a.overflowing_sub(b), a.overflowing_mul(b), a.overflowing_neg()]
}

pub fn overflowing_i16(x: (i16, i16)) -> [(i16, bool); 4] {
    let (a, b) = x;
    let div = if b == 0 { (0, false) } else { a.overflowing_div(b) };
    [a.overflowing_add(b), a.overflowing_mul(b), div, a.overflowing_abs()]
}

pub fn bits_u32(a: u32) -> [u32; 9] {
    [
        a.leading_zeros(),
        a.trailing_zeros(),
        a.count_ones(),
        a.count_zeros(),
        a.rotate_left(7),
        a.rotate_right(13),
        a.swap_bytes(),
        a.reverse_bits(),
        a.leading_ones() + a.trailing_ones(),
    ]
}

pub fn bits_u64(a: u64) -> [u64; 6] {
    [
        a.leading_zeros() as u64,
        a.trailing_zeros() as u64,
        a.count_ones() as u64,
        a.rotate_left(a as u32 % 64),
        a.swap_bytes(),
        a.reverse_bits(),
    ]
}

pub fn bits_small(x: (u8, i16)) -> (u8, u8, u8, i16, i16, u32) {
    let (a, b) = x;
    (
        a.rotate_left(3),
        a.reverse_bits(),
        a.swap_bytes(),
        b.swap_bytes(),
        b.rotate_right(5),
        b.leading_zeros() + a.trailing_zeros(),
    )
}

pub fn bits_u128(a: u128) -> (u32, u32, u32, u128, u128) {
    (a.leading_zeros(), a.trailing_zeros(), a.count_ones(), a.rotate_left(77), a.swap_bytes())
}

pub fn bytes_roundtrip(a: u64) -> ([u8; 8], [u8; 8], u64, u32, i16, u64) {
    let le = a.to_le_bytes();
    let be = a.to_be_bytes();
    let ne = a.to_ne_bytes();
    let back = u64::from_be_bytes(be);
    let mid = u32::from_ne_bytes([ne[2], ne[3], ne[4], ne[5]]);
    let small = i16::from_le_bytes([le[7], le[0]]);
    (le, be, back ^ u64::from_le_bytes(le), mid, small, u64::from_ne_bytes(ne))
}

pub fn euclid_i64(x: (i64, i64)) -> [(bool, i64); 3] {
    let (a, b) = x;
    let nz = if b == 0 { 3 } else { b };
    [opt!(a.checked_div_euclid(b)), opt!(a.checked_rem_euclid(b)), (true, a.wrapping_rem_euclid(nz))]
}

pub fn euclid_i8(x: (i8, i8)) -> (i8, i8, i8) {
    let (a, b) = x;
    let nz = if b == 0 { -5 } else { b };
    (a.wrapping_div_euclid(nz), a.wrapping_rem_euclid(nz), a.rem_euclid(if nz == -1 { 2 } else { nz }))
}

pub fn shifts_u32(x: (u32, u32)) -> [u32; 5] {
    let (a, b) = x;
    [
        a.wrapping_shl(b),
        a.wrapping_shr(b),
        a.checked_shl(b).unwrap_or(0xdead),
        (a as i32).wrapping_shr(b) as u32,
        a << (b & 31),
    ]
}

pub fn shifts_i128(x: (i128, u32)) -> [i128; 3] {
    let (a, b) = x;
    [a.wrapping_shl(b), a.wrapping_shr(b), (a as u128).wrapping_shr(b) as i128]
}

pub fn division_edges_i32(x: (i32, i32)) -> [(bool, i32); 4] {
    let (a, b) = x;
    [
        opt!(a.checked_div(b)),
        opt!(a.checked_rem(b)),
        if b == 0 {
            (false, 0)
        } else {
            let (q, o) = a.overflowing_div(b);
            (o, q)
        },
        if b == 0 { (false, 0) } else { (true, a.wrapping_rem(b)) },
    ]
}

pub fn div_unsigned(x: (u8, u64)) -> (u8, u64, u64, u8) {
    let (a, b) = x;
    let b8 = if a == 0 { 1 } else { a };
    let b64 = if b == 0 { 13 } else { b };
    (255 / b8, u64::MAX / b64, b.div_ceil(b64 | 1), a % b8.max(1))
}

pub fn int_casts(a: i64) -> (u8, i8, u16, i32, u32, i128, u128, usize) {
    (a as u8, a as i8, a as u16, a as i32, a as u32, a as i128, a as u128, a as usize)
}

pub fn int_to_float(x: (i64, u64, i32)) -> (f64, f32, f32, f64, f32) {
    let (a, b, c) = x;
    (a as f64, b as f32, c as f32, b as f64, a as f32)
}

pub fn int128_to_float(x: (i128, u128)) -> (f64, f32, f64) {
    (x.0 as f64, x.1 as f32, x.1 as f64)
}

pub fn float_to_int_f32(a: f32) -> (i8, u8, i32, u32, i64, u64) {
    (a as i8, a as u8, a as i32, a as u32, a as i64, a as u64)
}

pub fn float_to_int_f64(a: f64) -> (i16, u16, i32, u32, i64, u64) {
    let scaled = a * 1e15;
    (a as i16, a as u16, a as i32, a as u32, scaled as i64, scaled as u64)
}

pub fn float_to_int128(a: f64) -> (i128, u128) {
    let scaled = a * 1e30;
    (scaled as i128, scaled as u128)
}

pub fn pow_log(x: (u32, u8)) -> (u32, (bool, u32), (bool, u32), (bool, u32), u32, bool) {
    let (a, e) = x;
    (
        a.wrapping_pow(e as u32),
        opt!(a.checked_pow(e as u32)),
        opt!(a.checked_ilog2()),
        opt!(a.checked_ilog10()),
        a.isqrt(),
        a.is_power_of_two(),
    )
}

pub fn misc_int(x: (i32, i32)) -> (u32, i32, u32, (bool, u32), i32, i32) {
    let (a, b) = x;
    (
        a.abs_diff(b),
        a.signum(),
        a.unsigned_abs(),
        opt!((a as u32).checked_next_power_of_two()),
        a.midpoint(b),
        a.min(b).max(-1000).clamp(-500, i32::MAX),
    )
}

pub fn widening_u64(x: (u64, u64)) -> (u64, u64, u64) {
    let wide = x.0 as u128 * x.1 as u128;
    let (lo, hi) = x.0.carrying_mul(x.1, 0);
    ((wide >> 64) as u64, wide as u64, lo ^ hi)
}

pub fn carrying_mul_add_u32(x: (u32, u32, u32, u32)) -> (u32, u32) {
    x.0.carrying_mul_add(x.1, x.2, x.3)
}

pub fn bool_logic(x: (bool, bool, bool)) -> [bool; 7] {
    let (a, b, c) = x;
    [a & b, a | c, a ^ b, !c, (a && b) || c, a as u8 + b as u8 == 2, a.then_some(b).unwrap_or(c)]
}

pub fn char_methods(c: char) -> ((u32, bool, bool, bool), (u32, char, char, usize, bool)) {
    (
        (c as u32, c.is_ascii_alphanumeric(), c.is_ascii_digit(), c.is_whitespace()),
        (
            c.to_digit(16).unwrap_or(99),
            c.to_ascii_uppercase(),
            c.to_ascii_lowercase(),
            c.len_utf8(),
            c.is_ascii_lowercase(),
        ),
    )
}

pub fn char_encode(c: char) -> ([u8; 4], u8, [u16; 2], u8) {
    let mut buf = [0u8; 4];
    let n = c.encode_utf8(&mut buf).len() as u8;
    let mut wide = [0u16; 2];
    let w = c.encode_utf16(&mut wide).len() as u8;
    (buf, n, wide, w)
}

pub fn char_from(x: (u32, u8)) -> ((bool, char), (bool, char), char) {
    let (u, d) = x;
    (opt!(char::from_u32(u >> (u % 12))), opt!(char::from_digit(d as u32 % 40, 36)), char::from(d))
}
