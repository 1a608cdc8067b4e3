//! nvJitLink: links device code of several kinds into one cubin (or, with `-ptx`, PTX).

use std::ffi::{c_char, c_int, c_void};
use std::path::{Path, PathBuf};

use crate::{CStrings, LinkError, c_text, open_library, symbol};

/// Set to the path of a `libnvJitLink.so` to use that one (the runtime's load-time linking).
pub const NVJITLINK_ENV: &str = "CUDA_OXIDE_NVJITLINK";

type Handle = *mut c_void;

/// `nvJitLinkInputType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputKind {
    Cubin = 1,
    Ptx = 2,
    Ltoir = 3,
    Fatbin = 4,
    /// A host object file with embedded device code (`nvcc -dc`).
    Object = 5,
    /// An archive of such objects.
    Library = 6,
}

impl InputKind {
    /// The kind of a file, by its extension (`.cubin`, `.ptx`, `.ltoir`, `.fatbin`, `.o`, `.a`).
    pub fn of(path: &Path) -> Option<InputKind> {
        match path.extension()?.to_str()? {
            "cubin" => Some(InputKind::Cubin),
            "ptx" => Some(InputKind::Ptx),
            "ltoir" => Some(InputKind::Ltoir),
            "fatbin" => Some(InputKind::Fatbin),
            "o" => Some(InputKind::Object),
            "a" => Some(InputKind::Library),
            _ => None,
        }
    }
}

/// One input of a link.
#[derive(Clone, Copy, Debug)]
pub struct Input<'a> {
    pub kind: InputKind,
    /// Named in the linker's messages.
    pub name: &'a str,
    pub bytes: &'a [u8],
}

/// The functions of `nvJitLink.h` we call (their unversioned names, which every 12.x and 13.x
/// library exports).
#[derive(Clone, Copy)]
struct Api {
    create: unsafe extern "C" fn(*mut Handle, u32, *const *const c_char) -> c_int,
    destroy: unsafe extern "C" fn(*mut Handle) -> c_int,
    add_data: unsafe extern "C" fn(Handle, c_int, *const c_void, usize, *const c_char) -> c_int,
    complete: unsafe extern "C" fn(Handle) -> c_int,
    cubin_size: unsafe extern "C" fn(Handle, *mut usize) -> c_int,
    cubin: unsafe extern "C" fn(Handle, *mut c_void) -> c_int,
    ptx_size: unsafe extern "C" fn(Handle, *mut usize) -> c_int,
    ptx: unsafe extern "C" fn(Handle, *mut c_char) -> c_int,
    error_log_size: unsafe extern "C" fn(Handle, *mut usize) -> c_int,
    error_log: unsafe extern "C" fn(Handle, *mut c_char) -> c_int,
    version: unsafe extern "C" fn(*mut u32, *mut u32) -> c_int,
}

/// An opened nvJitLink library.
pub struct NvJitLink {
    api: Api,
    path: PathBuf,
    _lib: libloading::Library,
}

struct HandleGuard<'a> {
    api: &'a Api,
    raw: Handle,
}

impl Drop for HandleGuard<'_> {
    fn drop(&mut self) {
        // SAFETY: `raw` came from nvJitLinkCreate and is destroyed once.
        unsafe { (self.api.destroy)(&mut self.raw) };
    }
}

const LIB: &str = "nvJitLink";

/// Names and places `open_default` tries, after [`NVJITLINK_ENV`].
const DEFAULT_NAMES: [&str; 2] = ["libnvJitLink.so.13", "libnvJitLink.so"];

impl std::fmt::Debug for NvJitLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NvJitLink").field("path", &self.path).finish()
    }
}

impl NvJitLink {
    /// Opens nvJitLink at `path`.
    pub fn open(path: &Path) -> Result<NvJitLink, LinkError> {
        let lib = open_library(path, LIB)?;
        let name = format!("{LIB} ({})", path.display());
        // SAFETY: each type below is the C signature from nvJitLink.h.
        let api = unsafe {
            Api {
                create: symbol(&lib, &name, "nvJitLinkCreate")?,
                destroy: symbol(&lib, &name, "nvJitLinkDestroy")?,
                add_data: symbol(&lib, &name, "nvJitLinkAddData")?,
                complete: symbol(&lib, &name, "nvJitLinkComplete")?,
                cubin_size: symbol(&lib, &name, "nvJitLinkGetLinkedCubinSize")?,
                cubin: symbol(&lib, &name, "nvJitLinkGetLinkedCubin")?,
                ptx_size: symbol(&lib, &name, "nvJitLinkGetLinkedPtxSize")?,
                ptx: symbol(&lib, &name, "nvJitLinkGetLinkedPtx")?,
                error_log_size: symbol(&lib, &name, "nvJitLinkGetErrorLogSize")?,
                error_log: symbol(&lib, &name, "nvJitLinkGetErrorLog")?,
                version: symbol(&lib, &name, "nvJitLinkVersion")?,
            }
        };
        Ok(NvJitLink { api, path: path.to_path_buf(), _lib: lib })
    }

