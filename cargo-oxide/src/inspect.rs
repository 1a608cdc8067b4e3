//! `cargo oxide inspect` (a crate's manifest, PTX or LLVM IR from the last build) and `cargo oxide clean`.
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use oxide_contract::arch::Arch;
use oxide_contract::naming::{self, crate_artifact_dir, files};

use crate::cli::{CleanArgs, InspectArgs};
use crate::project::Project;
use crate::{print_stdout, summary};

/// Artifact folders of `device_dir` that have a `manifest.json`, sorted.
fn crates_with_kernels(device_dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(device_dir)
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| e.path().join(files::MANIFEST).is_file())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

pub fn inspect(args: &InspectArgs) -> Result<()> {
    let project = Project::load(args.manifest_path.as_deref(), None, None)?;
    let profile = match (&args.profile, args.release) {
        (Some(p), _) => p.as_str(),
        (None, true) => "release",
        (None, false) => "dev",
    };
    let device_dir = naming::device_artifact_dir(&project.oxide_dir(), profile);
    let available = crates_with_kernels(&device_dir);
    let dir_name = match &args.crate_name {
        Some(name) => naming::crate_dir_candidates(name)
            .into_iter()
            .find(|d| available.contains(d))
            .unwrap_or_else(|| name.replace('-', "_")),
        None => match available.as_slice() {
            [one] => one.clone(),
            [] => bail!(
                "no crate with kernels has been built with the `{profile}` profile (in {}); run `cargo oxide build{}` first",
                device_dir.display(),
                if profile == "release" { " --release" } else { "" }
            ),
            many => bail!("several crates have kernels ({}); name one: `cargo oxide inspect CRATE`", many.join(", ")),
        },
    };
    let dir = crate_artifact_dir(&device_dir, &dir_name);
    let manifest_path = dir.join(files::MANIFEST);
    if !manifest_path.is_file() {
        let built = if available.is_empty() { "none".to_string() } else { available.join(", ") };
        bail!(
            "no manifest for `{dir_name}` in {} (crates with kernels: {built}); run `cargo oxide build` first",
            device_dir.display()
        );
    }
    let text = std::fs::read_to_string(&manifest_path)
        .with_context(|| format!("could not read {}", manifest_path.display()))?;
    if args.json {
        return Ok(print_stdout(&text)?);
    }
    let manifest = oxide_contract::manifest::Manifest::from_json(&text).with_context(|| {
        format!("{} is not a valid manifest; rebuild with `cargo oxide build`", manifest_path.display())
    })?;
    check_payloads(&dir, &manifest)?;
    let crate_name = manifest.crate_name.clone();
    if args.ll {
        return print_file(&dir.join(files::llvm_ir(&crate_name)));
    }
    if args.ptx || args.sass {
        let arch = match &args.arch {
            Some(a) => crate::build::parse_archs(a)?.remove(0),
            None => {
                let first = manifest.payloads.first().map(|p| p.arch.clone()).unwrap_or_else(|| "sm_90".into());
                Arch::parse(&first)?
            }
        };
        if args.ptx {
            return print_file(&dir.join(files::ptx(&crate_name, arch)));
        }
        return print_sass(&dir.join(files::cubin(&crate_name, arch)));
    }
    let mut out = format!("crate {crate_name} ({})\n", dir.display());
    for k in &manifest.kernels {
        out += &format!("  kernel {}  [{}]\n", summary::kernel_signature(k), k.name);
        for p in &k.params {
            out += &format!("    {:<12} {:<32} size {:<3} align {}\n", p.name, p.ty, p.size, p.align);
        }
    }
    for p in &manifest.payloads {
        out += &format!("  payload {:<8} {:<7} {:>9} bytes  {}\n", p.arch, p.kind.name(), p.bytes, p.file);
    }
    for (tool, version) in &manifest.tools {
        out += &format!("  tool {tool}: {version}\n");
    }
    Ok(print_stdout(&out)?)
}

/// Every payload file must be the one the manifest (and so the binary) has: same size and hash.
fn check_payloads(dir: &Path, manifest: &oxide_contract::manifest::Manifest) -> Result<()> {
    for p in &manifest.payloads {
        let path = dir.join(&p.file);
        let bytes = std::fs::read(&path).with_context(|| {
            format!("could not read {}; run `cargo oxide build` again, which restores it", path.display())
        })?;
        if bytes.len() as u64 != p.bytes || oxide_contract::sha256_hex(&bytes) != p.sha256 {
            bail!(
                "{} differs from the one the build embedded (sha256 {}); run `cargo oxide build` again, which restores it",
                path.display(),
                p.sha256
            );
        }
    }
    Ok(())
}

fn print_sass(cubin: &Path) -> Result<()> {
    if !cubin.is_file() {
        bail!("no cubin at {}; build for that arch first: `cargo oxide build --arch ARCH`", cubin.display());
    }
    let Some(nvdisasm) = crate::tools::nvdisasm() else {
        bail!(
            "`nvdisasm` not found (looked on PATH, in CUDA_HOME, /usr/local/cuda and the managed install); run `cargo oxide setup`"
        );
    };
    let out = std::process::Command::new(&nvdisasm)
        .arg(cubin)
        .output()
        .with_context(|| format!("could not run {}", nvdisasm.display()))?;
    if !out.status.success() {
        bail!("nvdisasm failed on {}: {}", cubin.display(), String::from_utf8_lossy(&out.stderr).trim());
    }
    Ok(print_stdout(&String::from_utf8_lossy(&out.stdout))?)
}

fn print_file(path: &PathBuf) -> Result<()> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("could not read {}; was it built? run `cargo oxide build`", path.display()))?;
    Ok(print_stdout(&text)?)
}

pub fn clean(args: &CleanArgs) -> Result<()> {
    let project = Project::load(args.manifest_path.as_deref(), None, None)?;
    let dir = project.oxide_dir();
    if !dir.exists() {
        eprintln!("{:>12} nothing to clean ({} does not exist)", "Clean", dir.display());
        return Ok(());
    }
    std::fs::remove_dir_all(&dir).with_context(|| format!("could not remove {}", dir.display()))?;
    eprintln!("{:>12} {}", "Removed", dir.display());
    Ok(())
}
