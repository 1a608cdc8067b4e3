//! Warp-level tensor-core matrix multiply-accumulate (`mma.sync.aligned`, sm_80+) with typed
//! fragments, and `ldmatrix` / `stmatrix` (8×8 tiles of 16-bit elements, shared memory).
//!
//! One warp computes `D = A·B + C` for a 16×8 tile of `D` (f32): [`mma_sync`] with
//! `A` a 16×K row-major fragment ([`FragA`]), `B` a K×8 column-major one ([`FragB`]) and
//! `C`/`D` an [`Accumulator`]. The element type picks the shape: [`bf16`] and [`f16`] give
//! m16n8k16, [`Tf32`] m16n8k8. Mixing element types, or asking for a shape the hardware lacks,
//! does not type-check.
//!
//! Which element each lane holds (PTX ISA, "Matrix Fragments for mma.m16n8k16"), with
//! `g = lane / 4` and `t = lane % 4`:
//!
//! | fragment | register `i` holds |
//! |---|---|
//! | A (16-bit) | rows `g + 8 (i % 2)`, columns `2t + 8 (i / 2)` and `+1` (low half first) |
//! | B (16-bit) | rows (k) `2t + 8 i` and `+1`, column `g` |
//! | A (tf32) | row `g + 8 (i % 2)`, column `t + 4 (i / 2)` |
//! | B (tf32) | row (k) `t + 4 i`, column `g` |
//! | C/D (f32) | row `g + 8 (i / 2)`, column `2t + (i % 2)` |
//!
//! [`FragA::coord`], [`FragB::coord`] and [`Accumulator::coord`] compute these on the host too
//! (CPU references). [`FragA::load_ldmatrix`] / [`FragB::load_ldmatrix`] fill fragments from
//! shared-memory tiles with one `ldmatrix` per fragment.
//!
//! The instructions are `.sync.aligned`: all 32 lanes of a warp execute them together, from
//! converged code. Rust cannot check that, so they are `unsafe` with that contract; building
//! fragments and their coordinates is safe.

use core::marker::PhantomData;

use crate::half::bf16;
use crate::intrinsics;

/// TensorFloat-32: an `f32` of which the tensor core reads 19 bits (8 exponent, 10 mantissa).
/// A fragment holds the `f32` bits; `cvt.rna.tf32.f32` rounding is the caller's choice.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(transparent)]
pub struct Tf32(pub f32);

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::bf16 {}
    impl Sealed for f16 {}
    impl Sealed for super::Tf32 {}
}

/// An element type the tensor core multiplies, with its `mma.sync` shape.
pub trait MmaElement: sealed::Sealed + Copy {
    /// K of the m16n8kK shape.
    const K: usize;
    /// Elements per 32-bit register (2 for 16-bit types, 1 for tf32).
    const PER_REG: usize;
    /// The element's bits in the low `32 / PER_REG` bits.
    fn to_bits(self) -> u32;
    #[doc(hidden)]
    unsafe fn mma(d: *mut f32, a: *const u32, b: *const u32, c: *const f32);
}

impl MmaElement for bf16 {
    const K: usize = 16;
    const PER_REG: usize = 2;
    #[inline(always)]
    fn to_bits(self) -> u32 {
        self.to_bits() as u32
    }
    #[inline(always)]
    unsafe fn mma(d: *mut f32, a: *const u32, b: *const u32, c: *const f32) {
        intrinsics::mma_m16n8k16_bf16_f32(d, a, b, c)
    }
}

impl MmaElement for f16 {
    const K: usize = 16;
    const PER_REG: usize = 2;
    #[inline(always)]
    fn to_bits(self) -> u32 {
        self.to_bits() as u32
    }
    #[inline(always)]
    unsafe fn mma(d: *mut f32, a: *const u32, b: *const u32, c: *const f32) {
        intrinsics::mma_m16n8k16_f16_f32(d, a, b, c)
    }
}

impl MmaElement for Tf32 {
    const K: usize = 8;
    const PER_REG: usize = 1;
    #[inline(always)]
    fn to_bits(self) -> u32 {
        self.0.to_bits()
    }
    #[inline(always)]
    unsafe fn mma(d: *mut f32, a: *const u32, b: *const u32, c: *const f32) {
        intrinsics::mma_m16n8k8_tf32_f32(d, a, b, c)
    }
}

