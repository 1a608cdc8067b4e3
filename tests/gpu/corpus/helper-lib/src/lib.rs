//! Ordinary Rust in a separate crate, called from the corpus kernels: nothing here knows about GPUs.
#![no_std]

/// SplitMix64's finaliser: a non-generic, non-`#[inline]` function of another crate.
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
    z ^ (z >> 31)
}

/// The AES S-box's first row, as a `static` table of another crate.
pub static SBOX_ROW: [u8; 16] =
    [0x63, 0x7c, 0x77, 0x7b, 0xf2, 0x6b, 0x6f, 0xc5, 0x30, 0x01, 0x67, 0x2b, 0xfe, 0xd7, 0xab, 0x76];

/// A `const` of another crate.
pub const PRIMES: [u32; 8] = [2, 3, 5, 7, 11, 13, 17, 19];

/// A 16.16 fixed-point number with methods.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fixed(pub i32);

impl Fixed {
    pub fn from_int(x: i16) -> Fixed {
        Fixed((x as i32) << 16)
    }

    pub fn mul(self, other: Fixed) -> Fixed {
        Fixed(((self.0 as i64 * other.0 as i64) >> 16) as i32)
    }

    pub fn add(self, other: Fixed) -> Fixed {
        Fixed(self.0.wrapping_add(other.0))
    }
}

/// A trait of another crate, implemented there and used with static dispatch.
pub trait Shape {
    const SIDES: u32;
    fn area(&self) -> f64;
    fn sides(&self) -> u32 {
        Self::SIDES
    }
}

pub struct Square(pub f64);
pub struct Triangle(pub f64, pub f64);

impl Shape for Square {
    const SIDES: u32 = 4;
    fn area(&self) -> f64 {
        self.0 * self.0
    }
}

impl Shape for Triangle {
    const SIDES: u32 = 3;
    fn area(&self) -> f64 {
        0.5 * self.0 * self.1
    }
}

/// Generic function of another crate (carries MIR the usual way).
pub fn total_area<S: Shape>(shapes: &[S]) -> f64 {
    let mut sum = 0.0;
    for s in shapes {
        sum += s.area();
    }
    sum
}
