//! GPU test: the device API under the names NVIDIA's cuda-oxide uses, on random inputs, each
//! result compared exactly with the CPU: `static mut` shared arrays (indexing, 128-byte
//! alignment) and `DynamicSharedArray` offsets; atomic cells with orderings and scopes,
//! `core::sync::atomic`, and an acquire/release hand-off between warps; warp shorthands
//! (`reduce_sum_f32`, partial-warp reductions in a 48-thread block, `redux.sync`, `match_all_sync`,
//! `elect_sync`, typed shuffles); cooperative groups (tiles of 8/16/32 lanes, coalesced groups,
//! block reductions and scans); `grid::sync` in a cooperative launch; `dp4a`/`dp2a`; volatile
//! accesses; `index_2d_row/col`.
#![feature(f16)]
#![allow(static_mut_refs)]

use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use cuda_device::atomic::{
    AtomicOrdering, BlockAtomicU32, DeviceAtomicF16, DeviceAtomicF32, DeviceAtomicF64, DeviceAtomicI64,
    DeviceAtomicU32, DeviceAtomicU64, SystemAtomicF16, SystemAtomicU64,
};
use cuda_device::cooperative_groups::{
    ThreadGroup, WarpCollective, block_reduce, block_scan, coalesced_threads, ops, this_grid, this_thread_block,
    warp_reduce, warp_scan,
};
use cuda_device::{
    DisjointSlice, DynamicSharedArray, SharedArray, cuda_module, dotprod, float, grid, kernel, launch_bounds, shared,
    thread, warp,
};

mod checks;
#[path = "../../harness.rs"]
mod harness;

#[cuda_module]
mod kernels {
    use super::*;

    /// 256 threads per block, 2048 bytes of dynamic shared memory. `out[i]` combines four
    /// neighbours' values read back from shared memory; `flags[i]` has bit 0 set if the aligned
    /// shared array is not 128-byte aligned, bit 1 for the aligned dynamic memory, bit 2 if the
    /// dynamic size is not 2048, bit 3 if the total is below 2048 + 2048.
    #[kernel]
    #[launch_bounds(256)]
    pub fn shared_ops(x: &[u32], mut out: DisjointSlice<u32>, mut flags: DisjointSlice<u32>) {
        static mut TILE: SharedArray<u32, 256> = SharedArray::UNINIT;
        static mut STAGE: SharedArray<u32, 512, 128> = SharedArray::UNINIT;
        let tid = thread::threadIdx_x() as usize;
        let idx = thread::index_1d();
        let v = x[idx.get()];
        let a: *mut u32 = DynamicSharedArray::<u32>::get();
        let b: *mut u32 = DynamicSharedArray::<u32, 128>::offset(1024);
        // SAFETY: each thread writes its own slots; everything is read after the barrier.
        unsafe {
            TILE[tid] = v;
            STAGE[2 * tid] = v ^ 0xffff;
            a.add(tid).write(v.wrapping_mul(3));
            b.add(tid).write(v.wrapping_add(1));
        }
        thread::sync_threads();
        let sum = unsafe {
            TILE[255 - tid]
                .wrapping_add(STAGE[2 * ((tid + 1) % 256)])
                .wrapping_add(a.add((tid + 2) % 256).read())
                .wrapping_add(b.add((tid + 3) % 256).read())
        };
        let stage_at = unsafe { shared::cvta_generic_to_shared_offset((&raw const STAGE).cast()) };
        let dyn_at = unsafe { shared::cvta_generic_to_shared_offset(DynamicSharedArray::<u8, 128>::get_raw()) };
        let f = (stage_at % 128 != 0) as u32
            | ((dyn_at % 128 != 0) as u32) << 1
            | ((shared::dynamic_smem_size() != 2048) as u32) << 2
            | ((shared::total_smem_size() < 4096) as u32) << 3;
        if let Some(o) = out.get_mut(idx) {
            *o = sum;
        }
        if let Some(o) = flags.get_mut(thread::index_1d()) {
            *o = f;
        }
    }

