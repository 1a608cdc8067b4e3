//! bf16 GEMM on Hopper, written on `cuda_device::tile`: `C = act(alpha · A·B + bias)`, A
//! (M × K) row- or column-major, B (K × N) column- or row-major, f32 accumulation, bf16 C
//! (row-major). Any M, N, K that are multiples of 16: TMA reads zeros past the edges and stores
//! only inside C. Build for `sm_90a`.
//!
//! The design of CUTLASS's and cuBLAS's Hopper kernels:
//! - a block of 384 threads computes 128 × 256 tiles of C; warpgroup 0 is the producer (one
//!   thread issues TMA, `setmaxnreg` down to 40 registers), warpgroups 1 and 2 are consumers
//!   (232 registers each), each with a 64 × 256 f32 accumulator (128 registers per thread);
//! - a 4-stage ring of 64-deep K slices (A 128 × 64 and B 256 × 64, 48 KiB a stage) behind
//!   `full`/`empty` mbarriers (`tile::Pipeline`);
//! - each consumer issues the 4 `wgmma` m64n256k16 of k tile `s`, then `wgmma.wait_group 1`:
//!   the MMAs of `s` overlap the completion of `s - 1`, whose stage it then releases;
//! - persistent: one block per SM walks the tiles in a grouped order (16 tile rows deep) for L2
//!   reuse (`tile::TileScheduler`);
//! - epilogue: each consumer writes its results with `stmatrix` into two 64 × 64 staging chunks
//!   (after the ring: 225 KiB of shared memory in all) and its first thread stores each with
//!   TMA, which runs on while the warpgroup starts its next tile (`gemm_direct`: masked `Bf16x2`
//!   stores from the registers instead, 10 % slower at 4096³);
//! - `gemm_cluster`: blocks in clusters of 2 take vertically adjacent tiles and share B: each
//!   loads one half of the B slice and multicasts it to both, halving B's L2 traffic;
//! - `gemm_pingpong` (CUTLASS's "ping-pong" schedule): each consumer warpgroup owns whole
//!   128 × 128 tiles and the two take turns on the tensor cores through named barriers, so one's
//!   epilogue runs under the other's mainloop;
//! - layouts: `gemm` takes A row-major and B column-major (K contiguous in both, "TN"); the
//!   three other layouts cuBLAS takes are `gemm_a_colmajor`, `gemm_b_rowmajor` and
//!   `gemm_a_colmajor_b_rowmajor`, the same body over `tile::Operand`s stored `MnMajor` (`wgmma`
//!   transposes 16-bit operands as it reads them);
//! - fp8: `gemm_fp8`, `gemm_fp8_cluster`, `gemm_fp8_pingpong` are the same bodies over E4M3
//!   (`tile::KMajorMma` picks the `wgmma`: a 128-byte K slice is 64 bf16 or 128 fp8 elements),
//!   with per-tensor scales as cuBLASLt's `A_SCALE_POINTER`/`B_SCALE_POINTER`; K-major only, the
//!   one layout fp8 `wgmma` reads.
//!
//! The kernels are this library's, so that `bench/` times the very kernels `main.rs` verifies;
//! [`Gemm`] is the host side both use.
use std::cell::Cell;
use std::mem::size_of;
use std::sync::Arc;

use cuda_core::tma::{TensorMap, TmaElement, TmaSwizzle};
use cuda_core::{CudaContext, CudaStream, DeviceBuffer, DriverError, LaunchConfig};
use cuda_device::fp8::E4M3;
use cuda_device::half::{Bf16x2, bf16};
use cuda_device::tile::epilogue::{self, Bf16Out, EpilogueOp, Linear};
use cuda_device::tile::{
    Consumer, KMajor, KMajorMma, Major, MnMajor, NoAct, Operand, Pipeline, SmemTile, Stage, TileGrid,
};
use cuda_device::tile::{TileScheduler, operand, warpgroup};
use cuda_device::wgmma::{self, Accumulator};
use cuda_device::{DynamicSharedArray, cluster, cluster_launch, cuda_module, kernel, launch_bounds, sync_threads};
use cuda_device::{thread, tma};

/// Block tile rows (two consumer warpgroups of 64).
pub const BM: usize = 128;
/// Block tile columns (one m64n256 `wgmma` per K step and warpgroup).
pub const BN: usize = 256;
/// K slice per pipeline stage (bf16: 128 bytes).
pub const BK: usize = 64;
/// K slice per pipeline stage of the fp8 kernels (128 bytes too).
pub const BK_FP8: usize = 128;
/// Pipeline depth.
pub const STAGES: usize = 4;
/// Tile rows per group of the persistent raster order.
pub const GROUP_M: u32 = 16;

/// How `m × n` is cut into tiles of `BM × bn` and walked, by clusters of `cluster_m` blocks.
pub const fn tile_grid(m: u32, n: u32, bn: usize, cluster_m: u32) -> TileGrid {
    TileGrid { m, n, bm: BM as u32, bn: bn as u32, group_m: GROUP_M, cluster_m }
}

/// A stage's slice of A: 128 rows × 64 k.
pub type ATile = SmemTile<bf16, BM, BK>;
/// A stage's slice of B: 256 columns of C × 64 k.
pub type BTile = SmemTile<bf16, BN, BK>;
/// What one TMA load of A, or of one half of B, fills: 128 rows of M or N × 64 of K, stored as
/// `L` says (its [`Operand::tma_box`] is the maps' box).
pub type Slab<L = KMajor> = Operand<bf16, 128, BK, L>;
/// What one TMA box of fp8 A or B fills: 128 rows × 128 k.
pub type Fp8Slab = SmemTile<E4M3, 128, BK_FP8>;
/// A staging chunk of the TMA-store epilogue: 64 rows × 64 columns of C.
pub type CChunk = SmemTile<bf16, 64, 64>;

