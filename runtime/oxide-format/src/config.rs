//! Device build configuration passed from `cargo oxide` to `oxide-rustc` (contract §1).

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The one environment variable that carries a serialised [`DeviceConfig`] to `oxide-rustc`.
pub const CONFIG_ENV: &str = "CUDA_OXIDE_CONFIG";

/// Bit set in [`Arch::code`] for arch-specific targets (`sm_90a`): code for them runs only on
/// exactly that SM, never on a later one.
pub const ARCH_SPECIFIC_FLAG: u32 = 1 << 16;

/// Every arch `--arch` accepts, with the lowest PTX ISA version that can target it.
const KNOWN_ARCHS: &[(&str, (u32, u32))] = &[
    ("sm_75", (6, 3)),
    ("sm_80", (7, 0)),
    ("sm_86", (7, 1)),
    ("sm_87", (7, 4)),
    ("sm_89", (7, 8)),
    ("sm_90", (7, 8)),
    ("sm_90a", (8, 0)),
    ("sm_100", (8, 6)),
    ("sm_100a", (8, 6)),
    ("sm_101", (8, 6)),
    ("sm_101a", (8, 6)),
    ("sm_103", (8, 8)),
    ("sm_103a", (8, 8)),
    ("sm_120", (8, 7)),
    ("sm_120a", (8, 7)),
    ("sm_121", (8, 8)),
    ("sm_121a", (8, 8)),
];

/// A GPU architecture to build device code for, such as `sm_90` or `sm_90a`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Arch {
    major: u32,
    minor: u32,
    arch_specific: bool,
}

/// An `--arch` value that names no known architecture.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArchError {
    /// What the user wrote.
    pub given: String,
}

impl fmt::Display for ArchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown GPU architecture `{}`; known architectures: {}", self.given, Arch::known_names().join(", "))
    }
}

impl std::error::Error for ArchError {}

impl Arch {
    /// The architecture with compute capability `major.minor`, if it is a known one.
    pub fn new(major: u32, minor: u32, arch_specific: bool) -> Result<Arch, ArchError> {
        let arch = Arch { major, minor, arch_specific };
        if arch.known_entry().is_some() {
            Ok(arch)
        } else {
            Err(ArchError { given: arch.to_string() })
        }
    }

    /// Parses `sm_90`, `sm_90a` (case-insensitive, surrounding spaces ignored).
    pub fn parse(text: &str) -> Result<Arch, ArchError> {
        let err = || ArchError { given: text.to_string() };
        let lower = text.trim().to_ascii_lowercase();
        let digits = lower.strip_prefix("sm_").ok_or_else(err)?;
        let (digits, arch_specific) = match digits.strip_suffix('a') {
            Some(d) => (d, true),
            None => (digits, false),
        };
        if digits.len() < 2 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(err());
        }
        let number: u32 = digits.parse().map_err(|_| err())?;
        Arch::new(number / 10, number % 10, arch_specific).map_err(|_| err())
    }

    /// Parses a comma-separated list such as `sm_80,sm_90`, dropping duplicates, keeping order.
    pub fn parse_list(text: &str) -> Result<Vec<Arch>, ArchError> {
        let mut out = Vec::new();
        for part in text.split(',').filter(|p| !p.trim().is_empty()) {
            let arch = Arch::parse(part)?;
            if !out.contains(&arch) {
                out.push(arch);
            }
        }
        if out.is_empty() {
            return Err(ArchError { given: text.to_string() });
        }
        Ok(out)
    }

    /// Names of every known architecture, in ascending order.
    pub fn known_names() -> Vec<&'static str> {
        KNOWN_ARCHS.iter().map(|(name, _)| *name).collect()
    }

    /// Compute capability major version (9 for `sm_90`).
    pub fn major(self) -> u32 {
        self.major
    }

    /// Compute capability minor version (0 for `sm_90`).
    pub fn minor(self) -> u32 {
        self.minor
    }

    /// `true` for `sm_90a`-style targets, whose code runs only on exactly that SM.
    pub fn is_arch_specific(self) -> bool {
        self.arch_specific
    }

    /// `major * 10 + minor`: 90 for `sm_90` and `sm_90a`.
    pub fn sm(self) -> u32 {
        self.major * 10 + self.minor
    }

    /// The `sm` field of a bundle payload entry: [`Arch::sm`], plus [`ARCH_SPECIFIC_FLAG`] for
    /// arch-specific targets.
    pub fn code(self) -> u32 {
        self.sm() | if self.arch_specific { ARCH_SPECIFIC_FLAG } else { 0 }
    }

    /// Inverse of [`Arch::code`].
    pub fn from_code(code: u32) -> Result<Arch, ArchError> {
        let sm = code & !ARCH_SPECIFIC_FLAG;
        Arch::new(sm / 10, sm % 10, code & ARCH_SPECIFIC_FLAG != 0)
            .map_err(|_| ArchError { given: format!("sm code {code}") })
    }

    /// The virtual architecture name for PTX `.target` and `ptxas`: `compute_90a`.
    pub fn compute_name(self) -> String {
        format!("compute_{}{}", self.sm(), if self.arch_specific { "a" } else { "" })
    }

    /// The lowest PTX ISA version `(major, minor)` that can target this architecture.
    pub fn min_ptx_isa(self) -> (u32, u32) {
        self.known_entry().map(|(_, isa)| *isa).unwrap_or((7, 0))
    }

    fn known_entry(self) -> Option<&'static (&'static str, (u32, u32))> {
        let name = self.to_string();
        KNOWN_ARCHS.iter().find(|(n, _)| *n == name)
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sm_{}{}", self.sm(), if self.arch_specific { "a" } else { "" })
    }
}

