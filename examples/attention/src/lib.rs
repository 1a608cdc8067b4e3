//! FlashAttention-style forward attention on Hopper, written on `cuda_device::tile`:
//! `O = softmax(Q·Kᵀ / √d) · V` and the log-sum-exp of every row (what a backward pass needs),
//! for bf16 Q, K, V, O of shape `[batch, heads, seq, d]` (contiguous, d innermost), d 64 or 128,
//! causal or not, any `seq ≥ 1`. Build for `sm_90a`.
//!
//! The design of FlashAttention-2/3 on Hopper:
//! - one block of 384 threads per (128-row Q tile, batch·head), heaviest causal tiles first;
//!   warpgroup 0 is the producer (one thread issues TMA; `setmaxnreg` down to 40 registers),
//!   warpgroups 1 and 2 are consumers (232 registers) owning 64 Q rows each;
//! - Q is loaded once per unit; K and V tiles of 128 rows come through two 2-stage mbarrier
//!   rings (`tile::TileRing`), so K of tile j+1 lands while V of tile j is still in use; d = 128
//!   rows are two 64-column (128-byte) swizzle panels, two TMA boxes;
//! - each consumer computes `S = Q·Kᵀ` (64 × 128 f32) with `wgmma` SS (`tile::mma::mma_ss`),
//!   keeps the running row max `m` and sum `l` in f32 (`tile::OnlineSoftmax`; the softmax in the
//!   log2 domain, `log2(e)/√d` folded into one FFMA before `ex2`), converts `P` to bf16 A
//!   fragments in registers (`tile::mma::a_fragments`) and accumulates `O += P·V` with `wgmma`
//!   RS, V N-major as stored (`tile::mma::mma_rs_mn_b`);
//! - overlap inside a warpgroup (FA3's intra-warpgroup pipelining): in iteration j it issues
//!   `S_j = Q·K_jᵀ` and `O += P_{j-1}·V_{j-1}` back to back, waits only for `S_j`, runs the
//!   softmax of `S_j` while the tensor cores do `P·V`, then waits for `P·V` and rescales `O`;
//!   the `_pp` kernels also take turns between the two consumers (`tile::warpgroup::Turns`);
//! - causal: kv tiles past the diagonal are skipped, the last tile is masked with -inf
//!   (`tile::KeyMask`; as is a ragged `seq`'s last tile: rows of the next head, or zeros past
//!   the tensor, never count);
//! - persistent: units (Q tile, head) come from a global counter (`tile::UnitCounter`) and go
//!   from the producer to the consumers with Q (`tile::UnitHandoff`);
//! - epilogue: `O / l` stored as bf16 pairs (per head, masked to `seq` rows), `lse = (m·log2(e)/√d
//!   + log2 l) · ln 2` (`OnlineSoftmax::finish`, `tile::epilogue::store_rows`).
//!
//! What is this file's own: the shared-memory layout, the unit order, and the schedule — which
//! wgmma batch is issued, waited for and released where.
//!
//! The kernels are this library's so that a bench times the very kernels `main.rs` checks;
//! [`Attention`] is the host side.
use std::error::Error;
use std::sync::Arc;

use cuda_core::tma::{TensorMap, TmaElement, TmaSwizzle};
use cuda_core::{CudaContext, CudaStream, DeviceBuffer, DriverError, LaunchConfig};
use cuda_device::half::{Bf16x2, bf16};
use cuda_device::tile::epilogue::{self, Bf16Out};
use cuda_device::tile::mma;
use cuda_device::tile::warpgroup::{self, Turns};
use cuda_device::tile::{KeyMask, OnlineSoftmax, Pipeline, RowOps, SmemTile, TileRing, UnitCounter, UnitHandoff};
use cuda_device::wgmma::{self, Accumulator, FragA};
use cuda_device::{DynamicSharedArray, cuda_module, kernel, launch_bounds, sync_threads, thread, tma};

/// Q rows per block (two consumer warpgroups of 64).
pub const BM: usize = 128;
/// K/V rows per tile (the N of `S`, the K of `P·V`).
pub const BN: usize = 128;
/// Stages of each of the K and V rings.
pub const STAGES: usize = 2;

