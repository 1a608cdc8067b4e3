//! Loading the CUDA driver and turning its results into `DriverError`s (the layer over cudarc's `sys`).

use std::ffi::CStr;
use std::sync::OnceLock;

use cudarc::driver::sys::{self, CUresult};

use crate::error::DriverError;

/// Lowest driver API version (`cuDriverGetVersion`) whose entry points the runtime uses.
const MIN_DRIVER_VERSION: i32 = 12000;

/// `true` when `libcuda` can be loaded. cudarc panics on first use without it, so every path
/// into the driver goes through `init`, which checks this first.
///
/// Our own check rather than cudarc's `is_culib_present`, which exists only where cudarc loads
/// the driver at run time: linked with candle, cudarc links `libcuda` instead (its
/// `dynamic-linking`; we ask only for its `fallback-dynamic-loading`), and a program that runs at
/// all then has it. cudarc's loader tries these same names among others.
pub fn is_driver_present() -> bool {
    driver_library().is_some()
}

/// The driver's library names, versioned first: cuda-gdb only enables kernel debugging for a
/// driver loaded under its versioned name (cudarc asks for the unversioned one first, which the
/// dynamic loader then resolves to this same, already loaded, library).
#[cfg(unix)]
const DRIVER_NAMES: &[&str] = &["libcuda.so.1", "libcuda.so"];
#[cfg(windows)]
const DRIVER_NAMES: &[&str] = &["nvcuda.dll"];

/// The driver library, loaded once and kept for the whole process.
fn driver_library() -> Option<&'static libloading::Library> {
    static LIBRARY: OnceLock<Option<libloading::Library>> = OnceLock::new();
    LIBRARY
        .get_or_init(|| {
            // SAFETY: loading the driver runs only its initialisers, as cudarc's own loading does.
            DRIVER_NAMES.iter().find_map(|name| unsafe { libloading::Library::new(*name) }.ok())
        })
        .as_ref()
}

/// `true` when the loaded driver exports `name`. cudarc panics when asked for an entry point the
/// driver lacks, so a call that only newer drivers have is checked here first.
pub(crate) fn has_symbol(name: &str) -> bool {
    // SAFETY: only looks the symbol up; nothing is called.
    driver_library().is_some_and(|lib| unsafe { lib.get::<*const std::ffi::c_void>(name.as_bytes()) }.is_ok())
}

/// Loads and initialises the driver once per process; later calls return the first outcome.
pub(crate) fn init() -> Result<(), DriverError> {
    static INIT: OnceLock<Result<(), DriverError>> = OnceLock::new();
    INIT.get_or_init(|| {
        if !is_driver_present() {
            return Err(DriverError::NoDriver {
                detail: "libcuda.so.1 (nvcuda.dll on Windows) could not be loaded".into(),
            });
        }
        // SAFETY: the library is present; cuInit and cuDriverGetVersion exist in every driver.
        check(unsafe { sys::cuInit(0) }, "cuInit")?;
        let mut version = 0;
        check(unsafe { sys::cuDriverGetVersion(&mut version) }, "cuDriverGetVersion")?;
        if version < MIN_DRIVER_VERSION {
            return Err(DriverError::NoDriver {
                detail: format!(
                    "the installed driver supports CUDA {}.{}, cuda-oxide needs CUDA 12.0 or newer",
                    version / 1000,
                    version % 1000 / 10
                ),
            });
        }
        Ok(())
    })
    .clone()
}

/// `Ok` for `CUDA_SUCCESS`, else the error for driver function `call`.
pub(crate) fn check(result: CUresult, call: &'static str) -> Result<(), DriverError> {
    match result {
        CUresult::CUDA_SUCCESS => Ok(()),
        other => Err(DriverError::from_cuda(other, call)),
    }
}

/// The driver's description of `result`, or a built-in one when the driver is not loaded.
pub(crate) fn error_string(result: CUresult) -> String {
    if is_driver_present() {
        let mut ptr = std::ptr::null();
        // SAFETY: the library is present; cuGetErrorString needs no cuInit and writes a pointer
        // to a static NUL-terminated string.
        let ok = unsafe { sys::cuGetErrorString(result, &mut ptr) } == CUresult::CUDA_SUCCESS;
        if ok && !ptr.is_null() {
            // SAFETY: see above.
            return unsafe { CStr::from_ptr(ptr) }.to_string_lossy().into_owned();
        }
    }
    let text = match result {
        CUresult::CUDA_ERROR_INVALID_VALUE => "invalid argument",
        CUresult::CUDA_ERROR_OUT_OF_MEMORY => "out of memory",
        CUresult::CUDA_ERROR_NOT_FOUND => "named symbol not found",
        CUresult::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES => "too many resources requested for launch",
        CUresult::CUDA_ERROR_ILLEGAL_INSTRUCTION => "an illegal instruction was encountered",
        CUresult::CUDA_ERROR_ILLEGAL_ADDRESS => "an illegal memory access was encountered",
        CUresult::CUDA_ERROR_NO_BINARY_FOR_GPU => "no kernel image is available for execution on the device",
        _ => "no description (the CUDA driver is not loaded)",
    };
    text.to_string()
}
