//! GPU tests, run deliberately with `cargo test -p oxide-tests --test gpu -- --ignored` on a machine
//! with a GPU and the Rust toolchain. Without a toolchain (the usual GPU host) use
//! `scripts/gpu-bundle.sh`, which builds the same crates into a bundle with a runner.
use oxide_tests::*;

/// Builds a crate of `tests/gpu/` with `cargo oxide build --release` and runs its binary.
fn build_and_run(name: &str) {
    let dir = checkout_root().join("tests/gpu").join(name);
    seed_lockfile(&dir);
    // A crate that needs particular archs (e.g. sm_90 for clusters) names them in `oxide-arch`.
    let arch = std::fs::read_to_string(dir.join("oxide-arch")).ok().map(|a| a.trim().to_string());
    let mut args = vec!["build", "--release"];
    if let Some(arch) = &arch {
        args.extend(["--arch", arch.as_str()]);
    }
    let out = cargo_oxide(&dir, &args);
    assert_success(&out, &format!("cargo oxide {} in tests/gpu/{name}", args.join(" ")));
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

#[test]
#[ignore = "needs a CUDA GPU"]
fn block_reduce() {
    build_and_run("block-reduce");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn transpose_dynamic() {
    build_and_run("transpose-dynamic");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn histogram_atomics() {
    build_and_run("histogram-atomics");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn warp_ops() {
    build_and_run("warp-ops");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn block_scan() {
    build_and_run("block-scan");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn cluster_neighbour() {
    build_and_run("cluster-neighbour");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn printf() {
    build_and_run("printf");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn assert() {
    build_and_run("assert");
}

/// The differential corpus: every case on the CPU and the GPU (see tests/gpu/corpus).
#[test]
#[ignore = "needs a CUDA GPU"]
fn corpus() {
    build_and_run("corpus");
}

// Host runtime and launch API (issue 3): each binary prints PASS/FAIL per check.
#[test]
#[ignore = "needs a CUDA GPU"]
fn params() {
    build_and_run("params");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn sideload() {
    build_and_run("sideload");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn async_ops() {
    build_and_run("async-ops");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn threads() {
    build_and_run("threads");
}

/// Ends in a trapped kernel, which leaves the context unusable: a process of its own.
#[test]
#[ignore = "needs a CUDA GPU"]
fn launch_errors() {
    build_and_run("launch-errors");
}

/// The device API under NVIDIA cuda-oxide's names; includes a cooperative launch (`grid::sync`).
#[test]
#[ignore = "needs a CUDA GPU"]
fn device_compat() {
    build_and_run("device-compat");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn perf_types() {
    build_and_run("perf-types");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn bounds_traps() {
    build_and_run("bounds-traps");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn host_compat() {
    build_and_run("host-compat");
}
