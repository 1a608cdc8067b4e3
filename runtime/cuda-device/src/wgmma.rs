//! Warpgroup matrix multiply-accumulate (`wgmma.mma_async`, sm_90a only): the 128 threads of a
//! warpgroup (4 consecutive warps, the first a multiple of 4) compute a 64×N tile of f32
//! `D += A·B` with B (K×N) read from shared memory through a 64-bit
//! [matrix descriptor](descriptor) and A (64×K) from one too or, in the RS forms, from
//! registers ([`FragA`]). The call only starts the work: [`fence`] before the first one (and
//! after the accumulators or an A fragment were written by ordinary code), [`commit_group`]
//! after a batch, and [`wait_group`] before the accumulators or the shared tiles are touched
//! again.
//!
//! | function | K per call | A | B |
//! |---|---|---|---|
//! | [`mma_bf16`], [`mma_f16`] | 16 | K-major descriptor | K-major descriptor |
//! | [`mma_bf16_mn_b`], [`mma_f16_mn_b`] | 16 | K-major descriptor | N-major descriptor |
//! | [`mma_major`] (bf16 or f16) | 16 | K- or M-major descriptor | K- or N-major descriptor |
//! | [`mma_rs`] (bf16 or f16, from the fragment) | 16 | registers | K-major descriptor |
//! | [`mma_rs_mn_b`] | 16 | registers | N-major descriptor |
//! | [`mma_e4m3`], [`mma_e5m2`] (fp8) | 32 | K-major descriptor | K-major descriptor |
//!
//! K-major means K is the contiguous dimension in shared memory (A row-major, B stored as N rows
//! of K); N-major means N is (B row-major, K rows of N: `V` in attention, `[seq][d]`, used as
//! the B of `P·V`), M-major that M is (A column-major, K rows of M). The descriptor helpers describe tiles as TMA writes them with
//! `CU_TENSOR_MAP_SWIZZLE_128B`: [`descriptor_k_major_128b`] (16-bit, rows of 64),
//! [`descriptor_k_major_128b_8bit`] (fp8, rows of 128), [`descriptor_mn_major_128b`] (16-bit,
//! N-major, rows of 64 along N).
//!
//! Accumulator layout ([`Accumulator::coord`]): thread `t` of the warpgroup, warp `w = t / 32`,
//! lane `l`, register `i` holds row `16 w + l / 4 + 8 ((i / 2) % 2)`, column
//! `8 (i / 4) + 2 (l % 4) + i % 2`. `R = N / 2` registers per thread. Columns `16 j..16 j + 16`
//! of it are, register for register, the A fragment of a 64×16 operand (PTX ISA, "Register
//! Fragments" of `wgmma.mma_async.m64nNk16`): [`FragA::from_accumulator`] rounds them to
//! bf16/f16 pairs, which is how attention feeds `P = softmax(S)` into `P·V` without shared
//! memory.
//!
//! Shapes: `N` a multiple of 8 from 8 to 256, i.e. `R` a multiple of 4 from 4 to 128 — any other
//! `R` does not compile. The build must target `sm_90a` (`cargo oxide build --arch sm_90a`):
//! `ptxas` rejects `wgmma` for `sm_90`.

use core::marker::PhantomData;

use crate::half::{Bf16x2, F16x2, bf16};
use crate::intrinsics;

/// How a tile is swizzled in shared memory (the descriptor's layout type, bits 62–63).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Swizzle {
    /// No swizzle: 8×16-byte core matrices, placed by the leading and stride offsets.
    None = 0,
    /// 128-byte swizzle: rows of 128 bytes in 1024-byte, 1024-aligned atoms of 8 rows (what
    /// TMA's `CU_TENSOR_MAP_SWIZZLE_128B` writes).
    B128 = 1,
    /// 64-byte swizzle.
    B64 = 2,
    /// 32-byte swizzle.
    B32 = 3,
}

