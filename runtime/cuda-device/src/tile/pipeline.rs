//! A multi-stage load pipeline: `STAGES` buffers in shared memory, each guarded by two mbarriers
//! — `full` (the producer's `expect_tx` arrival and the TMA bytes complete it) and `empty` (the
//! consumers' releases complete it) — with the stage index and phase parity kept inside.
//!
//! ```ignore
//! let pipe = unsafe { Pipeline::<4>::new(bars) };       // 2 × 4 u64 in shared memory
//! if thread::threadIdx_x() == 0 { unsafe { pipe.init(1, CONSUMERS) } }
//! sync_threads();                                      // (cluster::sync() in a cluster)
//! if producer {
//!     let mut p = pipe.producer();
//!     for kt in 0..k_tiles {
//!         let fill = p.acquire(STAGE_BYTES);           // waits for the stage to be free
//!         unsafe { a[fill.index()].load(&a_map, x, y, fill.barrier()) };
//!     }
//!     p.drain();                                       // before exiting, in a cluster
//! } else {
//!     let mut c = pipe.consumer();
//!     for kt in 0..k_tiles {
//!         let stage = c.wait();                        // the stage's bytes have landed
//!         /* read a[stage.index()] */
//!         if leader { c.release(stage) }               // one arrival per consumer
//!     }
//! }
//! ```
//!
//! The producer is one thread; the consumers are whatever units `init`'s `consumers` counts (a
//! warpgroup releasing through one of its threads, in a GEMM). A stage may be released late — a
//! `wgmma` consumer releases stage `s - 1` once its `wgmma.wait_group 1` says the MMAs that read
//! it are done, while those of stage `s` still run — as long as the stages are released in order.
//!
//! In a cluster whose blocks multicast into each other's stages, a stage of block `b` is free
//! only when the consumers of every block that the stage's copies go to have released it: each
//! consumer releases with [`Consumer::release_cluster`] to all of them, and `init` counts
//! `consumers per block × blocks` arrivals.

use crate::mbarrier::{self, MBarrier, Ring};

/// `STAGES` pairs of mbarriers (`full`, `empty`), one pair per buffer of a load pipeline.
#[derive(Clone, Copy, Debug)]
pub struct Pipeline<const STAGES: usize> {
    bars: *mut u64,
}

/// A stage handed out by a [`Producer`] or a [`Consumer`]: which buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stage {
    index: usize,
}

impl Stage {
    /// The buffer's index, `0..STAGES`.
    #[inline(always)]
    pub const fn index(self) -> usize {
        self.index
    }
}

/// A stage the producer may fill: its index and the barrier its copies complete on.
#[derive(Clone, Copy, Debug)]
pub struct Fill {
    stage: Stage,
    bar: MBarrier,
}

impl Fill {
    /// The buffer's index, `0..STAGES`.
    #[inline(always)]
    pub const fn index(self) -> usize {
        self.stage.index
    }

    /// The stage.
    #[inline(always)]
    pub const fn stage(self) -> Stage {
        self.stage
    }

    /// The stage's `full` barrier: the one to give the TMA loads (its phase already expects the
    /// bytes given to [`Producer::acquire`]).
    #[inline(always)]
    pub const fn barrier(self) -> MBarrier {
        self.bar
    }
}

impl<const STAGES: usize> Pipeline<STAGES> {
    /// Bytes of shared memory the barriers take: `2 × STAGES × 8` (8-byte aligned).
    pub const BARRIER_BYTES: usize = 2 * STAGES * 8;

    /// The pipeline whose barriers are the `2 × STAGES` `u64`s at `bars` (`full` first).
    ///
    /// # Safety
    /// `bars` is 8-byte aligned in this block's shared memory with room for
    /// [`BARRIER_BYTES`](Self::BARRIER_BYTES), used only as these barriers while the pipeline is.
    #[inline(always)]
    pub const unsafe fn new(bars: *mut u64) -> Self {
        const { assert!(STAGES > 0 && STAGES <= 32, "a pipeline has 1..=32 stages") };
        Pipeline { bars }
    }

