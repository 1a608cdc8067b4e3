//! Golden PTX checks (no GPU needed) of the device API under the names NVIDIA's cuda-oxide uses:
//! `static mut` shared arrays with `UNINIT`, indexing and an alignment, `DynamicSharedArray`,
//! the warp shorthands, `redux.sync`, the atomic cell types with orderings, `core::sync::atomic`
//! and volatile accesses in kernels, dot products, special registers, `elect_sync`; and, for
//! sm_90, the cluster names. Each crate is built for several archs and every PTX passes `ptxas`.
use std::sync::OnceLock;

use oxide_tests::ptx::Built;

const ARCHS: [&str; 3] = ["sm_80", "sm_90", "sm_100a"];
const SM90_ARCHS: [&str; 2] = ["sm_90", "sm_100a"];

const COMPAT: &str = r#"
#![feature(f16)]
#![allow(static_mut_refs)]
use core::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, Ordering};
use cuda_device::atomic::{AtomicOrdering, BlockAtomicI64, DeviceAtomicF16, DeviceAtomicF64, DeviceAtomicU32, SystemAtomicF16, SystemAtomicF32, SystemAtomicU64};
use cuda_device::cooperative_groups::{ThreadGroup, WarpCollective, block_reduce, ops, this_grid, this_thread_block, warp_reduce};
use cuda_device::{DisjointSlice, DynamicSharedArray, SharedArray, cuda_module, debug, dotprod, float, grid, kernel, shared, thread, warp};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn shared_index(x: &[u32], mut out: DisjointSlice<u32>) {
        static mut TILE: SharedArray<u32, 256> = SharedArray::UNINIT;
        static mut STAGE: SharedArray<u8, 512, 128> = SharedArray::UNINIT;
        let tid = thread::threadIdx_x() as usize;
        let idx = thread::index_1d();
        unsafe {
            TILE[tid] = if idx.in_bounds(x.len()) { x[idx.get()] } else { 0 };
            STAGE[tid] = tid as u8;
        }
        thread::sync_threads();
        let base = SharedArray::as_raw_mut_ptr(&raw mut STAGE);
        let offset = unsafe { shared::cvta_generic_to_shared_offset(base) } as u32;
        let v = unsafe { TILE[255 - tid] } + unsafe { STAGE[511 - tid] } as u32 + offset + shared::total_smem_size();
        if let Some(o) = out.get_mut(idx) { *o = v; }
    }

    #[kernel]
    pub fn dynamic_aligned(mut out: DisjointSlice<f32>) {
        let a: *mut f32 = DynamicSharedArray::<f32>::get();
        let b: *mut f32 = DynamicSharedArray::<f32, 256>::offset(1024);
        let tid = thread::threadIdx_x() as usize;
        unsafe { a.add(tid).write(tid as f32); b.add(tid).write(1.0) };
        thread::sync_threads();
        let v = unsafe { a.add(255 - tid).read() + b.add(tid).read() } + shared::dynamic_smem_size() as f32;
        if let Some(o) = out.get_mut(thread::index_1d()) { *o = v; }
    }

    #[kernel]
    pub fn warp_compat(x: &[f32], mut out: DisjointSlice<f32>, mut bits: DisjointSlice<u32>) {
        let idx = thread::index_1d();
        let v = if idx.in_bounds(x.len()) { x[idx.get()] } else { 0.0 };
        let key = v as i32 as u32;
        let sum = warp::reduce_sum_f32(v) + warp::shuffle_xor_f32(v, 1) + warp::shuffle_f64(v as f64, 0) as f32;
        let tail = warp::reduce_max_f32_partial(v, warp::live_lanes_1d());
        let wide = warp::shuffle_down_u64(key as u64, 1);
        let m = warp::active_mask() ^ warp::lanemask_le() ^ warp::lanemask_ge() ^ warp::lanemask_gt() ^ warp::lanemask_eq();
        let votes = warp::ballot(v > 0.0) + warp::all(v > 0.0) as u32 + warp::any(v < 0.0) as u32;
        let matched = warp::match_all_sync(warp::FULL_MASK, 42) ^ warp::match_any_i64_sync(warp::FULL_MASK, wide);
        let redux = warp::redux_sync_and(warp::FULL_MASK, key) ^ warp::redux_sync_or(warp::FULL_MASK, key)
            ^ warp::redux_sync_xor(warp::FULL_MASK, key) ^ warp::redux_sync_add(warp::FULL_MASK, key);
        let regs = warp::warpid() ^ warp::nwarpid();
        if let Some(o) = out.get_mut(idx) { *o = sum + tail; }
        if let Some(o) = bits.get_mut(idx) { *o = m ^ votes ^ matched ^ redux ^ regs; }
    }

    #[kernel]
    pub fn atomics_ordered(words: &mut [u32], longs: &mut [u64], floats: &mut [f32], doubles: &mut [f64], signed: &mut [i64]) {
        let flag = unsafe { DeviceAtomicU32::from_ptr(words.as_mut_ptr()) };
        let seen = flag.load(AtomicOrdering::Acquire);
        flag.store(seen + 1, AtomicOrdering::Release);
        let _ = flag.fetch_add(1, AtomicOrdering::AcqRel);
        let _ = flag.compare_exchange(5, 6, AtomicOrdering::SeqCst, AtomicOrdering::Acquire);
        let sys = unsafe { SystemAtomicU64::from_ptr(longs.as_mut_ptr()) };
        let _ = sys.fetch_add(3, AtomicOrdering::Relaxed);
        let fsys = unsafe { SystemAtomicF32::from_ptr(floats.as_mut_ptr()) };
        let _ = fsys.fetch_add(0.5, AtomicOrdering::Release);
        let d = unsafe { DeviceAtomicF64::from_ptr(doubles.as_mut_ptr()) };
        let _ = d.fetch_sub(0.25, AtomicOrdering::Relaxed);
        let b = unsafe { BlockAtomicI64::from_ptr(signed.as_mut_ptr()) };
        let _ = b.fetch_min(-1, AtomicOrdering::Relaxed);
        // core::sync::atomic in device code.
        let core_word = unsafe { AtomicU32::from_ptr(words.as_mut_ptr().add(1)) };
        let _ = core_word.fetch_add(2, Ordering::Relaxed);
        let core_long = unsafe { AtomicU64::from_ptr(longs.as_mut_ptr().add(1)) };
        let _ = core_long.compare_exchange(0, 9, Ordering::AcqRel, Ordering::Relaxed);
        let core_int = unsafe { AtomicI32::from_ptr(words.as_mut_ptr().add(2).cast()) };
        core_int.store(core_int.load(Ordering::Acquire) - 1, Ordering::Release);
    }

    #[kernel]
    pub fn half_cells(h: &mut [f16]) {
        let p = h.as_mut_ptr();
        let d = unsafe { DeviceAtomicF16::from_ptr(p) };
        let seen = d.load(AtomicOrdering::Acquire);
        let _ = d.fetch_add(seen, AtomicOrdering::Relaxed);
        let s = unsafe { SystemAtomicF16::from_ptr(p.add(1)) };
        let _ = s.fetch_sub(1.5, AtomicOrdering::Release);
        s.store(2.0, AtomicOrdering::Relaxed);
    }

    /// NVIDIA's examples make atomics out of `&[T]` parameters (`&*(x.as_ptr() as *const
    /// DeviceAtomicU32)`), which our ABI marks read-only: it must still compile.
    #[kernel]
    pub fn atomics_through_shared_slice(flags: &[u32], mut out: DisjointSlice<u32>) {
        let cell = unsafe { &*(flags.as_ptr() as *const DeviceAtomicU32) };
        cell.store(1, AtomicOrdering::Release);
        let core_cell = unsafe { AtomicU32::from_ptr(flags.as_ptr().add(1) as *mut u32) };
        let v = cell.load(AtomicOrdering::Acquire) + core_cell.load(Ordering::Acquire) + cell.fetch_add(1, AtomicOrdering::Relaxed);
        if let Some(o) = out.get_mut(thread::index_1d()) { *o = v; }
    }

    #[kernel]
    pub fn atomic_cells_param(x: &[u32], bins: &[DeviceAtomicU32]) {
        let i = thread::index_1d().get();
        if i < x.len() {
            bins[(x[i] % 16) as usize].fetch_add(1, AtomicOrdering::Relaxed);
        }
    }

    #[kernel]
    pub fn groups_and_grid(x: &[u32], mut out: DisjointSlice<u32>) {
        static mut SMEM: SharedArray<u32, 8> = SharedArray::UNINIT;
        let idx = thread::index_1d();
        let v = x[idx.get()];
        let block = this_thread_block();
        let tile = block.tiled_partition::<16>();
        let t = warp_reduce::<u32, ops::Sum, 16>(&tile, v) + tile.ballot(v > 3);
        let b = block_reduce::<u32, ops::Max, 8>(&block, t, &raw mut SMEM);
        this_grid().sync();
        grid::sync();
        if let Some(o) = out.get_mut(idx) { *o = b; }
    }

    #[kernel]
    pub fn index_spaces(x: &[f32], mut out: DisjointSlice<f32>, sums: &mut [f32]) {
        if let Some(idx) = thread::index_2d::<64>() {
            if idx.in_bounds(out.len()) {
                // SAFETY: index_2d gives every thread of the launch its own element.
                unsafe { *out.get_unchecked_mut(idx.get()) = x[idx.get()] };
            }
        }
        let s = warp::reduce_sum_f32(x[thread::index_2d_col() % x.len()]);
        if let Some(w) = thread::warp_index() {
            if w.get() < sums.len() { sums[w.get()] = s; }
        }
    }

    #[kernel]
    pub fn rounding(x: &[f32], y: &[f64], mut out: DisjointSlice<f32>, mut wide: DisjointSlice<f64>) {
        let idx = thread::index_1d();
        let (a, d) = (x[idx.get()], y[idx.get()]);
        let f = float::add_rz_f32(a, 1.0) + float::fma_rn_ftz_sat_f32(a, a, 0.5) + float::mul_rm_ftz_f32(a, 3.0)
            + float::sin_approx_ftz_f32(a) + float::tanh_approx_f32(a) + float::ex2_approx_ftz_f32(a);
        let g = float::rcp_approx_ftz_f64(d) + float::sqrt_rp_f64(d) + float::div_rz_f64(d, 3.0);
        if let Some(o) = out.get_mut(idx) { *o = f; }
        if let Some(o) = wide.get_mut(idx) { *o = g; }
    }

    #[kernel]
    pub fn volatile_ops(x: &mut [u32]) {
        let p = x.as_mut_ptr();
        unsafe {
            let v = core::ptr::read_volatile(p);
            core::ptr::write_volatile(p.add(1), v + 1);
        }
    }

    #[kernel]
    pub fn misc(a: &[u32], mut out: DisjointSlice<u32>, mut ids: DisjointSlice<u64>) {
        let row = thread::index_2d_row();
        let col = thread::index_2d_col();
        let i = row * 64 + col;
        if i < a.len() && i < out.len() {
            let d = dotprod::dp4a_s32(a[i], 0x0102_0304, 1) as u32 + dotprod::dp4a_u32(a[i], 0x0101_0101, 2)
                + dotprod::dp2a_s32(a[i], 0x0000_0505, 3) as u32 + dotprod::dp2a_u32(a[i], 0x0000_0303, 4);
            // SAFETY: each thread writes its own element `row * 64 + col`, below out.len().
            unsafe { *out.get_unchecked_mut(i) = d };
        }
        if row == 0 && col == 0 && !ids.is_empty() {
            let p = ids.as_mut_ptr();
            unsafe { p.write(thread::gridid() ^ thread::nsmid() as u64 ^ thread::smid() as u64) };
            debug::prof_trigger::<3>();
            if a.is_empty() { debug::breakpoint(); }
        }
    }
}