    /// Grid-stride over `x`: `counts[x % 64] += 1` (device cells), `counts[64]` counts odd values
    /// (core `AtomicU32`, AcqRel), `counts[65]` = max by compare-exchange, `counts[66]` = 7 by
    /// swap, `counts[67..70]` and/or/xor, `counts[70]` = per-block counts through a block-scope
    /// cell in shared memory; `longs = [sum (system, AcqRel), max (SeqCst), count (core)]`;
    /// `fsum` += x % 8, `dsum` -= x, `mins` = min of -x; `handoff[block]` = what a warp read
    /// after an acquire load saw the value another warp published with a release store.
    #[kernel]
    #[launch_bounds(256)]
    #[allow(clippy::too_many_arguments)]
    pub fn atomic_cells(
        x: &[u32],
        counts: &mut [u32],
        longs: &mut [u64],
        fsum: &mut [f32],
        dsum: &mut [f64],
        mins: &mut [i64],
        mut handoff: DisjointSlice<u32>,
    ) {
        static mut LOCAL: SharedArray<u32, 2> = SharedArray::UNINIT;
        static mut MESSAGE: SharedArray<u32, 2> = SharedArray::UNINIT;
        let tid = thread::threadIdx_x();
        if tid == 0 {
            unsafe {
                LOCAL[0] = 0;
                MESSAGE[0] = 0;
                MESSAGE[1] = 0;
            }
        }
        thread::sync_threads();
        let c = counts.as_mut_ptr();
        let l = longs.as_mut_ptr();
        // SAFETY (all `from_ptr`): the buffers are long enough and only accessed atomically
        // while the kernel runs; the shared cells belong to this block.
        let local = unsafe { BlockAtomicU32::from_ptr(&raw mut LOCAL[0]) };
        for i in thread::grid_stride(x.len()) {
            let v = x[i.get()];
            unsafe {
                DeviceAtomicU32::from_ptr(c.add((v % 64) as usize)).fetch_add(1, AtomicOrdering::Relaxed);
                AtomicU32::from_ptr(c.add(64)).fetch_add(v & 1, Ordering::AcqRel);
                let max = DeviceAtomicU32::from_ptr(c.add(65));
                let mut seen = max.load(AtomicOrdering::Relaxed);
                while v > seen {
                    match max.compare_exchange(seen, v, AtomicOrdering::AcqRel, AtomicOrdering::Relaxed) {
                        Ok(_) => break,
                        Err(now) => seen = now,
                    }
                }
                DeviceAtomicU32::from_ptr(c.add(66)).swap(7, AtomicOrdering::SeqCst);
                DeviceAtomicU32::from_ptr(c.add(67)).fetch_and(!(1 << (v % 32)), AtomicOrdering::Relaxed);
                DeviceAtomicU32::from_ptr(c.add(68)).fetch_or(1 << (v % 32), AtomicOrdering::Release);
                DeviceAtomicU32::from_ptr(c.add(69)).fetch_xor(v, AtomicOrdering::Acquire);
                SystemAtomicU64::from_ptr(l).fetch_add(v as u64, AtomicOrdering::AcqRel);
                DeviceAtomicU64::from_ptr(l.add(1)).fetch_max(v as u64, AtomicOrdering::SeqCst);
                AtomicU64::from_ptr(l.add(2)).fetch_add(1, Ordering::Relaxed);
                DeviceAtomicF32::from_ptr(fsum.as_mut_ptr()).fetch_add((v % 8) as f32, AtomicOrdering::Relaxed);
                DeviceAtomicF64::from_ptr(dsum.as_mut_ptr()).fetch_sub(v as f64, AtomicOrdering::Relaxed);
                DeviceAtomicI64::from_ptr(mins.as_mut_ptr()).fetch_min(-(v as i64), AtomicOrdering::Relaxed);
            }
            local.fetch_add(1, AtomicOrdering::Relaxed);
        }
        // Warp 0 publishes, warp 1 waits for it (independent thread scheduling lets both run).
        let message = unsafe { BlockAtomicU32::from_ptr(&raw mut MESSAGE[1]) };
        let block = thread::blockIdx_x();
        if tid == 0 {
            unsafe { core::ptr::write_volatile(&raw mut MESSAGE[0], block + 1000) };
            message.store(1, AtomicOrdering::Release);
        } else if tid == 32 {
            while message.load(AtomicOrdering::Acquire) == 0 {}
            let got = unsafe { MESSAGE[0] };
            if let Some(o) = handoff.get_mut(thread::index_1d()) {
                *o = got;
            }
        }
        thread::sync_threads();
        if tid == 0 {
            let n = local.load(AtomicOrdering::Relaxed);
            unsafe { DeviceAtomicU32::from_ptr(c.add(70)).fetch_add(n, AtomicOrdering::AcqRel) };
        }
    }

    /// `halves` holds two `f16` bit patterns: every thread adds 1 to the first (device scope) and,
    /// in threads below 100, subtracts 0.5 from the second (system scope).
    #[kernel]
    pub fn half_cells(halves: &mut [u16]) {
        let p = halves.as_mut_ptr().cast::<f16>();
        // SAFETY: two f16 slots, only accessed atomically while the kernel runs.
        unsafe {
            DeviceAtomicF16::from_ptr(p).fetch_add(1.0, AtomicOrdering::Relaxed);
            if thread::index_1d().get() < 100 {
                SystemAtomicF16::from_ptr(p.add(1)).fetch_sub(0.5, AtomicOrdering::AcqRel);
            }
        }
    }

