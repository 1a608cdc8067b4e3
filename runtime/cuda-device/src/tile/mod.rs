//! Tiles for Hopper kernels (TMA sm_90, `wgmma`/`setmaxnreg` sm_90a): the pieces a
//! warp-specialised, pipelined, persistent GEMM or attention kernel is made of, over the raw
//! operations of [`crate::tma`], [`crate::mbarrier`], [`crate::wgmma`] and [`crate::cluster`].
//!
//! | piece | what |
//! |---|---|
//! | [`SmemTile`] | a `ROWS × COLS` tile of `T` in shared memory, 128-byte swizzled as TMA writes it: TMA load (onto an mbarrier, or multicast to a cluster) and store, `wgmma` descriptors at a K offset, swizzled element access |
//! | [`Operand`] | an `MN × K` `wgmma` operand stored [`KMajor`] or [`MnMajor`] (A row- or column-major, B column- or row-major): its tile, TMA box, parts and descriptors |
//! | [`KMajorMma`] | the K-major `wgmma` of an element type (bf16, f16, fp8 E4M3/E5M2), so one kernel body serves them all |
//! | [`Pipeline`] | `STAGES` buffers behind `full`/`empty` mbarriers: [`Producer::acquire`] (wait for a free stage, expect its bytes), [`Consumer::wait`] / [`Consumer::release`] (also to every block of a cluster), [`Consumer::skip`] (stages another consumer takes), phases and parities kept inside |
//! | [`warpgroup`] | warpgroup index and leader, `setmaxnreg` for producer and consumer warpgroups, named barriers over some warpgroups (`sync`, `arrive`: ping-pong ordering), [`warpgroup::Turns`]: two consumers taking turns batch by batch |
//! | [`TileScheduler`] | persistent grids: each block (or cluster) walks the output tiles in a grouped raster order |
//! | [`epilogue`] | f32 accumulator → scale / bias / activation ([`Linear`], or any closure) → bf16 → masked direct stores, or staged in shared memory by `stmatrix` and stored by TMA while the warpgroup goes on |
//! | [`RowOps`] | row max / row sum of a `wgmma` accumulator (quad shuffles), row scaling, `exp2`: the steps of an online softmax |
//! | [`OnlineSoftmax`], [`KeyMask`] | FlashAttention's online softmax over accumulator rows: running max and sum, rescale factors, `exp2` with a log2 scale, causal / ragged key masks, `O / l` and the log-sum-exp at the end |
//! | [`TileRing`] | a [`Pipeline`] of one [`SmemTile`] per stage: [`RingProducer::load`] (acquire + TMA), [`RingConsumer::wait`] → stage and tile |
//! | [`UnitHandoff`], [`UnitCounter`] | persistent blocks with units of uneven cost: ids from a global counter, handed from the producer to the consumers through a shared slot and an mbarrier that also counts the unit's own loads |
//! | [`mma`](mod@mma) | whole-tile `wgmma` batches: [`mma::mma_ss`] (K-major tiles), [`mma::mma_rs_mn_b`] (A in registers, B MN-major), [`mma::a_fragments`]; one K step over [`Operand`]s of any layout: [`operand::mma`] |
//!
//! `examples/gemm` is a whole GEMM on these (bf16 in every layout and fp8, 128 × 256 tiles, 4
//! stages, 2 consumer warpgroups, persistent, the TMA-store epilogue, optionally 2-block clusters
//! multicasting B, or ping-pong consumers; 97–102 % of cuBLAS on an H100); `examples/attention` a
//! FlashAttention-3-style forward pass; the guide's chapter "Tensor cores, TMA and async copies"
//! explains the underlying operations.
//!
//! Everything whose correctness the types cannot show — that a pointer is shared memory, that a
//! map's box matches a tile, that a whole warpgroup is present, that a phase expects the bytes —
//! is an `unsafe fn` whose `# Safety` section says what the caller promises. Layout and index
//! arithmetic (offsets, descriptors, schedules) is plain and tested on the host.

pub mod epilogue;
pub mod handoff;
pub mod mma;
pub mod operand;
pub mod pipeline;
pub mod ring;
pub mod rows;
pub mod scheduler;
pub mod smem;
pub mod softmax;
pub mod warpgroup;

pub use epilogue::{Activation, Bf16Out, EpilogueOp, Gelu, Identity, Linear, NoAct, Relu};
pub use handoff::{UnitConsumer, UnitHandoff, UnitProducer};
pub use mma::KMajorMma;
pub use operand::{KMajor, Major, MnMajor, Operand};
pub use pipeline::{Consumer, Fill, Pipeline, Producer, Stage};
pub use ring::{RingConsumer, RingProducer, TileRing};
pub use rows::RowOps;
pub use scheduler::{Tile, TileGrid, TileScheduler, UnitCounter};
pub use smem::SmemTile;
pub use softmax::{KeyMask, OnlineSoftmax};
