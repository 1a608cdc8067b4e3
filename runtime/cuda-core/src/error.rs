//! `DriverError`: the one error type of the host runtime, with the seed's cause-and-fix hints;
//! `IntoResult` for driver calls made directly through [`crate::sys`].

use std::fmt;
use std::ops::Deref;

use cudarc::driver::sys::CUresult;

/// Likely cause and fix of a CUDA error, as in the "common launch errors" table of the guide.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hint {
    /// What usually causes the error.
    pub cause: &'static str,
    /// What to do about it.
    pub fix: &'static str,
}

const HINTS: &[(&str, Hint)] = &[
    (
        "CUDA_ERROR_INVALID_VALUE",
        Hint {
            cause: "grid or block dimensions are zero or over the limits",
            fix: "check the LaunchConfig values; a block has at most 1024 threads",
        },
    ),
    (
        "CUDA_ERROR_NOT_FOUND",
        Hint {
            cause: "the PTX entry name does not match any kernel in the loaded module",
            fix: "check that the #[kernel] name matches the loaded module",
        },
    ),
    (
        "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
        Hint {
            cause: "too much shared memory or too many registers per block",
            fix: "reduce shared_mem_bytes or the block size; use #[launch_bounds]",
        },
    ),
    (
        "CUDA_ERROR_ILLEGAL_INSTRUCTION",
        Hint {
            cause: "the kernel trapped (a panic, a failed assert, an out-of-bounds index)",
            fix: "debug it with `cargo oxide debug` or gpu_printf!",
        },
    ),
    // A `trap` (what a panic, a failed assert or a bounds check compiles to) is reported as
    // ILLEGAL_INSTRUCTION or, by some drivers, as LAUNCH_FAILED: both get the guide's hint.
    (
        "CUDA_ERROR_LAUNCH_FAILED",
        Hint {
            cause: "the kernel trapped (a panic, a failed assert, an out-of-bounds index)",
            fix: "debug it with `cargo oxide debug` or gpu_printf!",
        },
    ),
    (
        "CUDA_ERROR_ASSERT",
        Hint {
            cause: "the kernel trapped (a panic, a failed assert, an out-of-bounds index)",
            fix: "debug it with `cargo oxide debug` or gpu_printf!",
        },
    ),
    (
        "CUDA_ERROR_NO_BINARY_FOR_GPU",
        Hint {
            cause: "the device code was built for another GPU architecture",
            fix: "rebuild with your GPU's architecture: `cargo oxide build --arch sm_XY`",
        },
    ),
    (
        "CUDA_ERROR_ILLEGAL_ADDRESS",
        Hint {
            cause: "the kernel accessed memory outside its buffers (an out-of-bounds index into a slice, or a raw pointer past the end)",
            fix: "run it under `cargo oxide sanitize` to find the access, or `cargo oxide debug` to stop at the failed bounds check",
        },
    ),
    (
        "CUDA_ERROR_FILE_NOT_FOUND",
        Hint {
            cause: "the device code file is not where the program looks for it",
            fix: "build with `cargo oxide build` (it writes <crate>.ptx beside the binaries, in \
                  target/oxide/<profile>/) and copy the file next to the executable you run",
        },
    ),
    (
        "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
        Hint {
            cause: "the PTX ISA version is newer than this driver understands",
            fix: "update the NVIDIA driver, or build a cubin for this GPU with `--arch`",
        },
    ),
];

/// The hint for the CUDA error called `name`, if the guide has one.
pub fn hint_for(name: &str) -> Option<Hint> {
    HINTS.iter().find(|(n, _)| *n == name).map(|(_, h)| *h)
}