impl FromStr for Arch {
    type Err = ArchError;
    fn from_str(s: &str) -> Result<Arch, ArchError> {
        Arch::parse(s)
    }
}

impl Serialize for Arch {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Arch {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Arch, D::Error> {
        let text = String::deserialize(d)?;
        Arch::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// A device artifact kind that `--emit` can ask for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Emit {
    Ptx,
    Cubin,
    Fatbin,
    Ltoir,
}

impl Emit {
    /// Every kind, in the order `--emit` lists them.
    pub const ALL: [Emit; 4] = [Emit::Ptx, Emit::Cubin, Emit::Fatbin, Emit::Ltoir];

    /// The spelling on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Emit::Ptx => "ptx",
            Emit::Cubin => "cubin",
            Emit::Fatbin => "fatbin",
            Emit::Ltoir => "ltoir",
        }
    }

    /// Parses a comma-separated `--emit` list such as `ptx,cubin`.
    pub fn parse_list(text: &str) -> Result<Vec<Emit>, String> {
        let mut out = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let emit = Emit::ALL
                .into_iter()
                .find(|e| e.name().eq_ignore_ascii_case(part))
                .ok_or_else(|| format!("unknown --emit kind `{part}`; known kinds: ptx, cubin, fatbin, ltoir"))?;
            if !out.contains(&emit) {
                out.push(emit);
            }
        }
        Ok(out)
    }
}

/// Absolute paths of the external tools, resolved by `cargo oxide` (its setup/doctor logic).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolPaths {
    pub llc: PathBuf,
    pub opt: PathBuf,
    pub llvm_link: PathBuf,
    pub ptxas: Option<PathBuf>,
    pub fatbinary: Option<PathBuf>,
    pub libdevice: Option<PathBuf>,
    pub libnvvm: Option<PathBuf>,
}

fn default_true() -> bool {
    true
}

/// Everything `oxide-rustc` needs to build device code, serialised into [`CONFIG_ENV`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceConfig {
    /// Architectures to build for, validated when parsed.
    pub archs: Vec<Arch>,
    /// Artifact kinds asked for; see [`DeviceConfig::emits`] for what is actually produced.
    #[serde(default)]
    pub emit: Vec<Emit>,
    /// Let `a*b+c` contract into `fma` (default `true`, like nvcc's `-fmad=true`).
    #[serde(default = "default_true")]
    pub fmad: bool,
    /// Device debug info (`-G`).
    #[serde(default)]
    pub debug: bool,
    /// `<target>/oxide`; each crate writes into `<artifact_dir>/<crate_name>/`.
    pub artifact_dir: PathBuf,
    pub tools: ToolPaths,
    /// Where the driver appends [`crate::progress::ProgressEvent`] JSON lines, if anywhere.
    #[serde(default)]
    pub progress_file: Option<PathBuf>,
    /// Identifies the `oxide-rustc` build (its size and modification time): part of the config,
    /// and so of cargo's fingerprint, so that a new device compiler rebuilds the kernels.
    #[serde(default)]
    pub compiler: String,
}