const STAGE_BYTES: usize = ATile::BYTES + BTile::BYTES; // (BM + BN) × 128, fp8 too
const RING_BYTES: usize = STAGES * STAGE_BYTES;
/// Dynamic shared memory of `gemm_direct`: the ring, then the barriers.
pub const SMEM_BYTES: usize = RING_BYTES + Pipeline::<STAGES>::BARRIER_BYTES;
/// Where the TMA-store epilogue's staging chunks start: after the barriers, 1024-byte aligned.
const STAGING: usize = SMEM_BYTES.next_multiple_of(1024);
/// Dynamic shared memory of the kernels with the TMA-store epilogue (all but `gemm_direct` and
/// the ping-pong ones): also two staging chunks per consumer warpgroup (225 KiB in all).
pub const SMEM_BYTES_TMA_STORE: usize = STAGING + 4 * CChunk::BYTES;

/// Tile columns of the ping-pong kernels (each consumer warpgroup owns a 128 × 128 tile).
pub const PP_BN: usize = 128;
/// Pipeline depth of the ping-pong kernels (32 KiB stages).
pub const PP_STAGES: usize = 6;
const PP_STAGE_BYTES: usize = (BM + PP_BN) * 128;
const PP_RING_BYTES: usize = PP_STAGES * PP_STAGE_BYTES;
/// Dynamic shared memory of the ping-pong kernels.
pub const PP_SMEM_BYTES: usize = PP_RING_BYTES + Pipeline::<PP_STAGES>::BARRIER_BYTES;
/// Named barriers `ORDER` and `ORDER + 1`: consumer warpgroup 0's and 1's turn.
const ORDER: u32 = 1;

/// Where a consumer warpgroup's finished 64 × 256 accumulator goes.
trait Store {
    /// Stores `acc` (rows `row`.., columns `col`..) through `op`; `half` is the warpgroup's
    /// row half of the block tile.
    fn store(&self, acc: &Accumulator<128>, row: usize, col: usize, half: usize, op: &impl EpilogueOp);
    /// Before the block exits.
    fn finish(&self);
}

/// Masked `Bf16x2` stores straight from the registers.
struct Direct<'a>(Bf16Out<'a>);

impl Store for Direct<'_> {
    #[inline(always)]
    fn store(&self, acc: &Accumulator<128>, row: usize, col: usize, _half: usize, op: &impl EpilogueOp) {
        epilogue::store_accumulator(acc, &self.0, row, col, op);
    }
    fn finish(&self) {}
}

/// Staged in shared memory (two 64 × 64 chunks per warpgroup, after the ring and its barriers)
/// by `stmatrix`, stored by TMA while the warpgroup goes on to its next tile.
struct ViaTma<'a> {
    map: &'a TensorMap,
}

impl Store for ViaTma<'_> {
    #[inline(always)]
    fn store(&self, acc: &Accumulator<128>, row: usize, col: usize, half: usize, op: &impl EpilogueOp) {
        let staging = DynamicSharedArray::<u8, 1024>::offset(STAGING);
        // SAFETY: the launch gives SMEM_BYTES_TMA_STORE; warpgroup `half` alone uses chunks
        // 2 half and 2 half + 1 (8 KiB each from STAGING, so 1024-byte aligned) and named
        // barrier 1 + half.
        unsafe {
            let buf = |i: usize| CChunk::from_ptr(staging.add((2 * half + i) * CChunk::BYTES));
            epilogue::store_accumulator_tma(acc, [buf(0), buf(1)], self.map, row, col, 1 + half as u32, op);
        }
    }
    fn finish(&self) {
        if warpgroup::is_leader() {
            tma::wait_group(); // the staging chunks outlive the last stores' reads
        }
    }
}

