//! The device code bundles embedded in the running executable, by crate name: what it carries,
//! and loading one without its generated `load` (see `cuda_core::embedded`).
//!
//! ```no_run
//! let names: Vec<String> = cuda_host::embedded::artifact_bundles_from_current_exe()?
//!     .into_iter()
//!     .map(|bundle| bundle.name)
//!     .collect();
//! # Ok::<(), cuda_core::DriverError>(())
//! ```

pub use cuda_core::embedded::{
    OwnedArtifactBundle, artifact_bundles_from_binary_path, artifact_bundles_from_current_exe, load_embedded_module,
};
