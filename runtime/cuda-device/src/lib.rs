//! Device-side library: what a `#[kernel]` may call, plus the macros that mark kernels.
//!
//! Everything here is ordinary Rust over the raw operations in [`intrinsics`], whose bodies the
//! `oxide-rustc` backend replaces with PTX. On the host those raw operations panic.
//!
//! | module | what |
//! |---|---|
//! | [`thread`] | indices (`index_1d/2d/3d`, raw `threadIdx_x()` …), lane/warp ids, grid-stride loops |
//! | [`shared`] | [`SharedMemory`] (a `static`) and [`SharedArray`] (a `static mut`) arrays, dynamic shared memory |
//! | [`sync`] | [`sync_threads`], warp sync, memory fences |
//! | [`atomic`] | `atomicAdd`-style operations with block/cluster/device/system scope |
//! | [`warp`] | shuffles, votes, match, warp reductions and scans |
//! | [`cluster`] | thread block clusters and distributed shared memory (sm_90) |
//! | [`grid`] | the grid barrier of cooperative launches |
//! | [`cooperative_groups`] | grid/cluster/block/tile/coalesced groups, tile and block reductions and scans |
//! | [`debug`] | [`gpu_printf!`], [`gpu_assert!`], `trap`, `clock64`, `breakpoint` |
//! | [`dotprod`] | `dp4a` / `dp2a` integer dot products |
//! | [`float`] | float instructions with explicit rounding, flush-to-zero, saturation or approximation |
//! | [`swizzle`], [`access`] | shared-memory bank and swizzle arithmetic, vectorised-access planning (`const fn`s) |
//! | [`uniform`] | [`Uniform`]: a value alike in every thread of a launch |
//! | [`view`] | proof-carrying element, tile and run views of a [`DisjointSlice`]; row/column views of a matrix |
//! | [`config`] | compile-time shapes, tiles, atoms and policies for policy-generic kernels |
//! | [`cusimd`] | [`cusimd::CuSimd`]: `N` values in `N` registers (NVIDIA cuda-oxide's type) |
//! | [`vector`] | 8/16-byte vector elements (`F32x4`, …) and vector views of slices |
//! | [`matrix`] | 2D views of slices that check their bounds once |
//! | [`half`] | `bf16`, packed `F16x2`/`Bf16x2` (Rust's `f16` needs `#![feature(f16)]`) |
//! | [`async_copy`] | `cp.async` global → shared copies with commit/wait groups (sm_80) |
//! | [`constant`](mod@constant) | [`ConstantMemory`] statics in `.const` (NVIDIA's `#[constant]` marks them) |
//! | [`mma`] | tensor cores per warp: `mma.sync` (bf16/f16 m16n8k16, tf32 m16n8k8) with typed fragments, `ldmatrix`/`stmatrix` |
//! | [`wmma`] | NVIDIA cuda-oxide's names for `mma.sync` on register arrays (f16, bf16, tf32, s8) |
//! | [`wgmma`] | tensor cores per warpgroup (sm_90a): `wgmma.mma_async`, shared-memory matrix descriptors |
//! | [`barrier`] | NVIDIA cuda-oxide's mbarrier names: a [`barrier::Barrier`] static and free functions over it |
//! | [`mbarrier`] | shared-memory barriers with transaction counts, phase tracking, `fence.proxy.async`, `elect.sync`, `setmaxnreg` |
//! | [`tma`] | tensor memory accelerator: 2D/3D tile loads (also multicast to a cluster) and stores with a host-encoded [`tma::TensorMap`], by value a grid-constant parameter; bulk copies without a map (sm_90) |
//! | [`tile`] | Hopper kernel building blocks: swizzled shared tiles for TMA/`wgmma`, an mbarrier load pipeline, warp specialisation, a persistent tile scheduler, epilogues, accumulator row operations (`examples/gemm`) |
//! | async copies and tensor cores | [`async_copy`], [`mbarrier`], [`tma`], [`mma`], [`wgmma`] and [`cluster`] together: the guide's chapter "Tensor cores, TMA and async copies" |
//! | [`f16x2`], [`bf16x2`], [`convert`], [`tcgen05`] | NVIDIA cuda-oxide's names for packed-half operations and conversions |
//!
//! Inline PTX: [`ptx_asm!`] ([`inline_ptx`] says how it reaches the PTX).
//!
//! Code generation hints: [`fast_math`] on a function, `#[unroll]`/`#[unroll(N)]` on loops in
//! kernels, [`unroll!`] anywhere.
//!
//! A kernel and its host side (`#[cuda_module]` generates `kernels::load` and `module.vecadd`;
//! `cargo oxide build` compiles the kernel for the GPU; the guide in `docs/book` has the rest):
//!
//! ```no_run
//! use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
//! use cuda_device::{DisjointSlice, cuda_module, kernel, thread};
//!
//! #[cuda_module]
//! mod kernels {
//!     use super::*;
//!
//!     #[kernel]
//!     pub fn vecadd(a: &[f32], b: &[f32], mut c: DisjointSlice<f32>) {
//!         let idx = thread::index_1d();
//!         let i = idx.get();
//!         if let Some(c_elem) = c.get_mut(idx) {
//!             *c_elem = a[i] + b[i];
//!         }
//!     }
//! }
//!
//! fn main() -> Result<(), cuda_core::DriverError> {
//!     let ctx = CudaContext::new(0)?;
//!     let stream = ctx.default_stream();
//!     let module = kernels::load(&ctx)?;
//!     let a = DeviceBuffer::from_host(&stream, &[1.0f32; 1024])?;
//!     let mut c = DeviceBuffer::<f32>::zeroed(&stream, 1024)?;
//!     module.vecadd(&stream, LaunchConfig::for_num_elems(1024), &a, &a, &mut c)?;
//!     assert_eq!(c.to_host_vec(&stream)?[0], 2.0);
//!     Ok(())
//! }
//! ```
#![warn(missing_docs)]
#![no_std]
// `f16` (half types, `DeviceAtomicF16`); the pinned nightly compiles every cuda-oxide crate.
#![feature(f16)]
// `core::f32::math::mul_add` (`llvm.fma`, as `std`'s `f32::mul_add`) for the tile layer's softmax.
#![feature(core_float_math)]
#![allow(clippy::missing_safety_doc)]

