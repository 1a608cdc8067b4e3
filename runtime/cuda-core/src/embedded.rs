//! The device code bundles linked into an executable (its bundle section, contract §6): which
//! crates' kernels a binary carries, and loading one by crate name. The running program's come
//! from memory (`crate::registry`); another executable's are read from its file.
//!
//! ```no_run
//! let names: Vec<String> = cuda_core::embedded::artifact_bundles_from_current_exe()?
//!     .into_iter()
//!     .map(|bundle| bundle.name)
//!     .collect();
//! println!("device code of: {names:?}");
//! # Ok::<(), cuda_core::DriverError>(())
//! ```
//! The generated `kernels::load(&ctx)` does not need this (it reaches its bundle by symbol); it is
//! for tools, for loading by name, and for [`CudaContext::load_module_from_file`]'s fallback.

use std::path::Path;
use std::sync::Arc;

use object::{Object, ObjectSection};
use oxide_contract::bundle::{Bundle, split_section};
use oxide_contract::manifest::{Manifest, PayloadKind};
use oxide_contract::naming::BUNDLE_SECTION;

use crate::bundle::{LoadedBundle, load_bundle};
use crate::context::CudaContext;
use crate::error::DriverError;

/// One crate's device code bundle, copied out of an executable.
///
/// ```no_run
/// for bundle in cuda_core::embedded::artifact_bundles_from_current_exe()? {
///     println!("{}: kernels {:?}", bundle.name, bundle.manifest.entries());
/// }
/// # Ok::<(), cuda_core::DriverError>(())
/// ```
#[derive(Clone, Debug)]
pub struct OwnedArtifactBundle {
    /// The package the kernels belong to: its Cargo package name (`my-kernels`), as NVIDIA's
    /// cuda-oxide names bundles; the crate name (`my_kernels`) for a bundle built outside cargo.
    /// `manifest.crate_name` is always the crate name.
    pub name: String,
    /// The bundle's manifest: kernels, parameters, payloads.
    pub manifest: Manifest,
    bytes: Vec<u8>,
}

impl OwnedArtifactBundle {
    /// The bundle's bytes (layout of contract §6), e.g. for [`crate::load_bundle`].
    ///
    /// ```no_run
    /// for bundle in cuda_core::embedded::artifact_bundles_from_current_exe()? {
    ///     println!("{}: {} bytes", bundle.name, bundle.bytes().len());
    /// }
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The first payload of `kind` (PTX text, a cubin, …), if the bundle has one.
    ///
    /// ```no_run
    /// use cuda_core::oxide_contract::manifest::PayloadKind;
    /// for bundle in cuda_core::embedded::artifact_bundles_from_current_exe()? {
    ///     if let Some(ptx) = bundle.payload(PayloadKind::Ptx) {
    ///         println!("{}: {} bytes of PTX", bundle.name, ptx.len());
    ///     }
    /// }
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn payload(&self, kind: PayloadKind) -> Option<&[u8]> {
        // The bytes were parsed once already (in `split_section`), so this parse succeeds.
        let bundle = Bundle::parse(&self.bytes).ok()?;
        bundle.payloads.iter().find(|p| p.kind == kind).map(|p| p.bytes)
    }

    /// Loads the payload that suits the context's GPU, as the generated `load` does.
    ///
    /// ```no_run
    /// let ctx = cuda_core::CudaContext::new(0)?;
    /// for bundle in cuda_core::embedded::artifact_bundles_from_current_exe()? {
    ///     let loaded = bundle.load(&ctx)?;
    ///     println!("{}: {:?}", bundle.name, loaded.payload());
    /// }
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn load(&self, ctx: &Arc<CudaContext>) -> Result<LoadedBundle, DriverError> {
        load_bundle(ctx, &self.bytes)
    }
}

/// The bundles linked into the running executable, in link order. Empty when it has none
/// (built without `cargo oxide`, or no crate with kernels was linked in).
///
/// ```no_run
/// let bundles = cuda_core::embedded::artifact_bundles_from_current_exe()?;
/// assert!(bundles.iter().any(|b| b.name == "my_app"), "built with cargo oxide build?");
/// # Ok::<(), cuda_core::DriverError>(())
/// ```
pub fn artifact_bundles_from_current_exe() -> Result<Vec<OwnedArtifactBundle>, DriverError> {
    let corrupt = |e| DriverError::Artifact { message: format!("the bundle section of this executable: {e}") };
    owned_bundles(crate::registry::section()).map_err(corrupt)
}

/// The bundles linked into the executable (or shared library) at `path`.
///
/// ```no_run
/// let bundles = cuda_core::embedded::artifact_bundles_from_binary_path("target/oxide/release/my_app".as_ref())?;
/// # Ok::<(), cuda_core::DriverError>(())
/// ```
pub fn artifact_bundles_from_binary_path(path: &Path) -> Result<Vec<OwnedArtifactBundle>, DriverError> {
    let unreadable = |why: String| DriverError::Artifact { message: format!("cannot read {}: {why}", path.display()) };
    let file = std::fs::File::open(path).map_err(|e| unreadable(e.to_string()))?;
    let cache = object::ReadCache::new(file);
    let binary = object::File::parse(&cache).map_err(|e| unreadable(e.to_string()))?;
    let Some(section) = binary.section_by_name(BUNDLE_SECTION) else { return Ok(Vec::new()) };
    let data = section.data().map_err(|e| unreadable(e.to_string()))?;
    owned_bundles(data).map_err(|e| unreadable(format!("its {BUNDLE_SECTION} section: {e}")))
}

