//! `<crate>.ptx`: one PTX file per crate with kernels, for programs that load device code by file
//! name (NVIDIA's cuda-oxide's `ctx.load_module_from_file("app.ptx")`,
//! `cuda_host::ltoir::load_kernel_module`).
//!
//! After a build, every workspace crate with kernels gets a copy of one of its PTX payloads: the
//! PTX of the lowest `--arch` that is not arch-specific (else the lowest). PTX JIT-compiles for
//! the GPU it targets and every newer one, so the lowest arch is the one file that loads on every
//! GPU the build was made for. It goes to `<target>/oxide/<profile>/<crate>.ptx`, beside the
//! binaries of the profile, where the loaders look first (`naming::by_name_dirs_of_exe`): never
//! into the source tree, unless asked for there too, with `cargo oxide build --ptx-beside-sources`
//! or per package with `[package.metadata.cuda-oxide] ptx-beside-sources = true`. A package whose
//! sources name the file in a folder (`concat!(env!("CARGO_MANIFEST_DIR"), "/<crate>.ptx")`: programs
//! that read its text where they were built, as NVIDIA's examples do) gets it there too without
//! asking.
//!
//! A `<crate>.ptx` beside the sources that the user did not ask for is a leftover of an older
//! build: a program naming that path would load it, stale, so the build warns about it. Files are
//! rewritten only when their contents change, so a build script that watches the package
//! directory is not rerun for nothing.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use oxide_contract::arch::{ARCH_SPECIFIC_FLAG, Arch};
use oxide_contract::link::METADATA_TABLE;
use oxide_contract::manifest::{Manifest, PayloadKind};
use oxide_contract::naming::{self, files};

use crate::build::Built;
use crate::project::Project;

/// Key of `[package.metadata.cuda-oxide]`: `true` also writes `<crate>.ptx` next to the package's
/// `Cargo.toml`.
pub const BESIDE_SOURCES_KEY: &str = "ptx-beside-sources";

/// One `<crate>.ptx` written (or already up to date) by [`write_all`].
#[derive(Debug, PartialEq, Eq)]
pub struct PtxFile {
    pub path: PathBuf,
    pub arch: String,
}

/// What [`write_all`] did: the files it wrote, and a warning per stale file beside the sources.
#[derive(Debug, Default)]
pub struct Written {
    pub files: Vec<PtxFile>,
    pub warnings: Vec<String>,
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

/// The package directories (where `Cargo.toml` is) of the workspace members that ask for
/// `<crate>.ptx` beside their sources; every member's with `all` (`--ptx-beside-sources`).
/// A value other than a boolean is an error naming the manifest and what to write.
pub fn beside_sources(project: &Project, all: bool) -> Result<BTreeSet<PathBuf>> {
    let mut dirs = BTreeSet::new();
    for package in project.metadata.workspace_packages() {
        let Some(dir) = package.manifest_path.parent() else { continue };
        let value = package.metadata.get(METADATA_TABLE).and_then(|t| t.get(BESIDE_SOURCES_KEY));
        let asked = match value {
            None => false,
            Some(serde_json::Value::Bool(b)) => *b,
            Some(other) => bail!(
                "{}: `package.metadata.{METADATA_TABLE}.{BESIDE_SOURCES_KEY}` must be true or false, not {other}",
                package.manifest_path
            ),
        };
        if all || asked || names_its_ptx(package) {
            dirs.insert(dir.as_std_path().to_path_buf());
        }
    }
    Ok(dirs)
}

/// Whether a package's sources name one of its crates' `<crate>.ptx` as a path in a folder
/// (`"/<crate>.ptx"`): a program that reads the file where it was built (NVIDIA's examples read
/// `concat!(env!("CARGO_MANIFEST_DIR"), "/<crate>.ptx")`), which then gets it beside its sources
/// too, unasked. A bare `"<crate>.ptx"` is what the loaders by file name take, and they find it
/// beside the executable.
fn names_its_ptx(package: &cargo_metadata::Package) -> bool {
    let names: Vec<String> = package.targets.iter().map(|t| files::by_name_ptx(&t.name.replace('-', "_"))).collect();
    let Some(dir) = package.manifest_path.parent() else { return false };
    let mut stack = vec![dir.join("src").into_std_path_buf()];
    while let Some(path) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&path) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs")
                && let Ok(text) = std::fs::read_to_string(&path)
                && names.iter().any(|n| text.contains(&format!("/{n}\"")))
            {
                return true;
            }
        }
    }
    false
}

