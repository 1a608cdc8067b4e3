//! The shrinker's checks: does a candidate program still fail the way the original did? Plain
//! rustc decides cheaply whether a candidate is valid Rust at all; the failure itself is checked by
//! running the CPU side (host build with plain rustc), `cargo oxide build` of a one-program crate,
//! or the GPU run of its binary.
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::crate_writer;
use crate::failure::{Kind, Profile, error_excerpt};
use crate::generator::Program;
use crate::tools::Tools;

/// What a candidate did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Not valid Rust (rustc's first error).
    Invalid(String),
    /// Failed with this kind and normalised signature.
    Failed(Kind, String),
    /// Passed every check this oracle makes.
    Passed,
}

pub struct Oracle<'t> {
    pub tools: Option<&'t Tools>,
    /// Scratch folder for the candidate crates.
    pub dir: PathBuf,
    pub profile: Profile,
    /// Whether a GPU may be used (for mismatches).
    pub gpu: bool,
    pub checks: usize,
}

/// The first line of an error message with numbers, paths and names made neutral, so the same
/// failure on a smaller program compares equal.
pub fn signature(text: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| {
            (l.starts_with("error") || l.contains("ptxas") || l.contains("LLVM ERROR") || l.contains("panicked"))
                && !l.starts_with("error: could not compile")
                && !l.starts_with("error: build failed")
                && !l.starts_with("error: aborting")
        })
        .unwrap_or("");
    let mut out = String::new();
    let mut prev_digit = false;
    for c in line.chars() {
        if c.is_ascii_digit() {
            if !prev_digit {
                out.push('N');
            }
            prev_digit = true;
        } else {
            out.push(c);
            prev_digit = false;
        }
    }
    out
}

fn program(source: &str) -> Program {
    Program { id: "shrink:0".into(), source: source.to_string(), statements: 0 }
}

impl Oracle<'_> {
    /// Whether plain rustc accepts `source` as a module (type-check only).
    pub fn valid(&mut self, source: &str) -> Result<Result<(), String>, String> {
        let file = self.dir.join("check.rs");
        std::fs::create_dir_all(&self.dir).map_err(|e| format!("create {}: {e}", self.dir.display()))?;
        std::fs::write(&file, source).map_err(|e| format!("write {}: {e}", file.display()))?;
        let out = Command::new("rustc")
            .args(["--edition", "2024", "--crate-type", "lib", "--emit", "metadata", "--error-format", "short", "-o"])
            .arg(self.dir.join("check.rmeta"))
            .arg(&file)
            .output()
            .map_err(|e| format!("run rustc: {e}"))?;
        Ok(if out.status.success() { Ok(()) } else { Err(signature(&String::from_utf8_lossy(&out.stderr))) })
    }

    /// Runs `kind`'s check on `source` (already known to be valid Rust unless `kind` is a rejection).
    pub fn check(&mut self, source: &str, kind: Kind) -> Result<Outcome, String> {
        self.checks += 1;
        match kind {
            Kind::HostReject => Ok(match self.valid(source)? {
                Ok(()) => Outcome::Passed,
                Err(sig) => Outcome::Failed(Kind::HostReject, sig),
            }),
            Kind::CpuPanic | Kind::CpuProfiles => self.cpu(source),
            Kind::DeviceBuild | Kind::Ptxas | Kind::Mismatch => self.device(source, kind == Kind::Mismatch),
        }
    }

    /// The CPU side built with plain rustc in both profiles: a panic, or digests that differ.
    fn cpu(&mut self, source: &str) -> Result<Outcome, String> {
        let dir = self.dir.join("host");
        crate_writer::write_host(&dir, "fuzz_shrink_host", &[program(source)])?;
        let mut digests = Vec::new();
        for (p, flags) in [
            ("debug", &["-C", "debug-assertions=on", "-C", "overflow-checks=on"][..]),
            ("release", &["-C", "opt-level=3"][..]),
        ] {
            let exe = dir.join(format!("host-{p}"));
            let out = Command::new("rustc")
                .args(["--edition", "2024", "--error-format", "short"])
                .args(flags)
                .arg(dir.join("src/main.rs"))
                .arg("-o")
                .arg(&exe)
                .output()
                .map_err(|e| format!("run rustc: {e}"))?;
            if !out.status.success() {
                return Ok(Outcome::Invalid(signature(&String::from_utf8_lossy(&out.stderr))));
            }
            let run = Command::new(&exe).output().map_err(|e| format!("run {}: {e}", exe.display()))?;
            let stdout = String::from_utf8_lossy(&run.stdout);
            if let Some(line) = stdout.lines().find(|l| l.starts_with("FAIL ")) {
                let why = line.split_once("cpu panicked: ").map(|x| x.1).unwrap_or(line);
                return Ok(Outcome::Failed(Kind::CpuPanic, format!("{p}: {}", signature(&format!("panicked {why}")))));
            }
            digests.push(stdout.lines().next().unwrap_or("").to_string());
        }
        Ok(if digests[0] != digests[1] { Outcome::Failed(Kind::CpuProfiles, String::new()) } else { Outcome::Passed })
    }

    /// `cargo oxide build` of a one-program crate; with `gpu`, also the GPU run of its binary.
    fn device(&mut self, source: &str, gpu: bool) -> Result<Outcome, String> {
        let tools = self.tools.ok_or("this check needs cargo-oxide and ptxas (run it through ./x fuzz)")?;
        let name = "fuzz_shrink";
        let dir = self.dir.join(name);
        crate_writer::write_batch(&dir, name, &[program(source)], &tools.runtime, &tools.lockfile)?;
        let ran = tools.build(&dir, self.profile)?;
        if !ran.ok {
            let excerpt = error_excerpt(&ran.stderr);
            if excerpt.contains("error[E") {
                return Ok(Outcome::Invalid(signature(&excerpt)));
            }
            let kind = if excerpt.contains("ptxas") { Kind::Ptxas } else { Kind::DeviceBuild };
            return Ok(Outcome::Failed(kind, signature(&excerpt)));
        }
        if !gpu {
            return Ok(Outcome::Passed);
        }
        if !self.gpu {
            return Err(
                "a mismatch can only be shrunk where a GPU runs the binaries (pass --gpu on a GPU machine)".into()
            );
        }
        let bin = tools.binary(name, self.profile);
        let run = Command::new(&bin).output().map_err(|e| format!("run {}: {e}", bin.display()))?;
        let stdout = String::from_utf8_lossy(&run.stdout);
        Ok(match stdout.lines().find(|l| l.starts_with("FAIL ")) {
            Some(l) if l.contains("cpu panicked") => Outcome::Failed(Kind::CpuPanic, signature(l)),
            // Which threads differ and by how much changes as the program shrinks: any mismatch counts.
            Some(_) => Outcome::Failed(Kind::Mismatch, String::new()),
            None => Outcome::Passed,
        })
    }
}

/// A scratch folder for a shrink of program `id`.
pub fn scratch_dir(root: &Path, id: &str) -> PathBuf {
    root.join("target/fuzz/shrink").join(id.replace([':', '/'], "_"))
}
