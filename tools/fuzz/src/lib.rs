//! oxide-fuzz: differential fuzzing of cuda-oxide's device compiler. Generates random,
//! well-defined Rust programs, builds them through `cargo oxide build` as kernels and as plain host
//! functions in one binary per batch, runs the host side, checks every PTX with `ptxas`, packs a
//! GPU bundle whose `run.sh` compares GPU checksums with the CPU's, and shrinks failing programs.
//! The library is what the `oxide-fuzz` binary and the CI slice (tests/tests/fuzz.rs) call.
pub mod bundle;
pub mod crate_writer;
pub mod failure;
pub mod generator;
pub mod pipeline;
pub mod rng;
pub mod shrink;
pub mod tools;

use std::path::{Path, PathBuf};

/// The cuda-oxide checkout this crate belongs to.
pub fn checkout_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap_or_else(|_| PathBuf::from("."))
}

/// Parses `SEED:INDEX`.
pub fn parse_id(id: &str) -> Result<(u64, u64), String> {
    let (s, i) = id.split_once(':').ok_or_else(|| format!("`{id}` is not SEED:INDEX"))?;
    let s = s.parse().map_err(|e| format!("seed `{s}`: {e}"))?;
    let i = i.parse().map_err(|e| format!("index `{i}`: {e}"))?;
    Ok((s, i))
}