/// The kernel body: elements `E` (bf16: `BK` 64; fp8: `BK` 128, a 128-byte row either way), A
/// stored as `LA` says and B as `LB` ([`KMajor`], or for bf16 [`MnMajor`]), `CLUSTER` blocks
/// per cluster along M (1 or 2), results through `out`.
#[inline(always)]
fn gemm_body<E: KMajorMma, const BK: usize, const CLUSTER: u32, LA: Major, LB: Major>(
    a_map: &TensorMap,
    b_map: &TensorMap,
    k: u32,
    tiles: TileScheduler,
    op: &Linear<'_>,
    out: &impl Store,
) {
    const { assert!(BK * size_of::<E>() == 128, "one 128-byte panel of K per stage") };
    let smem = DynamicSharedArray::<u8, 1024>::get_raw();
    // SAFETY (all three): the launch gives at least SMEM_BYTES of 1024-aligned dynamic shared
    // memory; stage s's A and B tiles and the barriers are disjoint ranges of it, each used only
    // as what it is named here.
    let a_tile = |s: usize| unsafe { Operand::<E, BM, BK, LA>::from_ptr(smem.add(s * STAGE_BYTES)) };
    let b_tile = |s: usize| unsafe { Operand::<E, BN, BK, LB>::from_ptr(smem.add(s * STAGE_BYTES + BM * 128)) };
    let pipe = unsafe { Pipeline::<STAGES>::new(smem.add(RING_BYTES).cast()) };
    if thread::threadIdx_x() == 0 {
        // SAFETY: one thread, first; the block (cluster) barrier below publishes it. `full`
        // counts the producer's arrival, `empty` both consumer warpgroups of every block whose
        // B half lands in this block.
        unsafe { pipe.init(1, 2 * CLUSTER) };
        // SAFETY: grid-constant maps.
        unsafe {
            tma::prefetch(a_map);
            tma::prefetch(b_map);
        }
    }
    if CLUSTER > 1 {
        cluster::sync()
    } else {
        sync_threads()
    }
    let k_tiles = k.div_ceil(BK as u32);
    let wg = warpgroup::index_uniform(); // uniform: the consumers' descriptors in uniform registers
    if wg == 0 {
        // SAFETY: the whole warpgroup, in the producer branch.
        unsafe { warpgroup::producer_registers::<40>() };
        if warpgroup::is_leader() {
            let rank = if CLUSTER > 1 { cluster::block_rank() } else { 0 };
            let mut producer = pipe.producer();
            for tile in tiles {
                for kt in 0..k_tiles {
                    let fill = producer.acquire(STAGE_BYTES as u32);
                    let (x, bar, s) = ((kt as usize * BK) as i32, fill.barrier(), fill.index());
                    let (row, col) = (tile.row as i32, tile.col as i32);
                    // SAFETY: the maps' boxes are `Slab::<LA>::tma_box()` and `Slab::<LB>`'s (128-byte
                    // swizzle); stage s is free in every block it is written in (acquire waited
                    // for the releases of all of them) and its `full` phase expects STAGE_BYTES
                    // in each.
                    unsafe {
                        a_tile(s).load(a_map, row, x, bar);
                        if CLUSTER == 1 {
                            b_tile(s).part::<128>(0).load(b_map, col, x, bar);
                            b_tile(s).part::<128>(1).load(b_map, col + 128, x, bar);
                        } else {
                            // This block's half of the slice, into both blocks of the cluster.
                            let half = b_tile(s).part::<128>(rank as usize);
                            half.load_multicast(b_map, col + 128 * rank as i32, x, bar, 0b11);
                        }
                    }
                }
            }
            // In a cluster the other block's consumers arrive on this block's `empty` barriers:
            // wait for every release before exiting (alone, this only waits for our own).
            producer.drain();
        }
    } else {
        // SAFETY: the whole warpgroup, in the consumer branch; 40 × 128 + 232 × 256 ≤ 65536.
        unsafe { warpgroup::consumer_registers::<232>() };
        let half = (wg - 1) as usize; // rows 64 half .. 64 half + 64 of the block tile
        let leader = warpgroup::is_leader();
        let mut consumer = pipe.consumer();
        let release = |consumer: &Consumer<STAGES>, stage: Stage| {
            if leader {
                if CLUSTER == 1 {
                    consumer.release(stage)
                } else {
                    // SAFETY: both blocks initialised their barriers before the cluster barrier
                    // and drain them before exiting.
                    unsafe { consumer.release_cluster(stage, 0b11) }
                }
            }
        };
        let mut acc = Accumulator::<128>::ZERO;
        for tile in tiles {
            let mut reading: Option<Stage> = None;
            for kt in 0..k_tiles {
                let stage = consumer.wait();
                let (a, b) = (a_tile(stage.index()).part::<64>(half), b_tile(stage.index()));
                // SAFETY: the warpgroup runs this together; the stage was written by TMA (the
                // async proxy, which wgmma reads through) and is not released before the wait
                // below says its MMAs are done; `acc` is only touched by wgmma until then.
                unsafe {
                    wgmma::fence();
                    cuda_device::unroll!(for kk in 0..BK / E::K_STEP {
                        operand::mma(&mut acc, a, b, kk * E::K_STEP, kt > 0 || kk > 0); // first: acc = A·B
                    });
                    wgmma::commit_group();
                    wgmma::wait_group::<1, 128>(&mut acc); // k tile kt - 1's MMAs are done
                }
                if let Some(done) = reading {
                    release(&consumer, done);
                }
                reading = Some(stage);
            }
            // SAFETY: as above.
            unsafe { wgmma::wait_group::<0, 128>(&mut acc) };
            if let Some(done) = reading {
                release(&consumer, done);
            }
            // A closure: its type is this instance's own, so the epilogue has one caller and
            // is inlined (tile::epilogue's docs say why that matters).
            let op = |v: f32, row: usize, col: usize| op.apply(v, row, col);
            out.store(&acc, tile.row as usize + 64 * half, tile.col as usize, half, &op);
        }
        out.finish();
    }
    // Neither block of a cluster leaves while the other may still use its shared memory.
    if CLUSTER > 1 {
        cluster::sync();
    }
}

