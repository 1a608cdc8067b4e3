//! Helpers for the end-to-end tests: find this workspace's `cargo-oxide` and `oxide-rustc`, make
//! throw-away projects with path dependencies into this checkout, and build them through `cargo oxide`.
//!
//! Every project builds into one shared target directory (`target/oxide-tests`), so the runtime
//! crates and their dependencies compile once per checkout, not once per test.
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use oxide_contract::manifest::Manifest;

pub mod ptx;
pub mod ptx_snapshot;

/// The cuda-oxide checkout these tests belong to.
pub fn checkout_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ has a parent").to_path_buf()
}

/// `target/<profile>/`, where cargo put this test's own binary (`…/deps/<test>-<hash>`) and the
/// workspace's binaries.
pub fn bin_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("path of the test binary");
    exe.parent().and_then(Path::parent).expect("test binary lives in target/<profile>/deps").to_path_buf()
}

/// A binary of this workspace, built before the tests run (`./x test` does that).
pub fn workspace_bin(name: &str) -> PathBuf {
    let path = bin_dir().join(name);
    assert!(
        path.is_file(),
        "{} is missing: build it first with `cargo build -p cargo-oxide -p codegen-driver` (`./x test` does this)",
        path.display()
    );
    path
}

/// The target directory every test project builds into.
pub fn shared_target_dir() -> PathBuf {
    bin_dir().parent().expect("target/<profile> has a parent").join("oxide-tests")
}

/// `<shared target>/oxide`: cargo-oxide's target and artifact directory for test projects.
pub fn artifact_dir() -> PathBuf {
    shared_target_dir().join("oxide")
}

/// The device artifacts of one profile (`dev`, `release`): `<artifact_dir>/<profile dir>/device`.
pub fn device_dir(profile: &str) -> PathBuf {
    oxide_contract::naming::device_artifact_dir(&artifact_dir(), profile)
}

/// A throw-away cargo project that depends on this checkout's runtime crates.
pub struct TempProject {
    pub dir: tempfile::TempDir,
    pub name: String,
}