/// A consumer warpgroup's 64 Q rows (one TMA box of 64 rows per 64-column panel).
type QTile<const D: usize> = SmemTile<bf16, 64, D>;
/// The K or V ring: `STAGES` tiles of 128 rows × d.
type KvRing<const D: usize> = TileRing<bf16, BN, D, STAGES>;

/// Dynamic shared memory a head dimension `d` needs: two Q halves, `STAGES` K and V tiles, then
/// the barriers (K ring, V ring) and the unit hand-off (Q's barriers and the unit slots).
pub const fn smem_bytes(d: usize) -> usize {
    barriers_at(d) + 2 * Pipeline::<STAGES>::BARRIER_BYTES + UnitHandoff::BYTES
}

/// Where the barriers start: after the tiles (all multiples of 1024 bytes).
const fn barriers_at(d: usize) -> usize {
    (BM + 2 * STAGES * BN) * d * 2
}

/// The kernel body for head dimension `D` (`RO = D / 2` registers of O per thread), with the
/// consumers taking turns when `PINGPONG`; each kernel of [`kernels`] is one instance.
#[inline(always)]
#[allow(clippy::too_many_arguments)] // the launch's arguments
fn attention_body<const D: usize, const RO: usize, const PINGPONG: bool>(
    q_map: &TensorMap,
    k_map: &TensorMap,
    v_map: &TensorMap,
    o: &mut [Bf16x2],
    lse: &mut [f32],
    sched: &mut [u32],
    seq: u32,
    heads: u32,
    causal: bool,
    dynamic: bool,
    scale_log2: f32,
) {
    const { assert!(RO == D / 2, "RO is D / 2") };
    let (seq, heads) = (seq as usize, heads as usize);
    let q_tiles = seq.div_ceil(BM);
    let smem = DynamicSharedArray::<u8, 1024>::get_raw();
    // SAFETY (tiles and barriers): the launch gives `smem_bytes(D)` bytes of 1024-aligned
    // dynamic shared memory; the Q halves, the K and V rings' tiles, their barriers and the
    // hand-off are disjoint ranges of it (tile sizes are multiples of 1024), each used only as
    // what it is named here.
    let q_tile = |h: usize| unsafe { QTile::<D>::from_ptr(smem.add(h * QTile::<D>::BYTES)) };
    let (kv, bars) = unsafe { (smem.add(BM * D * 2), smem.add(barriers_at(D)).cast::<u64>()) };
    let k_ring = unsafe { KvRing::<D>::new(kv, bars) };
    let v_ring = unsafe { KvRing::<D>::new(kv.add(KvRing::<D>::BYTES), bars.add(2 * STAGES)) };
    let units = unsafe { UnitHandoff::new(bars.add(4 * STAGES), (q_tiles * heads) as u32) };

    // Persistent: a block's producer takes work units one after another (`UnitCounter`: the
    // block's index first, then from the global counter `sched` when `dynamic` — a block that
    // finishes early takes more: causal units differ up to `seq / 128`-fold — else every
    // grid-th) and hands each to its consumers (`UnitHandoff`, on Q's barrier).
    // Unit → (Q tile, head): the Q tiles of one head consecutive (the blocks running at once
    // share a head or two, whose K and V then come from L2, not DRAM), its last Q tiles (the
    // longest causal rows) first, so that the short ones fill the gaps.
    let unit = move |id: u32| {
        let (head, qt) = (id as usize / q_tiles, q_tiles - 1 - id as usize % q_tiles);
        let kv_tiles = if causal { qt + 1 } else { seq.div_ceil(BN) };
        (qt * BM, head * seq, kv_tiles) // first Q row, the head's first row in the maps
    };

    if thread::threadIdx_x() == 0 {
        // SAFETY: one thread, first; the rings' `init` fences, and `sync_threads` below
        // publishes it all. Q and every K and V stage count one release per consumer warpgroup.
        unsafe {
            units.init(2);
            k_ring.init(1, 2);
            v_ring.init(1, 2);
            tma::prefetch(q_map);
            tma::prefetch(k_map);
            tma::prefetch(v_map);
        }
    }
    sync_threads();
    // Not `index_uniform`: measured 6–8 % slower at d 64 (bench/notes.md, "Session 33").
    let wg = warpgroup::index();
    if wg == 0 {
        // SAFETY: the whole warpgroup, in the producer branch.
        unsafe { warpgroup::producer_registers::<40>() };
        if warpgroup::is_leader() {
            let (mut kp, mut vp, mut handoff) = (k_ring.producer(), v_ring.producer(), units.producer());
            // SAFETY: `sched` is zero at every launch's start (`Attention` zeroes it once, each
            // launch leaves it zero) and only this thread of each block touches it.
            let mut ids = unsafe { UnitCounter::new(sched, dynamic) };
            loop {
                let id = ids.next_id();
                // Waits until both consumers' last S of the previous unit is done: Q is free.
                let Some(q_full) = handoff.publish(id, (BM * D * 2) as u32) else { break };
                let (q0, row0, kv_tiles) = unit(id);
                // SAFETY: the maps are bf16 with `QTile`/`KvRing`'s boxes and the 128-byte
                // swizzle; each tile is free (Q: `publish` waited; K, V: `load` waits for both
                // consumers' release) and its phase expects exactly these bytes.
                unsafe {
                    q_tile(0).load(q_map, 0, (row0 + q0) as i32, q_full);
                    q_tile(1).load(q_map, 0, (row0 + q0 + 64) as i32, q_full);
                    for j in 0..kv_tiles {
                        let y = (row0 + j * BN) as i32;
                        kp.load(k_map, 0, y);
                        vp.load(v_map, 0, y);
                    }
                }
            }
            ids.finish(); // the last block done resets `sched` for the next launch
        }
    } else {
        // SAFETY: the whole warpgroup, in the consumer branch; 40 × 128 + 232 × 256 ≤ 65536.
        unsafe { warpgroup::consumer_registers::<232>() };
        let half = (wg - 1) as usize;
        let leader = warpgroup::is_leader();
        let q = q_tile(half);
        let mask_last = causal || !seq.is_multiple_of(BN);
        let (mut kc, mut vc, mut handoff) = (k_ring.consumer(), v_ring.consumer(), units.consumer());
        let mut s = Accumulator::<64>::ZERO;
        // Ping-pong (FA3's inter-warpgroup schedule): the warpgroups take turns issuing their
        // wgmmas, through named barriers 1 (warpgroup 1's turn) and 2 (warpgroup 2's), so
        // that one's softmax (the MUFU) runs while the other's GEMMs run. Warpgroup 1 goes
        // first.
        // SAFETY: all 128 threads of both consumer warpgroups, which take the same units and
        // key tiles and so as many turns (one per batch of wgmmas below); barriers 1 and 2
        // serve nothing else.
        let turns = unsafe { Turns::<PINGPONG>::new(1, half as u32) };
        while let Some(id) = handoff.wait() {
            let (q0, row0, kv_tiles) = unit(id);
            let first_query = q0 + 64 * half;
            let mut acc = Accumulator::<RO>::ZERO;
            let mut sm = OnlineSoftmax::new(scale_log2);
            // The last key tile is masked when causal (the diagonal) or when `seq` is ragged.
            let mask = |j: usize| {
                let mask = KeyMask { first_query, first_key: j * BN, keys: seq, causal };
                (mask_last && j + 1 == kv_tiles).then_some(mask)
            };
            // Tile 0: S_0 and its softmax (nothing to rescale yet).
            let (ks, k) = kc.wait();
            // SAFETY: the warpgroup runs this together; Q and K were written by TMA (the
            // async proxy wgmma reads through) and stay until released after the wait below;
            // `s` is only touched by wgmma until then; the fence orders the softmax's
            // register writes (`p`, `acc`) before.
            unsafe {
                turns.wait();
                wgmma::fence();
                mma::mma_ss(&mut s, q, k, false);
                wgmma::commit_group();
                turns.pass();
                wgmma::wait_group::<0, 64>(&mut s);
            }
            if leader {
                kc.release(ks);
                if kv_tiles == 1 {
                    handoff.release(); // this warpgroup's last S of the unit: Q is free
                }
            }
            let mut p: [FragA<bf16>; BN / 16] = mma::a_fragments(&sm.step(&s, mask(0)).0);
            // Tiles 1..: S_j = Q·K_jᵀ and O += P_{j-1}·V_{j-1} issued back to back; the
            // softmax of S_j runs while the tensor cores do P·V. Every wgmma and wait here is
            // unconditional: ptxas tracks pending wgmmas path-insensitively and serialises
            // them (C7513, C7519) around a wait or a fence on one branch only.
            for j in 1..kv_tiles {
                // Both waits before the fence: a wait (a per-thread spin loop) between two
                // wgmmas makes ptxas fence again and serialise them (C7519).
                let (ks, k) = kc.wait();
                let (vs, v) = vc.wait();
                // SAFETY: as above.
                unsafe {
                    turns.wait();
                    wgmma::fence();
                    mma::mma_ss(&mut s, q, k, false);
                    wgmma::commit_group();
                }
                // SAFETY: as above; `p` and `acc` are not written until the wait for it.
                unsafe {
                    mma::mma_rs_mn_b(&mut acc, &p, v);
                    wgmma::commit_group();
                    turns.pass();
                    wgmma::wait_group::<1, 64>(&mut s); // S_j is done; P·V may still run
                }
                if leader {
                    kc.release(ks);
                    if j + 1 == kv_tiles {
                        handoff.release();
                    }
                }
                let (probs, corr) = sm.step(&s, mask(j));
                // SAFETY: as above.
                unsafe { wgmma::wait_group::<0, RO>(&mut acc) };
                if leader {
                    vc.release(vs);
                }
                acc.scale_rows(corr);
                p = mma::a_fragments(&probs);
            }
            // The last tile's P·V.
            let (vs, v) = vc.wait();
            // SAFETY: as in the loop.
            unsafe {
                wgmma::fence();
                mma::mma_rs_mn_b(&mut acc, &p, v);
                wgmma::commit_group();
                wgmma::wait_group::<0, RO>(&mut acc);
            }
            if leader {
                vc.release(vs);
            }
            // O / l as bf16 pairs and the log-sum-exp, per head, masked to `seq` rows.
            let lse_rows = sm.finish(&mut acc);
            let (head, pairs) = (row0 / seq, seq * D / 2);
            let out = o.get_mut(head * pairs..(head + 1) * pairs).and_then(|o| Bf16Out::new(o, seq, D));
            let (Some(out), Some(lse)) = (out, lse.get_mut(row0..row0 + seq)) else { cuda_device::trap() };
            epilogue::store_accumulator(&acc, &out, first_query, 0, &|v: f32, _, _| v);
            epilogue::store_rows(lse, first_query, lse_rows);
        }
        // SAFETY: as for `new`: warpgroup 1's wait for the turn warpgroup 2's last `pass` gave.
        unsafe { turns.finish() };
    }
}

