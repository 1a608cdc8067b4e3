//! The Rust side of the benchmark: the same algorithms and launch shapes as `bench/cuda/*.cu`,
//! written the way a user of `cuda_device` would write them (safe slices, `SharedMemory` statics
//! and, where indexing reads better, `static mut` `SharedArray`s, vector elements, `#[unroll]`;
//! `unsafe` only for shared-memory access and `cp.async`).
// Register arrays indexed by unrolled loop counters, as the CUDA twins write them.
#![allow(clippy::needless_range_loop)]

use cuda_device::half::Bf16x2;
use cuda_device::vector::{F32x4, SharedLanes, U32x4};
use cuda_device::{
    DisjointSlice, SharedArray, SharedMemory, atomic, cuda_module, fast_math, kernel, launch_bounds, sync_threads,
    thread, warp,
};

/// Edge of the transpose and SGEMM tiles.
pub const TILE: usize = 32;
/// Rows of a transpose tile that one block of 32 x 8 threads moves per step.
pub const BLOCK_ROWS: usize = 8;
/// Row pitch of the transpose tile in shared memory (one padding column: no bank conflicts).
const PITCH: usize = TILE + 1;
/// Columns of the softmax / layernorm rows: 256 threads × 4 elements.
pub const ROW: usize = 1024;
/// Bodies per shared-memory tile (and threads per block) of the n-body kernel.
pub const NBODY_TILE: usize = 128;
/// Elements per block of the scan: 256 threads × one `U32x4` each.
pub const SCAN_TILE: usize = 1024;
/// Register-blocked SGEMM: 128 × 128 block tile, 8-deep k tile, 8 × 8 outputs per thread.
pub const BM: usize = 128;
pub const BK: usize = 8;
/// Attention: head dimension, and query rows and keys per tile (one block of 16 x 16 threads
/// per 32 query rows; each thread 2 rows x 2 keys of a score tile, 2 rows x 4 columns of the output).
pub const ATT_D: usize = 64;
pub const ATT_TILE: usize = 32;
/// Row pitch of the query and key tiles in shared memory (one padding column: no bank conflicts).
const ATT_PITCH: usize = ATT_D + 1;
// The bf16 GEMMs (gemm_mma, gemm_wgmma) are the examples' own kernels (examples/gemm-mma,
// examples/gemm-wgmma-tma), which the bench depends on: it times the kernel they verify.

/// The sum of `v` over a block of 256 threads (all of them must call it), in every thread.
#[inline(always)]
fn block_sum_256(v: f32) -> f32 {
    static PARTS: SharedMemory<f32, 8> = SharedMemory::UNINIT;
    let t = thread::threadIdx_x() as usize;
    let v = warp::reduce_sum(v);
    sync_threads(); // the previous use of PARTS is over
    if t.is_multiple_of(32) {
        // SAFETY: one writer per slot between the barriers.
        unsafe { PARTS.write(t / 32, v) };
    }
    sync_threads();
    let mut total = 0.0;
    for w in 0..8 {
        // SAFETY: read after the barrier; written before it.
        total += unsafe { PARTS.read(w) };
    }
    total
}

/// The maximum of `v` over a block of 256 threads, in every thread.
#[inline(always)]
fn block_max_256(v: f32) -> f32 {
    static PARTS: SharedMemory<f32, 8> = SharedMemory::UNINIT;
    let t = thread::threadIdx_x() as usize;
    let v = warp::reduce_max(v);
    sync_threads();
    if t.is_multiple_of(32) {
        // SAFETY: one writer per slot between the barriers.
        unsafe { PARTS.write(t / 32, v) };
    }
    sync_threads();
    // SAFETY: read after the barrier.
    let mut m = unsafe { PARTS.read(0) };
    for w in 1..8 {
        // SAFETY: as above.
        let o = unsafe { PARTS.read(w) };
        if o > m {
            m = o;
        }
    }
    m
}

