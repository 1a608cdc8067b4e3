//! `<crate>.ptx` next to `Cargo.toml`: the file that programs written for NVIDIA's cuda-oxide load
//! by name (`ctx.load_module_from_file("app.ptx")`, `cuda_host::ltoir::load_kernel_module`).
//!
//! After a build, every workspace crate with kernels gets a copy of one of its PTX payloads at
//! `<package dir>/<crate>.ptx`: the PTX of the lowest `--arch` that is not arch-specific (else the
//! lowest). PTX JIT-compiles for the GPU it targets and every newer one, so the lowest arch is the
//! one file that loads on every GPU the build was made for. The file is rewritten only when its
//! contents change, so a build script that watches the package directory is not rerun for nothing.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use oxide_contract::arch::{ARCH_SPECIFIC_FLAG, Arch};
use oxide_contract::manifest::{Manifest, PayloadKind};

use crate::build::Built;

/// One `<crate>.ptx` written (or already up to date) by [`write_all`].
#[derive(Debug, PartialEq, Eq)]
pub struct PtxFile {
    pub path: PathBuf,
    pub arch: String,
}

/// The PTX payload to publish: the lowest arch that is not arch-specific, else the lowest.
///
/// ```
/// use oxide_contract::manifest::{Manifest, PayloadInfo, PayloadKind};
/// let ptx = |arch: &str| PayloadInfo {
///     arch: arch.into(), kind: PayloadKind::Ptx, file: format!("app.{arch}.ptx"), sha256: String::new(), bytes: 1,
///     cuda_release: None,
/// };
/// let mut m = Manifest::new("app");
/// m.payloads = vec![ptx("sm_90a"), ptx("sm_90"), ptx("sm_80")];
/// assert_eq!(cargo_oxide::ptx_file::choose(&m).unwrap().arch, "sm_80");
/// ```
pub fn choose(manifest: &Manifest) -> Option<&oxide_contract::manifest::PayloadInfo> {
    let code = |arch: &str| Arch::parse(arch).map(|a| a.code()).unwrap_or(u32::MAX);
    manifest
        .payloads
        .iter()
        .filter(|p| p.kind == PayloadKind::Ptx)
        .min_by_key(|p| (code(&p.arch) & ARCH_SPECIFIC_FLAG != 0, code(&p.arch)))
}

/// Writes `<package dir>/<crate>.ptx` for every built workspace crate that has kernels;
/// [`crate::build::build`] calls it after cargo succeeded and returns the list in `Built`.
pub fn write_all(built: &Built, artifact_dir: &Path) -> Result<Vec<PtxFile>> {
    let mut written: Vec<PtxFile> = Vec::new();
    for artifact in &built.artifacts {
        let crate_name = artifact.target.name.replace('-', "_");
        let Some(package_dir) = artifact.manifest_path.parent() else { continue };
        let path = package_dir.as_std_path().join(format!("{crate_name}.ptx"));
        if written.iter().any(|w| w.path == path) {
            continue; // a package's library and binary of one crate name share the artifacts
        }
        // The crate's own folder (`<crate>`) before a binary's beside its library (`<crate>.bin`).
        let candidates = oxide_contract::naming::crate_dir_candidates(&crate_name);
        let Some((dir, manifest)) = candidates.iter().find_map(|dir| built.manifests.get_key_value(dir.as_str()))
        else {
            continue;
        };
        let Some(payload) = choose(manifest) else { continue };
        let source = oxide_contract::naming::crate_artifact_dir(artifact_dir, dir).join(&payload.file);
        let ptx = std::fs::read(&source).with_context(|| format!("could not read {}", source.display()))?;
        if std::fs::read(&path).ok().as_deref() != Some(&ptx[..]) {
            std::fs::write(&path, &ptx).with_context(|| format!("could not write {}", path.display()))?;
        }
        written.push(PtxFile { path, arch: payload.arch.clone() });
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxide_contract::manifest::PayloadInfo;

    fn payload(arch: &str, kind: PayloadKind) -> PayloadInfo {
        PayloadInfo {
            arch: arch.into(),
            kind,
            file: format!("x.{arch}.{}", kind.name()),
            sha256: String::new(),
            bytes: 1,
            cuda_release: None,
        }
    }

    #[test]
    fn the_lowest_portable_ptx_is_chosen() {
        let mut m = Manifest::new("x");
        m.payloads = vec![
            payload("sm_90", PayloadKind::Cubin),
            payload("sm_90", PayloadKind::Ptx),
            payload("sm_90a", PayloadKind::Ptx),
            payload("sm_80", PayloadKind::Ptx),
            payload("sm_80", PayloadKind::Fatbin),
        ];
        assert_eq!(choose(&m).unwrap().arch, "sm_80");
        m.payloads.retain(|p| p.arch != "sm_80");
        assert_eq!(choose(&m).unwrap().arch, "sm_90", "arch-specific PTX only when nothing else is there");
        m.payloads.retain(|p| p.arch != "sm_90");
        assert_eq!(choose(&m).unwrap().arch, "sm_90a");
        m.payloads.clear();
        assert!(choose(&m).is_none());
    }
}
