//! What `cargo oxide inspect` shows: which crate's artifacts (the current package's by default,
//! or the one a crate, package or member-folder name means) and which arch's payload.
//!
//! The artifact directory may be shared by many projects (`CARGO_TARGET_DIR`), so the crates of
//! *this* workspace are looked up through `cargo metadata`, not guessed from the folders there.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use cargo_metadata::{Package, TargetKind};
use oxide_contract::arch::Arch;
use oxide_contract::manifest::{Manifest, PayloadKind};
use oxide_contract::naming;

use crate::project::Project;

/// One crate of the workspace whose artifacts are in the device directory.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    /// Its artifact folder (`naming::crate_dir_name`).
    dir: String,
    /// Its package's name.
    package: String,
    /// Its package's folder, relative to the workspace root (`kernels`; empty for the root).
    member_dir: String,
}

/// The crates of a workspace that have artifacts in one device directory.
#[derive(Debug)]
pub struct WorkspaceCrates {
    /// The current package's crates first, then every member's in `cargo metadata`'s order.
    entries: Vec<Entry>,
    /// The package the command runs in (`--manifest-path`, else the deepest member folder that
    /// holds the current directory).
    current: Option<String>,
}

/// The artifact folders of `package`'s crates that are in `available`: its library first, then
/// its binaries, examples, tests and benches.
fn package_dirs(package: &Package, available: &[String]) -> Vec<String> {
    let rank = |kinds: &[TargetKind]| {
        let is = |k: TargetKind| kinds.contains(&k);
        if is(TargetKind::Lib) || is(TargetKind::RLib) || is(TargetKind::DyLib) || is(TargetKind::CDyLib) {
            0
        } else if is(TargetKind::Bin) {
            1
        } else {
            2
        }
    };
    let mut targets: Vec<_> = package.targets.iter().collect();
    targets.sort_by_key(|t| rank(&t.kind));
    let mut dirs = Vec::new();
    for target in targets {
        for dir in naming::crate_dir_candidates(&target.name.replace('-', "_")) {
            if available.contains(&dir) && !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
    }
    dirs
}

fn canonical(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
}

impl WorkspaceCrates {
    /// The workspace's crates found in `available` (the artifact folders with a manifest).
    pub fn of(project: &Project, manifest_path: Option<&Path>, available: &[String]) -> WorkspaceCrates {
        let members = project.metadata.workspace_packages();
        let root = canonical(project.metadata.workspace_root.as_std_path());
        let dir_of = |p: &Package| canonical(p.manifest_path.parent().map_or(Path::new(""), |d| d.as_std_path()));
        let current = match manifest_path {
            Some(path) => {
                let path = canonical(path);
                members.iter().find(|p| canonical(p.manifest_path.as_std_path()) == path)
            }
            None => {
                let cwd = canonical(&std::env::current_dir().unwrap_or_default());
                members.iter().filter(|p| cwd.starts_with(dir_of(p))).max_by_key(|p| dir_of(p).components().count())
            }
        };
        let mut ordered: Vec<&Package> = current.into_iter().copied().collect();
        ordered.extend(members.iter().copied().filter(|p| Some(p.name.as_str()) != current.map(|c| c.name.as_str())));
        let mut entries: Vec<Entry> = Vec::new();
        for package in ordered {
            let member_dir = dir_of(package).strip_prefix(&root).map(|d| d.display().to_string()).unwrap_or_default();
            for dir in package_dirs(package, available) {
                if !entries.iter().any(|e| e.dir == dir) {
                    entries.push(Entry { dir, package: package.name.to_string(), member_dir: member_dir.clone() });
                }
            }
        }
        WorkspaceCrates { entries, current: current.map(|p| p.name.to_string()) }
    }

    /// The artifact folder `name` means: a folder of the device directory by crate name (or the
    /// package name spelled with `-`), else a workspace package by its name or its folder
    /// (`kernels` for the member in `kernels/`).
    pub fn named(&self, name: &str, available: &[String]) -> Option<String> {
        if let Some(dir) = naming::crate_dir_candidates(name).into_iter().find(|d| available.contains(d)) {
            return Some(dir);
        }
        let wanted = name.trim_end_matches('/');
        self.entries
            .iter()
            .find(|e| {
                e.package == wanted
                    || e.package.replace('-', "_") == wanted.replace('-', "_")
                    || (!e.member_dir.is_empty()
                        && (e.member_dir == wanted || Path::new(&e.member_dir).file_name() == Some(wanted.as_ref())))
            })
            .map(|e| e.dir.clone())
    }

    /// The crate to show when none is named: the current package's (its library first), else the
    /// workspace's only crate with kernels. The error says why there is no single answer.
    pub fn current(&self) -> Result<String, String> {
        if let Some(current) = &self.current
            && let Some(entry) = self.entries.iter().find(|e| &e.package == current)
        {
            return Ok(entry.dir.clone());
        }
        match self.entries.as_slice() {
            [one] => Ok(one.dir.clone()),
            [] => Err("no crate of this workspace has kernels built with this profile".to_string()),
            many => {
                let names: Vec<&str> = many.iter().map(|e| e.dir.as_str()).collect();
                let here = match &self.current {
                    Some(p) => format!("package `{p}` has none"),
                    None => "the current directory is in none of them".to_string(),
                };
                Err(format!("several crates of this workspace have kernels ({}) and {here}", names.join(", ")))
            }
        }
    }

    /// What a user can name: this workspace's crates with kernels, then the other folders of
    /// the (possibly shared) directory.
    pub fn describe(&self, available: &[String]) -> String {
        let ours: Vec<String> = self
            .entries
            .iter()
            .map(|e| {
                let place = if e.member_dir.is_empty() { String::new() } else { format!(" in {}/", e.member_dir) };
                format!("{} (package {}{place})", e.dir, e.package)
            })
            .collect();
        let mut text = if ours.is_empty() {
            "no crate of this workspace has kernels built with this profile".to_string()
        } else {
            format!("this workspace's crates with kernels: {}", ours.join(", "))
        };
        let others: Vec<&str> =
            available.iter().map(String::as_str).filter(|a| !self.entries.iter().any(|e| e.dir == *a)).collect();
        if !others.is_empty() {
            const SHOWN: usize = 8;
            let more = others.len().saturating_sub(SHOWN);
            let list = others.iter().take(SHOWN).copied().collect::<Vec<_>>().join(", ");
            let more = if more > 0 { format!(" and {more} more") } else { String::new() };
            text += &format!("; other crates in this directory: {list}{more}");
        }
        text
    }
}

/// The arch of `manifest`'s `kind` payload to show: `requested` (`--arch`), or its arch-specific
/// variant when only that was built (`--arch sm_90` builds a wgmma crate for `sm_90a`), with a
/// note saying so; without `--arch`, the first arch built. An arch not built is an error naming
/// the archs that were and the command that builds it.
pub fn payload_arch(manifest: &Manifest, kind: PayloadKind, requested: Option<&str>) -> Result<(Arch, Option<String>)> {
    let mut built: Vec<Arch> = Vec::new();
    for p in manifest.payloads.iter().filter(|p| p.kind == kind) {
        if let Ok(arch) = Arch::parse(&p.arch)
            && !built.contains(&arch)
        {
            built.push(arch);
        }
    }
    let crate_name = &manifest.crate_name;
    let what = if kind == PayloadKind::Ptx { "PTX" } else { kind.name() };
    let built_list = || {
        if built.is_empty() {
            "none".to_string()
        } else {
            built.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
        }
    };
    let Some(text) = requested else {
        return match built.first() {
            Some(arch) => Ok((*arch, None)),
            None => {
                bail!("crate `{crate_name}` has no {what}; build it with `cargo oxide build --emit {}`", kind.name())
            }
        };
    };
    let arch = crate::build::parse_archs(text)?.remove(0);
    if built.contains(&arch) {
        return Ok((arch, None));
    }
    if let Some(specific) = arch.arch_specific_variant()
        && built.contains(&specific)
    {
        let note = format!(
            "`{crate_name}` was built for {specific}, not {arch}: its kernels use {arch}'s arch-specific \
             instructions, so `--arch {arch}` builds {specific}; showing {specific}"
        );
        return Ok((specific, Some(note)));
    }
    bail!(
        "crate `{crate_name}` has no {what} for {arch} (built: {}); build it with `cargo oxide build --arch {arch}`",
        built_list()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxide_contract::manifest::PayloadInfo;

    fn manifest(payloads: &[(&str, PayloadKind)]) -> Manifest {
        let mut m = Manifest::new("gemm");
        m.payloads = payloads
            .iter()
            .map(|(arch, kind)| PayloadInfo {
                arch: arch.to_string(),
                kind: *kind,
                file: String::new(),
                sha256: String::new(),
                bytes: 1,
                cuda_release: None,
            })
            .collect();
        m
    }

    #[test]
    fn an_arch_built_as_its_specific_variant_is_shown_with_a_note() {
        let m = manifest(&[("sm_90a", PayloadKind::Ptx), ("sm_90a", PayloadKind::Cubin)]);
        let (arch, note) = payload_arch(&m, PayloadKind::Ptx, Some("sm_90")).unwrap();
        assert_eq!(arch.to_string(), "sm_90a");
        let note = note.expect("a note");
        assert!(note.contains("built for sm_90a, not sm_90") && note.contains("showing sm_90a"), "{note}");
        let (arch, note) = payload_arch(&m, PayloadKind::Cubin, Some("sm_90a")).unwrap();
        assert_eq!((arch.to_string(), note), ("sm_90a".to_string(), None));
        assert_eq!(payload_arch(&m, PayloadKind::Ptx, None).unwrap().0.to_string(), "sm_90a");
    }

    #[test]
    fn an_arch_not_built_names_the_archs_and_the_command() {
        let m = manifest(&[("sm_80", PayloadKind::Ptx), ("sm_90", PayloadKind::Ptx), ("sm_90", PayloadKind::Cubin)]);
        let e = payload_arch(&m, PayloadKind::Ptx, Some("sm_100a")).unwrap_err().to_string();
        assert_eq!(
            e,
            "crate `gemm` has no PTX for sm_100a (built: sm_80, sm_90); build it with `cargo oxide build --arch sm_100a`"
        );
        let e = payload_arch(&m, PayloadKind::Cubin, Some("sm_80")).unwrap_err().to_string();
        assert!(e.contains("no cubin for sm_80 (built: sm_90)"), "{e}");
        let e = payload_arch(&manifest(&[]), PayloadKind::Ptx, None).unwrap_err().to_string();
        assert!(e.contains("has no PTX"), "{e}");
        assert!(payload_arch(&m, PayloadKind::Ptx, Some("sm_12")).is_err(), "an unknown arch is refused");
    }

    fn entries(list: &[(&str, &str, &str)], current: Option<&str>) -> WorkspaceCrates {
        WorkspaceCrates {
            entries: list
                .iter()
                .map(|(dir, package, member)| Entry {
                    dir: dir.to_string(),
                    package: package.to_string(),
                    member_dir: member.to_string(),
                })
                .collect(),
            current: current.map(str::to_string),
        }
    }

    #[test]
    fn names_mean_crates_packages_and_member_folders() {
        let available: Vec<String> = ["book_blocks", "ws_kernels", "ws_app"].map(String::from).to_vec();
        let ws = entries(&[("ws_kernels", "ws-kernels", "kernels"), ("ws_app", "ws-app", "app")], None);
        assert_eq!(ws.named("ws_kernels", &available).as_deref(), Some("ws_kernels"));
        assert_eq!(ws.named("ws-kernels", &available).as_deref(), Some("ws_kernels"));
        assert_eq!(ws.named("kernels", &available).as_deref(), Some("ws_kernels"), "the member's folder");
        assert_eq!(ws.named("kernels/", &available).as_deref(), Some("ws_kernels"));
        assert_eq!(ws.named("book_blocks", &available).as_deref(), Some("book_blocks"), "another project's");
        assert_eq!(ws.named("nothing", &available), None);
        let text = ws.describe(&available);
        assert_eq!(
            text,
            "this workspace's crates with kernels: ws_kernels (package ws-kernels in kernels/), ws_app (package ws-app in app/); \
             other crates in this directory: book_blocks"
        );
    }

    #[test]
    fn the_current_package_wins_over_a_shared_directory() {
        let ws = entries(&[("ws_app", "ws-app", "app"), ("ws_kernels", "ws-kernels", "kernels")], Some("ws-app"));
        assert_eq!(ws.current().unwrap(), "ws_app");
        // At a virtual workspace's root: no current package, several crates.
        let ws = entries(&[("ws_kernels", "ws-kernels", "kernels"), ("ws_app", "ws-app", "app")], None);
        let e = ws.current().unwrap_err();
        assert!(e.contains("several crates of this workspace have kernels (ws_kernels, ws_app)"), "{e}");
        // One crate with kernels in the workspace: that one, wherever the command runs.
        let ws = entries(&[("ws_kernels", "ws-kernels", "kernels")], Some("ws-app"));
        assert_eq!(ws.current().unwrap(), "ws_kernels");
        assert!(entries(&[], None).current().unwrap_err().contains("no crate of this workspace"));
    }
}
