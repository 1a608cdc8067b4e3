//! `cargo oxide build` and `cargo oxide run`: `cargo build` with `oxide-rustc` as the rustc wrapper.
use std::io::{BufRead, BufReader, IsTerminal};
use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};

use anyhow::{Context, Result, anyhow, bail};
use cargo_metadata::{Artifact, Message};
use oxide_contract::arch::Arch;
use oxide_contract::config::{CONFIG_ENV, DeviceConfig, Emit, PackageSources};
use oxide_contract::manifest::Manifest;
use oxide_contract::naming;

use crate::cli::{BuildArgs, RunArgs};
use crate::progress::{Progress, Tail};
use crate::project::Project;
use crate::tools::{self, Tools};

/// Architecture used when `--arch` is not given and no local GPU is found.
pub const FALLBACK_ARCH: &str = "sm_90";

/// What a successful build produced.
pub struct Built {
    /// Artifacts of the workspace's own packages (not of dependencies), in build order.
    pub artifacts: Vec<Artifact>,
    /// The manifest of every bundle the built files embed, by artifact folder.
    pub manifests: std::collections::BTreeMap<String, Manifest>,
    /// The `<crate>.ptx` files written for loading by file name (see [`crate::ptx_file`]).
    pub ptx_files: Vec<crate::ptx_file::PtxFile>,
    /// Python extension modules placed under their import names (see [`crate::python`]).
    pub python_modules: Vec<crate::python::PythonModule>,
}

/// Parses `--arch`; the error is one line with the known list and an example.
pub fn parse_archs(text: &str) -> Result<Vec<Arch>> {
    Arch::parse_list(text).map_err(|e| anyhow!("{e}; example: `cargo oxide build --arch sm_80,sm_90`"))
}

/// `--arch`, or the local GPU's arch, or [`FALLBACK_ARCH`]; says which default was chosen.
fn choose_archs(args: &BuildArgs) -> Result<Vec<Arch>> {
    if let Some(text) = &args.arch {
        if text.split(',').any(|a| a.trim() == NATIVE_ARCH) {
            return native_archs(text);
        }
        return parse_archs(text);
    }
    let (arch, why) = match crate::gpu::local_gpu_this_boot() {
        Some(gpu) => match Arch::parse(&gpu.arch_name()) {
            Ok(arch) => (arch, format!("the local GPU ({}) is {}", gpu.name, gpu.arch_name())),
            Err(_) => (
                Arch::parse(FALLBACK_ARCH)?,
                format!("the local GPU ({}, {}) is not a supported target", gpu.name, gpu.arch_name()),
            ),
        },
        None => (Arch::parse(FALLBACK_ARCH)?, "no local GPU found".to_string()),
    };
    if !args.quiet {
        eprintln!("{:>12} no --arch given, building for {arch}: {why}", "Note");
    }
    Ok(vec![arch])
}

/// `--arch native`: the arch of the GPU of this machine.
pub const NATIVE_ARCH: &str = "native";

/// `--arch` with `native` replaced by the local GPU's arch; an error where there is no GPU or
/// its arch is not a target.
fn native_archs(text: &str) -> Result<Vec<Arch>> {
    let gpu = crate::gpu::local_gpu().ok_or_else(|| {
        anyhow!(
            "--arch native: no GPU found on this machine (nvidia-smi and the CUDA driver found none); \
             name the target instead, e.g. `--arch sm_90`"
        )
    })?;
    let native = gpu.arch_name();
    Arch::parse(&native).map_err(|e| anyhow!("--arch native: the local GPU ({}) is {native}: {e}", gpu.name))?;
    let replaced: Vec<String> =
        text.split(',').map(|a| if a.trim() == NATIVE_ARCH { native.clone() } else { a.trim().to_string() }).collect();
    let mut archs = parse_archs(&replaced.join(","))?;
    archs.dedup();
    Ok(archs)
}

