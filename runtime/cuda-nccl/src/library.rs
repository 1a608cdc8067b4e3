//! Loading NCCL (through cudarc's dynamic loading) once per process, with NVLink multicast
//! turned off first, and the errors that say where NCCL was looked for and how to make it load.
//!
//! cudarc opens NCCL by the name `libnccl.so` on the library search path; NVIDIA's wheel (and
//! the `libnccl2` packages) install only `libnccl.so.2`. `cargo oxide setup` installs the wheel
//! with a `libnccl.so` link beside the library, and `cargo oxide run`/`test` put that directory
//! on `LD_LIBRARY_PATH`; a program run otherwise needs it there (the error says the line).

use std::ffi::CStr;
use std::path::{Path, PathBuf};
use std::sync::{Once, OnceLock};

use cuda_core::oxide_contract::toolkit::{
    NCCL_LINK_NAME, NCCL_SONAME, NCCL_VERSION, NCCL_WHEEL, managed_nccl_dir, managed_nccl_lib_dir,
};
use cudarc::nccl::sys::{self, ncclComm_t, ncclResult_t};

use crate::error::NcclError;

/// The oldest NCCL whose entry points this crate calls (`ncclGetLastError` came in 2.13; 2.18 is
/// the oldest release built for CUDA 12.2+), as `ncclGetVersion` encodes it.
const MIN_VERSION: i32 = 2_18_00;

/// The environment variable that turns NCCL's NVLink SHARP (multicast) algorithms on or off.
pub const NVLS_ENV: &str = "NCCL_NVLS_ENABLE";

/// Sets `NCCL_NVLS_ENABLE=0` before NCCL is loaded, whatever it was: NVLink multicast
/// (`cuMulticastCreate`) stays off. On the shared multi-GPU hosts this project runs on, a program
/// that uses it can put every GPU of the host out of service; single-process collectives lose
/// little without it.
pub fn disable_nvlink_multicast() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        if std::env::var(NVLS_ENV).as_deref() != Ok("0") {
            // SAFETY: `set_var` races only with native code reading the environment on another
            // thread at the same moment (Rust's own accessors take a lock). It runs once, before
            // NCCL — the native code that reads this variable — is loaded; programs that also
            // start threads calling `getenv` early should set the variable themselves (the
            // project's scripts do).
            unsafe { std::env::set_var(NVLS_ENV, "0") };
        }
    });
}

/// Loads NCCL once (NVLink multicast off first) and checks its version; later calls return
/// the first outcome. Every entry point of this crate calls it before calling NCCL, because
/// cudarc panics on first use of a library it cannot load.
pub fn ensure_loaded() -> Result<(), NcclError> {
    static LOADED: OnceLock<Result<(), NcclError>> = OnceLock::new();
    LOADED
        .get_or_init(|| {
            disable_nvlink_multicast();
            // SAFETY: tries to dlopen cudarc's candidate names; no NCCL function is called.
            if !unsafe { sys::is_culib_present() } {
                return Err(NcclError::NotLoaded { fix: missing_fix(&Installs::find()) });
            }
            let version = raw_version()?;
            if version < MIN_VERSION {
                return Err(NcclError::NotLoaded {
                    fix: format!(
                        "the NCCL found is {}, cuda-nccl needs 2.18 or newer; run `cargo oxide setup` (installs \
                         {NCCL_WHEEL} {NCCL_VERSION}) and put its directory first on LD_LIBRARY_PATH",
                        format_version(version)
                    ),
                });
            }
            Ok(())
        })
        .clone()
}

/// The loaded NCCL's version as `(major, minor, patch)`, e.g. `(2, 30, 7)`.
///
/// ```no_run
/// let (major, minor, patch) = cuda_nccl::version()?;
/// println!("NCCL {major}.{minor}.{patch}");
/// # Ok::<(), cuda_nccl::NcclError>(())
/// ```
pub fn version() -> Result<(u32, u32, u32), NcclError> {
    ensure_loaded()?;
    let v = raw_version()? as u32;
    Ok((v / 10000, v / 100 % 100, v % 100))
}

fn raw_version() -> Result<i32, NcclError> {
    let mut version = 0;
    // SAFETY: the library is loaded (checked by the caller); writes one int. Not through
    // `check`: the version decides whether `ncclGetLastError` exists.
    match unsafe { sys::ncclGetVersion(&mut version) } {
        ncclResult_t::ncclSuccess => Ok(version),
        other => Err(NcclError::from_result(other, "ncclGetVersion", String::new(), None)),
    }
}

fn format_version(v: i32) -> String {
    format!("{}.{}.{}", v / 10000, v / 100 % 100, v % 100)
}