/// Any failure of the host runtime: a CUDA driver error, or a problem found before calling it.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DriverError {
    /// A driver call returned an error.
    Cuda {
        /// The `CUresult` value, e.g. 1.
        code: u32,
        /// `CUDA_ERROR_INVALID_VALUE`, …
        name: String,
        /// The driver's description (`cuGetErrorString`).
        description: String,
        /// The driver function that failed, e.g. `cuLaunchKernel`.
        call: &'static str,
        /// What we were doing, e.g. "launching kernel `vecadd`".
        context: Option<String>,
    },
    /// `libcuda` could not be loaded.
    NoDriver {
        /// Why loading failed (the loader's message).
        detail: String,
    },
    /// There is no device with this ordinal.
    NoDevice {
        /// The ordinal asked for.
        ordinal: usize,
        /// How many devices there are.
        count: usize,
    },
    /// A `LaunchConfig` (or cluster shape) the driver would reject; says which field and limit.
    InvalidConfig {
        /// Which field, its value and the limit.
        message: String,
    },
    /// Host and device lengths that must agree do not.
    LengthMismatch {
        /// The copy or launch that was refused.
        operation: &'static str,
        /// The length it needed.
        expected: usize,
        /// The length it was given.
        found: usize,
    },
    /// The module has no kernel with this entry name.
    EntryNotFound {
        /// The entry name looked up.
        entry: String,
        /// The module's kernels, when its manifest is known.
        known: Option<Vec<String>>,
    },
    /// The launch arguments do not match the kernel's parameters in the manifest. `kernel` is
    /// its readable name ([`crate::Function::name`]).
    ArgumentMismatch {
        /// The kernel's readable name.
        kernel: String,
        /// What differs.
        message: String,
    },
    /// The device code bundle is unreadable, or has no payload for this GPU.
    Bundle {
        /// What is wrong with it.
        message: String,
    },
    /// A sideloaded module or its files could not be found or read.
    Artifact {
        /// Which file, and why.
        message: String,
    },
    /// The crate was compiled by plain `cargo build`, so there is no device code.
    NotBuiltWithOxide,
    /// A launch the GPU could not run for want of a resource (local, shared memory, registers):
    /// the driver's error with what the kernel needed and the fix.
    /// `kernel` is its readable name ([`crate::Function::name`]).
    LaunchResources {
        /// The kernel's readable name.
        kernel: String,
        /// The driver's error.
        cuda: Box<DriverError>,
        /// What the kernel needed and what the GPU has.
        cause: String,
        /// What to change.
        fix: String,
    },
    /// A kernel instance is in none of the device code bundles linked into this binary.
    KernelNotLinked {
        /// The kernel instance launched.
        kernel: String,
        /// The kernels the binary's bundles hold.
        known: Vec<String>,
    },
    /// Misuse of the async runtime (`cuda_async`), e.g. composing operations of different devices.
    Async {
        /// What was misused.
        message: String,
    },
    /// An object of another library (cudarc, candle, a Python array) that cannot be used as
    /// asked, e.g. a stream of another context; says what to do instead.
    Interop {
        /// What is wrong and what to do.
        message: String,
    },
    /// Misuse of CUDA graphs (`crate::graph`), e.g. capturing the legacy default stream or work
    /// the graph cannot keep alive; says what to do instead.
    Graph {
        /// What is wrong and what to do.
        message: String,
    },
    /// Work or memory on the wrong GPU: a buffer of another device given to a kernel, a copy
    /// queued on a stream of a third context, peer access the devices do not allow, a range of
    /// devices past those the driver reports. Says which devices and what to do.
    Placement {
        /// What is where, and the fix.
        message: String,
    },
}

impl DriverError {
    /// The error for a failed driver call.
    pub fn from_cuda(result: CUresult, call: &'static str) -> DriverError {
        DriverError::Cuda {
            code: result as u32,
            name: format!("{result:?}"),
            description: crate::driver::error_string(result),
            call,
            context: None,
        }
    }

    /// Adds what we were doing to a driver error (other errors already say it).
    pub fn context(mut self, what: impl Into<String>) -> DriverError {
        if let DriverError::Cuda { context, .. } = &mut self {
            *context = Some(what.into());
        }
        self
    }

    pub(crate) fn invalid_config(message: impl Into<String>) -> DriverError {
        DriverError::InvalidConfig { message: message.into() }
    }

    /// The `CUresult` code, for driver errors and those that stand for one.
    pub fn code(&self) -> Option<u32> {
        match self {
            DriverError::Cuda { code, .. } => Some(*code),
            DriverError::LaunchResources { cuda, .. } => cuda.code(),
            DriverError::EntryNotFound { .. } => Some(CUresult::CUDA_ERROR_NOT_FOUND as u32),
            DriverError::NoDriver { .. } => Some(CUresult::CUDA_ERROR_NO_DEVICE as u32),
            DriverError::NoDevice { .. } => Some(CUresult::CUDA_ERROR_INVALID_DEVICE as u32),
            DriverError::InvalidConfig { .. } => Some(CUresult::CUDA_ERROR_INVALID_VALUE as u32),
            _ => None,
        }
    }