/// The ping-pong body (CUTLASS's "pingpong" schedule): each consumer warpgroup computes whole
/// 128 × 128 tiles (two m64n128 accumulators), the two taking the block's tiles in turn. The
/// producer fills the ring tile after tile; consumer `c` takes the `k_tiles` stages of tiles
/// `c, c + 2, …` and skips the other's. Named barrier `ORDER + c` gives warpgroup `c` its turn
/// on the tensor cores: it waits there before its mainloop, and the other arrives there once it
/// has issued its last MMAs, so one warpgroup's epilogue (and its last MMAs' drain) runs under
/// the other's mainloop. The same turn makes [`Consumer::skip`]'s early parity waits exact: when
/// a warpgroup starts, every stage before its first has landed.
#[inline(always)]
fn pingpong_tn<E: KMajorMma, const BK: usize>(
    a_map: &TensorMap,
    b_map: &TensorMap,
    k: u32,
    tiles: TileScheduler,
    op: &Linear<'_>,
    out: &Bf16Out<'_>,
) {
    const { assert!(BK * size_of::<E>() == 128, "one 128-byte panel of K per stage") };
    let smem = DynamicSharedArray::<u8, 1024>::get_raw();
    // SAFETY (all three): the launch gives at least PP_SMEM_BYTES of 1024-aligned dynamic
    // shared memory; stage s's A and B tiles and the barriers are disjoint ranges of it.
    let a_tile = |s: usize| unsafe { SmemTile::<E, BM, BK>::from_ptr(smem.add(s * PP_STAGE_BYTES)) };
    let b_tile = |s: usize| unsafe { SmemTile::<E, PP_BN, BK>::from_ptr(smem.add(s * PP_STAGE_BYTES + BM * 128)) };
    let pipe = unsafe { Pipeline::<PP_STAGES>::new(smem.add(PP_RING_BYTES).cast()) };
    if thread::threadIdx_x() == 0 {
        // SAFETY: one thread, first; the block barrier below publishes it. Each stage has one
        // consumer warpgroup.
        unsafe { pipe.init(1, 1) };
        // SAFETY: grid-constant maps.
        unsafe {
            tma::prefetch(a_map);
            tma::prefetch(b_map);
        }
    }
    sync_threads();
    let k_tiles = k.div_ceil(BK as u32);
    let wg = warpgroup::index_uniform(); // uniform: the consumers' descriptors in uniform registers
    if wg == 0 {
        // SAFETY: the whole warpgroup, in the producer branch.
        unsafe { warpgroup::producer_registers::<40>() };
        if warpgroup::is_leader() {
            let mut producer = pipe.producer();
            for tile in tiles {
                for kt in 0..k_tiles {
                    let fill = producer.acquire(PP_STAGE_BYTES as u32);
                    let (x, bar, s) = ((kt as usize * BK) as i32, fill.barrier(), fill.index());
                    // SAFETY: the maps' boxes are 128 rows × one panel, 128-byte swizzle; stage s is
                    // free and its `full` phase expects PP_STAGE_BYTES.
                    unsafe {
                        a_tile(s).load(a_map, x, tile.row as i32, bar);
                        b_tile(s).load(b_map, x, tile.col as i32, bar);
                    }
                }
            }
        }
    } else {
        // SAFETY: the whole warpgroup, in the consumer branch; 40 × 128 + 232 × 256 ≤ 65536.
        unsafe { warpgroup::consumer_registers::<232>() };
        let me = wg - 1;
        let leader = warpgroup::is_leader();
        let mut consumer = pipe.consumer();
        let mut tiles = tiles;
        if me == 1 && tiles.next().is_some() {
            consumer.skip(k_tiles); // tile 0 is warpgroup 0's
        }
        let mut first = me == 0;
        let (mut acc0, mut acc1) = (Accumulator::<64>::ZERO, Accumulator::<64>::ZERO);
        while let Some(tile) = tiles.next() {
            if !first {
                // SAFETY: both consumer warpgroups, 256 threads: this one waits, the other
                // arrived (or will) after its mainloop.
                unsafe { warpgroup::sync(ORDER + me, 256) };
            }
            first = false;
            let mut reading: Option<Stage> = None;
            for kt in 0..k_tiles {
                let stage = consumer.wait();
                let (a, b) = (a_tile(stage.index()), b_tile(stage.index()));
                let (top, bottom) = (a.rows::<64>(0), a.rows::<64>(1));
                // SAFETY: as in `gemm_body`; both accumulators are tied to the waits.
                unsafe {
                    wgmma::fence();
                    cuda_device::unroll!(for kk in 0..BK / E::K_STEP {
                        let (db, acc) = (b.descriptor(kk * E::K_STEP), kt > 0 || kk > 0);
                        E::mma(&mut acc0, top.descriptor(kk * E::K_STEP), db, acc);
                        E::mma(&mut acc1, bottom.descriptor(kk * E::K_STEP), db, acc);
                    });
                    wgmma::commit_group();
                    wgmma::wait_group::<1, 64>(&mut acc0);
                    wgmma::wait_group::<1, 64>(&mut acc1);
                }
                if let (Some(done), true) = (reading, leader) {
                    consumer.release(done);
                }
                reading = Some(stage);
            }
            // The tensor cores are the other's (its next tile is `tiles`' next).
            if tiles.len() > 0 {
                // SAFETY: as the `sync` above, from the other side.
                unsafe { warpgroup::arrive(ORDER + 1 - me, 256) };
            }
            // SAFETY: as above.
            unsafe {
                wgmma::wait_group::<0, 64>(&mut acc0);
                wgmma::wait_group::<0, 64>(&mut acc1);
            }
            if let (Some(done), true) = (reading, leader) {
                consumer.release(done);
            }
            let (row, col) = (tile.row as usize, tile.col as usize);
            let top_op = |v: f32, row: usize, col: usize| op.apply(v, row, col);
            epilogue::store_accumulator(&acc0, out, row, col, &top_op);
            let bottom_op = |v: f32, row: usize, col: usize| op.apply(v, row, col);
            epilogue::store_accumulator(&acc1, out, row + 64, col, &bottom_op);
            if tiles.next().is_some() {
                consumer.skip(k_tiles); // the other's tile
            }
        }
    }
}

#[cuda_module]
pub mod kernels {
    use super::*;

    /// `C = alpha · A·B + bias` (bias per column; empty for none), A row-major and B
    /// column-major, C through TMA stores (`c`: C's map, boxes of 64 × 64 ([`CChunk`]),
    /// 128-byte swizzle); grid: at most one block per SM ([`Gemm::config`]), 384 threads,
    /// [`SMEM_BYTES_TMA_STORE`].
    #[kernel]
    #[launch_bounds(384, 1)]
    #[allow(clippy::too_many_arguments)] // the launch's arguments
    pub fn gemm(a: TensorMap, b: TensorMap, c: TensorMap, m: u32, n: u32, k: u32, alpha: f32, bias: &[f32]) {
        bf16_body::<KMajor, KMajor, 1>(&a, &b, &c, (m, n, k), &Linear { alpha, bias, act: NoAct });
    }

    /// [`gemm`] with A column-major (stored K × M; its map over that, in [`Slab<MnMajor>`]'s
    /// box).
    #[kernel]
    #[launch_bounds(384, 1)]
    #[allow(clippy::too_many_arguments)]
    pub fn gemm_a_colmajor(a: TensorMap, b: TensorMap, c: TensorMap, m: u32, n: u32, k: u32, alpha: f32, bias: &[f32]) {
        bf16_body::<MnMajor, KMajor, 1>(&a, &b, &c, (m, n, k), &Linear { alpha, bias, act: NoAct });
    }

