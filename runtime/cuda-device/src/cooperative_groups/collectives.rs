//! Reductions and inclusive scans over a warp tile ([`warp_reduce`], [`warp_scan`]) and over a
//! block ([`block_reduce`], [`block_scan`]), with an operation of [`ops`] on `u32`, `i32` or `f32`.
//! Every participating thread gets the result.

use super::{ThreadBlock, ThreadGroup, WarpCollective, WarpTile};
use crate::{SharedArray, SharedMemory, thread, warp};

/// The operations: `Sum`, `Min`, `Max` for `u32`, `i32`, `f32`; `BitAnd`, `BitOr`, `BitXor` for
/// `u32`. `warp_reduce::<u32, ops::Max, 32>(&tile, x)`.
pub mod ops {
    /// An associative, commutative operation with an identity, over `T`.
    ///
    /// ```ignore
    /// assert_eq!(<Sum as ReduceOp<u32>>::combine(2, 3), 5);
    /// ```
    pub trait ReduceOp<T> {
        /// The value `x` combines with to give `x`.
        fn identity() -> T;
        /// `a ∘ b`.
        fn combine(a: T, b: T) -> T;
    }

    /// Addition (wrapping for integers).
    #[derive(Clone, Copy, Debug)]
    pub struct Sum;
    /// Minimum (for `f32`: `if a < b { a } else { b }`, so NaNs are the caller's problem).
    #[derive(Clone, Copy, Debug)]
    pub struct Min;
    /// Maximum (for `f32`: `if a > b { a } else { b }`).
    #[derive(Clone, Copy, Debug)]
    pub struct Max;
    /// Bitwise AND (`u32`).
    #[derive(Clone, Copy, Debug)]
    pub struct BitAnd;
    /// Bitwise OR (`u32`).
    #[derive(Clone, Copy, Debug)]
    pub struct BitOr;
    /// Bitwise XOR (`u32`).
    #[derive(Clone, Copy, Debug)]
    pub struct BitXor;

    macro_rules! op {
        ($($op:ident for $t:ty: $id:expr, |$a:ident, $b:ident| $e:expr;)*) => {$(
            impl ReduceOp<$t> for $op {
                #[inline(always)]
                fn identity() -> $t {
                    $id
                }
                #[inline(always)]
                fn combine($a: $t, $b: $t) -> $t {
                    $e
                }
            }
        )*};
    }

    op! {
        Sum for u32: 0, |a, b| a.wrapping_add(b);
        Min for u32: u32::MAX, |a, b| if a < b { a } else { b };
        Max for u32: 0, |a, b| if a > b { a } else { b };
        BitAnd for u32: u32::MAX, |a, b| a & b;
        BitOr for u32: 0, |a, b| a | b;
        BitXor for u32: 0, |a, b| a ^ b;
        Sum for i32: 0, |a, b| a.wrapping_add(b);
        Min for i32: i32::MAX, |a, b| if a < b { a } else { b };
        Max for i32: i32::MIN, |a, b| if a > b { a } else { b };
        Sum for f32: 0.0, |a, b| a + b;
        Min for f32: f32::INFINITY, |a, b| if a < b { a } else { b };
        Max for f32: f32::NEG_INFINITY, |a, b| if a > b { a } else { b };
    }
}

mod sealed {
    pub trait Sealed {}
}

/// A value the reductions move between lanes: `u32`, `i32` or `f32` (as its 32 bits).
pub trait WarpShuffle: Copy + sealed::Sealed {
    #[doc(hidden)]
    fn to_word(self) -> u32;
    #[doc(hidden)]
    fn from_word(w: u32) -> Self;
}

macro_rules! shuffle_word {
    ($($t:ty: |$v:ident| $to:expr, |$w:ident| $from:expr;)*) => {$(
        impl sealed::Sealed for $t {}
        impl WarpShuffle for $t {
            #[inline(always)]
            fn to_word(self) -> u32 {
                let $v = self;
                $to
            }
            #[inline(always)]
            fn from_word($w: u32) -> Self {
                $from
            }
        }
    )*};
}

shuffle_word! {
    u32: |v| v, |w| w;
    i32: |v| v as u32, |w| w as i32;
    f32: |v| v.to_bits(), |w| f32::from_bits(w);
}

/// The combination of every lane's `value` over the tile, in every lane of it (a butterfly of
/// `log2(N)` XOR shuffles). All lanes of the tile must call it.
///
/// ```ignore
/// let tile = this_thread_block().tiled_partition::<32>();
/// let total = warp_reduce::<u32, Sum, 32>(&tile, x);
/// ```
#[inline(always)]
pub fn warp_reduce<T: WarpShuffle, Op: ops::ReduceOp<T>, const N: u32>(tile: &WarpTile<N>, value: T) -> T {
    let mut acc = value;
    let mut step = N / 2;
    while step > 0 {
        let other = T::from_word(tile.shfl_xor(acc.to_word(), step));
        acc = Op::combine(acc, other);
        step /= 2;
    }
    acc
}

/// Inclusive scan over the tile: the thread of rank `r` gets the combination of ranks `0..=r`.
/// All lanes of the tile must call it.
///
/// ```ignore
/// let tile = this_thread_block().tiled_partition::<32>();
/// let upto_me = warp_scan::<u32, Sum, 32>(&tile, 1); // rank + 1
/// ```
#[inline(always)]
pub fn warp_scan<T: WarpShuffle, Op: ops::ReduceOp<T>, const N: u32>(tile: &WarpTile<N>, value: T) -> T {
    let rank = tile.thread_rank();
    let mut acc = value;
    let mut step = 1;
    while step < N {
        let other = T::from_word(tile.shfl_up(acc.to_word(), step));
        if rank >= step {
            acc = Op::combine(other, acc);
        }
        step *= 2;
    }
    acc
}

