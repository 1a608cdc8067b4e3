//! `cargo oxide setup`: installs the pinned toolchain and the CUDA tools; idempotent, offline once done.
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use indicatif::{ProgressBar, ProgressStyle};

use crate::cli::SetupArgs;
use crate::nccl::{NCCL_LINK_NAME, NCCL_SONAME, NCCL_VERSION, NCCL_WHEEL, managed_nccl_dir, managed_nccl_lib_dir};
use crate::tools::{
    self, CCCL_SHA256, CCCL_VERSION, CCCL_WHEEL, COMPONENTS, CUDA_VERSION, CUDA_WHEELS, CudaTools, PINNED_TOOLCHAIN,
    Toolchain,
};

/// Written into the managed CUDA directory once the wheels installed completely.
pub const MARKER: &str = ".cuda-oxide-complete";

pub fn setup(args: &SetupArgs) -> Result<()> {
    install_toolchain()?;
    install_cuda()?;
    install_cccl()?;
    if !args.no_nccl {
        install_nccl()?;
    }
    eprintln!("{:>12} run `cargo oxide doctor` to check everything, `cargo oxide new hello` to start", "Done");
    Ok(())
}

fn spinner(message: String) -> ProgressBar {
    let bar = ProgressBar::new_spinner();
    bar.set_style(
        ProgressStyle::with_template("{spinner:.green} {msg} ({elapsed})")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    bar.set_message(message);
    bar.enable_steady_tick(Duration::from_millis(100));
    bar
}

/// Runs `cmd` under a spinner; on failure the error carries the command's last output line.
fn run_quietly(cmd: &mut Command, what: &str) -> Result<()> {
    let bar = spinner(what.to_string());
    let out = cmd.stdin(Stdio::null()).output();
    bar.finish_and_clear();
    let out = out.with_context(|| format!("could not start {what}"))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let last = stderr.lines().map(str::trim).rfind(|l| !l.is_empty()).unwrap_or("no output");
        bail!("{what} failed: {last}");
    }
    Ok(())
}

fn install_toolchain() -> Result<()> {
    if which::which("rustup").is_err() {
        bail!("`rustup` not found on PATH; install rustup (https://rustup.rs), then run `cargo oxide setup` again");
    }
    if let Ok(tc) = Toolchain::find_with_rustup() {
        let missing = tc.missing_components();
        if missing.is_empty() {
            eprintln!(
                "{:>12} toolchain {PINNED_TOOLCHAIN} with {} (already installed)",
                "Found",
                COMPONENTS.join(", ")
            );
            return Ok(());
        }
        let mut cmd = Command::new("rustup");
        cmd.args(["component", "add", "--toolchain", PINNED_TOOLCHAIN]).args(&missing);
        run_quietly(&mut cmd, &format!("adding {} to {PINNED_TOOLCHAIN}", missing.join(", ")))?;
    } else {
        let mut cmd = Command::new("rustup");
        cmd.args([
            "toolchain",
            "install",
            PINNED_TOOLCHAIN,
            "--profile",
            "minimal",
            "--component",
            &COMPONENTS.join(","),
        ]);
        run_quietly(&mut cmd, &format!("installing Rust {PINNED_TOOLCHAIN} (about 1.5 GB)"))?;
    }
    let tc = Toolchain::find_with_rustup()?;
    let missing = tc.missing_components();
    if !missing.is_empty() {
        bail!(
            "rustup installed {PINNED_TOOLCHAIN} but {} is still missing; run `rustup component add --toolchain {PINNED_TOOLCHAIN} {}`",
            missing.join(", "),
            missing.join(" ")
        );
    }
    eprintln!("{:>12} toolchain {PINNED_TOOLCHAIN} ({})", "Installed", tc.version);
    Ok(())
}

