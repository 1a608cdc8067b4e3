//! Generic functions, traits with static dispatch, associated consts, const generics, closures,
//! recursion, `core::mem` helpers, `Drop` glue, operator overloading, user iterators, functions of
//! other modules and of another crate.
use core::cell::Cell;
use core::hash::{Hash, Hasher};
use core::ops::{Add, Index, Mul, Neg};

use corpus_helper::{Fixed, Shape, Square, Triangle};

fn sum_sq<T: Add<Output = T> + Mul<Output = T> + Copy + Default>(xs: &[T]) -> T {
    let mut acc = T::default();
    for &x in xs {
        acc = acc + x * x;
    }
    acc
}

pub fn generic_fns(x: (u32, i16)) -> (u32, i64, u64) {
    let (a, b) = x;
    let u = sum_sq(&[a & 0x7fff, a >> 17, 3]); // no overflow, so debug builds agree too
    let i = sum_sq(&[b as i64, -(b as i64) / 3, 1]);
    let w = sum_sq::<u64>(&[a as u64, b as u64 & 0xff]);
    (u, i, w)
}

trait Animal {
    const LEGS: u32;
    const NAME: &'static str;
    fn weight(&self) -> u32;
    fn describe(&self) -> u32 {
        Self::LEGS * 1000 + Self::NAME.len() as u32 * 100 + self.weight() % 100
    }
}

struct Spider(u32);
struct Bird {
    grams: u32,
}

impl Animal for Spider {
    const LEGS: u32 = 8;
    const NAME: &'static str = "spider";
    fn weight(&self) -> u32 {
        self.0 / 3
    }
}

impl Animal for Bird {
    const LEGS: u32 = 2;
    const NAME: &'static str = "bird";
    fn weight(&self) -> u32 {
        self.grams
    }
    fn describe(&self) -> u32 {
        Self::LEGS + self.grams.wrapping_mul(3)
    }
}

fn total<A: Animal, B: Animal>(a: &A, b: &B) -> u32 {
    a.describe().wrapping_add(b.describe()) + A::LEGS * B::LEGS
}

pub fn trait_dispatch(a: u32) -> (u32, u32, u32) {
    let s = Spider(a);
    let b = Bird { grams: a >> 8 };
    (total(&s, &b), total(&b, &s), <Spider as Animal>::LEGS + Bird::NAME.len() as u32)
}

struct Matrix<const R: usize, const C: usize>([[i32; C]; R]);

impl<const R: usize, const C: usize> Matrix<R, C> {
    fn transpose(&self) -> Matrix<C, R> {
        let mut t = [[0; R]; C];
        for (r, row) in self.0.iter().enumerate() {
            for (c, &v) in row.iter().enumerate() {
                t[c][r] = v;
            }
        }
        Matrix(t)
    }

    fn trace_like(&self) -> i64 {
        (0..R.min(C)).map(|i| self.0[i][i] as i64).sum()
    }
}

fn checksum<const K: usize>(x: [u8; K]) -> u32 {
    x.iter().enumerate().fold(K as u32, |h, (i, &b)| h.rotate_left(5) ^ (b as u32 + i as u32))
}

pub fn const_generics(a: [u8; 8]) -> (u32, u32, i64, i32) {
    let m = Matrix::<2, 4>([
        [a[0] as i32, a[1] as i32, a[2] as i32, a[3] as i32],
        [a[4] as i32, -(a[5] as i32), a[6] as i32, a[7] as i32],
    ]);
    let t = m.transpose();
    let half: [u8; 4] = [a[0], a[2], a[4], a[6]];
    (checksum(a), checksum(half), t.trace_like(), t.0[3][1])
}

fn apply<F: Fn(i32) -> i32>(f: F, x: i32) -> i32 {
    f(f(x))
}

fn accumulate<F: FnMut(i32)>(mut f: F, n: i32) {
    for i in 0..n {
        f(i);
    }
}

fn make_adder(k: i32) -> impl Fn(i32) -> i32 {
    move |x| x.wrapping_add(k)
}

fn consume<F: FnOnce() -> [i32; 3]>(f: F) -> i32 {
    let a = f();
    a[0] ^ a[1] ^ a[2]
}

pub fn closures_local(x: (i32, i32)) -> (i32, i64, i32, i32) {
    let (a, b) = x;
    let scale = b % 7;
    let by_value = move |v: i32| v.wrapping_mul(scale).wrapping_add(1);
    let mut sum = 0i64;
    accumulate(|i| sum += (a as i64) * i as i64, (b & 7) + 1);
    let table = [a, b, a ^ b];
    let owned = move || table;
    (apply(by_value, a), sum, apply(make_adder(b), a), consume(owned))
}

