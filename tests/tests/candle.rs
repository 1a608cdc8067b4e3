//! `examples/candle-op` builds: a candle `CustomOp` launching our kernel, with candle and cuda-core
//! sharing one cudarc. candle makes cudarc link the CUDA libraries and compiles its own kernels
//! with nvcc, so the build gets a CUDA_HOME made by `scripts/cuda-link-stubs.sh` (the managed
//! CUDA tools, and link-time stand-ins for the libraries this machine lacks). The GPU run is the
//! bundle's `example-candle-op`.
use std::process::Command;

use oxide_tests::*;

#[test]
fn candle_example_builds_against_candles_cudarc() {
    let stubs = shared_target_dir().join("cuda-link-stubs");
    let made = Command::new(checkout_root().join("scripts/cuda-link-stubs.sh"))
        .arg(&stubs)
        .output()
        .expect("run scripts/cuda-link-stubs.sh");
    assert_success(&made, "scripts/cuda-link-stubs.sh (needs `cargo oxide setup`'s CUDA tools and a C compiler)");
    let example = checkout_root().join("examples/candle-op");
    remove_artifacts("dev", "candle_op");
    let out = Command::new(workspace_bin("cargo-oxide"))
        .args(["oxide", "build", "--arch", "sm_90"])
        .current_dir(&example)
        .env("CARGO_TARGET_DIR", shared_target_dir())
        .env("CUDA_HOME", &stubs)
        .env("NVCC", stubs.join("bin/nvcc"))
        // candle's kernels: PTX and cubins for the GPUs the bundle runs on (no GPU here to ask).
        .env("CUDA_COMPUTE_CAP", "90")
        .env_remove("RUSTC_WRAPPER")
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .output()
        .expect("run cargo-oxide");
    assert_success(&out, "cargo oxide build of examples/candle-op");
    let manifest = read_manifest("dev", "candle_op");
    assert!(manifest.kernel("rms_norm").is_some(), "kernels: {:?}", manifest.entries());
    let binary = artifact_dir().join("debug/candle-op");
    assert!(binary.is_file(), "no binary; stderr:\n{}", stderr(&out));
    // The CUDA libraries are recorded by their real names, for the GPU host to resolve.
    let dynamic = Command::new("readelf").arg("-d").arg(&binary).output().ok().filter(|o| o.status.success());
    if let Some(dynamic) = dynamic {
        let text = String::from_utf8_lossy(&dynamic.stdout);
        for lib in ["libcuda.so.1", "libcublas.so.13", "libcudart.so.13"] {
            assert!(text.contains(lib), "the binary does not name {lib}:\n{text}");
        }
    }
}
