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
use cuda_device::{DynamicSharedArray, cuda_module, kernel, launch_bounds, sync_threads, thread, tma, warp};

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
/// the barriers (K ring, V ring, Q).
pub const fn smem_bytes(d: usize) -> usize {
    barriers_at(d) + (4 * STAGES + 1) * 8
}

/// Where the barriers start: after the tiles (all multiples of 1024 bytes).
const fn barriers_at(d: usize) -> usize {
    (BM + 2 * STAGES * BN) * d * 2
}

/// The kernel body for head dimension `$d` (`$ro = $d / 2` registers of O per thread), expanded
/// into each kernel: a function would not be inlined (LLVM's inliner gives up on its size even
/// with one caller), and a call passes the accumulators through local memory.
macro_rules! attention_body {
    ($d:literal, $ro:literal, $q_map:expr, $k_map:expr, $v_map:expr, $o:expr, $lse:expr, $seq:expr, $heads:expr,
     $causal:expr, $scale_log2:expr) => {{
        const D: usize = $d;
        const RO: usize = $ro;
        let (q_map, k_map, v_map, o, lse) = ($q_map, $k_map, $v_map, $o, $lse);
        let (causal, scale_log2): (bool, f32) = ($causal, $scale_log2);
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
        let (k_pipe, v_pipe) =
            unsafe { (Pipeline::<STAGES>::new(bars), Pipeline::<STAGES>::new(bars.add(2 * STAGES))) };
        let q_bar = unsafe { MBarrier::new(bars.add(4 * STAGES)) };

        // Block → (Q tile, head): the last Q tiles (the longest causal rows) first.
        let (seq, heads) = ($seq as usize, $heads as usize);
        let q_tiles = seq.div_ceil(BM);
        let id = thread::blockIdx_x() as usize;
        let (head, qt) = (id % heads, q_tiles - 1 - id / heads);
        let (q0, row0) = (qt * BM, head * seq); // first Q row; the head's first row in the maps
        let kv_tiles = if causal { qt + 1 } else { seq.div_ceil(BN) };

        if thread::threadIdx_x() == 0 {
            // SAFETY: one thread, first; `sync_threads` below publishes it. `empty` counts one
            // release per consumer warpgroup.
            unsafe {
                q_bar.init(1);
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
                q_bar.arrive_expect_tx((BM * D * 2) as u32);
                // SAFETY: the maps are bf16 with `QTile`/`KvTile`'s boxes and the 128-byte
                // swizzle; each tile is free (Q: never used yet; K, V: `acquire` waited for both
                // consumers' release) and its phase expects exactly these bytes.
                unsafe {
                    q_tile(0).load(q_map, 0, (row0 + q0) as i32, q_bar);
                    q_tile(1).load(q_map, 0, (row0 + q0 + 64) as i32, q_bar);
                }
                let (mut kp, mut vp) = (k_pipe.producer(), v_pipe.producer());
                for j in 0..kv_tiles {
                    let y = (row0 + j * BN) as i32;
                    let fill = kp.acquire(kv_bytes as u32);
                    unsafe { k_tile(fill.index()).load(k_map, 0, y, fill.barrier()) };
                    let fill = vp.acquire(kv_bytes as u32);
                    unsafe { v_tile(fill.index()).load(v_map, 0, y, fill.barrier()) };
                }
            }
        } else {
            // SAFETY: the whole warpgroup, in the consumer branch; 40 × 128 + 232 × 256 ≤ 65536.
            unsafe { warpgroup::consumer_registers::<232>() };
            let half = (wg - 1) as usize;
            let (t, leader) = (warpgroup::thread(), warpgroup::is_leader());
            let q = q_tile(half);
            let rows = rows_of(t);
            let q_row = [q0 + 64 * half + rows[0], q0 + 64 * half + rows[1]];
            let mask_last = causal || !seq.is_multiple_of(BN);
            let shfl = |v: f32, mask: u32| warp::shfl_xor_sync(0xffff_ffff, v, mask);
            let (mut kc, mut vc) = (k_pipe.consumer(), v_pipe.consumer());
            let mut s = Accumulator::<64>::ZERO;
            let mut acc = Accumulator::<RO>::ZERO;
            let mut p = [FragA::<bf16>::from_regs([0; 4]); BN / 16];
            let (mut m, mut l) = ([f32::NEG_INFINITY; 2], [0.0f32; 2]);
            q_bar.wait_parity(0);
            for j in 0..kv_tiles {
                let ks = kc.wait();
                let k = k_tile(ks.index());
                // SAFETY: the warpgroup runs this together; Q and K were written by TMA (the
                // async proxy wgmma reads through) and stay until released after the wait below;
                // `s` is only touched by wgmma until then; the fence orders the softmax's
                // register writes (`p`, `acc`) before.
                unsafe {
                    wgmma::fence();
                    cuda_device::unroll!(for kk in 0..D / 16 {
                        wgmma::mma_bf16(&mut s, q.descriptor(16 * kk), k.descriptor(16 * kk), kk > 0);
                    });
                    wgmma::commit_group();
                }
                let mut v_done = None;
                if j > 0 {
                    // O += P_{j-1}·V_{j-1}, issued behind S_j: it runs during S_j's softmax.
                    let vs = vc.wait();
                    let v = v_tile(vs.index()).as_ptr();
                    // SAFETY: as above; `p` and `acc` are not written until the wait for it.
                    unsafe {
                        cuda_device::unroll!(for kk in 0..BN / 16 {
                            let desc = wgmma::descriptor_mn_major_128b(v, 16 * kk as u32, BN as u32);
                            wgmma::mma_rs_mn_b(&mut acc, &p[kk], desc, true);
                        });
                        wgmma::commit_group();
                        wgmma::wait_group::<1, 64>(&mut s); // S_j is done; P·V may still run
                    }
                    v_done = Some(vs);
                } else {
                    // SAFETY: as above.
                    unsafe { wgmma::wait_group::<0, 64>(&mut s) };
                }
                if leader {
                    kc.release(ks);
                }
                // The softmax works on a copy of S: `s` keeps what wgmma wrote, so that no
                // ordinary instruction redefines the registers of the next S = Q·Kᵀ while this
                // P·V runs (ptxas would serialise the wgmmas: C7513).
                let mut x = s.d;
                if mask_last && j + 1 == kv_tiles {
                    // Keys past `seq` (the next head's rows, or zeros past the tensor) and,
                    // causal, past the row's own position.
                    let kv0 = j * BN;
                    cuda_device::unroll!(for i in 0..64 {
                        let kv = kv0 + Accumulator::<64>::coord(t, i).1;
                        if kv >= seq || (causal && kv > q_row[row_half(i)]) {
                            x[i] = f32::NEG_INFINITY;
                        }
                    });
                }
                // Online softmax: the new running max (this thread's values, then the quad's),
                // the factor that rescales what came before, then P = 2^(S·c − m·c) with
                // c = log2(e)/√d. Every row has an unmasked key in tile 0, so m is finite.
                let mut mx = m;
                cuda_device::unroll!(for i in 0..64 {
                    mx[row_half(i)] = mx[row_half(i)].max(x[i]);
                });
                let mut corr = [0.0f32; 2];
                let mut shift = [0.0f32; 2];
                cuda_device::unroll!(for h in 0..2 {
                    mx[h] = mx[h].max(shfl(mx[h], 1));
                    mx[h] = mx[h].max(shfl(mx[h], 2));
                    corr[h] = cuda_device::float::ex2_approx_ftz_f32((m[h] - mx[h]) * scale_log2);
                    shift[h] = mx[h] * scale_log2;
                });
                m = mx;
                // This thread's part of the row sums: the quad's lanes share `corr`, so they are
                // summed across the quad once, at the end.
                let mut own = [0.0f32; 2];
                cuda_device::unroll!(for i in 0..64 {
                    x[i] = cuda_device::float::ex2_approx_ftz_f32(x[i].mul_add(scale_log2, -shift[row_half(i)]));
                    own[row_half(i)] += x[i];
                });
                l = [l[0].mul_add(corr[0], own[0]), l[1].mul_add(corr[1], own[1])];
                // Unconditional (nothing is pending when j = 0): ptxas tracks pending wgmmas
                // path-insensitively, and a wait on one branch only would leave P·V "pending"
                // at the writes of `p` and `acc` below, serialising every wgmma (C7513).
                // SAFETY: as above.
                unsafe { wgmma::wait_group::<0, RO>(&mut acc) };
                if let (Some(vs), true) = (v_done, leader) {
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
                l[h] += shfl(l[h], 1);
                l[h] += shfl(l[h], 2);
                inv[h] = 1.0 / l[h];
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
                        let lse2 = m[h] * scale_log2 + cuda_device::float::lg2_approx_f32(l[h]);
                        lse[row0 + q_row[h]] = lse2 * core::f32::consts::LN_2;
                    }
                });
            }
        }
    }};
}

