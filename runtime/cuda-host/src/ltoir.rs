//! `ltoir::load_kernel_module`: NVIDIA's loader of a crate's device code by name from the files
//! its build wrote (theirs next to `Cargo.toml`, ours beside the binaries), for code written for
//! their cuda-oxide.
//!
//! ```no_run
//! let ctx = cuda_core::CudaContext::new(0)?;
//! let module = cuda_host::ltoir::load_kernel_module(&ctx, "my_app")?;
//! let vecadd = module.function("vecadd")?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! NVIDIA's build can write NVVM IR (`<name>.ll` / `<name>.ltoir`) that this function links to a
//! cubin with libNVVM and nvJitLink on first use. cuda-oxide links at build time instead (the
//! manifest and bundle carry PTX, cubins and a fatbin per `--arch`; run-time LTOIR linking is not
//! there yet), so the files this loads are the `<name>.ptx` that `cargo oxide build` writes
//! beside the binaries (or a `<name>.cubin` put there by hand); failing those, the crate's device
//! code embedded in the executable. The name and the result are NVIDIA's; the code that runs is what our build made.

use std::path::PathBuf;
use std::sync::Arc;

use cuda_core::oxide_contract::naming;
use cuda_core::{CudaContext, DriverError, Module};

/// Why [`load_kernel_module`] failed. Converts into [`DriverError`] for `?`.
///
/// ```no_run
/// use cuda_host::ltoir::{LtoirError, load_kernel_module};
/// let ctx = cuda_core::CudaContext::new(0)?;
/// match load_kernel_module(&ctx, "my_app") {
///     Ok(module) => println!("loaded {module:?}"),
///     Err(LtoirError::NoArtifact { searched, .. }) => println!("not built? looked at {searched:?}"),
///     Err(other) => return Err(other.into()),
/// }
/// # Ok::<(), cuda_core::DriverError>(())
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum LtoirError {
    /// No `<name>.ptx` or `<name>.cubin` in any of the directories, and no embedded device code
    /// of crate `name`.
    NoArtifact {
        /// The module (crate) name asked for.
        name: String,
        /// The first directory looked in (beside the executable, where `cargo oxide build` writes `<name>.ptx`).
        dir: PathBuf,
        /// Every file looked for, in order.
        searched: Vec<PathBuf>,
        /// NVVM IR found instead (`<name>.ll` / `.ltoir`), which cuda-oxide does not link at run time.
        nvvm_ir: Option<PathBuf>,
    },
    /// The file was found, but loading it failed.
    Driver(DriverError),
}

impl std::fmt::Display for LtoirError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LtoirError::NoArtifact { name, searched, nvvm_ir, .. } => {
                let list: Vec<String> = searched.iter().map(|p| p.display().to_string()).collect();
                write!(
                    f,
                    "no device code for module `{name}`: none of {} exists, and no device code of crate `{name}` \
                     is embedded in this executable; `cargo oxide build` writes {name}.ptx beside the binaries \
                     (target/oxide/<profile>/)",
                    list.join(", ")
                )?;
                if let Some(ir) = nvvm_ir {
                    write!(
                        f,
                        " ({} is NVVM IR, which cuda-oxide does not link at run time: rebuild with `cargo oxide build`)",
                        ir.display()
                    )?;
                }
                Ok(())
            }
            LtoirError::Driver(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for LtoirError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LtoirError::Driver(e) => Some(e),
            LtoirError::NoArtifact { .. } => None,
        }
    }
}

impl From<DriverError> for LtoirError {
    fn from(e: DriverError) -> LtoirError {
        LtoirError::Driver(e)
    }
}

impl From<LtoirError> for DriverError {
    /// So that `?` works in functions returning `DriverError`.
    fn from(e: LtoirError) -> DriverError {
        match e {
            LtoirError::Driver(e) => e,
            other => DriverError::Artifact { message: other.to_string() },
        }
    }
}

