//! Device build configuration passed from `cargo oxide` to `oxide-rustc` (contract §1).

use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::arch::Arch;
use crate::naming::crate_artifact_dir;

/// The one environment variable that carries a serialised [`DeviceConfig`] to `oxide-rustc`.
pub const CONFIG_ENV: &str = "CUDA_OXIDE_CONFIG";

/// Set to `1`, `oxide-rustc` checks the output of every pass after `opt` with `opt
/// -passes=verify` and stops at the first invalid one, naming the pass (a developer switch:
/// `./x test` and the fuzzer set it). It changes no output, so it is not part of the config.
pub const VERIFY_PASSES_ENV: &str = "CUDA_OXIDE_VERIFY_PASSES";

/// A file to which each verification appends `<crate> <pass> <functions>` (`./x test` sums it).
pub const VERIFY_PASSES_LOG_ENV: &str = "CUDA_OXIDE_VERIFY_LOG";

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

/// How much source-level debug information the device code carries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeviceDebugInfo {
    /// None: the PTX has no `.loc` lines.
    None,
    /// Source lines only (nvcc's `-lineinfo`): `.loc` in the PTX, a line table in the cubin, and
    /// the same machine code as without them. The default.
    #[default]
    Lines,
    /// Everything a debugger needs (nvcc's `-G`): lines, variables and types, no optimisation,
    /// `ptxas --device-debug`.
    Full,
}

impl DeviceDebugInfo {
    /// Every level, in the order `--device-debug` lists them.
    pub const ALL: [DeviceDebugInfo; 3] = [DeviceDebugInfo::None, DeviceDebugInfo::Lines, DeviceDebugInfo::Full];

    /// The spelling on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            DeviceDebugInfo::None => "none",
            DeviceDebugInfo::Lines => "lines",
            DeviceDebugInfo::Full => "full",
        }
    }

    /// The same level for libNVVM and nvJitLink.
    pub fn link_debug(self) -> crate::link::LinkDebug {
        match self {
            DeviceDebugInfo::None => crate::link::LinkDebug::None,
            DeviceDebugInfo::Lines => crate::link::LinkDebug::Lines,
            DeviceDebugInfo::Full => crate::link::LinkDebug::Full,
        }
    }

    /// Parses `none`, `lines` or `full`.
    pub fn parse(text: &str) -> Result<DeviceDebugInfo, String> {
        DeviceDebugInfo::ALL
            .into_iter()
            .find(|d| d.name().eq_ignore_ascii_case(text.trim()))
            .ok_or_else(|| format!("unknown device debug level `{text}`; known levels: none, lines, full"))
    }
}

/// Crates whose functions get no debug information of their own: the standard library and the
/// device library. Their code, once inlined, is attributed to the user's line that called it (as
/// nvcc does for CUDA's headers), and a debugger steps over their calls.
pub const NO_DEBUGINFO_CRATES: [&str; 5] = ["core", "alloc", "std", "compiler_builtins", "cuda_device"];

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
    /// `libnvJitLink.so`: links LTOIR and CUDA C++ device code into cubins.
    #[serde(default)]
    pub nvjitlink: Option<PathBuf>,
    /// `nvcc`: compiles the CUDA C++ sources a crate names ([`PackageSources`]).
    #[serde(default)]
    pub nvcc: Option<PathBuf>,
    /// CCCL's include directory (`cub/`, `thrust/`, `cuda/std/`), given to `nvcc` as `-isystem`
    /// when its toolkit has none (the CUDA wheels `cargo oxide setup` installs).
    #[serde(default)]
    pub cccl_include: Option<PathBuf>,
    /// The CUDA release of `libnvvm` and of `nvcc`, recorded with the LTOIR each makes (the
    /// nvJitLink that links it at load time must be as new); set when LTOIR is emitted.
    #[serde(default)]
    pub libnvvm_release: Option<crate::toolkit::CudaRelease>,
    #[serde(default)]
    pub nvcc_release: Option<crate::toolkit::CudaRelease>,
    /// Tool name → the line of its `--version` that names its version (`llc`, `ptxas`), for the
    /// manifest: read once per tool by `cargo oxide`, not by every crate's device build.
    #[serde(default)]
    pub versions: std::collections::BTreeMap<String, String>,
}

