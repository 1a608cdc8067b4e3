//! `cargo oxide sanitize` and `cargo oxide debug`: the built binary under compute-sanitizer or cuda-gdb.
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, bail};

use crate::build::run_under;
use crate::cli::{RunArgs, SanitizeArgs};
use crate::tools::cuda_roots;

/// Builds, then runs the binary under `compute-sanitizer --tool <tool>`; a reported error fails.
pub fn sanitize(args: &SanitizeArgs) -> Result<ExitCode> {
    let sanitizer = find_cuda_tool("compute-sanitizer", &["bin", "compute-sanitizer"])?;
    let wrapper: Vec<OsString> =
        vec![sanitizer.into(), "--tool".into(), args.tool.clone().into(), "--error-exitcode".into(), "1".into()];
    run_under(&args.run, Some(wrapper))
}

/// Builds with device debug info (`ptxas -G`), then starts `cuda-gdb --args <binary> <args>`.
pub fn debug(args: &RunArgs) -> Result<ExitCode> {
    let gdb = find_cuda_tool("cuda-gdb", &["bin"])?;
    let mut args = args.clone();
    args.build.device_debug = Some(oxide_contract::config::DeviceDebugInfo::Full);
    run_under(&args, Some(vec![gdb.into(), "--args".into()]))
}

/// A tool of the CUDA toolkit (not part of the wheels that `cargo oxide setup` installs).
fn find_cuda_tool(name: &str, subdirs: &[&str]) -> Result<PathBuf> {
    if let Ok(path) = which::which(name) {
        return Ok(path);
    }
    for root in cuda_roots() {
        for dir in subdirs {
            let candidate = root.join(dir).join(name);
            if candidate.is_file() {
                return Ok(candidate);
            }
        }
    }
    bail!(
        "`{name}` not found (looked on PATH, in CUDA_HOME and /usr/local/cuda); it ships with the CUDA \
         toolkit, not with the tools `cargo oxide setup` installs: install the toolkit or set CUDA_HOME"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_tool_is_one_line_with_the_fix() {
        let err = find_cuda_tool("no-such-cuda-tool", &["bin"]).unwrap_err().to_string();
        assert!(err.contains("`no-such-cuda-tool` not found"));
        assert!(err.contains("CUDA_HOME"));
        assert!(!err.contains('\n'));
    }
}
