//! The short report after a build: per crate its kernels and device payloads, and the built binaries.
use std::collections::BTreeMap;
use std::path::Path;

use oxide_contract::config::DeviceConfig;
use oxide_contract::manifest::{KernelInfo, Manifest, PayloadKind};
use oxide_contract::naming::files;

use crate::build::Built;

/// Reads `<artifact_dir>/<crate>/manifest.json`, if the crate has kernels.
pub fn read_manifest(artifact_dir: &Path, crate_name: &str) -> Option<Manifest> {
    let path = oxide_contract::naming::crate_artifact_dir(artifact_dir, crate_name).join(files::MANIFEST);
    let text = std::fs::read_to_string(path).ok()?;
    Manifest::from_json(&text).ok()
}

/// `vecadd(a: slice, b: slice, c: disjoint_slice)`.
pub fn kernel_signature(kernel: &KernelInfo) -> String {
    let params: Vec<String> = kernel
        .params
        .iter()
        .map(|p| {
            format!(
                "{}: {}",
                p.name,
                serde_json::to_value(p.kind).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
            )
        })
        .collect();
    format!("{}({})", kernel.entry, params.join(", "))
}

/// `sm_80 ptx cubin · sm_90 ptx cubin · fatbin of all`, grouped by arch in manifest order.
pub fn payload_line(manifest: &Manifest) -> String {
    let mut by_arch: Vec<(String, Vec<&str>)> = Vec::new();
    let mut fatbin = false;
    for p in &manifest.payloads {
        // A fatbin holds every arch; the manifest files it under its lowest one.
        if p.kind == PayloadKind::Fatbin {
            fatbin = true;
            continue;
        }
        match by_arch.iter_mut().find(|(a, _)| *a == p.arch) {
            Some((_, kinds)) => kinds.push(p.kind.name()),
            None => by_arch.push((p.arch.clone(), vec![p.kind.name()])),
        }
    }
    let mut parts: Vec<String> =
        by_arch.into_iter().map(|(arch, kinds)| format!("{arch} {}", kinds.join(" "))).collect();
    if fatbin {
        parts.push("fatbin of all".to_string());
    }
    parts.join(" · ")
}

/// Prints the kernels and payloads of every workspace crate that was built, then the binaries.
pub fn print(built: &Built, config: &DeviceConfig) {
    let mut crates: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for a in &built.artifacts {
        let entry = crates.entry(a.target.name.replace('-', "_")).or_default();
        if let Some(exe) = &a.executable {
            entry.push(exe.to_string());
        }
    }
    for (crate_name, exes) in &crates {
        if let Some(manifest) = read_manifest(&config.artifact_dir, crate_name) {
            for k in &manifest.kernels {
                eprintln!("{:>12} {crate_name}::{}", "Kernel", kernel_signature(k));
            }
            eprintln!("{:>12} {crate_name}: {}", "Payloads", payload_line(&manifest));
        }
        for exe in exes {
            eprintln!("{:>12} {exe}", "Binary");
        }
    }
    for ptx in &built.ptx_files {
        eprintln!("{:>12} {} ({}, for loading by file name)", "PTX", ptx.path.display(), ptx.arch);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxide_contract::manifest::{ParamInfo, ParamKind, PayloadInfo};

    fn payload(arch: &str, kind: PayloadKind) -> PayloadInfo {
        PayloadInfo { arch: arch.into(), kind, file: String::new(), sha256: String::new(), bytes: 1 }
    }

    #[test]
    fn summary_lines() {
        let mut m = Manifest::new("demo");
        m.kernels.push(KernelInfo {
            name: "kernels::vecadd".into(),
            entry: "vecadd".into(),
            params: vec![
                ParamInfo { name: "a".into(), ty: "&[f32]".into(), kind: ParamKind::Slice, size: 16, align: 8 },
                ParamInfo {
                    name: "c".into(),
                    ty: "DisjointSlice<f32>".into(),
                    kind: ParamKind::DisjointSlice,
                    size: 16,
                    align: 8,
                },
            ],
            launch_bounds: None,
            cluster_dims: None,
        });
        m.payloads = vec![
            payload("sm_80", PayloadKind::Ptx),
            payload("sm_80", PayloadKind::Cubin),
            payload("sm_90", PayloadKind::Cubin),
            payload("sm_80", PayloadKind::Fatbin),
        ];
        assert_eq!(kernel_signature(&m.kernels[0]), "vecadd(a: slice, c: disjoint_slice)");
        assert_eq!(payload_line(&m), "sm_80 ptx cubin · sm_90 cubin · fatbin of all");
    }
}