/// This lane's part of a 16×K row-major `A` operand: 4 registers.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct FragA<T: MmaElement> {
    /// The registers as `mma.sync` takes them (see the module's layout table).
    pub regs: [u32; 4],
    _t: PhantomData<T>,
}

/// This lane's part of a K×8 column-major `B` operand: 2 registers.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct FragB<T: MmaElement> {
    /// The registers as `mma.sync` takes them.
    pub regs: [u32; 2],
    _t: PhantomData<T>,
}

/// This lane's part of a 16×8 f32 accumulator (`C` and `D`): 4 registers.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct Accumulator {
    /// `d[i]` is element [`Accumulator::coord`]`(lane, i)`.
    pub d: [f32; 4],
}

impl<T: MmaElement> FragA<T> {
    /// A fragment from its raw registers.
    #[inline(always)]
    pub const fn from_regs(regs: [u32; 4]) -> Self {
        FragA { regs, _t: PhantomData }
    }

    /// `(row, col)` of element `j` (0..PER_REG) of register `i` held by `lane`.
    pub const fn coord(lane: u32, i: usize, j: usize) -> (usize, usize) {
        let (g, t) = ((lane / 4) as usize, (lane % 4) as usize);
        if T::PER_REG == 2 { (g + 8 * (i % 2), 2 * t + 8 * (i / 2) + j) } else { (g + 8 * (i % 2), t + 4 * (i / 2)) }
    }

    /// Builds this lane's fragment from `at(row, col)`.
    #[inline(always)]
    pub fn from_fn(lane: u32, mut at: impl FnMut(usize, usize) -> T) -> Self {
        let mut regs = [0u32; 4];
        let mut i = 0;
        while i < 4 {
            let mut j = 0;
            while j < T::PER_REG {
                let (r, c) = Self::coord(lane, i, j);
                regs[i] |= at(r, c).to_bits() << (16 * j);
                j += 1;
            }
            i += 1;
        }
        FragA::from_regs(regs)
    }
}

impl<T: MmaElement> FragB<T> {
    /// A fragment from its raw registers.
    #[inline(always)]
    pub const fn from_regs(regs: [u32; 2]) -> Self {
        FragB { regs, _t: PhantomData }
    }

    /// `(k, n)` of element `j` of register `i` held by `lane`.
    pub const fn coord(lane: u32, i: usize, j: usize) -> (usize, usize) {
        let (g, t) = ((lane / 4) as usize, (lane % 4) as usize);
        if T::PER_REG == 2 { (2 * t + 8 * i + j, g) } else { (t + 4 * i, g) }
    }

    /// Builds this lane's fragment from `at(k, n)`.
    #[inline(always)]
    pub fn from_fn(lane: u32, mut at: impl FnMut(usize, usize) -> T) -> Self {
        let mut regs = [0u32; 2];
        let mut i = 0;
        while i < 2 {
            let mut j = 0;
            while j < T::PER_REG {
                let (k, n) = Self::coord(lane, i, j);
                regs[i] |= at(k, n).to_bits() << (16 * j);
                j += 1;
            }
            i += 1;
        }
        FragB::from_regs(regs)
    }
}

impl FragA<bf16> {
    /// Loads the 16×16 row-major tile at `tile` (row stride `stride` elements) with one
    /// `ldmatrix.x4`. Lane `l` supplies the address of row `l % 16`, columns `8 (l / 16)`..
    ///
    /// # Safety
    /// `tile` is in this block's shared memory, every row start (`tile + r * stride`, r < 16)
    /// and `+ 8` elements is 16-byte aligned and readable for 16 bytes; all 32 lanes call
    /// together with the same `tile` and `stride`.
    #[inline(always)]
    pub unsafe fn load_ldmatrix(tile: *const bf16, stride: usize, lane: u32) -> Self {
        let l = lane as usize;
        let p = unsafe { tile.add((l % 16) * stride + (l / 16) * 8) };
        FragA::from_regs(unsafe { ldmatrix_x4(p.cast()) })
    }
}

