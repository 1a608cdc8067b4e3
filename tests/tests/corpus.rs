//! The differential corpus (`tests/gpu/corpus`) without a GPU: built through `cargo oxide build
//! --release --arch sm_80,sm_90,sm_100a`, every PTX checked with `ptxas`, every case's kernel in
//! the manifest, and the binary run with `--cpu-only` (CPU reference of every case on its random
//! inputs, launch configs, embedded manifest). The GPU run is `tests/gpu.rs::corpus`.
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

use oxide_contract::arch::Arch;
use oxide_contract::naming::files;
use oxide_tests::*;

const ARCHS: [&str; 3] = ["sm_80", "sm_90", "sm_100a"];
const CRATE: &str = "gpu_corpus";

/// Builds the corpus once for every test in this file; returns its binary.
fn built() -> &'static PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let dir = checkout_root().join("tests/gpu/corpus");
        seed_lockfile(&dir);
        remove_artifacts("release", CRATE);
        force_rebuild(&dir);
        let out = cargo_oxide(&dir, &["build", "--release", "--arch", &ARCHS.join(",")]);
        assert_success(&out, "cargo oxide build --release --arch sm_80,sm_90,sm_100a in tests/gpu/corpus");
        let exe = artifact_dir().join("release").join("gpu-corpus");
        assert!(exe.is_file(), "no binary at {}; stderr:\n{}", exe.display(), stderr(&out));
        exe
    })
}

#[test]
fn every_ptx_passes_ptxas() {
    built();
    let ptxas = ptxas();
    let dir = device_dir("release").join(CRATE);
    let scratch = tempfile::tempdir().expect("temp dir");
    for arch in ARCHS {
        let ptx = dir.join(files::ptx(CRATE, Arch::parse(arch).expect("known arch")));
        assert!(ptx.is_file(), "missing {}", ptx.display());
        let out = Command::new(&ptxas)
            .arg(format!("-arch={arch}"))
            .arg(&ptx)
            .arg("-o")
            .arg(scratch.path().join(format!("{arch}.cubin")))
            .output()
            .expect("run ptxas");
        assert!(out.status.success(), "ptxas -arch={arch} {} failed:\n{}", ptx.display(), stderr(&out));
    }
}

/// The corpus's PTX for sm_90 is the committed snapshot's (`tests/ptx-snapshot/`): a compiler
/// change that changes device code shows which kernels, to be explained and measured before the
/// snapshot is written anew (`BLESS=1`).
#[test]
fn ptx_matches_the_committed_snapshot() {
    built();
    let ptx = device_dir("release").join(CRATE).join(files::ptx(CRATE, Arch::parse("sm_90").expect("known arch")));
    ptx_snapshot::check("corpus.sm_90", &ptx);
}

#[test]
fn manifest_has_at_least_60_kernels() {
    built();
    let manifest = read_manifest("release", CRATE);
    assert!(manifest.kernels.len() >= 60, "only {} kernels: {:?}", manifest.kernels.len(), manifest.entries());
    for entry in ["i128_mul_div", "f64_trig", "drop_glue", "recursion", "other_crate", "affine"] {
        assert!(manifest.kernel(entry).is_some(), "no kernel `{entry}` in {:?}", manifest.entries());
    }
}

#[test]
fn cpu_side_passes() {
    let exe = built();
    let out = Command::new(exe).arg("--cpu-only").env("CORPUS_SEED", "4").output().expect("run gpu-corpus --cpu-only");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "gpu-corpus --cpu-only failed:\n{stdout}{}", stderr(&out));
    assert!(stdout.contains(" 0 failed"), "no summary line:\n{stdout}");
    assert!(!stdout.contains("no embedded device code"), "the binary carries no device bundle:\n{stdout}");
}
