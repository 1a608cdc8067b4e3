//! The crate's artifacts as the runtime sees them: the manifest, the bundle bytes embedded in
//! the binary, and the files published under `<artifact_dir>/<crate>/` (contract §6, §7).

use std::path::PathBuf;

use oxide_contract::arch::Arch;
use oxide_contract::bundle::{Payload, write_bundle};
use oxide_contract::config::ToolPaths;
use oxide_contract::manifest::{
    DeviceFunction, KernelInfo, MANIFEST_FORMAT_VERSION, Manifest, PayloadInfo, PayloadKind,
};
use oxide_contract::naming::files;
use oxide_contract::toolkit::CudaRelease;

use super::tools::{ToolError, read};
use super::workdir::WorkDir;

/// The device files one build produced, in the work directory.
#[derive(Default)]
pub struct Built {
    pub ptx: Vec<(Arch, PathBuf)>,
    pub cubins: Vec<(Arch, PathBuf)>,
    /// The fatbin and the lowest arch it holds.
    pub fatbin: Option<(Arch, PathBuf)>,
    /// The crate's LTOIR per arch (`--emit ltoir`), with the CUDA release of the libNVVM that
    /// made it.
    pub ltoir: Vec<(Arch, PathBuf, Option<CudaRelease>)>,
    /// The LTOIR of the package's CUDA C++ sources, bundled with the crate's so that a program
    /// can link both for a GPU that has no cubin; with the release of the nvcc that made it.
    pub source_ltoir: Vec<(Arch, PathBuf, Option<CudaRelease>)>,
}

/// What the crate shares with CUDA C++, for the manifest and the C header.
pub struct Interop {
    pub fmad: bool,
    pub exports: Vec<DeviceFunction>,
    pub imports: Vec<DeviceFunction>,
}

impl Built {
    /// The PTX built for `arch`.
    pub fn ptx_for(&self, arch: Arch) -> Option<&PathBuf> {
        self.ptx.iter().find(|(a, _)| *a == arch).map(|(_, p)| p)
    }
}

/// One payload file, as the manifest describes it.
struct Owned<'a> {
    kind: PayloadKind,
    arch: Arch,
    path: &'a PathBuf,
    release: Option<CudaRelease>,
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
    interop: &Interop,
) -> Result<Vec<u8>, ToolError> {
    // Exact cubins first, then the fatbin, then PTX for JIT (see `bundle::select`).
    let mut owned: Vec<(Owned<'_>, Vec<u8>)> = Vec::new();
    let mut add = |kind, arch, path, release| -> Result<(), ToolError> {
        owned.push((Owned { kind, arch, path, release }, read(path)?));
        Ok(())
    };
    for (a, p) in &built.cubins {
        add(PayloadKind::Cubin, *a, p, None)?;
    }
    if let Some((a, p)) = &built.fatbin {
        add(PayloadKind::Fatbin, *a, p, None)?;
    }
    for (a, p) in &built.ptx {
        add(PayloadKind::Ptx, *a, p, None)?;
    }
    // LTOIR last: the loader links it only when nothing else runs on the GPU.
    for (a, p, release) in built.ltoir.iter().chain(&built.source_ltoir) {
        add(PayloadKind::Ltoir, *a, p, *release)?;
    }

    let manifest = Manifest {
        format_version: MANIFEST_FORMAT_VERSION,
        crate_name: crate_name.to_string(),
        // Cargo sets it for every rustc it runs; the crate of a package is that package's bundle.
        package: std::env::var("CARGO_PKG_NAME").unwrap_or_default(),
        dir: crate_dir.to_string(),
        kernels,
        payloads: owned
            .iter()
            .map(|(o, bytes)| PayloadInfo {
                arch: o.arch.to_string(),
                kind: o.kind,
                file: o.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
                sha256: oxide_contract::sha256_hex(bytes),
                bytes: bytes.len() as u64,
                cuda_release: o.release,
            })
            .collect(),
        tools: tools.versions.clone(),
        fmad: interop.fmad,
        exports: interop.exports.clone(),
        imports: interop.imports.clone(),
    };
    let payloads: Vec<Payload<'_>> =
        owned.iter().map(|(o, bytes)| Payload { kind: o.kind, sm: o.arch.code(), bytes }).collect();
    let bundle = write_bundle(&manifest, &payloads);
    let manifest_path = work.path(files::MANIFEST);
    let json = serde_json::to_string_pretty(&manifest).unwrap_or_default();
    std::fs::write(&manifest_path, json).map_err(|e| ToolError::Io(manifest_path.clone(), e))?;
    for (o, _) in &owned {
        work.publish(o.path)?;
    }
    if !interop.exports.is_empty() {
        // The C declarations CUDA C++ includes to call the exports.
        let header = work.path(&files::c_header(crate_name));
        let text = crate::lower::c_header(crate_name, &interop.exports);
        std::fs::write(&header, text).map_err(|e| ToolError::Io(header.clone(), e))?;
        work.publish(&header)?;
    }
    work.publish(&manifest_path)?;
    let mut published: Vec<String> = manifest.payloads.iter().map(|p| p.file.clone()).collect();
    if !interop.exports.is_empty() {
        published.push(files::c_header(crate_name));
    }
    work.remove_stale(crate_name, &published);
    Ok(bundle)
}