fn fib(n: u32) -> u64 {
    if n < 2 { n as u64 } else { fib(n - 1) + fib(n - 2) }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

fn is_even(n: u32) -> bool {
    if n == 0 { true } else { is_odd(n - 1) }
}

fn is_odd(n: u32) -> bool {
    if n == 0 { false } else { is_even(n - 1) }
}

pub fn recursion(x: (u32, u64)) -> (u64, u64, bool) {
    (fib(x.0 % 20), gcd(x.1, x.0 as u64), is_even(x.0 % 300))
}

pub fn mem_helpers(x: (u64, u32)) -> ([u16; 4], u32, u64, u32, f32, usize) {
    let (mut a, mut b) = (x.0, x.1 as u64);
    core::mem::swap(&mut a, &mut b);
    let old = core::mem::replace(&mut a, 5);
    let mut arr = [x.1, 1, 2];
    let taken = core::mem::take(&mut arr[0]);
    // SAFETY: same size, every bit pattern valid.
    let halves: [u16; 4] = unsafe { core::mem::transmute(b) };
    #[allow(unnecessary_transmutes)]
    let f: f32 = unsafe { core::mem::transmute(x.1 & 0x7f7f_ffff) };
    let sizes = core::mem::size_of::<(u8, u32, u16)>() * 10 + core::mem::align_of::<u64>();
    (halves, taken ^ arr[0], old ^ a, f.to_bits(), f, sizes)
}

/// Records its id into a shared log when dropped: drop order made visible.
struct Guard<'a> {
    id: u32,
    log: &'a Cell<u32>,
}

impl Drop for Guard<'_> {
    fn drop(&mut self) {
        self.log.set(self.log.get().wrapping_mul(10).wrapping_add(self.id));
    }
}

struct Pair<'a> {
    _first: Guard<'a>,
    _second: Guard<'a>,
}

pub fn drop_glue(a: u32) -> (u32, u32) {
    let log = Cell::new(0);
    {
        let _g1 = Guard { id: 1, log: &log };
        let g2 = Guard { id: 2, log: &log };
        let maybe = if a % 2 == 0 { Some(Guard { id: 3, log: &log }) } else { None };
        if a % 3 == 0 {
            drop(g2);
        } else {
            core::mem::forget(g2);
        }
        let _pair = Pair { _first: Guard { id: 4, log: &log }, _second: Guard { id: 5, log: &log } };
        drop(maybe);
        let arr = [Guard { id: 6, log: &log }, Guard { id: 7, log: &log }];
        let _ = arr;
    }
    let after_scope = log.get();
    let _replaced = core::mem::replace(&mut Guard { id: 8, log: &log }, Guard { id: 9, log: &log });
    (after_scope, log.get())
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct V3(i32, i32, i32);

impl Add for V3 {
    type Output = V3;
    fn add(self, o: V3) -> V3 {
        V3(self.0.wrapping_add(o.0), self.1.wrapping_add(o.1), self.2.wrapping_add(o.2))
    }
}

impl Mul<i32> for V3 {
    type Output = V3;
    fn mul(self, k: i32) -> V3 {
        V3(self.0.wrapping_mul(k), self.1.wrapping_mul(k), self.2.wrapping_mul(k))
    }
}

impl Neg for V3 {
    type Output = V3;
    fn neg(self) -> V3 {
        V3(self.0.wrapping_neg(), self.1.wrapping_neg(), self.2.wrapping_neg())
    }
}

impl Index<usize> for V3 {
    type Output = i32;
    fn index(&self, i: usize) -> &i32 {
        match i % 3 {
            0 => &self.0,
            1 => &self.1,
            _ => &self.2,
        }
    }
}

pub fn operators(x: (i32, i32, i32)) -> (i32, i32, i32, bool) {
    let v = V3(x.0, x.1, x.2);
    let w = -(v + v * 3) + V3(1, 2, 3);
    (w.0, w.1, w[x.2 as usize], w == v)
}

struct Fib {
    a: u64,
    b: u64,
}

impl Iterator for Fib {
    type Item = u64;
    fn next(&mut self) -> Option<u64> {
        let r = self.a;
        self.a = self.b;
        self.b = self.b.wrapping_add(r);
        Some(r)
    }
}

pub fn user_iterator(n: u8) -> (u64, u64, u32) {
    let take = (n % 90) as usize;
    let sum = Fib { a: 0, b: 1 }.take(take).fold(0u64, |s, v| s.wrapping_add(v));
    let last_even = Fib { a: 0, b: 1 }.take(take).filter(|v| v % 2 == 0).last().unwrap_or(0);
    let count = Fib { a: 1, b: 1 }.take_while(|&v| v < n as u64 * 1000).count() as u32;
    (sum, last_even, count)
}

#[derive(Hash, PartialEq, Eq, PartialOrd, Ord, Clone, Copy)]
struct Key {
    group: u8,
    id: u32,
    name: &'static str,
}

/// FNV-1a through `core::hash::Hasher` and `#[derive(Hash)]`.
struct Fnv(u64);

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
    }
}

