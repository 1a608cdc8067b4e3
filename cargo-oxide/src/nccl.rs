//! NCCL for the programs `cargo oxide` runs: the copy `setup` installs (NVIDIA's wheel, with the
//! `libnccl.so` link cudarc opens), put on `LD_LIBRARY_PATH` for `run` and `test`, and what
//! `doctor` reports of it.
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

pub use oxide_contract::toolkit::{
    NCCL_LINK_NAME, NCCL_SONAME, NCCL_VERSION, NCCL_WHEEL, managed_nccl_dir, managed_nccl_lib_dir,
};

/// Where the NCCL the programs will load is.
#[derive(Debug, PartialEq, Eq)]
pub enum Found {
    /// The copy `cargo oxide setup` installed (`run` and `test` put it on the search path).
    Managed(PathBuf),
    /// One the library search path already holds under the name cudarc opens.
    System,
}

/// The NCCL a program started by `cargo oxide run` would load, if any.
pub fn find() -> Option<Found> {
    let managed = managed_nccl_lib_dir();
    if managed.join(NCCL_LINK_NAME).is_file() {
        return Some(Found::Managed(managed.join(NCCL_SONAME)));
    }
    // SAFETY: only loads the library (its initialisers run, as a program's loading would).
    unsafe { libloading::Library::new(NCCL_LINK_NAME) }.is_ok().then_some(Found::System)
}

/// The version of the NCCL library at `path` (or found by that name), as `2.30.7`.
pub fn version(path: &Path) -> Option<String> {
    // SAFETY: loads the library and calls `ncclGetVersion(int*)`, whose signature is fixed in
    // every NCCL 2 release; nothing else of it is used.
    unsafe {
        let lib = libloading::Library::new(path).ok()?;
        let get: libloading::Symbol<unsafe extern "C" fn(*mut i32) -> i32> = lib.get(b"ncclGetVersion").ok()?;
        let mut v = 0;
        (get(&mut v) == 0).then(|| format!("{}.{}.{}", v / 10000, v / 100 % 100, v % 100))
    }
}

/// Puts the managed NCCL's directory first on `LD_LIBRARY_PATH` of `cmd`, when it is installed:
/// cudarc finds NCCL only through the library search path.
pub fn add_to_library_path(cmd: &mut Command) {
    if let Some(path) = library_path_with(&managed_nccl_lib_dir(), std::env::var_os("LD_LIBRARY_PATH")) {
        cmd.env("LD_LIBRARY_PATH", path);
    }
}

/// `LD_LIBRARY_PATH` with `dir` first, when `dir` holds the link cudarc opens; `None` otherwise.
fn library_path_with(dir: &Path, old: Option<OsString>) -> Option<OsString> {
    if !dir.join(NCCL_LINK_NAME).is_file() {
        return None;
    }
    let mut path = OsString::from(dir);
    if let Some(old) = old.filter(|p| !p.is_empty()) {
        path.push(":");
        path.push(old);
    }
    Some(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_library_path_gets_the_nccl_directory_only_when_it_holds_the_link() {
        let dir = tempfile::tempdir().expect("temp dir");
        assert_eq!(library_path_with(dir.path(), Some("/x".into())), None, "no link: left alone");
        std::fs::write(dir.path().join(NCCL_LINK_NAME), b"").unwrap();
        let first = dir.path().as_os_str().to_os_string();
        assert_eq!(library_path_with(dir.path(), None), Some(first.clone()));
        assert_eq!(library_path_with(dir.path(), Some("".into())), Some(first.clone()));
        let mut both = first;
        both.push(":/usr/lib");
        assert_eq!(library_path_with(dir.path(), Some("/usr/lib".into())), Some(both));
    }
}
