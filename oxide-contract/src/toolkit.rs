//! The CUDA toolkit cuda-oxide installs and the CUDA releases of the tools it finds: where
//! `cargo oxide setup` puts NVIDIA's wheels (read by `cargo oxide`, the device compiler and the
//! runtime's nvJitLink search), and the release of a compiler that made LTOIR (recorded in the
//! manifest, checked by the loader against the nvJitLink it would link with).

use std::fmt;
use std::path::PathBuf;

/// Overrides the managed home (`$HOME/.cuda-oxide`).
pub const HOME_ENV: &str = "CUDA_OXIDE_HOME";
/// Version of NVIDIA's CUDA wheels that `cargo oxide setup` installs.
pub const CUDA_VERSION: &str = "13.5.37";

/// The managed home: `${CUDA_OXIDE_HOME:-$HOME/.cuda-oxide}`.
pub fn oxide_home() -> PathBuf {
    if let Some(dir) = std::env::var_os(HOME_ENV).filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("."));
    home.join(".cuda-oxide")
}

/// Where `cargo oxide setup` installs the CUDA wheels.
pub fn managed_cuda_dir() -> PathBuf {
    oxide_home().join(format!("cuda-{CUDA_VERSION}"))
}

/// The CUDA root inside the managed install (the wheels' `nvidia/cu13`: `bin/`, `lib/`, `nvvm/`).
pub fn managed_cuda_root() -> PathBuf {
    managed_cuda_dir().join("nvidia/cu13")
}

/// NVIDIA's NCCL wheel for CUDA 13 that `cargo oxide setup` installs, for `cuda-nccl`'s
/// collectives between GPUs. 2.30 is the newest release whose API cudarc 0.19 binds (its `nccl`
/// feature); the calls `cuda-nccl` makes are in every NCCL 2.x, so an older system NCCL serves too.
pub const NCCL_WHEEL: &str = "nvidia-nccl-cu13";
/// Version of [`NCCL_WHEEL`] that `cargo oxide setup` installs.
pub const NCCL_VERSION: &str = "2.30.7";
/// The NCCL library's versioned name (its soname), as NVIDIA's wheel and packages ship it.
pub const NCCL_SONAME: &str = "libnccl.so.2";
/// The name cudarc's dynamic loading opens NCCL by (it does not try [`NCCL_SONAME`]): a link
/// of this name to the library must be in a directory on the library search path
/// (`LD_LIBRARY_PATH`). `cargo oxide setup` makes one beside the managed copy, and
/// `cargo oxide run`/`test` put that directory on the path.
pub const NCCL_LINK_NAME: &str = "libnccl.so";

/// Where `cargo oxide setup` installs NCCL: a directory of its own beside the CUDA tools.
pub fn managed_nccl_dir() -> PathBuf {
    oxide_home().join(format!("nccl-{NCCL_VERSION}"))
}

/// The directory of the managed NCCL's [`NCCL_SONAME`] and of its [`NCCL_LINK_NAME`] link.
pub fn managed_nccl_lib_dir() -> PathBuf {
    managed_nccl_dir().join("nvidia/nccl/lib")
}

/// A CUDA release, `major.minor` (`13.5`): what LTOIR's compatibility depends on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CudaRelease {
    pub major: u32,
    pub minor: u32,
}

impl CudaRelease {
    pub const fn new(major: u32, minor: u32) -> CudaRelease {
        CudaRelease { major, minor }
    }

    /// Parses `13.5` (a patch level, `13.5.37`, is accepted and dropped).
    pub fn parse(text: &str) -> Option<CudaRelease> {
        let mut parts = text.trim().split('.');
        let major = parts.next()?.parse().ok()?;
        let minor = parts.next()?.parse().ok()?;
        if parts.next().is_some_and(|patch| patch.parse::<u32>().is_err()) {
            return None;
        }
        Some(CudaRelease { major, minor })
    }

    /// The release in what follows [`COMPILER_BANNER`] in a CUDA compiler binary or its
    /// `--version` text: `13.5, V13.5.37` → 13.5. (libNVVM's `nvvmVersion` says only "2.0", its
    /// IR version, so the banner is how a libNVVM tells its CUDA release.)
    pub fn after_banner(tail: &[u8]) -> Option<CudaRelease> {
        let tail = &tail[..tail.len().min(16)];
        let end = tail.iter().position(|b| !(b.is_ascii_digit() || *b == b'.')).unwrap_or(tail.len());
        CudaRelease::parse(std::str::from_utf8(&tail[..end]).ok()?)
    }
}

/// What every CUDA compiler (libNVVM, `nvcc`, `ptxas`, nvJitLink) carries before its release:
/// `Cuda compilation tools, release 13.5, V13.5.37`.
pub const COMPILER_BANNER: &[u8] = b"Cuda compilation tools, release ";

impl fmt::Display for CudaRelease {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

impl serde::Serialize for CudaRelease {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for CudaRelease {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        CudaRelease::parse(&text)
            .ok_or_else(|| serde::de::Error::custom(format!("`{text}` is not a CUDA release (major.minor)")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_parse_and_order() {
        assert_eq!(CudaRelease::parse("13.5"), Some(CudaRelease::new(13, 5)));
        assert_eq!(CudaRelease::parse("13.5.37"), Some(CudaRelease::new(13, 5)));
        assert_eq!(CudaRelease::parse("13"), None);
        assert_eq!(CudaRelease::parse("13.x"), None);
        assert_eq!(CudaRelease::parse("13.5.x"), None);
        assert!(CudaRelease::new(13, 0) < CudaRelease::new(13, 5));
        assert!(CudaRelease::new(12, 9) < CudaRelease::new(13, 0));
        assert_eq!(CudaRelease::new(13, 10).to_string(), "13.10");
        let json = serde_json::to_string(&CudaRelease::new(13, 5)).unwrap();
        assert_eq!(json, "\"13.5\"");
        assert_eq!(serde_json::from_str::<CudaRelease>(&json).unwrap(), CudaRelease::new(13, 5));
        assert!(serde_json::from_str::<CudaRelease>("\"thirteen\"").is_err());
    }

    #[test]
    fn release_from_a_compiler_banner() {
        let text = b"Cuda compilation tools, release 13.5, V13.5.37\nBuild cuda_13.5.r13.5/compiler";
        assert!(text.starts_with(COMPILER_BANNER));
        assert_eq!(CudaRelease::after_banner(&text[COMPILER_BANNER.len()..]), Some(CudaRelease::new(13, 5)));
        assert_eq!(CudaRelease::after_banner(b"12.10\0"), Some(CudaRelease::new(12, 10)));
        assert_eq!(CudaRelease::after_banner(b"unknown"), None);
    }

    #[test]
    fn managed_root_is_the_wheel_layout() {
        let root = managed_cuda_root();
        assert!(root.ends_with(format!("cuda-{CUDA_VERSION}/nvidia/cu13")), "{}", root.display());
        let nccl = managed_nccl_lib_dir();
        assert!(nccl.ends_with(format!("nccl-{NCCL_VERSION}/nvidia/nccl/lib")), "{}", nccl.display());
    }
}
