//! Loading device code from a file: `CudaContext::load_module_from_file` (NVIDIA's loader, which
//! most of their examples use with the `<crate>.ptx` that the build writes) and `Module::from_file`.
//!
//! `cargo oxide build` writes `<crate>.ptx` for every crate with kernels (the PTX of the lowest
//! `--arch`, so that it JIT-compiles on every GPU the build targets) into the profile's output
//! folder, beside the binaries (`target/oxide/<profile>/`), and next to the package's
//! `Cargo.toml` only when asked (`--ptx-beside-sources`). A program that names that file by a
//! relative path, or by an absolute path fixed at compile time
//! (`concat!(env!("CARGO_MANIFEST_DIR"), "/app.ptx")`), finds it beside its executable, also when
//! copied to another machine with it: see [`CudaContext::load_module_from_file`] for where it looks.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cudarc::driver::sys::CUresult;
use oxide_contract::manifest::PayloadKind;
use oxide_contract::naming;

use crate::context::CudaContext;
use crate::error::DriverError;
use crate::module::Module;

/// First bytes of an ELF image (a cubin).
const ELF_MAGIC: [u8; 4] = *b"\x7fELF";
/// First bytes of a fatbin (`0xBA55ED50`, little endian).
const FATBIN_MAGIC: [u8; 4] = 0xBA55_ED50u32.to_le_bytes();

impl CudaContext {
    /// Loads device code from the file `filename`: PTX text (JIT-compiled for this GPU), a cubin
    /// or a fatbin, told apart by content as the driver's `cuModuleLoad` does.
    ///
    /// ```no_run
    /// let ctx = cuda_core::CudaContext::new(0)?;
    /// let module = ctx.load_module_from_file("my_app.ptx")?;
    /// let vecadd = module.function("vecadd")?;
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    ///
    /// Where it looks, in order, stopping at the first file that exists:
    /// 1. `filename` as given (a relative path from the current directory);
    /// 2. the file's name in the directory of the running executable (for an example or a test
    ///    harness, also in the profile's output folder above it, where `cargo oxide build`
    ///    writes `<crate>.ptx`), in the current directory, and in `$CARGO_MANIFEST_DIR` when
    ///    that is set at run time (`cargo run` sets it), so a binary copied together with its
    ///    `.ptx` finds it even when the program spells the build machine's absolute path;
    /// 3. when there is no such file anywhere, the device code of the crate named like the
    ///    file (`my_app` for `my_app.ptx`) embedded in the executable, if it is linked in: the
    ///    same kernels the build wrote to the file, in the payload that suits this GPU.
    ///
    /// Errors: `CUDA_ERROR_FILE_NOT_FOUND` naming every place it looked; `CUDA_ERROR_INVALID_IMAGE`
    /// for a file that is neither PTX nor a cubin/fatbin; the driver's JIT error (with its log) for
    /// PTX it cannot compile, e.g. `CUDA_ERROR_UNSUPPORTED_PTX_VERSION`.
    pub fn load_module_from_file(self: &Arc<Self>, filename: &str) -> Result<Arc<Module>, DriverError> {
        let given = Path::new(filename);
        let candidates = module_file_candidates(given);
        if let Some(found) = candidates.iter().find(|p| p.is_file()) {
            return Module::from_file(self, found).map(Arc::new);
        }
        let stem = given.file_stem().and_then(|s| s.to_str()).unwrap_or(filename);
        if let Ok(bundles) = crate::embedded::artifact_bundles_from_current_exe()
            && let Some(bundle) = crate::embedded::find_bundle(&bundles, stem)
        {
            let loaded = bundle.load(self)?;
            return Ok(Arc::new(loaded.module().clone()));
        }
        Err(not_found(filename, &candidates, stem))
    }
}

