//! mbarriers (sm_80; transaction counts sm_90): 64-bit barriers in shared memory that count
//! arrivals and, for TMA, bytes. A phase completes when the expected arrivals have arrived and
//! the expected bytes have landed; waiters test the *parity* of the phase they wait for.
//!
//! [`MBarrier`] is the raw barrier (a shared-memory address); [`Phase`] tracks the parity for a
//! waiter so that a loop cannot wait on the wrong phase:
//!
//! ```ignore
//! static BAR: SharedMemory<u64, 1, 8> = SharedMemory::UNINIT;
//! let bar = unsafe { MBarrier::new(BAR.as_mut_ptr()) };
//! if thread::threadIdx_x() == 0 { unsafe { bar.init(1) }; mbarrier::fence_init(); }
//! sync_threads();
//! let mut phase = Phase::new(bar);
//! loop {
//!     if thread::threadIdx_x() == 0 { unsafe { bar.arrive_expect_tx(BYTES); /* start TMA */ } }
//!     phase.wait(); // waits for the current phase, then expects the next one
//! }
//! ```
//!
//! Also here: `fence.proxy.async` ([`fence_proxy_async`]), `elect.sync` ([`elect_one`]) and
//! `setmaxnreg` ([`setmaxnreg_inc`], [`setmaxnreg_dec`]) for warp-specialised kernels.

use crate::intrinsics;

/// A barrier object in this block's shared memory (its address).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MBarrier {
    bar: *mut u64,
}

impl MBarrier {
    /// The barrier at `bar`.
    ///
    /// # Safety
    /// `bar` is an 8-byte aligned `u64` in this block's shared memory that stays a barrier
    /// (is not read or written as data) while this value is used.
    #[inline(always)]
    pub const unsafe fn new(bar: *mut u64) -> MBarrier {
        MBarrier { bar }
    }

    /// The barrier's address.
    #[inline(always)]
    pub const fn as_ptr(self) -> *mut u64 {
        self.bar
    }

    /// `mbarrier.init`: phase 0, expecting `count` arrivals per phase.
    ///
    /// # Safety
    /// One thread initialises, before any other use, followed by [`fence_init`] and a block
    /// barrier (`sync_threads`) so that other threads see it initialised.
    #[inline(always)]
    pub unsafe fn init(self, count: u32) {
        intrinsics::mbarrier_init(self.bar, count)
    }

    /// `mbarrier.inval`: the memory may be reused after every thread is done with the barrier.
    ///
    /// # Safety
    /// No thread uses the barrier afterwards.
    #[inline(always)]
    pub unsafe fn inval(self) {
        intrinsics::mbarrier_inval(self.bar)
    }

    /// `mbarrier.arrive`: one arrival on the current phase; returns the opaque phase state.
    #[inline(always)]
    pub fn arrive(self) -> u64 {
        intrinsics::mbarrier_arrive(self.bar)
    }

    /// `mbarrier.arrive.expect_tx` (sm_90): expect `bytes` more bytes of asynchronous copies in
    /// the current phase, and arrive once.
    #[inline(always)]
    pub fn arrive_expect_tx(self, bytes: u32) -> u64 {
        intrinsics::mbarrier_arrive_expect_tx(self.bar, bytes)
    }

    /// `mbarrier.expect_tx` (sm_90): expect `bytes` more bytes without arriving.
    #[inline(always)]
    pub fn expect_tx(self, bytes: u32) {
        intrinsics::mbarrier_expect_tx(self.bar, bytes)
    }

    /// `mbarrier.try_wait.parity` (sm_90): `true` once the phase of parity `parity & 1` has
    /// completed (the hardware may suspend the thread a while before answering `false`).
    #[inline(always)]
    pub fn try_wait_parity(self, parity: u32) -> bool {
        intrinsics::mbarrier_try_wait_parity(self.bar, parity & 1) != 0
    }

    /// Spins on [`MBarrier::try_wait_parity`] until the phase of parity `parity` completed.
    #[inline(always)]
    pub fn wait_parity(self, parity: u32) {
        while !self.try_wait_parity(parity) {}
    }
}

/// A waiter's view of an [`MBarrier`]: the parity of the phase it waits for next.
#[derive(Clone, Copy, Debug)]
pub struct Phase {
    bar: MBarrier,
    parity: u32,
}

