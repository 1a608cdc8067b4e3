//! GPU tests, run deliberately with `cargo test -p oxide-tests --test gpu -- --ignored` on a machine
//! with a GPU and the Rust toolchain. Without a toolchain (the usual GPU host) use
//! `scripts/gpu-bundle.sh`, which builds the same crates into a bundle with a runner.
use oxide_tests::*;

/// Builds a crate of `tests/gpu/` with `cargo oxide build --release` and runs its binary.
fn build_and_run(name: &str) {
    let dir = checkout_root().join("tests/gpu").join(name);
    seed_lockfile(&dir);
    let out = cargo_oxide(&dir, &["build", "--release"]);
    assert_success(&out, &format!("cargo oxide build --release in tests/gpu/{name}"));
    let package = format!("gpu-{name}");
    let exe = artifact_dir().join("release").join(&package);
    let run = std::process::Command::new(&exe).output().unwrap_or_else(|e| panic!("run {}: {e}", exe.display()));
    assert!(
        run.status.success(),
        "{package} failed:\n{}{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn vecadd_random() {
    build_and_run("vecadd-random");
}
