//! Structs, tuples, arrays (local and constant), enums with payloads, `Option`/`Result`,
//! niches, `const`/`static` tables (including `&str` and nested arrays).
use core::num::NonZeroU32;

use crate::data_struct;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    pub x: i32,
    pub y: i32,
}
data_struct!(Point { x, y });

impl Point {
    fn manhattan(self, other: Point) -> u32 {
        self.x.abs_diff(other.x).wrapping_add(self.y.abs_diff(other.y))
    }

    fn rotate90(self) -> Point {
        Point { x: self.y.wrapping_neg(), y: self.x }
    }
}

pub fn struct_methods(p: Point) -> (Point, u32, Point) {
    let q = p.rotate90();
    let mut r = q;
    r.x = r.x.wrapping_add(p.y);
    (q, p.manhattan(q), Point { y: r.y ^ 5, ..r })
}

/// A by-value struct with mixed field sizes (and padding) in and out.
#[derive(Clone, Copy, Debug)]
pub struct Particle {
    pub pos: [f32; 3],
    pub vel: [f32; 3],
    pub id: u16,
    pub alive: bool,
}
data_struct!(Particle { pos, vel, id, alive });

/// `vel * 0.5` is exact unless it is subnormal (a normal `vel` below 2^-125 loses its last bit),
/// so contraction into fma can change the sum by 1 ulp there (seen on the H200 at `vel` =
/// -1.786e-38): a 1-ulp bound.
pub fn particle_step(mut p: Particle) -> Particle {
    for k in 0..3 {
        p.pos[k] += p.vel[k] * 0.5;
    }
    if p.pos[1] < 0.0 {
        p.vel[1] = -p.vel[1];
        p.alive = !p.alive;
    }
    p.id = p.id.wrapping_add(1);
    p
}

pub fn tuples_nested(x: ((u8, i64), (bool, u16))) -> ((u16, bool), (i64, u8), u32) {
    let ((a, b), (c, d)) = x;
    let t = ((d, c), (b, a));
    let sum = t.0.0 as u32 + t.1.1 as u32;
    (t.0, t.1, sum)
}

pub fn local_arrays(mut a: [u32; 8]) -> ([u32; 8], [u32; 8], u32) {
    let mut sorted = a;
    sorted.sort_unstable();
    a.reverse();
    a.rotate_left(3);
    let mut grid = [[0u32; 3]; 3];
    for (i, row) in grid.iter_mut().enumerate() {
        for (j, cell) in row.iter_mut().enumerate() {
            *cell = sorted[(i + j) % 8] >> (i * 3 + j);
        }
    }
    (sorted, a, grid[2][1] ^ grid[1][2])
}

/// CRC-32 table computed at compile time.
const CRC_TABLE: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 { 0xedb8_8320 ^ (c >> 1) } else { c >> 1 };
            k += 1;
        }
        table[i] = c;
        i += 1;
    }
    table
};

static NAMES: [&str; 6] = ["zero", "one", "two", "three", "four", "einhundertfünfzig"];
static MATRIX: [[i16; 4]; 3] = [[1, -2, 3, -4], [5, 6, -7, 8], [-9, 10, 11, 12]];
static GREETING: &str = "grüß dich, GPU";

pub fn const_tables(x: (u64, u8)) -> (u32, usize, u32, i16, u8, u32) {
    let (a, b) = x;
    let mut crc = !0u32;
    for byte in a.to_le_bytes() {
        crc = CRC_TABLE[((crc ^ byte as u32) & 0xff) as usize] ^ (crc >> 8);
    }
    let name = NAMES[b as usize % NAMES.len()];
    let row = &MATRIX[b as usize % 3];
    (
        !crc,
        name.len(),
        name.chars().fold(0u32, |k, c| k + c.len_utf8() as u32 * 10 + 1),
        row[(a % 4) as usize],
        GREETING.as_bytes()[b as usize % GREETING.len()],
        GREETING.chars().filter(|c| c.is_ascii_alphabetic()).map(|c| c as u32).sum::<u32>(),
    )
}

