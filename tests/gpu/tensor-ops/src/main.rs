//! GPU test of the tensor-core API (issue 14), each against a CPU reference on random inputs
//! with the output poisoned first: `mma.sync` m16n8k16 (bf16, f16) and m16n8k8 (tf32) with
//! fragments built through the documented layouts; `ldmatrix` x4 (plain and `.trans`) and a
//! `stmatrix` round trip; an mbarrier's phases and `elect.sync`; and one 64×64×64 bf16 product
//! with TMA loads (128-byte swizzle) into shared memory, an mbarrier, and four
//! `wgmma.mma_async` m64n64k16 on shared-memory descriptors (sm_90a); the other wgmma forms: an
//! attention-shaped chain `S = Q·Kᵀ` (SS) → `P = bf16(S / 4)` from the accumulator into A
//! fragments → `P·C` and `P·V` in the RS form with B K-major and N-major, a 64×128×64 product
//! with B N-major (two TMA boxes, the descriptor's leading offset between them), and an fp8
//! e4m3 64×64×128 product (`m64n64k32`, TMA of bytes). Then TMA on its own: a 3D
//! box copy global → shared → global through two maps passed by value (grid-constant
//! parameters), with partial boxes at every edge (zero fill on load, clipped on store), checked
//! against CPU slices; and a multicast load in 2-block clusters, where each block fetches half of
//! its cluster's tile for both and checks it received the whole tile; and three maps in one
//! by-value array, each block loading through its own.
#![feature(f16)]

use cuda_core::tma::{TensorMap, TmaElement, TmaSwizzle};
use cuda_core::{DeviceBuffer, LaunchConfig};
use cuda_device::fp8::E4M3;
use cuda_device::half::bf16;
use cuda_device::mbarrier::{self, MBarrier, Phase};
use cuda_device::mma::{self, Accumulator, FragA, FragB, Tf32};
use cuda_device::{
    SharedMemory, atomic, cluster, cluster_launch, cuda_module, kernel, sync_threads, thread, tma, wgmma,
};

#[path = "../../harness.rs"]
mod harness;
use harness::{Lcg, Report, ck};

#[cuda_module]
mod kernels {
    use super::*;

    /// One warp: D (16×8) = A (16×16, row-major) · B (16×8, given as 8 rows of 16 k) + C.
    #[kernel]
    pub fn mma_bf16(a: &[bf16], b: &[bf16], c: &[f32], d: &mut [f32]) {
        let lane = thread::threadIdx_x();
        let fa = FragA::<bf16>::from_fn(lane, |r, k| a[r * 16 + k]);
        let fb = FragB::<bf16>::from_fn(lane, |k, n| b[n * 16 + k]);
        let mut acc = Accumulator::ZERO;
        for i in 0..4 {
            let (r, n) = Accumulator::coord(lane, i);
            acc.d[i] = c[r * 8 + n];
        }
        unsafe { mma::mma_sync(&fa, &fb, &mut acc) };
        for i in 0..4 {
            let (r, n) = Accumulator::coord(lane, i);
            d[r * 8 + n] = acc.d[i];
        }
    }

    #[kernel]
    pub fn mma_f16(a: &[f16], b: &[f16], d: &mut [f32]) {
        let lane = thread::threadIdx_x();
        let fa = FragA::<f16>::from_fn(lane, |r, k| a[r * 16 + k]);
        let fb = FragB::<f16>::from_fn(lane, |k, n| b[n * 16 + k]);
        let mut acc = Accumulator::ZERO;
        unsafe { mma::mma_sync(&fa, &fb, &mut acc) };
        for i in 0..4 {
            let (r, n) = Accumulator::coord(lane, i);
            d[r * 8 + n] = acc.d[i];
        }
    }

    /// D (16×8) = A (16×8) · B (8×8, 8 rows of 8 k), tf32 (inputs already representable).
    #[kernel]
    pub fn mma_tf32(a: &[f32], b: &[f32], d: &mut [f32]) {
        let lane = thread::threadIdx_x();
        let fa = FragA::<Tf32>::from_fn(lane, |r, k| Tf32(a[r * 8 + k]));
        let fb = FragB::<Tf32>::from_fn(lane, |k, n| Tf32(b[n * 8 + k]));
        let mut acc = Accumulator::ZERO;
        unsafe { mma::mma_sync(&fa, &fb, &mut acc) };
        for i in 0..4 {
            let (r, n) = Accumulator::coord(lane, i);
            d[r * 8 + n] = acc.d[i];
        }
    }

    /// A 16×16 tile of u16 in shared memory; lane l gives row l % 16, column 8 (l / 16):
    /// out[reg * 32 + lane] for x4, then x4.trans; then stmatrix.x4 of the x4 registers into
    /// a second tile, copied to `back`.
    #[kernel]
    pub fn ldst(tile: &[u16], out: &mut [u32], back: &mut [u16]) {
        static T: SharedMemory<u16, 256, 16> = SharedMemory::UNINIT;
        static U: SharedMemory<u16, 256, 16> = SharedMemory::UNINIT;
        let l = thread::threadIdx_x() as usize;
        for i in 0..8 {
            unsafe { T.write(l * 8 + i, tile[l * 8 + i]) };
        }
        sync_threads();
        let p = unsafe { T.as_mut_ptr().add((l % 16) * 16 + (l / 16) * 8) };
        let r = unsafe { mma::ldmatrix_x4(p.cast()) };
        let t = unsafe { mma::ldmatrix_x4_trans(p.cast()) };
        for i in 0..4 {
            out[i * 32 + l] = r[i];
            out[128 + i * 32 + l] = t[i];
        }
        let q = unsafe { U.as_mut_ptr().add((l % 16) * 16 + (l / 16) * 8) };
        unsafe { mma::stmatrix_x4(q.cast(), r) };
        sync_threads();
        for i in 0..8 {
            back[l * 8 + i] = unsafe { U.read(l * 8 + i) };
        }
    }