/// Directories [`load_kernel_module`] looks in, in order: where `cargo oxide build` writes
/// `<name>.ptx`, beside the executable (for an example or a test harness, also the profile's
/// output folder above it), so the file of the build that made the running binary comes first;
/// then the run-time `$CARGO_MANIFEST_DIR` (set by `cargo run` and `cargo oxide run`) or else the
/// current directory, as NVIDIA's does; then the current directory.
fn search_dirs() -> Vec<PathBuf> {
    let cwd = std::env::current_dir().ok();
    let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from).or_else(|| cwd.clone());
    let exe_dirs = std::env::current_exe().map(|exe| naming::by_name_dirs_of_exe(&exe)).unwrap_or_default();
    let mut out: Vec<PathBuf> = Vec::new();
    for dir in exe_dirs.into_iter().chain(manifest_dir).chain(cwd) {
        if !out.contains(&dir) {
            out.push(dir);
        }
    }
    out
}

/// Loads the device code of module (crate) `name`: the first of `<dir>/<name>.ptx` and
/// `<dir>/<name>.cubin` over the directories beside the executable (where `cargo oxide build`
/// writes `<name>.ptx`), `$CARGO_MANIFEST_DIR` (run time; else the current directory) and the
/// current directory; failing those, crate `name`'s device code embedded in the executable.
///
/// ```no_run
/// let ctx = cuda_core::CudaContext::new(0)?;
/// let module = cuda_host::ltoir::load_kernel_module(&ctx, "my_app")?;
/// # Ok::<(), cuda_host::ltoir::LtoirError>(())
/// ```
/// Errors: [`LtoirError::NoArtifact`] when there is nothing to load (saying where it looked),
/// [`LtoirError::Driver`] when loading fails (a JIT error, say).
pub fn load_kernel_module(ctx: &Arc<CudaContext>, name: &str) -> Result<Arc<Module>, LtoirError> {
    let not_found = match find_file(name) {
        Ok(path) => return Ok(Arc::new(Module::from_file(ctx, &path)?)),
        Err(not_found) => not_found,
    };
    match cuda_core::embedded::load_embedded_module(ctx, name) {
        Ok(loaded) => Ok(Arc::new(loaded.module().clone())),
        Err(_) => Err(not_found),
    }
}

/// The first `<name>.ptx` / `<name>.cubin` in the [`search_dirs`], or the error saying where
/// it looked.
pub(crate) fn find_file(name: &str) -> Result<PathBuf, LtoirError> {
    let dirs = search_dirs();
    let mut searched = Vec::new();
    for dir in &dirs {
        for ext in ["ptx", "cubin"] {
            let path = dir.join(format!("{name}.{ext}"));
            if path.is_file() {
                return Ok(path);
            }
            searched.push(path);
        }
    }
    let nvvm_ir =
        dirs.iter().flat_map(|d| [d.join(format!("{name}.ll")), d.join(format!("{name}.ltoir"))]).find(|p| p.is_file());
    let dir = dirs.first().cloned().unwrap_or_default();
    Err(LtoirError::NoArtifact { name: name.to_string(), dir, searched, nvvm_ir })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_artifact_says_where_it_looked_and_what_to_do() {
        let e = LtoirError::NoArtifact {
            name: "demo".into(),
            dir: "/pkg".into(),
            searched: vec!["/pkg/demo.ptx".into(), "/pkg/demo.cubin".into()],
            nvvm_ir: Some("/pkg/demo.ll".into()),
        };
        let text = e.to_string();
        assert!(text.contains("/pkg/demo.ptx, /pkg/demo.cubin"), "{text}");
        assert!(text.contains("cargo oxide build") && text.contains("NVVM IR"), "{text}");
        let as_driver: DriverError = e.into();
        assert!(as_driver.to_string().contains("no device code for module `demo`"));
    }

    #[test]
    fn the_search_starts_beside_the_executable_then_the_manifest_dir() {
        let dirs = search_dirs();
        // This test binary is a harness in `target/<profile>/deps/`: its folder, then the
        // profile's output folder above it, where `cargo oxide build` writes `<crate>.ptx`.
        let exe_dir = std::env::current_exe().unwrap().parent().unwrap().to_path_buf();
        assert_eq!(dirs[0], exe_dir);
        assert_eq!(dirs[1], exe_dir.parent().unwrap());
        let manifest_dir =
            std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from).or_else(|| std::env::current_dir().ok());
        assert_eq!(dirs.get(2), manifest_dir.as_ref(), "then NVIDIA's place");
    }
}
