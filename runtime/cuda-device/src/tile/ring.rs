//! [`TileRing`]: a [`Pipeline`] whose stages are one [`SmemTile`] each, for operands that come
//! one tile at a time (attention's K and V, each in a ring of its own so that K of the next tile
//! lands while V of this one is still read). The producer loads the next free stage in one call;
//! a consumer gets each stage with its tile.
//!
//! ```ignore
//! let k_ring = unsafe { TileRing::<bf16, 128, 64, 2>::new(smem, bars) };
//! if thread::threadIdx_x() == 0 { unsafe { k_ring.init(1, CONSUMERS) } }
//! sync_threads();
//! if producer {
//!     let mut p = k_ring.producer();
//!     for j in 0..tiles { unsafe { p.load(&k_map, 0, (j * 128) as i32) } }
//! } else {
//!     let mut c = k_ring.consumer();
//!     for j in 0..tiles {
//!         let (stage, k) = c.wait();                 // k's bytes have landed
//!         /* wgmma on k.descriptor(..); wait for it */
//!         if leader { c.release(stage) }
//!     }
//! }
//! ```

use core::marker::PhantomData;

use crate::tile::pipeline::{Consumer, Pipeline, Producer, Stage};
use crate::tile::smem::SmemTile;
use crate::tma::TensorMap;

/// `STAGES` tiles of `ROWS × COLS` `T`s one after another in shared memory, behind a
/// [`Pipeline`]. A handle: copying it copies the addresses.
pub struct TileRing<T, const ROWS: usize, const COLS: usize, const STAGES: usize> {
    tiles: *mut u8,
    pipe: Pipeline<STAGES>,
    _elem: PhantomData<T>,
}

impl<T, const ROWS: usize, const COLS: usize, const STAGES: usize> Clone for TileRing<T, ROWS, COLS, STAGES> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T, const ROWS: usize, const COLS: usize, const STAGES: usize> Copy for TileRing<T, ROWS, COLS, STAGES> {}

impl<T, const ROWS: usize, const COLS: usize, const STAGES: usize> TileRing<T, ROWS, COLS, STAGES> {
    /// Bytes of shared memory the tiles take (a multiple of 1024 for 128-byte panels: the
    /// tiles stay aligned).
    pub const BYTES: usize = STAGES * SmemTile::<T, ROWS, COLS>::BYTES;

    /// The ring whose tiles start at `tiles` and whose barriers are the
    /// [`Pipeline::BARRIER_BYTES`] at `bars`.
    ///
    /// # Safety
    /// `tiles` is [`super::smem::ALIGN`]-aligned in this block's shared memory with
    /// [`BYTES`](Self::BYTES) bytes used only as these tiles, and `bars` as for
    /// [`Pipeline::new`], while the ring is in use.
    #[inline(always)]
    pub const unsafe fn new(tiles: *mut u8, bars: *mut u64) -> Self {
        TileRing { tiles, pipe: unsafe { Pipeline::new(bars) }, _elem: PhantomData }
    }

    /// Initialises the barriers, as [`Pipeline::init`].
    ///
    /// # Safety
    /// As [`Pipeline::init`].
    #[inline(always)]
    pub unsafe fn init(self, producers: u32, consumers: u32) {
        unsafe { self.pipe.init(producers, consumers) }
    }

    /// The barriers.
    #[inline(always)]
    pub const fn pipeline(self) -> Pipeline<STAGES> {
        self.pipe
    }

    /// Stage `s`'s tile (`s` taken modulo `STAGES`).
    #[inline(always)]
    pub fn tile(self, s: usize) -> SmemTile<T, ROWS, COLS> {
        self.at(s % STAGES)
    }

    /// The tile of stage `index`, one of this ring's pipeline's (below `STAGES`: no modulo on
    /// the way to every `wgmma` descriptor).
    #[inline(always)]
    fn at(self, index: usize) -> SmemTile<T, ROWS, COLS> {
        // SAFETY: `new`'s contract: stage `index`'s bytes are inside the ring, aligned (a tile's
        // `BYTES` is a multiple of 1024 by `SmemTile`'s shape rules).
        unsafe { SmemTile::from_ptr(self.tiles.wrapping_add(index * SmemTile::<T, ROWS, COLS>::BYTES)) }
    }

    /// The producer's side (the one thread that fills the stages).
    #[inline(always)]
    pub fn producer(self) -> RingProducer<T, ROWS, COLS, STAGES> {
        RingProducer { ring: self, producer: self.pipe.producer() }
    }

    /// A consumer's side (every consumer thread keeps its own).
    #[inline(always)]
    pub fn consumer(self) -> RingConsumer<T, ROWS, COLS, STAGES> {
        RingConsumer { ring: self, consumer: self.pipe.consumer() }
    }
}

/// The producer's side of a [`TileRing`].
pub struct RingProducer<T, const ROWS: usize, const COLS: usize, const STAGES: usize> {
    ring: TileRing<T, ROWS, COLS, STAGES>,
    producer: Producer<STAGES>,
}

impl<T, const ROWS: usize, const COLS: usize, const STAGES: usize> RingProducer<T, ROWS, COLS, STAGES> {
    /// Waits for the next stage to be free ([`Producer::acquire`], expecting the tile's bytes)
    /// and starts loading its tile from element (`x` column, `y` row) of `map` by TMA.
    ///
    /// # Safety
    /// As [`SmemTile::load`] for `map` (a map of `T` with the tile's box and the 128-byte
    /// swizzle, over memory valid until the copy lands).
    #[inline(always)]
    pub unsafe fn load(&mut self, map: &TensorMap, x: i32, y: i32) {
        let fill = self.producer.acquire(SmemTile::<T, ROWS, COLS>::BYTES as u32);
        unsafe { self.ring.at(fill.index()).load(map, x, y, fill.barrier()) };
    }

    /// As [`Producer::drain`].
    #[inline(always)]
    pub fn drain(&mut self) {
        self.producer.drain()
    }
}

/// A consumer's side of a [`TileRing`].
pub struct RingConsumer<T, const ROWS: usize, const COLS: usize, const STAGES: usize> {
    ring: TileRing<T, ROWS, COLS, STAGES>,
    consumer: Consumer<STAGES>,
}

impl<T, const ROWS: usize, const COLS: usize, const STAGES: usize> RingConsumer<T, ROWS, COLS, STAGES> {
    /// Waits until the next stage's tile has landed ([`Consumer::wait`]) and hands out the
    /// stage and its tile.
    #[inline(always)]
    pub fn wait(&mut self) -> (Stage, SmemTile<T, ROWS, COLS>) {
        let stage = self.consumer.wait();
        (stage, self.ring.at(stage.index()))
    }

    /// One arrival: this consumer is done with `stage` ([`Consumer::release`]).
    #[inline(always)]
    pub fn release(&self, stage: Stage) {
        self.consumer.release(stage)
    }
}
