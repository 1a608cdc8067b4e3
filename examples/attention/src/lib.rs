//! FlashAttention-style forward attention on Hopper, written on `cuda_device::tile`:
//! `O = softmax(Q·Kᵀ / √d) · V` and the log-sum-exp of every row (what a backward pass needs),
//! for bf16 Q, K, V, O of shape `[batch, heads, seq, d]` (contiguous, d innermost), d 64 or 128,
//! causal or not, any `seq ≥ 1`. Build for `sm_90a`.
//!
//! The design of FlashAttention-2/3 on Hopper:
//! - one block of 384 threads per (128-row Q tile, batch·head), heaviest causal tiles first;
//!   warpgroup 0 is the producer (one thread issues TMA; `setmaxnreg` down to 40 registers),
//!   warpgroups 1 and 2 are consumers (232 registers) owning 64 Q rows each;
//! - Q is loaded once; K and V tiles of 128 rows come through two 2-stage mbarrier rings
//!   (`tile::Pipeline`), so K of tile j+1 lands while V of tile j is still in use; d = 128 rows
//!   are two 64-column (128-byte) swizzle panels, two TMA boxes;
//! - each consumer computes `S = Q·Kᵀ` (64 × 128 f32) with `wgmma` SS, keeps the running row max
//!   `m` and sum `l` in f32 (`tile::RowOps`; the softmax in the log2 domain, `log2(e)/√d` folded
//!   into one FFMA before `ex2`), converts `P` to bf16 A fragments in registers
//!   (`FragA::from_accumulator`) and accumulates `O += P·V` with `wgmma` RS, V N-major as stored;
//! - overlap inside a warpgroup (FA3's intra-warpgroup pipelining): in iteration j it issues
//!   `S_j = Q·K_jᵀ` and `O += P_{j-1}·V_{j-1}` back to back, waits only for `S_j`, runs the
//!   softmax of `S_j` while the tensor cores do `P·V`, then waits for `P·V` and rescales `O`;
//! - causal: kv tiles past the diagonal are skipped, the last tile is masked with -inf (as is a
//!   ragged `seq`'s last tile: rows of the next head, or zeros past the tensor, never count);
//! - epilogue: `O / l` stored as bf16 pairs (per head, masked to `seq` rows), `lse = (m·log2(e)/√d
//!   + log2 l) · ln 2`.
//!
//! What the tile layer lacked and this file adds: nothing structural — the pipeline, tiles, row
//! ops, epilogue and `setmaxnreg` helpers are `cuda_device::tile`'s; the masking, the
//! thread-partial row sums (`rows::thread_reduce`, reduced across the quad once at the end) and
//! the N-major `V` descriptor (`wgmma::descriptor_mn_major_128b`) are used directly.
//!
//! The kernels are this library's so that a bench times the very kernels `main.rs` checks;
//! [`Attention`] is the host side.
use std::error::Error;
use std::sync::Arc;

use cuda_core::tma::{TensorMap, TmaElement, TmaSwizzle};
use cuda_core::{CudaContext, CudaStream, DeviceBuffer, DriverError, LaunchConfig};
use cuda_device::half::{Bf16x2, bf16};
use cuda_device::mbarrier::MBarrier;
use cuda_device::tile::epilogue::{self, Bf16Out};
use cuda_device::tile::rows::{row_half, rows_of};
use cuda_device::tile::{Pipeline, SmemTile, warpgroup};
use cuda_device::wgmma::{self, Accumulator, FragA};
use cuda_device::{DynamicSharedArray, atomic, cuda_module, kernel, launch_bounds, sync_threads, thread, tma, warp};

/// Q rows per block (two consumer warpgroups of 64).
pub const BM: usize = 128;
/// K/V rows per tile (the N of `S`, the K of `P·V`).
pub const BN: usize = 128;
/// Stages of each of the K and V rings.
pub const STAGES: usize = 2;

/// A consumer warpgroup's 64 Q rows (one TMA box of 64 rows per 64-column panel).
type QTile<const D: usize> = SmemTile<bf16, 64, D>;
/// A K or V tile: 128 rows × d.
type KvTile<const D: usize> = SmemTile<bf16, BN, D>;

/// Dynamic shared memory a head dimension `d` needs: two Q halves, `STAGES` K and V tiles, then
/// the barriers (K ring, V ring, Q full, Q empty) and the two unit slots.
pub const fn smem_bytes(d: usize) -> usize {
    barriers_at(d) + (4 * STAGES + 3) * 8
}