/// A [`CONFIG_ENV`] value that could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid {CONFIG_ENV}: {}", self.0)
    }
}

impl std::error::Error for ConfigError {}

impl DeviceConfig {
    /// Serialises for [`CONFIG_ENV`].
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Parses a [`CONFIG_ENV`] value; rejects an empty arch list.
    pub fn from_json(text: &str) -> Result<DeviceConfig, ConfigError> {
        let config: DeviceConfig = serde_json::from_str(text).map_err(|e| ConfigError(e.to_string()))?;
        if config.archs.is_empty() {
            return Err(ConfigError("no architecture given (archs is empty)".into()));
        }
        Ok(config)
    }

    /// The config from the environment: `Ok(None)` when [`CONFIG_ENV`] is not set.
    pub fn from_env() -> Result<Option<DeviceConfig>, ConfigError> {
        match std::env::var(CONFIG_ENV) {
            Ok(text) => DeviceConfig::from_json(&text).map(Some),
            Err(std::env::VarError::NotPresent) => Ok(None),
            Err(std::env::VarError::NotUnicode(_)) => Err(ConfigError("not valid UTF-8".into())),
        }
    }

    /// What the build produces: PTX and cubin always, fatbin when there is more than one arch or
    /// it was asked for, LTOIR only when asked for.
    pub fn emits(&self) -> Vec<Emit> {
        let mut out = vec![Emit::Ptx, Emit::Cubin];
        if self.archs.len() > 1 || self.emit.contains(&Emit::Fatbin) {
            out.push(Emit::Fatbin);
        }
        if self.emit.contains(&Emit::Ltoir) {
            out.push(Emit::Ltoir);
        }
        out
    }

    /// `<artifact_dir>/<crate_name>/`.
    pub fn crate_dir(&self, crate_name: &str) -> PathBuf {
        crate_artifact_dir(&self.artifact_dir, crate_name)
    }
}

/// `<artifact_dir>/<crate_name>/`, where one crate's files and `manifest.json` live.
pub fn crate_artifact_dir(artifact_dir: &Path, crate_name: &str) -> PathBuf {
    artifact_dir.join(crate_name)
}

/// Per-crate artifact file names (contract §7).
pub mod files {
    use super::Arch;

    /// `manifest.json`.
    pub const MANIFEST: &str = "manifest.json";

    /// `<crate>.ll`.
    pub fn llvm_ir(crate_name: &str) -> String {
        format!("{crate_name}.ll")
    }

    /// `<crate>.<arch>.ptx`.
    pub fn ptx(crate_name: &str, arch: Arch) -> String {
        format!("{crate_name}.{arch}.ptx")
    }

    /// `<crate>.<arch>.cubin`.
    pub fn cubin(crate_name: &str, arch: Arch) -> String {
        format!("{crate_name}.{arch}.cubin")
    }

    /// `<crate>.<arch>.ltoir`.
    pub fn ltoir(crate_name: &str, arch: Arch) -> String {
        format!("{crate_name}.{arch}.ltoir")
    }