/// Loads the embedded bundle of crate `name` (a package name with `-` means the same crate).
///
/// ```no_run
/// let ctx = cuda_core::CudaContext::new(0)?;
/// let module = cuda_core::embedded::load_embedded_module(&ctx, "my_kernels")?;
/// # Ok::<(), cuda_core::DriverError>(())
/// ```
pub fn load_embedded_module(ctx: &Arc<CudaContext>, name: &str) -> Result<LoadedBundle, DriverError> {
    let bundles = artifact_bundles_from_current_exe()?;
    find_bundle(&bundles, name)
        .ok_or_else(|| {
            let list: Vec<&str> = bundles.iter().map(|b| b.name.as_str()).collect();
            DriverError::Artifact {
                message: format!(
                    "no device code of crate `{name}` is linked into this executable (it has: {}); \
                     build with `cargo oxide build`, and check the crate name",
                    if list.is_empty() { "none".to_string() } else { list.join(", ") }
                ),
            }
        })?
        .load(ctx)
}

/// The manifest of the embedded bundle of crate or package `name`, if this executable has one.
pub fn embedded_manifest(name: &str) -> Option<Manifest> {
    let bundles = artifact_bundles_from_current_exe().ok()?;
    find_bundle(&bundles, name).map(|b| b.manifest.clone())
}

/// The bundle of crate `name` or of package `name` (a package's crate name has `_` for `-`).
pub(crate) fn find_bundle<'a>(bundles: &'a [OwnedArtifactBundle], name: &str) -> Option<&'a OwnedArtifactBundle> {
    let crate_name = name.replace('-', "_");
    bundles.iter().find(|b| b.name == name || b.manifest.crate_name == crate_name)
}

/// Copies of the bundles in the bytes of a bundle section.
fn owned_bundles(section: &[u8]) -> Result<Vec<OwnedArtifactBundle>, oxide_contract::BundleError> {
    split_section(section)?
        .into_iter()
        .map(|bytes| {
            let manifest = Bundle::parse(bytes)?.manifest;
            let name = if manifest.package.is_empty() { manifest.crate_name.clone() } else { manifest.package.clone() };
            Ok(OwnedArtifactBundle { name, manifest, bytes: bytes.to_vec() })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxide_contract::bundle::{PAYLOAD_ALIGN, Payload, write_bundle};

    fn bundle(name: &str, ptx: &[u8]) -> Vec<u8> {
        let manifest = Manifest::new(name);
        write_bundle(&manifest, &[Payload { kind: PayloadKind::Ptx, sm: 90, bytes: ptx }])
    }

    #[test]
    fn a_bundle_is_named_by_its_package_and_found_by_either_name() {
        let mut manifest = Manifest::new("module_kernels");
        manifest.package = "module-kernels".into();
        let section = write_bundle(&manifest, &[Payload { kind: PayloadKind::Ptx, sm: 90, bytes: b"x" }]);
        let found = owned_bundles(&section).unwrap();
        assert_eq!(found[0].name, "module-kernels");
        assert_eq!(found[0].manifest.crate_name, "module_kernels");
        assert!(find_bundle(&found, "module-kernels").is_some());
        assert!(find_bundle(&found, "module_kernels").is_some());
        assert!(find_bundle(&found, "module").is_none());
    }

    #[test]
    fn a_section_splits_into_its_bundles() {
        let mut section = bundle("first", b".version 8.0");
        section.resize(section.len().next_multiple_of(PAYLOAD_ALIGN) + 32, 0);
        section.extend(bundle("second_crate", b".version 8.1"));
        let found = owned_bundles(&section).unwrap();
        let names: Vec<&str> = found.iter().map(|b| b.name.as_str()).collect();
        assert_eq!(names, ["first", "second_crate"]);
        assert_eq!(found[1].payload(PayloadKind::Ptx), Some(&b".version 8.1"[..]));
        assert_eq!(found[0].payload(PayloadKind::Cubin), None);
        assert!(find_bundle(&found, "second-crate").is_some(), "a package name finds its crate's bundle");
        assert!(find_bundle(&found, "third").is_none());
        assert!(owned_bundles(&[0u8; 64]).unwrap().is_empty());
    }

    #[test]
    fn a_corrupt_bundle_is_an_error() {
        let mut section = bundle("first", b"x");
        section[16] = 0xff; // total_len far beyond the section
        assert!(owned_bundles(&section).is_err());
    }

    #[test]
    fn the_test_binary_has_no_bundles() {
        // Unit tests are built by plain cargo: no device code, so an empty list, not an error.
        assert!(artifact_bundles_from_current_exe().unwrap().is_empty());
    }
}