#[cuda_module]
pub mod kernels {
    use super::*;

    /// Attention forward, head dimension 64: grid `⌈seq / 128⌉ · heads` blocks of 384 threads,
    /// [`smem_bytes`]`(64)` of dynamic shared memory ([`Attention::run`]). `heads` counts batch ·
    /// heads; `scale_log2` is `log2(e) / √d`.
    #[kernel]
    #[launch_bounds(384, 1)]
    #[allow(clippy::too_many_arguments)]
    pub fn attention_d64(
        q: TensorMap,
        k: TensorMap,
        v: TensorMap,
        o: &mut [Bf16x2],
        lse: &mut [f32],
        seq: u32,
        heads: u32,
        causal: u32,
        scale_log2: f32,
    ) {
        attention_body!(64, 32, &q, &k, &v, o, lse, seq, heads, causal != 0, scale_log2);
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
        seq: u32,
        heads: u32,
        causal: u32,
        scale_log2: f32,
    ) {
        attention_body!(128, 64, &q, &k, &v, o, lse, seq, heads, causal != 0, scale_log2);
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
}

impl Attention {
    /// Loads the kernels (built for sm_90a; an H100 or H200 runs them).
    pub fn new(ctx: &Arc<CudaContext>) -> Result<Attention, DriverError> {
        Ok(Attention { module: kernels::load(ctx)? })
    }

