//! Loading a device code bundle: pick the payload for the GPU, load it, look its kernels up.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use oxide_contract::bundle::Bundle;
use oxide_contract::manifest::{Manifest, PayloadKind};

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

impl LoadedBundle {
    /// Loads the payload of `bundle` that fits `ctx`'s GPU (see `oxide_contract::bundle::select`).
    pub fn load(ctx: &Arc<CudaContext>, bundle: &Bundle<'_>) -> Result<LoadedBundle, DriverError> {
        let payload = bundle.select_payload(ctx.capability())?;
        let manifest = Arc::new(bundle.manifest.clone());
        let arch = payload.arch_name();
        let module =
            Module::load_with_manifest(ctx, payload.kind, payload.bytes, Arc::clone(&manifest)).map_err(|e| {
                let (major, minor) = ctx.capability();
                e.context(format!(
                    "loading the {} {arch} payload of crate `{}` on {} (sm_{major}{minor})",
                    payload.kind,
                    manifest.crate_name,
                    ctx.name()
                ))
            })?;
        Ok(LoadedBundle::from_parts(module, manifest, payload.kind, arch))
    }
}