    /// The CUDA error name (`CUDA_ERROR_INVALID_VALUE`), or for host-side errors a short kind.
    pub fn name(&self) -> &str {
        match self {
            DriverError::Cuda { name, .. } => name,
            DriverError::LaunchResources { cuda, .. } => cuda.name(),
            DriverError::EntryNotFound { .. } => "CUDA_ERROR_NOT_FOUND",
            DriverError::NoDriver { .. } => "no NVIDIA driver",
            DriverError::NoDevice { .. } => "no such device",
            DriverError::InvalidConfig { .. } => "invalid launch configuration",
            DriverError::LengthMismatch { .. } => "length mismatch",
            DriverError::ArgumentMismatch { .. } => "kernel argument mismatch",
            DriverError::Bundle { .. } => "device code bundle error",
            DriverError::Artifact { .. } => "device artifact error",
            DriverError::NotBuiltWithOxide => "built without cargo oxide",
            DriverError::KernelNotLinked { .. } => "kernel not in this binary",
            DriverError::Async { .. } => "async runtime error",
            DriverError::Interop { .. } => "interop error",
            DriverError::Graph { .. } => "CUDA graph error",
            DriverError::Placement { .. } => "device placement error",
        }
    }

    /// Likely cause and fix, for the errors the guide's table covers.
    pub fn hint(&self) -> Option<Hint> {
        match self {
            DriverError::Cuda { name, .. } => hint_for(name),
            DriverError::EntryNotFound { .. } => hint_for("CUDA_ERROR_NOT_FOUND"),
            DriverError::InvalidConfig { .. } => hint_for("CUDA_ERROR_INVALID_VALUE"),
            _ => None,
        }
    }
}

impl fmt::Display for DriverError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DriverError::Cuda { code, name, description, call, context } => {
                write!(f, "{name} (code {code}) from {call}")?;
                if let Some(what) = context {
                    write!(f, " while {what}")?;
                }
                write!(f, ": {description}")?;
            }
            DriverError::NoDriver { detail } => write!(
                f,
                "no NVIDIA driver found ({detail}); install the NVIDIA driver, or add the directory \
                 of libcuda.so.1 to LD_LIBRARY_PATH, then check with `cargo oxide doctor`"
            )?,
            DriverError::NoDevice { ordinal, count: 0 } => {
                write!(f, "no CUDA device {ordinal}: the driver found no CUDA devices")?
            }
            DriverError::NoDevice { ordinal, count } => write!(
                f,
                "no CUDA device {ordinal}: there {} {count} device{} (ordinals 0..={})",
                if *count == 1 { "is" } else { "are" },
                if *count == 1 { "" } else { "s" },
                count - 1
            )?,
            DriverError::InvalidConfig { message } => write!(f, "invalid launch configuration: {message}")?,
            DriverError::LengthMismatch { operation, expected, found } => write!(
                f,
                "length mismatch in {operation}: the device buffer has {expected} elements, the other side {found}"
            )?,
            DriverError::EntryNotFound { entry, known } => {
                write!(f, "CUDA_ERROR_NOT_FOUND: no kernel entry `{entry}` in the loaded module")?;
                match known {
                    Some(list) if list.is_empty() => write!(f, " (it has no kernels)")?,
                    Some(list) => write!(f, " (it has: {})", list.join(", "))?,
                    None => {}
                }
            }
            DriverError::ArgumentMismatch { kernel, message } => {
                write!(f, "wrong arguments for kernel `{kernel}`: {message}")?
            }
            DriverError::Bundle { message } | DriverError::Artifact { message } => f.write_str(message)?,
            DriverError::Async { message } => write!(f, "cuda_async: {message}")?,
            DriverError::Interop { message } => f.write_str(message)?,
            DriverError::Graph { message } => write!(f, "CUDA graph: {message}")?,
            DriverError::Placement { message } => f.write_str(message)?,
            DriverError::NotBuiltWithOxide => f.write_str(
                "built without cargo oxide: device code was not compiled; run `cargo oxide build` \
                 (or `cargo oxide run`) instead of `cargo build`",
            )?,
            DriverError::LaunchResources { kernel, cuda, cause, fix } => {
                let first = cuda.to_string();
                let first = first.lines().next().unwrap_or_default();
                write!(f, "{first}\n  kernel `{kernel}` cannot run as launched\n  cause: {cause}\n  fix: {fix}")?
            }
            DriverError::KernelNotLinked { kernel, known } => {
                write!(f, "kernel `{kernel}` is not in the device code linked into this binary")?;
                if known.is_empty() {
                    write!(f, " (it holds no kernels)")?;
                } else {
                    write!(f, " (it holds: {})", known.join(", "))?;
                }
                f.write_str(
                    "; every crate with kernels, or instantiating a generic kernel, must be built by \
                     `cargo oxide build`: rebuild the binary with it",
                )?
            }
        }
        if let Some(hint) = self.hint() {
            write!(f, "\n  likely cause: {}\n  fix: {}", hint.cause, hint.fix)?;
        }
        Ok(())
    }
}