/// The CUDA C++ sources each workspace package names in `[package.metadata.cuda-oxide]`
/// (`cuda-sources`, `nvcc-flags`; docs/interop.md).
fn cuda_sources(project: &Project) -> Result<Vec<PackageSources>> {
    use oxide_contract::link::{CUDA_SOURCES_KEY, LinkInput, METADATA_TABLE, NVCC_FLAGS_KEY};
    let mut out = Vec::new();
    for package in project.metadata.workspace_packages() {
        let Some(table) = package.metadata.get(METADATA_TABLE) else { continue };
        let manifest = package.manifest_path.as_std_path();
        let dir = manifest.parent().unwrap_or(std::path::Path::new(".")).to_path_buf();
        let strings = |key: &str| -> Result<Vec<String>> {
            match table.get(key) {
                None => Ok(Vec::new()),
                Some(v) => serde_json::from_value(v.clone()).map_err(|_| {
                    anyhow!(
                        "{}: `package.metadata.{METADATA_TABLE}.{key}` must be a list of strings, e.g. {key} = [\"src/ops.cu\"]",
                        manifest.display()
                    )
                }),
            }
        };
        let mut files = Vec::new();
        for rel in strings(CUDA_SOURCES_KEY)? {
            let path = dir.join(&rel);
            if LinkInput::of(&path).is_none() {
                bail!(
                    "{}: `{rel}` in {CUDA_SOURCES_KEY} is not a file cuda-oxide can link; use one of {}",
                    manifest.display(),
                    LinkInput::extensions()
                );
            }
            if !path.is_file() {
                bail!("{}: `{rel}` in {CUDA_SOURCES_KEY} does not exist ({})", manifest.display(), path.display());
            }
            files.push(path);
        }
        if files.is_empty() {
            continue;
        }
        let lib_crate = package
            .targets
            .iter()
            .find(|t| t.is_lib() || t.is_rlib() || t.is_cdylib() || t.is_dylib())
            .map(|t| t.name.replace('-', "_"));
        out.push(PackageSources { manifest_dir: dir, lib_crate, files, nvcc_flags: strings(NVCC_FLAGS_KEY)? });
    }
    Ok(out)
}

/// Size and modification time of `oxide-rustc`: a rebuilt compiler changes the config, which is
/// an env dependency of every crate with kernels, so cargo recompiles their device code.
fn compiler_id(rustc_wrapper: &std::path::Path) -> String {
    let Ok(meta) = std::fs::metadata(rustc_wrapper) else { return String::new() };
    let mtime =
        meta.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).map_or(0, |d| d.as_nanos());
    format!("{}:{mtime}", meta.len())
}

/// The device configuration for `oxide-rustc`, with every tool it will run checked to exist.
fn device_config(
    args: &BuildArgs,
    archs: Vec<Arch>,
    emit: Vec<Emit>,
    artifact_dir: PathBuf,
    tools: &Tools,
    rustc_wrapper: &std::path::Path,
    cuda_sources: Vec<PackageSources>,
) -> Result<DeviceConfig> {
    let mut config = DeviceConfig {
        compiler: compiler_id(rustc_wrapper),
        archs,
        emit,
        fmad: !args.no_fmad,
        fast_math: args.fast_math,
        debuginfo: args.device_debug.unwrap_or_default(),
        progress_file: Some(artifact_dir.join("progress.jsonl")),
        artifact_dir,
        tools: Default::default(),
        cuda_sources,
    };
    config.tools = tools.require(&config.emits())?;
    if !config.cuda_sources.is_empty() {
        tools.require_linking()?;
    }
    if config.emits().contains(&Emit::Ltoir) {
        // Recorded with each LTOIR payload: the loader links it only with an nvJitLink as new.
        config.tools.libnvvm_release = tools.cuda.libnvvm.as_deref().and_then(tools::cuda_release);
        if !config.cuda_sources.is_empty() {
            config.tools.nvcc_release = tools.cuda.nvcc.as_deref().and_then(tools::cuda_release);
        }
    }
    Ok(config)
}

/// Everything a cargo invocation through `oxide-rustc` needs.
struct Prepared {
    cmd: Command,
    project: Project,
    config: DeviceConfig,
}

/// Checks the arguments and tools, and sets up `cargo <subcommand>` with the device config.
fn prepare(args: &BuildArgs, subcommand: &str) -> Result<Prepared> {
    // Cheap argument checks come first, so a typo is reported before any tool is looked for.
    let emit = match &args.emit {
        Some(text) => Emit::parse_list(text).map_err(|e| anyhow!("{e}; example: --emit ptx,cubin,fatbin"))?,
        None => Vec::new(),
    };
    let archs = choose_archs(args)?;
    let tools = Tools::find()?;
    let rustc_wrapper = tools::oxide_rustc()?;
    let project = Project::load_for_build(args, &tools.toolchain)?;
    let oxide_dir = project.oxide_dir();
    let device_dir = naming::device_artifact_dir(&oxide_dir, args.profile_name());
    let sources = cuda_sources(&project)?;
    let config = device_config(args, archs, emit, device_dir.clone(), &tools, &rustc_wrapper, sources)?;
    std::fs::create_dir_all(&device_dir).with_context(|| format!("could not create {}", device_dir.display()))?;

    let mut cmd = Command::new(tools.toolchain.cargo());
    cmd.arg(subcommand).arg("--target-dir").arg(&oxide_dir);
    if std::io::stderr().is_terminal() {
        cmd.arg("--color=always");
    }
    add_cargo_args(&mut cmd, args);
    cmd.env("RUSTC_WRAPPER", &rustc_wrapper)
        .env("RUSTC", tools.toolchain.rustc())
        .env("RUSTUP_TOOLCHAIN", tools.toolchain.rustup_name())
        .env(CONFIG_ENV, config.to_json())
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .env_remove("CARGO_BUILD_RUSTC_WRAPPER");
    Ok(Prepared { cmd, project, config })
}