    /// `<crate>.fatbin`.
    pub fn fatbin(crate_name: &str) -> String {
        format!("{crate_name}.fatbin")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_known_archs() {
        let a = Arch::parse("sm_90").unwrap();
        assert_eq!((a.major(), a.minor(), a.is_arch_specific()), (9, 0, false));
        let a = Arch::parse(" SM_90a ").unwrap();
        assert!(a.is_arch_specific());
        assert_eq!(a.to_string(), "sm_90a");
        assert_eq!(a.compute_name(), "compute_90a");
        assert_eq!(Arch::parse("sm_100a").unwrap().sm(), 100);
        assert_eq!(Arch::parse("sm_86").unwrap().min_ptx_isa(), (7, 1));
        for name in Arch::known_names() {
            assert_eq!(Arch::parse(name).unwrap().to_string(), name);
        }
    }

    #[test]
    fn unknown_arch_lists_known_ones() {
        for bad in ["sm_91", "sm_", "sm90", "compute_90", "sm_9x", "", "sm_0", "sm_1000"] {
            let err = Arch::parse(bad).unwrap_err();
            let msg = err.to_string();
            assert!(msg.contains(&format!("`{bad}`")), "{msg}");
            assert!(msg.contains("sm_80, sm_86"), "{msg}");
        }
    }

    #[test]
    fn arch_codes_round_trip() {
        for name in Arch::known_names() {
            let a = Arch::parse(name).unwrap();
            assert_eq!(Arch::from_code(a.code()).unwrap(), a);
        }
        assert_eq!(Arch::parse("sm_90a").unwrap().code(), 90 | ARCH_SPECIFIC_FLAG);
        assert!(Arch::from_code(91).is_err());
    }

    #[test]
    fn arch_lists() {
        let list = Arch::parse_list("sm_80, sm_90,sm_80").unwrap();
        assert_eq!(list.iter().map(|a| a.to_string()).collect::<Vec<_>>(), ["sm_80", "sm_90"]);
        assert!(Arch::parse_list("").is_err());
        assert!(Arch::parse_list("sm_80,sm_42").unwrap_err().to_string().contains("sm_42"));
    }

    #[test]
    fn emit_lists() {
        assert_eq!(Emit::parse_list("ptx, LTOIR").unwrap(), [Emit::Ptx, Emit::Ltoir]);
        assert!(Emit::parse_list("sass").unwrap_err().contains("known kinds"));
    }

    fn sample() -> DeviceConfig {
        DeviceConfig {
            archs: vec![Arch::parse("sm_80").unwrap(), Arch::parse("sm_90a").unwrap()],
            emit: vec![Emit::Ltoir],
            fmad: false,
            debug: true,
            artifact_dir: "/t/oxide".into(),
            tools: ToolPaths { llc: "/bin/llc".into(), ptxas: Some("/bin/ptxas".into()), ..Default::default() },
            progress_file: Some("/t/progress.jsonl".into()),
            compiler: String::new(),
        }
    }

    #[test]
    fn config_round_trips_through_json() {
        let c = sample();
        let json = c.to_json();
        assert!(json.contains("\"sm_90a\""), "{json}");
        assert_eq!(DeviceConfig::from_json(&json).unwrap(), c);
        assert_eq!(c.emits(), [Emit::Ptx, Emit::Cubin, Emit::Fatbin, Emit::Ltoir]);
        assert_eq!(c.crate_dir("hello"), PathBuf::from("/t/oxide/hello"));
    }

    #[test]
    fn config_defaults_and_errors() {
        let json = r#"{"archs":["sm_90"],"artifact_dir":"/t","tools":{"llc":"l","opt":"o","llvm_link":"k",
            "ptxas":null,"fatbinary":null,"libdevice":null,"libnvvm":null}}"#;
        let c = DeviceConfig::from_json(json).unwrap();
        assert!(c.fmad && !c.debug && c.emit.is_empty() && c.progress_file.is_none());
        assert_eq!(c.emits(), [Emit::Ptx, Emit::Cubin]);
        let bad = json.replace("sm_90", "sm_42");
        assert!(DeviceConfig::from_json(&bad).unwrap_err().to_string().contains("unknown GPU architecture `sm_42`"));
        let empty = json.replace("[\"sm_90\"]", "[]");
        assert!(DeviceConfig::from_json(&empty).unwrap_err().to_string().contains("no architecture"));
    }

    #[test]
    fn file_names() {
        let a = Arch::parse("sm_90").unwrap();
        assert_eq!(files::ptx("hello", a), "hello.sm_90.ptx");
        assert_eq!(files::cubin("hello", a), "hello.sm_90.cubin");
        assert_eq!(files::fatbin("hello"), "hello.fatbin");
        assert_eq!(files::llvm_ir("hello"), "hello.ll");
    }
}