#[cuda_module]
pub mod kernels {
    use super::*;

    /// Attention forward, head dimension 64, the warpgroups issuing their wgmmas as they come:
    /// persistent grid of at most one block of 384 threads per SM, [`smem_bytes`]`(64)` of
    /// dynamic shared memory ([`Attention::run`]). `heads` counts batch · heads; `scale_log2` is
    /// `log2(e) / √d`; `sched` is the work counter (two `u32`, zero before the first launch,
    /// left zero by each), used when `dynamic` is not 0 (else units go round-robin).
    #[kernel]
    #[launch_bounds(384, 1)]
    #[allow(clippy::too_many_arguments)]
    pub fn attention_d64(
        q: TensorMap,
        k: TensorMap,
        v: TensorMap,
        o: &mut [Bf16x2],
        lse: &mut [f32],
        sched: &mut [u32],
        seq: u32,
        heads: u32,
        causal: u32,
        dynamic: u32,
        scale_log2: f32,
    ) {
        attention_body::<64, 32, false>(&q, &k, &v, o, lse, sched, seq, heads, causal != 0, dynamic != 0, scale_log2);
    }

    /// [`attention_d64`] for head dimension 128 ([`smem_bytes`]`(128)`).
    #[kernel]
    #[launch_bounds(384, 1)]
    #[allow(clippy::too_many_arguments)]
    pub fn attention_d128(
        q: TensorMap,
        k: TensorMap,
        v: TensorMap,
        o: &mut [Bf16x2],
        lse: &mut [f32],
        sched: &mut [u32],
        seq: u32,
        heads: u32,
        causal: u32,
        dynamic: u32,
        scale_log2: f32,
    ) {
        attention_body::<128, 64, false>(&q, &k, &v, o, lse, sched, seq, heads, causal != 0, dynamic != 0, scale_log2);
    }