/// `CUDA_ERROR_FILE_NOT_FOUND`, saying where [`CudaContext::load_module_from_file`] looked.
fn not_found(filename: &str, candidates: &[PathBuf], stem: &str) -> DriverError {
    let looked: Vec<String> = candidates.iter().map(|p| p.display().to_string()).collect();
    DriverError::from_cuda(CUresult::CUDA_ERROR_FILE_NOT_FOUND, "load_module_from_file").context(format!(
        "loading device code from `{filename}`: no such file (looked in {}), and no device code of \
         crate `{stem}` is embedded in this executable",
        looked.join(", ")
    ))
}

impl Module {
    /// Loads the device code in the file at `path` (PTX, cubin or fatbin, by content). Unlike
    /// [`CudaContext::load_module_from_file`], looks nowhere else.
    ///
    /// ```no_run
    /// let ctx = cuda_core::CudaContext::new(0)?;
    /// let module = cuda_core::Module::from_file(&ctx, "target/oxide/my_app/my_app.sm_90.cubin".as_ref())?;
    /// # Ok::<(), cuda_core::DriverError>(())
    /// ```
    pub fn from_file(ctx: &Arc<CudaContext>, path: &Path) -> Result<Module, DriverError> {
        let (kind, bytes) = read_device_file(path)?;
        Module::load(ctx, kind, &bytes).map_err(|e| e.context(format!("loading the {kind} in {}", path.display())))
    }
}

/// The file's bytes and what kind of device code they are.
fn read_device_file(path: &Path) -> Result<(PayloadKind, Vec<u8>), DriverError> {
    let bytes = std::fs::read(path).map_err(|e| {
        DriverError::from_cuda(CUresult::CUDA_ERROR_FILE_NOT_FOUND, "Module::from_file")
            .context(format!("reading device code from {}: {e}", path.display()))
    })?;
    match payload_kind_of(&bytes) {
        Some(kind) => Ok((kind, bytes)),
        None => Err(DriverError::from_cuda(CUresult::CUDA_ERROR_INVALID_IMAGE, "Module::from_file")
            .context(format!("loading {}: it is neither PTX text nor a cubin or fatbin", path.display()))),
    }
}

/// What kind of device code `bytes` are, by content: an ELF image is a cubin, the fatbin magic a
/// fatbin, and text without NUL bytes (a trailing one allowed) PTX. `None` for anything else.
///
/// ```
/// use cuda_core::oxide_contract::manifest::PayloadKind;
/// assert_eq!(cuda_core::payload_kind_of(b".version 8.0\n.target sm_90\n"), Some(PayloadKind::Ptx));
/// assert_eq!(cuda_core::payload_kind_of(b"\x7fELF\x02\x01\x01"), Some(PayloadKind::Cubin));
/// assert_eq!(cuda_core::payload_kind_of(&[0, 1, 2, 3]), None);
/// ```
pub fn payload_kind_of(bytes: &[u8]) -> Option<PayloadKind> {
    if bytes.starts_with(&ELF_MAGIC) {
        Some(PayloadKind::Cubin)
    } else if bytes.starts_with(&FATBIN_MAGIC) {
        Some(PayloadKind::Fatbin)
    } else {
        let text = bytes.strip_suffix(&[0]).unwrap_or(bytes);
        (!text.is_empty() && !text.contains(&0)).then_some(PayloadKind::Ptx)
    }
}

