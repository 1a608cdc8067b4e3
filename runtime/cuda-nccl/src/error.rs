//! `NcclError`: what went wrong in a collective, said with the fix: NCCL missing, an NCCL call
//! failing (with NCCL's own last error), arguments that do not fit, or a CUDA driver error.

use std::fmt;

use cuda_core::DriverError;
use cudarc::nccl::sys::ncclResult_t;

/// An error of this crate.
#[derive(Clone)]
#[non_exhaustive]
pub enum NcclError {
    /// The NCCL library could not be loaded; `fix` says where it was looked for and what to do.
    NotLoaded {
        /// Why, and what to do.
        fix: String,
    },
    /// An NCCL call returned an error.
    Nccl {
        /// The NCCL function, e.g. `ncclAllReduce`.
        call: &'static str,
        /// The `ncclResult_t` name, e.g. `ncclInvalidArgument`.
        name: String,
        /// NCCL's description of the code (`ncclGetErrorString`).
        description: String,
        /// NCCL's message about the last failure (`ncclGetLastError`), when it has one.
        detail: Option<String>,
    },
    /// Arguments that do not fit the collective: lengths, ranks, devices or streams.
    Invalid {
        /// What is wrong, and the fix.
        message: String,
    },
    /// A CUDA driver error (opening devices, streams).
    Driver(DriverError),
}

impl NcclError {
    pub(crate) fn invalid(message: impl Into<String>) -> NcclError {
        NcclError::Invalid { message: message.into() }
    }

    /// The `ncclResult_t` of an NCCL error (`None` for the others).
    pub fn result(&self) -> Option<&str> {
        match self {
            NcclError::Nccl { name, .. } => Some(name),
            _ => None,
        }
    }

    pub(crate) fn from_result(
        result: ncclResult_t,
        call: &'static str,
        description: String,
        detail: Option<String>,
    ) -> Self {
        NcclError::Nccl { call, name: format!("{result:?}"), description, detail }
    }
}

impl From<DriverError> for NcclError {
    fn from(e: DriverError) -> NcclError {
        NcclError::Driver(e)
    }
}

impl fmt::Display for NcclError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NcclError::NotLoaded { fix } => write!(f, "NCCL could not be loaded: {fix}"),
            NcclError::Nccl { call, name, description, detail } => {
                write!(f, "{name} from {call}: {description}")?;
                match detail {
                    Some(d) if !d.is_empty() => write!(f, " ({d})"),
                    _ => Ok(()),
                }
            }
            NcclError::Invalid { message } => f.write_str(message),
            NcclError::Driver(e) => write!(f, "{e}"),
        }
    }
}

impl fmt::Debug for NcclError {
    /// Same text as `Display`, so `.unwrap()` and `.expect()` show the fix.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for NcclError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            NcclError::Driver(e) => Some(e),
            _ => None,
        }
    }
}