/// The shared-memory matrix descriptor of a tile at shared-window address `addr` (see
/// [`crate::shared::cvta_generic_to_shared_offset`]): start address, leading-dimension byte
/// offset, stride-dimension byte offset (each encoded `>> 4` in 14 bits) and swizzle.
pub const fn descriptor(addr: u32, leading_bytes: u32, stride_bytes: u32, swizzle: Swizzle) -> u64 {
    enc(addr) | (enc(leading_bytes) << 16) | (enc(stride_bytes) << 32) | ((swizzle as u64) << 62)
}

/// A byte address or offset as a descriptor field: bits 4..18, 14 bits.
const fn enc(x: u32) -> u64 {
    ((x as u64 & 0x3_FFFF) >> 4) & 0x3FFF
}

/// The descriptor of a K-major 16-bit tile with 64-element (128-byte) rows, 128-byte swizzled
/// as TMA writes it, starting at `tile` (1024-byte aligned) and advanced by `k` elements along
/// K (`k` a multiple of 16, below 64): stride 1024 bytes between 8-row groups.
///
/// # Safety
/// `tile` points into this block's shared memory.
#[inline(always)]
pub unsafe fn descriptor_k_major_128b<T>(tile: *const T, k: u32) -> u64 {
    let addr = unsafe { crate::shared::cvta_generic_to_shared_offset(tile.cast()) } as u32;
    descriptor(addr + k * 2, 16, 1024, Swizzle::B128)
}

/// The descriptor of a K-major tile of 1-byte elements (fp8) with 128-element (128-byte) rows,
/// 128-byte swizzled as TMA writes it ([`TmaElement::U8`](cuda_core::tma::TmaElement::U8), box
/// inner dimension 128), starting at `tile` (1024-byte aligned) and advanced by `k` elements
/// along K (`k` a multiple of 32, below 128; one [`mma_e4m3`] reads 32): stride 1024 bytes
/// between 8-row groups.
///
/// Advancing along K inside a swizzled row moves the start address by `k` bytes, into the
/// 1024-byte atom: the hardware swizzles the addresses it computes from it (bits 4–6 by bits
/// 7–9), so the start need not be an atom's.
///
/// # Safety
/// `tile` points into this block's shared memory.
#[inline(always)]
pub unsafe fn descriptor_k_major_128b_8bit<T>(tile: *const T, k: u32) -> u64 {
    let addr = unsafe { crate::shared::cvta_generic_to_shared_offset(tile.cast()) } as u32;
    descriptor(addr + k, 16, 1024, Swizzle::B128)
}

/// The descriptor of an N-major (or M-major) 16-bit tile, 128-byte swizzled as TMA writes boxes
/// of 64 elements (128 bytes) along N by `k_rows` rows along K: `tile` (1024-byte aligned)
/// holds `N / 64` such blocks one after another (block `b`, columns `64 b..64 b + 64`, at
/// `tile + 128 · k_rows · b` bytes; row `r` of a block is K = `r`), advanced by `k` rows along
/// K (`k` a multiple of 16, below `k_rows`; `k_rows` a multiple of 8).
///
/// The fields are those PTX's matrix descriptor gives MN-major swizzled layouts: leading byte
/// offset `128 · k_rows` (from one 64-element block to the next along N; unused when N ≤ 64),
/// stride byte offset 1024 (from one group of 8 K rows to the next). Advancing along K moves
/// the start by whole 1024-byte atoms (`128 k` bytes), unlike the K-major tiles.
///
/// # Safety
/// `tile` points into this block's shared memory.
#[inline(always)]
pub unsafe fn descriptor_mn_major_128b<T>(tile: *const T, k: u32, k_rows: u32) -> u64 {
    let addr = unsafe { crate::shared::cvta_generic_to_shared_offset(tile.cast()) } as u32;
    descriptor(addr + k * 128, k_rows * 128, 1024, Swizzle::B128)
}

/// A warpgroup's 64×N f32 accumulator tile: this thread's `R = N / 2` registers.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Accumulator<const R: usize> {
    /// `d[i]` is element [`Accumulator::coord`]`(thread, i)`.
    pub d: [f32; R],
}

