//! The CUDA steps: `ptxas` → cubin per arch, `fatbinary` → one fatbin for all of them.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use oxide_contract::arch::Arch;
use oxide_contract::config::{DeviceDebugInfo, ToolPaths};
use oxide_contract::naming::files;

use super::tools::{ToolError, require, run};
use super::workdir::WorkDir;

/// `ptxas` → `<crate>.<arch>.cubin`.
pub fn ptxas(
    tools: &ToolPaths,
    work: &WorkDir,
    crate_name: &str,
    ptx: &Path,
    arch: Arch,
    debuginfo: DeviceDebugInfo,
) -> Result<PathBuf, ToolError> {
    let ptxas = require(&tools.ptxas, "ptxas", "to assemble PTX into cubin")?;
    let cubin = work.path(&files::cubin(crate_name, arch));
    let sm = format!("-arch={arch}");
    let mut args: Vec<&OsStr> = ptxas_flags(debuginfo).iter().map(OsStr::new).collect();
    args.extend([sm.as_ref(), ptx.as_os_str(), "-o".as_ref(), cubin.as_os_str()]);
    run(ptxas, &args, ptx)?;
    Ok(cubin)
}

/// `ptxas`'s debug and optimisation flags (clang's for CUDA, which match nvcc's): line info
/// keeps `-O3` (nvcc's `-lineinfo`); full debug information is `--device-debug` without
/// optimisation, with every basic block and return kept for breakpoints (nvcc's `-G`).
pub fn ptxas_flags(debuginfo: DeviceDebugInfo) -> &'static [&'static str] {
    match debuginfo {
        DeviceDebugInfo::None => &["-O3"],
        DeviceDebugInfo::Lines => &["-O3", "--generate-line-info"],
        DeviceDebugInfo::Full => &["--device-debug", "--dont-merge-basicblocks", "--return-at-end"],
    }
}

/// `fatbinary` over every cubin and the PTX of the newest arch (so newer GPUs can JIT the
/// kernels) → `<crate>.fatbin`. Arch-specific images are labelled as such (`sm=90a`), and the
/// PTX is the newest portable one when there is one: `sm_90a` PTX cannot be JIT-compiled for a
/// later GPU.
pub fn fatbinary(
    tools: &ToolPaths,
    work: &WorkDir,
    crate_name: &str,
    cubins: &[(Arch, PathBuf)],
    ptx: &[(Arch, PathBuf)],
) -> Result<PathBuf, ToolError> {
    let fatbinary = require(&tools.fatbinary, "fatbinary", "to package several architectures")?;
    let fatbin = work.path(&files::fatbin(crate_name));
    // `sm_90a` → `90a`: fatbinary's name for the arch.
    let sm = |a: &Arch| a.to_string().trim_start_matches("sm_").to_string();
    let mut images: Vec<String> =
        cubins.iter().map(|(a, p)| format!("--image3=kind=elf,sm={},file={}", sm(a), p.display())).collect();
    let newest = ptx.iter().filter(|(a, _)| !a.is_arch_specific()).max_by_key(|(a, _)| a.sm());
    if let Some((a, p)) = newest.or_else(|| ptx.iter().max_by_key(|(a, _)| a.sm())) {
        images.push(format!("--image3=kind=ptx,sm={},file={}", sm(a), p.display()));
    }
    let create = format!("--create={}", fatbin.display());
    let mut args: Vec<&OsStr> = vec!["--64".as_ref(), create.as_ref()];
    args.extend(images.iter().map(|s| OsStr::new(s.as_str())));
    run(fatbinary, &args, &fatbin)?;
    Ok(fatbin)
}
