//! Python extension modules: a `cdylib` package that depends on pyo3 is also copied, after the
//! build, to `<profile dir>/python/<module>.abi3.so` (`<module>.so` without pyo3's `abi3`), the
//! name Python's `import <module>` looks for, so `PYTHONPATH=<that dir> python -c 'import
//! <module>'` works with no setup.py, wheel or rename (`cargo oxide new --template python`).
//!
//! The module is the library's crate name (`#[pymodule] fn <crate_name>`), as maturin does.
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use cargo_metadata::{Artifact, Metadata};

/// A Python module the build placed.
pub struct PythonModule {
    /// `import` name.
    pub name: String,
    /// The file Python imports.
    pub path: PathBuf,
}

impl PythonModule {
    /// The folder to put on `PYTHONPATH`.
    pub fn dir(&self) -> &Path {
        self.path.parent().unwrap_or(Path::new("."))
    }
}

/// How the Python import file of a library named `name` is called: abi3 modules carry the
/// stable-ABI tag, which every CPython 3 accepts; others the bare `.so` (Windows: `.pyd`).
pub fn module_file_name(name: &str, abi3: bool) -> String {
    if cfg!(windows) {
        format!("{name}.pyd")
    } else if abi3 {
        format!("{name}.abi3.so")
    } else {
        format!("{name}.so")
    }
}

/// Copies each built Python extension (a cdylib of a package depending on pyo3) to its import
/// name in `python/` beside it; returns what was placed.
pub fn place_modules(artifacts: &[Artifact], metadata: &Metadata) -> Result<Vec<PythonModule>> {
    let mut placed = Vec::new();
    for artifact in artifacts {
        if !artifact.target.kind.iter().any(|k| k.to_string() == "cdylib") {
            continue;
        }
        let Some(package) = metadata.packages.iter().find(|p| p.id == artifact.package_id) else { continue };
        let Some(pyo3) = package.dependencies.iter().find(|d| d.name == "pyo3") else { continue };
        let abi3 = pyo3.features.iter().any(|f| f.starts_with("abi3"));
        let dylib = std::env::consts::DLL_SUFFIX;
        let Some(built) = artifact.filenames.iter().find(|f| f.as_str().ends_with(dylib)) else { continue };
        let built = built.as_std_path();
        let dir = built.parent().unwrap_or(Path::new(".")).join("python");
        std::fs::create_dir_all(&dir).with_context(|| format!("could not create {}", dir.display()))?;
        let name = artifact.target.name.replace('-', "_");
        let path = dir.join(module_file_name(&name, abi3));
        // Through a temporary file and a rename: a Python process that has the module loaded
        // keeps its (unlinked) copy intact.
        let partial = dir.join(format!(".{name}.partial"));
        std::fs::copy(built, &partial)
            .with_context(|| format!("could not copy {} to {}", built.display(), partial.display()))?;
        std::fs::rename(&partial, &path).with_context(|| format!("could not write {}", path.display()))?;
        placed.push(PythonModule { name, path });
    }
    Ok(placed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn import_names() {
        if cfg!(windows) {
            assert_eq!(module_file_name("ops", true), "ops.pyd");
        } else {
            assert_eq!(module_file_name("my_ops", true), "my_ops.abi3.so");
            assert_eq!(module_file_name("my_ops", false), "my_ops.so");
        }
    }
}
