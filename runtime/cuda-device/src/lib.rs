//! Device-side library: what a `#[kernel]` may call, plus the macros that mark kernels.
//!
//! Everything here is ordinary Rust over the raw operations in [`intrinsics`], whose bodies the
//! `oxide-rustc` backend replaces with PTX. On the host those raw operations panic.
#![no_std]
#![allow(clippy::missing_safety_doc)]

pub mod intrinsics;
pub mod thread;
mod disjoint;

pub use cuda_macros::{cluster_launch, cuda_module, device, kernel, launch_bounds};
pub use disjoint::DisjointSlice;

/// Runtime crates reached by the code that `#[cuda_module]` generates, so that a user crate only
/// needs `cuda_device` (and `cuda_core` for its own host code) as dependencies.
#[doc(hidden)]
pub mod __private {
    pub use cuda_core;
    pub use cuda_host;
}