    /// Initialises every barrier: `full` expecting `producers` arrivals per phase (1: the
    /// producer's `arrive_expect_tx`), `empty` expecting `consumers` (every consumer unit, of
    /// every block of the cluster that multicasts into this one); then `fence.mbarrier_init`.
    ///
    /// # Safety
    /// One thread calls it, before any other use of the barriers, and a block barrier
    /// (`sync_threads`) — or a cluster barrier (`cluster::sync`) when other blocks copy into or
    /// arrive on these barriers — follows it before any thread uses them.
    #[inline(always)]
    pub unsafe fn init(self, producers: u32, consumers: u32) {
        let mut s = 0;
        while s < STAGES {
            unsafe {
                self.full(s).init(producers);
                self.empty(s).init(consumers);
            }
            s += 1;
        }
        mbarrier::fence_init();
    }

    /// Stage `s`'s `full` barrier.
    #[inline(always)]
    pub fn full(self, s: usize) -> MBarrier {
        // SAFETY: `new`'s contract; `s % STAGES` stays inside the barrier array.
        unsafe { MBarrier::new(self.bars.wrapping_add(s % STAGES)) }
    }

    /// Stage `s`'s `empty` barrier.
    #[inline(always)]
    pub fn empty(self, s: usize) -> MBarrier {
        // SAFETY: as `full`.
        unsafe { MBarrier::new(self.bars.wrapping_add(STAGES + s % STAGES)) }
    }

    /// The producer's side, at stage 0 of round 0 (for the one thread that fills the stages).
    #[inline(always)]
    pub fn producer(self) -> Producer<STAGES> {
        Producer { pipe: self, ring: Ring::new() }
    }

    /// A consumer's side, at stage 0 of round 0 (every consumer thread keeps its own).
    #[inline(always)]
    pub fn consumer(self) -> Consumer<STAGES> {
        Consumer { pipe: self, ring: Ring::new() }
    }
}

/// The producer's side of a [`Pipeline`]: the next stage to fill and its round's parity.
#[derive(Clone, Copy, Debug)]
pub struct Producer<const STAGES: usize> {
    pipe: Pipeline<STAGES>,
    ring: Ring<STAGES>,
}

impl<const STAGES: usize> Producer<STAGES> {
    /// Waits until the next stage is free — its consumers released the previous round (the
    /// first round does not wait: a fresh barrier's phase before phase 0 counts as complete) —
    /// then arrives on its `full` barrier expecting `bytes` of copies, and hands it out.
    #[inline(always)]
    pub fn acquire(&mut self, bytes: u32) -> Fill {
        let s = self.ring.stage();
        self.pipe.empty(s).wait_parity(self.ring.parity() ^ 1);
        let bar = self.pipe.full(s);
        bar.arrive_expect_tx(bytes);
        self.ring.advance();
        Fill { stage: Stage { index: s }, bar }
    }

    /// Waits until the consumers released every stage filled so far. In a cluster, a block
    /// calls it before exiting: the other blocks' consumers arrive on its `empty` barriers.
    #[inline(always)]
    pub fn drain(&mut self) {
        let mut i = 0;
        while i < STAGES {
            self.pipe.empty(self.ring.stage()).wait_parity(self.ring.parity() ^ 1);
            self.ring.advance();
            i += 1;
        }
    }
}

/// A consumer's side of a [`Pipeline`]: the next stage to wait for and its round's parity.
#[derive(Clone, Copy, Debug)]
pub struct Consumer<const STAGES: usize> {
    pipe: Pipeline<STAGES>,
    ring: Ring<STAGES>,
}

impl<const STAGES: usize> Consumer<STAGES> {
    /// Waits until the next stage's copies have landed and hands it out.
    #[inline(always)]
    pub fn wait(&mut self) -> Stage {
        let s = self.ring.stage();
        self.pipe.full(s).wait_parity(self.ring.parity());
        self.ring.advance();
        Stage { index: s }
    }

    /// Moves past the next `n` stages without waiting: another consumer takes them (ping-pong
    /// consumers, each taking a whole output tile's `k_tiles` stages in turn). Stage and parity
    /// move as `n` [`wait`](Self::wait)s would.
    ///
    /// A consumer that skips ahead waits on a stage up to a round early; its parity wait is
    /// right only if every stage before the one it waits for has already landed (else the
    /// barrier, two phases behind, shows the same parity). The other consumer's having waited
    /// for all its stages first — an ordering barrier between them — ensures that.
    #[inline(always)]
    pub fn skip(&mut self, n: u32) {
        let at = self.ring.stage() + (n as usize % STAGES);
        let rounds = n as usize / STAGES + at / STAGES;
        self.ring = Ring::at(at % STAGES, self.ring.parity() ^ (rounds as u32 & 1));
    }