/// The CUDA C++ sources (and prebuilt device code) one package links into its device code, read
/// by `cargo oxide` from `[package.metadata.cuda-oxide]` (`crate::link::CUDA_SOURCES_KEY`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackageSources {
    /// The package's directory (cargo's `CARGO_MANIFEST_DIR` for its crates).
    pub manifest_dir: PathBuf,
    /// Crate name of the package's library, if it has one: kernels of other crates that call a
    /// CUDA C++ function this library declares link these sources too.
    #[serde(default)]
    pub lib_crate: Option<String>,
    /// Absolute paths, in the order given.
    pub files: Vec<PathBuf>,
    /// Extra `nvcc` options (`crate::link::NVCC_FLAGS_KEY`).
    #[serde(default)]
    pub nvcc_flags: Vec<String>,
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
    /// Source-level debug information of the device code.
    #[serde(default)]
    pub debuginfo: DeviceDebugInfo,
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
    /// Every package of the build that names CUDA C++ sources.
    #[serde(default)]
    pub cuda_sources: Vec<PackageSources>,
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

    /// The sources of the package in `manifest_dir`, if it names any.
    pub fn sources_of_package(&self, manifest_dir: &std::path::Path) -> Option<&PackageSources> {
        self.cuda_sources.iter().find(|p| p.manifest_dir == manifest_dir)
    }

    /// The sources of the package whose library is the crate `crate_name`, if it names any.
    pub fn sources_of_library(&self, crate_name: &str) -> Option<&PackageSources> {
        self.cuda_sources.iter().find(|p| p.lib_crate.as_deref() == Some(crate_name))
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
    fn debug_levels_parse() {
        assert_eq!(DeviceDebugInfo::parse("FULL").unwrap(), DeviceDebugInfo::Full);
        assert_eq!(DeviceDebugInfo::parse("none").unwrap(), DeviceDebugInfo::None);
        assert!(DeviceDebugInfo::parse("-G").unwrap_err().contains("none, lines, full"));
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
            fast_math: true,
            debuginfo: DeviceDebugInfo::Full,
            artifact_dir: "/t/oxide".into(),
            tools: ToolPaths { llc: "/bin/llc".into(), ptxas: Some("/bin/ptxas".into()), ..Default::default() },
            progress_file: Some("/t/progress.jsonl".into()),
            compiler: String::new(),
            cuda_sources: vec![PackageSources {
                manifest_dir: "/w/app".into(),
                lib_crate: Some("app".into()),
                files: vec!["/w/app/src/a.cu".into()],
                nvcc_flags: vec!["-DX=1".into()],
            }],
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
        assert_eq!(c.sources_of_package("/w/app".as_ref()).map(|p| p.files.len()), Some(1));
        assert!(c.sources_of_library("app").is_some() && c.sources_of_library("other").is_none());
    }

    #[test]
    fn config_defaults_and_errors() {
        let json = r#"{"archs":["sm_90"],"artifact_dir":"/t","tools":{"llc":"l","opt":"o","llvm_link":"k",
            "ptxas":null,"fatbinary":null,"libdevice":null,"libnvvm":null}}"#;
        let c = DeviceConfig::from_json(json).unwrap();
        assert!(
            c.fmad
                && !c.fast_math
                && c.debuginfo == DeviceDebugInfo::Lines
                && c.emit.is_empty()
                && c.progress_file.is_none()
                && c.cuda_sources.is_empty()
        );
        assert!(c.tools.nvjitlink.is_none() && c.tools.nvcc.is_none());
        assert_eq!(c.emits(), [Emit::Ptx, Emit::Cubin]);
        let bad = json.replace("sm_90", "sm_42");
        assert!(DeviceConfig::from_json(&bad).unwrap_err().to_string().contains("unknown GPU architecture `sm_42`"));
        let empty = json.replace("[\"sm_90\"]", "[]");
        assert!(DeviceConfig::from_json(&empty).unwrap_err().to_string().contains("no architecture"));
    }
}