/// The block-level collectives' scratch: one word per warp. A static of this crate (rather than
/// the caller's array) so that a bad pointer cannot make a safe call write anywhere; each
/// collective starts with a barrier, so back-to-back calls never race on it.
static SCRATCH: SharedMemory<u32, 32> = SharedMemory::UNINIT;

/// The scratch argument of [`block_reduce`] and [`block_scan`] (which use their own): `&SMEM` of a
/// `SharedMemory<T, NUM_WARPS>`, or `&raw mut SMEM` of a `SharedArray<T, NUM_WARPS>` (NVIDIA
/// cuda-oxide's signature).
pub trait BlockScratch<T, const NUM_WARPS: usize> {}

impl<T, const NUM_WARPS: usize> BlockScratch<T, NUM_WARPS> for *mut SharedArray<T, NUM_WARPS> {}
impl<T, const NUM_WARPS: usize> BlockScratch<T, NUM_WARPS> for &SharedMemory<T, NUM_WARPS> {}

/// Warps per block, for a block whose size is a multiple of 32.
#[inline(always)]
fn block_warps() -> u32 {
    thread::block_size().div_ceil(warp::WARP_SIZE)
}

/// The combination of every thread's `value` over the block, in every thread. All threads of
/// the block must call it; the block size must be a multiple of 32 (up to 1024).
///
/// `smem` is accepted for NVIDIA cuda-oxide's signature and not used: the scratch is this
/// crate's own 128 bytes of shared memory. It is `&SMEM` for a `static SMEM: SharedMemory<T,
/// NUM_WARPS>`, or NVIDIA's `&raw mut SMEM` for a `static mut SMEM: SharedArray<T, NUM_WARPS>`
/// ([`BlockScratch`]). `NUM_WARPS` must be 1..=32 (anything else does not compile).
///
/// ```ignore
/// static SMEM: SharedMemory<u32, 8> = SharedMemory::UNINIT;
/// let total = block_reduce::<u32, Sum, 8>(&this_thread_block(), x, &SMEM);
/// ```
#[inline(always)]
pub fn block_reduce<T: WarpShuffle, Op: ops::ReduceOp<T>, const NUM_WARPS: usize>(
    block: &ThreadBlock,
    value: T,
    smem: impl BlockScratch<T, NUM_WARPS>,
) -> T {
    const { assert!(NUM_WARPS >= 1 && NUM_WARPS <= 32, "block_reduce: NUM_WARPS must be 1..=32") };
    let _ = smem;
    let warp = block.tiled_partition::<32>();
    let lane = warp.thread_rank();
    let warp_id = thread::block_thread_index() / warp::WARP_SIZE;
    let mine = warp_reduce::<T, Op, 32>(&warp, value);
    // SAFETY (every SCRATCH access below): each phase is fenced by barriers that every thread of
    // the block reaches; between two barriers a slot has one writer and no reader, or only readers.
    block.sync();
    if lane == 0 {
        unsafe { SCRATCH.write(warp_id as usize, mine.to_word()) };
    }
    block.sync();
    if warp_id == 0 {
        let part =
            if lane < block_warps() { T::from_word(unsafe { SCRATCH.read(lane as usize) }) } else { Op::identity() };
        let total = warp_reduce::<T, Op, 32>(&warp, part);
        warp.sync();
        if lane == 0 {
            unsafe { SCRATCH.write(0, total.to_word()) };
        }
    }
    block.sync();
    T::from_word(unsafe { SCRATCH.read(0) })
}

/// Inclusive scan over the block: thread `i` (in [`thread::block_thread_index`] order) gets the
/// combination of threads `0..=i`. All threads of the block must call it; the block size must be
/// a multiple of 32 (up to 1024). `smem` as for [`block_reduce`].
///
/// ```ignore
/// static SMEM: SharedMemory<u32, 8> = SharedMemory::UNINIT;
/// let upto_me = block_scan::<u32, Sum, 8>(&this_thread_block(), 1, &SMEM);
/// ```
#[inline(always)]
pub fn block_scan<T: WarpShuffle, Op: ops::ReduceOp<T>, const NUM_WARPS: usize>(
    block: &ThreadBlock,
    value: T,
    smem: impl BlockScratch<T, NUM_WARPS>,
) -> T {
    const { assert!(NUM_WARPS >= 1 && NUM_WARPS <= 32, "block_scan: NUM_WARPS must be 1..=32") };
    let _ = smem;
    let warp = block.tiled_partition::<32>();
    let lane = warp.thread_rank();
    let warp_id = thread::block_thread_index() / warp::WARP_SIZE;
    let within = warp_scan::<T, Op, 32>(&warp, value);
    // SAFETY: as in `block_reduce`.
    block.sync();
    if lane == 31 {
        unsafe { SCRATCH.write(warp_id as usize, within.to_word()) };
    }
    block.sync();
    if warp_id == 0 {
        let total =
            if lane < block_warps() { T::from_word(unsafe { SCRATCH.read(lane as usize) }) } else { Op::identity() };
        let upto = warp_scan::<T, Op, 32>(&warp, total);
        // Exclusive: the warps before this one.
        let before = T::from_word(warp.shfl_up(upto.to_word(), 1));
        let before = if lane == 0 { Op::identity() } else { before };
        warp.sync();
        if lane < block_warps() {
            unsafe { SCRATCH.write(lane as usize, before.to_word()) };
        }
    }
    block.sync();
    Op::combine(T::from_word(unsafe { SCRATCH.read(warp_id as usize) }), within)
}