/// Where [`CudaContext::load_module_from_file`] looks for `path`, in order, without duplicates:
/// `path` itself, then its file name in the executable's directory (and the profile's output
/// folder above an example's or a test harness's: `naming::by_name_dirs_of_exe`), the current
/// directory and the run-time `$CARGO_MANIFEST_DIR`.
///
/// ```
/// let places = cuda_core::module_file_candidates("/build/machine/app/app.ptx".as_ref());
/// assert_eq!(places[0], std::path::Path::new("/build/machine/app/app.ptx"));
/// assert!(places[1..].iter().all(|p| p.ends_with("app.ptx")));
/// ```
pub fn module_file_candidates(path: &Path) -> Vec<PathBuf> {
    let mut out = vec![path.to_path_buf()];
    let Some(name) = path.file_name() else { return out };
    let exe_dirs = std::env::current_exe().map(|exe| naming::by_name_dirs_of_exe(&exe)).unwrap_or_default();
    let cwd = std::env::current_dir().ok();
    let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from);
    for dir in exe_dirs.into_iter().chain(cwd).chain(manifest_dir) {
        let candidate = dir.join(name);
        let same_as_given = path.is_relative() && std::env::current_dir().is_ok_and(|cwd| cwd.join(path) == candidate);
        if !same_as_given && !out.contains(&candidate) {
            out.push(candidate);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_by_content() {
        assert_eq!(payload_kind_of(b"//\n.version 8.0\0"), Some(PayloadKind::Ptx), "a trailing NUL is fine");
        assert_eq!(payload_kind_of(&[0x50, 0xED, 0x55, 0xBA, 1, 0]), Some(PayloadKind::Fatbin));
        assert_eq!(payload_kind_of(b""), None);
        assert_eq!(payload_kind_of(b"PK\x03\x04\0\0"), None, "binary that is no device image");
    }

    #[test]
    fn candidates_try_the_given_path_first_then_by_name() {
        let places = module_file_candidates(Path::new("/nowhere/at/all/demo.ptx"));
        assert_eq!(places[0], Path::new("/nowhere/at/all/demo.ptx"));
        let exe_dir = std::env::current_exe().unwrap().parent().unwrap().join("demo.ptx");
        assert_eq!(places[1], exe_dir, "next: beside the executable");
        // This test binary is a harness in `target/<profile>/deps/`: the profile's folder above
        // it, where `cargo oxide build` writes `<crate>.ptx`, comes next.
        let profile_dir = std::env::current_exe().unwrap().parent().unwrap().parent().unwrap().join("demo.ptx");
        assert_eq!(places[2], profile_dir, "then the profile's output folder");
        assert!(places.contains(&std::env::current_dir().unwrap().join("demo.ptx")));
        // A relative name is not listed twice (as given, and again in the current directory).
        let places = module_file_candidates(Path::new("demo.ptx"));
        let cwd = std::env::current_dir().unwrap().join("demo.ptx");
        assert!(!places.contains(&cwd), "{places:?}");
    }

    #[test]
    fn a_missing_file_is_file_not_found_naming_where_it_looked() {
        let name = format!("no_such_crate_{}.ptx", std::process::id());
        let places = module_file_candidates(Path::new(&name));
        assert!(places.iter().all(|p| !p.is_file()));
        let e = not_found(&name, &places, "no_such_crate");
        assert_eq!(e.name(), "CUDA_ERROR_FILE_NOT_FOUND");
        assert_eq!(e.0, CUresult::CUDA_ERROR_FILE_NOT_FOUND, "NVIDIA-style `err.0` reads the code");
        let text = e.to_string();
        assert!(text.contains(&name) && text.contains("crate `no_such_crate`"), "{text}");
        assert!(text.contains("cargo oxide build"), "the hint says how to get the file: {text}");
        let e = read_device_file(&places[0]).unwrap_err();
        assert_eq!(e.name(), "CUDA_ERROR_FILE_NOT_FOUND");
    }

    #[test]
    fn files_are_read_and_told_apart() {
        let dir = std::env::temp_dir().join(format!("oxide-module-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ptx = dir.join("k.ptx");
        std::fs::write(&ptx, ".version 8.0\n.target sm_90\n").unwrap();
        assert_eq!(read_device_file(&ptx).unwrap().0, PayloadKind::Ptx);
        let junk = dir.join("k.bin");
        std::fs::write(&junk, [0u8, 159, 146, 150]).unwrap();
        let e = read_device_file(&junk).unwrap_err();
        assert_eq!(e.name(), "CUDA_ERROR_INVALID_IMAGE");
        assert!(e.to_string().contains("neither PTX text nor a cubin or fatbin"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