pub fn derives(x: (u8, u32, u8)) -> (u64, i8, bool, u32) {
    let names = ["a", "bb", "ccc"];
    let k1 = Key { group: x.0, id: x.1, name: names[x.2 as usize % 3] };
    let k2 = Key { group: x.2, id: x.1 ^ 1, name: names[x.0 as usize % 3] };
    let mut h = Fnv(0xcbf2_9ce4_8422_2325);
    k1.hash(&mut h);
    let mut keys = [k1, k2, Key { group: 3, id: 3, name: "zz" }];
    keys.sort_unstable_by(|a, b| b.cmp(a));
    (h.finish(), k1.cmp(&k2) as i8, k1 == k2, keys[0].id)
}

/// Functions of a nested module, called across modules.
pub mod geometry {
    pub mod fixed_point {
        pub fn lerp(a: i32, b: i32, t: u8) -> i32 {
            a.wrapping_add(((b as i64 - a as i64) * t as i64 / 255) as i32)
        }
    }

    pub(crate) fn dot(a: [i16; 3], b: [i16; 3]) -> i64 {
        a.iter().zip(&b).map(|(&x, &y)| x as i64 * y as i64).sum()
    }
}

pub fn other_module(x: ([i16; 3], u8)) -> (i64, i32) {
    let (v, t) = x;
    (geometry::dot(v, [v[2], v[1], v[0]]), geometry::fixed_point::lerp(v[0] as i32, v[1] as i32 * 1000, t))
}

pub fn other_crate(x: (u64, i16)) -> (u64, u8, u32, i32, f64, u32) {
    let (a, b) = x;
    let f = Fixed::from_int(b).mul(Fixed(0x0001_8000)).add(Fixed(a as i32));
    let sq = Square((b as f64) * 0.25);
    let tri = Triangle(b as f64, 3.0);
    (
        corpus_helper::mix64(a),
        corpus_helper::SBOX_ROW[(a % 16) as usize],
        corpus_helper::PRIMES[(a % 8) as usize] * corpus_helper::PRIMES[(b as usize) % 8],
        f.0,
        sq.area() + tri.area(),
        sq.sides() * 10 + tri.sides() + <Square as Shape>::SIDES * 100,
    )
}

pub fn other_crate_generic(a: [f64; 4]) -> f64 {
    corpus_helper::total_area(&[Square(a[0]), Square(a[1]), Square(a[2]), Square(a[3])])
}

trait Op {
    fn apply(&self, x: u32) -> u32;
    fn name_len(&self) -> u32 {
        1
    }
}

struct AddK(u32);
struct MulK(u32, u8);
struct Rot;

impl Op for AddK {
    fn apply(&self, x: u32) -> u32 {
        x.wrapping_add(self.0)
    }
}

impl Op for MulK {
    fn apply(&self, x: u32) -> u32 {
        x.wrapping_mul(self.0) >> (self.1 % 8)
    }
    fn name_len(&self) -> u32 {
        4
    }
}

impl Op for Rot {
    fn apply(&self, x: u32) -> u32 {
        x.rotate_left(9)
    }
}

/// `&dyn Trait` calls: vtables in device memory, PTX indirect calls.
pub fn dyn_dispatch(x: (u32, u8)) -> (u32, u32) {
    let (a, k) = x;
    let (add, mul, rot) = (AddK(k as u32), MulK(a | 1, k), Rot);
    let ops: [&dyn Op; 3] = [&add, &mul, &rot];
    let mut v = a;
    let mut names = 0;
    for i in 0..(k % 7) as usize {
        let op = ops[(i + a as usize) % 3];
        v = op.apply(v);
        names += op.name_len();
    }
    (v, names)
}

fn twice(x: u32) -> u32 {
    x.wrapping_mul(2)
}

fn square(x: u32) -> u32 {
    x.wrapping_mul(x)
}

/// Calls through function pointers chosen at run time (a table and a parameter).
pub fn fn_pointers(x: (u32, u8)) -> (u32, u32) {
    let (a, k) = x;
    let table: [fn(u32) -> u32; 3] = [twice, square, u32::reverse_bits];
    let f = table[k as usize % 3];
    let g: fn(u32) -> u32 = if a % 2 == 0 { twice } else { square };
    let apply = |h: fn(u32) -> u32, v: u32| h(h(v));
    (apply(f, a), g(a ^ k as u32))
}