impl TempProject {
    /// A binary package `name` whose `src/main.rs` is `main_rs`.
    pub fn new(name: &str, main_rs: &str) -> TempProject {
        let dir = tempfile::Builder::new().prefix("oxide-test-").tempdir().expect("create a temp dir");
        let root = checkout_root();
        let root = root.display();
        let manifest = format!(
            "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[dependencies]\n\
             cuda-device = {{ path = \"{root}/runtime/cuda-device\" }}\n\
             cuda-core = {{ path = \"{root}/runtime/cuda-core\" }}\n\
             cuda-host = {{ path = \"{root}/runtime/cuda-host\" }}\n\n[workspace]\n"
        );
        std::fs::write(dir.path().join("Cargo.toml"), manifest).expect("write Cargo.toml");
        std::fs::create_dir_all(dir.path().join("src")).expect("create src/");
        std::fs::write(dir.path().join("src/main.rs"), main_rs).expect("write src/main.rs");
        seed_lockfile(dir.path());
        TempProject { dir, name: name.to_string() }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The crate name (`-` → `_`), as used for artifact directories and bundle symbols.
    pub fn crate_name(&self) -> String {
        self.name.replace('-', "_")
    }
}

/// Copies the workspace's `Cargo.lock` into a project that has none, so it resolves to the same
/// dependency versions (shared build artifacts, no registry look-up).
pub fn seed_lockfile(project: &Path) {
    let lock = checkout_root().join("Cargo.lock");
    let dest = project.join("Cargo.lock");
    if lock.is_file() && !dest.exists() {
        let _ = std::fs::copy(lock, dest);
    }
}

/// Runs `cargo oxide <args>` in `dir` with the shared target directory.
pub fn cargo_oxide(dir: &Path, args: &[&str]) -> Output {
    Command::new(workspace_bin("cargo-oxide"))
        .arg("oxide")
        .args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", shared_target_dir())
        .env_remove("RUSTC_WRAPPER")
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .output()
        .expect("run cargo-oxide")
}

/// Text of a command's stderr.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Panics with the whole stderr unless the command succeeded.
pub fn assert_success(out: &Output, what: &str) {
    assert!(out.status.success(), "{what} failed ({}); its stderr:\n{}", out.status, stderr(out));
}

/// `manifest.json` of a crate built with `profile`.
pub fn read_manifest(profile: &str, crate_name: &str) -> Manifest {
    let path = device_dir(profile).join(crate_name).join("manifest.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    Manifest::from_json(&text).unwrap_or_else(|e| panic!("parse {}: {e}", path.display()))
}

/// Removes a crate's artifacts from an earlier run, so what the test reads was made by this one.
pub fn remove_artifacts(profile: &str, crate_name: &str) {
    let _ = std::fs::remove_dir_all(device_dir(profile).join(crate_name));
}

/// Makes cargo recompile the crate in `dir` (its `src/main.rs` gets a new mtime), so that device
/// artifacts removed with [`remove_artifacts`] are written again even if cargo thought it fresh.
pub fn force_rebuild(dir: &Path) {
    let main = dir.join("src/main.rs");
    let file =
        std::fs::File::options().append(true).open(&main).unwrap_or_else(|e| panic!("open {}: {e}", main.display()));
    file.set_modified(std::time::SystemTime::now()).unwrap_or_else(|e| panic!("touch {}: {e}", main.display()));
}

/// The `ptxas` cargo-oxide builds with; panics with the fix when there is none.
pub fn ptxas() -> PathBuf {
    cargo_oxide::tools::CudaTools::find()
        .ptxas
        .expect("ptxas not found: run `./x setup` (or `cargo oxide setup`) to install the CUDA tools")
}

/// The seed's vecadd example (launching-kernels chapter), as users write it.
pub const SEED_VECADD: &str = include_str!("../../examples/vecadd/src/main.rs");

/// Keeps only the compiler's errors from a build's stderr (warnings depend on more than the
/// device backend), with machine-specific paths replaced (`$DIR` for the project, `$OXIDE` for this checkout), for expected-output files.
pub fn normalize_diagnostics(stderr: &str, project: &Path) -> String {
    let mut text = stderr.to_string();
    let mut dirs = vec![(project.to_path_buf(), "$DIR")];
    if let Ok(canonical) = project.canonicalize() {
        dirs.insert(0, (canonical, "$DIR"));
    }
    dirs.push((checkout_root(), "$OXIDE"));
    for (path, name) in dirs {
        text = text.replace(&path.display().to_string(), name);
    }
    // A diagnostic is a block from its `error…` line to the next blank line; cargo's own
    // `error: could not compile …` and cargo-oxide's closing line are not diagnostics.
    let mut out = Vec::new();
    let mut in_block = false;
    for line in text.lines() {
        if line.starts_with("error") || line.starts_with("warning") {
            in_block = line.starts_with("error")
                && !line.starts_with("error: could not compile")
                && !line.starts_with("error: build failed");
        } else if line.trim().is_empty() {
            if in_block {
                out.push(String::new());
            }
            in_block = false;
            continue;
        }
        if in_block {
            out.push(line.trim_end().to_string());
        }
    }
    format!("{}\n", out.join("\n").trim())
}

/// A crate of the bench's kernels: `src/kernels.rs` (vector and half types, shared arrays,
/// `cp.async`, closures, `#[unroll]`, `#[fast_math]`) and the three GEMM examples' kernels it also
/// times (`mma.sync`, `ldmatrix`, TMA, wgmma, mbarriers, clusters; examples/gemm on `cuda_device::tile`).
pub fn bench_kernels_project(name: &str) -> TempProject {
    let project = TempProject::new(name, "mod gemm;\nmod gemm_mma;\nmod gemm_wgmma_tma;\nmod kernels;\nfn main() {}\n");
    for (file, text) in [
        ("kernels.rs", include_str!("../../bench/src/kernels.rs")),
        ("gemm.rs", include_str!("../../examples/gemm/src/lib.rs")),
        ("gemm_mma.rs", include_str!("../../examples/gemm-mma/src/lib.rs")),
        ("gemm_wgmma_tma.rs", include_str!("../../examples/gemm-wgmma-tma/src/lib.rs")),
    ] {
        std::fs::write(project.path().join("src").join(file), text).unwrap_or_else(|e| panic!("write src/{file}: {e}"));
    }
    project
}