/// Builds as `cargo oxide build` does and prints the summary.
pub fn build(args: &BuildArgs) -> Result<Built> {
    let Prepared { mut cmd, project, config } = prepare(args, "build")?;
    cmd.arg("--message-format=json-render-diagnostics").stdout(Stdio::piped()).stderr(Stdio::piped());

    let progress = Progress::new(project.progress_length(args.package.as_deref()), args.quiet);
    let tail = config.progress_file.clone().map(|path| Tail::start(path, progress.clone()));
    let result = run_cargo(cmd, &project, &progress);
    if let Some(tail) = tail {
        tail.stop();
    }
    progress.finish();
    let artifacts = result?;
    // The artifact folders show exactly what the built files embed (see `artifacts`).
    let files: Vec<PathBuf> =
        artifacts.iter().flat_map(|a| a.filenames.iter().map(|f| f.clone().into_std_path_buf())).collect();
    let manifests = crate::artifacts::sync_if_changed(&files, &config.artifact_dir)?;
    let python_modules = crate::python::place_modules(&artifacts, &project.metadata)?;
    let mut built = Built { artifacts, manifests, ptx_files: Vec::new(), python_modules };
    let beside_sources = crate::ptx_file::beside_sources(&project, args.ptx_beside_sources)?;
    let ptx_dir = naming::by_name_ptx_dir(&project.oxide_dir(), args.profile_name());
    let written = crate::ptx_file::write_all(&built, &config.artifact_dir, &ptx_dir, &beside_sources)?;
    for warning in &written.warnings {
        eprintln!("warning: {warning}");
    }
    built.ptx_files = written.files;
    if !args.quiet {
        crate::summary::print(&built, &config);
    }
    Ok(built)
}

/// Runs cargo, relaying its stderr above the bars and reading its JSON messages from stdout;
/// returns the artifacts of the workspace's own packages.
fn run_cargo(mut cmd: Command, project: &Project, progress: &Progress) -> Result<Vec<Artifact>> {
    let mut child = cmd.spawn().context("could not run the pinned toolchain's cargo")?;
    let stderr = child.stderr.take().context("cargo's stderr was not captured")?;
    let err_progress = progress.clone();
    let err_thread = std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            err_progress.println(&line);
        }
    });

    let mut artifacts = Vec::new();
    let mut crates = 0;
    let stdout = child.stdout.take().context("cargo's stdout was not captured")?;
    for message in Message::parse_stream(BufReader::new(stdout)) {
        match message {
            Ok(Message::CompilerArtifact(artifact)) => {
                crates += 1;
                progress.crate_done(&artifact.target.name);
                if project.is_member(&artifact.package_id) {
                    artifacts.push(artifact);
                }
            }
            Ok(Message::TextLine(line)) => progress.println(&line),
            Ok(_) => {}
            Err(e) => progress.println(&format!("warning: unreadable cargo output: {e}")),
        }
    }
    let status = child.wait().context("waiting for cargo failed")?;
    let _ = err_thread.join();
    if !status.success() {
        bail!("build failed (cargo's errors are above)");
    }
    project.remember_crates(crates);
    Ok(artifacts)
}

fn add_cargo_args(cmd: &mut Command, args: &BuildArgs) {
    if args.release {
        cmd.arg("--release");
    }
    if let Some(profile) = &args.profile {
        cmd.args(["--profile", profile]);
    }
    if let Some(p) = &args.package {
        cmd.args(["--package", p]);
    }
    if let Some(b) = &args.bin {
        cmd.args(["--bin", b]);
    }
    if let Some(e) = &args.example {
        cmd.args(["--example", e]);
    }
    if !args.features.is_empty() {
        cmd.arg("--features").arg(args.features.join(","));
    }
    if args.all_features {
        cmd.arg("--all-features");
    }
    if args.no_default_features {
        cmd.arg("--no-default-features");
    }
    if let Some(path) = &args.manifest_path {
        cmd.arg("--manifest-path").arg(path);
    }
    for _ in 0..args.verbose {
        cmd.arg("-v");
    }
    if args.quiet {
        cmd.arg("--quiet");
    }
}

