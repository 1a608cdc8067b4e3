//! Raw device operations. Each carries `#[cfg_attr(cuda_oxide, oxide::intrinsic)]`; the backend
//! gives every function so marked its PTX body by its name (see `codegen-driver/src/lower/intrinsic/`); the Rust bodies run only on
//! the host, where they panic. Signatures use only scalars and raw pointers (one LLVM value per
//! parameter); the safe API over them lives in the other modules of this crate.
#![allow(non_snake_case)]

/// What every intrinsic does when called on the host.
#[cold]
#[inline(never)]
#[track_caller]
pub fn device_only(name: &str) -> ! {
    panic!("`cuda_device::intrinsics::{name}` is a device-only function: call it from a #[kernel]")
}

macro_rules! intrinsics {
    ($( $(#[$m:meta])* fn $name:ident ($($arg:ident: $ty:ty),*) $(-> $ret:ty)?; )*) => {$(
        $(#[$m])*
        #[inline(never)]
        #[allow(unused_variables)]
        #[cfg_attr(cuda_oxide, oxide::intrinsic)]
        pub fn $name ($($arg: $ty),*) $(-> $ret)? {
            device_only(stringify!($name))
        }
    )*};
}

// --- atomic.rs: `atom` on a generic pointer (LLVM's address-space inference turns it into
// `.global` or `.shared` where it can tell). `OP`: see `crate::atomic::op`; `SCOPE`:
// `crate::atomic::scope` (0 block, 1 cluster, 2 device, 3 system). `T`: u32/i32/u64/i64/f32/f64.

/// `atomicrmw <OP> ptr, val syncscope(<SCOPE>) monotonic`; returns the old value.
#[inline(never)]
#[cfg_attr(cuda_oxide, oxide::intrinsic)]
#[allow(unused_variables)]
pub fn atomic_rmw<T, const OP: u8, const SCOPE: u8>(ptr: *mut T, val: T) -> T {
    device_only("atomic_rmw")
}

/// `cmpxchg ptr, cmp, new syncscope(<SCOPE>) monotonic monotonic`; returns the old value.
#[inline(never)]
#[cfg_attr(cuda_oxide, oxide::intrinsic)]
#[allow(unused_variables)]
pub fn atomic_cas<T, const SCOPE: u8>(ptr: *mut T, cmp: T, new: T) -> T {
    device_only("atomic_cas")
}

/// `load atomic ptr syncscope(<SCOPE>) <ORDER>`; `ORDER`: `oxide_contract::atomic::AtomicOrdering`
/// (Relaxed, Acquire or SeqCst: cuda_device never passes the others).
#[inline(never)]
#[cfg_attr(cuda_oxide, oxide::intrinsic)]
#[allow(unused_variables)]
pub fn atomic_load<T, const SCOPE: u8, const ORDER: u8>(ptr: *const T) -> T {
    device_only("atomic_load")
}

/// `store atomic val, ptr syncscope(<SCOPE>) <ORDER>` (Relaxed, Release or SeqCst).
#[inline(never)]
#[cfg_attr(cuda_oxide, oxide::intrinsic)]
#[allow(unused_variables)]
pub fn atomic_store<T, const SCOPE: u8, const ORDER: u8>(ptr: *mut T, val: T) {
    device_only("atomic_store")
}

/// [`atomic_rmw`] with a memory ordering; returns the old value.
#[inline(never)]
#[cfg_attr(cuda_oxide, oxide::intrinsic)]
#[allow(unused_variables)]
pub fn atomic_rmw_ordered<T, const OP: u8, const SCOPE: u8, const ORDER: u8>(ptr: *mut T, val: T) -> T {
    device_only("atomic_rmw_ordered")
}

/// [`atomic_cas`] with the orderings of success and failure (the failure ordering is Relaxed,
/// Acquire or SeqCst); returns the old value.
#[inline(never)]
#[cfg_attr(cuda_oxide, oxide::intrinsic)]
#[allow(unused_variables)]
pub fn atomic_cas_ordered<T, const SCOPE: u8, const SUCCESS: u8, const FAILURE: u8>(ptr: *mut T, cmp: T, new: T) -> T {
    device_only("atomic_cas_ordered")
}

// --- shared.rs: generic const intrinsics --------------------------------------------------

/// [`dynamic_shared_ptr`], with the dynamic shared memory declared at least `ALIGN`-byte aligned
/// (the declaration takes the largest `ALIGN` of the module, 16 at least).
#[inline(never)]
#[cfg_attr(cuda_oxide, oxide::intrinsic)]
pub fn dynamic_shared_ptr_aligned<const ALIGN: usize>() -> *mut u8 {
    device_only("dynamic_shared_ptr_aligned")
}

// --- debug.rs: generic const intrinsics ---------------------------------------------------

/// `pmevent N`: triggers performance-monitor event `N` (0..=15; checked by the caller).
#[inline(never)]
#[cfg_attr(cuda_oxide, oxide::intrinsic)]
pub fn pmevent<const N: u32>() {
    device_only("pmevent")
}

/// `base.wrapping_add(i)` when `i < len`. Otherwise, on the device, an address that faults on
/// access, and the thread traps at its next return, loop back-edge or call (a branch to `trap` in
/// debug builds); on the host, a panic. The library's bounds checks use it so that they do not
/// serialise loads (see `codegen-driver/src/lower/bounds.rs`).
#[inline(never)]
#[cfg_attr(cuda_oxide, oxide::intrinsic)]
pub fn index_checked<T>(base: *mut T, i: usize, len: usize) -> *mut T {
    assert!(i < len, "index {i} out of bounds for length {len}");
    base.wrapping_add(i)
}

/// [`index_checked`] for this block's shared memory: a failed check only sets the thread's
/// deferred-trap flag, the address stays `base.wrapping_add(i)`. An out-of-bounds shared access
/// cannot reach another block's memory or device memory (past the block's allocation it
/// faults), and without a poisoned address the checks of an unrolled loop fold into one
/// compare instead of one select per access. Host: a panic, as `index_checked`.
#[inline(never)]
#[cfg_attr(cuda_oxide, oxide::intrinsic)]
pub fn shared_index_checked<T>(base: *mut T, i: usize, len: usize) -> *mut T {
    assert!(i < len, "index {i} out of bounds for length {len}");
    base.wrapping_add(i)
}

macro_rules! special_registers {
    ($ret:ty: $($name:ident),* $(,)?) => {$(
        #[doc = concat!("PTX special register behind `", stringify!($name), "`.")]
        #[inline(never)]
        #[cfg_attr(cuda_oxide, oxide::intrinsic)]
        pub fn $name() -> $ret {
            device_only(stringify!($name))
        }
    )*};
}

// --- thread.rs: registers -------------------------------------------------------------------
special_registers!(u32:
    threadIdx_x, threadIdx_y, threadIdx_z,
    blockIdx_x, blockIdx_y, blockIdx_z,
    blockDim_x, blockDim_y, blockDim_z,
    gridDim_x, gridDim_y, gridDim_z,
    laneid, warpid, nwarpid, lanemask_lt, lanemask_le, lanemask_eq, lanemask_gt, lanemask_ge,
    nsmid, smid, dynamic_smem_size, total_smem_size, envreg1, envreg2,
);
special_registers!(u64: gridid);
// --- cluster.rs: cluster registers (sm_90) --------------------------------------------------
special_registers!(u32:
    cluster_ctarank, cluster_nctarank,
    cluster_ctaid_x, cluster_ctaid_y, cluster_ctaid_z,
    cluster_nctaid_x, cluster_nctaid_y, cluster_nctaid_z,
    clusterid_x, clusterid_y, clusterid_z,
    nclusterid_x, nclusterid_y, nclusterid_z,
);
// --- debug.rs: clocks -----------------------------------------------------------------------
special_registers!(u32: clock);
special_registers!(u64: clock64, globaltimer);

intrinsics! {
    // --- sync.rs: barriers and fences -------------------------------------------------------
    /// `bar.sync 0`: every thread of the block waits here.
    fn sync_threads();
    /// `bar.red.popc.u32`: barrier; returns how many threads passed a non-zero `pred`.
    fn sync_threads_count(pred: u32) -> u32;
    /// `bar.red.and.pred`: barrier; non-zero when `pred` was non-zero in every thread.
    fn sync_threads_and(pred: u32) -> u32;
    /// `bar.red.or.pred`: barrier; non-zero when `pred` was non-zero in any thread.
    fn sync_threads_or(pred: u32) -> u32;
    /// `bar.warp.sync mask`.
    fn sync_warp(mask: u32);
    /// `bar.sync id, threads`: named barrier `id`, `threads` threads per phase.
    fn bar_sync_count(id: u32, threads: u32);
    /// `bar.arrive id, threads`: arrives at named barrier `id` without waiting.
    fn bar_arrive_count(id: u32, threads: u32);
    /// `fence.sc.cta` (`__threadfence_block`).
    fn threadfence_block();
    /// `fence.sc.gpu` (`__threadfence`).
    fn threadfence();
    /// `fence.sc.sys` (`__threadfence_system`).
    fn threadfence_system();
    /// `trap`: aborts the kernel; the host sees `CUDA_ERROR_ILLEGAL_INSTRUCTION` at the next sync.
    fn trap() -> !;

    // --- shared.rs --------------------------------------------------------------------------
    /// Generic address of the start of dynamic shared memory (`extern __shared__`).
    fn dynamic_shared_ptr() -> *mut u8;
    /// `cvta.to.shared.u64`: the offset of a generic shared-memory address in the shared window.
    fn cvta_to_shared(ptr: *const u8) -> u64;

    // --- warp.rs ----------------------------------------------------------------------------
    /// `shfl.sync.idx.b32`; `c` is PTX's clamp/segment operand.
    fn shfl_sync_idx_i32(mask: u32, val: u32, lane: u32, c: u32) -> u32;
    /// `shfl.sync.up.b32`.
    fn shfl_sync_up_i32(mask: u32, val: u32, delta: u32, c: u32) -> u32;
    /// `shfl.sync.down.b32`.
    fn shfl_sync_down_i32(mask: u32, val: u32, delta: u32, c: u32) -> u32;
    /// `shfl.sync.bfly.b32`.
    fn shfl_sync_bfly_i32(mask: u32, val: u32, lane_mask: u32, c: u32) -> u32;
    /// `vote.sync.all.pred`.
    fn vote_all_sync(mask: u32, pred: bool) -> bool;
    /// `vote.sync.any.pred`.
    fn vote_any_sync(mask: u32, pred: bool) -> bool;
    /// `vote.sync.uni.pred`.
    fn vote_uni_sync(mask: u32, pred: bool) -> bool;
    /// `vote.sync.ballot.b32`.
    fn vote_ballot_sync(mask: u32, pred: bool) -> u32;
    /// `activemask.b32`.
    fn activemask() -> u32;
    /// `match.any.sync.b32`.
    fn match_any_sync_i32(mask: u32, val: u32) -> u32;
    /// `match.any.sync.b64`.
    fn match_any_sync_i64(mask: u32, val: u64) -> u32;
    /// `match.all.sync.b32`: the mask of lanes holding `val` when all of `mask` hold it, else 0.
    fn match_all_sync_i32(mask: u32, val: u32) -> u32;
    /// `match.all.sync.b64`.
    fn match_all_sync_i64(mask: u32, val: u64) -> u32;
    /// `redux.sync.add.u32` (sm_80).
    fn redux_sync_add_u32(mask: u32, val: u32) -> u32;
    /// `redux.sync.min.u32` (sm_80).
    fn redux_sync_min_u32(mask: u32, val: u32) -> u32;
    /// `redux.sync.max.u32` (sm_80).
    fn redux_sync_max_u32(mask: u32, val: u32) -> u32;
    /// `redux.sync.min.s32` (sm_80).
    fn redux_sync_min_i32(mask: u32, val: i32) -> i32;
    /// `redux.sync.max.s32` (sm_80).
    fn redux_sync_max_i32(mask: u32, val: i32) -> i32;
    /// `redux.sync.and.b32` (sm_80).
    fn redux_sync_and_b32(mask: u32, val: u32) -> u32;
    /// `redux.sync.or.b32` (sm_80).
    fn redux_sync_or_b32(mask: u32, val: u32) -> u32;
    /// `redux.sync.xor.b32` (sm_80).
    fn redux_sync_xor_b32(mask: u32, val: u32) -> u32;

    // --- cluster.rs (sm_90) -----------------------------------------------------------------
    /// `barrier.cluster.arrive` + `barrier.cluster.wait`.
    fn cluster_sync();
    /// `barrier.cluster.arrive` (release).
    fn cluster_arrive();
    /// `barrier.cluster.arrive.relaxed`.
    fn cluster_arrive_relaxed();
    /// `barrier.cluster.wait` (acquire).
    fn cluster_wait();
    /// `mapa.u64`: the generic address of the same shared-memory location in block `rank`.
    fn cluster_map_shared(ptr: *mut u8, rank: u32) -> *mut u8;
    /// `isspacep.shared::cluster`.
    fn is_cluster_shared(ptr: *const u8) -> bool;

    // --- debug.rs ---------------------------------------------------------------------------
    /// CUDA's `vprintf(format, args)`: `format` NUL-terminated, `args` packed as C varargs would
    /// be (each value aligned to its size).
    fn vprintf(format: *const u8, args: *const u8) -> i32;
    /// CUDA's `__assertfail(message, file, line, function, char_size)`: prints and stops the
    /// kernel; the host sees `CUDA_ERROR_ASSERT`.
    fn assert_fail(message: *const u8, file: *const u8, line: u32, function: *const u8) -> !;
    /// `nanosleep.u32` (sm_70).
    fn nanosleep(ns: u32);
    /// `brkpt`: suspends the thread for a debugger.
    fn breakpoint();

    // --- arith.rs: integer dot products -----------------------------------------------------
    /// `dp4a.s32.s32`: `c` + the dot product of the four signed bytes of `a` and of `b`.
    fn dp4a_s32(a: u32, b: u32, c: i32) -> i32;
    /// `dp4a.u32.u32`: `c` + the dot product of the four unsigned bytes of `a` and of `b`.
    fn dp4a_u32(a: u32, b: u32, c: u32) -> u32;
    /// `dp2a.lo.s32.s32`: `c` + the two signed halves of `a` times the low two signed bytes of `b`.
    fn dp2a_lo_s32(a: u32, b: u32, c: i32) -> i32;
    /// `dp2a.lo.u32.u32`: as [`dp2a_lo_s32`], unsigned.
    fn dp2a_lo_u32(a: u32, b: u32, c: u32) -> u32;
}

// --- arith.rs: float instructions with an explicit rounding, flush-to-zero, saturation or
// approximation, one per PTX instruction: `float_<mnemonic with _ for .>` (`nan` is `.NaN`).
intrinsics! {
    /// `add.rm.f32`.
    fn float_add_rm_f32(a: f32, b: f32) -> f32;
    /// `add.rm.f64`.
    fn float_add_rm_f64(a: f64, b: f64) -> f64;
    /// `add.rm.ftz.f32`.
    fn float_add_rm_ftz_f32(a: f32, b: f32) -> f32;
    /// `add.rm.ftz.sat.f32`.
    fn float_add_rm_ftz_sat_f32(a: f32, b: f32) -> f32;
    /// `add.rm.sat.f32`.
    fn float_add_rm_sat_f32(a: f32, b: f32) -> f32;
    /// `add.rn.f32`.
    fn float_add_rn_f32(a: f32, b: f32) -> f32;
    /// `add.rn.f64`.
    fn float_add_rn_f64(a: f64, b: f64) -> f64;
    /// `add.rn.ftz.f32`.
    fn float_add_rn_ftz_f32(a: f32, b: f32) -> f32;
    /// `add.rn.ftz.sat.f32`.
    fn float_add_rn_ftz_sat_f32(a: f32, b: f32) -> f32;
    /// `add.rn.sat.f32`.
    fn float_add_rn_sat_f32(a: f32, b: f32) -> f32;
    /// `add.rp.f32`.
    fn float_add_rp_f32(a: f32, b: f32) -> f32;
    /// `add.rp.f64`.
    fn float_add_rp_f64(a: f64, b: f64) -> f64;
    /// `add.rp.ftz.f32`.
    fn float_add_rp_ftz_f32(a: f32, b: f32) -> f32;
    /// `add.rp.ftz.sat.f32`.
    fn float_add_rp_ftz_sat_f32(a: f32, b: f32) -> f32;
    /// `add.rp.sat.f32`.
    fn float_add_rp_sat_f32(a: f32, b: f32) -> f32;
    /// `add.rz.f32`.
    fn float_add_rz_f32(a: f32, b: f32) -> f32;
    /// `add.rz.f64`.
    fn float_add_rz_f64(a: f64, b: f64) -> f64;
    /// `add.rz.ftz.f32`.
    fn float_add_rz_ftz_f32(a: f32, b: f32) -> f32;
    /// `add.rz.ftz.sat.f32`.
    fn float_add_rz_ftz_sat_f32(a: f32, b: f32) -> f32;
    /// `add.rz.sat.f32`.
    fn float_add_rz_sat_f32(a: f32, b: f32) -> f32;
    /// `div.rm.f32`.
    fn float_div_rm_f32(a: f32, b: f32) -> f32;
    /// `div.rm.f64`.
    fn float_div_rm_f64(a: f64, b: f64) -> f64;
    /// `div.rm.ftz.f32`.
    fn float_div_rm_ftz_f32(a: f32, b: f32) -> f32;
    /// `div.rn.f32`.
    fn float_div_rn_f32(a: f32, b: f32) -> f32;
    /// `div.rn.f64`.
    fn float_div_rn_f64(a: f64, b: f64) -> f64;
    /// `div.rn.ftz.f32`.
    fn float_div_rn_ftz_f32(a: f32, b: f32) -> f32;
    /// `div.rp.f32`.
    fn float_div_rp_f32(a: f32, b: f32) -> f32;
    /// `div.rp.f64`.
    fn float_div_rp_f64(a: f64, b: f64) -> f64;
    /// `div.rp.ftz.f32`.
    fn float_div_rp_ftz_f32(a: f32, b: f32) -> f32;
    /// `div.rz.f32`.
    fn float_div_rz_f32(a: f32, b: f32) -> f32;
    /// `div.rz.f64`.
    fn float_div_rz_f64(a: f64, b: f64) -> f64;
    /// `div.rz.ftz.f32`.
    fn float_div_rz_ftz_f32(a: f32, b: f32) -> f32;
    /// `fma.rm.f32`.
    fn float_fma_rm_f32(a: f32, b: f32, c: f32) -> f32;
    /// `fma.rm.f64`.
    fn float_fma_rm_f64(a: f64, b: f64, c: f64) -> f64;
    /// `fma.rm.ftz.f32`.
    fn float_fma_rm_ftz_f32(a: f32, b: f32, c: f32) -> f32;
    /// `fma.rm.ftz.sat.f32`.
    fn float_fma_rm_ftz_sat_f32(a: f32, b: f32, c: f32) -> f32;
    /// `fma.rm.sat.f32`.
    fn float_fma_rm_sat_f32(a: f32, b: f32, c: f32) -> f32;
    /// `fma.rn.f32`.
    fn float_fma_rn_f32(a: f32, b: f32, c: f32) -> f32;
    /// `fma.rn.f64`.
    fn float_fma_rn_f64(a: f64, b: f64, c: f64) -> f64;
    /// `fma.rn.ftz.f32`.
    fn float_fma_rn_ftz_f32(a: f32, b: f32, c: f32) -> f32;
    /// `fma.rn.ftz.sat.f32`.
    fn float_fma_rn_ftz_sat_f32(a: f32, b: f32, c: f32) -> f32;
    /// `fma.rn.sat.f32`.
    fn float_fma_rn_sat_f32(a: f32, b: f32, c: f32) -> f32;
    /// `fma.rp.f32`.
    fn float_fma_rp_f32(a: f32, b: f32, c: f32) -> f32;
    /// `fma.rp.f64`.
    fn float_fma_rp_f64(a: f64, b: f64, c: f64) -> f64;
    /// `fma.rp.ftz.f32`.
    fn float_fma_rp_ftz_f32(a: f32, b: f32, c: f32) -> f32;
    /// `fma.rp.ftz.sat.f32`.
    fn float_fma_rp_ftz_sat_f32(a: f32, b: f32, c: f32) -> f32;
    /// `fma.rp.sat.f32`.
    fn float_fma_rp_sat_f32(a: f32, b: f32, c: f32) -> f32;
    /// `fma.rz.f32`.
    fn float_fma_rz_f32(a: f32, b: f32, c: f32) -> f32;
    /// `fma.rz.f64`.
    fn float_fma_rz_f64(a: f64, b: f64, c: f64) -> f64;
    /// `fma.rz.ftz.f32`.
    fn float_fma_rz_ftz_f32(a: f32, b: f32, c: f32) -> f32;
    /// `fma.rz.ftz.sat.f32`.
    fn float_fma_rz_ftz_sat_f32(a: f32, b: f32, c: f32) -> f32;
    /// `fma.rz.sat.f32`.
    fn float_fma_rz_sat_f32(a: f32, b: f32, c: f32) -> f32;
    /// `mul.rm.f32`.
    fn float_mul_rm_f32(a: f32, b: f32) -> f32;
    /// `mul.rm.f64`.
    fn float_mul_rm_f64(a: f64, b: f64) -> f64;
    /// `mul.rm.ftz.f32`.
    fn float_mul_rm_ftz_f32(a: f32, b: f32) -> f32;
    /// `mul.rn.f32`.
    fn float_mul_rn_f32(a: f32, b: f32) -> f32;
    /// `mul.rn.f64`.
    fn float_mul_rn_f64(a: f64, b: f64) -> f64;
    /// `mul.rn.ftz.f32`.
    fn float_mul_rn_ftz_f32(a: f32, b: f32) -> f32;
    /// `mul.rp.f32`.
    fn float_mul_rp_f32(a: f32, b: f32) -> f32;
    /// `mul.rp.f64`.
    fn float_mul_rp_f64(a: f64, b: f64) -> f64;
    /// `mul.rp.ftz.f32`.
    fn float_mul_rp_ftz_f32(a: f32, b: f32) -> f32;
    /// `mul.rz.f32`.
    fn float_mul_rz_f32(a: f32, b: f32) -> f32;
    /// `mul.rz.f64`.
    fn float_mul_rz_f64(a: f64, b: f64) -> f64;
    /// `mul.rz.ftz.f32`.
    fn float_mul_rz_ftz_f32(a: f32, b: f32) -> f32;
    /// `cos.approx.f32`.
    fn float_cos_approx_f32(a: f32) -> f32;
    /// `cos.approx.ftz.f32`.
    fn float_cos_approx_ftz_f32(a: f32) -> f32;
    /// `ex2.approx.f32`.
    fn float_ex2_approx_f32(a: f32) -> f32;
    /// `ex2.approx.ftz.f32`.
    fn float_ex2_approx_ftz_f32(a: f32) -> f32;
    /// `lg2.approx.f32`.
    fn float_lg2_approx_f32(a: f32) -> f32;
    /// `lg2.approx.ftz.f32`.
    fn float_lg2_approx_ftz_f32(a: f32) -> f32;
    /// `rcp.approx.ftz.f32`.
    fn float_rcp_approx_ftz_f32(a: f32) -> f32;
    /// `rcp.approx.ftz.f64`.
    fn float_rcp_approx_ftz_f64(a: f64) -> f64;
    /// `rcp.rm.f32`.
    fn float_rcp_rm_f32(a: f32) -> f32;
    /// `rcp.rm.f64`.
    fn float_rcp_rm_f64(a: f64) -> f64;
    /// `rcp.rm.ftz.f32`.
    fn float_rcp_rm_ftz_f32(a: f32) -> f32;
    /// `rcp.rn.f32`.
    fn float_rcp_rn_f32(a: f32) -> f32;
    /// `rcp.rn.f64`.
    fn float_rcp_rn_f64(a: f64) -> f64;
    /// `rcp.rn.ftz.f32`.
    fn float_rcp_rn_ftz_f32(a: f32) -> f32;
    /// `rcp.rp.f32`.
    fn float_rcp_rp_f32(a: f32) -> f32;
    /// `rcp.rp.f64`.
    fn float_rcp_rp_f64(a: f64) -> f64;
    /// `rcp.rp.ftz.f32`.
    fn float_rcp_rp_ftz_f32(a: f32) -> f32;
    /// `rcp.rz.f32`.
    fn float_rcp_rz_f32(a: f32) -> f32;
    /// `rcp.rz.f64`.
    fn float_rcp_rz_f64(a: f64) -> f64;
    /// `rcp.rz.ftz.f32`.
    fn float_rcp_rz_ftz_f32(a: f32) -> f32;
    /// `rsqrt.approx.f32`.
    fn float_rsqrt_approx_f32(a: f32) -> f32;
    /// `rsqrt.approx.f64`.
    fn float_rsqrt_approx_f64(a: f64) -> f64;
    /// `rsqrt.approx.ftz.f32`.
    fn float_rsqrt_approx_ftz_f32(a: f32) -> f32;
    /// `sin.approx.f32`.
    fn float_sin_approx_f32(a: f32) -> f32;
    /// `sin.approx.ftz.f32`.
    fn float_sin_approx_ftz_f32(a: f32) -> f32;
    /// `sqrt.approx.f32`.
    fn float_sqrt_approx_f32(a: f32) -> f32;
    /// `sqrt.approx.ftz.f32`.
    fn float_sqrt_approx_ftz_f32(a: f32) -> f32;
    /// `sqrt.rm.f32`.
    fn float_sqrt_rm_f32(a: f32) -> f32;
    /// `sqrt.rm.f64`.
    fn float_sqrt_rm_f64(a: f64) -> f64;
    /// `sqrt.rm.ftz.f32`.
    fn float_sqrt_rm_ftz_f32(a: f32) -> f32;
    /// `sqrt.rn.f32`.
    fn float_sqrt_rn_f32(a: f32) -> f32;
    /// `sqrt.rn.f64`.
    fn float_sqrt_rn_f64(a: f64) -> f64;
    /// `sqrt.rn.ftz.f32`.
    fn float_sqrt_rn_ftz_f32(a: f32) -> f32;
    /// `sqrt.rp.f32`.
    fn float_sqrt_rp_f32(a: f32) -> f32;
    /// `sqrt.rp.f64`.
    fn float_sqrt_rp_f64(a: f64) -> f64;
    /// `sqrt.rp.ftz.f32`.
    fn float_sqrt_rp_ftz_f32(a: f32) -> f32;
    /// `sqrt.rz.f32`.
    fn float_sqrt_rz_f32(a: f32) -> f32;
    /// `sqrt.rz.f64`.
    fn float_sqrt_rz_f64(a: f64) -> f64;
    /// `sqrt.rz.ftz.f32`.
    fn float_sqrt_rz_ftz_f32(a: f32) -> f32;
    /// `tanh.approx.f32`.
    fn float_tanh_approx_f32(a: f32) -> f32;
    /// `max.ftz.NaN.xorsign.abs.f32`.
    fn float_max_ftz_nan_xorsign_abs_f32(a: f32, b: f32) -> f32;
    /// `max.ftz.xorsign.abs.f32`.
    fn float_max_ftz_xorsign_abs_f32(a: f32, b: f32) -> f32;
    /// `max.NaN.xorsign.abs.f32`.
    fn float_max_nan_xorsign_abs_f32(a: f32, b: f32) -> f32;
    /// `max.xorsign.abs.f32`.
    fn float_max_xorsign_abs_f32(a: f32, b: f32) -> f32;
    /// `min.ftz.NaN.xorsign.abs.f32`.
    fn float_min_ftz_nan_xorsign_abs_f32(a: f32, b: f32) -> f32;
    /// `min.ftz.xorsign.abs.f32`.
    fn float_min_ftz_xorsign_abs_f32(a: f32, b: f32) -> f32;
    /// `min.NaN.xorsign.abs.f32`.
    fn float_min_nan_xorsign_abs_f32(a: f32, b: f32) -> f32;
    /// `min.xorsign.abs.f32`.
    fn float_min_xorsign_abs_f32(a: f32, b: f32) -> f32;
}

// --- half.rs, convert.rs, f16x2.rs, bf16x2.rs: bfloat16 and packed halves ------------------------
// Scalars and pairs travel as their bits (`u16`, `u32`: the low half is element 0). The host
// bodies compute the same results through `f32`, for CPU references.

macro_rules! half_intrinsics {
    ($( $(#[$m:meta])* fn $name:ident ($($arg:ident: $ty:ty),*) -> $ret:ty = $host:expr; )*) => {$(
        $(#[$m])*
        #[inline(never)]
        #[cfg_attr(cuda_oxide, oxide::intrinsic)]
        pub fn $name ($($arg: $ty),*) -> $ret {
            $host
        }
    )*};
}

use crate::half::host as h;

half_intrinsics! {
    /// `cvt.rn.bf16.f32`.
    fn bf16_from_f32(x: f32) -> u16 = h::bf16_from_f32(x);
    /// `add.rn.bf16` (sm_90; `fma.rn.bf16` on sm_80).
    fn bf16_add(a: u16, b: u16) -> u16 = h::bf16_op2(a, b, |x, y| x + y);
    /// `sub.rn.bf16`.
    fn bf16_sub(a: u16, b: u16) -> u16 = h::bf16_op2(a, b, |x, y| x - y);
    /// `mul.rn.bf16`.
    fn bf16_mul(a: u16, b: u16) -> u16 = h::bf16_op2(a, b, |x, y| x * y);
    /// `fma.rn.bf16`.
    fn bf16_fma(a: u16, b: u16, c: u16) -> u16 = h::bf16_from_f32(h::bf16_to_f32(a).mul_add(h::bf16_to_f32(b), h::bf16_to_f32(c)));
    /// `add.rn.f16x2`.
    fn f16x2_add(a: u32, b: u32) -> u32 = h::f16x2_op2(a, b, |x, y| x + y);
    /// `sub.rn.f16x2`.
    fn f16x2_sub(a: u32, b: u32) -> u32 = h::f16x2_op2(a, b, |x, y| x - y);
    /// `mul.rn.f16x2`.
    fn f16x2_mul(a: u32, b: u32) -> u32 = h::f16x2_op2(a, b, |x, y| x * y);
    /// `fma.rn.f16x2`.
    fn f16x2_fma(a: u32, b: u32, c: u32) -> u32 = h::f16x2_op3(a, b, c, f32::mul_add);
    /// `fma.rn.relu.f16x2` (sm_80): negative results become 0.
    fn f16x2_fma_relu(a: u32, b: u32, c: u32) -> u32 = h::f16x2_op3(a, b, c, |x, y, z| h::relu(x.mul_add(y, z)));
    /// `min.f16x2` (sm_80).
    fn f16x2_min(a: u32, b: u32) -> u32 = h::f16x2_op2(a, b, f32::min);
    /// `max.f16x2` (sm_80).
    fn f16x2_max(a: u32, b: u32) -> u32 = h::f16x2_op2(a, b, f32::max);
    /// `add.rn.bf16x2` (sm_90; `fma.rn.bf16x2` on sm_80).
    fn bf16x2_add(a: u32, b: u32) -> u32 = h::bf16x2_op2(a, b, |x, y| x + y);
    /// `sub.rn.bf16x2`.
    fn bf16x2_sub(a: u32, b: u32) -> u32 = h::bf16x2_op2(a, b, |x, y| x - y);
    /// `mul.rn.bf16x2`.
    fn bf16x2_mul(a: u32, b: u32) -> u32 = h::bf16x2_op2(a, b, |x, y| x * y);
    /// `fma.rn.bf16x2`.
    fn bf16x2_fma(a: u32, b: u32, c: u32) -> u32 = h::bf16x2_op3(a, b, c, f32::mul_add);
    /// `fma.rn.relu.bf16x2` (sm_80).
    fn bf16x2_fma_relu(a: u32, b: u32, c: u32) -> u32 = h::bf16x2_op3(a, b, c, |x, y, z| h::relu(x.mul_add(y, z)));
    /// `min.bf16x2` (sm_80).
    fn bf16x2_min(a: u32, b: u32) -> u32 = h::bf16x2_op2(a, b, f32::min);
    /// `max.bf16x2` (sm_80).
    fn bf16x2_max(a: u32, b: u32) -> u32 = h::bf16x2_op2(a, b, f32::max);
    /// `cvt.rn.f16x2.f32`: `lo` to the low half, `hi` to the high half.
    fn cvt_rn_f16x2_f32(lo: f32, hi: f32) -> u32 = h::pack(h::f16_from_f32(lo), h::f16_from_f32(hi));
    /// `cvt.rn.relu.f16x2.f32` (sm_80).
    fn cvt_rn_relu_f16x2_f32(lo: f32, hi: f32) -> u32 = h::pack(h::f16_from_f32(h::relu(lo)), h::f16_from_f32(h::relu(hi)));
    /// `cvt.rn.bf16x2.f32` (sm_80).
    fn cvt_rn_bf16x2_f32(lo: f32, hi: f32) -> u32 = h::pack(h::bf16_from_f32(lo), h::bf16_from_f32(hi));
    /// `cvt.rn.relu.bf16x2.f32` (sm_80).
    fn cvt_rn_relu_bf16x2_f32(lo: f32, hi: f32) -> u32 = h::pack(h::bf16_from_f32(h::relu(lo)), h::bf16_from_f32(h::relu(hi)));
    /// `cvt.rz.f16x2.f32`: rounds toward zero.
    fn cvt_rz_f16x2_f32(lo: f32, hi: f32) -> u32 = h::pack(h::f16_rz_from_f32(lo), h::f16_rz_from_f32(hi));
    /// `cvt.rz.bf16x2.f32` (sm_80): rounds toward zero.
    fn cvt_rz_bf16x2_f32(lo: f32, hi: f32) -> u32 = h::pack(h::bf16_rz_from_f32(lo), h::bf16_rz_from_f32(hi));
    /// `cvt.rna.tf32.f32` (sm_80): to TensorFloat-32, nearest with ties away from zero; the
    /// 13 low bits of the host result are 0 (`mma` ignores them).
    fn cvt_rna_tf32_f32(x: f32) -> u32 = h::tf32_rna(x);
    /// `fma.rn.ftz.f16x2`: subnormal inputs and results become zero of the same sign.
    fn f16x2_fma_ftz(a: u32, b: u32, c: u32) -> u32 = h::f16x2_fma_with(a, b, c, true, |x| x);
    /// `fma.rn.sat.f16x2`: results clamped to [0, 1] (NaN to +0).
    fn f16x2_fma_sat(a: u32, b: u32, c: u32) -> u32 = h::f16x2_fma_with(a, b, c, false, h::sat);
    /// `fma.rn.ftz.sat.f16x2`.
    fn f16x2_fma_ftz_sat(a: u32, b: u32, c: u32) -> u32 = h::f16x2_fma_with(a, b, c, true, h::sat);
    /// `fma.rn.ftz.relu.f16x2` (sm_80).
    fn f16x2_fma_ftz_relu(a: u32, b: u32, c: u32) -> u32 = h::f16x2_fma_with(a, b, c, true, h::relu);
}

intrinsics! {
    /// `atom.add.noftz.f16x2 [ptr], val` (device scope, relaxed): each half is added atomically
    /// on its own; returns the old pair. `ptr` points to global memory.
    fn atom_add_noftz_f16x2(ptr: *mut u32, val: u32) -> u32;
    /// `atom.add.noftz.bf16x2 [ptr], val` (sm_90).
    fn atom_add_noftz_bf16x2(ptr: *mut u32, val: u32) -> u32;
}

intrinsics! {
    // --- async_copy.rs: cp.async (sm_80) ------------------------------------------------------
    /// `cp.async.ca.shared.global [dst], [src], 4`: `dst` a shared-memory address, `src` global.
    fn cp_async_ca_4(dst: *mut u8, src: *const u8);
    /// `cp.async.ca.shared.global [dst], [src], 8`.
    fn cp_async_ca_8(dst: *mut u8, src: *const u8);
    /// `cp.async.ca.shared.global [dst], [src], 16`.
    fn cp_async_ca_16(dst: *mut u8, src: *const u8);
    /// `cp.async.cg.shared.global [dst], [src], 16` (bypasses L1).
    fn cp_async_cg_16(dst: *mut u8, src: *const u8);
    /// `cp.async.ca.shared.global [dst], [src], 4, src_size`: bytes past `src_size` become 0.
    fn cp_async_ca_zfill_4(dst: *mut u8, src: *const u8, src_size: u32);
    /// `cp.async.ca.shared.global [dst], [src], 8, src_size`.
    fn cp_async_ca_zfill_8(dst: *mut u8, src: *const u8, src_size: u32);
    /// `cp.async.ca.shared.global [dst], [src], 16, src_size`.
    fn cp_async_ca_zfill_16(dst: *mut u8, src: *const u8, src_size: u32);
    /// `cp.async.cg.shared.global [dst], [src], 16, src_size`.
    fn cp_async_cg_zfill_16(dst: *mut u8, src: *const u8, src_size: u32);
    /// `cp.async.commit_group`.
    fn cp_async_commit_group();
    /// `cp.async.wait_group n` for `n` in 0..=7 (larger waits for 7); an immediate once inlined.
    fn cp_async_wait_group(n: u32);
    /// `cp.async.wait_all`.
    fn cp_async_wait_all();
}

/// One `ptx_asm!` statement `S` (see [`crate::inline_ptx`]): reads the register inputs from the
/// tuple `*ins`, runs the PTX and writes the outputs to the tuple `*outs`.
///
/// # Safety
/// What the PTX does must be sound; `outs` is valid for writes.
#[inline(never)]
#[cfg_attr(cuda_oxide, oxide::intrinsic)]
#[allow(unused_variables)]
pub unsafe fn ptx_asm<S: crate::inline_ptx::PtxAsmSite, I, O>(ins: *const I, outs: *mut O) {
    device_only("ptx_asm")
}

/// Marks the loop whose body starts with it for unrolling (`N`: 0 fully, 1 not at all, else
/// by `N`): the backend drops the call and puts `llvm.loop.unroll` metadata on the loop. Written
/// by `#[unroll]` on a loop in a `#[kernel]` / `#[device]` function, or by [`crate::unroll!`].
#[inline(never)]
#[cfg_attr(cuda_oxide, oxide::intrinsic)]
pub fn loop_unroll<const N: u32>() {}

intrinsics! {
    // --- mma.rs: warp-level matrix multiply-accumulate and ldmatrix/stmatrix ----------------
    // Fragments travel through pointers to the caller's registers (arrays the optimiser keeps
    // in registers once the intrinsic is inlined): `a`, `b` and `c` are read, `d` written.
    /// `mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32` (sm_80): `a` 4 regs, `b` 2, `c`/`d` 4.
    fn mma_m16n8k16_bf16_f32(d: *mut f32, a: *const u32, b: *const u32, c: *const f32);
    /// `mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32` (sm_80).
    fn mma_m16n8k16_f16_f32(d: *mut f32, a: *const u32, b: *const u32, c: *const f32);
    /// `mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32` (sm_80): `a` 4 regs, `b` 2, `c`/`d` 4.
    fn mma_m16n8k8_tf32_f32(d: *mut f32, a: *const u32, b: *const u32, c: *const f32);
    /// `mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32` (sm_80): `a` 4 regs, `b` 2, `c`/`d` 4.
    fn mma_m16n8k32_s8_s32(d: *mut i32, a: *const u32, b: *const u32, c: *const i32);
    /// `ldmatrix.sync.aligned.m8n8.x1.shared.b16`: one register to `out[0]`.
    fn ldmatrix_x1(out: *mut u32, addr: *const u8);
    /// `ldmatrix.sync.aligned.m8n8.x2.shared.b16`.
    fn ldmatrix_x2(out: *mut u32, addr: *const u8);
    /// `ldmatrix.sync.aligned.m8n8.x4.shared.b16`.
    fn ldmatrix_x4(out: *mut u32, addr: *const u8);
    /// `ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16`.
    fn ldmatrix_x1_trans(out: *mut u32, addr: *const u8);
    /// `ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16`.
    fn ldmatrix_x2_trans(out: *mut u32, addr: *const u8);
    /// `ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16`.
    fn ldmatrix_x4_trans(out: *mut u32, addr: *const u8);
    /// `stmatrix.sync.aligned.m8n8.x1.shared.b16` (sm_90): `v[0]` to the row at `addr`.
    fn stmatrix_x1(addr: *mut u8, v: *const u32);
    /// `stmatrix.sync.aligned.m8n8.x2.shared.b16` (sm_90).
    fn stmatrix_x2(addr: *mut u8, v: *const u32);
    /// `stmatrix.sync.aligned.m8n8.x4.shared.b16` (sm_90).
    fn stmatrix_x4(addr: *mut u8, v: *const u32);
    /// `stmatrix.sync.aligned.m8n8.x1.trans.shared.b16` (sm_90).
    fn stmatrix_x1_trans(addr: *mut u8, v: *const u32);
    /// `stmatrix.sync.aligned.m8n8.x2.trans.shared.b16` (sm_90).
    fn stmatrix_x2_trans(addr: *mut u8, v: *const u32);
    /// `stmatrix.sync.aligned.m8n8.x4.trans.shared.b16` (sm_90).
    fn stmatrix_x4_trans(addr: *mut u8, v: *const u32);

    // --- mbarrier.rs: shared-memory barriers with transaction counts (sm_80 / sm_90) -----------
    /// `mbarrier.init.shared.b64 [bar], count`.
    fn mbarrier_init(bar: *mut u64, count: u32);
    /// `mbarrier.inval.shared.b64 [bar]`.
    fn mbarrier_inval(bar: *mut u64);
    /// `mbarrier.arrive.shared.b64 state, [bar]`.
    fn mbarrier_arrive(bar: *mut u64) -> u64;
    /// `mbarrier.arrive.expect_tx.shared::cta.b64 state, [bar], bytes` (sm_90).
    fn mbarrier_arrive_expect_tx(bar: *mut u64, bytes: u32) -> u64;
    /// `mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [bar], bytes` (sm_90).
    fn mbarrier_expect_tx(bar: *mut u64, bytes: u32);
    /// `mbarrier.try_wait.parity.shared::cta.b64 p, [bar], parity` (sm_90): 1 when the phase
    /// with that parity has completed.
    fn mbarrier_try_wait_parity(bar: *mut u64, parity: u32) -> u32;
    /// `mbarrier.try_wait.shared::cta.b64 p, [bar], state` (sm_90): 1 when the phase `state`
    /// (from an arrive) belongs to has completed; may suspend the thread a while first.
    fn mbarrier_try_wait(bar: *mut u64, state: u64) -> u32;
    /// `mbarrier.test_wait.shared.b64 p, [bar], state` (sm_80): as `mbarrier_try_wait`,
    /// without suspending.
    fn mbarrier_test_wait(bar: *mut u64, state: u64) -> u32;
    /// `mbarrier.arrive.release.cluster.shared::cluster.b64 _, [addr]` (sm_90): one arrival on
    /// the barrier at `shared::cluster` address `addr` (possibly in another block of the cluster).
    fn mbarrier_arrive_cluster(addr: u32);
    /// `mapa.shared::cluster.u32 remote, bar, rank; mbarrier.arrive.shared::cluster.b64 _,
    /// [remote]` (sm_90): one arrival (release at CTA scope) on the barrier at `bar`'s place in
    /// block `rank` of the cluster.
    fn mbarrier_arrive_remote(bar: *mut u64, rank: u32);
    /// `cp.async.mbarrier.arrive.shared.b64 [bar]` (sm_80): an arrival on `bar` once this
    /// thread's earlier `cp.async` copies complete; the pending count is raised first, so the
    /// barrier's expected count stays as it was.
    fn cp_async_mbarrier_arrive(bar: *mut u64);
    /// `cp.async.mbarrier.arrive.noinc.shared.b64 [bar]` (sm_80): as
    /// `cp_async_mbarrier_arrive`, but the arrival counts towards the expected count.
    fn cp_async_mbarrier_arrive_noinc(bar: *mut u64);
    /// `fence.proxy.async.shared::cta`: orders this thread's generic-proxy shared-memory accesses
    /// with later async-proxy ones (TMA, wgmma) (sm_90).
    fn fence_proxy_async_shared_cta();
    /// `fence.mbarrier_init.release.cluster` (sm_90).
    fn fence_mbarrier_init_release_cluster();
    /// `elect.sync _|p, mask` (sm_90): 1 in exactly one active lane of `mask`.
    fn elect_sync(mask: u32) -> u32;

    // --- wgmma.rs: warpgroup MMA (sm_90a) -----------------------------------------------------
    /// `wgmma.fence.sync.aligned`.
    fn wgmma_fence();
    /// `wgmma.commit_group.sync.aligned`.
    fn wgmma_commit_group();

    // --- tma.rs: bulk tensor copies (sm_90) ----------------------------------------------------
    /// `cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
    /// [dst], [map, {x, y}], [bar]`: `map` the generic address of a 128-byte `CUtensorMap`.
    fn cp_async_bulk_tensor_2d_g2s(dst: *mut u8, map: *const u8, x: i32, y: i32, bar: *mut u64);
    /// `cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [map, {x, y}], [src]`.
    fn cp_async_bulk_tensor_2d_s2g(map: *const u8, x: i32, y: i32, src: *const u8);
    /// `cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
    /// [dst], [map, {x, y, z}], [bar]`.
    fn cp_async_bulk_tensor_3d_g2s(dst: *mut u8, map: *const u8, x: i32, y: i32, z: i32, bar: *mut u64);
    /// `cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [map, {x, y, z}], [src]`.
    fn cp_async_bulk_tensor_3d_s2g(map: *const u8, x: i32, y: i32, z: i32, src: *const u8);
    /// `cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
    /// .multicast::cluster [dst], [map, {x, y}], [bar], mask`: the tile lands at `dst`'s offset in
    /// the shared memory of every block of the cluster whose rank bit is set in `mask`, and
    /// completes on the mbarrier at `bar`'s offset in each of them.
    fn cp_async_bulk_tensor_2d_g2s_multicast(dst: *mut u8, map: *const u8, x: i32, y: i32, bar: *mut u64, mask: u16);
    /// As `cp_async_bulk_tensor_2d_g2s_multicast`, for a 3D box.
    fn cp_async_bulk_tensor_3d_g2s_multicast(
        dst: *mut u8,
        map: *const u8,
        x: i32,
        y: i32,
        z: i32,
        bar: *mut u64,
        mask: u16
    );
    /// `cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [dst], [src], bytes,
    /// [bar]`: `bytes` contiguous bytes (a multiple of 16) from global `src` to shared `dst`,
    /// both 16-byte aligned, counted on the mbarrier at `bar` (no tensor map).
    fn cp_async_bulk_g2s(dst: *mut u8, src: *const u8, bytes: u32, bar: *mut u64);
    /// `cp.async.bulk.commit_group`.
    fn cp_async_bulk_commit_group();
    /// `cp.async.bulk.wait_group.read 0`: the sources of every committed bulk store were read.
    fn cp_async_bulk_wait_group_read0();
    /// `cp.async.bulk.wait_group.read 1`: those of all but the newest.
    fn cp_async_bulk_wait_group_read1();
    /// `cp.async.bulk.wait_group 0`: every committed bulk store is complete.
    fn cp_async_bulk_wait_group0();
    /// `prefetch.tensormap [map]`.
    fn prefetch_tensormap(map: *const u8);
}

/// `setmaxnreg.inc.sync.aligned.u32 N` (sm_90a): raises this warp's register limit to `N`.
#[inline(never)]
#[cfg_attr(cuda_oxide, oxide::intrinsic)]
pub fn setmaxnreg_inc<const N: u32>() {
    device_only("setmaxnreg_inc")
}

/// `setmaxnreg.dec.sync.aligned.u32 N` (sm_90a): lowers this warp's register limit to `N`.
#[inline(never)]
#[cfg_attr(cuda_oxide, oxide::intrinsic)]
pub fn setmaxnreg_dec<const N: u32>() {
    device_only("setmaxnreg_dec")
}

/// `wgmma.wait_group.sync.aligned PENDING`, tying the `NACC` accumulator registers at `acc` to
/// the wait so that no read of them moves above it.
#[inline(never)]
#[cfg_attr(cuda_oxide, oxide::intrinsic)]
#[allow(unused_variables)]
pub fn wgmma_wait_group<const PENDING: u32, const NACC: usize>(acc: *mut f32) {
    device_only("wgmma_wait_group")
}

/// `wgmma.mma_async.sync.aligned.m64n<2 NACC>k16.f32.<bf16|f16>` (sm_90a) with A and B from
/// shared-memory descriptors: the `NACC` registers at `acc` are read and written; `scale_d` 0
/// ignores them. `F16`: 0 bf16, 1 f16; `TRANS_A`: 1 when A is M-major in shared memory;
/// `TRANS_B`: 1 when B is N-major.
#[inline(never)]
#[cfg_attr(cuda_oxide, oxide::intrinsic)]
#[allow(unused_variables)]
pub fn wgmma_m64k16_f32<const NACC: usize, const F16: u32, const TRANS_A: u32, const TRANS_B: u32>(
    acc: *mut f32,
    desc_a: u64,
    desc_b: u64,
    scale_d: u32,
) {
    device_only("wgmma_m64k16_f32")
}

/// `wgmma.mma_async.sync.aligned.m64n<2 NACC>k16.f32.<bf16|f16>` (sm_90a) with A from registers
/// (`a0..a3`, this thread's four packed pairs of the 64×16 A tile) and B from a shared-memory
/// descriptor: as [`wgmma_m64k16_f32`] otherwise.
#[inline(never)]
#[cfg_attr(cuda_oxide, oxide::intrinsic)]
#[allow(unused_variables, clippy::too_many_arguments)]
pub fn wgmma_m64k16_f32_rs<const NACC: usize, const F16: u32, const TRANS_B: u32>(
    acc: *mut f32,
    a0: u32,
    a1: u32,
    a2: u32,
    a3: u32,
    desc_b: u64,
    scale_d: u32,
) {
    device_only("wgmma_m64k16_f32_rs")
}

/// `wgmma.mma_async.sync.aligned.m64n<2 NACC>k32.f32.<e4m3|e5m2>.<e4m3|e5m2>` (sm_90a) with A
/// and B K-major from shared-memory descriptors (fp8 has no transposed form). `A_E5M2`,
/// `B_E5M2`: 0 e4m3, 1 e5m2.
#[inline(never)]
#[cfg_attr(cuda_oxide, oxide::intrinsic)]
#[allow(unused_variables)]
pub fn wgmma_m64k32_f32_fp8<const NACC: usize, const A_E5M2: u32, const B_E5M2: u32>(
    acc: *mut f32,
    desc_a: u64,
    desc_b: u64,
    scale_d: u32,
) {
    device_only("wgmma_m64k32_f32_fp8")
}