impl<const R: usize> Default for Accumulator<R> {
    fn default() -> Self {
        Self::ZERO
    }
}

const fn check_r(r: usize) {
    assert!(r >= 4 && r <= 128 && r.is_multiple_of(4), "wgmma m64nNk16: N = 2 R must be a multiple of 8 in 8..=256");
}

impl<const R: usize> Accumulator<R> {
    /// All zeros.
    pub const ZERO: Self = Accumulator { d: [0.0; R] };

    /// N, the tile's width.
    pub const N: usize = 2 * R;

    /// `(row, col)` of `d[i]` for thread `t` (0..128) of the warpgroup.
    pub const fn coord(t: u32, i: usize) -> (usize, usize) {
        let (w, l) = ((t / 32) as usize, (t % 32) as usize);
        (16 * w + l / 4 + 8 * ((i / 2) % 2), 8 * (i / 4) + 2 * (l % 4) + i % 2)
    }

    /// Every register `value` (ordinary register writes: [`fence`] before the next
    /// `mma_async` reads them).
    #[inline(always)]
    pub fn fill(&mut self, value: f32) {
        self.d = [value; R];
    }

    /// Every register multiplied by `factor` (an epilogue's `alpha`, attention's `1 / l`; as
    /// for [`Accumulator::fill`], [`fence`] before the next `mma_async`).
    #[inline(always)]
    pub fn scale(&mut self, factor: f32) {
        for x in self.d.iter_mut() {
            *x *= factor;
        }
    }
}

/// `wgmma.fence.sync.aligned`: orders earlier register writes of the accumulators (and shared
/// memory writes made visible with a barrier) before the next `wgmma.mma_async`.
///
/// # Safety
/// All threads of the warpgroup call it together.
#[inline(always)]
pub unsafe fn fence() {
    intrinsics::wgmma_fence()
}

/// `wgmma.commit_group.sync.aligned`: closes the batch of `mma_async`s started since the last.
///
/// # Safety
/// All threads of the warpgroup call it together.
#[inline(always)]
pub unsafe fn commit_group() {
    intrinsics::wgmma_commit_group()
}

/// `wgmma.wait_group.sync.aligned PENDING`: waits until at most `PENDING` committed batches are
/// in flight; `acc` is tied to the wait so that no read of it is scheduled above it.
///
/// # Safety
/// All threads of the warpgroup call it together.
#[inline(always)]
pub unsafe fn wait_group<const PENDING: u32, const R: usize>(acc: &mut Accumulator<R>) {
    const { check_r(R) };
    intrinsics::wgmma_wait_group::<PENDING, R>(acc.d.as_mut_ptr())
}

/// `wgmma.mma_async.sync.aligned.m64n{2R}k16.f32.bf16.bf16`: `acc = A·B + (scale_d ? acc : 0)`,
/// A K-major (64×16) at `desc_a`, B K-major (N×16, i.e. column-major K×N) at `desc_b`.
///
/// # Safety
/// All threads of the warpgroup call it together, after [`fence`]; the descriptors describe
/// shared memory holding the tiles (written before, made visible to the async proxy), which is
/// not overwritten, and `acc` not read or written, until [`wait_group`] says the batch is done.
#[inline(always)]
pub unsafe fn mma_bf16<const R: usize>(acc: &mut Accumulator<R>, desc_a: u64, desc_b: u64, scale_d: bool) {
    const { check_r(R) };
    intrinsics::wgmma_m64k16_f32::<R, 0, 0, 0>(acc.d.as_mut_ptr(), desc_a, desc_b, scale_d as u32)
}

/// [`mma_bf16`] for f16 inputs (`.f32.f16.f16`).
///
/// # Safety
/// As [`mma_bf16`].
#[inline(always)]
pub unsafe fn mma_f16<const R: usize>(acc: &mut Accumulator<R>, desc_a: u64, desc_b: u64, scale_d: bool) {
    const { check_r(R) };
    intrinsics::wgmma_m64k16_f32::<R, 1, 0, 0>(acc.d.as_mut_ptr(), desc_a, desc_b, scale_d as u32)
}