enum Shape {
    Circle { r: u32 },
    Rect(u32, u32),
    Tri([u16; 3]),
    Empty,
}

fn area_x2(s: &Shape) -> u64 {
    match s {
        Shape::Circle { r } => 6 * (*r as u64) * (*r as u64),
        Shape::Rect(w, h) if w == h => 2 * (*w as u64) * (*w as u64) + 1,
        Shape::Rect(w, h) => 2 * (*w as u64) * (*h as u64),
        Shape::Tri([a, b, _]) => *a as u64 * *b as u64,
        Shape::Empty => 0,
    }
}

pub fn enum_match(x: (u32, u16)) -> (u64, u8) {
    let (a, b) = x;
    let small = a >> 16;
    let s = match a % 5 {
        0 => Shape::Circle { r: small },
        1 => Shape::Rect(small, b as u32),
        2 => Shape::Rect(small, small),
        3 => Shape::Tri([b, b.wrapping_add(1), 7]),
        _ => Shape::Empty,
    };
    let tag = match &s {
        Shape::Circle { .. } => 1,
        Shape::Rect(..) => 2,
        Shape::Tri(t) if t[0] > 100 => 3,
        Shape::Tri(_) => 4,
        Shape::Empty => 5,
    };
    (area_x2(&s), tag)
}

pub fn option_combinators(x: (u32, u32)) -> (u64, u32, bool, u32) {
    let (a, b) = x;
    let r = a
        .checked_add(b)
        .map(|s| s as u64 * 3)
        .and_then(|v| if v % 2 == 0 { Some(v / 2) } else { None })
        .filter(|v| *v > 10)
        .unwrap_or(1);
    let o = Some(a).xor(if b % 3 == 0 { Some(b) } else { None });
    let z = Some(a).zip(Some(b)).map(|(p, q)| p ^ q).unwrap_or_default();
    (r, o.unwrap_or(0), o.is_some_and(|v| v > 5), z.max(Option::<u32>::None.map_or(0, |v| v)))
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum ParseError {
    Empty,
    Negative(i32),
    TooBig { by: u32 },
}

fn parse(v: i32) -> Result<u16, ParseError> {
    if v == 0 {
        return Err(ParseError::Empty);
    }
    if v < 0 {
        return Err(ParseError::Negative(v));
    }
    u16::try_from(v).map_err(|_| ParseError::TooBig { by: (v - u16::MAX as i32) as u32 })
}

fn parse_twice(a: i32, b: i32) -> Result<u32, ParseError> {
    let x = parse(a)?;
    let y = parse(b).or_else(|e| if e == ParseError::Empty { Ok(1) } else { Err(e) })?;
    Ok(x as u32 * y as u32)
}

pub fn result_combinators(x: (i32, i32)) -> (u32, u32, i64) {
    let (a, b) = x;
    let r = parse_twice(a, b);
    let code = match r {
        Ok(_) => 0,
        Err(ParseError::Empty) => 1,
        Err(ParseError::Negative(_)) => 2,
        Err(ParseError::TooBig { .. }) => 3,
    };
    let detail = match r {
        Ok(v) => v as i64,
        Err(ParseError::Negative(n)) => n as i64,
        Err(ParseError::TooBig { by }) => -(by as i64),
        Err(_) => -1,
    };
    (code, r.map(|v| v.wrapping_mul(3)).unwrap_or_else(|_| 42), detail)
}

pub fn niches(x: (u32, u32)) -> (u32, u32, u32, bool) {
    let (a, b) = x;
    let nz: Option<NonZeroU32> = NonZeroU32::new(a);
    let r: Option<&u32> = if b % 2 == 0 { Some(&a) } else { None };
    let c: Option<char> = char::from_u32(b);
    let e: Option<Option<bool>> = match b % 3 {
        0 => None,
        1 => Some(None),
        _ => Some(Some(a % 2 == 0)),
    };
    (
        nz.map_or(0, |n| n.get().trailing_zeros()),
        r.copied().unwrap_or(77),
        c.map_or(1, |c| c as u32 & 0xff),
        matches!(e, Some(Some(true))) || e.is_none(),
    )
}