    /// 256 threads: three phases of one barrier expecting every thread; after each, thread 0
    /// of each warp records the phase parity it waits for next. `elected` counts elected lanes.
    #[kernel]
    pub fn phases(parities: &mut [u32], elected: &mut [u32]) {
        static BAR: SharedMemory<u64, 1, 8> = SharedMemory::UNINIT;
        let t = thread::threadIdx_x();
        let bar = unsafe { MBarrier::new(BAR.as_mut_ptr()) };
        if t == 0 {
            unsafe { bar.init(thread::blockDim_x()) };
            mbarrier::fence_init();
        }
        sync_threads();
        let mut phase = Phase::new(bar);
        for round in 0..3 {
            bar.arrive();
            phase.wait();
            if t % 32 == 0 {
                parities[(t / 32 * 3 + round) as usize] = phase.parity();
            }
        }
        if unsafe { mbarrier::elect_one() } {
            unsafe { atomic::add(elected.as_mut_ptr(), 1u32) };
        }
    }

    /// The 3D box (slices × rows × columns) one TMA copy moves in `tma_3d_copy`.
    pub const BOX3: [usize; 3] = [4, 8, 16];
    pub const BOX3_LEN: usize = BOX3[0] * BOX3[1] * BOX3[2];

    /// Block (bx, by, bz) loads the box at element (16 bx, 8 by, 4 bz) of `src` into shared
    /// memory, writes what arrived to `tiles[block]`, and stores it at the same place of `dst`.
    /// Both maps are kernel parameters by value, used in place.
    #[kernel]
    pub fn tma_3d_copy(src: TensorMap, dst: TensorMap, tiles: &mut [f32]) {
        static T: SharedMemory<f32, BOX3_LEN, 128> = SharedMemory::UNINIT;
        static BAR: SharedMemory<u64, 1, 8> = SharedMemory::UNINIT;
        let t = thread::threadIdx_x() as usize;
        let (bx, by, bz) = (thread::blockIdx_x(), thread::blockIdx_y(), thread::blockIdx_z());
        let (x, y, z) =
            ((bx as usize * BOX3[2]) as i32, (by as usize * BOX3[1]) as i32, (bz as usize * BOX3[0]) as i32);
        let block = ((bz * thread::gridDim_y() + by) * thread::gridDim_x() + bx) as usize;
        let bar = unsafe { MBarrier::new(BAR.as_mut_ptr()) };
        if t == 0 {
            unsafe { bar.init(1) };
            mbarrier::fence_init();
            unsafe { tma::prefetch(&src) };
        }
        sync_threads();
        if t == 0 {
            // A partial box still counts (and writes, as zeros) all of its bytes.
            bar.arrive_expect_tx((BOX3_LEN * 4) as u32);
            unsafe { tma::load_3d(T.as_mut_ptr().cast(), &src, x, y, z, bar) };
        }
        Phase::new(bar).wait();
        let mut i = t;
        while i < BOX3_LEN {
            tiles[block * BOX3_LEN + i] = unsafe { T.read(i) };
            i += thread::blockDim_x() as usize;
        }
        sync_threads();
        if t == 0 {
            unsafe { tma::store_3d(&dst, x, y, z, T.as_mut_ptr().cast()) };
            tma::commit_group();
            tma::wait_group();
        }
    }

    /// Rows of the tile each 2-block cluster of `tma_multicast` receives (32 f32 columns).
    pub const MC_ROWS: usize = 16;
    pub const MC_COLS: usize = 32;

    /// Cluster c's tile is rows 16 c.. of `map` (boxes of 8 rows): block rank r loads rows 8 r..
    /// of it into offset 8 r of both blocks' shared memory (mask 0b11), so each block gets one
    /// half from itself and one from its partner; each then writes its whole tile to
    /// `out[block]`.
    #[kernel]
    #[cluster_launch(2, 1, 1)]
    pub fn tma_multicast(map: TensorMap, out: &mut [f32]) {
        static T: SharedMemory<f32, { MC_ROWS * MC_COLS }, 128> = SharedMemory::UNINIT;
        static BAR: SharedMemory<u64, 1, 8> = SharedMemory::UNINIT;
        let t = thread::threadIdx_x() as usize;
        let rank = cluster::block_rank();
        let block = thread::blockIdx_x() as usize;
        let bar = unsafe { MBarrier::new(BAR.as_mut_ptr()) };
        if t == 0 {
            unsafe { bar.init(1) };
            mbarrier::fence_init();
            // Both halves land here: the one this block loads and its partner's.
            bar.arrive_expect_tx((MC_ROWS * MC_COLS * 4) as u32);
        }
        // Every barrier of the cluster is initialised before any block multicasts into it.
        cluster::sync();
        if t == 0 {
            let half = rank as usize * (MC_ROWS / 2);
            let row = ((block / 2) * MC_ROWS + half) as i32;
            unsafe { tma::load_2d_multicast(T.as_mut_ptr().add(half * MC_COLS).cast(), &map, 0, row, bar, 0b11) };
        }
        Phase::new(bar).wait();
        let mut i = t;
        while i < MC_ROWS * MC_COLS {
            out[block * MC_ROWS * MC_COLS + i] = unsafe { T.read(i) };
            i += thread::blockDim_x() as usize;
        }
        // Neither block leaves while the cluster still uses its shared memory.
        cluster::sync();
    }

