//! Every format the cuda-oxide crates agree on, in one place (see `docs/contracts.md`).
//!
//! Nothing else in the workspace hard-codes a magic number, a symbol name or an entry-name rule:
//! `cargo-oxide` writes a [`config::DeviceConfig`], the backend reads it and writes a
//! [`bundle`] holding a [`manifest::Manifest`], and the host runtime parses that bundle and picks
//! a payload for the device it runs on.

pub mod bundle;
pub mod config;
pub mod manifest;
pub mod naming;
pub mod progress;

pub use bundle::{Bundle, BundleError, NoPayload, Payload, write_bundle};
pub use config::{Arch, ArchError, DeviceConfig, Emit, ToolPaths};
pub use manifest::{KernelInfo, LaunchBounds, Manifest, ParamInfo, ParamKind, PayloadInfo, PayloadKind};
pub use naming::entry_name;
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
        assert_eq!(
            super::sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