    /// [`attention_d64`] with ping-pong: the two consumer warpgroups take turns issuing wgmmas.
    #[kernel]
    #[launch_bounds(384, 1)]
    #[allow(clippy::too_many_arguments)]
    pub fn attention_d64_pp(
        q: TensorMap,
        k: TensorMap,
        v: TensorMap,
        o: &mut [Bf16x2],
        lse: &mut [f32],
        sched: &mut [u32],
        seq: u32,
        heads: u32,
        causal: u32,
        dynamic: u32,
        scale_log2: f32,
    ) {
        attention_body::<64, 32, true>(&q, &k, &v, o, lse, sched, seq, heads, causal != 0, dynamic != 0, scale_log2);
    }

    /// [`attention_d128`] with ping-pong.
    #[kernel]
    #[launch_bounds(384, 1)]
    #[allow(clippy::too_many_arguments)]
    pub fn attention_d128_pp(
        q: TensorMap,
        k: TensorMap,
        v: TensorMap,
        o: &mut [Bf16x2],
        lse: &mut [f32],
        sched: &mut [u32],
        seq: u32,
        heads: u32,
        causal: u32,
        dynamic: u32,
        scale_log2: f32,
    ) {
        attention_body::<128, 64, true>(&q, &k, &v, o, lse, sched, seq, heads, causal != 0, dynamic != 0, scale_log2);
    }
}

