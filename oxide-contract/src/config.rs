//! Device build configuration passed from `cargo oxide` to `oxide-rustc` (contract §1).

use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::arch::Arch;
use crate::naming::crate_artifact_dir;

/// The one environment variable that carries a serialised [`DeviceConfig`] to `oxide-rustc`.
pub const CONFIG_ENV: &str = "CUDA_OXIDE_CONFIG";

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
    /// Approximate `f32` division, square root, reciprocal square root, `exp`, `log`, `sin`,
    /// `cos`, `pow` in every kernel (like nvcc's `--use_fast_math`, without flushing denormals);
    /// `#[fast_math]` asks for it per function. Default `false`: IEEE results.
    #[serde(default)]
    pub fast_math: bool,
    /// Device debug info (`-G`).
    #[serde(default)]
    pub debug: bool,
    /// `<target>/oxide/<profile>/device` (`crate::naming::device_artifact_dir`); each crate writes
    /// into `<artifact_dir>/<crate dir>/` (`crate::naming::crate_dir_name`).
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

    /// The oldest arch of the build, which target-independent work (`opt`) is done for and which
    /// labels a fatbin.
    pub fn lowest_arch(&self) -> Arch {
        Arch::lowest(&self.archs).expect("a DeviceConfig has at least one arch (from_json checks)")
    }

    /// `<artifact_dir>/<crate_dir>/` (`crate::naming::crate_dir_name`).
    pub fn crate_dir(&self, crate_dir: &str) -> PathBuf {
        crate_artifact_dir(&self.artifact_dir, crate_dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            fast_math: true,
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
        assert!(c.fmad && !c.fast_math && !c.debug && c.emit.is_empty() && c.progress_file.is_none());
        assert_eq!(c.emits(), [Emit::Ptx, Emit::Cubin]);
        let bad = json.replace("sm_90", "sm_42");
        assert!(DeviceConfig::from_json(&bad).unwrap_err().to_string().contains("unknown GPU architecture `sm_42`"));
        let empty = json.replace("[\"sm_90\"]", "[]");
        assert!(DeviceConfig::from_json(&empty).unwrap_err().to_string().contains("no architecture"));
    }
}