    /// Block b loads the whole 16×32 f32 tensor of `maps[b]` (three maps, by value, in one
    /// grid-constant array) and writes it to `out[b]`.
    #[kernel]
    pub fn tma_map_array(maps: [TensorMap; 3], out: &mut [f32]) {
        static T: SharedMemory<f32, { MC_ROWS * MC_COLS }, 128> = SharedMemory::UNINIT;
        static BAR: SharedMemory<u64, 1, 8> = SharedMemory::UNINIT;
        let t = thread::threadIdx_x() as usize;
        let b = thread::blockIdx_x() as usize;
        let bar = unsafe { MBarrier::new(BAR.as_mut_ptr()) };
        if t == 0 {
            unsafe { bar.init(1) };
            mbarrier::fence_init();
            bar.arrive_expect_tx((MC_ROWS * MC_COLS * 4) as u32);
            unsafe { tma::load_2d(T.as_mut_ptr().cast(), &maps[b], 0, 0, bar) };
        }
        Phase::new(bar).wait();
        let mut i = t;
        while i < MC_ROWS * MC_COLS {
            out[b * MC_ROWS * MC_COLS + i] = unsafe { T.read(i) };
            i += thread::blockDim_x() as usize;
        }
    }

    /// One warpgroup: D (64×64 f32) = A (64×64, K-major) · B (64 n × 64 k, K-major) with both
    /// tiles loaded by TMA (128-byte swizzle) from `maps[0]` (A) and `maps[1]` (B).
    #[kernel]
    pub fn wgmma_tile(maps: &[TensorMap], d: &mut [f32]) {
        static A: SharedMemory<bf16, { 64 * 64 }, 1024> = SharedMemory::UNINIT;
        static B: SharedMemory<bf16, { 64 * 64 }, 1024> = SharedMemory::UNINIT;
        static BAR: SharedMemory<u64, 1, 8> = SharedMemory::UNINIT;
        let t = thread::threadIdx_x();
        let bar = unsafe { MBarrier::new(BAR.as_mut_ptr()) };
        if t == 0 {
            unsafe { bar.init(1) };
            mbarrier::fence_init();
        }
        sync_threads();
        if t == 0 {
            bar.arrive_expect_tx(2 * 64 * 64 * 2);
            unsafe {
                tma::load_2d(A.as_mut_ptr().cast(), &maps[0], 0, 0, bar);
                tma::load_2d(B.as_mut_ptr().cast(), &maps[1], 0, 0, bar);
            }
        }
        Phase::new(bar).wait();
        let mut acc = wgmma::Accumulator::<32>::ZERO;
        unsafe {
            wgmma::fence();
            for k in 0..4u32 {
                let da = wgmma::descriptor_k_major_128b(A.as_mut_ptr(), k * 16);
                let db = wgmma::descriptor_k_major_128b(B.as_mut_ptr(), k * 16);
                wgmma::mma_bf16(&mut acc, da, db, k > 0);
            }
            wgmma::commit_group();
            wgmma::wait_group::<0, 32>(&mut acc);
        }
        for i in 0..32 {
            let (r, c) = wgmma::Accumulator::<32>::coord(t, i);
            d[r * 64 + c] = acc.d[i];
        }
    }

    /// Thread 0 loads the 64×64 bf16 tiles of `maps` (128-byte swizzle) into `tiles` and waits
    /// with the others.
    fn load_tiles<const N: usize>(maps: &[TensorMap], tiles: [*mut bf16; N], bar: MBarrier) {
        if thread::threadIdx_x() == 0 {
            bar.arrive_expect_tx((N * 64 * 64 * 2) as u32);
            for i in 0..N {
                unsafe { tma::load_2d(tiles[i].cast(), &maps[i], 0, 0, bar) };
            }
        }
        Phase::new(bar).wait();
    }

