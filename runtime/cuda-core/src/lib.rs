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
#![warn(missing_docs)]
#![feature(f16)]

pub mod bundle;
mod context;
pub mod contract;
pub mod cooperative;
mod driver;
pub mod embedded;
pub mod error;
mod event;
pub mod graph;
mod launch;
mod launch_args;
pub mod memory;
mod module;
mod module_file;
pub mod registry;
mod resources;
pub mod sys;
pub mod tma;
pub mod vmm;

#[allow(deprecated)] // kept for one release under its old name (CHANGELOG.md)
pub use bundle::load_embedded;
pub use bundle::{LoadedBundle, load_bundle};
pub use context::{CudaContext, CudaStream};
pub use contract::{
    BlockRequirement, CoordinateRequirement, DynamicSharedMemoryRequirement, KernelLaunchConfig, KernelLaunchContract,
    LaunchAxis, LaunchConfig1D, LaunchConfig2D, LaunchConfig3D, LaunchContractError, LaunchContractSpec,
    LaunchDimension, PreparedLaunch,
};
/// `#[derive(DeviceCopy)]` for structs whose fields are all `DeviceCopy`.
pub use cuda_macros::DeviceCopy;
pub use driver::is_driver_present;
pub use error::{DriverError, Hint, IntoResult, ResultCode, hint_for};
pub use event::CudaEvent;
pub use graph::{CaptureMode, Graph, GraphExec};
pub use launch::{
    KernelParams, LaunchConfig, LaunchOptions, MAX_CLUSTER_SIZE, MAX_PORTABLE_CLUSTER_SIZE, MAX_THREADS_PER_BLOCK,
    launch, launch_on, launch_options, launch_with, launch_with_options, twin_launches,
};
pub use launch_args::{KernelSlice, KernelSliceMut, LaunchStream, SliceParam};
pub use memory::{CudarcMut, CudarcRef, DeviceBuffer, DeviceCopy, IntoCudarcError, PeerPath, PinnedBuffer, peer_path};
pub use module::{Function, Module};
pub use module_file::{module_file_candidates, payload_kind_of};
pub use registry::{EmbeddedKernels, ambiguous_kernel_name, embedded_manifests};
pub use resources::{FunctionAttributes, MAX_LOCAL_BYTES_PER_THREAD};

/// NVIDIA's name for [`Module`] (`Arc<CudaModule>` is what their loaders return).
///
/// ```no_run
/// use std::sync::Arc;
/// let ctx = cuda_core::CudaContext::new(0)?;
/// let module: Arc<cuda_core::CudaModule> = ctx.load_module_from_file("my_app.ptx")?;
/// # Ok::<(), cuda_core::DriverError>(())
/// ```
pub type CudaModule = Module;
/// NVIDIA's name for [`Function`].
///
/// ```no_run
/// let ctx = cuda_core::CudaContext::new(0)?;
/// let vecadd: cuda_core::CudaFunction = ctx.load_module_from_file("my_app.ptx")?.function("vecadd")?;
/// # Ok::<(), cuda_core::DriverError>(())
/// ```
pub type CudaFunction = Function;

/// Loads and initialises the CUDA driver (`cuInit`). Every constructor here does it when needed;
/// call it before using [`sys`] functions directly. `flags` must be 0, as for `cuInit`.
///
/// Errors: [`DriverError::NoDriver`] when no NVIDIA driver can be loaded (or it is older than
/// CUDA 12.0); `CUDA_ERROR_INVALID_VALUE` for other `flags`.
///
/// ```no_run
/// cuda_core::init(0)?;
/// let mut count = 0;
/// // SAFETY: the driver is initialised; cuDeviceGetCount writes one i32.
/// cuda_core::IntoResult::result(unsafe { cuda_core::sys::cuDeviceGetCount(&mut count) })?;
/// # Ok::<(), cuda_core::DriverError>(())
/// ```
pub fn init(flags: std::ffi::c_uint) -> Result<(), DriverError> {
    driver::init()?;
    if flags != 0 {
        // SAFETY: the driver is loaded; cuInit validates its flags (and is idempotent).
        return driver::check(unsafe { sys::cuInit(flags) }, "cuInit");
    }
    Ok(())
}

/// The cudarc this runtime is built on (its driver layer), so code that mixes the two names the
/// same crate: `cuda_core::cudarc::driver::CudaSlice` is candle's `CudaSlice` too.
pub use cudarc;

/// The shared formats (manifest, bundle layout, entry names), re-exported for generated code
/// and for tools that inspect manifests.
pub use oxide_contract;

/// The shared formats under their old name: the crate `oxide-format` became `oxide-contract`.
/// Kept for one release (CHANGELOG.md).
#[deprecated(
    since = "0.1.0",
    note = "renamed: use `cuda_core::oxide_contract` (the crate `oxide-format` is `oxide-contract` now)"
)]
pub mod oxide_format {
    pub use oxide_contract::*;
}