fn main() {}
"#;

const SM90: &str = r#"
#![allow(static_mut_refs)]
use cuda_device::{DisjointSlice, SharedArray, cluster, cluster_launch, cuda_module, float, kernel, thread, warp};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn elect(mut out: DisjointSlice<u32>) {
        let (leader, me) = warp::elect_sync(warp::FULL_MASK);
        let x = float::max_nan_xorsign_abs_f32(leader as f32, -2.5) as u32;
        let v = leader + warp::is_elected_sync(warp::active_mask()) as u32 * 100 + me as u32 * 1000 + x;
        if let Some(o) = out.get_mut(thread::index_1d()) { *o = v; }
    }

    #[kernel]
    #[cluster_launch(4, 1, 1)]
    pub fn ring(mut out: DisjointSlice<u32>) {
        static mut MINE: SharedArray<u32, 1> = SharedArray::UNINIT;
        if thread::threadIdx_x() == 0 {
            unsafe { MINE[0] = cluster::cluster_ctaidX() + cluster::cluster_idx() * 10 };
        }
        cluster::cluster_sync();
        let next = (cluster::block_rank() + 1) % cluster::cluster_size();
        let theirs = unsafe { cluster::dsmem_read_u32(&raw const MINE as *const u32, next) };
        let far = unsafe { cluster::map_shared_rank(&raw const MINE, 0).cast::<u32>().read() };
        cluster::cluster_sync();
        if let Some(o) = out.get_mut(thread::index_1d()) { *o = theirs + far + cluster::num_clusters(); }
    }
}

