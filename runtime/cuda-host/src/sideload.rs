//! `load_kernel_module`: load a crate's device code from its build artifacts by name.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cuda_core::oxide_contract::arch::Arch;
use cuda_core::oxide_contract::manifest::{Manifest, PayloadKind};
use cuda_core::oxide_contract::naming::{self, files};
use cuda_core::oxide_contract::{bundle, sha256_hex};
use cuda_core::{CudaContext, DriverError, LoadedBundle, Module};

/// Environment variable naming the artifact directory (`<target>/oxide/<profile>/device`) explicitly.
pub const ARTIFACT_DIR_ENV: &str = "CUDA_OXIDE_ARTIFACT_DIR";

fn artifact_error(message: String) -> DriverError {
    DriverError::Artifact { message }
}

/// Directories that may hold `<name>/manifest.json`, most likely first: `$CUDA_OXIDE_ARTIFACT_DIR`
/// if set, else the `device` folder of the profile the running executable was built with
/// (`<target>/oxide/<profile>/device`, beside the executable, or above it for an example), else
/// the `device` folder of every profile of a `target/oxide` above the executable.
pub fn artifact_dir_candidates() -> Vec<PathBuf> {
    if let Some(dir) = std::env::var_os(ARTIFACT_DIR_ENV) {
        return vec![PathBuf::from(dir)];
    }
    let mut out = Vec::new();
    let mut push = |dir: PathBuf| {
        if dir.is_dir() && !out.contains(&dir) {
            out.push(dir);
        }
    };
    if let Ok(exe) = std::env::current_exe() {
        for dir in exe.ancestors().skip(1).take(3) {
            push(dir.join(naming::DEVICE_DIR));
        }
        for dir in exe.ancestors().skip(1) {
            let oxide = if dir.file_name().is_some_and(|n| n == "oxide") {
                dir.to_path_buf()
            } else {
                dir.join("target/oxide")
            };
            for profile in ["release", "debug"] {
                push(naming::device_artifact_dir(&oxide, profile));
            }
        }
    }
    out
}

/// Crate names that have a `manifest.json` in `dir`, sorted.
fn available_modules(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().join(files::MANIFEST).is_file())
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    names.sort();
    names
}

/// Finds `<artifact dir>/<name>/`, or says where it looked and what modules exist there.
pub fn find_module_dir(name: &str) -> Result<PathBuf, DriverError> {
    let candidates = artifact_dir_candidates();
    // Artifacts are filed under the crate name (a package name `my-app` means crate `my_app`),
    // with `.bin` for a binary beside a library of its name (`naming::crate_dir_name`).
    for dir in &candidates {
        for module_dir in naming::crate_dir_candidates(name).iter().map(|d| dir.join(d)) {
            if module_dir.join(files::MANIFEST).is_file() {
                return Ok(module_dir);
            }
        }
    }
    let Some(first) = candidates.first() else {
        return Err(artifact_error(format!(
            "no device module `{name}`: found no artifact directory (target/oxide/<profile>/device) near the executable; \
             build with `cargo oxide build` or set {ARTIFACT_DIR_ENV}"
        )));
    };
    let available = available_modules(first);
    let list = if available.is_empty() { "none".to_string() } else { available.join(", ") };
    Err(artifact_error(format!(
        "no device module `{name}` in {}: available modules: {list}; module names are crate names \
         (build the crate with `cargo oxide build`, or set {ARTIFACT_DIR_ENV}){}",
        first.display(),
        old_artifact_dir_hint(first)
    )))
}

/// When `dir` is the artifact directory of before per-profile artifacts (`<target>/oxide`, what
/// `CUDA_OXIDE_ARTIFACT_DIR` named then), what it should name now.
fn old_artifact_dir_hint(dir: &Path) -> String {
    let profiles: Vec<PathBuf> =
        ["release", "dev"].iter().map(|p| naming::device_artifact_dir(dir, p)).filter(|d| d.is_dir()).collect();
    match profiles.first() {
        Some(device) if std::env::var_os(ARTIFACT_DIR_ENV).is_some() => format!(
            "; {ARTIFACT_DIR_ENV} names a profile's device folder now, not `<target>/oxide`: set it to {}",
            device.display()
        ),
        _ => String::new(),
    }
}

/// Loads the device code of crate `name` from the build's artifacts
/// (`<target>/oxide/<name>/manifest.json` and the payload files it lists), choosing the payload
/// for the context's GPU as the embedded loader does.
///
/// When there is no artifact directory (the binary was copied to another machine, say), it
/// looks for the `<name>.ptx` (or `<name>.cubin`) that `cargo oxide build` writes beside the
/// binaries, then where NVIDIA's `load_kernel_module` does: in `$CARGO_MANIFEST_DIR` (run time)
/// and the current directory (see [`crate::ltoir::load_kernel_module`]);
/// then at crate `name`'s device code embedded in the executable. A module loaded from such a
/// file has no manifest, so its launches are not checked against the kernels' parameters.
///
/// ```no_run
/// let ctx = cuda_core::CudaContext::new(0)?;
/// let module = cuda_host::load_kernel_module(&ctx, "vecadd")?;
/// # Ok::<(), cuda_core::DriverError>(())
/// ```
pub fn load_kernel_module(ctx: &Arc<CudaContext>, name: &str) -> Result<LoadedBundle, DriverError> {
    let not_in_artifacts = match find_module_dir(name) {
        Ok(dir) => return load_module_dir(ctx, &dir),
        Err(e) => e,
    };
    let not_in_files = match crate::ltoir::find_file(name) {
        Ok(path) => return load_file(ctx, name, &path),
        Err(e) => e,
    };
    cuda_core::embedded::load_embedded_module(ctx, name)
        .map_err(|_| artifact_error(format!("{not_in_artifacts}; {not_in_files}")))
}

