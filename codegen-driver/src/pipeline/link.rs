//! LTOIR and device linking: the optimised module → NVVM IR → LTOIR per arch (libNVVM), the
//! crate's CUDA C++ sources → LTOIR per arch (`nvcc -dlto -ltoir`), and both → one cubin and one
//! link-time-optimised PTX per arch (nvJitLink). The options are facts of `oxide_contract::link`.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use cuda_link::{Input, InputKind, NvJitLink, Nvvm};
use oxide_contract::arch::Arch;
use oxide_contract::config::{DeviceConfig, PackageSources, ToolPaths};
use oxide_contract::link::{self, LinkDebug, LinkInput, LinkOutput};
use oxide_contract::naming::files;
use oxide_contract::toolkit::CudaRelease;

use super::tools::{ToolError, read, require, run_nvcc};
use super::workdir::WorkDir;

fn link_error(what: String) -> impl FnOnce(cuda_link::LinkError) -> ToolError {
    move |e| ToolError::Link { what, error: e.to_string() }
}

/// libNVVM → `<crate>.<arch>.ltoir`.
pub fn ltoir(
    tools: &ToolPaths,
    work: &WorkDir,
    crate_name: &str,
    nvvm_ir: &str,
    arch: Arch,
    fmad: bool,
    debug: LinkDebug,
) -> Result<PathBuf, ToolError> {
    let lib = require(&tools.libnvvm, "libNVVM (libnvvm.so)", "to make LTOIR")?;
    let nvvm = Nvvm::open(lib).map_err(link_error("libNVVM".into()))?;
    let options = link::nvvm_ltoir_options(arch, fmad, debug);
    let bytes = nvvm
        .compile(crate_name, nvvm_ir.as_bytes(), &options)
        .map_err(link_error(format!("libNVVM could not make LTOIR of `{crate_name}` for {arch}")))?;
    let path = work.path(&files::ltoir(crate_name, arch));
    std::fs::write(&path, bytes).map_err(|e| ToolError::Io(path.clone(), e))?;
    Ok(path)
}

/// The package's link inputs for `arch`: each `.cu` compiled by `nvcc -dc -dlto -ltoir` to
/// `<crate>.<stem>.<arch>.ltoir`, every other file as it is; with the CUDA release that made
/// each (nvcc's for those it compiled, unknown for files the crate names).
pub fn cuda_sources(
    tools: &ToolPaths,
    work: &WorkDir,
    crate_name: &str,
    sources: &PackageSources,
    arch: Arch,
) -> Result<Vec<(PathBuf, Option<CudaRelease>)>, ToolError> {
    let mut out = Vec::new();
    for file in &sources.files {
        if LinkInput::of(file) != Some(LinkInput::CudaSource) {
            out.push((file.clone(), None));
            continue;
        }
        let nvcc = require(&tools.nvcc, "nvcc", "to compile the CUDA C++ sources named in Cargo.toml")?;
        let stem = file.file_stem().unwrap_or_default().to_string_lossy();
        let ltoir = work.path(&files::source_ltoir(crate_name, &stem, arch));
        let lto_arch = format!("-arch={}", link::lto_name(arch));
        let mut args: Vec<&OsStr> = vec!["-dc".as_ref(), "-dlto".as_ref(), "-ltoir".as_ref(), lto_arch.as_ref()];
        if let Some(cccl) = &tools.cccl_include {
            // `<cub/…>`, and `<cccl/cub/…>` as a CUDA 13 toolkit's include directory also allows.
            args.extend(["-isystem".as_ref(), cccl.as_os_str()]);
            if let Some(parent) = cccl.parent() {
                args.extend(["-isystem".as_ref(), parent.as_os_str()]);
            }
        }
        args.extend(sources.nvcc_flags.iter().map(OsStr::new));
        args.extend([file.as_os_str(), "-o".as_ref(), ltoir.as_os_str()]);
        run_nvcc(nvcc, &args, file)?;
        out.push((ltoir, tools.nvcc_release));
    }
    Ok(out)
}

/// nvJitLink: the crate's LTOIR and `inputs` → `<crate>.<arch>.cubin` and the link-time-optimised
/// `<crate>.<arch>.ptx`, with the config's tools, `--no-fmad` and debug level.
pub fn link(
    config: &DeviceConfig,
    work: &WorkDir,
    crate_name: &str,
    crate_ltoir: &Path,
    inputs: &[PathBuf],
    arch: Arch,
) -> Result<(PathBuf, PathBuf), ToolError> {
    let (tools, fmad, debug) = (&config.tools, config.fmad, config.debuginfo.link_debug());
    let lib = require(&tools.nvjitlink, "nvJitLink (libnvJitLink.so)", "to link CUDA C++ into the device code")?;
    let nvjitlink = NvJitLink::open(lib).map_err(link_error("nvJitLink".into()))?;
    let mut owned: Vec<(InputKind, String, Vec<u8>)> =
        vec![(InputKind::Ltoir, display(crate_ltoir), read(crate_ltoir)?)];
    for path in inputs {
        let kind = InputKind::of(path).ok_or_else(|| ToolError::Link {
            what: format!("linking {}", path.display()),
            error: format!("not a file nvJitLink takes; use one of {}", LinkInput::extensions()),
        })?;
        owned.push((kind, display(path), read(path)?));
    }
    let inputs: Vec<Input<'_>> = owned.iter().map(|(kind, name, bytes)| Input { kind: *kind, name, bytes }).collect();
    let what = || format!("nvJitLink could not link the device code of `{crate_name}` for {arch}");
    let cubin_bytes = nvjitlink
        .link(&link::nvjitlink_options(arch, fmad, LinkOutput::Cubin, debug), &inputs)
        .map_err(link_error(what()))?;
    let ptx_bytes = nvjitlink
        .link(&link::nvjitlink_options(arch, fmad, LinkOutput::Ptx, debug), &inputs)
        .map_err(link_error(what()))?;
    let cubin = work.path(&files::cubin(crate_name, arch));
    std::fs::write(&cubin, cubin_bytes).map_err(|e| ToolError::Io(cubin.clone(), e))?;
    let ptx = work.path(&files::ptx(crate_name, arch));
    std::fs::write(&ptx, ptx_bytes).map_err(|e| ToolError::Io(ptx.clone(), e))?;
    Ok((cubin, ptx))
}

fn display(path: &Path) -> String {
    path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| path.display().to_string())
}
