//! `cargo oxide doctor`: one line per piece a build or a run needs, ✓ or ✗ with the exact fix.
use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;

use crate::tools::{self, COMPONENTS, CudaTools, PINNED_TOOLCHAIN, SETUP_FIX, Toolchain};

/// One checked item.
struct Check {
    ok: bool,
    /// Needed to build (a missing one makes doctor fail); otherwise only needed to run.
    needed_to_build: bool,
    what: String,
    detail: String,
}

fn found(what: &str, path: &Path, version: Option<String>) -> Check {
    let detail = match version {
        Some(v) => format!("{} ({v})", path.display()),
        None => path.display().to_string(),
    };
    Check { ok: true, needed_to_build: true, what: what.into(), detail }
}

fn missing(what: &str, fix: String) -> Check {
    Check { ok: false, needed_to_build: true, what: what.into(), detail: fix }
}

pub fn doctor() -> Result<ExitCode> {
    let mut checks = Vec::new();
    match Toolchain::find_with_rustup() {
        Ok(tc) => {
            checks.push(Check {
                ok: true,
                needed_to_build: true,
                what: format!("toolchain {PINNED_TOOLCHAIN}"),
                detail: tc.version.clone(),
            });
            for c in COMPONENTS {
                checks.push(if tc.has_component(c) {
                    Check {
                        ok: true,
                        needed_to_build: true,
                        what: format!("component {c}"),
                        detail: "installed".into(),
                    }
                } else {
                    missing(
                        &format!("component {c}"),
                        format!("run `rustup component add --toolchain {PINNED_TOOLCHAIN} {c}` (or {SETUP_FIX})"),
                    )
                });
            }
            for tool in ["llc", "opt", "llvm-link"] {
                let path = tc.llvm_bin_dir().join(tool);
                checks.push(if path.is_file() {
                    found(tool, &path, None)
                } else {
                    missing(tool, format!("component llvm-tools is missing; {SETUP_FIX}"))
                });
            }
        }
        Err(e) => checks.push(missing(&format!("toolchain {PINNED_TOOLCHAIN}"), format!("{e:#}"))),
    }
    checks.push(match tools::oxide_rustc() {
        Ok(path) => found("oxide-rustc", &path, None),
        Err(e) => missing("oxide-rustc", format!("{e:#}")),
    });

    let cuda = CudaTools::find();
    let cuda_fix = format!("{SETUP_FIX} (or set CUDA_HOME to a CUDA toolkit)");
    for (what, path, version_arg) in [
        ("ptxas", &cuda.ptxas, Some("--version")),
        ("fatbinary", &cuda.fatbinary, Some("--version")),
        ("libNVVM", &cuda.libnvvm, None),
        ("libdevice", &cuda.libdevice, None),
    ] {
        checks.push(match path {
            Some(p) => found(what, p, version_arg.and_then(|arg| tools::version_line(p, arg))),
            None => missing(what, cuda_fix.clone()),
        });
    }

    // CCCL only matters to CUDA C++ sources that include it: not needed to build Rust kernels.
    if let Some(nvcc) = &cuda.nvcc {
        let cccl = tools::cccl_for(nvcc);
        checks.push(Check {
            ok: cccl.is_some(),
            needed_to_build: false,
            what: "CCCL (CUB, Thrust) for nvcc".into(),
            detail: match cccl {
                Some(tools::Cccl::Toolkit(dir)) => format!("{} (nvcc's toolkit)", dir.display()),
                Some(tools::Cccl::Managed(dir)) => dir.display().to_string(),
                None => format!("not found: CUDA C++ sources cannot include <cub/…>; {SETUP_FIX}"),
            },
        });
    }

    // NCCL only matters to programs using cuda-nccl (collectives between GPUs).
    let nccl = crate::nccl::find();
    checks.push(Check {
        ok: nccl.is_some(),
        needed_to_build: false,
        what: "NCCL (collectives, cuda-nccl)".into(),
        detail: match &nccl {
            Some(crate::nccl::Found::Managed(lib)) => match crate::nccl::version(lib) {
                Some(v) => format!("{} ({v}; `cargo oxide run` puts it on LD_LIBRARY_PATH)", lib.display()),
                None => format!(
                    "{} does not load: remove {} and run `cargo oxide setup`",
                    lib.display(),
                    crate::nccl::managed_nccl_dir().display()
                ),
            },
            Some(crate::nccl::Found::System) => {
                let v = crate::nccl::version(Path::new(crate::nccl::NCCL_LINK_NAME));
                format!(
                    "{} on the library search path ({})",
                    crate::nccl::NCCL_LINK_NAME,
                    v.as_deref().unwrap_or("version unknown")
                )
            }
            None => format!("not found: only multi-GPU programs using cuda-nccl need it; {SETUP_FIX}"),
        },
    });

    let driver = crate::gpu::load_driver();
    checks.push(Check {
        ok: driver.is_ok(),
        needed_to_build: false,
        what: "CUDA driver (libcuda.so.1)".into(),
        detail: match &driver {
            Ok(_) => "loads".into(),
            Err(_) => "not found: install the NVIDIA driver to run kernels (building works without it)".into(),
        },
    });
    drop(driver);
    let gpu = crate::gpu::local_gpu();
    checks.push(Check {
        ok: gpu.is_some(),
        needed_to_build: false,
        what: "GPU".into(),
        detail: match &gpu {
            Some(g) => format!("{} ({})", g.name, g.arch_name()),
            None => "none found: running kernels needs an NVIDIA GPU (building works without one)".into(),
        },
    });

    let mut out = String::new();
    for c in &checks {
        let mark = if c.ok { "✓" } else { "✗" };
        out += &format!("{mark} {:<30} {}\n", c.what, c.detail);
    }
    let build_ok = checks.iter().all(|c| c.ok || !c.needed_to_build);
    out += if build_ok { "ready to build\n" } else { "not ready to build: fix the ✗ lines above\n" };
    crate::print_stdout(&out)?;
    Ok(if build_ok { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}
