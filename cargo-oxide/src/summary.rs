//! The short report after a build: per crate its kernels and device payloads, and the built binaries.
use oxide_contract::config::DeviceConfig;
use oxide_contract::manifest::{KernelInfo, Manifest, PayloadKind};

use crate::build::Built;

/// `app::kernels::combine::<f32, Add>`: the kernel's module path, then its name with type
/// arguments trimmed to their last segment ([`KernelInfo::display_name`]), never the hashed entry.
pub fn readable_name(kernel: &KernelInfo) -> String {
    let path = kernel.name.split_once("::<").map_or(kernel.name.as_str(), |(path, _)| path);
    match path.rsplit_once("::") {
        Some((module, _)) => format!("{module}::{}", kernel.display_name()),
        None => kernel.display_name().to_string(),
    }
}

/// `app::kernels::vecadd(a: slice, b: slice, c: disjoint_slice)`: the kernel by its
/// [`readable_name`] and the kinds of its parameters.
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
    format!("{}({})", readable_name(kernel), params.join(", "))
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

/// Prints the kernels and payloads of every bundle the build's files embed (by artifact folder),
/// then the binaries.
pub fn print(built: &Built, config: &DeviceConfig) {
    for (dir, manifest) in &built.manifests {
        for k in &manifest.kernels {
            eprintln!("{:>12} {}", "Kernel", kernel_signature(k));
        }
        let path = oxide_contract::naming::crate_artifact_dir(&config.artifact_dir, dir);
        eprintln!("{:>12} {dir}: {} ({})", "Payloads", payload_line(manifest), path.display());
    }
    for a in &built.artifacts {
        if let Some(exe) = &a.executable {
            eprintln!("{:>12} {exe}", "Binary");
        }
    }
    for ptx in &built.ptx_files {
        eprintln!("{:>12} {} ({}, for loading by file name)", "PTX", ptx.path.display(), ptx.arch);
    }
    for module in &built.python_modules {
        eprintln!(
            "{:>12} {} (`import {}` with PYTHONPATH={})",
            "Python",
            module.path.display(),
            module.name,
            module.dir().display()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxide_contract::manifest::{ParamInfo, ParamKind, PayloadInfo};

    fn payload(arch: &str, kind: PayloadKind) -> PayloadInfo {
        PayloadInfo {
            arch: arch.into(),
            kind,
            file: String::new(),
            sha256: String::new(),
            bytes: 1,
            cuda_release: None,
        }
    }

    #[test]
    fn summary_lines() {
        let mut m = Manifest::new("demo");
        m.kernels.push(KernelInfo {
            name: "kernels::vecadd".into(),
            display_name: String::new(),
            key: 1,
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
            cooperative: false,
            launch_contract: None,
            fast: None,
        });
        m.payloads = vec![
            payload("sm_80", PayloadKind::Ptx),
            payload("sm_80", PayloadKind::Cubin),
            payload("sm_90", PayloadKind::Cubin),
            payload("sm_80", PayloadKind::Fatbin),
        ];
        assert_eq!(kernel_signature(&m.kernels[0]), "kernels::vecadd(a: slice, c: disjoint_slice)");
        let mut generic = m.kernels[0].clone();
        generic.name = "app::kernels::combine::<f32, app::ops::Add>".into();
        generic.display_name = "combine::<f32, Add>".into();
        generic.entry = "combine_0123456789abcdef".into();
        assert_eq!(kernel_signature(&generic), "app::kernels::combine::<f32, Add>(a: slice, c: disjoint_slice)");
        // A manifest from before display names: the full type arguments, still no hash.
        generic.display_name.clear();
        assert_eq!(
            kernel_signature(&generic),
            "app::kernels::combine::<f32, app::ops::Add>(a: slice, c: disjoint_slice)"
        );
        assert_eq!(payload_line(&m), "sm_80 ptx cubin · sm_90 cubin · fatbin of all");
    }
}
