//! Device-side library: what a `#[kernel]` may call, plus the macros that mark kernels.
//!
//! Everything here is ordinary Rust over the raw operations in [`intrinsics`], whose bodies the
//! `oxide-rustc` backend replaces with PTX. On the host those raw operations panic.
//!
//! | module | what |
//! |---|---|
//! | [`thread`] | indices (`index_1d/2d/3d`, raw `threadIdx_x()` …), lane/warp ids, grid-stride loops |
//! | [`shared`] | [`SharedArray`] statics and dynamic shared memory |
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
//! | [`config`] | compile-time shapes, tiles, atoms and policies for policy-generic kernels |
//! | [`vector`] | 8/16-byte vector elements (`F32x4`, …) and vector views of slices |
//! | [`matrix`] | 2D views of slices that check their bounds once |
//! | [`half`] | `bf16`, packed `F16x2`/`Bf16x2` (Rust's `f16` needs `#![feature(f16)]`) |
//! | [`async_copy`] | `cp.async` global → shared copies with commit/wait groups (sm_80) |
//! | [`constant`] | [`ConstantMemory`] statics in `.const` |
//! | [`f16x2`], [`bf16x2`], [`convert`] | NVIDIA cuda-oxide's names for packed-half operations |
//!
//! Code generation hints: [`fast_math`] on a function, `#[unroll]`/`#[unroll(N)]` on loops in
//! kernels, [`unroll!`] anywhere.
#![no_std]
// `f16` (half types, `DeviceAtomicF16`); the pinned nightly compiles every cuda-oxide crate.
#![feature(f16)]
#![allow(clippy::missing_safety_doc)]

// `gpu_printf!` (a proc macro) names this crate as `::cuda_device`, here too.
extern crate self as cuda_device;

pub mod access;
pub mod async_copy;
pub mod atomic;
pub mod cluster;
pub mod config;
pub mod constant;
pub mod cooperative_groups;
pub mod debug;
mod disjoint;
pub mod dotprod;
pub mod float;
pub mod grid;
pub mod half;
pub mod intrinsics;
pub mod matrix;
mod packed;
pub mod shared;
pub mod swizzle;
pub mod sync;
pub mod thread;
pub mod uniform;
pub mod vector;
pub mod warp;

pub use constant::ConstantMemory;
/// `#[derive(DeviceCopy)]` (the trait is `cuda_core::DeviceCopy`).
pub use cuda_macros::DeviceCopyViaDevice as DeviceCopy;
pub use cuda_macros::{cluster_launch, cuda_module, device, fast_math, gpu_printf, kernel, launch_bounds, unroll};
pub use debug::{clock64, trap};
pub use disjoint::DisjointSlice;
pub use packed::{bf16x2, convert, f16x2};
pub use shared::{DynamicSharedArray, SharedArray};
pub use sync::sync_threads;
pub use uniform::Uniform;

/// Runtime crates reached by the code that `#[cuda_module]` generates, so that a user crate only
/// needs `cuda_device` (and `cuda_core` for its own host code) as dependencies.
#[doc(hidden)]
pub mod __private {
    pub use cuda_core;
    pub use cuda_host;
}