    /// Attention's two products in one warpgroup: S = Q·Kᵀ (64×64, SS form, `maps[0]` Q, `maps[1]`
    /// K as 64 rows of 64 k), P = bf16(S / 4) taken from the accumulator 16 columns at a time as
    /// A fragments, then in the RS form `o_k` = P·Cᵀ (`maps[2]`: C as 64 n rows of 64 k,
    /// K-major) and `o_mn` = P·V (`maps[3]`: V as 64 k rows of 64 n, N-major, as attention
    /// stores V).
    #[kernel]
    pub fn wgmma_rs_chain(maps: &[TensorMap], o_k: &mut [f32], o_mn: &mut [f32]) {
        static Q: SharedMemory<bf16, { 64 * 64 }, 1024> = SharedMemory::UNINIT;
        static K: SharedMemory<bf16, { 64 * 64 }, 1024> = SharedMemory::UNINIT;
        static C: SharedMemory<bf16, { 64 * 64 }, 1024> = SharedMemory::UNINIT;
        static V: SharedMemory<bf16, { 64 * 64 }, 1024> = SharedMemory::UNINIT;
        static BAR: SharedMemory<u64, 1, 8> = SharedMemory::UNINIT;
        let t = thread::threadIdx_x();
        let bar = unsafe { MBarrier::new(BAR.as_mut_ptr()) };
        if t == 0 {
            unsafe { bar.init(1) };
            mbarrier::fence_init();
        }
        sync_threads();
        load_tiles(maps, [Q.as_mut_ptr(), K.as_mut_ptr(), C.as_mut_ptr(), V.as_mut_ptr()], bar);
        let mut s = wgmma::Accumulator::<32>::ZERO;
        let mut ok = wgmma::Accumulator::<32>::ZERO;
        let mut omn = wgmma::Accumulator::<32>::ZERO;
        unsafe {
            wgmma::fence();
            for k in 0..4u32 {
                let dq = wgmma::descriptor_k_major_128b(Q.as_mut_ptr(), k * 16);
                let dk = wgmma::descriptor_k_major_128b(K.as_mut_ptr(), k * 16);
                wgmma::mma_bf16(&mut s, dq, dk, k > 0);
            }
            wgmma::commit_group();
            wgmma::wait_group::<0, 32>(&mut s);
        }
        s.scale(0.25);
        let p = [0, 1, 2, 3].map(|j| wgmma::FragA::<bf16>::from_accumulator(&s, j));
        unsafe {
            wgmma::fence();
            for j in 0..4u32 {
                let dc = wgmma::descriptor_k_major_128b(C.as_mut_ptr(), j * 16);
                wgmma::mma_rs(&mut ok, &p[j as usize], dc, j > 0);
                let dv = wgmma::descriptor_mn_major_128b(V.as_mut_ptr(), j * 16, 64);
                wgmma::mma_rs_mn_b(&mut omn, &p[j as usize], dv, j > 0);
            }
            wgmma::commit_group();
            wgmma::wait_group::<0, 32>(&mut ok);
            wgmma::wait_group::<0, 32>(&mut omn);
        }
        for i in 0..32 {
            let (r, c) = wgmma::Accumulator::<32>::coord(t, i);
            o_k[r * 64 + c] = ok.d[i];
            o_mn[r * 64 + c] = omn.d[i];
        }
    }

    /// D (64×128) = A (64×64, K-major, `maps[0]`) · B (64 k rows of 128 n, N-major, `maps[1]`
    /// with 64×64 boxes): B's two boxes land one after the other, 8 KiB apart — the N-major
    /// descriptor's leading byte offset — and each `m64n128k16` reads both.
    #[kernel]
    pub fn wgmma_mn_b(maps: &[TensorMap], d: &mut [f32]) {
        static A: SharedMemory<bf16, { 64 * 64 }, 1024> = SharedMemory::UNINIT;
        static B: SharedMemory<bf16, { 64 * 128 }, 1024> = SharedMemory::UNINIT;
        static BAR: SharedMemory<u64, 1, 8> = SharedMemory::UNINIT;
        let t = thread::threadIdx_x();
        let bar = unsafe { MBarrier::new(BAR.as_mut_ptr()) };
        if t == 0 {
            unsafe { bar.init(1) };
            mbarrier::fence_init();
        }
        sync_threads();
        if t == 0 {
            bar.arrive_expect_tx(3 * 64 * 64 * 2);
            unsafe {
                tma::load_2d(A.as_mut_ptr().cast(), &maps[0], 0, 0, bar);
                tma::load_2d(B.as_mut_ptr().cast(), &maps[1], 0, 0, bar);
                tma::load_2d(B.as_mut_ptr().add(64 * 64).cast(), &maps[1], 64, 0, bar);
            }
        }
        Phase::new(bar).wait();
        let mut acc = wgmma::Accumulator::<64>::ZERO;
        unsafe {
            wgmma::fence();
            for k in 0..4u32 {
                let da = wgmma::descriptor_k_major_128b(A.as_mut_ptr(), k * 16);
                let db = wgmma::descriptor_mn_major_128b(B.as_mut_ptr(), k * 16, 64);
                wgmma::mma_bf16_mn_b(&mut acc, da, db, k > 0);
            }
            wgmma::commit_group();
            wgmma::wait_group::<0, 64>(&mut acc);
        }
        for i in 0..64 {
            let (r, c) = wgmma::Accumulator::<64>::coord(t, i);
            d[r * 128 + c] = acc.d[i];
        }
    }

    /// D (64×64 f32) = A (64×128 e4m3, K-major, `maps[0]`) · B (64 n rows of 128 k, `maps[1]`):
    /// TMA of bytes with the 128-byte swizzle, four `m64n64k32` steps along K.
    #[kernel]
    pub fn wgmma_fp8(maps: &[TensorMap], d: &mut [f32]) {
        static A: SharedMemory<E4M3, { 64 * 128 }, 1024> = SharedMemory::UNINIT;
        static B: SharedMemory<E4M3, { 64 * 128 }, 1024> = SharedMemory::UNINIT;
        static BAR: SharedMemory<u64, 1, 8> = SharedMemory::UNINIT;
        let t = thread::threadIdx_x();
        let bar = unsafe { MBarrier::new(BAR.as_mut_ptr()) };
        if t == 0 {
            unsafe { bar.init(1) };
            mbarrier::fence_init();
        }
        sync_threads();
        if t == 0 {
            bar.arrive_expect_tx(2 * 64 * 128);
            unsafe {
                tma::load_2d(A.as_mut_ptr().cast(), &maps[0], 0, 0, bar);
                tma::load_2d(B.as_mut_ptr().cast(), &maps[1], 0, 0, bar);
            }
        }
        Phase::new(bar).wait();
        let mut acc = wgmma::Accumulator::<32>::ZERO;
        unsafe {
            wgmma::fence();
            for k in 0..4u32 {
                let da = wgmma::descriptor_k_major_128b_8bit(A.as_mut_ptr(), k * 32);
                let db = wgmma::descriptor_k_major_128b_8bit(B.as_mut_ptr(), k * 32);
                wgmma::mma_e4m3(&mut acc, da, db, k > 0);
            }
            wgmma::commit_group();
            wgmma::wait_group::<0, 32>(&mut acc);
        }
        for i in 0..32 {
            let (r, c) = wgmma::Accumulator::<32>::coord(t, i);
            d[r * 64 + c] = acc.d[i];
        }
    }
}