/// Exclusive prefix sum of `v` over a block of 256 threads; also returns the block's total.
#[inline(always)]
fn block_exclusive_scan_256(v: u32) -> (u32, u32) {
    static PARTS: SharedMemory<u32, 8> = SharedMemory::UNINIT;
    let t = thread::threadIdx_x() as usize;
    let inclusive = warp::inclusive_scan_sum(v);
    sync_threads();
    if t % 32 == 31 {
        // SAFETY: one writer per slot between the barriers.
        unsafe { PARTS.write(t / 32, inclusive) };
    }
    sync_threads();
    let (mut before, mut total) = (0u32, 0u32);
    for w in 0..8 {
        // SAFETY: read after the barrier.
        let p = unsafe { PARTS.read(w) };
        if w < t / 32 {
            before = before.wrapping_add(p);
        }
        total = total.wrapping_add(p);
    }
    (before.wrapping_add(inclusive).wrapping_sub(v), total)
}

#[cuda_module]
#[allow(clippy::module_inception)] // `kernels::kernels::load`, as `#[cuda_module]` users write it
pub mod kernels {
    use super::*;

    /// `c = a + b`, one element per thread (the seed's vecadd).
    #[kernel]
    pub fn vecadd(a: &[f32], b: &[f32], mut c: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(c_elem) = c.get_mut(idx) {
            *c_elem = a[i] + b[i];
        }
    }