    /// [`gemm`] with B row-major (stored K × N).
    #[kernel]
    #[launch_bounds(384, 1)]
    #[allow(clippy::too_many_arguments)]
    pub fn gemm_b_rowmajor(a: TensorMap, b: TensorMap, c: TensorMap, m: u32, n: u32, k: u32, alpha: f32, bias: &[f32]) {
        bf16_body::<KMajor, MnMajor, 1>(&a, &b, &c, (m, n, k), &Linear { alpha, bias, act: NoAct });
    }

    /// [`gemm`] with A column-major and B row-major.
    #[kernel]
    #[launch_bounds(384, 1)]
    #[allow(clippy::too_many_arguments)]
    pub fn gemm_a_colmajor_b_rowmajor(
        a: TensorMap,
        b: TensorMap,
        c: TensorMap,
        m: u32,
        n: u32,
        k: u32,
        alpha: f32,
        bias: &[f32],
    ) {
        bf16_body::<MnMajor, MnMajor, 1>(&a, &b, &c, (m, n, k), &Linear { alpha, bias, act: NoAct });
    }

    /// [`gemm`] in clusters of 2 blocks sharing B through TMA multicast.
    #[kernel]
    #[launch_bounds(384, 1)]
    #[cluster_launch(2, 1, 1)]
    #[allow(clippy::too_many_arguments)]
    pub fn gemm_cluster(a: TensorMap, b: TensorMap, c: TensorMap, m: u32, n: u32, k: u32, alpha: f32, bias: &[f32]) {
        bf16_body::<KMajor, KMajor, 2>(&a, &b, &c, (m, n, k), &Linear { alpha, bias, act: NoAct });
    }

    /// [`gemm`] with the epilogue's direct masked stores from registers instead of TMA (C as
    /// pairs, row-major); [`SMEM_BYTES`].
    #[kernel]
    #[launch_bounds(384, 1)]
    #[allow(clippy::too_many_arguments)]
    pub fn gemm_direct(a: TensorMap, b: TensorMap, c: &mut [Bf16x2], m: u32, n: u32, k: u32, alpha: f32, bias: &[f32]) {
        let Some(out) = Bf16Out::new(c, m as usize, n as usize) else { cuda_device::trap() };
        let tiles = TileScheduler::for_block(tile_grid(m, n, BN, 1));
        let op = Linear { alpha, bias, act: NoAct };
        gemm_body::<bf16, BK, 1, KMajor, KMajor>(&a, &b, k, tiles, &op, &Direct(out));
    }

    /// [`gemm_direct`] with ping-pong consumers (128 × 128 tiles, one per warpgroup, mainloops
    /// in turn); [`PP_SMEM_BYTES`].
    #[kernel]
    #[launch_bounds(384, 1)]
    #[allow(clippy::too_many_arguments)]
    pub fn gemm_pingpong(
        a: TensorMap,
        b: TensorMap,
        c: &mut [Bf16x2],
        m: u32,
        n: u32,
        k: u32,
        alpha: f32,
        bias: &[f32],
    ) {
        let Some(out) = Bf16Out::new(c, m as usize, n as usize) else { cuda_device::trap() };
        let tiles = TileScheduler::for_block(tile_grid(m, n, PP_BN, 1));
        pingpong_tn::<bf16, BK>(&a, &b, k, tiles, &Linear { alpha, bias, act: NoAct }, &out);
    }

    /// fp8: `C = scale_a[0] · scale_b[0] · (A·B)` with A (M × K) and B (N × K) E4M3, both
    /// K-major (maps of [`Fp8Slab`]'s box over bytes), f32 accumulation, bf16 C by TMA; as
    /// [`gemm`] otherwise (128 × 256 × 128 stages). The scales are device values (one each), as
    /// cuBLASLt's `A_SCALE_POINTER` / `B_SCALE_POINTER`.
    #[kernel]
    #[launch_bounds(384, 1)]
    #[allow(clippy::too_many_arguments)]
    pub fn gemm_fp8(
        a: TensorMap,
        b: TensorMap,
        c: TensorMap,
        m: u32,
        n: u32,
        k: u32,
        scale_a: &[f32],
        scale_b: &[f32],
    ) {
        fp8_body::<1>(&a, &b, &c, (m, n, k), scale_a, scale_b);
    }

    /// [`gemm_fp8`] in clusters of 2 blocks sharing B through TMA multicast.
    #[kernel]
    #[launch_bounds(384, 1)]
    #[cluster_launch(2, 1, 1)]
    #[allow(clippy::too_many_arguments)]
    pub fn gemm_fp8_cluster(
        a: TensorMap,
        b: TensorMap,
        c: TensorMap,
        m: u32,
        n: u32,
        k: u32,
        scale_a: &[f32],
        scale_b: &[f32],
    ) {
        fp8_body::<2>(&a, &b, &c, (m, n, k), scale_a, scale_b);
    }

    /// [`gemm_fp8`] with ping-pong consumers and direct stores, as [`gemm_pingpong`].
    #[kernel]
    #[launch_bounds(384, 1)]
    #[allow(clippy::too_many_arguments)]
    pub fn gemm_fp8_pingpong(
        a: TensorMap,
        b: TensorMap,
        c: &mut [Bf16x2],
        m: u32,
        n: u32,
        k: u32,
        scale_a: &[f32],
        scale_b: &[f32],
    ) {
        let (Some(out), Some(&sa), Some(&sb)) =
            (Bf16Out::new(c, m as usize, n as usize), scale_a.first(), scale_b.first())
        else {
            cuda_device::trap()
        };
        let tiles = TileScheduler::for_block(tile_grid(m, n, PP_BN, 1));
        pingpong_tn::<E4M3, BK_FP8>(&a, &b, k, tiles, &Linear { alpha: sa * sb, bias: &[], act: NoAct }, &out);
    }
}

