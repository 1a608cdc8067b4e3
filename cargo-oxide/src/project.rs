//! The cargo project being built: `cargo metadata`, the target directory and the oxide artifact directory.
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow};

use crate::cache::Stamps;
use cargo_metadata::{CargoOpt, Metadata, MetadataCommand, PackageId};

use crate::cli::BuildArgs;
use crate::tools::Toolchain;

/// The workspace of the crate being built.
#[derive(Debug)]
pub struct Project {
    pub metadata: Metadata,
    /// How many crates the last build of this selection compiled (fresh or not), when
    /// remembered: the progress bar's length without resolving the dependency graph.
    remembered_crates: Option<u64>,
    /// Where [`Project::load_for_build`] remembers the project, and the key it was stored under.
    cache: Option<(PathBuf, CachedProject)>,
}

/// What `cargo oxide build` remembers of a project (`cargo metadata --no-deps` costs a third of
/// a build with nothing to do), valid while its inputs are: the selection (`key`) and the
/// manifests, lock file and cargo configs (`inputs`).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct CachedProject {
    key: String,
    inputs: Stamps,
    metadata: Metadata,
    crates: Option<u64>,
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
        Ok(Project { metadata, remembered_crates: None, cache: None })
    }

    /// [`Project::load`] for a build: the workspace as remembered from the last build of the same
    /// selection while no manifest, lock file or cargo config changed, else read again (with
    /// the dependency graph, for the progress bar) and remembered.
    pub fn load_for_build(args: &BuildArgs, toolchain: &Toolchain) -> Result<Project> {
        let cwd = std::env::current_dir().unwrap_or_default();
        let key = format!(
            "{}|{:?}|{:?}|{:?}|{}|{}|{:?}|{:?}|{}",
            cwd.display(),
            args.manifest_path,
            args.package,
            args.features,
            args.all_features,
            args.no_default_features,
            std::env::var_os("CARGO_TARGET_DIR"),
            std::env::var_os("CARGO_BUILD_TARGET_DIR"),
            toolchain.sysroot.display(),
        );
        let path = crate::tools::oxide_home().join("cache/projects").join(format!("{:016x}.json", fnv1a(&key)));
        if let Some(cached) = crate::cache::read::<CachedProject>(&path)
            && cached.key == key
            && cached.inputs.current()
        {
            return Ok(Project {
                metadata: cached.metadata.clone(),
                remembered_crates: cached.crates,
                cache: Some((path, cached)),
            });
        }
        let mut project = Project::load(args.manifest_path.as_deref(), Some(toolchain), Some(args))?;
        let crates = project.crate_count(args.package.as_deref());
        let mut metadata = project.metadata.clone();
        metadata.resolve = None;
        metadata.packages.retain(|p| project.metadata.workspace_members.contains(&p.id));
        let inputs = Stamps::of(project.inputs(&cwd).iter().map(PathBuf::as_path));
        let cached = CachedProject { key, inputs, metadata, crates: Some(crates) };
        crate::cache::write(&path, &cached);
        project.remembered_crates = Some(crates);
        project.cache = Some((path, cached));
        Ok(project)
    }

    /// Remembers how many crates this build compiled, for the next build's progress bar.
    pub fn remember_crates(&self, crates: u64) {
        if let Some((path, cached)) = &self.cache
            && cached.crates != Some(crates)
        {
            crate::cache::write(path, &CachedProject { crates: Some(crates), ..cached.clone() });
        }
    }

    /// The files whose change can change what `cargo metadata --no-deps` says: the workspace's
    /// manifests and lock file, and every cargo config that applies to `cwd` or the workspace.
    fn inputs(&self, cwd: &Path) -> Vec<PathBuf> {
        let root = self.metadata.workspace_root.as_std_path();
        let mut files = vec![root.join("Cargo.toml"), root.join("Cargo.lock")];
        files.extend(self.metadata.workspace_packages().iter().map(|p| p.manifest_path.clone().into_std_path_buf()));
        for dir in cwd.ancestors().chain(root.ancestors()) {
            files.push(dir.join(".cargo/config.toml"));
            files.push(dir.join(".cargo/config"));
        }
        if let Some(home) = std::env::var_os("CARGO_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        {
            files.push(home.join("config.toml"));
            files.push(home.join("config"));
        }
        files.sort();
        files.dedup();
        files
    }

    /// The progress bar's length: the crates the last build compiled, else the resolved graph's.
    pub fn progress_length(&self, package: Option<&str>) -> u64 {
        self.remembered_crates.unwrap_or_else(|| self.crate_count(package))
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

/// FNV-1a of `text`: a short file name for a cache key (the key itself is stored and compared).
pub(crate) fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
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