/// One attention problem's shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Batch.
    pub batch: usize,
    /// Heads.
    pub heads: usize,
    /// Sequence length (queries and keys), at least 1.
    pub seq: usize,
    /// Head dimension: 64 or 128.
    pub d: usize,
    /// Causal mask (key j visible to query i when j ≤ i).
    pub causal: bool,
}

impl Shape {
    /// Rows of each of Q, K, V, O: batch · heads · seq.
    pub const fn rows(&self) -> usize {
        self.batch * self.heads * self.seq
    }

    /// Floating-point operations counted (FlashAttention's convention): `4 · b · h · s² · d`,
    /// half of it when causal.
    pub fn flops(&self) -> f64 {
        let full = 4.0 * (self.batch * self.heads) as f64 * (self.seq as f64).powi(2) * self.d as f64;
        if self.causal { full / 2.0 } else { full }
    }
}

/// A problem's device operands with their tensor maps, ready to launch.
pub struct Operands {
    shape: Shape,
    q_map: TensorMap,
    k_map: TensorMap,
    v_map: TensorMap,
}

impl Operands {
    /// Q, K, V (`[batch, heads, seq, d]` bf16, contiguous) and their maps. Errors for a `d`
    /// other than 64 and 128, an empty shape, or buffers shorter than the shape.
    pub fn new(
        shape: Shape,
        q: &DeviceBuffer<bf16>,
        k: &DeviceBuffer<bf16>,
        v: &DeviceBuffer<bf16>,
    ) -> Result<Operands, Box<dyn Error>> {
        if shape.d != 64 && shape.d != 128 {
            return Err(format!("attention: head dimension {} (64 and 128 are supported)", shape.d).into());
        }
        let n = shape.rows() * shape.d;
        if n == 0 || shape.rows() > i32::MAX as usize {
            return Err(format!("attention: shape {shape:?} is empty or too large").into());
        }
        if [q.len(), k.len(), v.len()].iter().any(|&len| len < n) {
            return Err(format!("attention: Q, K and V must hold {n} values for {shape:?}").into());
        }
        let map = |buf: &DeviceBuffer<bf16>, box_rows: u32| {
            let (rows, cols) = (shape.rows() as u64, shape.d as u64);
            TensorMap::tiled_2d(buf.as_device_ptr(), TmaElement::Bf16, rows, cols, box_rows, 64, TmaSwizzle::B128)
        };
        Ok(Operands { shape, q_map: map(q, 64)?, k_map: map(k, BN as u32)?, v_map: map(v, BN as u32)? })
    }

