//! Small facts remembered between runs, so that a build with nothing to do costs little more than
//! cargo's own: where the pinned toolchain is, which GPU this machine has, how many crates the
//! last build had, and which built files the artifact folders were last synced from.
//!
//! Every entry carries what it depends on (file sizes and modification times, the boot) and is
//! recomputed when that changed; a missing or unreadable entry is recomputed too.

use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use serde::Serialize;
use serde::de::DeserializeOwned;

/// A file's size and modification time: `None` when it does not exist.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Stamp {
    len: u64,
    mtime_ns: u128,
}

impl Stamp {
    pub fn of(path: &Path) -> Option<Stamp> {
        let meta = std::fs::metadata(path).ok()?;
        let mtime_ns = meta.modified().ok()?.duration_since(UNIX_EPOCH).ok()?.as_nanos();
        Some(Stamp { len: meta.len(), mtime_ns })
    }
}

/// Files with their stamps; [`Stamps::current`] says whether none changed since.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Stamps(Vec<(PathBuf, Option<Stamp>)>);

impl Stamps {
    pub fn of<'a>(paths: impl IntoIterator<Item = &'a Path>) -> Stamps {
        Stamps(paths.into_iter().map(|p| (p.to_path_buf(), Stamp::of(p))).collect())
    }

    /// Whether every file still has the stamp it had (and the same files are listed).
    pub fn current(&self) -> bool {
        self.0.iter().all(|(path, stamp)| Stamp::of(path) == *stamp)
    }

    pub fn paths(&self) -> impl Iterator<Item = &Path> {
        self.0.iter().map(|(p, _)| p.as_path())
    }
}

/// This boot of the machine (GPUs do not come and go without one, in practice).
pub fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id").map(|s| s.trim().to_string()).unwrap_or_default()
}

/// The entry at `path`, if it is readable.
pub fn read<T: DeserializeOwned>(path: &Path) -> Option<T> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

/// Writes the entry at `path` (through a temporary file, so readers never see half of one);
/// a cache that cannot be written is only slower, so errors are ignored.
pub fn write<T: Serialize>(path: &Path, value: &T) {
    let Ok(json) = serde_json::to_vec(value) else { return };
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    if std::fs::write(&tmp, json).is_ok() && std::fs::rename(&tmp, path).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_notice_a_changed_or_removed_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a");
        std::fs::write(&file, "one").unwrap();
        let stamps = Stamps::of([file.as_path()]);
        assert!(stamps.current());
        std::fs::write(&file, "three").unwrap();
        assert!(!stamps.current(), "a different length");
        let stamps = Stamps::of([file.as_path()]);
        std::fs::remove_file(&file).unwrap();
        assert!(!stamps.current(), "a removed file");
    }

    #[test]
    fn entries_round_trip_and_unreadable_ones_are_none() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/entry.json");
        write(&path, &(1u32, "x".to_string()));
        assert_eq!(read::<(u32, String)>(&path), Some((1, "x".to_string())));
        std::fs::write(&path, "{").unwrap();
        assert_eq!(read::<(u32, String)>(&path), None);
    }
}