/// [`mma_bf16`] with B N-major (`imm-trans-b` 1): `desc_b` describes K rows of N contiguous
/// elements (e.g. [`descriptor_mn_major_128b`]), A stays K-major.
///
/// # Safety
/// As [`mma_bf16`].
#[inline(always)]
pub unsafe fn mma_bf16_mn_b<const R: usize>(acc: &mut Accumulator<R>, desc_a: u64, desc_b: u64, scale_d: bool) {
    const { check_r(R) };
    intrinsics::wgmma_m64k16_f32::<R, 0, 0, 1>(acc.d.as_mut_ptr(), desc_a, desc_b, scale_d as u32)
}

/// [`mma_f16`] with B N-major, as [`mma_bf16_mn_b`].
///
/// # Safety
/// As [`mma_bf16`].
#[inline(always)]
pub unsafe fn mma_f16_mn_b<const R: usize>(acc: &mut Accumulator<R>, desc_a: u64, desc_b: u64, scale_d: bool) {
    const { check_r(R) };
    intrinsics::wgmma_m64k16_f32::<R, 1, 0, 1>(acc.d.as_mut_ptr(), desc_a, desc_b, scale_d as u32)
}

/// [`mma_bf16`] / [`mma_f16`] (`T` says which) for operands stored either way: `A_MN` when A is
/// M-major in shared memory (`imm-trans-a` 1: K rows of M contiguous elements, A column-major),
/// `B_MN` when B is N-major (`imm-trans-b` 1: B row-major); a major-ness of MN takes an
/// MN-major descriptor such as [`descriptor_mn_major_128b`]. fp8 has only the K-major form.
///
/// # Safety
/// As [`mma_bf16`].
#[inline(always)]
pub unsafe fn mma_major<T: HalfElement, const R: usize, const A_MN: bool, const B_MN: bool>(
    acc: &mut Accumulator<R>,
    desc_a: u64,
    desc_b: u64,
    scale_d: bool,
) {
    const { check_r(R) };
    let (acc, d) = (acc.d.as_mut_ptr(), scale_d as u32);
    // The immediates must be literals of the instruction: one instance per combination.
    unsafe {
        match (A_MN, B_MN) {
            (false, false) => T::mma_ss::<R, 0, 0>(acc, desc_a, desc_b, d),
            (false, true) => T::mma_ss::<R, 0, 1>(acc, desc_a, desc_b, d),
            (true, false) => T::mma_ss::<R, 1, 0>(acc, desc_a, desc_b, d),
            (true, true) => T::mma_ss::<R, 1, 1>(acc, desc_a, desc_b, d),
        }
    }
}

/// The RS form, `wgmma.mma_async.sync.aligned.m64n{2R}k16.f32.{T}.{T} {d…}, {a0, a1, a2, a3},
/// desc_b, p, 1, 1, 0`: `acc = A·B + (scale_d ? acc : 0)` with A (64×16) from this thread's
/// registers `a` and B K-major at `desc_b`. `T` (bf16 or f16) is the fragment's.
///
/// # Safety
/// As [`mma_bf16`], and [`fence`] comes after the last ordinary write of the registers that
/// `a` was built from (PTX orders register accesses of `wgmma` only through it).
#[inline(always)]
pub unsafe fn mma_rs<T: HalfElement, const R: usize>(
    acc: &mut Accumulator<R>,
    a: &FragA<T>,
    desc_b: u64,
    scale_d: bool,
) {
    const { check_r(R) };
    let [a0, a1, a2, a3] = a.regs;
    unsafe { T::mma_rs::<R, 0>(acc.d.as_mut_ptr(), a0, a1, a2, a3, desc_b, scale_d as u32) }
}

