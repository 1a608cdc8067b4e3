//! [`UnitHandoff`]: a persistent block's producer thread tells its consumers which work unit
//! comes next. It writes the unit's id into a slot in shared memory and arrives on a `full`
//! mbarrier, whose phase also counts the bytes of the unit's own loads (attention's Q tile,
//! loaded once per unit); the consumers wait there, read the id, and each arrives on `empty` once
//! it is done with those loads, which frees them for the next unit. An id past the last unit
//! tells the consumers to stop.
//!
//! ```ignore
//! let units = unsafe { UnitHandoff::new(bars, total) };
//! if thread::threadIdx_x() == 0 { unsafe { units.init(CONSUMERS) }; mbarrier::fence_init() }
//! sync_threads();
//! if producer {
//!     let mut p = units.producer();
//!     loop {
//!         let id = next_id();
//!         let Some(full) = p.publish(id, Q_BYTES) else { break };
//!         unsafe { q.load(&q_map, 0, row_of(id), full) };        // the unit's loads
//!         /* the unit's other stages, through a Pipeline */
//!     }
//! } else {
//!     let mut c = units.consumer();
//!     while let Some(id) = c.wait() {                            // the id, and Q, are there
//!         /* ... last read of Q ... */
//!         if leader { c.release() }
//!     }
//! }
//! ```
//!
//! The slots alternate by the unit's parity: the producer writes unit `n + 1`'s id once every
//! consumer released unit `n`, and unit `n`'s slot is written again only for unit `n + 2`.

use crate::mbarrier::MBarrier;

/// The barriers (`full`, `empty`) and the two id slots of a hand-off of work units: 24 bytes of
/// shared memory. A handle: copying it copies the address.
#[derive(Clone, Copy, Debug)]
pub struct UnitHandoff {
    at: *mut u64,
    units: u32,
}

impl UnitHandoff {
    /// Bytes of shared memory it takes (8-byte aligned): two mbarriers and two `u32` slots.
    pub const BYTES: usize = 24;

    /// The hand-off at `at` (`full`, `empty`, then the slots) of a grid of `units` work units
    /// (ids `0..units`; any other id stops the consumers).
    ///
    /// # Safety
    /// `at` is 8-byte aligned in this block's shared memory with [`BYTES`](Self::BYTES) bytes,
    /// used only as this hand-off while it is in use.
    #[inline(always)]
    pub const unsafe fn new(at: *mut u64, units: u32) -> Self {
        UnitHandoff { at, units }
    }

    /// Initialises the barriers: `full` expecting the producer's arrival, `empty` one arrival
    /// from each of `consumers` (per unit).
    ///
    /// # Safety
    /// One thread calls it, before any other use, followed by [`crate::mbarrier::fence_init`]
    /// (a [`Pipeline::init`](crate::tile::Pipeline::init) after it does one) and a block barrier
    /// before any thread uses the hand-off.
    #[inline(always)]
    pub unsafe fn init(self, consumers: u32) {
        unsafe {
            self.full().init(1);
            self.empty().init(consumers);
        }
    }

    /// The producer's side (one thread).
    #[inline(always)]
    pub const fn producer(self) -> UnitProducer {
        UnitProducer { handoff: self, n: 0 }
    }

    /// A consumer's side (every consumer thread keeps its own).
    #[inline(always)]
    pub const fn consumer(self) -> UnitConsumer {
        UnitConsumer { handoff: self, n: 0 }
    }

    #[inline(always)]
    fn full(self) -> MBarrier {
        // SAFETY: `new`'s contract.
        unsafe { MBarrier::new(self.at) }
    }

    #[inline(always)]
    fn empty(self) -> MBarrier {
        // SAFETY: `new`'s contract.
        unsafe { MBarrier::new(self.at.wrapping_add(1)) }
    }

    /// The slot of the `n`-th unit handed off (by parity).
    #[inline(always)]
    fn slot(self, n: u32) -> *mut u32 {
        self.at.wrapping_add(2).cast::<u32>().wrapping_add((n & 1) as usize)
    }
}

/// The producer's side of a [`UnitHandoff`]: how many units it has handed off.
#[derive(Clone, Copy, Debug)]
pub struct UnitProducer {
    handoff: UnitHandoff,
    n: u32,
}

impl UnitProducer {
    /// Hands off unit `id`: waits until every consumer released the previous unit (its loads'
    /// buffers are free again), writes `id` into this unit's slot and arrives on `full`. For a
    /// unit (`id < units`), the arrival expects `bytes` of the unit's loads and the barrier
    /// comes back for them; past the last, a plain arrival, `None`, and the consumers stop.
    #[inline(always)]
    pub fn publish(&mut self, id: u32, bytes: u32) -> Option<MBarrier> {
        let n = self.n;
        self.n += 1;
        self.handoff.empty().wait_parity((n & 1) ^ 1);
        // SAFETY: this block's shared memory (`new`); the consumers read slot `n` only after
        // this phase of `full`, and it is not written again before unit `n + 2`.
        unsafe { self.handoff.slot(n).write_volatile(id) };
        let full = self.handoff.full();
        if id >= self.handoff.units {
            full.arrive();
            return None;
        }
        full.arrive_expect_tx(bytes);
        Some(full)
    }
}

/// A consumer's side of a [`UnitHandoff`]: how many units it has taken.
#[derive(Clone, Copy, Debug)]
pub struct UnitConsumer {
    handoff: UnitHandoff,
    n: u32,
}

impl UnitConsumer {
    /// Waits for the next unit — its id and its loads — and returns the id; `None` once the
    /// producer handed off an id past the last unit.
    #[inline(always)]
    pub fn wait(&mut self) -> Option<u32> {
        let n = self.n;
        self.n += 1;
        self.handoff.full().wait_parity(n & 1);
        // SAFETY: written by the producer before the arrival this wait saw.
        let id = unsafe { self.handoff.slot(n).read_volatile() };
        if id < self.handoff.units { Some(id) } else { None }
    }

    /// One arrival on `empty`: this consumer is done with the current unit's loads. One
    /// thread per consumer that [`UnitHandoff::init`] counted, once per unit.
    #[inline(always)]
    pub fn release(&self) {
        self.handoff.empty().arrive();
    }
}