/// The bf16 kernels with the TMA-store epilogue: A stored as `LA`, B as `LB`, clusters of
/// `CLUSTER` blocks.
#[inline(always)]
fn bf16_body<LA: Major, LB: Major, const CLUSTER: u32>(
    a: &TensorMap,
    b: &TensorMap,
    c: &TensorMap,
    (m, n, k): (u32, u32, u32),
    op: &Linear<'_>,
) {
    let tiles = TileScheduler::for_block(tile_grid(m, n, BN, CLUSTER));
    gemm_body::<bf16, BK, CLUSTER, LA, LB>(a, b, k, tiles, op, &ViaTma { map: c });
}

/// The fp8 kernels with the TMA-store epilogue; the scales' product is the epilogue's alpha.
#[inline(always)]
fn fp8_body<const CLUSTER: u32>(
    a: &TensorMap,
    b: &TensorMap,
    c: &TensorMap,
    (m, n, k): (u32, u32, u32),
    scale_a: &[f32],
    scale_b: &[f32],
) {
    let (Some(&sa), Some(&sb)) = (scale_a.first(), scale_b.first()) else { cuda_device::trap() };
    let tiles = TileScheduler::for_block(tile_grid(m, n, BN, CLUSTER));
    let op = Linear { alpha: sa * sb, bias: &[], act: NoAct };
    gemm_body::<E4M3, BK_FP8, CLUSTER, KMajor, KMajor>(a, b, k, tiles, &op, &ViaTma { map: c });
}

/// Which kernel of [`kernels`] a launch uses (for fp8 operands, its fp8 form).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// `gemm`: one block per SM, the epilogue staged by `stmatrix` and stored by TMA.
    Plain,
    /// `gemm_cluster`: clusters of 2 multicasting B, the TMA-store epilogue.
    Cluster,
    /// `gemm_direct`: `gemm` with masked stores from the registers (bf16 only).
    Direct,
    /// `gemm_pingpong`: 128 × 128 tiles, one per consumer warpgroup, mainloops in turn.
    Pingpong,
}

impl Variant {
    /// Every bf16 variant.
    pub const ALL: [Variant; 4] = [Variant::Plain, Variant::Cluster, Variant::Direct, Variant::Pingpong];
    /// Every variant with an fp8 form.
    pub const FP8: [Variant; 3] = [Variant::Plain, Variant::Cluster, Variant::Pingpong];

    /// The bf16 kernel's name.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Plain => "gemm",
            Variant::Cluster => "gemm_cluster",
            Variant::Direct => "gemm_direct",
            Variant::Pingpong => "gemm_pingpong",
        }
    }

    /// The fp8 kernel's name, if there is one.
    pub fn fp8_name(self) -> Option<&'static str> {
        match self {
            Variant::Plain => Some("gemm_fp8"),
            Variant::Cluster => Some("gemm_fp8_cluster"),
            Variant::Direct => None,
            Variant::Pingpong => Some("gemm_fp8_pingpong"),
        }
    }

    fn cluster(self) -> u32 {
        if self == Variant::Cluster { 2 } else { 1 }
    }

    /// Its dynamic shared memory.
    fn smem(self) -> usize {
        match self {
            Variant::Plain | Variant::Cluster => SMEM_BYTES_TMA_STORE,
            Variant::Direct => SMEM_BYTES,
            Variant::Pingpong => PP_SMEM_BYTES,
        }
    }

    fn bn(self) -> usize {
        if self == Variant::Pingpong { PP_BN } else { BN }
    }
}

/// How an operand matrix is stored: A is M × K, B is K × N; cuBLAS's `N`/`T` in row-major
/// terms. A row-major and B column-major (K contiguous in both) is the layout every kernel
/// takes; [`Variant::Plain`] takes the other three too.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Rows contiguous (A: K contiguous; B: N contiguous, stored K × N).
    RowMajor,
    /// Columns contiguous (A: M contiguous, stored K × M; B: K contiguous, stored N × K).
    ColMajor,
}

/// The operands of one bf16 GEMM on the device, with their tensor maps.
pub struct Operands<'a> {
    /// A, M × K, stored as `a_layout` says.
    pub a: &'a DeviceBuffer<bf16>,
    /// B, K × N, stored as `b_layout` says.
    pub b: &'a DeviceBuffer<bf16>,
    /// A's layout.
    pub a_layout: Layout,
    /// B's layout.
    pub b_layout: Layout,
    /// Per-column bias (N values), or empty.
    pub bias: &'a DeviceBuffer<f32>,
    /// M, N, K: multiples of 16.
    pub m: usize,
    /// N.
    pub n: usize,
    /// K.
    pub k: usize,
    a_map: TensorMap,
    b_map: TensorMap,
}

/// The map of a row-major `rows × cols` bf16 matrix at `base`, in boxes of `box_rows` ×
/// `box_cols`, 128-byte swizzled (what [`SmemTile`] loads and stores).
pub fn bf16_map(base: u64, rows: usize, cols: usize, box_rows: u32, box_cols: u32) -> Result<TensorMap, DriverError> {
    TensorMap::tiled_2d(base, TmaElement::Bf16, rows as u64, cols as u64, box_rows, box_cols, TmaSwizzle::B128)
}

/// The map the TMA-store epilogue writes C (`m × n` bf16, row-major, as pairs) through: boxes of
/// one [`CChunk`].
fn c_map(c: &DeviceBuffer<Bf16x2>, m: usize, n: usize) -> Result<TensorMap, DriverError> {
    bf16_map(c.as_device_ptr(), m, n, CChunk::BOX_ROWS, CChunk::BOX_COLS)
}

