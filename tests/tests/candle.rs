//! `examples/candle-op` builds: a candle `CustomOp` launching our kernel, with candle and cuda-core
//! sharing one cudarc. candle makes cudarc link the CUDA libraries and compiles its own kernels
//! with nvcc, so the build gets a CUDA_HOME made by `scripts/cuda-link-stubs.sh` (the managed
//! CUDA tools, and link-time stand-ins for the libraries this machine lacks, and an nvcc whose PTX
//! the GPU host's driver can JIT-compile). The GPU run is the bundle's `example-candle-op`.
use std::path::{Path, PathBuf};
use std::process::Command;

use oxide_tests::*;

/// The PTX ISA of the GPU host's CUDA (driver 580 = CUDA 13.0), as scripts/gpu-bundle.sh marks it.
const GPU_HOST_PTX_ISA: &str = "9.0";

#[test]
fn candle_example_builds_against_candles_cudarc() {
    let stubs = shared_target_dir().join("cuda-link-stubs");
    let made = Command::new(checkout_root().join("scripts/cuda-link-stubs.sh"))
        .arg(&stubs)
        .args(["--ptx-isa", GPU_HOST_PTX_ISA])
        .output()
        .expect("run scripts/cuda-link-stubs.sh");
    assert_success(&made, "scripts/cuda-link-stubs.sh (needs `cargo oxide setup`'s CUDA tools and a C compiler)");
    let example = checkout_root().join("examples/candle-op");
    remove_artifacts("dev", "candle_op");
    // candle's build script reruns on no change of nvcc and keeps its PTX: PTX of another ISA
    // (an nvcc without --ptx-isa built it) goes with the package's build.
    let stale = candle_kernels_outputs().iter().any(|out| {
        let ptx = ptx_files(out);
        let other_isa = |file: &PathBuf| ptx_version(file) != format!(".version {GPU_HOST_PTX_ISA}");
        (ptx.is_empty() && out.join("ptx.rs").exists()) || ptx.iter().any(other_isa)
    });
    if stale {
        // What `cargo clean -p candle-kernels` removes (it refuses a target dir cargo did not make).
        for dir in ["build", ".fingerprint"] {
            for entry in std::fs::read_dir(artifact_dir().join("debug").join(dir)).unwrap() {
                let path = entry.unwrap().path();
                if path.file_name().unwrap().to_string_lossy().starts_with("candle-kernels-") {
                    std::fs::remove_dir_all(&path).unwrap();
                }
            }
        }
    }
    let out = Command::new(workspace_bin("cargo-oxide"))
        .args(["oxide", "build", "--arch", "sm_90"])
        .current_dir(&example)
        .env("CARGO_TARGET_DIR", shared_target_dir())
        .env("CUDA_HOME", &stubs)
        .env("NVCC", stubs.join("ptx-isa/nvcc"))
        // candle's kernels: PTX and cubins for the GPUs the bundle runs on (no GPU here to ask).
        .env("CUDA_COMPUTE_CAP", "90")
        // This binary never runs: candle's statically linked quantized kernels are compiled at
        // -O1 and kept as PTX (a third of the 10 minutes they take in full on 2 cores); the PTX
        // checked below is built as always. The GPU bundle builds them in full.
        .env("CUDA_LINK_STUBS_FAST_OBJECTS", "1")
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
    // candle loads its kernels as PTX, JIT-compiled by the driver: the newest build of
    // candle-kernels says the host's ISA, whatever the managed nvcc's own is.
    let newest = candle_kernels_outputs()
        .into_iter()
        .filter_map(|out| Some((std::fs::metadata(out.join("ptx.rs")).ok()?.modified().ok()?, out)))
        .max()
        .map(|(_, out)| out)
        .expect("candle-kernels' build output");
    let ptx = ptx_files(&newest);
    assert!(!ptx.is_empty(), "no PTX in {}", newest.display());
    for file in ptx {
        assert_eq!(ptx_version(&file), format!(".version {GPU_HOST_PTX_ISA}"), "{}", file.display());
    }
}

/// The `out` folders of candle-kernels' build script in the shared target dir.
fn candle_kernels_outputs() -> Vec<PathBuf> {
    let Ok(builds) = std::fs::read_dir(artifact_dir().join("debug/build")) else { return Vec::new() };
    builds
        .filter_map(|entry| entry.ok())
        .filter(|entry| entry.file_name().to_string_lossy().starts_with("candle-kernels-"))
        .map(|entry| entry.path().join("out"))
        .filter(|out| out.is_dir())
        .collect()
}

fn ptx_files(dir: &Path) -> Vec<PathBuf> {
    let entries = std::fs::read_dir(dir).unwrap().map(|entry| entry.unwrap().path());
    entries.filter(|path| path.extension().is_some_and(|e| e == "ptx")).collect()
}

fn ptx_version(file: &Path) -> String {
    let text = std::fs::read_to_string(file).unwrap();
    text.lines().find(|line| line.starts_with(".version ")).unwrap_or("no .version").to_string()
}