/// [`mma_rs`] with B N-major (`imm-trans-b` 1, e.g. [`descriptor_mn_major_128b`]): attention's
/// `O += P·V` with `P` from [`FragA::from_accumulator`] and `V` as stored, `[seq][d]`.
///
/// # Safety
/// As [`mma_rs`].
#[inline(always)]
pub unsafe fn mma_rs_mn_b<T: HalfElement, const R: usize>(
    acc: &mut Accumulator<R>,
    a: &FragA<T>,
    desc_b: u64,
    scale_d: bool,
) {
    const { check_r(R) };
    let [a0, a1, a2, a3] = a.regs;
    unsafe { T::mma_rs::<R, 1>(acc.d.as_mut_ptr(), a0, a1, a2, a3, desc_b, scale_d as u32) }
}

/// `wgmma.mma_async.sync.aligned.m64n{2R}k32.f32.e4m3.e4m3`: `acc = A·B + (scale_d ? acc : 0)`
/// on fp8 [`E4M3`](crate::fp8::E4M3) tiles, A (64×32) and B (N×32) both K-major — the only
/// layout fp8 has (e.g. [`descriptor_k_major_128b_8bit`]); a B stored N-major must be
/// transposed first.
///
/// # Safety
/// As [`mma_bf16`].
#[inline(always)]
pub unsafe fn mma_e4m3<const R: usize>(acc: &mut Accumulator<R>, desc_a: u64, desc_b: u64, scale_d: bool) {
    const { check_r(R) };
    intrinsics::wgmma_m64k32_f32_fp8::<R, 0, 0>(acc.d.as_mut_ptr(), desc_a, desc_b, scale_d as u32)
}

/// [`mma_e4m3`] on [`E5M2`](crate::fp8::E5M2) tiles (`.e5m2.e5m2`).
///
/// # Safety
/// As [`mma_bf16`].
#[inline(always)]
pub unsafe fn mma_e5m2<const R: usize>(acc: &mut Accumulator<R>, desc_a: u64, desc_b: u64, scale_d: bool) {
    const { check_r(R) };
    intrinsics::wgmma_m64k32_f32_fp8::<R, 1, 1>(acc.d.as_mut_ptr(), desc_a, desc_b, scale_d as u32)
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::bf16 {}
    impl Sealed for f16 {}
}

/// A 16-bit element type of the RS form's A fragment: [`bf16`] or `f16`.
pub trait HalfElement: sealed::Sealed + Copy {
    /// The element's bits.
    fn to_bits(self) -> u16;
    /// `lo` and `hi` rounded to nearest-even elements, `lo` in the low 16 bits
    /// (`cvt.rn.{bf16x2,f16x2}.f32`).
    fn pack(lo: f32, hi: f32) -> u32;
    #[doc(hidden)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn mma_rs<const R: usize, const TRANS_B: u32>(
        acc: *mut f32,
        a0: u32,
        a1: u32,
        a2: u32,
        a3: u32,
        desc_b: u64,
        scale_d: u32,
    );
    #[doc(hidden)]
    unsafe fn mma_ss<const R: usize, const TRANS_A: u32, const TRANS_B: u32>(
        acc: *mut f32,
        desc_a: u64,
        desc_b: u64,
        scale_d: u32,
    );
}

/// The `HalfElement` impl of `$t`, whose pairs are `$pair` and whose `wgmma` type operand is
/// `$kind` (0 bf16, 1 f16).
macro_rules! half_element {
    ($t:ty, $pair:ty, $kind:literal) => {
        impl HalfElement for $t {
            #[inline(always)]
            fn to_bits(self) -> u16 {
                self.to_bits()
            }
            #[inline(always)]
            fn pack(lo: f32, hi: f32) -> u32 {
                <$pair>::from_f32(lo, hi).to_bits()
            }
            #[inline(always)]
            unsafe fn mma_rs<const R: usize, const TRANS_B: u32>(
                acc: *mut f32,
                a0: u32,
                a1: u32,
                a2: u32,
                a3: u32,
                desc_b: u64,
                scale_d: u32,
            ) {
                intrinsics::wgmma_m64k16_f32_rs::<R, $kind, TRANS_B>(acc, a0, a1, a2, a3, desc_b, scale_d)
            }
            #[inline(always)]
            unsafe fn mma_ss<const R: usize, const TRANS_A: u32, const TRANS_B: u32>(
                acc: *mut f32,
                desc_a: u64,
                desc_b: u64,
                scale_d: u32,
            ) {
                intrinsics::wgmma_m64k16_f32::<R, $kind, TRANS_A, TRANS_B>(acc, desc_a, desc_b, scale_d)
            }
        }
    };
}

