//! The Rust side of the benchmark: the same algorithms and launch shapes as `bench/cuda/*.cu`,
//! written the way a user of `cuda_device` would write them (safe slices, `SharedArray`).

use cuda_device::{DisjointSlice, SharedArray, atomic, cuda_module, kernel, launch_bounds, sync_threads, thread, warp};

/// Edge of the transpose and SGEMM tiles.
pub const TILE: usize = 32;
/// Rows of a transpose tile that one block of 32 x 8 threads moves per step.
pub const BLOCK_ROWS: usize = 8;
/// Row pitch of the transpose tile in shared memory (one padding column: no bank conflicts).
const PITCH: usize = TILE + 1;

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
        static mut WARP_SUMS: SharedArray<f32, 8> = SharedArray::UNINIT;
        let tid = thread::threadIdx_x() as usize;
        let mut acc = 0.0f32;
        for i in thread::grid_stride(x.len()) {
            acc += x[i.get()];
        }
        let acc = warp::reduce_sum(acc);
        let (lane, warp_idx) = (tid % 32, tid / 32);
        if lane == 0 {
            // SAFETY: lane 0 of each warp writes its own slot before the barrier.
            unsafe { WARP_SUMS[warp_idx] = acc };
        }
        sync_threads();
        if warp_idx == 0 {
            // SAFETY: read after the barrier; nothing writes the slots any more.
            let v = if lane < 8 { unsafe { WARP_SUMS[lane] } } else { 0.0 };
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
        static mut COUNTS: SharedArray<u32, 256> = SharedArray::UNINIT;
        let tid = thread::threadIdx_x() as usize;
        // SAFETY: each thread zeroes its own bin before the barrier.
        unsafe { COUNTS[tid] = 0 };
        sync_threads();
        let counts = SharedArray::as_raw_mut_ptr(&raw mut COUNTS);
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
        let c = unsafe { COUNTS[tid] };
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
            for k in 0..TILE {
                // SAFETY: no thread writes the tiles between these two barriers.
                acc += unsafe { AS[ty * TILE + k] * BS[k * TILE + tx] };
            }
            sync_threads();
            t += TILE;
        }
        c[row * n + col] = acc;
    }
}