fn main() {}
"#;

fn compat() -> &'static Built {
    static BUILT: OnceLock<Built> = OnceLock::new();
    BUILT.get_or_init(|| Built::new("e2e-device-compat", COMPAT, &ARCHS))
}

fn sm90() -> &'static Built {
    static BUILT: OnceLock<Built> = OnceLock::new();
    BUILT.get_or_init(|| Built::new("e2e-device-compat-sm90", SM90, &SM90_ARCHS))
}

#[test]
fn compat_ptx_passes_ptxas() {
    compat().assert_ptxas();
    sm90().assert_ptxas();
}

#[test]
fn shared_arrays_index_align_and_registers() {
    compat().assert_entry_has(
        "shared_index",
        &["st.shared", "ld.shared", "bar.sync", "%total_smem_size", "cvta.to.shared"],
    );
    for arch in ARCHS {
        let text = compat().ptx(arch);
        assert!(
            text.lines().any(|l| l.contains(".shared .align 128 .b8") && l.contains("[512]")),
            "{arch}: the SharedArray<u8, 512, 128> is not 128-byte aligned:\n{text}"
        );
    }
}

#[test]
fn dynamic_shared_memory_takes_the_largest_alignment() {
    compat().assert_entry_has("dynamic_aligned", &["%dynamic_smem_size", "st.shared", "bar.sync"]);
    for arch in ARCHS {
        assert!(
            compat().ptx(arch).contains(".extern .shared .align 256 .b8 __oxide_dynamic_shared[]"),
            "{arch}: dynamic shared memory is not 256-byte aligned"
        );
    }
}

