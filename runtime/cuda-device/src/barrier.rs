//! NVIDIA cuda-oxide's names for mbarriers: a [`Barrier`] `static` in shared memory and free
//! functions over raw pointers to it. They are thin wrappers over the same operations as
//! [`crate::mbarrier`] (our documented API: [`MBarrier`](crate::mbarrier::MBarrier) and
//! [`Phase`](crate::mbarrier::Phase)), kept so that code written for NVIDIA's crate builds
//! unchanged (docs/compatibility.md lists them).
//!
//! ```no_run
//! # use cuda_device::{DisjointSlice, cuda_module, kernel, thread};
//! use cuda_device::barrier::{Barrier, mbarrier_arrive, mbarrier_init, mbarrier_inval, mbarrier_wait};
//!
//! #[cuda_module]
//! mod kernels {
//!     use super::*;
//!
//!     /// Every thread of the block meets at the barrier, then writes 1.
//!     #[kernel]
//!     pub fn meet(mut out: DisjointSlice<u32>) {
//!         static mut BAR: Barrier = Barrier::UNINIT;
//!         let tid = thread::threadIdx_x();
//!         if tid == 0 {
//!             unsafe { mbarrier_init(&raw mut BAR, thread::blockDim_x()) };
//!         }
//!         thread::sync_threads();
//!         let token = unsafe { mbarrier_arrive(&raw const BAR) };
//!         unsafe { mbarrier_wait(&raw const BAR, token) };
//!         if let Some(o) = out.get_mut(thread::index_1d()) {
//!             *o = 1;
//!         }
//!         thread::sync_threads();
//!         if tid == 0 {
//!             unsafe { mbarrier_inval(&raw mut BAR) };
//!         }
//!     }
//! }
//! # fn main() {}
//! ```

mod managed;

pub use managed::{
    BarrierToken, GeneralBarrier, Invalidated, ManagedBarrier, MmaBarrier, MmaBarrierHandle, Ready, TmaBarrier,
    TmaBarrier0, TmaBarrier1, TmaBarrierHandle, Uninit,
};

use crate::intrinsics;
use crate::shared::SharedArray;

/// One mbarrier: 8 bytes of this block's shared memory, 8-byte aligned. Declare it as a
/// `static mut` inside a kernel, `static mut BAR: Barrier = Barrier::UNINIT;`, and pass
/// `&raw mut BAR` / `&raw const BAR` to the functions of this module.
///
/// It is a [`SharedArray`] of one `u64` (so it lives in `.shared` like any other), not a type
/// of its own: `SharedArray::as_raw_mut_ptr(&raw mut BAR)` gives the `*mut u64` that
/// [`MBarrier::new`](crate::mbarrier::MBarrier::new) takes.
pub type Barrier = SharedArray<u64, 1, 8>;

#[inline(always)]
fn raw(bar: *const Barrier) -> *mut u64 {
    bar.cast::<u64>().cast_mut()
}

/// `mbarrier.init`: phase 0, expecting `expected_count` arrivals per phase (sm_80).
///
/// # Safety
/// `bar` is a [`Barrier`] of this block; one thread initialises it before any other use, and a
/// block barrier (`sync_threads`) follows before other threads use it.
#[inline(always)]
pub unsafe fn mbarrier_init(bar: *mut Barrier, expected_count: u32) {
    intrinsics::mbarrier_init(raw(bar), expected_count)
}

/// `mbarrier.inval`: the barrier's memory may be used for something else afterwards (sm_80).
///
/// # Safety
/// `bar` is an initialised [`Barrier`] that no thread uses any more.
#[inline(always)]
pub unsafe fn mbarrier_inval(bar: *mut Barrier) {
    intrinsics::mbarrier_inval(raw(bar))
}

/// `mbarrier.arrive`: one arrival on the current phase; returns the token of that phase for
/// [`mbarrier_wait`] / [`mbarrier_try_wait`] (sm_80).
///
/// # Safety
/// `bar` is an initialised [`Barrier`] of this block.
#[inline(always)]
pub unsafe fn mbarrier_arrive(bar: *const Barrier) -> u64 {
    intrinsics::mbarrier_arrive(raw(bar))
}

