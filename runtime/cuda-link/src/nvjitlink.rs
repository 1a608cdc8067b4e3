//! nvJitLink: links device code of several kinds into one cubin (or, with `-ptx`, PTX).

use std::ffi::{c_char, c_int, c_void};
use std::path::{Path, PathBuf};

use std::os::unix::ffi::OsStrExt;

use oxide_contract::toolkit::CudaRelease;

use crate::{CStrings, LinkError, c_text, open_library, search, symbol};

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

/// Opens the nvJitLink at `place`, where it is and its release (for [`search::choose`]).
pub(crate) fn probe(place: &search::Place) -> search::Probe<NvJitLink> {
    let bare = place.path.components().count() == 1;
    if !bare && !place.path.exists() {
        return search::Probe::Missing;
    }
    let lib = match NvJitLink::open(&place.path) {
        Ok(lib) => lib,
        // A bare name that does not open is one the loader has not got.
        Err(_) if bare => return search::Probe::Missing,
        Err(e) => return search::Probe::Unusable(e.to_string()),
    };
    let (major, minor) = lib.version();
    if major == 0 {
        return search::Probe::Unusable("nvJitLinkVersion gave no version".into());
    }
    let path = lib.loaded_from().unwrap_or_else(|| place.path.clone());
    let path = std::fs::canonicalize(&path).unwrap_or(path);
    search::Probe::Found { release: CudaRelease::new(major, minor), path, lib }
}

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

    /// The library the runtime links LTOIR made by CUDA `need` with: the first of
    /// [`search::places`] whose release can link it ([`NVJITLINK_ENV`], the CUDA tools of `cargo
    /// oxide setup`, `CUDA_HOME`, `CUDA_PATH`, the loader's search path, `/usr/local/cuda`),
    /// skipping older ones; with `need` unknown, the first that opens. The error names the
    /// need, every library found with its release and path, and the fixes.
    pub fn find(need: Option<CudaRelease>) -> Result<NvJitLink, LinkError> {
        match search::choose(&search::places(), need, probe) {
            Ok((lib, ..)) => Ok(lib),
            Err(none) => Err(LinkError::NoneFits(none)),
        }
    }

    /// Where it was opened from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file the dynamic loader mapped for it (for a bare name, the one its search found).
    fn loaded_from(&self) -> Option<PathBuf> {
        let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
        // SAFETY: the address is a function of the loaded library; `info` is a live out-pointer.
        let found = unsafe { libc::dladdr(self.api.version as *const c_void, &mut info) };
        if found == 0 || info.dli_fname.is_null() {
            return None;
        }
        // SAFETY: dladdr returned a NUL-terminated name that lives while the library is loaded.
        let name = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) };
        Some(PathBuf::from(std::ffi::OsStr::from_bytes(name.to_bytes())))
    }

    /// The library's version `(major, minor)`, e.g. `(13, 5)`; `(0, 0)` if it cannot say.
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
