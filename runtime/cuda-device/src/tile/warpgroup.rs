//! Warp specialisation: which warpgroup (4 consecutive warps, 128 threads) a thread belongs to,
//! moving registers from a producer warpgroup to the consumer warpgroups (`setmaxnreg`, sm_90a),
//! and a barrier over some warpgroups only (a named barrier, `bar.sync id, threads`).
//!
//! ```ignore
//! #[kernel]
//! #[launch_bounds(384, 1)] // 1 producer + 2 consumer warpgroups; the cap setmaxnreg needs
//! pub fn k(..) {
//!     if warpgroup::index() == 0 {
//!         unsafe { warpgroup::producer_registers::<40>() };   // 40 × 128
//!         /* one thread issues TMA */
//!     } else {
//!         unsafe { warpgroup::consumer_registers::<232>() };  // + 232 × 256 ≤ 65536
//!         /* wgmma on 64 rows each; epilogue; */
//!         unsafe { warpgroup::sync(1 + warpgroup::index(), 128) }; // this warpgroup only
//!     }
//! }
//! ```

use crate::{mbarrier, thread};

/// Threads in a warpgroup.
pub const THREADS: u32 = 128;

/// This thread's warpgroup in a 1D block: `threadIdx.x / 128`.
#[inline(always)]
pub fn index() -> u32 {
    thread::threadIdx_x() / THREADS
}

/// This thread's place in its warpgroup, `0..128` (the `t` of `wgmma::Accumulator::coord`).
#[inline(always)]
pub fn thread() -> u32 {
    thread::threadIdx_x() % THREADS
}

/// Whether this thread is the first of its warpgroup (the one that issues or arrives for it).
#[inline(always)]
pub fn is_leader() -> bool {
    thread() == 0
}

/// Gives registers back: this warp's limit drops to `N` (`setmaxnreg.dec`, sm_90a), for a
/// producer warpgroup that only issues copies. `N` in 24..=256, a multiple of 8.
///
/// # Safety
/// As [`mbarrier::setmaxnreg_dec`]: every warp of the warpgroup calls it together, from one
/// branch of the kernel's producer/consumer split, and lives with `N` registers afterwards.
#[inline(always)]
pub unsafe fn producer_registers<const N: u32>() {
    unsafe { mbarrier::setmaxnreg_dec::<N>() }
}

/// Takes registers: this warp's limit rises to `N` (`setmaxnreg.inc`, sm_90a), for a consumer
/// warpgroup holding accumulators. The kernel needs a register cap at entry
/// (`#[launch_bounds(threads, 1)]`), and the warpgroups' limits together must fit the SM's
/// 65536 (e.g. 40 × 128 + 232 × 256), or the increase waits forever.
///
/// # Safety
/// As [`mbarrier::setmaxnreg_inc`].
#[inline(always)]
pub unsafe fn consumer_registers<const N: u32>() {
    unsafe { mbarrier::setmaxnreg_inc::<N>() }
}

/// `bar.sync id, threads`: waits until `threads` threads (a multiple of 32) have arrived at
/// named barrier `id` (1..=15; 0 is the one `sync_threads` uses). Orders shared-memory accesses
/// among them as `sync_threads` does for the block, e.g. among one warpgroup's 128 threads
/// before its leader starts a TMA store of what they wrote.
///
/// # Safety
/// Every warp that uses barrier `id` in this phase arrives with all its threads, and exactly
/// `threads` threads use it per phase (a different count, or a missing warp, hangs or breaks
/// other barriers).
#[inline(always)]
pub unsafe fn sync(id: u32, threads: u32) {
    unsafe { crate::ptx_asm!("bar.sync %0, %1;", in("r") id, in("r") threads, clobber("memory")) }
}

/// `bar.arrive id, threads`: arrives at named barrier `id` without waiting; the phase completes
/// when `threads` threads have arrived, some through [`sync`] (which waits). A warpgroup hands
/// another the next turn this way: the other waits in `sync(id, 256)`, this one arrives with
/// `arrive(id, 256)` (ping-pong consumers ordering their mainloops).
///
/// # Safety
/// As [`sync`]: whole warps, `threads` threads per phase in all, `id` used by no one else then.
#[inline(always)]
pub unsafe fn arrive(id: u32, threads: u32) {
    unsafe { crate::ptx_asm!("bar.arrive %0, %1;", in("r") id, in("r") threads, clobber("memory")) }
}