#[test]
fn warp_shorthands_redux_and_match() {
    compat().assert_entry_has(
        "warp_compat",
        &[
            "activemask.b32",
            "%lanemask_le",
            "%lanemask_ge",
            "%lanemask_gt",
            "%lanemask_eq",
            "vote.sync.ballot.b32",
            "vote.sync.all.pred",
            "vote.sync.any.pred",
            "match.all.sync.b32",
            "match.any.sync.b64",
            "redux.sync.and.b32",
            "redux.sync.or.b32",
            "redux.sync.xor.b32",
            "redux.sync.add.s32",
            "shfl.sync.bfly.b32",
            "shfl.sync.idx.b32",
            "shfl.sync.down.b32",
            "%nwarpid",
        ],
    );
}

#[test]
fn atomic_cells_orderings_and_scopes() {
    compat().assert_entry_has(
        "atomics_ordered",
        &[
            "ld.acquire.gpu",
            "st.release.gpu",
            "fence.sc.gpu",
            "atom.relaxed.sys.add.u64",
            "atom.release.sys.add.f32",
            "atom.global.add.f64",
            "atom.global.min.s64",
            "atom.acq_rel.sys.global.cas.b64",
            "atom.relaxed.sys.add.u32",
            "ld.acquire.sys",
            "st.release.sys",
        ],
    );
    // The acquire-release `fetch_add`: a release fence, the `atom`, an acquire fence (PTX 8.6 and
    // later spell them `fence.release` / `fence.acquire`, earlier ones `fence.acq_rel`).
    for arch in ARCHS {
        let text = compat().ptx(arch);
        let body = oxide_tests::ptx::entry(&text, "atomics_ordered");
        let fenced = ["fence.acq_rel.gpu;", "fence.release.gpu;"].iter().any(|f| {
            body.find(f).is_some_and(|at| {
                body[at..].find("atom.global.add.u32").is_some_and(|add| {
                    ["fence.acq_rel.gpu;", "fence.acquire.gpu;"].iter().any(|g| body[at + add..].contains(g))
                })
            })
        });
        assert!(fenced, "{arch}: the AcqRel fetch_add is not between fences:\n{body}");
    }
}

