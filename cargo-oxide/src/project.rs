//! The cargo project being built: `cargo metadata`, the target directory and the oxide artifact directory.
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow};
use cargo_metadata::{CargoOpt, Metadata, MetadataCommand, PackageId};

use crate::cli::BuildArgs;
use crate::tools::Toolchain;

/// The workspace of the crate being built.
#[derive(Debug)]
pub struct Project {
    pub metadata: Metadata,
}

impl Project {
    /// Reads `cargo metadata`; with `deps`, the resolved dependency graph too (for the progress bar).
    pub fn load(
        manifest_path: Option<&Path>,
        toolchain: Option<&Toolchain>,
        deps: Option<&BuildArgs>,
    ) -> Result<Project> {
        let mut cmd = MetadataCommand::new();
        if let Some(tc) = toolchain {
            cmd.cargo_path(tc.cargo());
            cmd.env("RUSTC", tc.rustc());
        }
        if let Some(path) = manifest_path {
            cmd.manifest_path(path);
        }
        match deps {
            None => {
                cmd.no_deps();
            }
            Some(args) => {
                if args.all_features {
                    cmd.features(CargoOpt::AllFeatures);
                }
                if args.no_default_features {
                    cmd.features(CargoOpt::NoDefaultFeatures);
                }
                if !args.features.is_empty() {
                    cmd.features(CargoOpt::SomeFeatures(args.features.clone()));
                }
            }
        }
        let metadata = cmd.exec().map_err(metadata_error)?;
        Ok(Project { metadata })
    }

    /// The workspace's target directory (honours `CARGO_TARGET_DIR` and `build.target-dir`).
    pub fn target_dir(&self) -> PathBuf {
        self.metadata.target_directory.clone().into_std_path_buf()
    }

    /// `<target>/oxide`: cargo's target directory for oxide builds and the device artifact directory.
    pub fn oxide_dir(&self) -> PathBuf {
        self.target_dir().join("oxide")
    }

    /// Whether `id` is a member of this workspace.
    pub fn is_member(&self, id: &PackageId) -> bool {
        self.metadata.workspace_members.contains(id)
    }

    /// Roughly how many crates `cargo build` will compile: the packages reachable from the
    /// selected package (`-p`, else the member whose directory we are in, else all default
    /// members) in the resolved graph.
    pub fn crate_count(&self, package: Option<&str>) -> u64 {
        let Some(resolve) = &self.metadata.resolve else { return 0 };
        let nodes: HashMap<&PackageId, &cargo_metadata::Node> = resolve.nodes.iter().map(|n| (&n.id, n)).collect();
        let cwd = std::env::current_dir().unwrap_or_default();
        let selected = self.metadata.workspace_packages().into_iter().find(|p| match package {
            Some(spec) => p.name.as_str() == spec,
            None => p.manifest_path.parent().is_some_and(|dir| cwd.starts_with(dir)),
        });
        let mut stack: Vec<&PackageId> = match selected {
            Some(p) => vec![&p.id],
            None => self.metadata.workspace_default_members.iter().collect(),
        };
        let mut seen = BTreeSet::new();
        while let Some(id) = stack.pop() {
            if seen.insert(id)
                && let Some(node) = nodes.get(id)
            {
                stack.extend(node.deps.iter().map(|d| &d.pkg));
            }
        }
        seen.len() as u64
    }
}

/// `cargo metadata` failed: cargo's `error:` line plus its first `Caused by:` line, on one line.
fn metadata_error(err: cargo_metadata::Error) -> anyhow::Error {
    if let cargo_metadata::Error::CargoMetadata { stderr } = &err
        && let Some(message) = one_line_cargo_error(stderr)
    {
        return anyhow!("cargo metadata failed: {message}");
    }
    anyhow!("cargo metadata failed: {err}")
}

fn one_line_cargo_error(stderr: &str) -> Option<String> {
    let lines: Vec<&str> = stderr.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let at = lines.iter().position(|l| l.starts_with("error:"))?;
    let mut message = lines[at].trim_start_matches("error:").trim().to_string();
    if lines.get(at + 1) == Some(&"Caused by:")
        && let Some(cause) = lines.get(at + 2)
    {
        message = format!("{message}: {cause}");
    }
    Some(message)
}

#[cfg(test)]
mod tests {
    #[test]
    fn cargo_errors_become_one_line() {
        let stderr = "error: failed to parse manifest at `/x/Cargo.toml`\n\nCaused by:\n  no targets specified in the manifest\n  either src/lib.rs ...\n";
        assert_eq!(
            super::one_line_cargo_error(stderr).unwrap(),
            "failed to parse manifest at `/x/Cargo.toml`: no targets specified in the manifest"
        );
        assert_eq!(
            super::one_line_cargo_error("error: could not find `Cargo.toml`\n").unwrap(),
            "could not find `Cargo.toml`"
        );
    }
}
