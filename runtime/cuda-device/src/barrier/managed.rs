//! NVIDIA cuda-oxide's typestate handle over a [`Barrier`]: `ManagedBarrier<State, Kind, ID>`
//! moves from [`Uninit`] to [`Ready`] (by `init`) to [`Invalidated`] (by `inval`), so arriving
//! at a barrier nobody initialised, or after it was invalidated, does not compile. `Kind`
//! ([`TmaBarrier`], [`MmaBarrier`], [`GeneralBarrier`] or a type of your own) and `ID` only tell
//! handles apart; they change nothing on the device. Our documented API for the same operations
//! is [`crate::mbarrier::MBarrier`]; this one exists so that code written for NVIDIA's crate
//! builds and behaves the same (docs/compatibility.md).
//!
//! `init`/`init_by` and `inval`/`inval_by` contain a block barrier (`bar.sync`), as NVIDIA's do:
//! every thread of the block calls them (a thread that has exited counts as arrived).

use core::marker::PhantomData;

use super::{
    Barrier, fence_proxy_async_shared_cta, mbarrier_arrive, mbarrier_arrive_expect_tx, mbarrier_init, mbarrier_inval,
    mbarrier_test_wait, mbarrier_try_wait, mbarrier_try_wait_parity, mbarrier_wait,
};

/// State: the barrier's memory is not initialised yet.
pub struct Uninit;
/// State: initialised; threads may arrive and wait.
pub struct Ready;
/// State: invalidated; the shared memory may be reused.
pub struct Invalidated;

/// Kind marker for a barrier that TMA copies complete.
pub struct TmaBarrier;
/// Kind marker for a barrier that tensor-core (MMA) work completes.
pub struct MmaBarrier;
/// Kind marker for a barrier only threads arrive at.
pub struct GeneralBarrier;

/// The phase token `arrive` returns and `wait` takes (`mbarrier.arrive`'s 64-bit state).
#[repr(transparent)]
#[derive(Clone, Copy, Debug)]
pub struct BarrierToken(u64);

impl BarrierToken {
    /// The raw 64-bit token.
    #[inline(always)]
    pub const fn raw(self) -> u64 {
        self.0
    }

    /// A token from its raw bits (as `mbarrier_arrive` returns them).
    #[inline(always)]
    pub const fn from_raw(raw: u64) -> Self {
        BarrierToken(raw)
    }
}

/// A [`Barrier`] static in state `State` (see the module docs).
///
/// ```no_run
/// # use cuda_device::{DisjointSlice, cuda_module, kernel, thread};
/// use cuda_device::{Barrier, GeneralBarrier, ManagedBarrier, Uninit};
///
/// #[cuda_module]
/// mod kernels {
///     use super::*;
///
///     #[kernel]
///     pub fn meet(mut out: DisjointSlice<u32>) {
///         static mut BAR: Barrier = Barrier::UNINIT;
///         let bar = ManagedBarrier::<Uninit, GeneralBarrier>::from_static(&raw mut BAR);
///         let bar = unsafe { bar.init(thread::blockDim_x()) }; // every thread calls it
///         let token = bar.arrive();
///         bar.wait(token);
///         if let Some(o) = out.get_mut(thread::index_1d()) {
///             *o = 1;
///         }
///         let _ = unsafe { bar.inval() };
///     }
/// }
/// # fn main() {}
/// ```
pub struct ManagedBarrier<State, Kind, const ID: usize = 0> {
    ptr: *const Barrier,
    _state: PhantomData<State>,
    _kind: PhantomData<Kind>,
}

// SAFETY: the handle is an address in shared memory; every use goes through mbarrier operations.
unsafe impl<S, K, const ID: usize> Send for ManagedBarrier<S, K, ID> {}

impl<S, K, const ID: usize> ManagedBarrier<S, K, ID> {
    #[inline(always)]
    fn to<T>(self) -> ManagedBarrier<T, K, ID> {
        ManagedBarrier { ptr: self.ptr, _state: PhantomData, _kind: PhantomData }
    }
}

impl<Kind, const ID: usize> ManagedBarrier<Uninit, Kind, ID> {
    /// A handle over the `static mut BAR: Barrier` at `ptr` (`&raw mut BAR`).
    #[inline(always)]
    pub fn from_static(ptr: *mut Barrier) -> Self {
        ManagedBarrier { ptr, _state: PhantomData, _kind: PhantomData }
    }

