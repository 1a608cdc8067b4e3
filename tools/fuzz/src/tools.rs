//! The external steps of a fuzz run: `cargo oxide build` of a generated crate, `ptxas` on its
//! PTX, plain `cargo check` (does rustc itself accept the programs?), the binary's CPU side, and
//! removing a finished crate's build outputs so 10,000 programs do not fill the disk.
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

use crate::failure::Profile;

/// Where things are and which tools build them.
pub struct Tools {
    pub cargo_oxide: PathBuf,
    pub ptxas: PathBuf,
    /// `CARGO_TARGET_DIR` of every generated crate (cargo-oxide builds into `<it>/oxide`).
    pub target_dir: PathBuf,
    pub arch: String,
    /// The checkout's `runtime/` (path dependencies of generated crates).
    pub runtime: PathBuf,
    /// The checkout's `Cargo.lock`, copied into generated crates.
    pub lockfile: PathBuf,
}

/// A finished command: its output and how long it took.
pub struct Ran {
    pub ok: bool,
    pub stdout: String,
    pub stderr: String,
    pub secs: f64,
}

fn run(cmd: &mut Command) -> Result<Ran, String> {
    let t = Instant::now();
    let out: Output = cmd.output().map_err(|e| format!("run {cmd:?}: {e}"))?;
    Ok(Ran {
        ok: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        secs: t.elapsed().as_secs_f64(),
    })
}

impl Tools {
    /// `cargo_oxide`: the one given, else `$CARGO_OXIDE`, else this checkout's
    /// `target/release/cargo-oxide` (what `./x fuzz` builds), else `cargo-oxide` on `PATH`.
    pub fn find(
        root: &Path,
        cargo_oxide: Option<PathBuf>,
        target_dir: Option<PathBuf>,
        arch: &str,
    ) -> Result<Tools, String> {
        let local = root.join("target/release/cargo-oxide");
        let cargo_oxide = cargo_oxide
            .or_else(|| std::env::var_os("CARGO_OXIDE").map(PathBuf::from))
            .or_else(|| local.is_file().then_some(local))
            .unwrap_or_else(|| PathBuf::from("cargo-oxide"));
        let ptxas = cargo_oxide::tools::CudaTools::find()
            .ptxas
            .ok_or("ptxas not found: run `./x setup` (or `cargo oxide setup`) to install the CUDA tools")?;
        Ok(Tools {
            cargo_oxide,
            ptxas,
            target_dir: target_dir.unwrap_or_else(|| root.join("target/fuzz/cargo")),
            arch: arch.to_string(),
            runtime: root.join("runtime"),
            lockfile: root.join("Cargo.lock"),
        })
    }

    /// `cargo oxide build [--release] --no-fmad --arch <arch>` in `crate_dir`: contraction off, so
    /// floats are bit-exact; the output of every pass after `opt` verified by `opt` (a pass that
    /// makes invalid IR fails the build, naming itself).
    pub fn build(&self, crate_dir: &Path, profile: Profile) -> Result<Ran, String> {
        let mut cmd = Command::new(&self.cargo_oxide);
        cmd.args(["oxide", "build", "--quiet", "--no-fmad", "--arch", &self.arch]);
        cmd.env(oxide_contract::config::VERIFY_PASSES_ENV, "1");
        if profile == Profile::Release {
            cmd.arg("--release");
        }
        cmd.arg("--manifest-path").arg(crate_dir.join("Cargo.toml"));
        self.cargo_env(&mut cmd);
        run(&mut cmd)
    }

    fn cargo_env(&self, cmd: &mut Command) {
        cmd.env("CARGO_TARGET_DIR", &self.target_dir)
            // Nothing is rebuilt incrementally: each crate is built once.
            .env("CARGO_INCREMENTAL", "0")
            .env_remove("RUSTC_WRAPPER")
            .env_remove("RUSTC_WORKSPACE_WRAPPER")
            .env_remove("RUSTFLAGS");
    }

    /// Plain `cargo check` of `crate_dir`: rustc's verdict without the device compiler.
    pub fn host_check(&self, crate_dir: &Path) -> Result<Ran, String> {
        let mut cmd = Command::new("cargo");
        cmd.args(["check", "--quiet", "--message-format", "short", "--manifest-path"])
            .arg(crate_dir.join("Cargo.toml"));
        self.cargo_env(&mut cmd);
        cmd.env("CARGO_TARGET_DIR", self.target_dir.join("host-check"));
        run(&mut cmd)
    }

    /// The binary `cargo oxide build` made for crate `name`.
    pub fn binary(&self, name: &str, profile: Profile) -> PathBuf {
        self.target_dir.join("oxide").join(profile.name()).join(name)
    }

    /// The PTX of crate `name` from its last build in `profile`.
    pub fn ptx(&self, name: &str, profile: Profile) -> PathBuf {
        let device = oxide_contract::naming::device_artifact_dir(&self.target_dir.join("oxide"), profile.name());
        device.join(name).join(format!("{name}.{}.ptx", self.arch))
    }

    /// `ptxas -arch=<arch> <ptx>` (the build ran it at -O3 to make the cubin; this runs it at -O0,
    /// the path of `cargo oxide debug`-style unoptimised assembly, on the PTX that is embedded).
    pub fn ptxas_check(&self, ptx: &Path, scratch: &Path) -> Result<Ran, String> {
        let mut cmd = Command::new(&self.ptxas);
        cmd.arg(format!("-arch={}", self.arch)).arg("-O0").arg(ptx).arg("-o").arg(scratch.join("check.cubin"));
        run(&mut cmd)
    }

    /// The binary's CPU side: `--cpu-only --write-refs <refs>`.
    pub fn cpu_run(&self, binary: &Path, refs: &Path) -> Result<Ran, String> {
        let mut cmd = Command::new(binary);
        cmd.arg("--cpu-only").arg("--write-refs").arg(refs);
        run(&mut cmd)
    }

    /// The binary on the GPU of this machine, checked against `refs`.
    pub fn gpu_run(&self, binary: &Path, refs: &Path) -> Result<Ran, String> {
        let mut cmd = Command::new(binary);
        cmd.arg("--expect").arg(refs);
        run(&mut cmd)
    }

    /// Removes what building crate `name` left in the target directory (its objects, fingerprints,
    /// device artifacts and binaries); the dependencies stay.
    pub fn clean_crate(&self, name: &str) {
        let oxide = self.target_dir.join("oxide");
        for profile in ["debug", "release"] {
            let _ = std::fs::remove_dir_all(oxide_contract::naming::device_artifact_dir(&oxide, profile).join(name));
            let dir = oxide.join(profile);
            let _ = std::fs::remove_file(dir.join(name));
            let _ = std::fs::remove_file(dir.join(format!("{name}.d")));
            for sub in ["deps", ".fingerprint", "incremental"] {
                let Ok(entries) = std::fs::read_dir(dir.join(sub)) else {
                    continue;
                };
                for e in entries.flatten() {
                    let file = e.file_name().to_string_lossy().into_owned();
                    if file.starts_with(&format!("{name}-")) || file.starts_with(&format!("{name}.")) {
                        let p = e.path();
                        let _ = if p.is_dir() { std::fs::remove_dir_all(&p) } else { std::fs::remove_file(&p) };
                    }
                }
            }
        }
    }
}
