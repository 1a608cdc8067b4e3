//! libNVVM and nvJitLink, opened with `dlopen` when first needed: NVVM IR → LTOIR ([`Nvvm`]), and
//! LTOIR, cubins, PTX, fatbins and `nvcc -dc` objects → one cubin or PTX ([`NvJitLink`]).
//! The options cuda-oxide calls them with live in `oxide_contract::link`.

mod nvjitlink;
mod nvvm;
pub mod search;

use std::ffi::{CString, c_char};
use std::fmt;
use std::path::Path;

pub use nvjitlink::{Input, InputKind, NVJITLINK_ENV, NvJitLink};
pub use nvvm::Nvvm;

/// Why libNVVM or nvJitLink could not do what was asked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LinkError {
    /// The library could not be opened, or lacks a function we call.
    Load { library: String, detail: String },
    /// A call failed: its result code and the library's log (the compiler's or linker's errors).
    Failed { library: &'static str, call: &'static str, code: i32, log: String },
    /// An argument the C API cannot take (a NUL byte inside a name or option).
    BadArgument(String),
    /// No nvJitLink found can link the LTOIR (none at all, or each too old for it).
    NoneFits(search::NoneFits),
}

impl fmt::Display for LinkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LinkError::Load { library, detail } => write!(f, "could not load {library}: {detail}"),
            LinkError::Failed { library, call, code, log } => {
                write!(f, "{library}: {call} failed (code {code})")?;
                if !log.trim().is_empty() {
                    write!(f, ":\n{}", log.trim_end())?;
                }
                Ok(())
            }
            LinkError::BadArgument(what) => write!(f, "invalid argument: {what}"),
            LinkError::NoneFits(none) => none.fmt(f),
        }
    }
}

impl std::error::Error for LinkError {}

/// Opens `path` and resolves the functions `F` lists (a struct of function pointers).
fn open_library(path: &Path, what: &str) -> Result<libloading::Library, LinkError> {
    // SAFETY: NVIDIA's libraries run no initialisers with preconditions; we only call functions
    // through the C signatures of their headers.
    unsafe { libloading::Library::new(path) }
        .map_err(|e| LinkError::Load { library: format!("{what} ({})", path.display()), detail: e.to_string() })
}

/// The function `name` of `lib` as a `T` (a function pointer type matching its C declaration).
///
/// # Safety
/// `T` must be the function's exact C signature.
unsafe fn symbol<T: Copy>(lib: &libloading::Library, library: &str, name: &str) -> Result<T, LinkError> {
    // SAFETY: the caller guarantees the signature.
    unsafe { lib.get::<T>(name.as_bytes()) }
        .map(|s| *s)
        .map_err(|e| LinkError::Load { library: library.to_string(), detail: format!("no function `{name}`: {e}") })
}

/// C strings for the options of a call, and the pointer array the C API takes.
struct CStrings {
    _owned: Vec<CString>,
    ptrs: Vec<*const c_char>,
}

impl CStrings {
    fn new(items: &[String]) -> Result<CStrings, LinkError> {
        let owned: Vec<CString> = items
            .iter()
            .map(|s| CString::new(s.as_str()).map_err(|_| LinkError::BadArgument(format!("`{s}` contains a NUL byte"))))
            .collect::<Result<_, _>>()?;
        let ptrs = owned.iter().map(|c| c.as_ptr()).collect();
        Ok(CStrings { _owned: owned, ptrs })
    }
}

/// `bytes` as text, without the terminating NUL the C APIs write.
fn c_text(mut bytes: Vec<u8>) -> String {
    while bytes.last() == Some(&0) {
        bytes.pop();
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_library_is_a_load_error() {
        let err = Nvvm::open(Path::new("/nonexistent/libnvvm.so")).unwrap_err();
        assert!(matches!(err, LinkError::Load { .. }), "{err}");
        assert!(err.to_string().contains("/nonexistent/libnvvm.so"), "{err}");
        let err = NvJitLink::open(Path::new("/nonexistent/libnvJitLink.so")).unwrap_err();
        assert!(err.to_string().starts_with("could not load nvJitLink"), "{err}");
    }

    #[test]
    fn options_with_nul_are_rejected() {
        assert!(CStrings::new(&["-arch=sm_90".into()]).is_ok());
        assert!(matches!(CStrings::new(&["a\0b".into()]), Err(LinkError::BadArgument(_))));
        assert_eq!(c_text(b"log\0\0".to_vec()), "log");
    }

    /// The search with the real probe, on the CUDA tools `cargo oxide setup` installs (CI runs
    /// it before the tests): a file that is no library is reported and passed over, the library
    /// is chosen with its release, and a need it cannot meet lists it as too old.
    #[test]
    fn the_managed_nvjitlink_is_found_with_its_release() {
        let managed = search::places().into_iter().find(|p| p.source.contains("cargo oxide setup")).unwrap();
        if !managed.path.exists() {
            eprintln!("skipped: no CUDA tools of `cargo oxide setup` at {}", managed.path.display());
            return;
        }
        let not_a_library =
            search::Place { path: Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"), source: "test" };
        let places = [not_a_library, managed.clone()];
        let need = oxide_contract::toolkit::CudaRelease::new(13, 0);
        let (lib, path, release) = search::choose(&places, Some(need), nvjitlink::probe).unwrap();
        assert_eq!(path, std::fs::canonicalize(&managed.path).unwrap());
        assert_eq!(lib.version(), (release.major, release.minor));
        assert!(release >= need);

        let too_new = oxide_contract::toolkit::CudaRelease::new(13, 99);
        let text = search::choose(&places, Some(too_new), nvjitlink::probe).map(|_| ()).unwrap_err().to_string();
        assert!(text.contains(&format!("nvJitLink {release} at {}", path.display())), "{text}");
        assert!(text.contains("Cargo.toml (test): unusable"), "{text}");
    }

    #[test]
    fn input_kinds_by_extension() {
        assert_eq!(InputKind::of(Path::new("a.ltoir")), Some(InputKind::Ltoir));
        assert_eq!(InputKind::of(Path::new("lib.a")), Some(InputKind::Library));
        assert_eq!(InputKind::of(Path::new("a.cu")), None);
    }
}