/// Where the barriers start: after the tiles (all multiples of 1024 bytes).
const fn barriers_at(d: usize) -> usize {
    (BM + 2 * STAGES * BN) * d * 2
}

/// One consumer thread's part of the online softmax: the running max `m` and this thread's
/// partial row sums `l` of its two rows, and what masking the last key tile needs.
struct Softmax {
    m: [f32; 2],
    l: [f32; 2],
    /// The thread's index in its warpgroup.
    t: u32,
    seq: usize,
    causal: bool,
    /// The thread's two query rows (positions in the head).
    q_row: [usize; 2],
    /// Whether the last key tile is masked (causal, or `seq` not a multiple of `BN`).
    mask_last: bool,
    /// `log2(e)/√d`.
    scale_log2: f32,
}

impl Softmax {
    /// The softmax of key tile `j` (this thread's 64 values of the warpgroup's 64 × 128 S): masks
    /// it when it is the `last` and `mask_last` — keys past `seq` (the next head's rows, or zeros
    /// past the tensor) and, causal, keys past the row's own position — moves the running max
    /// (this thread's values, then the quad's), rescales the partial row sums, and gives `P =
    /// 2^(S·c − m·c)` (c = log2(e)/√d) with the factor `2^((m_old − m)·c)` that rescales what came
    /// before. Every row has an unmasked key in tile 0, so `m` is finite after it. Works on a
    /// copy of S: `s` keeps what wgmma wrote, so that no ordinary instruction redefines the
    /// registers of the next S = Q·Kᵀ while a P·V runs (C7513).
    #[inline(always)]
    #[allow(clippy::needless_range_loop)] // unrolled: `i` names a register and its row
    fn tile(&mut self, s: &Accumulator<64>, j: usize, last: bool) -> ([f32; 64], [f32; 2]) {
        let mut x = s.d;
        if self.mask_last && last {
            let kv0 = j * BN;
            cuda_device::unroll!(for i in 0..64 {
                let kv = kv0 + Accumulator::<64>::coord(self.t, i).1;
                if kv >= self.seq || (self.causal && kv > self.q_row[row_half(i)]) {
                    x[i] = f32::NEG_INFINITY;
                }
            });
        }
        let mut mx = self.m;
        cuda_device::unroll!(for i in 0..64 {
            mx[row_half(i)] = mx[row_half(i)].max(x[i]);
        });
        let mut corr = [0.0f32; 2];
        let mut shift = [0.0f32; 2];
        cuda_device::unroll!(for h in 0..2 {
            mx[h] = mx[h].max(quad_shfl(mx[h], 1));
            mx[h] = mx[h].max(quad_shfl(mx[h], 2));
            corr[h] = cuda_device::float::ex2_approx_ftz_f32((self.m[h] - mx[h]) * self.scale_log2);
            shift[h] = mx[h] * self.scale_log2;
        });
        self.m = mx;
        // This thread's part of the row sums: the quad's lanes share `corr`, so they are summed
        // across the quad once, at the end.
        let mut own = [0.0f32; 2];
        cuda_device::unroll!(for i in 0..64 {
            x[i] = cuda_device::float::ex2_approx_ftz_f32(x[i].mul_add(self.scale_log2, -shift[row_half(i)]));
            own[row_half(i)] += x[i];
        });
        self.l = [self.l[0].mul_add(corr[0], own[0]), self.l[1].mul_add(corr[1], own[1])];
        (x, corr)
    }
}

/// `v` of the lane `mask` away (xor) in the warp: within a quad for masks 1 and 2.
#[inline(always)]
fn quad_shfl(v: f32, mask: u32) -> f32 {
    warp::shfl_xor_sync(0xffff_ffff, v, mask)
}