fn install_cuda() -> Result<()> {
    let dir = tools::managed_cuda_dir();
    let wheels: Vec<String> = CUDA_WHEELS.iter().map(|w| format!("{w}=={CUDA_VERSION}")).collect();
    let marker = format!("{}\n", wheels.join(" "));
    // The marker lists the wheels installed; a different list (a tool added since) reinstalls.
    if std::fs::read_to_string(dir.join(MARKER)).is_ok_and(|m| m == marker) {
        eprintln!("{:>12} CUDA {CUDA_VERSION} tools in {} (already installed)", "Found", dir.display());
        return check_cuda();
    }
    let found = CudaTools::find();
    if found.complete() && !found.ptxas.as_deref().is_some_and(|p| p.starts_with(&dir)) {
        let ptxas = found.ptxas.as_deref().map(Path::display);
        eprintln!(
            "{:>12} CUDA tools of this machine (ptxas: {}); not installing the managed copy",
            "Found",
            ptxas.map(|p| p.to_string()).unwrap_or_default()
        );
        return Ok(());
    }
    if which::which("python3").is_err() {
        bail!(
            "`python3` not found; install Python 3 with pip (e.g. `apt-get install python3-pip`), or set CUDA_HOME to a CUDA 12.8+ toolkit"
        );
    }
    let parent = dir.parent().context("the managed CUDA directory has no parent")?;
    std::fs::create_dir_all(parent).with_context(|| format!("could not create {}", parent.display()))?;
    // Install into a fresh side directory and rename it into place, so an interrupted install never
    // leaves a half-filled directory behind.
    let staging = parent.join(format!(".cuda-{CUDA_VERSION}.partial"));
    let _ = std::fs::remove_dir_all(&staging);
    let mut cmd = pip_install_into(&staging);
    cmd.args(&wheels);
    run_quietly(&mut cmd, &format!("installing CUDA {CUDA_VERSION} tools from PyPI (about 450 MB)"))?;
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::rename(&staging, &dir).with_context(|| format!("could not move the CUDA tools into {}", dir.display()))?;
    std::fs::write(dir.join(MARKER), &marker)
        .with_context(|| format!("could not write {}", dir.join(MARKER).display()))?;
    eprintln!("{:>12} CUDA {CUDA_VERSION} tools into {}", "Installed", dir.display());
    check_cuda()
}

/// `pip install` into `target` (a staging directory, renamed into place once complete); the
/// caller adds what to install.
fn pip_install_into(target: &std::path::Path) -> Command {
    let mut cmd = Command::new("python3");
    cmd.args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-warn-script-location"])
        .arg("--target")
        .arg(target)
        .env("PIP_ROOT_USER_ACTION", "ignore");
    cmd
}

/// CCCL's headers for CUDA C++ sources (`tools::CCCL_VERSION`), into a directory of their own;
/// pip checks the wheel against [`CCCL_SHA256`].
fn install_cccl() -> Result<()> {
    let dir = tools::managed_cccl_dir();
    let requirement = format!(
        "{CCCL_WHEEL}=={CCCL_VERSION} {}\n",
        CCCL_SHA256.iter().map(|h| format!("--hash=sha256:{h}")).collect::<Vec<_>>().join(" ")
    );
    if std::fs::read_to_string(dir.join(MARKER)).is_ok_and(|m| m == requirement) {
        eprintln!("{:>12} CCCL ({CCCL_WHEEL} {CCCL_VERSION}) in {} (already installed)", "Found", dir.display());
        return Ok(());
    }
    if which::which("python3").is_err() {
        bail!("`python3` not found; install Python 3 with pip (e.g. `apt-get install python3-pip`)");
    }
    let parent = dir.parent().context("the managed CCCL directory has no parent")?;
    std::fs::create_dir_all(parent).with_context(|| format!("could not create {}", parent.display()))?;
    let staging = parent.join(format!(".cccl-{CCCL_VERSION}.partial"));
    let _ = std::fs::remove_dir_all(&staging);
    let requirements = parent.join(format!(".cccl-{CCCL_VERSION}.requirements.txt"));
    std::fs::write(&requirements, &requirement)
        .with_context(|| format!("could not write {}", requirements.display()))?;
    let mut cmd = pip_install_into(&staging);
    cmd.args(["--no-deps", "--require-hashes", "-r"]).arg(&requirements);
    let installed = run_quietly(&mut cmd, &format!("installing CCCL ({CCCL_WHEEL} {CCCL_VERSION}, about 4 MB)"));
    let _ = std::fs::remove_file(&requirements);
    installed?;
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::rename(&staging, &dir).with_context(|| format!("could not move CCCL into {}", dir.display()))?;
    if !tools::managed_cccl_include().join("cub/cub.cuh").is_file() {
        bail!("{CCCL_WHEEL} {CCCL_VERSION} has no cub/cub.cuh under {}", tools::managed_cccl_include().display());
    }
    std::fs::write(dir.join(MARKER), &requirement)
        .with_context(|| format!("could not write {}", dir.join(MARKER).display()))?;
    eprintln!("{:>12} CCCL ({CCCL_WHEEL} {CCCL_VERSION}) into {}", "Installed", dir.display());
    Ok(())
}