/// `cargo oxide run`: builds, then runs the built binary (or example) with the trailing arguments.
pub fn run(args: &RunArgs) -> Result<ExitCode> {
    run_under(args, None)
}

/// Builds, then runs the binary, through `wrapper` (a debugger or sanitizer command) if given.
pub fn run_under(args: &RunArgs, wrapper: Option<Vec<std::ffi::OsString>>) -> Result<ExitCode> {
    let (exe, package_dir) = match &args.exe {
        Some(exe) if exe.is_file() => (exe.clone(), None),
        Some(exe) => {
            bail!("--exe {}: no such file; give the path of a binary built by `cargo oxide build`", exe.display())
        }
        None => {
            let (exe, dir) = pick_executable(&build(&args.build)?.artifacts, &args.build)?;
            (exe, Some(dir))
        }
    };
    if !args.build.quiet {
        eprintln!("{:>12} `{}`", "Running", exe.display());
    }
    let mut cmd = match &wrapper {
        Some(w) => {
            let mut c = Command::new(&w[0]);
            c.args(&w[1..]).arg(&exe);
            c
        }
        None => Command::new(&exe),
    };
    // Programs using cuda-nccl find the NCCL that `cargo oxide setup` installed.
    crate::nccl::add_to_library_path(&mut cmd);
    // As `cargo run` does: programs find files of their package through it.
    // (A prebuilt `--exe` runs without: its package may not be on this machine.)
    if let Some(dir) = &package_dir {
        cmd.env("CARGO_MANIFEST_DIR", dir);
    }
    let status = cmd.args(&args.args).status().with_context(|| format!("could not run {}", exe.display()))?;
    Ok(exit_code(status))
}

fn exit_code(status: std::process::ExitStatus) -> ExitCode {
    match status.code() {
        Some(0) => ExitCode::SUCCESS,
        Some(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        None => ExitCode::FAILURE,
    }
}

/// `cargo oxide test`: `cargo test` with the same device build settings as `cargo oxide build`.
pub fn test(args: &RunArgs) -> Result<ExitCode> {
    if args.exe.is_some() {
        bail!("`cargo oxide test` builds its test binaries itself; drop --exe");
    }
    let Prepared { mut cmd, .. } = prepare(&args.build, "test")?;
    // The test binaries inherit it from cargo (NCCL for tests using cuda-nccl).
    crate::nccl::add_to_library_path(&mut cmd);
    if !args.args.is_empty() {
        cmd.arg("--").args(&args.args);
    }
    let status = cmd.status().context("could not run the pinned toolchain's cargo")?;
    Ok(exit_code(status))
}

/// The executable to run and the directory of its package's `Cargo.toml`.
fn pick_executable(artifacts: &[Artifact], args: &BuildArgs) -> Result<(PathBuf, PathBuf)> {
    let wanted = |a: &Artifact| {
        let kinds = &a.target.kind;
        let is = |k: &str| kinds.iter().any(|kind| kind.to_string() == k);
        match (&args.bin, &args.example) {
            (Some(name), _) => is("bin") && a.target.name == *name,
            (None, Some(name)) => is("example") && a.target.name == *name,
            (None, None) => is("bin"),
        }
    };
    let mut exes: Vec<(String, PathBuf, PathBuf)> = artifacts
        .iter()
        .filter(|a| wanted(a))
        .filter_map(|a| {
            let dir = a.manifest_path.parent()?.as_std_path().to_path_buf();
            Some((a.target.name.clone(), a.executable.clone()?.into_std_path_buf(), dir))
        })
        .collect();
    exes.dedup();
    match exes.len() {
        0 => bail!("nothing to run: the build made no binary (give --bin NAME or --example NAME)"),
        1 => {
            let (_, exe, dir) = exes.remove(0);
            Ok((exe, dir))
        }
        _ => {
            let names: Vec<_> = exes.iter().map(|(n, _, _)| n.as_str()).collect();
            bail!("several binaries were built ({}); choose one with --bin NAME", names.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_arch_is_one_line_with_known_list_and_example() {
        let err = parse_archs("sm_80,sm_12").unwrap_err().to_string();
        assert!(!err.contains('\n'), "{err}");
        assert!(err.contains("`sm_12`") && err.contains("sm_90") && err.contains("--arch sm_80,sm_90"), "{err}");
    }

    #[test]
    fn arch_list_parses() {
        let archs = parse_archs("sm_80,sm_90,sm_100a").unwrap();
        assert_eq!(archs.iter().map(ToString::to_string).collect::<Vec<_>>(), ["sm_80", "sm_90", "sm_100a"]);
    }
}
