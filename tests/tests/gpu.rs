//! GPU tests, run deliberately with `cargo test -p oxide-tests --test gpu -- --ignored` on a machine
//! with a GPU and the Rust toolchain. Without a toolchain (the usual GPU host) use
//! `scripts/gpu-bundle.sh`, which builds the same crates into a bundle with a runner.
use oxide_tests::*;

/// Builds a crate of `tests/gpu/` with `cargo oxide build --release` and runs its binary.
fn build_and_run(name: &str) {
    let dir = checkout_root().join("tests/gpu").join(name);
    // A crate that needs particular archs (e.g. sm_90 for clusters) names them in `oxide-arch`.
    let arch = std::fs::read_to_string(dir.join("oxide-arch")).ok().map(|a| a.trim().to_string());
    // One that needs extra artifacts (LTOIR) names them in `oxide-emit`.
    let emit = std::fs::read_to_string(dir.join("oxide-emit")).ok().map(|a| a.trim().to_string());
    let mut args = vec!["build", "--release"];
    if let Some(arch) = &arch {
        args.extend(["--arch", arch.as_str()]);
    }
    if let Some(emit) = &emit {
        args.extend(["--emit", emit.as_str()]);
    }
    build_with(name, &args, "release");
}

/// Builds a crate of `tests/gpu/` with `cargo oxide <args>` and runs its binary, which the build
/// made in cargo profile `profile` (`dev`, `release`).
fn build_with(name: &str, args: &[&str], profile: &str) {
    build_and_run_through(name, args, profile, None);
}