    /// `y = a * x + y` in place, one element per thread (spelled as the CUDA C++ twin spells it).
    #[kernel]
    #[allow(clippy::assign_op_pattern)]
    pub fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
        let i = thread::index_1d().get();
        if i < y.len() {
            y[i] = a * x[i] + y[i];
        }
    }

    /// Per-block sums: grid-stride accumulation in a register, a shuffle butterfly per warp, the
    /// 8 warp sums through shared memory, warp 0 reduces them. 256 threads per block.
    #[kernel]
    #[launch_bounds(256)]
    pub fn block_sum(x: &[f32], partial: &mut [f32]) {
        static WARP_SUMS: SharedMemory<f32, 8> = SharedMemory::UNINIT;
        let tid = thread::threadIdx_x() as usize;
        let mut acc = 0.0f32;
        for i in thread::grid_stride(x.len()) {
            acc += x[i.get()];
        }
        let acc = warp::reduce_sum(acc);
        let (lane, warp_idx) = (tid % 32, tid / 32);
        if lane == 0 {
            // SAFETY: lane 0 of each warp writes its own slot before the barrier.
            unsafe { WARP_SUMS.write(warp_idx, acc) };
        }
        sync_threads();
        if warp_idx == 0 {
            // SAFETY: read after the barrier; nothing writes the slots any more.
            let v = if lane < 8 { unsafe { WARP_SUMS.read(lane) } } else { 0.0 };
            let v = warp::reduce_sum(v);
            if lane == 0 {
                partial[thread::blockIdx_x() as usize] = v;
            }
        }
    }

    /// Transpose through a 32 x 33 shared tile; blocks of 32 x 8 threads, 4 elements each.
    /// `input` is `height x width`, `out` is `width x height`, both row-major.
    #[kernel]
    #[launch_bounds(256)]
    pub fn transpose(input: &[f32], out: &mut [f32], width: u32, height: u32) {
        // Indexed: a `static mut` `SharedArray` (the form of CUDA C++ and NVIDIA's cuda-oxide).
        static mut TILE_S: SharedArray<f32, { TILE * PITCH }> = SharedArray::UNINIT;
        let (w, h) = (width as usize, height as usize);
        let (tx, ty) = (thread::threadIdx_x() as usize, thread::threadIdx_y() as usize);
        let (bx, by) = (thread::blockIdx_x() as usize, thread::blockIdx_y() as usize);
        let x = bx * TILE + tx;
        let y = by * TILE + ty;
        let mut j = 0;
        while j < TILE {
            if x < w && y + j < h {
                // SAFETY: each thread writes its own slots before the barrier.
                unsafe { TILE_S[(ty + j) * PITCH + tx] = input[(y + j) * w + x] };
            }
            j += BLOCK_ROWS;
        }
        sync_threads();
        let x = by * TILE + tx;
        let y = bx * TILE + ty;
        let mut j = 0;
        while j < TILE {
            if x < h && y + j < w {
                // SAFETY: the tile is only read after the barrier.
                out[(y + j) * h + x] = unsafe { TILE_S[tx * PITCH + ty + j] };
            }
            j += BLOCK_ROWS;
        }
    }

    /// 256-bin histogram of the bytes of `words`: 4 shared-memory atomics per word, then one
    /// global atomic per non-empty bin. 256 threads per block, grid-stride over the words.
    #[kernel]
    #[launch_bounds(256)]
    pub fn histogram(words: &[u32], bins: &mut [u32]) {
        static COUNTS: SharedMemory<u32, 256> = SharedMemory::UNINIT;
        let tid = thread::threadIdx_x() as usize;
        // SAFETY: each thread zeroes its own bin before the barrier.
        unsafe { COUNTS.write(tid, 0) };
        sync_threads();
        let counts = COUNTS.as_mut_ptr();
        for i in thread::grid_stride(words.len()) {
            let w = words[i.get()];
            // SAFETY: every index is < 256; all accesses between the barriers are atomic.
            unsafe {
                atomic::block::add(counts.add((w & 0xff) as usize), 1u32);
                atomic::block::add(counts.add(((w >> 8) & 0xff) as usize), 1u32);
                atomic::block::add(counts.add(((w >> 16) & 0xff) as usize), 1u32);
                atomic::block::add(counts.add((w >> 24) as usize), 1u32);
            }
        }
        sync_threads();
        // SAFETY: read after the barrier.
        let c = unsafe { COUNTS.read(tid) };
        if c != 0 {
            // SAFETY: `bins` has 256 elements and every thread of the grid updates it atomically.
            unsafe { atomic::add(bins.as_mut_ptr().add(tid), c) };
        }
    }

    /// `c = a * b` for `n x n` row-major matrices (`n` a multiple of 32): blocks of 32 x 32
    /// threads, one element of `c` each, 32 x 32 tiles of `a` and `b` in shared memory.
    #[kernel]
    #[launch_bounds(1024)]
    pub fn sgemm(a: &[f32], b: &[f32], c: &mut [f32], n: u32) {
        static mut AS: SharedArray<f32, { TILE * TILE }> = SharedArray::UNINIT;
        static mut BS: SharedArray<f32, { TILE * TILE }> = SharedArray::UNINIT;
        let n = n as usize;
        let (tx, ty) = (thread::threadIdx_x() as usize, thread::threadIdx_y() as usize);
        let row = thread::blockIdx_y() as usize * TILE + ty;
        let col = thread::blockIdx_x() as usize * TILE + tx;
        let mut acc = 0.0f32;
        let mut t = 0;
        while t < n {
            // SAFETY: each thread writes its own slots; the tiles are read after the barrier.
            unsafe {
                AS[ty * TILE + tx] = a[row * n + t + tx];
                BS[ty * TILE + tx] = b[(t + ty) * n + col];
            }
            sync_threads();
            #[unroll]
            for k in 0..TILE {
                // SAFETY: no thread writes the tiles between these two barriers.
                acc += unsafe { AS[ty * TILE + k] * BS[k * TILE + tx] };
            }
            sync_threads();
            t += TILE;
        }
        c[row * n + col] = acc;
    }

    /// `c = a + b` on `F32x4` elements: one 16-byte load of each input and one 16-byte store
    /// per thread (`float4` in the twin).
    #[kernel]
    pub fn vecadd_v4(a: &[F32x4], b: &[F32x4], mut c: DisjointSlice<F32x4>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(c_elem) = c.get_mut(idx) {
            *c_elem = a[i] + b[i];
        }
    }

    /// `block_sum` reading `F32x4` elements in its grid-stride loop.
    #[kernel]
    #[launch_bounds(256)]
    pub fn block_sum_v4(x: &[F32x4], partial: &mut [f32]) {
        let mut acc = 0.0f32;
        for i in thread::grid_stride(x.len()) {
            let v = x[i.get()];
            acc += (v.x() + v.y()) + (v.z() + v.w());
        }
        let total = block_sum_256(acc);
        if thread::threadIdx_x() == 0 {
            partial[thread::blockIdx_x() as usize] = total;
        }
    }

    /// Softmax of each row of a `rows × ROW` matrix: one block of 256 threads per row, four
    /// elements per thread kept in registers (max, then sum of exponentials, then scale).
    #[kernel]
    #[launch_bounds(256)]
    pub fn softmax(x: &[f32], y: &mut [f32]) {
        let t = thread::threadIdx_x() as usize;
        let base = thread::blockIdx_x() as usize * ROW;
        let mut v = [0.0f32; 4];
        #[unroll]
        for j in 0..4 {
            v[j] = x[base + t + 256 * j];
        }
        let mut m = v[0];
        #[unroll]
        for j in 1..4 {
            if v[j] > m {
                m = v[j];
            }
        }
        let m = block_max_256(m);
        let mut s = 0.0f32;
        #[unroll]
        for j in 0..4 {
            v[j] = (v[j] - m).exp();
            s += v[j];
        }
        let s = block_sum_256(s);
        #[unroll]
        for j in 0..4 {
            y[base + t + 256 * j] = v[j] / s;
        }
    }

    /// Layer normalisation of each row of a `rows × ROW` matrix with per-column `gamma`, `beta`:
    /// one block per row, mean and variance from the values held in registers.
    #[kernel]
    #[launch_bounds(256)]
    pub fn layernorm(x: &[f32], gamma: &[f32], beta: &[f32], y: &mut [f32]) {
        let t = thread::threadIdx_x() as usize;
        let base = thread::blockIdx_x() as usize * ROW;
        let mut v = [0.0f32; 4];
        let mut s = 0.0f32;
        #[unroll]
        for j in 0..4 {
            v[j] = x[base + t + 256 * j];
            s += v[j];
        }
        let mean = block_sum_256(s) / ROW as f32;
        let mut q = 0.0f32;
        #[unroll]
        for j in 0..4 {
            v[j] -= mean;
            q += v[j] * v[j];
        }
        let var = block_sum_256(q) / ROW as f32;
        let rstd = 1.0 / (var + 1e-5).sqrt();
        #[unroll]
        for j in 0..4 {
            let c = t + 256 * j;
            y[base + c] = v[j] * rstd * gamma[c] + beta[c];
        }
    }

    /// 5-point stencil on an `n × n` f64 grid: interior points get
    /// `c0 * centre + c1 * (north + south + west + east)`, the border is copied.
    /// 2D launch of 32 × 8 blocks, one point per thread.
    #[kernel]
    pub fn stencil5(input: &[f64], mut out: DisjointSlice<f64>, n: u32, c0: f64, c1: f64) {
        let n = n as usize;
        let p = thread::index_2d_xy();
        let (x, y) = (p.x(), p.y());
        // SAFETY: `n` is a kernel parameter, the same in every thread.
        let Some(idx) = (unsafe { p.to_linear(n) }) else { return };
        let Some(o) = out.get_mut(idx) else { return };
        let c = idx.get();
        *o = if x == 0 || y == 0 || x == n - 1 || y == n - 1 {
            input[c]
        } else {
            c0 * input[c] + c1 * (input[c - n] + input[c + n] + input[c - 1] + input[c + 1])
        };
    }

    /// All-pairs gravitational accelerations: bodies as `F32x4 (x, y, z, mass)`, tiles of
    /// `NBODY_TILE` bodies through shared memory, `1 / sqrt(d2)` as `rsqrt.approx` (fast math
    /// for this kernel only; the twin calls `rsqrtf`).
    #[kernel]
    #[launch_bounds(128)]
    #[fast_math]
    pub fn nbody(pos: &[F32x4], mut acc: DisjointSlice<F32x4>, eps2: f32) {
        static TILE_P: SharedMemory<F32x4, NBODY_TILE> = SharedMemory::UNINIT;
        let idx = thread::index_1d();
        let t = thread::threadIdx_x() as usize;
        let me = pos[idx.get()];
        let (mut ax, mut ay, mut az) = (0.0f32, 0.0f32, 0.0f32);
        let mut tile = 0;
        while tile < pos.len() {
            // SAFETY: each thread writes its own slot; the tile is read after the barrier.
            unsafe { TILE_P.write(t, pos[tile + t]) };
            sync_threads();
            #[unroll(8)]
            for j in 0..NBODY_TILE {
                // SAFETY: no thread writes the tile between the two barriers.
                let q = unsafe { TILE_P.read(j) };
                let (dx, dy, dz) = (q.x() - me.x(), q.y() - me.y(), q.z() - me.z());
                let d2 = dx * dx + dy * dy + dz * dz + eps2;
                let inv = 1.0 / d2.sqrt();
                let s = q.w() * inv * inv * inv;
                ax += dx * s;
                ay += dy * s;
                az += dz * s;
            }
            sync_threads();
            tile += NBODY_TILE;
        }
        if let Some(a) = acc.get_mut(idx) {
            *a = F32x4::new([ax, ay, az, 0.0]);
        }
    }

    /// Scan, pass 1: the sum of each block's `SCAN_TILE` elements.
    #[kernel]
    #[launch_bounds(256)]
    pub fn scan_reduce(x: &[U32x4], sums: &mut [u32]) {
        let b = thread::blockIdx_x() as usize;
        let t = thread::threadIdx_x() as usize;
        let v = x[b * 256 + t];
        let mine = v.x().wrapping_add(v.y()).wrapping_add(v.z()).wrapping_add(v.w());
        let (_, total) = block_exclusive_scan_256(mine);
        if t == 0 {
            sums[b] = total;
        }
    }

    /// Scan, pass 2 (one block of 256 threads): the block sums become exclusive prefixes, in
    /// chunks of 256 × `per_thread` consecutive sums.
    #[kernel]
    #[launch_bounds(256)]
    pub fn scan_offsets(sums: &mut [u32], per_thread: u32) {
        let t = thread::threadIdx_x() as usize;
        let per = per_thread as usize;
        let mut carry = 0u32;
        let mut chunk = 0;
        while chunk < sums.len() {
            let start = chunk + t * per;
            let mut mine = 0u32;
            #[unroll(16)]
            for k in 0..per {
                if start + k < sums.len() {
                    mine = mine.wrapping_add(sums[start + k]);
                }
            }
            let (before, total) = block_exclusive_scan_256(mine);
            let mut run = carry.wrapping_add(before);
            #[unroll(16)]
            for k in 0..per {
                if start + k < sums.len() {
                    let s = sums[start + k];
                    sums[start + k] = run;
                    run = run.wrapping_add(s);
                }
            }
            carry = carry.wrapping_add(total);
            chunk += 256 * per;
        }
    }

    /// Scan, pass 3: the inclusive scan of each block's elements, plus the block's offset.
    #[kernel]
    #[launch_bounds(256)]
    pub fn scan_tile(x: &[U32x4], offsets: &[u32], mut y: DisjointSlice<U32x4>) {
        let idx = thread::index_1d();
        let b = thread::blockIdx_x() as usize;
        let v = x[idx.get()];
        let s1 = v.x().wrapping_add(v.y());
        let s2 = s1.wrapping_add(v.z());
        let s3 = s2.wrapping_add(v.w());
        let (before, _) = block_exclusive_scan_256(s3);
        let off = offsets[b].wrapping_add(before);
        if let Some(o) = y.get_mut(idx) {
            *o =
                U32x4::new([off.wrapping_add(v.x()), off.wrapping_add(s1), off.wrapping_add(s2), off.wrapping_add(s3)]);
        }
    }

    /// `y = a * x + y` on bf16 pairs: one `fma.rn.bf16x2` per thread.
    #[kernel]
    pub fn axpy_bf16(a: Bf16x2, x: &[Bf16x2], y: &mut [Bf16x2]) {
        let i = thread::index_1d().get();
        if i < y.len() {
            y[i] = a.mul_add(x[i], y[i]);
        }
    }

    /// `c = a * b`, `m × k` times `k × n`, row-major, all multiples of 128 (`k` of 8): 128 × 128
    /// block tiles, 8-deep k tiles, 256 threads with 8 × 8 outputs each (two 4 × 4 quadrants
    /// 64 apart, so the shared-memory reads are conflict-free), `F32x4` loads, and double-buffered
    /// shared memory: the next k tile is loaded into registers while this one is multiplied.
    #[kernel]
    #[launch_bounds(256, 2)]
    pub fn sgemm128(a: &[F32x4], b: &[F32x4], c: &mut [F32x4], m: u32, n: u32, k: u32) {
        // A tiles transposed (`[buffer][kk][row]`), B tiles as they are (`[buffer][kk][col]`).
        static AS: SharedMemory<F32x4, { 2 * BK * BM / 4 }> = SharedMemory::UNINIT;
        static BS: SharedMemory<F32x4, { 2 * BK * BM / 4 }> = SharedMemory::UNINIT;
        let (n, k) = (n as usize, k as usize);
        let _ = m;
        let tid = thread::threadIdx_x() as usize;
        let (tx, ty) = (tid % 16, tid / 16);
        let (row0, col0) = (thread::blockIdx_y() as usize * BM, thread::blockIdx_x() as usize * BM);
        // This thread's loads: A row `tid / 2`, k columns `(tid % 2) * 4 ..`; B row `tid / 32`,
        // columns `(tid % 32) * 4 ..`.
        let (a_row, a_k) = (tid / 2, (tid % 2) * 4);
        let (b_row, b_col) = (tid / 32, (tid % 32) * 4);
        let (a_base, b_base) = (((row0 + a_row) * k + a_k) / 4, (b_row * n + col0 + b_col) / 4);
        let a_at = |kt: usize| a[a_base + kt / 4];
        let b_at = |kt: usize| b[b_base + kt * n / 4];
        let store = |buf: usize, av: F32x4, bv: F32x4| {
            #[unroll]
            for q in 0..4 {
                // SAFETY: every thread writes its own lanes of buffer `buf`, which no thread
                // reads until the barrier after this store.
                unsafe { AS.write_lane(buf * BK * BM + (a_k + q) * BM + a_row, av[q]) };
            }
            // SAFETY: as above.
            unsafe { BS.write(buf * BK * BM / 4 + b_row * BM / 4 + b_col / 4, bv) };
        };
        let mut acc = [[0.0f32; 8]; 8];
        store(0, a_at(0), b_at(0));
        sync_threads();
        let mut kt = 0;
        let mut buf = 0;
        while kt < k {
            let next = kt + BK;
            let (mut an, mut bn) = (F32x4::splat(0.0), F32x4::splat(0.0));
            if next < k {
                an = a_at(next);
                bn = b_at(next);
            }
            #[unroll]
            for kk in 0..BK {
                let at = (buf * BK + kk) * BM / 4;
                // SAFETY: buffer `buf` is complete (barrier) and nobody writes it now.
                let (a0, a1) = unsafe { (AS.read(at + ty), AS.read(at + 16 + ty)) };
                let (b0, b1) = unsafe { (BS.read(at + tx), BS.read(at + 16 + tx)) };
                let av = [a0.x(), a0.y(), a0.z(), a0.w(), a1.x(), a1.y(), a1.z(), a1.w()];
                let bv = [b0.x(), b0.y(), b0.z(), b0.w(), b1.x(), b1.y(), b1.z(), b1.w()];
                #[unroll]
                for i in 0..8 {
                    #[unroll]
                    for j in 0..8 {
                        acc[i][j] += av[i] * bv[j];
                    }
                }
            }
            if next < k {
                store(buf ^ 1, an, bn);
            }
            sync_threads();
            buf ^= 1;
            kt = next;
        }
        #[unroll]
        for i in 0..8 {
            let row = row0 + (i / 4) * 64 + ty * 4 + i % 4;
            #[unroll]
            for half in 0..2 {
                let col = col0 + half * 64 + tx * 4;
                let v =
                    F32x4::new([acc[i][4 * half], acc[i][4 * half + 1], acc[i][4 * half + 2], acc[i][4 * half + 3]]);
                c[(row * n + col) / 4] = v;
            }
        }
    }

    /// Scaled dot-product attention, forward, f32: FlashAttention-2's recurrence without tensor
    /// cores. A block of 16 x 16 threads takes 32 query rows of one (batch, head); key and value
    /// tiles of 32 rows pass through shared memory; each thread computes 2 x 2 scores, the rows'
    /// running maximum and sum go through the 16 threads of a row (shuffles), probabilities
    /// through shared memory into the 2 x 4 outputs each thread keeps in registers, rescaled
    /// when the maximum grows (online softmax). `lse` gets each row's log-sum-exp, which a
    /// backward pass needs. `q`, `k`, `v`, `out`: `[bh][seq][ATT_D]`; grid `(seq / 32, bh)`.
    /// Every loop but the one over key tiles is unrolled, in both versions (`#pragma unroll`):
    /// its register arrays then stay in registers.
    #[kernel]
    #[launch_bounds(256)]
    #[allow(clippy::too_many_arguments)] // the launch's arguments, as the CUDA C++ twin takes them
    pub fn attention(
        q: &[f32],
        k: &[f32],
        v: &[f32],
        out: &mut [f32],
        lse: &mut [f32],
        seq: u32,
        scale: f32,
        causal: u32,
    ) {
        static QS: SharedMemory<f32, { ATT_TILE * ATT_PITCH }> = SharedMemory::UNINIT;
        static KS: SharedMemory<f32, { ATT_TILE * ATT_PITCH }> = SharedMemory::UNINIT;
        static VS: SharedMemory<F32x4, { ATT_TILE * ATT_D / 4 }> = SharedMemory::UNINIT;
        static PS: SharedMemory<f32, { ATT_TILE * (ATT_TILE + 1) }> = SharedMemory::UNINIT;
        let seq = seq as usize;
        let (tx, ty) = (thread::threadIdx_x() as usize, thread::threadIdx_y() as usize);
        let tid = ty * 16 + tx;
        let q_tile = thread::blockIdx_x() as usize;
        let head = thread::blockIdx_y() as usize * seq * ATT_D;
        // The query tile, scaled (each thread 8 of its 32 x 64 values; consecutive threads read
        // consecutive addresses).
        #[unroll]
        for i in 0..8 {
            let e = i * 256 + tid;
            let (r, d) = (e / ATT_D, e % ATT_D);
            // SAFETY: each element is written by one thread and read after the barrier.
            unsafe { QS.write(r * ATT_PITCH + d, q[head + (q_tile * ATT_TILE + r) * ATT_D + d] * scale) };
        }
        let mut o = [[0.0f32; 4]; 2];
        let mut m = [f32::NEG_INFINITY; 2];
        let mut l = [0.0f32; 2];
        let tiles = if causal != 0 { q_tile + 1 } else { seq / ATT_TILE };
        for kt in 0..tiles {
            #[unroll]
            for i in 0..8 {
                let e = i * 256 + tid;
                let (r, d) = (e / ATT_D, e % ATT_D);
                let at = head + (kt * ATT_TILE + r) * ATT_D + d;
                // SAFETY: as the query tile; the barrier at the end of the last tile ended its reads.
                unsafe { KS.write(r * ATT_PITCH + d, k[at]) };
            }
            #[unroll]
            for i in 0..2 {
                let e = i * 256 + tid;
                let (r, c) = (e / (ATT_D / 4), e % (ATT_D / 4));
                let at = head + (kt * ATT_TILE + r) * ATT_D + 4 * c;
                let row = F32x4::new([v[at], v[at + 1], v[at + 2], v[at + 3]]);
                // SAFETY: as the key tile.
                unsafe { VS.write(r * (ATT_D / 4) + c, row) };
            }
            sync_threads();
            // Scores of rows 2ty, 2ty + 1 against keys 2tx, 2tx + 1.
            let mut s = [[0.0f32; 2]; 2];
            #[unroll]
            for d in 0..ATT_D {
                // SAFETY: the tiles are complete (barrier) and nobody writes them now.
                let (q0, q1) = unsafe { (QS.read(2 * ty * ATT_PITCH + d), QS.read((2 * ty + 1) * ATT_PITCH + d)) };
                let (k0, k1) = unsafe { (KS.read(2 * tx * ATT_PITCH + d), KS.read((2 * tx + 1) * ATT_PITCH + d)) };
                s[0][0] += q0 * k0;
                s[0][1] += q0 * k1;
                s[1][0] += q1 * k0;
                s[1][1] += q1 * k1;
            }
            #[unroll]
            for r in 0..2 {
                if causal != 0 && kt == q_tile {
                    #[unroll]
                    for c in 0..2 {
                        if 2 * tx + c > 2 * ty + r {
                            s[r][c] = f32::NEG_INFINITY;
                        }
                    }
                }
                // The row's maximum and sum over its 16 threads (lanes 16 apart hold other rows).
                let mut tile_max = s[r][0].max(s[r][1]);
                #[unroll]
                for k in 0..4 {
                    tile_max = tile_max.max(warp::shfl_xor_sync(u32::MAX, tile_max, 8 >> k));
                }
                let m_new = m[r].max(tile_max);
                let (p0, p1) = ((s[r][0] - m_new).exp(), (s[r][1] - m_new).exp());
                let mut sum = p0 + p1;
                #[unroll]
                for k in 0..4 {
                    sum += warp::shfl_xor_sync(u32::MAX, sum, 8 >> k);
                }
                let correction = (m[r] - m_new).exp();
                l[r] = l[r] * correction + sum;
                m[r] = m_new;
                #[unroll]
                for c in 0..4 {
                    o[r][c] *= correction;
                }
                // SAFETY: each probability is written by one thread and read after the barrier.
                unsafe {
                    PS.write((2 * ty + r) * (ATT_TILE + 1) + 2 * tx, p0);
                    PS.write((2 * ty + r) * (ATT_TILE + 1) + 2 * tx + 1, p1);
                }
            }
            sync_threads();
            #[unroll]
            for j in 0..ATT_TILE {
                // SAFETY: the probabilities and the value tile are complete (barrier).
                let (p0, p1) =
                    unsafe { (PS.read(2 * ty * (ATT_TILE + 1) + j), PS.read((2 * ty + 1) * (ATT_TILE + 1) + j)) };
                let w = unsafe { VS.read(j * (ATT_D / 4) + tx) };
                #[unroll]
                for c in 0..4 {
                    o[0][c] += p0 * w.to_array()[c];
                    o[1][c] += p1 * w.to_array()[c];
                }
            }
            sync_threads();
        }
        #[unroll]
        for r in 0..2 {
            let row = q_tile * ATT_TILE + 2 * ty + r;
            #[unroll]
            for c in 0..4 {
                out[head + row * ATT_D + 4 * tx + c] = o[r][c] / l[r];
            }
            if tx == 0 {
                lse[thread::blockIdx_y() as usize * seq + row] = m[r] + l[r].ln();
            }
        }
    }
}
