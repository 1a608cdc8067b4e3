//! `cargo oxide sanitize` and `cargo oxide debug`: the built binary under compute-sanitizer or
//! cuda-gdb. Both find their tool before building, so a missing tool costs no build.
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, bail};

use crate::build::run_under;
use crate::cli::{DebugArgs, SanitizeArgs};
use crate::tools::cuda_roots;

/// Builds, then runs the binary under `compute-sanitizer --tool <tool>`; a reported error fails.
pub fn sanitize(args: &SanitizeArgs) -> Result<ExitCode> {
    let sanitizer = find_cuda_tool("compute-sanitizer", &["bin", "compute-sanitizer"])?;
    let wrapper: Vec<OsString> =
        vec![sanitizer.into(), "--tool".into(), args.tool.clone().into(), "--error-exitcode".into(), "1".into()];
    run_under(&args.run, Some(wrapper))
}

/// Builds with full device debug information (variables, no device optimisation, `ptxas -G`),
/// then starts `cuda-gdb --args <binary> <args>`; with `--batch FILE`, `cuda-gdb -batch -x FILE`.
pub fn debug(args: &DebugArgs) -> Result<ExitCode> {
    // The cheap argument check first, so a typo is reported before any tool is looked for.
    if let Some(script) = args.batch.as_ref().filter(|s| !s.is_file()) {
        bail!(
            "--batch {}: no such file; give a file of cuda-gdb commands (break, run, next, print, bt)",
            script.display()
        );
    }
    let gdb = find_cuda_tool("cuda-gdb", &["bin"])?;
    let mut wrapper: Vec<OsString> = vec![gdb.into()];
    if let Some(script) = &args.batch {
        wrapper.extend(["-batch".into(), "-x".into(), script.clone().into()]);
    }
    wrapper.push("--args".into());
    let mut run = args.run.clone();
    run.build.device_debug = Some(oxide_contract::config::DeviceDebugInfo::Full);
    run_under(&run, Some(wrapper))
}

/// A tool of the CUDA toolkit (not part of the wheels that `cargo oxide setup` installs).
pub(crate) fn find_cuda_tool(name: &str, subdirs: &[&str]) -> Result<PathBuf> {
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