#[test]
fn atomics_through_a_read_only_slice_compile() {
    compat().assert_entry_has(
        "atomics_through_shared_slice",
        &["st.release.gpu.b32", "ld.acquire.gpu.b32", "ld.acquire.sys.b32"],
    );
}

#[test]
fn half_precision_cells() {
    compat().assert_entry_has(
        "half_cells",
        &["ld.acquire.gpu.b16", "atom.global.add.noftz.f16", "atom.release.sys.add.noftz.f16", "st.relaxed.sys.b16"],
    );
}

#[test]
fn slices_of_atomic_cells_are_not_readonly() {
    // `&[DeviceAtomicU32]` is written through: no `noalias readonly` (and no `ld.global.nc`).
    let ll = compat().ll();
    let define = ll.lines().find(|l| l.contains("@atomic_cells_param(")).expect("the entry's define");
    assert!(define.contains("ptr noalias readonly nonnull align 4 %p0"), "{define}");
    assert!(define.contains("ptr nonnull align 4 %p2"), "{define}");
    compat().assert_entry_has("atomic_cells_param", &["ld.global.nc", "atom.global.add.u32"]);
}

#[test]
fn index_spaces_check_the_launch_shape() {
    // index_2d::<64>: the z extents and the column; warp_index: lane 0 of a 1D launch.
    compat().assert_entry_has("index_spaces", &["%nctaid.z", "%ntid.z", "%laneid", "%ntid.y"]);
}

#[test]
fn explicitly_rounded_float_instructions() {
    compat().assert_entry_has(
        "rounding",
        &[
            "add.rz.f32",
            "fma.rn.ftz.sat.f32",
            "mul.rm.ftz.f32",
            "sin.approx.ftz.f32",
            "tanh.approx.f32",
            "ex2.approx.ftz.f32",
            "rcp.approx.ftz.f64",
            "sqrt.rp.f64",
            "div.rz.f64",
        ],
    );
}

#[test]
fn volatile_reads_and_writes() {
    compat().assert_entry_has("volatile_ops", &["ld.volatile.global.b32", "st.volatile.global.b32"]);
}

#[test]
fn dot_products_and_special_registers() {
    compat().assert_entry_has(
        "misc",
        &[
            "dp4a.s32.s32",
            "dp4a.u32.u32",
            "dp2a.lo.s32.s32",
            "dp2a.lo.u32.u32",
            "%gridid",
            "%nsmid",
            "%smid",
            "pmevent 3",
            "brkpt",
        ],
    );
}

#[test]
fn cooperative_groups_and_grid_sync() {
    compat().assert_entry_has(
        "groups_and_grid",
        &["shfl.sync.bfly.b32", "vote.sync.ballot.b32", "bar.sync", "%envreg1", "%envreg2", "ld.acquire.gpu", "trap;"],
    );
}

#[test]
fn elect_and_cluster_names() {
    sm90().assert_entry_has("elect", &["bar.warp.sync", "activemask.b32", "max.NaN.xorsign.abs.f32"]);
    sm90().assert_entry_has(
        "ring",
        &["%cluster_ctaid.x", "%clusterid.x", "%nclusterid.x", "barrier.cluster.arrive", "mapa.u64"],
    );
}