/// [`build_with`], running the binary through `bash -c '<shell>; exec "$0"'` when `shell` is given
/// (to source a script that sets its environment up first).
fn build_and_run_through(name: &str, args: &[&str], profile: &str, shell: Option<&str>) {
    let dir = checkout_root().join("tests/gpu").join(name);
    seed_lockfile(&dir);
    let out = cargo_oxide(&dir, args);
    assert_success(&out, &format!("cargo oxide {} in tests/gpu/{name}", args.join(" ")));
    let package = format!("gpu-{name}");
    let exe = artifact_dir().join(oxide_contract::naming::profile_dir(profile)).join(&package);
    // Sideloaded modules and LTOIR are read from the build's artifacts (run.sh does the same).
    let mut cmd = match shell {
        Some(shell) => {
            let mut c = std::process::Command::new("bash");
            c.arg("-c").arg(format!("{shell}; exec \"$0\"")).arg(&exe);
            c
        }
        None => std::process::Command::new(&exe),
    };
    let run = cmd
        .env("CUDA_OXIDE_ARTIFACT_DIR", device_dir(profile))
        .output()
        .unwrap_or_else(|e| panic!("run {}: {e}", exe.display()));
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

/// NVIDIA cuda-oxide's packed-half, conversion, packed-atomic and s8 `mma` names, and `ptx_asm!`.
#[test]
#[ignore = "needs a CUDA GPU"]
fn compat_half() {
    build_and_run("compat-half");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn bounds_traps() {
    build_and_run("bounds-traps");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn offset_traps() {
    build_and_run("offset-traps");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn loop_facts() {
    build_and_run("loop-facts");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn uniform_bounds() {
    build_and_run("uniform-bounds");
}

/// The clean run of the debugging crate; its planted bugs are for compute-sanitizer and cuda-gdb
/// (`tests/gpu/debugging/check.sh`, from the GPU bundle).
#[test]
#[ignore = "needs a CUDA GPU"]
fn debugging() {
    build_and_run("debugging");
}

/// A Rust kernel calling CUDA C++ device functions (cuda-sources, nvJitLink).
#[test]
#[ignore = "needs a CUDA GPU"]
fn interop_rust_calls_cpp() {
    build_and_run("interop-rust-calls-cpp");
}

/// Rust kernels calling CUB block and warp primitives (CCCL from `cargo oxide setup`).
#[test]
#[ignore = "needs a CUDA GPU"]
fn interop_cub() {
    build_and_run("interop-cub");
}

/// The Rust ⇄ CUDA C++ crates as `cargo oxide debug` builds them: full debug information, so
/// libNVVM's `-g -opt=0` and nvJitLink's `-g` (unoptimised device code) make the cubin.
#[test]
#[ignore = "needs a CUDA GPU"]
fn interop_full_debug() {
    for name in ["interop-rust-calls-cpp", "interop-cub"] {
        build_with(name, &["build", "--device-debug", "full", "--arch", "sm_90"], "dev");
    }
}

/// A CUDA C++ kernel calling Rust device functions.
#[test]
#[ignore = "needs a CUDA GPU"]
fn interop_cpp_calls_rust() {
    build_and_run("interop-cpp-calls-rust");
}

/// Built only for sm_80: the PTX JIT, and the LTOIR through nvJitLink, on a newer GPU.
#[test]
#[ignore = "needs a CUDA GPU"]
fn jit_sm80() {
    build_and_run("jit-sm80");
}

/// Built only for sm_100a: the explained CUDA_ERROR_NO_BINARY_FOR_GPU on another GPU.
#[test]
#[ignore = "needs a CUDA GPU"]
fn no_binary_sm100a() {
    build_and_run("no-binary-sm100a");
}

/// `#[launch_contract]` (prepare, requires, the u32 launch context and its views), RowWidth
/// slices, `get_mut_indexed`, `DisjointSlice::from_raw_parts`.
#[test]
#[ignore = "needs a CUDA GPU"]
fn launch_contract() {
    build_and_run("launch-contract");
}

/// NVIDIA cuda-oxide's names: `#[constant]` setters, `barrier::*` mbarriers (token, parity and
/// cluster arrivals), `cp.async.mbarrier.arrive` (sm_90).
#[test]
#[ignore = "needs a CUDA GPU (sm_90)"]
fn compat_sync() {
    build_and_run("compat-sync");
}

/// `#[cooperative_launch]`: grid::sync through the generated methods, `cuda_launch!` and a
/// prepared cluster launch; oversized grids refused with the resident capacity (sm_90).
#[test]
#[ignore = "needs a CUDA GPU (sm_90)"]
fn coop_launch() {
    build_and_run("coop-launch");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn host_compat() {
    build_and_run("host-compat");
}

/// Several GPUs, run here with one (`--devices 1`, the binary's default): async placement per
/// device, `zip!` across devices, peer and staged copies, NCCL with one rank. NCCL is found by
/// `scripts/nccl-env.sh` (`scripts/multi-gpu-check.sh` runs it on every visible GPU).
#[test]
#[ignore = "needs a CUDA GPU and NCCL"]
fn multi_gpu() {
    let env = checkout_root().join("scripts/nccl-env.sh");
    build_and_run_through(
        "multi-gpu",
        &["build", "--release"],
        "release",
        Some(&format!("source '{}'", env.display())),
    );
}

/// Pinned buffers, copies that overlap kernels, and the guide's 3-stage pipeline (speed-up ≥ 1.5×).
#[test]
#[ignore = "needs a CUDA GPU"]
fn pinned_pipeline() {
    build_and_run("pinned-pipeline");
}

/// mma.sync fragments, ldmatrix/stmatrix, mbarrier phases, elect.sync, TMA + wgmma (sm_90a).
#[test]
#[ignore = "needs a Hopper GPU (sm_90a)"]
fn tensor_ops() {
    build_and_run("tensor-ops");
}

/// Our kernels on cudarc's slices, views and streams; DeviceBuffer <-> CudaSlice without copies.
#[test]
#[ignore = "needs a CUDA GPU"]
fn interop_cudarc() {
    build_and_run("interop-cudarc");
}

/// CUDA graphs: capture, replay, kernel and whole updates, memory kept alive, refusals.
#[test]
#[ignore = "needs a CUDA GPU"]
fn graphs() {
    build_and_run("graphs");
}