fn cfg(threads: u32) -> LaunchConfig {
    LaunchConfig { grid_dim: (1, 1, 1), block_dim: (threads, 1, 1), shared_mem_bytes: 0 }
}

/// Small integers times 2^-3: products and sums of 16–64 of them are exact in f32, so the
/// GPU must match the CPU bit for bit whatever its summation order.
fn small(rng: &mut Lcg) -> f32 {
    ((rng.next_u32() % 17) as i32 - 8) as f32 / 8.0
}

fn close(what: &str, got: &[f32], want: &[f32]) -> Result<(), String> {
    match (0..want.len()).find(|&i| got[i].to_bits() != want[i].to_bits()) {
        None => Ok(()),
        Some(i) => Err(format!("{what}: element {i} gpu {} cpu {}", got[i], want[i])),
    }
}

fn main() {
    let mut report = Report::new("tensor-ops");
    let mut rng = Lcg::from_env_or_clock();
    let (_ctx, s, m) = report.load(kernels::load);

    report.check("mma_m16n8k16_bf16", || {
        let a: Vec<f32> = (0..256).map(|_| small(&mut rng)).collect();
        let b: Vec<f32> = (0..128).map(|_| small(&mut rng)).collect();
        let c: Vec<f32> = (0..128).map(|_| small(&mut rng)).collect();
        let (ab, bb): (Vec<bf16>, Vec<bf16>) =
            (a.iter().map(|&x| bf16::from_f32(x)).collect(), b.iter().map(|&x| bf16::from_f32(x)).collect());
        let (ad, bd, cd) = (
            ck(DeviceBuffer::from_host(&s, &ab), "copy a")?,
            ck(DeviceBuffer::from_host(&s, &bb), "copy b")?,
            ck(DeviceBuffer::from_host(&s, &c), "copy c")?,
        );
        let mut dd = ck(DeviceBuffer::from_host(&s, &vec![f32::NAN; 128]), "poison d")?;
        ck(m.mma_bf16(&s, cfg(32), &ad, &bd, &cd, &mut dd), "launch mma_bf16")?;
        let want: Vec<f32> =
            (0..128).map(|e| (0..16).map(|k| a[(e / 8) * 16 + k] * b[(e % 8) * 16 + k]).sum::<f32>() + c[e]).collect();
        close("mma_bf16", &ck(dd.to_host_vec(&s), "copy d back")?, &want)
    });

    report.check("mma_m16n8k16_f16", || {
        let a: Vec<f32> = (0..256).map(|_| small(&mut rng)).collect();
        let b: Vec<f32> = (0..128).map(|_| small(&mut rng)).collect();
        let (ah, bh): (Vec<f16>, Vec<f16>) =
            (a.iter().map(|&x| x as f16).collect(), b.iter().map(|&x| x as f16).collect());
        let (ad, bd) =
            (ck(DeviceBuffer::from_host(&s, &ah), "copy a")?, ck(DeviceBuffer::from_host(&s, &bh), "copy b")?);
        let mut dd = ck(DeviceBuffer::from_host(&s, &vec![f32::NAN; 128]), "poison d")?;
        ck(m.mma_f16(&s, cfg(32), &ad, &bd, &mut dd), "launch mma_f16")?;
        let want: Vec<f32> =
            (0..128).map(|e| (0..16).map(|k| a[(e / 8) * 16 + k] * b[(e % 8) * 16 + k]).sum::<f32>()).collect();
        close("mma_f16", &ck(dd.to_host_vec(&s), "copy d back")?, &want)
    });

    report.check("mma_m16n8k8_tf32", || {
        let a: Vec<f32> = (0..128).map(|_| small(&mut rng)).collect();
        let b: Vec<f32> = (0..64).map(|_| small(&mut rng)).collect();
        let (ad, bd) = (ck(DeviceBuffer::from_host(&s, &a), "copy a")?, ck(DeviceBuffer::from_host(&s, &b), "copy b")?);
        let mut dd = ck(DeviceBuffer::from_host(&s, &vec![f32::NAN; 128]), "poison d")?;
        ck(m.mma_tf32(&s, cfg(32), &ad, &bd, &mut dd), "launch mma_tf32")?;
        let want: Vec<f32> =
            (0..128).map(|e| (0..8).map(|k| a[(e / 8) * 8 + k] * b[(e % 8) * 8 + k]).sum::<f32>()).collect();
        close("mma_tf32", &ck(dd.to_host_vec(&s), "copy d back")?, &want)
    });

    report.check("ldmatrix_x4_trans_and_stmatrix", || {
        let tile: Vec<u16> = (0..256).map(|_| rng.next_u32() as u16).collect();
        let td = ck(DeviceBuffer::from_host(&s, &tile), "copy tile")?;
        let mut od = ck(DeviceBuffer::from_host(&s, &vec![0xdead_beefu32; 256]), "poison out")?;
        let mut bd = ck(DeviceBuffer::from_host(&s, &vec![0xbeefu16; 256]), "poison back")?;
        ck(m.ldst(&s, cfg(32), &td, &mut od, &mut bd), "launch ldst")?;
        let out = ck(od.to_host_vec(&s), "copy out back")?;
        // Matrix i (rows 8 (i % 2).., columns 8 (i / 2)..): lane l holds row l / 4, columns
        // 2 (l % 4) and +1; transposed, the same of the matrix's transpose.
        let at = |i: usize, r: usize, c: usize| tile[(8 * (i % 2) + r) * 16 + 8 * (i / 2) + c] as u32;
        for i in 0..4 {
            for l in 0..32 {
                let (r, c) = (l / 4, 2 * (l % 4));
                let plain = at(i, r, c) | at(i, r, c + 1) << 16;
                let trans = at(i, c, r) | at(i, c + 1, r) << 16;
                if out[i * 32 + l] != plain {
                    return Err(format!("ldmatrix.x4 reg {i} lane {l}: {:#x}, want {plain:#x}", out[i * 32 + l]));
                }
                if out[128 + i * 32 + l] != trans {
                    return Err(format!(
                        "ldmatrix.x4.trans reg {i} lane {l}: {:#x}, want {trans:#x}",
                        out[128 + i * 32 + l]
                    ));
                }
            }
        }
        let back = ck(bd.to_host_vec(&s), "copy back")?;
        if back != tile {
            return Err("stmatrix.x4 of ldmatrix.x4's registers did not give the tile back".into());
        }
        Ok(())
    });

    report.check("mbarrier_phases_and_elect", || {
        let mut pd = ck(DeviceBuffer::from_host(&s, &vec![7u32; 24]), "poison parities")?;
        let mut ed = ck(DeviceBuffer::from_host(&s, &vec![0u32; 1]), "zero elected")?;
        ck(m.phases(&s, cfg(256), &mut pd, &mut ed), "launch phases")?;
        let want: Vec<u32> = (0..8).flat_map(|_| [1, 0, 1]).collect();
        let got = ck(pd.to_host_vec(&s), "copy parities back")?;
        if got != want {
            return Err(format!("parities {got:?}, want {want:?}"));
        }
        let e = ck(ed.to_host_vec(&s), "copy elected back")?[0];
        if e != 8 {
            return Err(format!("{e} lanes elected in 8 warps, want 8"));
        }
        Ok(())
    });

    report.check("tma_wgmma_m64n64k64_bf16", || {
        let a: Vec<f32> = (0..64 * 64).map(|_| small(&mut rng)).collect();
        let b: Vec<f32> = (0..64 * 64).map(|_| small(&mut rng)).collect();
        let (ab, bb): (Vec<bf16>, Vec<bf16>) =
            (a.iter().map(|&x| bf16::from_f32(x)).collect(), b.iter().map(|&x| bf16::from_f32(x)).collect());
        let (ad, bd) =
            (ck(DeviceBuffer::from_host(&s, &ab), "copy a")?, ck(DeviceBuffer::from_host(&s, &bb), "copy b")?);
        let map = |buf: &DeviceBuffer<bf16>| {
            TensorMap::tiled_2d(buf.as_device_ptr(), TmaElement::Bf16, 64, 64, 64, 64, TmaSwizzle::B128)
        };
        let maps = [ck(map(&ad), "encode A's map")?, ck(map(&bd), "encode B's map")?];
        let md = ck(DeviceBuffer::from_host(&s, &maps), "copy maps")?;
        let mut dd = ck(DeviceBuffer::from_host(&s, &vec![f32::NAN; 64 * 64]), "poison d")?;
        ck(m.wgmma_tile(&s, cfg(128), &md, &mut dd), "launch wgmma_tile")?;
        let want: Vec<f32> =
            (0..64 * 64).map(|e| (0..64).map(|k| a[(e / 64) * 64 + k] * b[(e % 64) * 64 + k]).sum::<f32>()).collect();
        close("wgmma_tile", &ck(dd.to_host_vec(&s), "copy d back")?, &want)
    });

    // Integers in -1..=1 (and quarters after the scale): every product and sum below, S and P
    // included, is exact in f32 and bf16, so the GPU must match bit for bit.
    report.check("wgmma_rs_chain_from_accumulator", || {
        let tiles: Vec<Vec<f32>> =
            (0..4).map(|_| (0..64 * 64).map(|_| ((rng.next_u32() % 3) as i32 - 1) as f32).collect()).collect();
        let (q, k, c, v) = (&tiles[0], &tiles[1], &tiles[2], &tiles[3]);
        let bufs = tiles
            .iter()
            .map(|x| DeviceBuffer::from_host(&s, &x.iter().map(|&x| bf16::from_f32(x)).collect::<Vec<_>>()))
            .collect::<Result<Vec<_>, _>>();
        let bufs = ck(bufs, "copy the tiles")?;
        let maps = bufs
            .iter()
            .map(|b| TensorMap::tiled_2d(b.as_device_ptr(), TmaElement::Bf16, 64, 64, 64, 64, TmaSwizzle::B128))
            .collect::<Result<Vec<_>, _>>();
        let md = ck(DeviceBuffer::from_host(&s, &ck(maps, "encode the maps")?), "copy maps")?;
        let mut okd = ck(DeviceBuffer::from_host(&s, &vec![f32::NAN; 64 * 64]), "poison o_k")?;
        let mut omd = ck(DeviceBuffer::from_host(&s, &vec![f32::NAN; 64 * 64]), "poison o_mn")?;
        ck(m.wgmma_rs_chain(&s, cfg(128), &md, &mut okd, &mut omd), "launch wgmma_rs_chain")?;
        let p: Vec<f32> = (0..64 * 64)
            .map(|e| {
                let s = (0..64).map(|x| q[(e / 64) * 64 + x] * k[(e % 64) * 64 + x]).sum::<f32>();
                bf16::from_f32(s * 0.25).to_f32()
            })
            .collect();
        let want_k: Vec<f32> =
            (0..64 * 64).map(|e| (0..64).map(|j| p[(e / 64) * 64 + j] * c[(e % 64) * 64 + j]).sum::<f32>()).collect();
        let want_mn: Vec<f32> =
            (0..64 * 64).map(|e| (0..64).map(|j| p[(e / 64) * 64 + j] * v[j * 64 + e % 64]).sum::<f32>()).collect();
        close("P·Cᵀ (RS, B K-major)", &ck(okd.to_host_vec(&s), "copy o_k back")?, &want_k)?;
        close("P·V (RS, B N-major)", &ck(omd.to_host_vec(&s), "copy o_mn back")?, &want_mn)
    });

    report.check("tma_wgmma_m64n128k64_bf16_b_n_major", || {
        let a: Vec<f32> = (0..64 * 64).map(|_| small(&mut rng)).collect();
        let b: Vec<f32> = (0..64 * 128).map(|_| small(&mut rng)).collect();
        let (ab, bb): (Vec<bf16>, Vec<bf16>) =
            (a.iter().map(|&x| bf16::from_f32(x)).collect(), b.iter().map(|&x| bf16::from_f32(x)).collect());
        let (ad, bd) =
            (ck(DeviceBuffer::from_host(&s, &ab), "copy a")?, ck(DeviceBuffer::from_host(&s, &bb), "copy b")?);
        let a_map = TensorMap::tiled_2d(ad.as_device_ptr(), TmaElement::Bf16, 64, 64, 64, 64, TmaSwizzle::B128);
        // B: 64 rows (k) of 128 columns (n), N contiguous; boxes of 64 k rows × 64 n.
        let b_map = TensorMap::tiled_2d(bd.as_device_ptr(), TmaElement::Bf16, 64, 128, 64, 64, TmaSwizzle::B128);
        let maps = [ck(a_map, "encode A's map")?, ck(b_map, "encode B's map")?];
        let md = ck(DeviceBuffer::from_host(&s, &maps), "copy maps")?;
        let mut dd = ck(DeviceBuffer::from_host(&s, &vec![f32::NAN; 64 * 128]), "poison d")?;
        ck(m.wgmma_mn_b(&s, cfg(128), &md, &mut dd), "launch wgmma_mn_b")?;
        let want: Vec<f32> =
            (0..64 * 128).map(|e| (0..64).map(|k| a[(e / 128) * 64 + k] * b[k * 128 + e % 128]).sum::<f32>()).collect();
        close("wgmma_mn_b", &ck(dd.to_host_vec(&s), "copy d back")?, &want)
    });

    // Halves in -2..=2 (exact in e4m3): products are quarters, sums of 128 below 2^9, exact in
    // any accumulator keeping 11 significant bits.
    report.check("tma_wgmma_m64n64k128_e4m3", || {
        let a: Vec<f32> = (0..64 * 128).map(|_| ((rng.next_u32() % 9) as i32 - 4) as f32 / 2.0).collect();
        let b: Vec<f32> = (0..64 * 128).map(|_| ((rng.next_u32() % 9) as i32 - 4) as f32 / 2.0).collect();
        let (a8, b8): (Vec<E4M3>, Vec<E4M3>) =
            (a.iter().map(|&x| E4M3::from_f32(x)).collect(), b.iter().map(|&x| E4M3::from_f32(x)).collect());
        if let Some(i) = (0..a.len()).find(|&i| a8[i].to_f32() != a[i] || b8[i].to_f32() != b[i]) {
            return Err(format!("input {i} is not exact in e4m3: {} {}", a[i], b[i]));
        }
        let (ad, bd) =
            (ck(DeviceBuffer::from_host(&s, &a8), "copy a")?, ck(DeviceBuffer::from_host(&s, &b8), "copy b")?);
        let map = |buf: &DeviceBuffer<E4M3>| {
            TensorMap::tiled_2d(buf.as_device_ptr(), TmaElement::U8, 64, 128, 64, 128, TmaSwizzle::B128)
        };
        let maps = [ck(map(&ad), "encode A's map")?, ck(map(&bd), "encode B's map")?];
        let md = ck(DeviceBuffer::from_host(&s, &maps), "copy maps")?;
        let mut dd = ck(DeviceBuffer::from_host(&s, &vec![f32::NAN; 64 * 64]), "poison d")?;
        ck(m.wgmma_fp8(&s, cfg(128), &md, &mut dd), "launch wgmma_fp8")?;
        let want: Vec<f32> = (0..64 * 64)
            .map(|e| (0..128).map(|k| a[(e / 64) * 128 + k] * b[(e % 64) * 128 + k]).sum::<f32>())
            .collect();
        close("wgmma_fp8", &ck(dd.to_host_vec(&s), "copy d back")?, &want)
    });

    report.check("tma_3d_box_copy_grid_constant_maps", || {
        // Extents that no box divides: every edge has partial boxes.
        let [d, r, c] = [6usize, 20, 40];
        let [bd, br, bc] = kernels::BOX3;
        let src: Vec<f32> = (0..d * r * c).map(|_| rng.next_u32() as f32).collect();
        let sd = ck(DeviceBuffer::from_host(&s, &src), "copy src")?;
        let dd = ck(DeviceBuffer::from_host(&s, &vec![f32::NAN; d * r * c]), "poison dst")?;
        let map = |buf: &DeviceBuffer<f32>| {
            TensorMap::tiled_3d(
                buf.as_device_ptr(),
                TmaElement::F32,
                [d as u64, r as u64, c as u64],
                [bd as u32, br as u32, bc as u32],
                TmaSwizzle::None,
            )
        };
        let (src_map, dst_map) = (ck(map(&sd), "encode src's map")?, ck(map(&dd), "encode dst's map")?);
        let grid = (c.div_ceil(bc), r.div_ceil(br), d.div_ceil(bd));
        let blocks = grid.0 * grid.1 * grid.2;
        let mut td = ck(DeviceBuffer::from_host(&s, &vec![f32::NAN; blocks * kernels::BOX3_LEN]), "poison tiles")?;
        let config = LaunchConfig {
            grid_dim: (grid.0 as u32, grid.1 as u32, grid.2 as u32),
            block_dim: (128, 1, 1),
            shared_mem_bytes: 0,
        };
        ck(m.tma_3d_copy(&s, config, src_map, dst_map, &mut td), "launch tma_3d_copy")?;
        let tiles = ck(td.to_host_vec(&s), "copy tiles back")?;
        for (block, tile) in tiles.chunks(kernels::BOX3_LEN).enumerate() {
            let (bx, by, bz) = (block % grid.0, block / grid.0 % grid.1, block / (grid.0 * grid.1));
            for (i, &got) in tile.iter().enumerate() {
                let (z, y, x) = (bz * bd + i / (br * bc), by * br + i / bc % br, bx * bc + i % bc);
                let want = if z < d && y < r && x < c { src[(z * r + y) * c + x] } else { 0.0 };
                if got.to_bits() != want.to_bits() {
                    return Err(format!(
                        "block ({bx},{by},{bz}) shared element {i} (x {x}, y {y}, z {z}): {got}, want {want}"
                    ));
                }
            }
        }
        let dst = ck(dd.to_host_vec(&s), "copy dst back")?;
        close("tma store_3d", &dst, &src)
    });

    report.check("tma_multicast_2_block_cluster", || {
        let clusters = 66;
        let rows = clusters * kernels::MC_ROWS;
        let src: Vec<f32> = (0..rows * kernels::MC_COLS).map(|_| rng.next_u32() as f32).collect();
        let sd = ck(DeviceBuffer::from_host(&s, &src), "copy src")?;
        let map = TensorMap::tiled_2d(
            sd.as_device_ptr(),
            TmaElement::F32,
            rows as u64,
            kernels::MC_COLS as u64,
            (kernels::MC_ROWS / 2) as u32,
            kernels::MC_COLS as u32,
            TmaSwizzle::None,
        );
        let map = ck(map, "encode the map")?;
        let tile = kernels::MC_ROWS * kernels::MC_COLS;
        let mut od = ck(DeviceBuffer::from_host(&s, &vec![f32::NAN; 2 * clusters * tile]), "poison out")?;
        let config =
            LaunchConfig { grid_dim: (2 * clusters as u32, 1, 1), block_dim: (128, 1, 1), shared_mem_bytes: 0 };
        ck(m.tma_multicast(&s, config, map, &mut od), "launch tma_multicast")?;
        let out = ck(od.to_host_vec(&s), "copy out back")?;
        for (block, got) in out.chunks(tile).enumerate() {
            let cluster = block / 2;
            let want = &src[cluster * tile..(cluster + 1) * tile];
            if let Some(i) = (0..tile).find(|&i| got[i].to_bits() != want[i].to_bits()) {
                let from = if i / kernels::MC_COLS < kernels::MC_ROWS / 2 { "rank 0" } else { "rank 1" };
                return Err(format!(
                    "block {block} (rank {}) element {i}, multicast by {from}: {}, want {}",
                    block % 2,
                    got[i],
                    want[i]
                ));
            }
        }
        Ok(())
    });

    report.check("tma_map_array_by_value", || {
        let tile = kernels::MC_ROWS * kernels::MC_COLS;
        let src: Vec<f32> = (0..3 * tile).map(|_| rng.next_u32() as f32).collect();
        let bufs = [
            ck(DeviceBuffer::from_host(&s, &src[..tile]), "copy src 0")?,
            ck(DeviceBuffer::from_host(&s, &src[tile..2 * tile]), "copy src 1")?,
            ck(DeviceBuffer::from_host(&s, &src[2 * tile..]), "copy src 2")?,
        ];
        let map = |buf: &DeviceBuffer<f32>| {
            let (rows, cols) = (kernels::MC_ROWS, kernels::MC_COLS);
            TensorMap::tiled_2d(
                buf.as_device_ptr(),
                TmaElement::F32,
                rows as u64,
                cols as u64,
                rows as u32,
                cols as u32,
                TmaSwizzle::None,
            )
        };
        let maps = [
            ck(map(&bufs[0]), "encode map 0")?,
            ck(map(&bufs[1]), "encode map 1")?,
            ck(map(&bufs[2]), "encode map 2")?,
        ];
        let mut od = ck(DeviceBuffer::from_host(&s, &vec![f32::NAN; 3 * tile]), "poison out")?;
        let config = LaunchConfig { grid_dim: (3, 1, 1), block_dim: (128, 1, 1), shared_mem_bytes: 0 };
        ck(m.tma_map_array(&s, config, maps, &mut od), "launch tma_map_array")?;
        close("tma_map_array", &ck(od.to_host_vec(&s), "copy out back")?, &src)
    });

    report.finish()
}