    /// The shape.
    pub fn shape(&self) -> Shape {
        self.shape
    }
}

/// The host side: the loaded kernels.
pub struct Attention {
    module: kernels::Module,
    sms: u32,
    sched: DeviceBuffer<u32>,
    /// Whether [`Attention::run`] launches the ping-pong kernels (`*_pp`).
    pub pingpong: bool,
    /// Whether blocks take units from a global counter (else round-robin).
    pub dynamic: bool,
}

impl Attention {
    /// Loads the kernels (built for sm_90a; an H100 or H200 runs them).
    pub fn new(ctx: &Arc<CudaContext>) -> Result<Attention, DriverError> {
        let sched = DeviceBuffer::zeroed(&ctx.default_stream(), 2)?;
        Ok(Attention { module: kernels::load(ctx)?, sms: ctx.sm_count(), sched, pingpong: true, dynamic: true })
    }

    /// The launch for `shape`: persistent, one block of 384 threads per SM (fewer when there
    /// are fewer (Q tile, batch · head) units).
    pub fn config(&self, shape: Shape) -> LaunchConfig {
        let units = shape.seq.div_ceil(BM) * shape.batch * shape.heads;
        let blocks = units.min(self.sms as usize);
        LaunchConfig {
            grid_dim: (blocks as u32, 1, 1),
            block_dim: (384, 1, 1),
            shared_mem_bytes: smem_bytes(shape.d) as u32,
        }
    }

    /// Enqueues the forward pass: `o` (`[batch, heads, seq, d]` bf16, as pairs) and `lse`
    /// (`[batch, heads, seq]` f32, natural log) from the operands.
    pub fn run(
        &mut self,
        stream: &CudaStream,
        ops: &Operands,
        o: &mut DeviceBuffer<Bf16x2>,
        lse: &mut DeviceBuffer<f32>,
    ) -> Result<(), Box<dyn Error>> {
        let sh = ops.shape;
        if o.len() * 2 < sh.rows() * sh.d || lse.len() < sh.rows() {
            return Err(format!("attention: O must hold {} values and lse {}", sh.rows() * sh.d, sh.rows()).into());
        }
        let cfg = self.config(sh);
        let (seq, heads, causal) = (sh.seq as u32, (sh.batch * sh.heads) as u32, sh.causal as u32);
        let scale_log2 = std::f32::consts::LOG2_E / (sh.d as f32).sqrt();
        let (q, k, v) = (ops.q_map, ops.k_map, ops.v_map);
        let (m, sched, dynamic) = (&self.module, &mut self.sched, self.dynamic as u32);
        match (sh.d, self.pingpong) {
            (64, false) => {
                m.attention_d64(stream, cfg, q, k, v, o, lse, sched, seq, heads, causal, dynamic, scale_log2)?
            }
            (64, true) => {
                m.attention_d64_pp(stream, cfg, q, k, v, o, lse, sched, seq, heads, causal, dynamic, scale_log2)?
            }
            (_, false) => {
                m.attention_d128(stream, cfg, q, k, v, o, lse, sched, seq, heads, causal, dynamic, scale_log2)?
            }
            (_, true) => {
                m.attention_d128_pp(stream, cfg, q, k, v, o, lse, sched, seq, heads, causal, dynamic, scale_log2)?
            }
        }
        Ok(())
    }
}