/// `mbarrier.arrive.expect_tx`: expect `bytes` more bytes of asynchronous copies (TMA) in the
/// current phase, and arrive once (sm_90). `_tx_count` is unused (NVIDIA's signature has it).
///
/// # Safety
/// `bar` is an initialised [`Barrier`] of this block.
#[inline(always)]
pub unsafe fn mbarrier_arrive_expect_tx(bar: *const Barrier, _tx_count: u32, bytes: u32) -> u64 {
    intrinsics::mbarrier_arrive_expect_tx(raw(bar), bytes)
}

/// `mbarrier.arrive.release.cluster.shared::cluster`: one arrival on the barrier at
/// `remote_bar_addr`, a `shared::cluster` address (sm_90). Get it from the barrier's generic
/// address in the target block with
/// `cvta_generic_to_shared_offset(cluster::map_shared_rank(&raw const BAR, rank) as *const u8)`.
///
/// # Safety
/// `remote_bar_addr` is the address of an initialised barrier of a block of this cluster that
/// is still running (`cluster::sync()` before the first and after the last use).
#[inline(always)]
pub unsafe fn mbarrier_arrive_cluster(remote_bar_addr: u64) {
    // Shared-window addresses are 32-bit; the upper half of the offset is always zero.
    intrinsics::mbarrier_arrive_cluster(remote_bar_addr as u32)
}

/// `mbarrier.try_wait`: `true` once the phase that `token` (from an arrive) belongs to has
/// completed; the hardware may suspend the thread a while before answering `false` (sm_90).
///
/// # Safety
/// `bar` is an initialised [`Barrier`] of this block and `token` came from an arrive on it.
#[inline(always)]
pub unsafe fn mbarrier_try_wait(bar: *const Barrier, token: u64) -> bool {
    intrinsics::mbarrier_try_wait(raw(bar), token) != 0
}

/// `mbarrier.test_wait`: as [`mbarrier_try_wait`] without suspending the thread (sm_80).
///
/// # Safety
/// As [`mbarrier_try_wait`].
#[inline(always)]
pub unsafe fn mbarrier_test_wait(bar: *const Barrier, token: u64) -> bool {
    intrinsics::mbarrier_test_wait(raw(bar), token) != 0
}

/// `mbarrier.try_wait.parity`: `true` once the phase of parity `parity & 1` has completed
/// (sm_90).
///
/// # Safety
/// `bar` is an initialised [`Barrier`] of this block.
#[inline(always)]
pub unsafe fn mbarrier_try_wait_parity(bar: *const Barrier, parity: u32) -> bool {
    intrinsics::mbarrier_try_wait_parity(raw(bar), parity & 1) != 0
}

/// Waits until the phase that `token` belongs to has completed (spinning on
/// [`mbarrier_test_wait`], so it runs on sm_80 too).
///
/// # Safety
/// As [`mbarrier_try_wait`]; enough threads arrive for the phase to complete, or this waits
/// forever.
#[inline(always)]
pub unsafe fn mbarrier_wait(bar: *const Barrier, token: u64) {
    while intrinsics::mbarrier_test_wait(raw(bar), token) == 0 {}
}

/// `fence.proxy.async.shared::cta` (sm_90): the same as
/// [`mbarrier::fence_proxy_async`](crate::mbarrier::fence_proxy_async).
///
/// # Safety
/// None beyond running on sm_90 (NVIDIA's signature is `unsafe`).
#[inline(always)]
pub unsafe fn fence_proxy_async_shared_cta() {
    intrinsics::fence_proxy_async_shared_cta()
}

/// Suspends the thread for about `ns` nanoseconds: [`debug::nanosleep`](crate::debug::nanosleep).
///
/// # Safety
/// None (NVIDIA's signature is `unsafe`).
#[inline(always)]
pub unsafe fn nanosleep(ns: u32) {
    crate::debug::nanosleep(ns)
}