/// NCCL for cuda-nccl's collectives (NVIDIA's wheel at [`NCCL_VERSION`]) into a directory of its
/// own, with a `libnccl.so` link beside `libnccl.so.2`: cudarc opens NCCL by that name, and
/// `cargo oxide run`/`test` put the directory on `LD_LIBRARY_PATH`. Skipped where the library
/// search path already has an NCCL under that name.
fn install_nccl() -> Result<()> {
    let dir = managed_nccl_dir();
    let requirement = format!("{NCCL_WHEEL}=={NCCL_VERSION}\n");
    if std::fs::read_to_string(dir.join(MARKER)).is_ok_and(|m| m == requirement) {
        eprintln!("{:>12} NCCL ({NCCL_WHEEL} {NCCL_VERSION}) in {} (already installed)", "Found", dir.display());
        return Ok(());
    }
    if crate::nccl::find() == Some(crate::nccl::Found::System) {
        eprintln!(
            "{:>12} NCCL of this machine ({NCCL_LINK_NAME} on the library search path); not installing the managed copy",
            "Found"
        );
        return Ok(());
    }
    if which::which("python3").is_err() {
        bail!(
            "`python3` not found; install Python 3 with pip (e.g. `apt-get install python3-pip`), or skip NCCL with `cargo oxide setup --no-nccl`"
        );
    }
    let parent = dir.parent().context("the managed NCCL directory has no parent")?;
    std::fs::create_dir_all(parent).with_context(|| format!("could not create {}", parent.display()))?;
    let staging = parent.join(format!(".nccl-{NCCL_VERSION}.partial"));
    let _ = std::fs::remove_dir_all(&staging);
    let mut cmd = pip_install_into(&staging);
    cmd.args(["--no-deps", &format!("{NCCL_WHEEL}=={NCCL_VERSION}")]);
    run_quietly(
        &mut cmd,
        &format!("installing NCCL ({NCCL_WHEEL} {NCCL_VERSION}, about 250 MB; skip with --no-nccl)"),
    )?;
    let lib = staging.join(managed_nccl_lib_dir().strip_prefix(&dir).context("NCCL's lib dir is inside its dir")?);
    if !lib.join(NCCL_SONAME).is_file() {
        bail!("{NCCL_WHEEL} {NCCL_VERSION} has no {NCCL_SONAME} under {}", lib.display());
    }
    symlink(Path::new(NCCL_SONAME), &lib.join(NCCL_LINK_NAME))
        .with_context(|| format!("could not link {NCCL_LINK_NAME} to {NCCL_SONAME} in {}", lib.display()))?;
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::rename(&staging, &dir).with_context(|| format!("could not move NCCL into {}", dir.display()))?;
    std::fs::write(dir.join(MARKER), &requirement)
        .with_context(|| format!("could not write {}", dir.join(MARKER).display()))?;
    eprintln!("{:>12} NCCL ({NCCL_WHEEL} {NCCL_VERSION}) into {}", "Installed", dir.display());
    Ok(())
}

#[cfg(unix)]
fn symlink(target: &Path, link: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

#[cfg(not(unix))]
fn symlink(target: &Path, link: &Path) -> std::io::Result<()> {
    std::fs::copy(link.with_file_name(target), link).map(|_| ())
}

/// The managed install must hold every tool the build looks for there.
fn check_cuda() -> Result<()> {
    let root = tools::managed_cuda_root();
    if !CudaTools::find_in(std::slice::from_ref(&root)).complete() {
        bail!(
            "the managed CUDA install in {} is incomplete; remove it and run `cargo oxide setup` again",
            tools::managed_cuda_dir().display()
        );
    }
    Ok(())
}
