//! The external-tool steps: LLVM IR → (llvm-link libdevice) → opt → llc → PTX per arch; ptxas →
//! cubin; fatbinary → fatbin; then the manifest and the bundle bytes.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use oxide_format::bundle::{Payload, write_bundle};
use oxide_format::config::{Arch, DeviceConfig, Emit, files};
use oxide_format::manifest::{KernelInfo, MANIFEST_FORMAT_VERSION, Manifest, PayloadInfo, PayloadKind};
use oxide_format::progress::{ProgressEvent, Step};

use crate::bundle::DeviceOutput;

#[derive(Debug)]
pub enum ToolError {
    Io(PathBuf, std::io::Error),
    Missing { tool: &'static str, why: &'static str },
    Failed { tool: String, status: String, stderr: String, input: PathBuf },
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolError::Io(p, e) => write!(f, "{}: {e}", p.display()),
            ToolError::Missing { tool, why } => {
                write!(f, "{tool} is needed {why} but was not found; run `cargo oxide setup` (or `cargo oxide doctor` to see what is missing)")
            }
            ToolError::Failed { tool, status, stderr, input } => write!(
                f,
                "{tool} failed ({status}) on {}:\n{}\nthis is a bug in cuda-oxide's device compiler; the input is kept for the report",
                input.display(),
                stderr.trim_end()
            ),
        }
    }
}

/// How many `StepFinished` events a crate's device build reports after lowering.
pub fn step_count(config: &DeviceConfig) -> u32 {
    let emits = config.emits();
    let per_arch = 1 + emits.contains(&Emit::Cubin) as u32;
    1 + per_arch * config.archs.len() as u32 + emits.contains(&Emit::Fatbin) as u32 + 1
}

fn run(tool: &Path, args: &[&std::ffi::OsStr], input: &Path) -> Result<String, ToolError> {
    let out = Command::new(tool)
        .args(args)
        .output()
        .map_err(|e| ToolError::Io(tool.to_path_buf(), e))?;
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

fn version_line(tool: &Path) -> String {
    Command::new(tool)
        .arg("--version")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).lines().filter(|l| !l.trim().is_empty()).last().unwrap_or("").trim().to_string())
        .unwrap_or_default()
}

fn read(path: &Path) -> Result<Vec<u8>, ToolError> {
    std::fs::read(path).map_err(|e| ToolError::Io(path.to_path_buf(), e))
}

/// The whole device module after linking libdevice and `opt -O3`, as LLVM IR text.
pub struct Optimized {
    pub path: PathBuf,
    pub text: String,
    /// This compilation's private directory, where every tool reads and writes.
    work: PathBuf,
}

/// The private directory of this rustc process under `<artifact_dir>/<crate>/`. `cargo test`
/// compiles a crate twice at once (library and test harness), under one crate name: tools of one
/// must never read the other's files, so only finished files are published to the crate directory.
fn work_dir(config: &DeviceConfig, crate_name: &str) -> PathBuf {
    config.crate_dir(crate_name).join(format!(".work-{}", std::process::id()))
}

/// Copies a finished file of the work directory into the crate directory; the rename makes it
/// appear whole, whichever compilation finishes last.
fn publish(file: &Path, dir: &Path) -> Result<(), ToolError> {
    let name = file.file_name().unwrap_or_default().to_string_lossy().into_owned();
    let staged = dir.join(format!(".{name}.{}", std::process::id()));
    std::fs::copy(file, &staged).map_err(|e| ToolError::Io(staged.clone(), e))?;
    std::fs::rename(&staged, dir.join(&name)).map_err(|e| ToolError::Io(dir.join(&name), e))
}