// `gpu_printf!` (a proc macro) names this crate as `::cuda_device`, here too.
extern crate self as cuda_device;

pub mod access;
pub mod async_copy;
pub mod atomic;
pub mod barrier;
pub mod cluster;
pub mod config;
pub mod constant;
pub mod cooperative_groups;
pub mod cusimd;
pub mod debug;
mod disjoint;
pub mod dotprod;
pub mod float;
pub mod fp8;
pub mod grid;
pub mod half;
pub mod inline_ptx;
pub mod intrinsics;
pub mod matrix;
pub mod mbarrier;
pub mod mma;
mod packed;
pub mod shared;
pub mod swizzle;
pub mod sync;
pub mod thread;
pub mod tile;
pub mod tma;
pub mod uniform;
pub mod vector;
pub mod view;
pub mod warp;
pub mod wgmma;
pub mod wmma;

/// NVIDIA cuda-oxide's barrier names at the crate root (`cuda_device::{Barrier, ManagedBarrier, ..}`).
pub use barrier::{
    Barrier, BarrierToken, GeneralBarrier, Invalidated, ManagedBarrier, MmaBarrier, MmaBarrierHandle, Ready,
    TmaBarrier, TmaBarrier0, TmaBarrier1, TmaBarrierHandle, Uninit,
};
pub use constant::ConstantMemory;
/// `#[derive(DeviceCopy)]` (the trait is `cuda_core::DeviceCopy`).
pub use cuda_macros::DeviceCopyViaDevice as DeviceCopy;
pub use cuda_macros::{
    cluster_launch, constant, cooperative_launch, cuda_module, device, fast_math, gpu_printf, kernel, launch_bounds,
    launch_contract, ptx_asm, unroll,
};
pub use debug::{clock64, trap};
pub use disjoint::DisjointSlice;
pub use packed::{bf16x2, convert, f16x2, tcgen05};
pub use shared::{DynamicSharedArray, SharedArray, SharedMemory};
pub use sync::sync_threads;
pub use thread::{Index1D, Index2D, Runtime2DIndex, SpaceLayout, ThreadIndex, WarpIndex};
pub use uniform::Uniform;
pub use view::{
    ColView32, ColViewIter32, ConstStride32, GridStrideRuns32, InBounds32, InBoundsMut32, LineView32, LineViewIter32,
    LinearTiles, LocalIndex32, MatrixView32, RowMajorTiles, RowView32, RowViewIter32, RuntimeRowMajorTiles,
    RuntimeTileMut32, RuntimeViewMut32, StaticTileMut32, StaticViewMut32, Stride32, ThreadRunMut32, TileMut32,
    ZipView32,
};

/// Runtime crates reached by the code that `#[cuda_module]` generates, so that a user crate only
/// needs `cuda_device` (and `cuda_core` for its own host code) as dependencies.
#[doc(hidden)]
pub mod __private {
    pub use cuda_core;
    pub use cuda_host;
}