/// `Ok` for `ncclSuccess`, else the error of `call`, with NCCL's last error message for `comm`
/// (or the process's, for `None`).
pub(crate) fn check(result: ncclResult_t, call: &'static str, comm: Option<ncclComm_t>) -> Result<(), NcclError> {
    if result == ncclResult_t::ncclSuccess {
        return Ok(());
    }
    // SAFETY: the library is loaded (this crate reaches NCCL only after `ensure_loaded`);
    // both return pointers to NUL-terminated strings NCCL owns, or null.
    let text = |p: *const std::ffi::c_char| {
        (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
    };
    let description = text(unsafe { sys::ncclGetErrorString(result) }).unwrap_or_default();
    let detail = text(unsafe { sys::ncclGetLastError(comm.unwrap_or(std::ptr::null_mut())) });
    Err(NcclError::from_result(result, call, description, detail))
}

/// Where NCCL is installed, as far as this process can tell without loading it.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Installs {
    /// The directory `cargo oxide setup` installed NCCL into, when it holds the link cudarc opens.
    pub managed: Option<PathBuf>,
    /// A `libnccl.so.2` elsewhere: in a well-known directory, or loadable by its versioned name.
    pub other: Option<String>,
}

impl Installs {
    fn find() -> Installs {
        let managed = managed_nccl_lib_dir();
        let managed = managed.join(NCCL_LINK_NAME).is_file().then_some(managed);
        let mut dirs: Vec<PathBuf> = ["NCCL_HOME", "CUDA_HOME", "CUDA_PATH"]
            .iter()
            .filter_map(std::env::var_os)
            .flat_map(|root| [Path::new(&root).join("lib"), Path::new(&root).join("lib64")])
            .collect();
        dirs.extend(
            ["/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/local/cuda/lib64"].map(PathBuf::from),
        );
        let other =
            dirs.iter().map(|d| d.join(NCCL_SONAME)).find(|p| p.is_file()).map(|p| p.display().to_string()).or_else(
                || {
                    // SAFETY: only loads the library (its initialisers, as cudarc's loading would).
                    unsafe { libloading::Library::new(NCCL_SONAME) }
                        .is_ok()
                        .then(|| format!("{NCCL_SONAME} (on the library search path)"))
                },
            );
        Installs { managed, other }
    }
}

/// What to do when cudarc could not open `libnccl.so`.
pub(crate) fn missing_fix(installs: &Installs) -> String {
    let setup = format!(
        "`cargo oxide setup` installs NVIDIA's {NCCL_WHEEL} {NCCL_VERSION} wheel into {}",
        managed_nccl_dir().display()
    );
    if let Some(dir) = &installs.managed {
        return format!(
            "NCCL is installed in {} (by `cargo oxide setup`), but that directory is not on the library search \
             path: run the program with `cargo oxide run`, or `export LD_LIBRARY_PATH={}:$LD_LIBRARY_PATH`",
            dir.display(),
            dir.display()
        );
    }
    if let Some(found) = &installs.other {
        return format!(
            "found {found}, but cudarc opens NCCL as `{NCCL_LINK_NAME}`, which no directory of the library search \
             path holds: put a link `{NCCL_LINK_NAME}` to it in a directory on LD_LIBRARY_PATH, or use the copy \
             that {setup} (with the link) through `cargo oxide run`"
        );
    }
    format!(
        "no NCCL found ({NCCL_LINK_NAME} is not on the library search path, nor {NCCL_SONAME} anywhere looked); \
         {setup}; then run through `cargo oxide run`, or `export LD_LIBRARY_PATH={}:$LD_LIBRARY_PATH`",
        managed_nccl_lib_dir().display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_nccl_says_what_to_do() {
        let none = missing_fix(&Installs::default());
        assert!(none.contains("no NCCL found"), "{none}");
        assert!(none.contains(&format!("`cargo oxide setup` installs NVIDIA's {NCCL_WHEEL} {NCCL_VERSION}")), "{none}");
        assert!(none.contains("export LD_LIBRARY_PATH="), "{none}");
        let managed = missing_fix(&Installs { managed: Some("/h/nccl/lib".into()), other: None });
        assert!(managed.contains("cargo oxide run") && managed.contains("LD_LIBRARY_PATH=/h/nccl/lib:"), "{managed}");
        let other = missing_fix(&Installs { managed: None, other: Some("/usr/lib/libnccl.so.2".into()) });
        assert!(other.starts_with("found /usr/lib/libnccl.so.2, but cudarc opens NCCL as `libnccl.so`"), "{other}");
        assert_eq!(format_version(2_30_07), "2.30.7");
    }

    #[test]
    fn loading_turns_nvlink_multicast_off_and_reports_a_missing_nccl() {
        let outcome = ensure_loaded();
        assert_eq!(std::env::var(NVLS_ENV).as_deref(), Ok("0"), "set before NCCL is loaded, even when it is missing");
        // SAFETY: only tries to open the library.
        if unsafe { sys::is_culib_present() } {
            // A machine with NCCL (`LD_LIBRARY_PATH` holding the managed copy, say): it loads and
            // says its version, with no GPU needed.
            let (major, minor, patch) = version().unwrap();
            assert!(major == 2 && minor >= 18, "NCCL {major}.{minor}.{patch}");
            return;
        }
        let e = outcome.unwrap_err();
        println!("{e}");
        assert!(matches!(e, NcclError::NotLoaded { .. }), "{e}");
        assert!(
            e.to_string().starts_with("NCCL could not be loaded: ") && e.to_string().contains("cargo oxide"),
            "{e}"
        );
        assert!(version().is_err(), "and again, without a panic");
    }
}