half_element!(bf16, Bf16x2, 0);
half_element!(f16, F16x2, 1);

/// This thread's part of a 64×16 A operand in registers, for [`mma_rs`] / [`mma_rs_mn_b`]: four
/// registers of two `T` each (low half first). Warp `w` of the warpgroup holds rows
/// `16 w..16 w + 16` in the layout of `mma.sync`'s 16×16 A fragment ([`FragA::coord`]).
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct FragA<T: HalfElement> {
    /// The registers as `wgmma.mma_async` takes them.
    pub regs: [u32; 4],
    _t: PhantomData<T>,
}

impl<T: HalfElement> FragA<T> {
    /// A fragment from its raw registers.
    #[inline(always)]
    pub const fn from_regs(regs: [u32; 4]) -> Self {
        FragA { regs, _t: PhantomData }
    }

    /// `(row, k)` of element `j` (0 low, 1 high half) of register `i` held by thread `t`
    /// (0..128) of the warpgroup: row `16 w + l / 4 + 8 (i % 2)`, k `2 (l % 4) + 8 (i / 2) + j`
    /// for warp `w = t / 32`, lane `l`.
    pub const fn coord(t: u32, i: usize, j: usize) -> (usize, usize) {
        let (w, l) = ((t / 32) as usize, (t % 32) as usize);
        (16 * w + l / 4 + 8 * (i % 2), 2 * (l % 4) + 8 * (i / 2) + j)
    }

    /// Builds thread `t`'s fragment from `at(row, k)`.
    #[inline(always)]
    pub fn from_fn(t: u32, mut at: impl FnMut(usize, usize) -> T) -> Self {
        let mut regs = [0u32; 4];
        let mut i = 0;
        while i < 4 {
            let (r0, k0) = Self::coord(t, i, 0);
            let (r1, k1) = Self::coord(t, i, 1);
            regs[i] = at(r0, k0).to_bits() as u32 | (at(r1, k1).to_bits() as u32) << 16;
            i += 1;
        }
        FragA::from_regs(regs)
    }

    /// Columns `16 j..16 j + 16` of a 64×N accumulator as the A operand of a next product,
    /// rounded to `T` (nearest even): element `e` of register `r` is `acc.d[8 j + 2 r + e]`,
    /// thread for thread the same element ([`FragA::coord`]`(t, r, e)` is
    /// [`Accumulator::coord`]`(t, 8 j + 2 r + e)` less `16 j` columns). Used for `j` in
    /// `0..N / 16` after [`wait_group`]; then [`fence`] before the `mma_rs`.
    ///
    /// # Panics
    /// If `8 j + 8 > R` (on the device: a trap).
    #[inline(always)]
    pub fn from_accumulator<const R: usize>(acc: &Accumulator<R>, j: usize) -> Self {
        let d = &acc.d[8 * j..8 * j + 8];
        FragA::from_regs([T::pack(d[0], d[1]), T::pack(d[2], d[3]), T::pack(d[4], d[5]), T::pack(d[6], d[7])])
    }
}

// --- NVIDIA cuda-oxide's names (docs/compatibility.md) -----------------------------------------