impl fmt::Debug for DriverError {
    /// Same text as `Display`, so `.unwrap()` and `.expect()` show the cause and fix.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for DriverError {}

/// The `CUresult` a [`DriverError`] stands for, reached as `err.0`.
///
/// NVIDIA's cuda-oxide declares `DriverError(pub CUresult)`, so code written for it compares
/// `err.0` with a result code. Ours is an enum with more to say (the failed call, what we were
/// doing, the likely cause), so it dereferences to this one-field struct instead and `err.0`
/// reads the same: the driver's code for driver errors, the code a host-side error stands for
/// ([`DriverError::code`]), else `CUDA_ERROR_UNKNOWN`.
///
/// ```
/// use cuda_core::{DriverError, sys};
/// let err = DriverError::from_cuda(sys::CUresult::CUDA_ERROR_ILLEGAL_ADDRESS, "cuStreamSynchronize");
/// assert!(err.0 == sys::cudaError_enum_CUDA_ERROR_ILLEGAL_ADDRESS);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct ResultCode(pub CUresult);

impl Deref for DriverError {
    type Target = ResultCode;

    /// See [`ResultCode`]: lets `err.0` name the `CUresult`, as NVIDIA's tuple struct does.
    fn deref(&self) -> &ResultCode {
        let code = self.code().unwrap_or(CUresult::CUDA_ERROR_UNKNOWN as u32);
        let all = &crate::sys::CURESULTS;
        let known = all.iter().find(|r| **r as u32 == code);
        let result: &'static CUresult = known.unwrap_or(&CUresult::CUDA_ERROR_UNKNOWN);
        // SAFETY: `ResultCode` is `repr(transparent)` over `CUresult`, so a reference to one
        // is a valid reference to the other, for the same ('static) lifetime.
        unsafe { &*(result as *const CUresult).cast::<ResultCode>() }
    }
}

/// Turns the `CUresult` of a driver function called directly through [`crate::sys`] into a
/// `Result`.
///
/// ```no_run
/// use cuda_core::error::{DriverError, IntoResult};
///
/// fn device_count() -> Result<i32, DriverError> {
///     cuda_core::init(0)?;
///     let mut count = 0;
///     // SAFETY: the driver is initialised; cuDeviceGetCount writes one i32.
///     IntoResult::result(unsafe { cuda_core::sys::cuDeviceGetCount(&mut count) })?;
///     Ok(count)
/// }
/// ```
/// `CUresult` also has cudarc's own inherent `.result()`, which method lookup picks first; its
/// error converts into ours with `?`. Unlike NVIDIA's, there is no impl for a `(CUresult,
/// MaybeUninit<T>)` pair: it would let safe code call `assume_init` on a value the driver never
/// wrote (pair a success code with any `MaybeUninit`), so read the value after `.result()?`.
pub trait IntoResult<T> {
    /// `Ok` for `CUDA_SUCCESS`, else the [`DriverError`] for the code.
    fn result(self) -> Result<T, DriverError>;
}

impl IntoResult<()> for CUresult {
    fn result(self) -> Result<(), DriverError> {
        crate::driver::check(self, "a driver call")
    }
}

impl From<cudarc::driver::DriverError> for DriverError {
    /// cudarc's error (from `CUresult::result()` or cudarc's own wrappers) as ours.
    fn from(e: cudarc::driver::DriverError) -> DriverError {
        DriverError::from_cuda(e.0, "a driver call")
    }
}

impl From<oxide_contract::BundleError> for DriverError {
    fn from(e: oxide_contract::BundleError) -> DriverError {
        DriverError::Bundle { message: e.to_string() }
    }
}

impl From<oxide_contract::NoPayload> for DriverError {
    /// What the driver would say (`CUDA_ERROR_NO_BINARY_FOR_GPU`), with the GPU's arch, the
    /// bundle's and the `--arch` to rebuild with.
    fn from(e: oxide_contract::NoPayload) -> DriverError {
        DriverError::Bundle { message: format!("CUDA_ERROR_NO_BINARY_FOR_GPU: {e}") }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuda_errors_name_code_and_hint() {
        let e = DriverError::from_cuda(CUresult::CUDA_ERROR_INVALID_VALUE, "cuLaunchKernel")
            .context("launching kernel `vecadd`");
        assert_eq!(e.code(), Some(1));
        assert_eq!(e.name(), "CUDA_ERROR_INVALID_VALUE");
        let text = e.to_string();
        assert!(
            text.starts_with("CUDA_ERROR_INVALID_VALUE (code 1) from cuLaunchKernel while launching kernel `vecadd`: "),
            "{text}"
        );
        assert!(text.contains("likely cause: grid or block dimensions are zero or over the limits"), "{text}");
        assert!(text.contains("fix: check the LaunchConfig values; a block has at most 1024 threads"), "{text}");
        assert_eq!(format!("{e:?}"), text);
    }

    #[test]
    fn the_five_launch_errors_have_hints() {
        for (code, cause) in [
            (CUresult::CUDA_ERROR_INVALID_VALUE, "zero or over the limits"),
            (CUresult::CUDA_ERROR_NOT_FOUND, "entry name"),
            (CUresult::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "registers"),
            (CUresult::CUDA_ERROR_ILLEGAL_INSTRUCTION, "trapped"),
            (CUresult::CUDA_ERROR_NO_BINARY_FOR_GPU, "architecture"),
        ] {
            let e = DriverError::from_cuda(code, "cuLaunchKernel");
            let hint = e.hint().unwrap_or_else(|| panic!("no hint for {code:?}"));
            assert!(hint.cause.contains(cause), "{code:?}: {}", hint.cause);
            assert!(!e.to_string().contains("while"));
            assert!(!match &e {
                DriverError::Cuda { description, .. } => description.is_empty(),
                _ => true,
            });
        }
        assert!(DriverError::from_cuda(CUresult::CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc").hint().is_none());
        // A trap may come back as LAUNCH_FAILED: same hint as ILLEGAL_INSTRUCTION.
        let trap = DriverError::from_cuda(CUresult::CUDA_ERROR_LAUNCH_FAILED, "cuStreamSynchronize").to_string();
        assert!(trap.contains("likely cause: the kernel trapped") && trap.contains("cargo oxide debug"), "{trap}");
    }

    #[test]
    fn host_side_errors() {
        let e =
            DriverError::EntryNotFound { entry: "vecad".into(), known: Some(vec!["vecadd".into(), "scale".into()]) };
        assert_eq!(e.name(), "CUDA_ERROR_NOT_FOUND");
        assert_eq!(e.code(), Some(500));
        let text = e.to_string();
        assert!(
            text.contains("`vecad`") && text.contains("(it has: vecadd, scale)") && text.contains("fix:"),
            "{text}"
        );
        let e = DriverError::NoDevice { ordinal: 3, count: 2 };
        assert_eq!(e.to_string(), "no CUDA device 3: there are 2 devices (ordinals 0..=1)");
        let e = DriverError::NoDevice { ordinal: 1, count: 1 };
        assert_eq!(e.to_string(), "no CUDA device 1: there is 1 device (ordinals 0..=0)");
        let e = DriverError::LengthMismatch { operation: "copy_from_host", expected: 4, found: 5 };
        assert!(e.to_string().contains("copy_from_host") && e.code().is_none());
        assert!(DriverError::NotBuiltWithOxide.to_string().contains("run `cargo oxide build`"));
        let e: DriverError = oxide_contract::BundleError::BadMagic.into();
        assert!(e.to_string().contains("bad magic"));
    }
}
