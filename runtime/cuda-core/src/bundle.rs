//! Loading a device code bundle: pick the payload for the GPU, load it, look its kernels up.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use oxide_contract::bundle::Bundle;
use oxide_contract::manifest::{Manifest, PayloadKind};
use oxide_contract::toolkit::CudaRelease;

use crate::context::CudaContext;
use crate::error::DriverError;
use crate::module::{Function, Module};

/// A loaded module together with the manifest of the crate that built it.
pub struct LoadedBundle {
    module: Module,
    manifest: Arc<Manifest>,
    payload_kind: PayloadKind,
    payload_arch: String,
    functions: Mutex<HashMap<String, Function>>,
}

impl LoadedBundle {
    /// Wraps a module loaded from one payload of `manifest` (used by sideloading).
    pub fn from_parts(
        module: Module,
        manifest: Arc<Manifest>,
        payload_kind: PayloadKind,
        payload_arch: String,
    ) -> Self {
        LoadedBundle { module, manifest, payload_kind, payload_arch, functions: Mutex::new(HashMap::new()) }
    }

    /// The kernel with PTX entry name `entry` (looked up once, then cached).
    pub fn function(&self, entry: &str) -> Result<Function, DriverError> {
        let mut cache = self.functions.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(f) = cache.get(entry) {
            return Ok(f.clone());
        }
        let f = self.module.function(entry)?;
        cache.insert(entry.to_string(), f.clone());
        Ok(f)
    }

    /// The manifest: kernels, their parameters, payloads, tool versions.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// The loaded module.
    pub fn module(&self) -> &Module {
        &self.module
    }

    /// Which payload was loaded: its kind and arch (`sm_90`).
    pub fn payload(&self) -> (PayloadKind, &str) {
        (self.payload_kind, &self.payload_arch)
    }
}

/// Another handle to the same loaded module (NVIDIA's loaders return an `Arc<CudaModule>`, which
/// programs clone); the copy starts with the functions looked up so far.
impl Clone for LoadedBundle {
    fn clone(&self) -> Self {
        let functions = self.functions.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone();
        LoadedBundle {
            module: self.module.clone(),
            manifest: Arc::clone(&self.manifest),
            payload_kind: self.payload_kind,
            payload_arch: self.payload_arch.clone(),
            functions: Mutex::new(functions),
        }
    }
}

/// The loaded module, for `kernels::from_module(bundle)` (NVIDIA's loaders return the
/// `Arc<CudaModule>` that `from_module` takes).
impl From<LoadedBundle> for Arc<Module> {
    fn from(bundle: LoadedBundle) -> Arc<Module> {
        Arc::new(bundle.module)
    }
}

impl std::fmt::Debug for LoadedBundle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedBundle")
            .field("crate", &self.manifest.crate_name)
            .field("payload", &(self.payload_kind, &self.payload_arch))
            .field("entries", &self.manifest.entries())
            .finish()
    }
}

/// Loads a bundle from bytes (for example one read from a file).
pub fn load_bundle(ctx: &Arc<CudaContext>, bytes: &[u8]) -> Result<LoadedBundle, DriverError> {
    let bundle = Bundle::parse(bytes)?;
    LoadedBundle::load(ctx, &bundle)
}

/// Loads the bundle at a bundle symbol's address: what `#[cuda_module]`'s loader called before
/// kernels were looked up in every bundle of the binary. Kept for one release (CHANGELOG.md).
///
/// # Safety
/// `bundle_ptr` must be the address of a bundle symbol emitted by `oxide-rustc` (or of other
/// memory living for the whole program that holds a complete bundle).
#[deprecated(
    since = "0.1.0",
    note = "kernels are found in every bundle of the binary now: use `EmbeddedKernels::new(&ctx)` or the \
            generated `kernels::load(&ctx)`; `cuda_host::embedded::load_embedded_module(&ctx, \"crate\")` loads \
            one crate's bundle by name"
)]
pub unsafe fn load_embedded(ctx: &Arc<CudaContext>, bundle_ptr: *const u8) -> Result<LoadedBundle, DriverError> {
    // SAFETY: forwarded to the caller.
    let bundle = unsafe { Bundle::from_symbol(bundle_ptr) }?;
    LoadedBundle::load(ctx, &bundle)
}

