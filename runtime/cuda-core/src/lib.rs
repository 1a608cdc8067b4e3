//! Host runtime of cuda-oxide: the CUDA driver API as safe RAII types (over cudarc's `sys`).
//!
//! ```no_run
//! use cuda_core::{CudaContext, DeviceBuffer, LaunchConfig};
//! let ctx = CudaContext::new(0)?;
//! let stream = ctx.default_stream();
//! let a = DeviceBuffer::from_host(&stream, &[1.0f32; 1024])?;
//! let back = a.to_host_vec(&stream)?;
//! # Ok::<(), cuda_core::DriverError>(())
//! ```
//! Kernels are usually launched through the methods `#[cuda_module]` generates; [`launch`] and
//! [`KernelParams`] are the layer beneath them.
#![feature(f16)]

pub mod bundle;
mod context;
pub mod contract;
mod driver;
mod error;
mod launch;
mod memory;
mod module;
pub mod registry;
mod resources;

pub use bundle::{LoadedBundle, load_bundle};
pub use context::{CudaContext, CudaEvent, CudaStream};
pub use contract::{
    BlockRequirement, CoordinateRequirement, DynamicSharedMemoryRequirement, KernelLaunchConfig, KernelLaunchContract,
    LaunchAxis, LaunchConfig1D, LaunchConfig2D, LaunchConfig3D, LaunchContractError, LaunchContractSpec,
    LaunchDimension, PreparedLaunch,
};
/// `#[derive(DeviceCopy)]` for structs whose fields are all `DeviceCopy`.
pub use cuda_macros::DeviceCopy;
pub use driver::is_driver_present;
pub use error::{DriverError, Hint, hint_for};
pub use launch::{
    KernelParams, LaunchConfig, MAX_CLUSTER_SIZE, MAX_PORTABLE_CLUSTER_SIZE, MAX_THREADS_PER_BLOCK, launch, launch_with,
};
pub use memory::{DeviceBuffer, DeviceCopy};
pub use module::{Function, Module};
pub use registry::{EmbeddedKernels, ambiguous_kernel_name, embedded_manifests};
pub use resources::{FunctionAttributes, MAX_LOCAL_BYTES_PER_THREAD};

/// The shared formats (manifest, bundle layout, entry names), re-exported for generated code
/// and for tools that inspect manifests.
pub use oxide_contract;

/// The raw driver bindings, for what this crate does not wrap.
pub use cudarc::driver::sys;
