//! The crate's artifacts as the runtime sees them: the manifest, the bundle bytes embedded in
//! the binary, and the files published under `<artifact_dir>/<crate>/` (contract §6, §7).

use std::collections::BTreeMap;
use std::path::PathBuf;

use oxide_contract::arch::Arch;
use oxide_contract::bundle::{Payload, write_bundle};
use oxide_contract::config::ToolPaths;
use oxide_contract::manifest::{KernelInfo, MANIFEST_FORMAT_VERSION, Manifest, PayloadInfo, PayloadKind};
use oxide_contract::naming::files;

use super::tools::{ToolError, read, version_line};
use super::workdir::WorkDir;

/// The device files one build produced, in the work directory.
#[derive(Default)]
pub struct Built {
    pub ptx: Vec<(Arch, PathBuf)>,
    pub cubins: Vec<(Arch, PathBuf)>,
    /// The fatbin and the lowest arch it holds.
    pub fatbin: Option<(Arch, PathBuf)>,
}

impl Built {
    /// The PTX built for `arch`.
    pub fn ptx_for(&self, arch: Arch) -> Option<&PathBuf> {
        self.ptx.iter().find(|(a, _)| *a == arch).map(|(_, p)| p)
    }
}

/// Writes `manifest.json` and returns the bundle bytes; publishes the payloads, then the
/// manifest that names them, and removes payload files of earlier builds it does not name.
pub fn write(
    tools: &ToolPaths,
    work: &WorkDir,
    crate_name: &str,
    crate_dir: &str,
    kernels: Vec<KernelInfo>,
    built: &Built,
) -> Result<Vec<u8>, ToolError> {
    // Exact cubins first, then the fatbin, then PTX for JIT (see `bundle::select`).
    let mut owned: Vec<(PayloadKind, Arch, &PathBuf, Vec<u8>)> = Vec::new();
    for (a, p) in &built.cubins {
        owned.push((PayloadKind::Cubin, *a, p, read(p)?));
    }
    if let Some((a, p)) = &built.fatbin {
        owned.push((PayloadKind::Fatbin, *a, p, read(p)?));
    }
    for (a, p) in &built.ptx {
        owned.push((PayloadKind::Ptx, *a, p, read(p)?));
    }

    let mut tool_versions = BTreeMap::new();
    tool_versions.insert("llc".to_string(), version_line(&tools.llc));
    if let Some(ptxas) = &tools.ptxas {
        tool_versions.insert("ptxas".to_string(), version_line(ptxas));
    }
    let manifest = Manifest {
        format_version: MANIFEST_FORMAT_VERSION,
        crate_name: crate_name.to_string(),
        dir: crate_dir.to_string(),
        kernels,
        payloads: owned
            .iter()
            .map(|(kind, arch, path, bytes)| PayloadInfo {
                arch: arch.to_string(),
                kind: *kind,
                file: path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
                sha256: oxide_contract::sha256_hex(bytes),
                bytes: bytes.len() as u64,
            })
            .collect(),
        tools: tool_versions,
    };
    let payloads: Vec<Payload<'_>> =
        owned.iter().map(|(kind, arch, _, bytes)| Payload { kind: *kind, sm: arch.code(), bytes }).collect();
    let bundle = write_bundle(&manifest, &payloads);
    let manifest_path = work.path(files::MANIFEST);
    let json = serde_json::to_string_pretty(&manifest).unwrap_or_default();
    std::fs::write(&manifest_path, json).map_err(|e| ToolError::Io(manifest_path.clone(), e))?;
    for (_, _, path, _) in &owned {
        work.publish(path)?;
    }
    work.publish(&manifest_path)?;
    let published: Vec<String> = manifest.payloads.iter().map(|p| p.file.clone()).collect();
    work.remove_stale(crate_name, &published);
    Ok(bundle)
}