impl FragB<bf16> {
    /// Loads a 16(k)×8(n) column-major tile stored as 8 rows (n) of 16 contiguous k at `tile`
    /// (row stride `stride` elements) with one `ldmatrix.x2` (lanes 0..16 give addresses).
    ///
    /// # Safety
    /// As [`FragA::load_ldmatrix`], for 8 rows.
    #[inline(always)]
    pub unsafe fn load_ldmatrix(tile: *const bf16, stride: usize, lane: u32) -> Self {
        let l = (lane % 16) as usize;
        let p = unsafe { tile.add((l % 8) * stride + (l / 8) * 8) };
        FragB::from_regs(unsafe { ldmatrix_x2(p.cast()) })
    }

    /// Two neighbouring `B` fragments (n and n + 8) with one `ldmatrix.x4`, from 16 rows (n)
    /// of 16 contiguous k.
    ///
    /// # Safety
    /// As [`FragA::load_ldmatrix`].
    #[inline(always)]
    pub unsafe fn load_ldmatrix_pair(tile: *const bf16, stride: usize, lane: u32) -> [Self; 2] {
        let l = lane as usize;
        let p = unsafe { tile.add(((l % 8) + 8 * (l / 16)) * stride + ((l / 8) % 2) * 8) };
        let r = unsafe { ldmatrix_x4(p.cast()) };
        [FragB::from_regs([r[0], r[1]]), FragB::from_regs([r[2], r[3]])]
    }
}

impl Accumulator {
    /// All zeros.
    pub const ZERO: Accumulator = Accumulator { d: [0.0; 4] };

    /// `(row, col)` of `d[i]` held by `lane`.
    pub const fn coord(lane: u32, i: usize) -> (usize, usize) {
        let (g, t) = ((lane / 4) as usize, (lane % 4) as usize);
        (g + 8 * (i / 2), 2 * t + (i % 2))
    }
}

/// `acc = A·B + acc` on the tensor core (`mma.sync.aligned.m16n8kK.row.col.f32.T.T.f32`).
///
/// # Safety
/// All 32 lanes of the warp call it together from converged code (the instruction is
/// `.sync.aligned`: a divergent call is undefined behaviour in PTX). Needs sm_80 or newer;
/// older targets fail in `ptxas`.
#[inline(always)]
pub unsafe fn mma_sync<T: MmaElement>(a: &FragA<T>, b: &FragB<T>, acc: &mut Accumulator) {
    let c = acc.d;
    unsafe { T::mma(acc.d.as_mut_ptr(), a.regs.as_ptr(), b.regs.as_ptr(), c.as_ptr()) }
}

macro_rules! ldst_matrix {
    ($($ld:ident $st:ident $n:literal $what:literal;)*) => {$(
        #[doc = concat!("`ldmatrix.sync.aligned.m8n8.", $what, ".shared.b16`: loads ", stringify!($n),
            " 8×8 matrices of 16-bit elements; lanes `8 m .. 8 m + 8` give the row addresses of matrix `m`,\n",
            "and register `m` of lane `l` holds row `l / 4`, elements `2 (l % 4)` and `+1` of matrix `m`\n",
            "(of its transpose with `.trans`).\n\n",
            "# Safety\n",
            "Every address given is in this block's shared memory, 16-byte aligned and readable for 16\n",
            "bytes; all 32 lanes call together (lanes past the used ones give ignored addresses).")]
        #[inline(always)]
        pub unsafe fn $ld(addr: *const u8) -> [u32; $n] {
            let mut out = [0u32; $n];
            intrinsics::$ld(out.as_mut_ptr(), addr);
            out
        }
        #[doc = concat!("`stmatrix.sync.aligned.m8n8.", $what, ".shared.b16` (sm_90): the inverse of the\n",
            "ldmatrix of the same shape.\n\n",
            "# Safety\n",
            "Every address given is in this block's shared memory, 16-byte aligned and writable for 16\n",
            "bytes, written by no other thread meanwhile; all 32 lanes call together.")]
        #[inline(always)]
        pub unsafe fn $st(addr: *mut u8, v: [u32; $n]) {
            intrinsics::$st(addr, v.as_ptr())
        }
    )*};
}

ldst_matrix! {
    ldmatrix_x1 stmatrix_x1 1 "x1";
    ldmatrix_x2 stmatrix_x2 2 "x2";
    ldmatrix_x4 stmatrix_x4 4 "x4";
    ldmatrix_x1_trans stmatrix_x1_trans 1 "x1.trans";
    ldmatrix_x2_trans stmatrix_x2_trans 2 "x2.trans";
    ldmatrix_x4_trans stmatrix_x4_trans 4 "x4.trans";
}
