//! The CUDA steps: `ptxas` → cubin per arch, `fatbinary` → one fatbin for all of them.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use oxide_contract::arch::Arch;
use oxide_contract::config::ToolPaths;
use oxide_contract::naming::files;

use super::tools::{ToolError, require, run};
use super::workdir::WorkDir;

/// `ptxas` → `<crate>.<arch>.cubin`; with `debug` (`cargo oxide debug`), `-G` keeps the SASS
/// debuggable in cuda-gdb.
pub fn ptxas(
    tools: &ToolPaths,
    work: &WorkDir,
    crate_name: &str,
    ptx: &Path,
    arch: Arch,
    debug: bool,
) -> Result<PathBuf, ToolError> {
    let ptxas = require(&tools.ptxas, "ptxas", "to assemble PTX into cubin")?;
    let cubin = work.path(&files::cubin(crate_name, arch));
    let sm = format!("-arch={arch}");
    let level = if debug { "-G" } else { "-O3" };
    run(ptxas, &[level.as_ref(), sm.as_ref(), ptx.as_os_str(), "-o".as_ref(), cubin.as_os_str()], ptx)?;
    Ok(cubin)
}

/// `fatbinary` over every cubin and the PTX of the newest arch (so newer GPUs can JIT the
/// kernels) → `<crate>.fatbin`.
pub fn fatbinary(
    tools: &ToolPaths,
    work: &WorkDir,
    crate_name: &str,
    cubins: &[(Arch, PathBuf)],
    ptx: &[(Arch, PathBuf)],
) -> Result<PathBuf, ToolError> {
    let fatbinary = require(&tools.fatbinary, "fatbinary", "to package several architectures")?;
    let fatbin = work.path(&files::fatbin(crate_name));
    let mut images: Vec<String> =
        cubins.iter().map(|(a, p)| format!("--image3=kind=elf,sm={},file={}", a.sm(), p.display())).collect();
    if let Some((a, p)) = ptx.iter().max_by_key(|(a, _)| a.sm()) {
        images.push(format!("--image3=kind=ptx,sm={},file={}", a.sm(), p.display()));
    }
    let create = format!("--create={}", fatbin.display());
    let mut args: Vec<&OsStr> = vec!["--64".as_ref(), create.as_ref()];
    args.extend(images.iter().map(|s| OsStr::new(s.as_str())));
    run(fatbinary, &args, &fatbin)?;
    Ok(fatbin)
}
