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

/// Creates `name` from `template` and builds it through `cargo oxide build --arch sm_90`; returns
/// the build's stderr (its summary).
fn build_template(template: &str, name: &str) -> String {
    let parent = tempfile::Builder::new().prefix("oxide-new-").tempdir().expect("temp dir");
    let out = cargo_oxide(parent.path(), &["new", name, "--template", template]);
    assert_success(&out, &format!("cargo oxide new {name} --template {template}"));
    let project = parent.path().join(name);
    seed_lockfile(&project);
    let out = cargo_oxide(&project, &["build", "--arch", "sm_90"]);
    assert_success(&out, &format!("cargo oxide build of the {template} template"));
    assert!(artifact_dir().join("debug").join(name).is_file(), "no binary {name}; stderr:\n{}", stderr(&out));
    stderr(&out)
}

#[test]
fn lib_template_builds_a_library_of_kernels_and_a_binary() {
    let summary = build_template("lib", "tmpl-lib");
    // The library's own kernels, and the generic one's instance that the binary launches.
    assert!(summary.contains("tmpl_lib::kernels::saxpy("), "{summary}");
    assert!(summary.contains("scale::<f32>"), "{summary}");
}

#[test]
fn async_template_builds_with_cuda_async() {
    let summary = build_template("async", "tmpl-async");
    assert!(summary.contains("kernels::vecadd("), "{summary}");
}

#[test]
fn workspace_template_builds_the_kernels_crate_and_the_app() {
    let summary = build_template("workspace", "tmpl-ws");
    assert!(summary.contains("tmpl_ws_kernels::kernels::vecadd("), "{summary}");
}

#[test]
fn unknown_template_lists_the_known_ones() {
    let parent = tempfile::Builder::new().prefix("oxide-new-").tempdir().expect("temp dir");
    let out = cargo_oxide(parent.path(), &["new", "x", "--template", "cuda"]);
    assert!(!out.status.success());
    let err = stderr(&out);
    for name in ["vecadd", "lib", "async", "workspace"] {
        assert!(err.contains(name), "{err}");
    }
}