impl Phase {
    /// Waits for the barrier's phase 0 first.
    #[inline(always)]
    pub const fn new(bar: MBarrier) -> Phase {
        Phase { bar, parity: 0 }
    }

    /// The parity [`Phase::wait`] waits for next.
    #[inline(always)]
    pub const fn parity(&self) -> u32 {
        self.parity
    }

    /// Waits until the current phase completes, then moves on to the next.
    #[inline(always)]
    pub fn wait(&mut self) {
        self.bar.wait_parity(self.parity);
        self.parity ^= 1;
    }
}

/// A ring of `STAGES` barriers (one per pipeline stage) and the stage/parity a consumer (or
/// producer) is at: [`Ring::advance`] wraps the stage and flips the parity on each wrap.
#[derive(Clone, Copy, Debug)]
pub struct Ring<const STAGES: usize> {
    stage: usize,
    parity: u32,
}

impl<const STAGES: usize> Default for Ring<STAGES> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const STAGES: usize> Ring<STAGES> {
    /// Stage 0, phase parity 0.
    pub const fn new() -> Self {
        const { assert!(STAGES > 0, "a ring needs at least one stage") };
        Ring { stage: 0, parity: 0 }
    }

    /// Stage `stage` (below `STAGES`) with phase parity `parity` (0 or 1).
    #[inline(always)]
    pub const fn at(stage: usize, parity: u32) -> Self {
        Ring { stage: stage % STAGES, parity: parity & 1 }
    }

    /// The current stage.
    #[inline(always)]
    pub const fn stage(&self) -> usize {
        self.stage
    }

    /// The parity of the current stage's phase.
    #[inline(always)]
    pub const fn parity(&self) -> u32 {
        self.parity
    }

    /// Moves to the next stage (flipping the parity after the last).
    #[inline(always)]
    pub fn advance(&mut self) {
        self.stage += 1;
        if self.stage == STAGES {
            self.stage = 0;
            self.parity ^= 1;
        }
    }

    /// Waits on `bars[stage]` for the current parity.
    #[inline(always)]
    pub fn wait(&self, bars: &[MBarrier; STAGES]) {
        bars[self.stage].wait_parity(self.parity)
    }
}

/// `fence.mbarrier_init.release.cluster` (sm_90): makes barrier initialisations visible to
/// asynchronous copies and other threads; after [`MBarrier::init`], before the block barrier.
#[inline(always)]
pub fn fence_init() {
    intrinsics::fence_mbarrier_init_release_cluster()
}

/// `fence.proxy.async.shared::cta` (sm_90): orders this thread's ordinary shared-memory writes
/// before later TMA stores / wgmma reads of them (the async proxy).
#[inline(always)]
pub fn fence_proxy_async() {
    intrinsics::fence_proxy_async_shared_cta()
}

/// `elect.sync` (sm_90) over the full warp: `true` in exactly one lane.
///
/// # Safety
/// All 32 lanes call it together (the instruction is `.sync` with a full mask).
#[inline(always)]
pub unsafe fn elect_one() -> bool {
    intrinsics::elect_sync(0xffff_ffff) != 0
}

const fn check_regs(n: u32) {
    assert!(n >= 24 && n <= 256 && n.is_multiple_of(8), "setmaxnreg takes 24..=256 registers in steps of 8");
}

/// `setmaxnreg.inc.sync.aligned.u32 N` (sm_90a): raises this warp's register limit to `N`
/// (24..=256, a multiple of 8 — anything else does not compile).
///
/// # Safety
/// All warps of the warpgroup execute it together; the kernel is launched with a register
/// count (`launch_bounds`/`maxnreg`) that leaves room for the increase, or it waits forever.
#[inline(always)]
pub unsafe fn setmaxnreg_inc<const N: u32>() {
    const { check_regs(N) };
    intrinsics::setmaxnreg_inc::<N>()
}

/// `setmaxnreg.dec.sync.aligned.u32 N` (sm_90a): lowers this warp's register limit to `N`.
///
/// # Safety
/// As [`setmaxnreg_inc`]; the warp holds no more than `N` live registers afterwards.
#[inline(always)]
pub unsafe fn setmaxnreg_dec<const N: u32>() {
    const { check_regs(N) };
    intrinsics::setmaxnreg_dec::<N>()
}