/// The kernel body for head dimension `D` (`RO = D / 2` registers of O per thread), with the
/// consumers taking turns when `PINGPONG`; each kernel of [`kernels`] is one instance.
#[inline(always)]
#[allow(clippy::too_many_arguments)] // the launch's arguments
#[allow(clippy::needless_range_loop)] // unrolled loops index registers (`p`, O's rows) by position
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
    let smem = DynamicSharedArray::<u8, 1024>::get_raw();
    let kv_bytes = KvTile::<D>::BYTES;
    // SAFETY (tiles and barriers): the launch gives `smem_bytes(D)` bytes of 1024-aligned
    // dynamic shared memory; the Q halves, each stage's K and V tile and the barriers are
    // disjoint ranges of it (tile sizes are multiples of 1024), each used only as what it is
    // named here.
    let q_tile = |h: usize| unsafe { QTile::<D>::from_ptr(smem.add(h * QTile::<D>::BYTES)) };
    let k_tile = |s: usize| unsafe { KvTile::<D>::from_ptr(smem.add(BM * D * 2 + s * kv_bytes)) };
    let v_tile = |s: usize| unsafe { KvTile::<D>::from_ptr(smem.add(BM * D * 2 + (STAGES + s) * kv_bytes)) };
    let bars = unsafe { smem.add(barriers_at(D)) }.cast::<u64>();
    let (k_pipe, v_pipe) = unsafe { (Pipeline::<STAGES>::new(bars), Pipeline::<STAGES>::new(bars.add(2 * STAGES))) };
    let (q_full, q_empty) = unsafe { (MBarrier::new(bars.add(4 * STAGES)), MBarrier::new(bars.add(4 * STAGES + 1))) };
    // Two slots (by unit parity) where the producer tells the consumers which unit comes.
    let slot = |n: usize| unsafe { bars.add(4 * STAGES + 2).cast::<u32>().add(n & 1) };

    // Persistent: a block's producer takes work units one after another and hands each to
    // its consumers (the unit's id in `slot`, published by the arrival on `q_full`; an id
    // past the last unit ends the block). The first unit is the block's index; the next
    // ones come from the global counter `sched[0]` when `dynamic` (a block that finishes
    // early takes more: causal units differ up to `seq / 128`-fold), else every grid-th.
    // Unit → (Q tile, head): the Q tiles of one head consecutive (the blocks running at once
    // share a head or two, whose K and V then come from L2, not DRAM), its last Q tiles (the
    // longest causal rows) first, so that the short ones fill the gaps.
    let (seq, heads) = (seq as usize, heads as usize);
    let q_tiles = seq.div_ceil(BM);
    let total = (q_tiles * heads) as u32;
    let unit = move |id: usize| {
        let (head, qt) = (id / q_tiles, q_tiles - 1 - id % q_tiles);
        let kv_tiles = if causal { qt + 1 } else { seq.div_ceil(BN) };
        (qt * BM, head * seq, kv_tiles) // first Q row, the head's first row in the maps
    };

    if thread::threadIdx_x() == 0 {
        // SAFETY: one thread, first; `sync_threads` below publishes it. `empty` counts one
        // release per consumer warpgroup.
        unsafe {
            q_full.init(1);
            q_empty.init(2);
            k_pipe.init(1, 2);
            v_pipe.init(1, 2);
            tma::prefetch(q_map);
            tma::prefetch(k_map);
            tma::prefetch(v_map);
        }
    }
    sync_threads();
    let wg = warpgroup::index();
    if wg == 0 {
        // SAFETY: the whole warpgroup, in the producer branch.
        unsafe { warpgroup::producer_registers::<40>() };
        if warpgroup::is_leader() {
            let (mut kp, mut vp) = (k_pipe.producer(), v_pipe.producer());
            let (grid, dynamic) = (thread::gridDim_x(), dynamic && sched.len() >= 2);
            let mut n = 0;
            loop {
                let id = if n == 0 {
                    thread::blockIdx_x()
                } else if dynamic {
                    // SAFETY: `sched[0]` exists and is only accessed atomically while a
                    // launch runs.
                    unsafe { atomic::add(sched.as_mut_ptr(), 1) + grid }
                } else {
                    thread::blockIdx_x() + n as u32 * grid
                };
                // Q (and the slot of two units ago) of the previous unit are released once
                // both consumers' last S is done.
                q_empty.wait_parity((n as u32 & 1) ^ 1);
                // SAFETY: this block's shared memory; the consumers read slot n only after
                // this phase of `q_full`, and it is not written again before unit n + 2.
                unsafe { slot(n).write_volatile(id) };
                if id >= total {
                    q_full.arrive(); // no unit: the consumers stop
                    break;
                }
                let (q0, row0, kv_tiles) = unit(id as usize);
                q_full.arrive_expect_tx((BM * D * 2) as u32);
                // SAFETY: the maps are bf16 with `QTile`/`KvTile`'s boxes and the 128-byte
                // swizzle; each tile is free (Q: released above; K, V: `acquire` waited for
                // both consumers' release) and its phase expects exactly these bytes.
                unsafe {
                    q_tile(0).load(q_map, 0, (row0 + q0) as i32, q_full);
                    q_tile(1).load(q_map, 0, (row0 + q0 + 64) as i32, q_full);
                }
                for j in 0..kv_tiles {
                    let y = (row0 + j * BN) as i32;
                    let fill = kp.acquire(kv_bytes as u32);
                    unsafe { k_tile(fill.index()).load(k_map, 0, y, fill.barrier()) };
                    let fill = vp.acquire(kv_bytes as u32);
                    unsafe { v_tile(fill.index()).load(v_map, 0, y, fill.barrier()) };
                }
                n += 1;
            }
            if dynamic {
                // The last block to take its last unit resets the counters for the next
                // launch: every other block has taken its last by then.
                // SAFETY: `sched[0..2]` exist and are only accessed atomically.
                unsafe {
                    if atomic::add(sched.as_mut_ptr().add(1), 1) == grid - 1 {
                        atomic::exchange(sched.as_mut_ptr(), 0);
                        atomic::exchange(sched.as_mut_ptr().add(1), 0);
                    }
                }
            }
        }
    } else {
        // SAFETY: the whole warpgroup, in the consumer branch; 40 × 128 + 232 × 256 ≤ 65536.
        unsafe { warpgroup::consumer_registers::<232>() };
        let half = (wg - 1) as usize;
        let (t, leader) = (warpgroup::thread(), warpgroup::is_leader());
        let q = q_tile(half);
        let rows = rows_of(t);
        let mask_last = causal || !seq.is_multiple_of(BN);
        let (mut kc, mut vc) = (k_pipe.consumer(), v_pipe.consumer());
        let mut s = Accumulator::<64>::ZERO;
        let mut p = [FragA::<bf16>::from_regs([0; 4]); BN / 16];
        // Ping-pong (FA3's inter-warpgroup schedule): the warpgroups take turns issuing their
        // wgmmas, through named barriers 1 (warpgroup 1's turn) and 2 (warpgroup 2's), so
        // that one's softmax (the MUFU) runs while the other's GEMMs run. Warpgroup 1 goes
        // first; the turns are counted so that every barrier phase completes.
        let (my_turn, next_turn) = (1 + half as u32, 2 - half as u32);
        if PINGPONG && half == 1 {
            // SAFETY: all 128 threads of warpgroup 2; barrier 1 counts 256 (warpgroup 1's
            // `sync` and this `arrive`), like every turn below.
            unsafe { warpgroup::arrive(1, 256) };
        }
        let mut n = 0;
        loop {
            q_full.wait_parity(n as u32 & 1);
            // SAFETY: written by the producer before the arrival this wait saw.
            let id = unsafe { slot(n).read_volatile() };
            if id >= total {
                break;
            }
            n += 1;
            let (q0, row0, kv_tiles) = unit(id as usize);
            let head = row0 / seq;
            let q_row = [q0 + 64 * half + rows[0], q0 + 64 * half + rows[1]];
            let mut acc = Accumulator::<RO>::ZERO;
            let mut sm =
                Softmax { m: [f32::NEG_INFINITY; 2], l: [0.0f32; 2], t, seq, causal, q_row, mask_last, scale_log2 };
            // Tile 0: S_0 and its softmax (nothing to rescale yet).
            let ks = kc.wait();
            let k = k_tile(ks.index());
            // SAFETY: the warpgroup runs this together; Q and K were written by TMA (the
            // async proxy wgmma reads through) and stay until released after the wait below;
            // `s` is only touched by wgmma until then; the fence orders the softmax's
            // register writes (`p`, `acc`) before.
            unsafe {
                if PINGPONG {
                    warpgroup::sync(my_turn, 256);
                }
                wgmma::fence();
                cuda_device::unroll!(for kk in 0..D / 16 {
                    wgmma::mma_bf16(&mut s, q.descriptor(16 * kk), k.descriptor(16 * kk), kk > 0);
                });
                wgmma::commit_group();
                if PINGPONG {
                    warpgroup::arrive(next_turn, 256);
                }
                wgmma::wait_group::<0, 64>(&mut s);
            }
            if leader {
                kc.release(ks);
                if kv_tiles == 1 {
                    q_empty.arrive(); // this warpgroup's last S of the unit: Q is free
                }
            }
            let (x, _) = sm.tile(&s, 0, kv_tiles == 1);
            let probs = Accumulator::<64> { d: x };
            cuda_device::unroll!(for kk in 0..BN / 16 {
                p[kk] = FragA::from_accumulator(&probs, kk);
            });
            // Tiles 1..: S_j = Q·K_jᵀ and O += P_{j-1}·V_{j-1} issued back to back; the
            // softmax of S_j runs while the tensor cores do P·V. Every wgmma and wait here is
            // unconditional: ptxas tracks pending wgmmas path-insensitively and serialises
            // them (C7513, C7519) around a wait or a fence on one branch only.
            for j in 1..kv_tiles {
                // Both waits before the fence: a wait (a per-thread spin loop) between two
                // wgmmas makes ptxas fence again and serialise them (C7519).
                let ks = kc.wait();
                let k = k_tile(ks.index());
                let vs = vc.wait();
                let v = v_tile(vs.index()).as_ptr();
                // SAFETY: as above.
                unsafe {
                    if PINGPONG {
                        warpgroup::sync(my_turn, 256);
                    }
                    wgmma::fence();
                    cuda_device::unroll!(for kk in 0..D / 16 {
                        wgmma::mma_bf16(&mut s, q.descriptor(16 * kk), k.descriptor(16 * kk), kk > 0);
                    });
                    wgmma::commit_group();
                }
                // SAFETY: as above; `p` and `acc` are not written until the wait for it.
                unsafe {
                    cuda_device::unroll!(for kk in 0..BN / 16 {
                        let desc = wgmma::descriptor_mn_major_128b(v, 16 * kk as u32, BN as u32);
                        wgmma::mma_rs_mn_b(&mut acc, &p[kk], desc, true);
                    });
                    wgmma::commit_group();
                    if PINGPONG {
                        warpgroup::arrive(next_turn, 256);
                    }
                    wgmma::wait_group::<1, 64>(&mut s); // S_j is done; P·V may still run
                }
                if leader {
                    kc.release(ks);
                    if j + 1 == kv_tiles {
                        q_empty.arrive();
                    }
                }
                let (x, corr) = sm.tile(&s, j, j + 1 == kv_tiles);
                // SAFETY: as above.
                unsafe { wgmma::wait_group::<0, RO>(&mut acc) };
                if leader {
                    vc.release(vs);
                }
                cuda_device::unroll!(for i in 0..RO {
                    acc.d[i] *= corr[row_half(i)];
                });
                let probs = Accumulator::<64> { d: x };
                cuda_device::unroll!(for kk in 0..BN / 16 {
                    p[kk] = FragA::from_accumulator(&probs, kk);
                });
            }
            // The last tile's P·V.
            let vs = vc.wait();
            let v = v_tile(vs.index()).as_ptr();
            // SAFETY: as in the loop.
            unsafe {
                wgmma::fence();
                cuda_device::unroll!(for kk in 0..BN / 16 {
                    let desc = wgmma::descriptor_mn_major_128b(v, 16 * kk as u32, BN as u32);
                    wgmma::mma_rs_mn_b(&mut acc, &p[kk], desc, true);
                });
                wgmma::commit_group();
                wgmma::wait_group::<0, RO>(&mut acc);
            }
            if leader {
                vc.release(vs);
            }
            let mut inv = [0.0f32; 2];
            cuda_device::unroll!(for h in 0..2 {
                sm.l[h] += quad_shfl(sm.l[h], 1);
                sm.l[h] += quad_shfl(sm.l[h], 2);
                inv[h] = 1.0 / sm.l[h];
            });
            cuda_device::unroll!(for i in 0..RO {
                acc.d[i] *= inv[row_half(i)];
            });
            let pairs = seq * D / 2;
            let Some(out) = o.get_mut(head * pairs..(head + 1) * pairs).and_then(|o| Bf16Out::new(o, seq, D)) else {
                cuda_device::trap()
            };
            epilogue::store_accumulator(&acc, &out, q0 + 64 * half, 0, &|v: f32, _, _| v);
            if t % 4 == 0 {
                cuda_device::unroll!(for h in 0..2 {
                    if q_row[h] < seq {
                        let lse2 = sm.m[h] * scale_log2 + cuda_device::float::lg2_approx_f32(sm.l[h]);
                        lse[row0 + q_row[h]] = lse2 * core::f32::consts::LN_2;
                    }
                });
            }
        }
        if PINGPONG && half == 0 {
            // SAFETY: warpgroup 1's last turn: warpgroup 2's last `arrive` completes it.
            unsafe { warpgroup::sync(1, 256) };
        }
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
