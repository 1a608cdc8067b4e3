//! Warp specialisation: which warpgroup (4 consecutive warps, 128 threads) a thread belongs to,
//! moving registers from a producer warpgroup to the consumer warpgroups (`setmaxnreg`, sm_90a),
//! a barrier over some warpgroups only (a named barrier, `bar.sync id, threads`), and two
//! consumer warpgroups taking turns on the tensor cores through two of them ([`Turns`]).
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

/// [`index`], broadcast from lane 0 (`shfl.sync`): the same number, but ptxas now knows every
/// lane of the warp holds it, so what is computed from it — a consumer's `wgmma` descriptors of
/// its own rows — lives in uniform registers instead of being moved there before each `wgmma`
/// (`R2UR`). All 32 lanes of the warp call it together (converged), e.g. before the
/// producer/consumer split.
#[inline(always)]
pub fn index_uniform() -> u32 {
    crate::warp::shfl_sync(u32::MAX, index(), 0)
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
    crate::intrinsics::bar_sync_count(id, threads)
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
    crate::intrinsics::bar_arrive_count(id, threads)
}

/// Two consumer warpgroups taking turns issuing their `wgmma`s (FlashAttention-3's ping-pong:
/// one's softmax runs while the other's products do), through named barriers `id` (consumer
/// 0's turn) and `id + 1` (consumer 1's), each phase counting 256 threads: one warpgroup's
/// [`wait`](Self::wait) and the other's [`pass`](Self::pass). Consumer 0 goes first. With `ON`
/// false every method does nothing, so one kernel body serves both schedules.
///
/// ```ignore
/// let turns = unsafe { Turns::<PINGPONG>::new(1, consumer) };
/// for batch in .. {
///     unsafe { turns.wait(); wgmma::fence(); /* mma_async… */ wgmma::commit_group(); turns.pass() };
/// }
/// unsafe { turns.finish() };
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Turns<const ON: bool> {
    mine: u32,
    other: u32,
}

impl<const ON: bool> Turns<ON> {
    /// Consumer `c`'s (0 or 1) side of the turns on barriers `id` and `id + 1`. Consumer 1
    /// arrives on consumer 0's barrier, so that consumer 0's first wait passes.
    ///
    /// # Safety
    /// As [`arrive`], for all 128 threads of each of the two warpgroups; barriers `id` and
    /// `id + 1` (1..=14) serve only these turns; both consumers take as many turns
    /// (a [`wait`](Self::wait) then a [`pass`](Self::pass) each) and then call
    /// [`finish`](Self::finish).
    #[inline(always)]
    pub unsafe fn new(id: u32, c: u32) -> Self {
        if ON && c == 1 {
            unsafe { arrive(id, 256) };
        }
        Turns { mine: id + c, other: id + 1 - c }
    }

    /// Waits for this warpgroup's turn.
    ///
    /// # Safety
    /// As [`new`](Self::new): the whole warpgroup, in turn order.
    #[inline(always)]
    pub unsafe fn wait(self) {
        if ON {
            unsafe { sync(self.mine, 256) };
        }
    }

    /// Gives the other warpgroup its turn (after issuing this turn's `wgmma`s).
    ///
    /// # Safety
    /// As [`wait`](Self::wait).
    #[inline(always)]
    pub unsafe fn pass(self) {
        if ON {
            unsafe { arrive(self.other, 256) };
        }
    }

    /// After the last turn: consumer 0 waits once more, completing the phase that consumer
    /// 1's last [`pass`](Self::pass) opened (every barrier phase completes before exit).
    ///
    /// # Safety
    /// As [`wait`](Self::wait).
    #[inline(always)]
    pub unsafe fn finish(self) {
        if ON && self.mine < self.other {
            unsafe { sync(self.mine, 256) };
        }
    }
}