/// Writes `<crate>.ll`, links libdevice when the module calls into it, and optimises once.
pub fn optimize(config: &DeviceConfig, crate_name: &str, ll: &str) -> Result<Optimized, ToolError> {
    let dir = work_dir(config, crate_name);
    std::fs::create_dir_all(&dir).map_err(|e| ToolError::Io(dir.clone(), e))?;
    let ll_path = dir.join(files::llvm_ir(crate_name));
    std::fs::write(&ll_path, ll).map_err(|e| ToolError::Io(ll_path.clone(), e))?;
    let tools = &config.tools;

    // libdevice supplies the math functions PTX has no instruction for.
    let linked = dir.join(format!("{crate_name}.linked.bc"));
    let mut link_args: Vec<&std::ffi::OsStr> = vec![ll_path.as_os_str()];
    if ll.contains("@__nv_") {
        let Some(libdevice) = &tools.libdevice else {
            return Err(ToolError::Missing { tool: "libdevice.10.bc", why: "for the math functions this crate's kernels call" });
        };
        link_args.extend(["--only-needed".as_ref(), "--internalize".as_ref(), libdevice.as_os_str()]);
    }
    link_args.extend(["-o".as_ref(), linked.as_os_str()]);
    run(&tools.llvm_link, &link_args, &ll_path)?;

    // Target-independent optimisation once, for the oldest arch; llc specialises per arch.
    let oldest = config.archs.iter().copied().min_by_key(|a| a.sm()).unwrap_or(config.archs[0]);
    let opt_ll = dir.join(format!("{crate_name}.opt.ll"));
    let triple = format!("-mtriple={}", crate::device::TRIPLE);
    let cpu = format!("-mcpu={oldest}");
    run(&tools.opt, &[triple.as_ref(), cpu.as_ref(), "-O3".as_ref(), "-S".as_ref(), linked.as_os_str(), "-o".as_ref(), opt_ll.as_os_str()], &linked)?;
    let _ = std::fs::remove_file(&linked);
    let text = std::fs::read_to_string(&opt_ll).map_err(|e| ToolError::Io(opt_ll.clone(), e))?;
    // The IR is published now, so it is there to read even if the build stops at an error below.
    let crate_dir = config.crate_dir(crate_name);
    publish(&ll_path, &crate_dir)?;
    publish(&opt_ll, &crate_dir)?;
    Ok(Optimized { path: opt_ll, text, work: dir })
}

impl Optimized {
    /// Drops the work directory of a build that stops here (its IR is published already).
    pub fn discard(self) {
        let _ = std::fs::remove_dir_all(&self.work);
    }
}

/// Names of functions still called or referenced in the optimised module (declarations aside).
pub fn still_referenced<'a>(optimized: &str, symbols: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let used: Vec<&str> = optimized.lines().filter(|l| !l.starts_with("declare ")).collect();
    symbols
        .filter(|sym| {
            let needle = format!("@{sym}");
            used.iter().any(|l| {
                l.match_indices(&needle).any(|(i, _)| {
                    let next = l[i + needle.len()..].chars().next();
                    !next.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$' || c == '.')
                })
            })
        })
        .collect()
}

