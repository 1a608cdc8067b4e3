//! `cargo oxide inspect` (a crate's manifest, PTX or LLVM IR from the last build) and `cargo oxide clean`.
use std::path::Path;

use anyhow::{Context, Result, anyhow, bail};
use oxide_contract::manifest::PayloadKind;
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
    let workspace = crate::inspect_target::WorkspaceCrates::of(&project, args.manifest_path.as_deref(), &available);
    let build_hint = format!("cargo oxide build{}", if profile == "release" { " --release" } else { "" });
    let dir_name = match &args.crate_name {
        Some(name) => workspace.named(name, &available).ok_or_else(|| {
            anyhow!(
                "no crate `{name}` with kernels built with the `{profile}` profile ({}); {}; run `{build_hint}` first",
                device_dir.display(),
                workspace.describe(&available)
            )
        })?,
        None => workspace.current().map_err(|why| {
            anyhow!(
                "{why} (in {}); run `{build_hint}` first, or name one: `cargo oxide inspect CRATE`",
                device_dir.display()
            )
        })?,
    };
    let dir = crate_artifact_dir(&device_dir, &dir_name);
    let manifest_path = dir.join(files::MANIFEST);
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
        let path = dir.join(files::llvm_ir(&crate_name));
        return print_file(&path).with_context(|| {
            format!(
                "the LLVM IR is written when the device code of `{crate_name}` is compiled, and cargo compiled \
                 nothing: change one of its sources (or `cargo oxide clean`) and run `{build_hint}`"
            )
        });
    }
    if args.ptx || args.sass {
        let kind = if args.ptx { PayloadKind::Ptx } else { PayloadKind::Cubin };
        let (arch, note) = crate::inspect_target::payload_arch(&manifest, kind, args.arch.as_deref())?;
        if let Some(note) = note {
            eprintln!("{:>12} {note}", "Note");
        }
        if args.ptx {
            return print_file(&dir.join(files::ptx(&crate_name, arch)));
        }
        return print_sass(&dir.join(files::cubin(&crate_name, arch)));
    }
    let mut out = format!("crate {crate_name} ({})\n", dir.display());
    for k in &manifest.kernels {
        // The full path and the PTX entry (hashed for generic instances) come after, for `--ptx` readers.
        out += &format!("  kernel {}  [{}, entry {}]\n", summary::kernel_signature(k), k.name, k.entry);
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

fn print_file(path: &Path) -> Result<()> {
    let text = std::fs::read_to_string(path).with_context(|| format!("could not read {}", path.display()))?;
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