impl LoadedBundle {
    /// Loads `bundle` on `ctx`'s GPU, trying the ways to do so best first (see
    /// `oxide_contract::bundle::candidates`): the exact-SM cubin, a fatbin, a compatible cubin, the
    /// PTX JIT, then the LTOIR linked for the GPU by nvJitLink. A way that fails (a driver too old
    /// for the PTX, no nvJitLink) moves on to the next; when none works, the first failure is
    /// returned, and when there is none at all, the explained `CUDA_ERROR_NO_BINARY_FOR_GPU`.
    pub fn load(ctx: &Arc<CudaContext>, bundle: &Bundle<'_>) -> Result<LoadedBundle, DriverError> {
        let device_sm = ctx.capability();
        let choices = bundle.candidates(device_sm)?;
        let manifest = Arc::new(bundle.manifest.clone());
        let mut first_error = None;
        for choice in &choices {
            let arch = oxide_contract::bundle::arch_name(choice.sm);
            let loaded = match choice.kind {
                PayloadKind::Ltoir => link_ltoir(bundle, choice, device_sm, manifest.fmad).and_then(|cubin| {
                    Module::load_with_manifest(ctx, PayloadKind::Cubin, &cubin, Arc::clone(&manifest))
                }),
                kind => {
                    let payload = bundle.payloads[choice.payloads[0]];
                    Module::load_with_manifest(ctx, kind, payload.bytes, Arc::clone(&manifest))
                }
            };
            match loaded {
                Ok(module) => return Ok(LoadedBundle::from_parts(module, manifest, choice.kind, arch)),
                Err(e) => {
                    let (major, minor) = device_sm;
                    let e = e.context(format!(
                        "loading the {} {arch} payload of crate `{}` on {} (sm_{major}{minor})",
                        choice.kind,
                        manifest.crate_name,
                        ctx.name()
                    ));
                    first_error.get_or_insert(e);
                }
            }
        }
        Err(first_error.expect("candidates returns at least one way to load"))
    }
}

/// Links the LTOIR payloads of `choice` into a cubin for the GPU of compute capability
/// `device_sm`, with the first nvJitLink found whose CUDA release can link LTOIR of the newest
/// release that made them (the manifest records it per payload).
fn link_ltoir(
    bundle: &Bundle<'_>,
    choice: &oxide_contract::bundle::Choice,
    device_sm: (u32, u32),
    fmad: bool,
) -> Result<Vec<u8>, DriverError> {
    let arch_name = format!("sm_{}{}", device_sm.0, device_sm.1);
    let arch = oxide_contract::Arch::parse(&arch_name)
        .map_err(|e| DriverError::Bundle { message: format!("linking LTOIR for this GPU: {e}") })?;
    let need = ltoir_release(&bundle.manifest, &choice.payloads);
    let nvjitlink = cuda_link::NvJitLink::find(need).map_err(|e| DriverError::Bundle {
        message: format!(
            "linking the LTOIR of crate `{}` for {arch_name}: {e}, or rebuild with a cubin or PTX for this GPU \
             (`cargo oxide build --arch {arch_name}`)",
            bundle.manifest.crate_name
        ),
    })?;
    let names: Vec<String> = choice.payloads.iter().map(|i| format!("ltoir payload {i}")).collect();
    let inputs: Vec<cuda_link::Input<'_>> = choice
        .payloads
        .iter()
        .zip(&names)
        .map(|(&i, name)| cuda_link::Input { kind: cuda_link::InputKind::Ltoir, name, bytes: bundle.payloads[i].bytes })
        .collect();
    let options = oxide_contract::link::nvjitlink_options(
        arch,
        fmad,
        oxide_contract::link::LinkOutput::Cubin,
        oxide_contract::link::LinkDebug::None,
    );
    nvjitlink.link(&options, &inputs).map_err(|e| {
        let (major, minor) = nvjitlink.version();
        let at = nvjitlink.path().display();
        let made_by = match need {
            Some(release) => format!("LTOIR of CUDA {release}"),
            None => "LTOIR of an unrecorded CUDA release (a bundle of an older cuda-oxide: rebuild it)".into(),
        };
        DriverError::Bundle {
            message: format!("linking {made_by} for {arch_name} with nvJitLink {major}.{minor} ({at}): {e}"),
        }
    })
}

/// The newest CUDA release that made one of the LTOIR payloads `indices` (bundle payload `i`
/// is manifest payload `i`); `None` when none records it.
fn ltoir_release(manifest: &Manifest, indices: &[usize]) -> Option<CudaRelease> {
    indices.iter().filter_map(|&i| manifest.payloads.get(i)?.cuda_release).max()
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxide_contract::manifest::PayloadInfo;

    #[test]
    fn the_newest_recorded_release_of_the_linked_payloads_is_needed() {
        let payload = |release: Option<(u32, u32)>| PayloadInfo {
            arch: "sm_80".into(),
            kind: PayloadKind::Ltoir,
            file: String::new(),
            sha256: String::new(),
            bytes: 1,
            cuda_release: release.map(|(major, minor)| CudaRelease::new(major, minor)),
        };
        let mut m = Manifest::new("x");
        m.payloads = vec![payload(Some((13, 5))), payload(None), payload(Some((13, 2))), payload(Some((13, 9)))];
        assert_eq!(ltoir_release(&m, &[0, 1, 2]), Some(CudaRelease::new(13, 5)));
        assert_eq!(ltoir_release(&m, &[1]), None);
        assert_eq!(ltoir_release(&m, &[2, 3]), Some(CudaRelease::new(13, 9)));
        assert_eq!(ltoir_release(&m, &[7]), None);
    }
}