/// A `<name>.ptx` / `.cubin` as a [`LoadedBundle`]. The file has no manifest: when this
/// executable embeds crate `name`'s bundle, the file is that build's `<crate>.ptx` and its
/// manifest names the entries (kernels are found by their keyed entry names); else it is empty.
fn load_file(ctx: &Arc<CudaContext>, name: &str, path: &Path) -> Result<LoadedBundle, DriverError> {
    let bytes = std::fs::read(path).map_err(|e| artifact_error(format!("cannot read {}: {e}", path.display())))?;
    let kind = cuda_core::payload_kind_of(&bytes).unwrap_or(PayloadKind::Ptx);
    let module = Module::load(ctx, kind, &bytes).map_err(|e| e.context(format!("loading {}", path.display())))?;
    let manifest =
        Arc::new(cuda_core::embedded::embedded_manifest(name).unwrap_or_else(|| Manifest::new(name.replace('-', "_"))));
    Ok(LoadedBundle::from_parts(module, manifest, kind, format!("file {}", path.display())))
}

/// Loads the device code described by `<dir>/manifest.json`.
pub fn load_module_dir(ctx: &Arc<CudaContext>, dir: &Path) -> Result<LoadedBundle, DriverError> {
    let manifest_path = dir.join(files::MANIFEST);
    let text = std::fs::read_to_string(&manifest_path)
        .map_err(|e| artifact_error(format!("cannot read {}: {e}", manifest_path.display())))?;
    let manifest = Manifest::from_json(&text)
        .map_err(|e| artifact_error(format!("cannot parse {}: {e}", manifest_path.display())))?;
    let usable: Vec<(usize, u32)> = manifest
        .payloads
        .iter()
        .enumerate()
        .filter_map(|(i, p)| Arch::parse(&p.arch).ok().map(|a| (i, a.code())))
        .collect();
    let chosen = bundle::select(usable.iter().map(|(i, code)| (manifest.payloads[*i].kind, *code)), ctx.capability())?;
    let info = &manifest.payloads[usable[chosen].0];
    let path = dir.join(&info.file);
    let bytes = std::fs::read(&path).map_err(|e| artifact_error(format!("cannot read {}: {e}", path.display())))?;
    if bytes.len() as u64 != info.bytes || sha256_hex(&bytes) != info.sha256 {
        return Err(artifact_error(format!(
            "{} does not match {} (it changed after the build); rebuild with `cargo oxide build`",
            path.display(),
            manifest_path.display()
        )));
    }
    let (kind, arch) = (info.kind, info.arch.clone());
    let manifest = Arc::new(manifest);
    let module = Module::load_with_manifest(ctx, kind, &bytes, Arc::clone(&manifest))
        .map_err(|e| e.context(format!("loading {}", path.display())))?;
    Ok(LoadedBundle::from_parts(module, manifest, kind, arch))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_module_lists_what_exists() {
        let root = std::env::temp_dir().join(format!("oxide-sideload-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for name in ["alpha", "beta", "my_app", "both.bin"] {
            std::fs::create_dir_all(root.join(name)).unwrap();
            std::fs::write(root.join(name).join("manifest.json"), "{}").unwrap();
        }
        std::fs::create_dir_all(root.join("debug")).unwrap();
        // SAFETY (of set_var): this is the only test in this binary touching the environment.
        unsafe { std::env::set_var(ARTIFACT_DIR_ENV, &root) };
        assert_eq!(artifact_dir_candidates(), std::slice::from_ref(&root));
        assert_eq!(find_module_dir("beta").unwrap(), root.join("beta"));
        // A package name finds its crate's artifacts.
        assert_eq!(find_module_dir("my-app").unwrap(), root.join("my_app"));
        // A binary beside a library of its name has its artifacts in `<crate>.bin`.
        assert_eq!(find_module_dir("both").unwrap(), root.join("both.bin"));
        let msg = find_module_dir("gamma").unwrap_err().to_string();
        assert!(msg.contains("no device module `gamma`"), "{msg}");
        assert!(msg.contains("available modules: alpha, beta, both.bin, my_app;"), "{msg}");
        assert!(!msg.contains("names a profile's device folder"), "{msg}");
        // Set to `<target>/oxide`, as before artifacts were per profile: the error says what to set.
        std::fs::create_dir_all(root.join("release/device")).unwrap();
        let msg = find_module_dir("gamma").unwrap_err().to_string();
        let device = root.join("release/device");
        assert!(msg.ends_with(&format!("set it to {}", device.display())), "{msg}");
        unsafe { std::env::remove_var(ARTIFACT_DIR_ENV) };
        let _ = std::fs::remove_dir_all(&root);
    }
}