    /// One arrival on `stage`'s `empty` barrier in this block: this consumer is done with it.
    /// Called by one thread per consumer unit that `init` counted.
    #[inline(always)]
    pub fn release(&self, stage: Stage) {
        self.pipe.empty(stage.index).arrive();
    }

    /// One arrival on `stage`'s `empty` barrier in every block of the cluster whose rank bit is
    /// set in `cta_mask` (this block's included when its bit is set): the release of a stage
    /// that those blocks multicast into.
    ///
    /// # Safety
    /// The kernel runs in clusters holding those blocks, their barriers were initialised before
    /// a cluster barrier that this thread passed, and they do not exit before every arrival
    /// aimed at them has happened ([`Producer::drain`] in each, then a cluster barrier).
    #[inline(always)]
    pub unsafe fn release_cluster(&self, stage: Stage, cta_mask: u16) {
        let bar = self.pipe.empty(stage.index);
        let mut mask = cta_mask as u32;
        while mask != 0 {
            let rank = mask.trailing_zeros();
            unsafe { arrive_remote(bar, rank) };
            mask &= mask - 1;
        }
    }
}

/// One arrival on the barrier at `bar`'s place in block `rank` of this cluster: `mapa` to its
/// `shared::cluster` address, then `mbarrier.arrive.shared::cluster` with the default
/// `.release.cta` semantics (CUTLASS's `ClusterBarrier::arrive(cta_id)`). That is enough for a
/// consumer's release: what it orders is its own reads of the stage, which are complete
/// (`wgmma.wait_group`, or ordinary loads before the arrive); `.release.cluster` would cost a
/// `MEMBAR.ALL.GPU` before every arrival.
///
/// # Safety
/// As [`Consumer::release_cluster`] for block `rank`.
#[inline(always)]
pub unsafe fn arrive_remote(bar: MBarrier, rank: u32) {
    // `bar` is a barrier of this block's shared memory (MBarrier::new's contract).
    crate::intrinsics::mbarrier_arrive_remote(bar.as_ptr(), rank)
}

#[cfg(test)]
mod tests {
    /// `mbarrier.try_wait.parity P` on a barrier that has completed `done` phases: true when
    /// the phase in progress (number `done`) has the other parity. A fresh barrier (`done` 0)
    /// thus reports parity 1 — "the phase before phase 0" — complete.
    fn passes(done: u32, parity: u32) -> bool {
        done & 1 != parity
    }

    /// The producer's wait on `empty[s]` for its fill of round `r` passes once the consumers
    /// have released round `r - 1` (completed `r` phases), and not before; the consumer's wait
    /// on `full[s]` for round `r` passes once the fill of round `r` landed.
    #[test]
    fn parities_wait_for_the_right_round() {
        const STAGES: usize = 3;
        let mut producer = crate::mbarrier::Ring::<STAGES>::new();
        let mut consumer = crate::mbarrier::Ring::<STAGES>::new();
        for fill in 0..20u32 {
            let round = fill / STAGES as u32;
            assert_eq!((producer.stage(), consumer.stage()), ((fill % 3) as usize, (fill % 3) as usize));
            assert!(passes(round, producer.parity() ^ 1), "fill {fill}: released, yet waits");
            if round > 0 {
                assert!(!passes(round - 1, producer.parity() ^ 1), "fill {fill}: passes before the release");
            }
            assert!(passes(round + 1, consumer.parity()), "fill {fill}: landed, yet the consumer waits");
            assert!(!passes(round, consumer.parity()), "fill {fill}: the consumer passes before it landed");
            producer.advance();
            consumer.advance();
        }
    }

    /// `skip(n)` lands where `n` waits would.
    #[test]
    fn skip_moves_as_waits_do() {
        use super::{Consumer, Pipeline};
        for start in 0..7 {
            for n in 0..20u32 {
                // SAFETY: never dereferenced: only the ring moves.
                let pipe = unsafe { Pipeline::<3>::new(core::ptr::null_mut()) };
                let mut skipped: Consumer<3> = pipe.consumer();
                let mut walked = crate::mbarrier::Ring::<3>::new();
                for _ in 0..start {
                    skipped.ring.advance();
                    walked.advance();
                }
                skipped.skip(n);
                for _ in 0..n {
                    walked.advance();
                }
                assert_eq!(
                    (skipped.ring.stage(), skipped.ring.parity()),
                    (walked.stage(), walked.parity()),
                    "{start} {n}"
                );
            }
        }
    }
}