    /// [`init_by`](Self::init_by) thread 0.
    ///
    /// # Safety
    /// As `init_by`.
    #[inline(always)]
    pub unsafe fn init(self, count: u32) -> ManagedBarrier<Ready, Kind, ID> {
        // SAFETY: forwarded.
        unsafe { self.init_by(count, 0) }
    }

    /// Thread `init_thread` (x index in the block) initialises the barrier for `count`
    /// arrivals per phase and fences it for the async proxy (TMA); then the block
    /// synchronises, so every thread gets a ready handle.
    ///
    /// # Safety
    /// Every thread of the block calls it; no thread uses the barrier's memory otherwise.
    #[inline(always)]
    pub unsafe fn init_by(self, count: u32, init_thread: u32) -> ManagedBarrier<Ready, Kind, ID> {
        if crate::thread::threadIdx_x() == init_thread {
            // SAFETY: one thread initialises; the block barrier below publishes it.
            unsafe {
                mbarrier_init(self.ptr.cast_mut(), count);
                fence_proxy_async_shared_cta();
            }
        }
        crate::sync::sync_threads();
        self.to()
    }
}

impl<Kind, const ID: usize> ManagedBarrier<Ready, Kind, ID> {
    /// The barrier's address.
    #[inline(always)]
    pub fn as_ptr(&self) -> *const Barrier {
        self.ptr
    }

    /// Arrives (one of `count` per phase); the token names the phase for [`wait`](Self::wait).
    #[inline(always)]
    pub fn arrive(&self) -> BarrierToken {
        // SAFETY: the typestate says the barrier is initialised and not invalidated.
        BarrierToken(unsafe { mbarrier_arrive(self.ptr) })
    }

    /// Arrives and announces `bytes` of asynchronous transfers that complete the phase.
    #[inline(always)]
    pub fn arrive_expect_tx(&self, bytes: u32) -> BarrierToken {
        // SAFETY: as `arrive`.
        BarrierToken(unsafe { mbarrier_arrive_expect_tx(self.ptr, 1, bytes) })
    }

    /// Waits until the phase of `token` has completed.
    #[inline(always)]
    pub fn wait(&self, token: BarrierToken) {
        // SAFETY: as `arrive`.
        unsafe { mbarrier_wait(self.ptr, token.0) }
    }

    /// Waits a while for the phase of `token`; `true` when it has completed.
    #[inline(always)]
    pub fn try_wait(&self, token: BarrierToken) -> bool {
        // SAFETY: as `arrive`.
        unsafe { mbarrier_try_wait(self.ptr, token.0) }
    }

    /// `true` when the phase of `token` has completed (does not wait).
    #[inline(always)]
    pub fn test_wait(&self, token: BarrierToken) -> bool {
        // SAFETY: as `arrive`.
        unsafe { mbarrier_test_wait(self.ptr, token.0) }
    }

    /// Waits a while for the phase of parity `parity`; `true` when it has completed.
    #[inline(always)]
    pub fn try_wait_parity(&self, parity: u32) -> bool {
        // SAFETY: as `arrive`.
        unsafe { mbarrier_try_wait_parity(self.ptr, parity) }
    }

    /// [`inval_by`](Self::inval_by) thread 0.
    ///
    /// # Safety
    /// As `inval_by`.
    #[inline(always)]
    pub unsafe fn inval(self) -> ManagedBarrier<Invalidated, Kind, ID> {
        // SAFETY: forwarded.
        unsafe { self.inval_by(0) }
    }

    /// The block synchronises, thread `inval_thread` invalidates the barrier, and the block
    /// synchronises again.
    ///
    /// # Safety
    /// Every thread of the block calls it (or has exited); no phase is still pending.
    #[inline(always)]
    pub unsafe fn inval_by(self, inval_thread: u32) -> ManagedBarrier<Invalidated, Kind, ID> {
        crate::sync::sync_threads();
        if crate::thread::threadIdx_x() == inval_thread {
            // SAFETY: every thread is past its last use (the barrier above).
            unsafe { mbarrier_inval(self.ptr.cast_mut()) };
        }
        crate::sync::sync_threads();
        self.to()
    }
}

/// A TMA barrier handle.
pub type TmaBarrierHandle<S> = ManagedBarrier<S, TmaBarrier, 0>;
/// An MMA barrier handle.
pub type MmaBarrierHandle<S> = ManagedBarrier<S, MmaBarrier, 0>;
/// The first TMA barrier of a double buffer.
pub type TmaBarrier0<S> = ManagedBarrier<S, TmaBarrier, 0>;
/// The second TMA barrier of a double buffer.
pub type TmaBarrier1<S> = ManagedBarrier<S, TmaBarrier, 1>;