/// Writes `<out_dir>/<crate>.ptx` for every built workspace crate that has kernels, and
/// `<package dir>/<crate>.ptx` too for the packages in `beside_sources`; warns about a
/// `<crate>.ptx` beside the sources of the others. [`crate::build::build`] calls it after cargo
/// succeeded, with `out_dir` = [`naming::by_name_ptx_dir`] of the profile.
pub fn write_all(
    built: &Built,
    artifact_dir: &Path,
    out_dir: &Path,
    beside_sources: &BTreeSet<PathBuf>,
) -> Result<Written> {
    let mut done = Written::default();
    let mut crates_seen = BTreeSet::new();
    for artifact in &built.artifacts {
        let crate_name = artifact.target.name.replace('-', "_");
        let Some(package_dir) = artifact.manifest_path.parent().map(|d| d.as_std_path().to_path_buf()) else {
            continue;
        };
        if !crates_seen.insert((package_dir.clone(), crate_name.clone())) {
            continue; // a package's library and binary of one crate name share the artifacts
        }
        // The crate's own folder (`<crate>`) before a binary's beside its library (`<crate>.bin`).
        let candidates = naming::crate_dir_candidates(&crate_name);
        let Some((dir, manifest)) = candidates.iter().find_map(|dir| built.manifests.get_key_value(dir.as_str()))
        else {
            continue;
        };
        let Some(payload) = choose(manifest) else { continue };
        let source = naming::crate_artifact_dir(artifact_dir, dir).join(&payload.file);
        let ptx = std::fs::read(&source).with_context(|| format!("could not read {}", source.display()))?;
        let file_name = files::by_name_ptx(&crate_name);
        let beside = package_dir.join(&file_name);
        let mut targets = vec![out_dir.join(&file_name)];
        if beside_sources.contains(&package_dir) {
            targets.push(beside);
        } else if is_generated_ptx(&beside) {
            done.warnings.push(format!(
                "{} is left from an older build (builds now write {}); a program that loads that path \
                 gets stale device code: delete it, or keep it up to date with `{BESIDE_SOURCES_KEY} = true` \
                 in [package.metadata.{METADATA_TABLE}] (or `cargo oxide build --{BESIDE_SOURCES_KEY}`)",
                beside.display(),
                out_dir.join(&file_name).display()
            ));
        }
        for path in targets {
            if std::fs::read(&path).ok().as_deref() != Some(&ptx[..]) {
                std::fs::write(&path, &ptx).with_context(|| format!("could not write {}", path.display()))?;
            }
            done.files.push(PtxFile { path, arch: payload.arch.clone() });
        }
    }
    Ok(done)
}

/// Whether `path` is PTX that a compiler wrote (LLVM's NVPTX back end, which our builds use,
/// opens every file with a comment saying so), rather than a file of the user's.
fn is_generated_ptx(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 256];
    let Ok(n) = std::fs::File::open(path).and_then(|mut f| f.read(&mut head)) else { return false };
    String::from_utf8_lossy(&head[..n]).contains("Generated by LLVM NVPTX Back-End")
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

    #[test]
    fn only_compiler_written_ptx_counts_as_a_leftover() {
        let dir = tempfile::tempdir().unwrap();
        let ours = dir.path().join("app.ptx");
        std::fs::write(&ours, "//\n// Generated by LLVM NVPTX Back-End\n//\n\n.version 7.8\n").unwrap();
        assert!(is_generated_ptx(&ours));
        let theirs = dir.path().join("hand.ptx");
        std::fs::write(&theirs, "// my hand-written PTX\n.version 8.0\n").unwrap();
        assert!(!is_generated_ptx(&theirs));
        assert!(!is_generated_ptx(&dir.path().join("missing.ptx")));
    }
}
