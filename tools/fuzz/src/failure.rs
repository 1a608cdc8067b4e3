//! What can go wrong with a generated program, and the record of it that a run keeps in
//! `failures.txt` (the shrinker reads the kind back to know what to preserve).
use std::fmt;

/// A build profile of the generated crates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Profile {
    Debug,
    Release,
}

impl Profile {
    pub fn name(self) -> &'static str {
        match self {
            Profile::Debug => "debug",
            Profile::Release => "release",
        }
    }

    /// `debug`, `release` or `both`.
    pub fn parse_list(s: &str) -> Result<Vec<Profile>, String> {
        match s {
            "debug" => Ok(vec![Profile::Debug]),
            "release" => Ok(vec![Profile::Release]),
            "both" => Ok(vec![Profile::Release, Profile::Debug]),
            _ => Err(format!("--profile takes debug, release or both, not `{s}`")),
        }
    }
}

/// How a program failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Plain rustc rejects it: a bug of the generator.
    HostReject,
    /// `cargo oxide build` fails on it (an oxide-rustc error, a crash, an LLVM error).
    DeviceBuild,
    /// `ptxas` rejects its PTX.
    Ptxas,
    /// Its CPU side panics: a bug of the generator (or of rustc).
    CpuPanic,
    /// Its debug and release CPU checksums differ: undefined behaviour in it (a generator bug) or a rustc bug.
    CpuProfiles,
    /// The GPU's checksums differ from the CPU's.
    Mismatch,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::HostReject => "host-reject",
            Kind::DeviceBuild => "device-build",
            Kind::Ptxas => "ptxas",
            Kind::CpuPanic => "cpu-panic",
            Kind::CpuProfiles => "cpu-profiles",
            Kind::Mismatch => "mismatch",
        }
    }

    pub fn parse(s: &str) -> Option<Kind> {
        [Kind::HostReject, Kind::DeviceBuild, Kind::Ptxas, Kind::CpuPanic, Kind::CpuProfiles, Kind::Mismatch]
            .into_iter()
            .find(|k| k.name() == s)
    }

    /// Whether this points at the device compiler rather than at the generator.
    pub fn is_compiler_bug(self) -> bool {
        matches!(self, Kind::DeviceBuild | Kind::Ptxas | Kind::Mismatch)
    }
}

/// One failed program.
#[derive(Clone, Debug)]
pub struct Failure {
    /// `seed:index`
    pub id: String,
    pub kind: Kind,
    pub profile: Option<Profile>,
    /// The relevant lines of the tool's output.
    pub detail: String,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let profile = self.profile.map(|p| format!(" ({})", p.name())).unwrap_or_default();
        writeln!(f, "{} {}{profile}", self.kind.name(), self.id)?;
        for line in self.detail.lines().take(40) {
            writeln!(f, "    {line}")?;
        }
        Ok(())
    }
}

/// The interesting lines of a failed build's output: errors and what follows them, no warnings.
pub fn error_excerpt(stderr: &str) -> String {
    let mut out = Vec::new();
    let mut keep = false;
    for line in stderr.lines() {
        let t = line.trim_start();
        if t.starts_with("error") || t.contains("ptxas") || t.contains("panicked") || t.contains("LLVM ERROR") {
            keep = true;
        } else if t.starts_with("warning") {
            keep = false;
        }
        if keep && out.len() < 60 {
            out.push(line.to_string());
        }
    }
    if out.is_empty() {
        stderr
            .lines()
            .rev()
            .take(20)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .map(str::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    } else {
        out.join("\n")
    }
}