    /// The library the runtime links with: [`NVJITLINK_ENV`] if set, else `libnvJitLink.so.13`
    /// from the loader's search path, else the one of `CUDA_HOME`, `CUDA_PATH` or
    /// `/usr/local/cuda`. The error lists every place tried.
    pub fn open_default() -> Result<NvJitLink, LinkError> {
        if let Some(path) = std::env::var_os(NVJITLINK_ENV).filter(|p| !p.is_empty()) {
            return NvJitLink::open(Path::new(&path));
        }
        let mut tried = Vec::new();
        let mut places: Vec<PathBuf> = DEFAULT_NAMES.iter().map(PathBuf::from).collect();
        for var in ["CUDA_HOME", "CUDA_PATH"] {
            if let Some(root) = std::env::var_os(var).filter(|d| !d.is_empty()) {
                places.push(Path::new(&root).join("lib64").join(DEFAULT_NAMES[0]));
            }
        }
        places.push(Path::new("/usr/local/cuda/lib64").join(DEFAULT_NAMES[0]));
        for place in places {
            match NvJitLink::open(&place) {
                Ok(lib) => return Ok(lib),
                Err(_) => tried.push(place.display().to_string()),
            }
        }
        Err(LinkError::Load {
            library: LIB.to_string(),
            detail: format!("tried {} (set {NVJITLINK_ENV} to its path)", tried.join(", ")),
        })
    }

    /// Where it was opened from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The library's version `(major, minor)`, e.g. `(13, 5)`.
    pub fn version(&self) -> (u32, u32) {
        let (mut major, mut minor) = (0, 0);
        // SAFETY: two live out-pointers.
        unsafe { (self.api.version)(&mut major, &mut minor) };
        (major, minor)
    }

    /// Links `inputs` with `options` (`-arch=sm_90`, `-lto`, …). Returns the cubin, or with the
    /// `-ptx` option the PTX text.
    pub fn link(&self, options: &[String], inputs: &[Input<'_>]) -> Result<Vec<u8>, LinkError> {
        let want_ptx = options.iter().any(|o| o == "-ptx");
        let c_options = CStrings::new(options)?;
        let mut raw: Handle = std::ptr::null_mut();
        // SAFETY: a live out-pointer; `ptrs` holds `len` NUL-terminated strings.
        let r = unsafe { (self.api.create)(&mut raw, c_options.ptrs.len() as u32, c_options.ptrs.as_ptr()) };
        if r != 0 {
            return Err(LinkError::Failed {
                library: LIB,
                call: "nvJitLinkCreate",
                code: r,
                log: format!("options: {}", options.join(" ")),
            });
        }
        let handle = HandleGuard { api: &self.api, raw };
        for input in inputs {
            let name = CStrings::new(&[input.name.to_string()])?;
            // SAFETY: the bytes are valid for their length; the name is NUL-terminated.
            let r = unsafe {
                (self.api.add_data)(
                    handle.raw,
                    input.kind as c_int,
                    input.bytes.as_ptr().cast(),
                    input.bytes.len(),
                    name.ptrs[0],
                )
            };
            self.check("nvJitLinkAddData", r, &handle, Some(input.name))?;
        }
        // SAFETY: a live handle.
        self.check("nvJitLinkComplete", unsafe { (self.api.complete)(handle.raw) }, &handle, None)?;
        let mut size = 0usize;
        if want_ptx {
            // SAFETY: a live out-pointer, then a buffer of the size asked for.
            self.check(
                "nvJitLinkGetLinkedPtxSize",
                unsafe { (self.api.ptx_size)(handle.raw, &mut size) },
                &handle,
                None,
            )?;
            let mut out = vec![0u8; size];
            let r = unsafe { (self.api.ptx)(handle.raw, out.as_mut_ptr().cast()) };
            self.check("nvJitLinkGetLinkedPtx", r, &handle, None)?;
            return Ok(c_text(out).into_bytes());
        }
        // SAFETY: as above.
        self.check(
            "nvJitLinkGetLinkedCubinSize",
            unsafe { (self.api.cubin_size)(handle.raw, &mut size) },
            &handle,
            None,
        )?;
        let mut out = vec![0u8; size];
        let r = unsafe { (self.api.cubin)(handle.raw, out.as_mut_ptr().cast()) };
        self.check("nvJitLinkGetLinkedCubin", r, &handle, None)?;
        Ok(out)
    }

    fn check(
        &self,
        call: &'static str,
        code: c_int,
        handle: &HandleGuard<'_>,
        input: Option<&str>,
    ) -> Result<(), LinkError> {
        if code == 0 {
            return Ok(());
        }
        let mut log = String::new();
        if let Some(name) = input {
            log.push_str(&format!("while adding {name}\n"));
        }
        log.push_str(&self.error_log(handle));
        Err(LinkError::Failed { library: LIB, call, code, log })
    }

    fn error_log(&self, handle: &HandleGuard<'_>) -> String {
        let mut size = 0usize;
        // SAFETY: a live out-pointer, then a buffer of the size asked for.
        if unsafe { (self.api.error_log_size)(handle.raw, &mut size) } != 0 || size == 0 {
            return String::new();
        }
        let mut buf = vec![0u8; size];
        unsafe { (self.api.error_log)(handle.raw, buf.as_mut_ptr().cast()) };
        c_text(buf)
    }
}