    /// 256 threads per block (whole warps). `sums[i]` = warp sum + lane 0's value + the value
    /// 16 lanes over; `bits[i]` = [ballot of odd keys, match_all of the warp's top key bit,
    /// match_all of 42, redux and, redux or, redux xor, low word of the 64-bit value one lane
    /// down, elect leader | am-I-leader << 8 | lanemask bits << 16].
    #[kernel]
    #[launch_bounds(256)]
    pub fn warp_full(x: &[f32], keys: &[u32], mut sums: DisjointSlice<f32>, mut bits: DisjointSlice<[u32; 8]>) {
        let idx = thread::index_1d();
        let i = idx.get();
        let v = x[i];
        let k = keys[i];
        let sum = warp::reduce_sum_f32(v) + warp::shuffle_f32(v, 0) + warp::shuffle_xor_f32(v, 16);
        let wide = ((k as u64) << 32) | i as u64;
        let down = warp::shuffle_down_u64(wide, 1);
        let (leader, me) = warp::elect_sync(warp::FULL_MASK);
        let lane = warp::lane_id();
        let masks_ok = warp::lanemask_le() == (warp::lanemask_lt() | warp::lanemask_eq())
            && warp::lanemask_ge() == !warp::lanemask_lt()
            && warp::lanemask_gt() == !warp::lanemask_le()
            && warp::lanemask_eq() == 1 << lane
            && warp::active_mask() == warp::FULL_MASK;
        let word = [
            warp::ballot(k & 1 == 1),
            warp::match_all_sync(warp::FULL_MASK, k >> 31),
            warp::match_all_sync(warp::FULL_MASK, 42),
            warp::redux_sync_and(warp::FULL_MASK, k),
            warp::redux_sync_or(warp::FULL_MASK, k),
            warp::redux_sync_xor(warp::FULL_MASK, k),
            down as u32,
            leader | (me as u32) << 8 | (masks_ok as u32) << 16,
        ];
        if let Some(o) = sums.get_mut(idx) {
            *o = sum;
        }
        if let Some(o) = bits.get_mut(thread::index_1d()) {
            *o = word;
        }
    }

    /// 48 threads per block: warp 1 has 16 live lanes. `out[i]` = [partial sum, partial max,
    /// live lanes] of the thread's warp.
    #[kernel]
    #[launch_bounds(64)]
    pub fn warp_partial(x: &[f32], mut out: DisjointSlice<[f32; 3]>) {
        let idx = thread::index_1d();
        let v = x[idx.get()];
        let live = warp::live_lanes_1d();
        let r = [warp::reduce_sum_f32_partial(v, live), warp::reduce_max_f32_partial(v, live), live as f32];
        if let Some(o) = out.get_mut(idx) {
            *o = r;
        }
    }

    /// 256 threads per block. `out[i]` = [16-lane tile sum, 8-lane tile inclusive scan, 16-lane
    /// ballot of odd values, value of rank 3 of the 16-lane tile, 16-lane xor-16 shuffle (own
    /// value), block max, block inclusive scan, coalesced rank | size << 8 (odd values only)];
    /// `fout[i]` = [block sum of (v % 16) as f32, block min of v as i32 - 500 (as f32)].
    #[kernel]
    #[launch_bounds(256)]
    pub fn groups(x: &[u32], mut out: DisjointSlice<[u32; 8]>, mut fout: DisjointSlice<[f32; 2]>) {
        static mut SMEM: SharedArray<u32, 8> = SharedArray::UNINIT;
        static mut FSMEM: SharedArray<f32, 8> = SharedArray::UNINIT;
        static mut ISMEM: SharedArray<i32, 8> = SharedArray::UNINIT;
        let idx = thread::index_1d();
        let v = x[idx.get()];
        let block = this_thread_block();
        let t16 = block.tiled_partition::<16>();
        let t8 = block.tiled_partition::<8>();
        let coalesced = if v & 1 == 1 {
            let g = coalesced_threads();
            g.thread_rank() | g.size() << 8
        } else {
            0
        };
        let r = [
            warp_reduce::<u32, ops::Sum, 16>(&t16, v),
            warp_scan::<u32, ops::Sum, 8>(&t8, v),
            t16.ballot(v & 1 == 1),
            t16.shfl(v, 3),
            t16.shfl_xor(v, 16),
            block_reduce::<u32, ops::Max, 8>(&block, v, &raw mut SMEM),
            block_scan::<u32, ops::Sum, 8>(&block, v, &raw mut SMEM),
            coalesced,
        ];
        let f = [
            block_reduce::<f32, ops::Sum, 8>(&block, (v % 16) as f32, &raw mut FSMEM),
            block_reduce::<i32, ops::Min, 8>(&block, v as i32 - 500, &raw mut ISMEM) as f32,
        ];
        if block.thread_rank() >= block.size() || this_grid().thread_rank() as usize != idx.get() {
            cuda_device::trap();
        }
        if let Some(o) = out.get_mut(idx) {
            *o = r;
        }
        if let Some(o) = fout.get_mut(thread::index_1d()) {
            *o = f;
        }
    }