pub fn build_device_artifacts(
    config: &DeviceConfig,
    crate_name: &str,
    optimized: &Optimized,
    kernels: Vec<KernelInfo>,
    progress: &dyn Fn(ProgressEvent),
) -> Result<DeviceOutput, ToolError> {
    let dir = optimized.work.clone();
    let tools = &config.tools;
    let step = |step: Step, arch: Option<Arch>, f: &mut dyn FnMut() -> Result<(), ToolError>| {
        let t = Instant::now();
        let arch = arch.map(|a| a.to_string());
        progress(ProgressEvent::StepStarted { crate_name: crate_name.into(), step, arch: arch.clone() });
        f()?;
        progress(ProgressEvent::StepFinished { crate_name: crate_name.into(), step, arch, millis: t.elapsed().as_millis() as u64 });
        Ok::<(), ToolError>(())
    };

    let emits = config.emits();
    let mut ptx_files = Vec::new();
    let mut cubin_files = Vec::new();
    for &arch in &config.archs {
        let cpu = format!("-mcpu={arch}");
        let (maj, min) = arch.min_ptx_isa();
        let isa = format!("-mattr=+ptx{maj}{min}");
        let ptx = dir.join(files::ptx(crate_name, arch));
        step(Step::Ptx, Some(arch), &mut || {
            // Fusion follows the `contract` flags the lowering put on the user's arithmetic.
            let contract = "-fp-contract=on";
            let input = optimized.path.as_os_str();
            run(&tools.llc, &["-O3".as_ref(), cpu.as_ref(), isa.as_ref(), contract.as_ref(), input, "-o".as_ref(), ptx.as_os_str()], &optimized.path)?;
            Ok(())
        })?;
        ptx_files.push((arch, ptx.clone()));
        if emits.contains(&Emit::Cubin) {
            let Some(ptxas) = &tools.ptxas else {
                return Err(ToolError::Missing { tool: "ptxas", why: "to assemble PTX into cubin" });
            };
            let cubin = dir.join(files::cubin(crate_name, arch));
            let sm = format!("-arch={arch}");
            step(Step::Cubin, Some(arch), &mut || {
                // `cargo oxide debug`: -G keeps the SASS debuggable in cuda-gdb.
                let level = if config.debug { "-G" } else { "-O3" };
                run(ptxas, &[level.as_ref(), sm.as_ref(), ptx.as_os_str(), "-o".as_ref(), cubin.as_os_str()], &ptx)?;
                Ok(())
            })?;
            cubin_files.push((arch, cubin));
        }
    }

    let mut fatbin_file = None;
    if emits.contains(&Emit::Fatbin) {
        let Some(fatbinary) = &tools.fatbinary else {
            return Err(ToolError::Missing { tool: "fatbinary", why: "to package several architectures" });
        };
        let fatbin = dir.join(files::fatbin(crate_name));
        let mut images: Vec<String> = cubin_files
            .iter()
            .map(|(a, p)| format!("--image3=kind=elf,sm={},file={}", a.sm(), p.display()))
            .collect();
        // PTX of the newest arch lets newer GPUs JIT the kernels.
        if let Some((a, p)) = ptx_files.iter().max_by_key(|(a, _)| a.sm()) {
            images.push(format!("--image3=kind=ptx,sm={},file={}", a.sm(), p.display()));
        }
        let create = format!("--create={}", fatbin.display());
        step(Step::Fatbin, None, &mut || {
            let mut args: Vec<&std::ffi::OsStr> = vec!["--64".as_ref(), create.as_ref()];
            args.extend(images.iter().map(|s| std::ffi::OsStr::new(s.as_str())));
            run(fatbinary, &args, &fatbin)?;
            Ok(())
        })?;
        fatbin_file = Some(fatbin);
    }

    // Payloads: exact cubins first, then the fatbin, then PTX for JIT (see Bundle::select_payload).
    let mut owned: Vec<(PayloadKind, Arch, PathBuf, Vec<u8>)> = Vec::new();
    for (a, p) in &cubin_files {
        owned.push((PayloadKind::Cubin, *a, p.clone(), read(p)?));
    }
    if let Some(p) = &fatbin_file {
        let lowest = config.archs.iter().copied().min_by_key(|a| a.sm()).unwrap_or(config.archs[0]);
        owned.push((PayloadKind::Fatbin, lowest, p.clone(), read(p)?));
    }
    for (a, p) in &ptx_files {
        owned.push((PayloadKind::Ptx, *a, p.clone(), read(p)?));
    }

    let mut tool_versions = BTreeMap::new();
    tool_versions.insert("llc".to_string(), version_line(&tools.llc));
    if let Some(ptxas) = &tools.ptxas {
        tool_versions.insert("ptxas".to_string(), version_line(ptxas));
    }
    let manifest = Manifest {
        format_version: MANIFEST_FORMAT_VERSION,
        crate_name: crate_name.to_string(),
        kernels,
        payloads: owned
            .iter()
            .map(|(kind, arch, path, bytes)| PayloadInfo {
                arch: arch.to_string(),
                kind: *kind,
                file: path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
                sha256: oxide_format::sha256_hex(bytes),
                bytes: bytes.len() as u64,
            })
            .collect(),
        tools: tool_versions,
    };
    let mut bundle = Vec::new();
    step(Step::Bundle, None, &mut || {
        let payloads: Vec<Payload<'_>> =
            owned.iter().map(|(kind, arch, _, bytes)| Payload { kind: *kind, sm: arch.code(), bytes }).collect();
        bundle = write_bundle(&manifest, &payloads);
        let path = dir.join(files::MANIFEST);
        let json = serde_json::to_string_pretty(&manifest).unwrap_or_default();
        std::fs::write(&path, json).map_err(|e| ToolError::Io(path, e))
    })?;
    // Payloads first, the manifest that names them last; then the work directory goes.
    let crate_dir = config.crate_dir(crate_name);
    for (_, _, path, _) in &owned {
        publish(path, &crate_dir)?;
    }
    publish(&dir.join(files::MANIFEST), &crate_dir)?;
    let _ = std::fs::remove_dir_all(&dir);
    Ok(DeviceOutput { crate_name: crate_name.to_string(), bundle })
}

#[cfg(test)]
mod tests {
    use super::still_referenced;

    #[test]
    fn references_survive_only_outside_declarations() {
        let module = "declare void @gone(i32)\ndeclare void @kept()\ndefine void @k() {\n  call void @kept()\n  call void @kept2()\n  ret void\n}\n";
        let names = ["gone", "kept", "kep"];
        assert_eq!(still_referenced(module, names.iter().copied()), vec!["kept"]);
    }
}
