//! The contract between cuda-oxide's crates: every fact that the macros, the device compiler and
//! the host runtime must agree on has its one owner here (see `docs/contracts.md`).
//!
//! | module | owns |
//! |---|---|
//! | [`abi`] | parameter kinds, their `kernelParams` slots, the macro ⇄ backend classification |
//! | [`attrs`] | tool-attribute names, `cfg(cuda_oxide)`, lang items of `cuda_device` |
//! | [`atomic`] | atomic operation and scope codes |
//! | [`fast_launch`] | unchecked twins of versioned kernels and the host's condition for launching one |
//! | [`launch_contract`] | launch contracts of kernels and the check of a launch against one |
//! | [`link`] | LTOIR (libNVVM), linking with CUDA C++ (nvJitLink), the `cuda-sources` metadata |
//! | [`limits`] | launch limits (threads, grid and block dims, clusters, shared memory) |
//! | [`arch`] | GPU architectures and the rules that depend on them |
//! | [`naming`] | kernel entry names, the bundle symbol and section, artifact file names |
//! | [`manifest`] | `manifest.json`: kernels, parameters, payloads |
//! | [`bundle`] | the binary bundle in host binaries: parsing and payload choice (writing: `build`) |
//! | [`toolkit`] | the CUDA tools `cargo oxide setup` installs (where), CUDA releases of tools and LTOIR |
//! | `config`, `progress` | `build` feature only: the device build config (incl. debug info levels) and progress events |
//!
//! User binaries link this crate through the runtime without the `build` feature, so the build
//! configuration and progress types stay out of them.

pub mod abi;
pub mod arch;
pub mod atomic;
pub mod attrs;
pub mod bundle;
#[cfg(feature = "build")]
pub mod config;
pub mod fast_launch;
pub mod launch_contract;
pub mod limits;
pub mod link;
pub mod manifest;
pub mod naming;
#[cfg(feature = "build")]
pub mod progress;
pub mod toolkit;

pub use abi::{LaunchArg, ParamKind};
pub use arch::{Arch, ArchError};
#[cfg(feature = "build")]
pub use bundle::write_bundle;
pub use bundle::{Bundle, BundleError, NoPayload, Payload};
#[cfg(feature = "build")]
pub use config::{DeviceConfig, DeviceDebugInfo, Emit, PackageSources, ToolPaths};
pub use manifest::{KernelInfo, LaunchBounds, Manifest, ParamInfo, PayloadInfo, PayloadKind};
pub use naming::entry_name;
#[cfg(feature = "build")]
pub use progress::ProgressEvent;

/// Lower-case hex SHA-256 of `bytes`, as recorded in [`manifest::PayloadInfo::sha256`].
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for b in digest.iter() {
        out.push(char::from_digit(u32::from(b >> 4), 16).unwrap_or('0'));
        out.push(char::from_digit(u32::from(b & 0xf), 16).unwrap_or('0'));
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn sha256_of_empty_input() {
        assert_eq!(super::sha256_hex(b""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    }
}