    /// The launch for `shape`: one block of 384 threads per (Q tile, batch · head).
    pub fn config(shape: Shape) -> LaunchConfig {
        let blocks = shape.seq.div_ceil(BM) * shape.batch * shape.heads;
        LaunchConfig {
            grid_dim: (blocks as u32, 1, 1),
            block_dim: (384, 1, 1),
            shared_mem_bytes: smem_bytes(shape.d) as u32,
        }
    }

    /// Enqueues the forward pass: `o` (`[batch, heads, seq, d]` bf16, as pairs) and `lse`
    /// (`[batch, heads, seq]` f32, natural log) from the operands.
    pub fn run(
        &self,
        stream: &CudaStream,
        ops: &Operands,
        o: &mut DeviceBuffer<Bf16x2>,
        lse: &mut DeviceBuffer<f32>,
    ) -> Result<(), Box<dyn Error>> {
        let sh = ops.shape;
        if o.len() * 2 < sh.rows() * sh.d || lse.len() < sh.rows() {
            return Err(format!("attention: O must hold {} values and lse {}", sh.rows() * sh.d, sh.rows()).into());
        }
        let cfg = Self::config(sh);
        let (seq, heads, causal) = (sh.seq as u32, (sh.batch * sh.heads) as u32, sh.causal as u32);
        let scale_log2 = std::f32::consts::LOG2_E / (sh.d as f32).sqrt();
        let (q, k, v) = (ops.q_map, ops.k_map, ops.v_map);
        match sh.d {
            64 => self.module.attention_d64(stream, cfg, q, k, v, o, lse, seq, heads, causal, scale_log2)?,
            _ => self.module.attention_d128(stream, cfg, q, k, v, o, lse, seq, heads, causal, scale_log2)?,
        }
        Ok(())
    }
}