/// Checks a GEMM's shape against its buffers: M, N, K positive multiples of `multiple`.
fn check_shape(m: usize, n: usize, k: usize, multiple: usize, a: usize, b: usize) -> Result<(), String> {
    if [m, n, k].iter().any(|d| *d == 0 || d % multiple != 0) || a < m * k || b < n * k {
        return Err(format!(
            "gemm: M, N, K ({m}, {n}, {k}) must be positive multiples of {multiple}, A hold M × K, B N × K"
        ));
    }
    Ok(())
}

/// The map of an operand with `mn` rows of M or N: over the stored matrix (`mn × k` when K is
/// contiguous, `k × mn` when M or N is) in the box of [`Slab`] of that layout.
fn operand_map(buf: &DeviceBuffer<bf16>, k_major: bool, mn: usize, k: usize) -> Result<TensorMap, DriverError> {
    let ptr = buf.as_device_ptr();
    if k_major {
        let (cols, rows) = Slab::<KMajor>::tma_box();
        bf16_map(ptr, mn, k, rows, cols)
    } else {
        let (cols, rows) = Slab::<MnMajor>::tma_box();
        bf16_map(ptr, k, mn, rows, cols)
    }
}

impl<'a> Operands<'a> {
    /// A (`m × k` row-major), B (`k × n` column-major, i.e. stored `n × k`), bias (`n` or
    /// empty) and their maps.
    pub fn new(
        a: &'a DeviceBuffer<bf16>,
        b: &'a DeviceBuffer<bf16>,
        bias: &'a DeviceBuffer<f32>,
        m: usize,
        n: usize,
        k: usize,
    ) -> Result<Operands<'a>, Box<dyn std::error::Error>> {
        Operands::with_layouts((a, Layout::RowMajor), (b, Layout::ColMajor), bias, (m, n, k))
    }

    /// A (`m × k`) and B (`k × n`) stored as their layouts say, bias (`n` or empty), and their
    /// maps. Only [`Variant::Plain`] runs layouts other than [`Operands::new`]'s.
    pub fn with_layouts(
        (a, a_layout): (&'a DeviceBuffer<bf16>, Layout),
        (b, b_layout): (&'a DeviceBuffer<bf16>, Layout),
        bias: &'a DeviceBuffer<f32>,
        (m, n, k): (usize, usize, usize),
    ) -> Result<Operands<'a>, Box<dyn std::error::Error>> {
        check_shape(m, n, k, 16, a.len(), b.len())?;
        let a_map = operand_map(a, a_layout == Layout::RowMajor, m, k)?;
        let b_map = operand_map(b, b_layout == Layout::ColMajor, n, k)?;
        Ok(Operands { a, b, a_layout, b_layout, bias, m, n, k, a_map, b_map })
    }

    /// Whether A is row-major and B column-major (K contiguous in both: every kernel's layout).
    pub fn is_tn(&self) -> bool {
        (self.a_layout, self.b_layout) == (Layout::RowMajor, Layout::ColMajor)
    }
}

/// The operands of one fp8 GEMM, `C = scale_a · scale_b · (A·B)`: E4M3 A (M × K row-major) and
/// B (K × N column-major, stored N × K) — both K-major, the only layout fp8 `wgmma` reads — and
/// the two scales in device memory.
pub struct Fp8Operands<'a> {
    /// A, M × K row-major.
    pub a: &'a DeviceBuffer<E4M3>,
    /// B, stored N × K.
    pub b: &'a DeviceBuffer<E4M3>,
    /// `scale_a` (its first value).
    pub scale_a: &'a DeviceBuffer<f32>,
    /// `scale_b` (its first value).
    pub scale_b: &'a DeviceBuffer<f32>,
    /// M, N, K: multiples of 16 (K: rows of 16 bytes for TMA).
    pub m: usize,
    /// N.
    pub n: usize,
    /// K.
    pub k: usize,
    a_map: TensorMap,
    b_map: TensorMap,
}

impl<'a> Fp8Operands<'a> {
    /// A (`m × k`), B (`n × k`), the scales (one value each) and the maps (boxes of 128 × 128
    /// bytes, 128-byte swizzle).
    pub fn new(
        a: &'a DeviceBuffer<E4M3>,
        b: &'a DeviceBuffer<E4M3>,
        scale_a: &'a DeviceBuffer<f32>,
        scale_b: &'a DeviceBuffer<f32>,
        (m, n, k): (usize, usize, usize),
    ) -> Result<Fp8Operands<'a>, Box<dyn std::error::Error>> {
        check_shape(m, n, k, 16, a.len(), b.len())?;
        if scale_a.is_empty() || scale_b.is_empty() {
            return Err("gemm fp8: scale_a and scale_b hold one value each".into());
        }
        let map = |buf: &DeviceBuffer<E4M3>, rows: usize| {
            let (box_rows, box_cols) = (Fp8Slab::BOX_ROWS, Fp8Slab::BOX_COLS);
            TensorMap::tiled_2d(
                buf.as_device_ptr(),
                TmaElement::U8,
                rows as u64,
                k as u64,
                box_rows,
                box_cols,
                TmaSwizzle::B128,
            )
        };
        Ok(Fp8Operands { a, b, scale_a, scale_b, m, n, k, a_map: map(a, m)?, b_map: map(b, n)? })
    }
}

/// The host side: the loaded kernels, and the persistent grid each gets.
pub struct Gemm {
    module: kernels::Module,
    sms: u32,
    /// Clusters of the cluster kernels resident at once, once known (after a first launch).
    clusters: Cell<Option<u32>>,
}