    /// Launched cooperatively, one block per SM. Round 1: thread 0 of each block writes
    /// `markers[b] = b + 1`; after `grid::sync` it sums all markers into `out[2b]`. Round 2 (after a
    /// second sync, which checks the barrier resets): markers become `2(b + 1)`, sums into `out[2b + 1]`.
    // Launched through `cuLaunchKernelEx` by `checks::launch_cooperative`, not the generated method.
    #[allow(dead_code)]
    #[kernel]
    pub fn grid_rounds(mut markers: DisjointSlice<u32>, mut out: DisjointSlice<u32>) {
        let b = thread::blockIdx_x() as usize;
        let n = thread::gridDim_x() as usize;
        let first = thread::threadIdx_x() == 0;
        let m = markers.as_mut_ptr();
        for round in 0..2usize {
            if first {
                // SAFETY: `markers` has one element per block; block b writes element b only.
                unsafe { core::ptr::write_volatile(m.add(b), ((b + 1) * (round + 1)) as u32) };
            }
            grid::sync();
            if first {
                let mut sum = 0u32;
                for j in 0..n {
                    // SAFETY: j < gridDim.x = markers.len(); written before the grid barrier.
                    sum += unsafe { core::ptr::read_volatile(m.add(j)) };
                }
                // SAFETY: block b writes out[2b] and out[2b + 1] only.
                unsafe { *out.get_unchecked_mut(2 * b + round) = sum };
            }
            grid::sync();
        }
    }

    /// 2D launch over a 64-wide matrix (with extra columns of threads past it):
    /// `out[r * 64 + c] = x[r * 64 + c] * 2` through `index_2d::<64>()`.
    #[kernel]
    pub fn spaces(x: &[f32], mut out: DisjointSlice<f32>) {
        if let Some(idx) = thread::index_2d::<64>() {
            if idx.in_bounds(out.len()) {
                // SAFETY: index_2d gives every thread of the launch its own element.
                unsafe { *out.get_unchecked_mut(idx.get()) = x[idx.get()] * 2.0 };
            }
        }
    }

    /// 1D launch: lane 0 of each warp writes its warp's sum to `sums[warp_index]`; blocks of 48
    /// threads have a short second warp.
    #[kernel]
    pub fn warp_sums(x: &[f32], sums: &mut [f32]) {
        let v = x[thread::index_1d().get()];
        let s = warp::reduce_sum_f32_partial(v, warp::live_lanes_1d());
        if let Some(w) = thread::warp_index() {
            sums[w.get()] = s;
        }
    }

    /// `out[i]` = [a + b rounded to nearest, down, up, toward zero, sqrt |a| to nearest,
    /// 1/a to nearest] through the explicitly rounded instructions.
    #[kernel]
    pub fn rounding(a: &[f32], b: &[f32], mut out: DisjointSlice<[f32; 6]>) {
        let idx = thread::index_1d();
        let i = idx.get();
        // The grid is rounded up to whole blocks: threads past the end must not index `a`.
        if let Some(o) = out.get_mut(idx) {
            let (x, y) = (a[i], b[i]);
            *o = [
                float::add_rn_f32(x, y),
                float::add_rm_f32(x, y),
                float::add_rp_f32(x, y),
                float::add_rz_f32(x, y),
                float::sqrt_rn_f32(x.abs()),
                float::rcp_rn_f32(x),
            ];
        }
    }

    /// 2D launch, 64 columns. `out[i]` = [dp4a_s32, dp4a_u32, dp2a_s32, dp2a_u32] of a[i], b[i]
    /// with accumulator i, written through `get_unchecked_mut` at `row * 64 + col`.
    #[kernel]
    pub fn misc(a: &[u32], b: &[u32], mut out: DisjointSlice<[u32; 4]>) {
        let (row, col) = (thread::index_2d_row(), thread::index_2d_col());
        let i = row * 64 + col;
        if col < 64 && i < a.len() && i < out.len() {
            let c = i as u32;
            let r = [
                dotprod::dp4a_s32(a[i], b[i], c as i32) as u32,
                dotprod::dp4a_u32(a[i], b[i], c),
                dotprod::dp2a_s32(a[i], b[i], c as i32) as u32,
                dotprod::dp2a_u32(a[i], b[i], c),
            ];
            // SAFETY: each thread of the 2D launch has its own (row, col), so its own `i`.
            unsafe { *out.get_unchecked_mut(i) = r };
        }
    }
}

fn main() {
    checks::run()
}