/// The descriptor NVIDIA cuda-oxide's `make_smem_desc` builds for the tile at `ptr`: leading
/// and stride byte offsets 128 and layout type 3, i.e.
/// `((shared_addr >> 4) & 0x3fff) | 0xC000_0008_0008_0000`. Layout type 3 is the 32-byte
/// swizzle ([`Swizzle::B32`]) in the PTX encoding, whatever the name suggests elsewhere; for
/// other layouts build the descriptor with [`descriptor`].
///
/// ```
/// use cuda_device::wgmma::{Swizzle, descriptor};
/// // What `make_smem_desc` returns for a tile at shared-window offset 0x1230:
/// let addr = 0x1230u32;
/// assert_eq!(descriptor(addr, 128, 128, Swizzle::B32), ((addr as u64 >> 4) & 0x3fff) | 0xC000_0008_0008_0000);
/// ```
///
/// # Safety
/// `ptr` points into this block's shared memory.
#[inline(always)]
pub unsafe fn make_smem_desc(ptr: *const u8) -> u64 {
    let addr = unsafe { crate::shared::cvta_generic_to_shared_offset(ptr) } as u32;
    descriptor(addr, 128, 128, Swizzle::B32)
}

/// [`fence`] under NVIDIA cuda-oxide's name.
///
/// # Safety
/// As [`fence`] (NVIDIA's is a safe function; ours states the warpgroup rule).
#[inline(always)]
pub unsafe fn wgmma_fence() {
    intrinsics::wgmma_fence()
}

/// [`commit_group`] under NVIDIA cuda-oxide's name.
///
/// # Safety
/// As [`commit_group`].
#[inline(always)]
pub unsafe fn wgmma_commit_group() {
    intrinsics::wgmma_commit_group()
}

/// `wgmma.wait_group.sync.aligned N` without an accumulator operand (NVIDIA cuda-oxide's
/// form). Prefer [`wait_group`], which ties the accumulator to the wait; here nothing stops the
/// compiler from reading an accumulator register above the wait, so `ptxas` has to order it
/// (it does, serialising the `wgmma` when it must).
///
/// # Safety
/// As [`wait_group`].
#[inline(always)]
pub unsafe fn wgmma_wait_group<const N: u32>() {
    intrinsics::wgmma_wait_group::<N, 0>(core::ptr::null_mut())
}

/// `wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16` accumulating into `acc`
/// (`acc += A·B`; scale-d is 1): [`mma_bf16`] on an [`Accumulator<32>`] in NVIDIA
/// cuda-oxide's form, `acc[i / 8][i % 8]` being register `i` (element
/// [`Accumulator::coord`]`(thread, i)`).
///
/// # Safety
/// As [`mma_bf16`].
#[inline(always)]
pub unsafe fn wgmma_mma_m64n64k16_f32_bf16(acc: &mut [[f32; 8]; 4], desc_a: u64, desc_b: u64) {
    intrinsics::wgmma_m64k16_f32::<32, 0, 0, 0>(acc.as_mut_ptr().cast(), desc_a, desc_b, 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Columns `16 j..` of the m64nN accumulator are the m64k16 A fragment, register for
    /// register: what [`FragA::from_accumulator`] relies on.
    #[test]
    fn accumulator_columns_are_a_fragments() {
        for t in 0..128 {
            for j in 0..16 {
                for r in 0..4 {
                    for e in 0..2 {
                        let (row, col) = Accumulator::<128>::coord(t, 8 * j + 2 * r + e);
                        assert_eq!(FragA::<bf16>::coord(t, r, e), (row, col - 16 * j), "t {t} j {j} r {r} e {e}");
                    }
                }
            }
        }
    }

    #[test]
    fn from_accumulator_packs_low_half_first() {
        let mut acc = Accumulator::<16>::ZERO;
        for (i, x) in acc.d.iter_mut().enumerate() {
            *x = i as f32;
        }
        acc.scale(0.5);
        let f = FragA::<bf16>::from_accumulator(&acc, 1);
        let want = |lo: f32, hi: f32| bf16::from_f32(lo).to_bits() as u32 | (bf16::from_f32(hi).to_bits() as u32) << 16;
        assert_eq!(f.regs, [want(4.0, 4.5), want(5.0, 5.5), want(6.0, 6.5), want(7.0, 7.5)]);
        let h = FragA::<f16>::from_accumulator(&acc, 0);
        assert_eq!(h.regs[3], (3.0f16).to_bits() as u32 | ((3.5f16).to_bits() as u32) << 16);
        acc.fill(2.0);
        assert_eq!(acc.d, [2.0; 16]);
    }
}
