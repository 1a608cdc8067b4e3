//! `cargo oxide new hello` makes a project that builds through `cargo oxide build` as generated.
use oxide_tests::*;

#[test]
fn new_project_builds() {
    let parent = tempfile::Builder::new().prefix("oxide-new-").tempdir().expect("temp dir");
    let out = cargo_oxide(parent.path(), &["new", "hello"]);
    assert_success(&out, "cargo oxide new hello");
    let project = parent.path().join("hello");
    for file in ["Cargo.toml", "rust-toolchain.toml", "src/main.rs", ".gitignore"] {
        assert!(project.join(file).is_file(), "`new` did not write {file}");
    }
    let again = cargo_oxide(parent.path(), &["new", "hello"]);
    assert!(!again.status.success(), "a second `new hello` must refuse to overwrite");

    seed_lockfile(&project);
    remove_artifacts("dev", "hello");
    let out = cargo_oxide(&project, &["build", "--arch", "sm_90"]);
    assert_success(&out, "cargo oxide build in the new project");
    let manifest = read_manifest("dev", "hello");
    assert!(manifest.kernel("vecadd").is_some(), "kernels: {:?}", manifest.entries());
    assert!(artifact_dir().join("debug/hello").is_file(), "no binary; stderr:\n{}", stderr(&out));
}
