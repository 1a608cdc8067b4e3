//! `cargo oxide test` on a crate whose library has kernels and unit tests: cargo compiles the
//! library and its test harness at the same time, under one crate name, and both device builds
//! must succeed and leave whole artifacts behind.
use oxide_tests::*;

const LIB: &str = r#"
use cuda_device::{cuda_module, kernel, thread, DisjointSlice};

#[cuda_module]
pub mod kernels {
    use super::*;

    #[kernel]
    pub fn twice(a: &[u32], mut out: DisjointSlice<u32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = out.get_mut(idx) {
            *o = a[i] * 2;
        }
    }
}

pub fn host_twice(x: u32) -> u32 {
    x * 2
}

#[cfg(test)]
mod tests {
    #[test]
    fn host_side_runs() {
        assert_eq!(super::host_twice(21), 42);
    }
}
"#;

#[test]
fn cargo_oxide_test_builds_library_and_harness_with_kernels() {
    let project = TempProject::new("e2e-lib-tests", "fn main() {}\n");
    std::fs::write(project.path().join("src/lib.rs"), LIB).expect("write src/lib.rs");
    remove_artifacts("dev", &project.crate_name());
    let out = cargo_oxide(project.path(), &["test", "--arch", "sm_80,sm_90"]);
    assert_success(&out, "cargo oxide test --arch sm_80,sm_90");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("test tests::host_side_runs ... ok"), "{stdout}");
    let manifest = read_manifest("dev", &project.crate_name());
    assert!(manifest.kernel("twice").is_some(), "{:?}", manifest.entries());
    // The test harness is the same crate again: its artifacts go to their own folder.
    let harness = read_manifest("dev", &format!("{}.test", project.crate_name()));
    assert!(harness.kernel("twice").is_some(), "{:?}", harness.entries());
    let dir = device_dir("dev").join(project.crate_name());
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .expect("artifact dir")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "work files left in {}: {leftovers:?}", dir.display());
}