impl Gemm {
    /// Loads the kernels (built for sm_90a; an H100 or H200 runs them).
    pub fn new(ctx: &Arc<CudaContext>) -> Result<Gemm, DriverError> {
        Ok(Gemm { module: kernels::load(ctx)?, sms: ctx.sm_count(), clusters: Cell::new(None) })
    }

    /// The launch of `variant` (bf16 or fp8: the same grid and shared memory) for an `m × n`
    /// output: one block per SM (or as many clusters as fit), never more than there are tiles.
    pub fn config(&self, variant: Variant, m: usize, n: usize) -> LaunchConfig {
        let cluster = variant.cluster();
        let units = tile_grid(m as u32, n as u32, variant.bn(), cluster).units();
        let resident = if cluster > 1 { self.clusters.get().unwrap_or(self.sms / 2) } else { self.sms };
        let smem = variant.smem();
        LaunchConfig {
            grid_dim: (units.min(resident).max(1) * cluster, 1, 1),
            block_dim: (384, 1, 1),
            shared_mem_bytes: smem as u32,
        }
    }

    /// After the first launch of cluster kernel `name` (which set its shared-memory limit), asks
    /// the driver how many clusters fit at once (fewer than SMs / 2 when a GPC has an odd
    /// number of SMs free); both cluster kernels have the same launch.
    fn learn_clusters(&self, name: &str, cfg: &LaunchConfig) -> Result<(), DriverError> {
        if self.clusters.get().is_none() {
            let f = self.module.kernels().function_named(name)?;
            let fit = cuda_core::cooperative::residency(&f, cfg, Some((2, 1, 1)))?;
            if let cuda_core::cooperative::Basis::Clusters { clusters, .. } = fit.basis {
                self.clusters.set(Some(clusters.max(1)));
            }
        }
        Ok(())
    }

    /// Enqueues `c = alpha · a·b + bias` on `stream` with `variant`. `c` holds M × N bf16 (as
    /// pairs).
    pub fn run(
        &self,
        stream: &CudaStream,
        variant: Variant,
        ops: &Operands<'_>,
        c: &mut DeviceBuffer<Bf16x2>,
        alpha: f32,
    ) -> Result<(), Box<dyn std::error::Error>> {
        if c.len() * 2 < ops.m * ops.n {
            return Err("gemm: C holds fewer than M × N values".into());
        }
        let (m, n, k) = (ops.m as u32, ops.n as u32, ops.k as u32);
        let cfg = self.config(variant, ops.m, ops.n);
        let (a, b) = (ops.a_map, ops.b_map);
        if variant != Variant::Plain && !ops.is_tn() {
            return Err(format!(
                "gemm: {} takes A row-major and B column-major (A {:?}, B {:?} given); Variant::Plain takes any layout",
                variant.name(),
                ops.a_layout,
                ops.b_layout
            )
            .into());
        }
        let bias = ops.bias;
        let c_map = || c_map(c, ops.m, ops.n);
        let module = &self.module;
        match variant {
            Variant::Plain => {
                let c = c_map()?;
                Ok(match (ops.a_layout, ops.b_layout) {
                    (Layout::RowMajor, Layout::ColMajor) => module.gemm(stream, cfg, a, b, c, m, n, k, alpha, bias),
                    (Layout::ColMajor, Layout::ColMajor) => {
                        module.gemm_a_colmajor(stream, cfg, a, b, c, m, n, k, alpha, bias)
                    }
                    (Layout::RowMajor, Layout::RowMajor) => {
                        module.gemm_b_rowmajor(stream, cfg, a, b, c, m, n, k, alpha, bias)
                    }
                    (Layout::ColMajor, Layout::RowMajor) => {
                        module.gemm_a_colmajor_b_rowmajor(stream, cfg, a, b, c, m, n, k, alpha, bias)
                    }
                }?)
            }
            Variant::Cluster => {
                module.gemm_cluster(stream, cfg, a, b, c_map()?, m, n, k, alpha, bias)?;
                Ok(self.learn_clusters("gemm_cluster", &cfg)?)
            }
            Variant::Direct => Ok(module.gemm_direct(stream, cfg, a, b, c, m, n, k, alpha, bias)?),
            Variant::Pingpong => Ok(module.gemm_pingpong(stream, cfg, a, b, c, m, n, k, alpha, bias)?),
        }
    }

    /// Enqueues the fp8 GEMM `c = scale_a · scale_b · (a·b)` on `stream` with `variant`'s fp8
    /// kernel ([`Variant::FP8`]). `c` holds M × N bf16 (as pairs).
    pub fn run_fp8(
        &self,
        stream: &CudaStream,
        variant: Variant,
        ops: &Fp8Operands<'_>,
        c: &mut DeviceBuffer<Bf16x2>,
    ) -> Result<(), Box<dyn std::error::Error>> {
        if c.len() * 2 < ops.m * ops.n {
            return Err("gemm: C holds fewer than M × N values".into());
        }
        let (m, n, k) = (ops.m as u32, ops.n as u32, ops.k as u32);
        let cfg = self.config(variant, ops.m, ops.n);
        let (a, b, sa, sb) = (ops.a_map, ops.b_map, ops.scale_a, ops.scale_b);
        let c_map = || c_map(c, ops.m, ops.n);
        match variant {
            Variant::Plain => Ok(self.module.gemm_fp8(stream, cfg, a, b, c_map()?, m, n, k, sa, sb)?),
            Variant::Cluster => {
                self.module.gemm_fp8_cluster(stream, cfg, a, b, c_map()?, m, n, k, sa, sb)?;
                Ok(self.learn_clusters("gemm_fp8_cluster", &cfg)?)
            }
            Variant::Pingpong => Ok(self.module.gemm_fp8_pingpong(stream, cfg, a, b, c, m, n, k, sa, sb)?),
            Variant::Direct => Err("gemm: no fp8 form of gemm_direct".into()),
        }
    }
}
