//! libNVVM: NVVM IR → LTOIR (or PTX), one program per call.

use std::ffi::{c_char, c_int, c_void};
use std::path::{Path, PathBuf};

use crate::{CStrings, LinkError, c_text, open_library, symbol};

type Program = *mut c_void;

/// The functions of `nvvm.h` we call.
#[derive(Clone, Copy)]
struct Api {
    version: unsafe extern "C" fn(*mut c_int, *mut c_int) -> c_int,
    create: unsafe extern "C" fn(*mut Program) -> c_int,
    destroy: unsafe extern "C" fn(*mut Program) -> c_int,
    add_module: unsafe extern "C" fn(Program, *const c_char, usize, *const c_char) -> c_int,
    compile: unsafe extern "C" fn(Program, c_int, *const *const c_char) -> c_int,
    result_size: unsafe extern "C" fn(Program, *mut usize) -> c_int,
    result: unsafe extern "C" fn(Program, *mut c_char) -> c_int,
    log_size: unsafe extern "C" fn(Program, *mut usize) -> c_int,
    log: unsafe extern "C" fn(Program, *mut c_char) -> c_int,
}

/// An opened libNVVM.
pub struct Nvvm {
    api: Api,
    path: PathBuf,
    _lib: libloading::Library,
}

/// A program, destroyed when dropped.
struct ProgramGuard<'a> {
    api: &'a Api,
    raw: Program,
}

impl Drop for ProgramGuard<'_> {
    fn drop(&mut self) {
        // SAFETY: `raw` came from nvvmCreateProgram and is destroyed once.
        unsafe { (self.api.destroy)(&mut self.raw) };
    }
}

const LIB: &str = "libNVVM";

impl std::fmt::Debug for Nvvm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Nvvm").field("path", &self.path).finish()
    }
}

impl Nvvm {
    /// Opens libNVVM at `path` (`libnvvm.so.4` of a CUDA 13 toolkit or wheel).
    pub fn open(path: &Path) -> Result<Nvvm, LinkError> {
        let lib = open_library(path, LIB)?;
        let name = format!("{LIB} ({})", path.display());
        // SAFETY: each type below is the C signature from nvvm.h.
        let api = unsafe {
            Api {
                version: symbol(&lib, &name, "nvvmVersion")?,
                create: symbol(&lib, &name, "nvvmCreateProgram")?,
                destroy: symbol(&lib, &name, "nvvmDestroyProgram")?,
                add_module: symbol(&lib, &name, "nvvmAddModuleToProgram")?,
                compile: symbol(&lib, &name, "nvvmCompileProgram")?,
                result_size: symbol(&lib, &name, "nvvmGetCompiledResultSize")?,
                result: symbol(&lib, &name, "nvvmGetCompiledResult")?,
                log_size: symbol(&lib, &name, "nvvmGetProgramLogSize")?,
                log: symbol(&lib, &name, "nvvmGetProgramLog")?,
            }
        };
        Ok(Nvvm { api, path: path.to_path_buf(), _lib: lib })
    }

    /// Where it was opened from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// libNVVM's version `(major, minor)` (2.0 for CUDA 13).
    pub fn version(&self) -> (i32, i32) {
        let (mut major, mut minor) = (0, 0);
        // SAFETY: two live out-pointers.
        unsafe { (self.api.version)(&mut major, &mut minor) };
        (major, minor)
    }

    /// Compiles one module of NVVM IR (text or bitcode) with `options` (`-arch=compute_90`,
    /// `-gen-lto`, …); returns what libNVVM produced (LTOIR with `-gen-lto`, else PTX).
    pub fn compile(&self, module_name: &str, ir: &[u8], options: &[String]) -> Result<Vec<u8>, LinkError> {
        let options = CStrings::new(options)?;
        let name = CStrings::new(&[module_name.to_string()])?;
        let mut raw: Program = std::ptr::null_mut();
        // SAFETY: a live out-pointer.
        self.check("nvvmCreateProgram", unsafe { (self.api.create)(&mut raw) }, None)?;
        let program = ProgramGuard { api: &self.api, raw };
        // SAFETY: `ir` is valid for its length; the name is NUL-terminated.
        let r = unsafe { (self.api.add_module)(program.raw, ir.as_ptr().cast(), ir.len(), name.ptrs[0]) };
        self.check("nvvmAddModuleToProgram", r, Some(&program))?;
        // SAFETY: `ptrs` holds `len` NUL-terminated strings that live through the call.
        let r = unsafe { (self.api.compile)(program.raw, options.ptrs.len() as c_int, options.ptrs.as_ptr()) };
        self.check("nvvmCompileProgram", r, Some(&program))?;
        let mut size = 0usize;
        // SAFETY: a live out-pointer.
        self.check("nvvmGetCompiledResultSize", unsafe { (self.api.result_size)(program.raw, &mut size) }, None)?;
        let mut out = vec![0u8; size];
        // SAFETY: the buffer has the size libNVVM asked for.
        self.check("nvvmGetCompiledResult", unsafe { (self.api.result)(program.raw, out.as_mut_ptr().cast()) }, None)?;
        Ok(out)
    }

    fn check(&self, call: &'static str, code: c_int, program: Option<&ProgramGuard<'_>>) -> Result<(), LinkError> {
        if code == 0 {
            return Ok(());
        }
        let log = program.map(|p| self.log(p)).unwrap_or_default();
        Err(LinkError::Failed { library: LIB, call, code, log })
    }

    fn log(&self, program: &ProgramGuard<'_>) -> String {
        let mut size = 0usize;
        // SAFETY: a live out-pointer, then a buffer of the size asked for.
        if unsafe { (self.api.log_size)(program.raw, &mut size) } != 0 || size == 0 {
            return String::new();
        }
        let mut buf = vec![0u8; size];
        unsafe { (self.api.log)(program.raw, buf.as_mut_ptr().cast()) };
        c_text(buf)
    }
}
