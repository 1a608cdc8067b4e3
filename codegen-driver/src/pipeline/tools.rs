//! Running the external tools of the device build (llvm-link, opt, llc, ptxas, fatbinary) and
//! what their failures mean to the user.

use std::ffi::OsStr;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(Debug)]
pub enum ToolError {
    Io(PathBuf, std::io::Error),
    Missing {
        tool: &'static str,
        why: &'static str,
    },
    Failed {
        tool: String,
        status: String,
        stderr: String,
        input: PathBuf,
    },
    /// `nvcc` rejected one of the crate's CUDA C++ sources: the user's code, not ours.
    CudaSource {
        file: PathBuf,
        stderr: String,
    },
    /// A pass after `opt` made IR that `opt -passes=verify` rejects (`passes.rs`).
    InvalidPass {
        pass: String,
        stderr: String,
        input: PathBuf,
    },
    /// libNVVM or nvJitLink failed; `what` says on what.
    Link {
        what: String,
        error: String,
    },
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolError::Io(p, e) => write!(f, "{}: {e}", p.display()),
            ToolError::Missing { tool, why } => {
                write!(
                    f,
                    "{tool} is needed {why} but was not found; run `cargo oxide setup` (or `cargo oxide doctor` to see what is missing)"
                )
            }
            ToolError::Failed { tool, status, stderr, input } => write!(
                f,
                "{tool} failed ({status}) on {}:\n{}\nthis is a bug in cuda-oxide's device compiler; the input is kept for the report",
                input.display(),
                stderr.trim_end()
            ),
            ToolError::CudaSource { file, stderr } => {
                write!(f, "nvcc could not compile {}:\n{}", file.display(), stderr.trim_end())?;
                if misses_cccl(stderr) {
                    write!(
                        f,
                        "\nCCCL's headers (cub/, thrust/, cuda/std/) were not found: `cargo oxide setup` installs them \
                         (or set CUDA_HOME to a CUDA toolkit that has them)"
                    )?;
                }
                Ok(())
            }
            ToolError::InvalidPass { pass, stderr, input } => write!(
                f,
                "the device compiler's pass `{pass}` made invalid LLVM IR ({}):\n{}\nthis is a bug in cuda-oxide's device compiler; the input is kept for the report",
                input.display(),
                stderr.trim_end()
            ),
            ToolError::Link { what, error } => write!(f, "{what}: {error}"),
        }
    }
}

/// Whether nvcc failed for want of a CCCL header.
fn misses_cccl(stderr: &str) -> bool {
    stderr.lines().any(|line| {
        let missing = line.contains("No such file or directory") || line.contains("cannot open source file");
        missing && ["cub/", "thrust/", "cuda/"].iter().any(|dir| line.contains(dir))
    })
}

/// Runs `tool args…` on `input` (named in the error if it fails); returns its stdout.
pub fn run(tool: &Path, args: &[&OsStr], input: &Path) -> Result<String, ToolError> {
    let out = Command::new(tool).args(args).output().map_err(|e| ToolError::Io(tool.to_path_buf(), e))?;
    if !out.status.success() {
        return Err(ToolError::Failed {
            tool: tool.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
            status: out.status.to_string(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            input: input.to_path_buf(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Runs `nvcc args…` on the user's CUDA C++ `source`; a failure is the user's to fix.
pub fn run_nvcc(nvcc: &Path, args: &[&OsStr], source: &Path) -> Result<(), ToolError> {
    let out = Command::new(nvcc).args(args).output().map_err(|e| ToolError::Io(nvcc.to_path_buf(), e))?;
    if !out.status.success() {
        let mut stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        stderr.push_str(&String::from_utf8_lossy(&out.stdout));
        return Err(ToolError::CudaSource { file: source.to_path_buf(), stderr });
    }
    Ok(())
}

pub fn read(path: &Path) -> Result<Vec<u8>, ToolError> {
    std::fs::read(path).map_err(|e| ToolError::Io(path.to_path_buf(), e))
}

/// `tool` if the config found it, else the error saying what it is needed for.
pub fn require<'a>(tool: &'a Option<PathBuf>, name: &'static str, why: &'static str) -> Result<&'a Path, ToolError> {
    tool.as_deref().ok_or(ToolError::Missing { tool: name, why })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_cub_header_points_at_setup() {
        let err = ToolError::CudaSource {
            file: "src/ops.cu".into(),
            stderr: "src/ops.cu:1:10: fatal error: cub/block/block_reduce.cuh: No such file or directory".into(),
        };
        assert!(err.to_string().contains("`cargo oxide setup` installs them"), "{err}");
        let other = ToolError::CudaSource { file: "src/ops.cu".into(), stderr: "error: expected a \";\"".into() };
        assert!(!other.to_string().contains("CCCL"), "{other}");
    }
}
