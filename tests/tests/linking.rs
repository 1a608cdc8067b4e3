//! Kernel identity and linking, without a GPU: every kernel instance a binary's launch methods name
//! must be in the device code linked into it, whatever the crate layout. Each case builds a
//! binary through `cargo oxide build` and runs it with `--cpu-only`, which looks up the key of
//! every kernel it launches (`oxide_contract::naming::kernel_key`) in the bundles the binary holds
//! (`cuda_core::embedded_manifests`). The GPU runs of the same launches are `tests/gpu/identity`.
use std::path::Path;
use std::process::Command;

use oxide_tests::*;

/// A library of kernels: `op` and a generic `map`, whose instances the crate calling
/// `kernels::Module::map` compiles.
const KERNELS_LIB: &str = r#"
use cuda_device::{DisjointSlice, cuda_module, kernel, thread};

/// The runtime this library was built with, for its users (a git or registry dependency brings
/// its own copy of the runtime crates).
pub use cuda_core;

#[cuda_module]
pub mod kernels {
    use super::*;

    #[kernel]
    pub fn op(a: &[u32], mut out: DisjointSlice<u32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = out.get_mut(idx) {
            *o = a[i] + 1;
        }
    }

    #[kernel]
    pub fn map<T: Copy, F: Fn(T) -> T>(f: F, a: &[T], mut out: DisjointSlice<T>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = out.get_mut(idx) {
            *o = f(a[i]);
        }
    }
}
"#;

/// A binary using the library (as crate `kernels_dep`): its plain kernel, and its generic kernel
/// with a closure, launched from a generic helper that does not (and cannot) require `'static`.
const APP_MAIN: &str = r#"
use kernels_dep::cuda_core;
use cuda_core::oxide_contract::naming::kernel_key;

fn launch<F: Fn(u32) -> u32 + Copy>(
    m: &kernels_dep::kernels::Module,
    s: &cuda_core::CudaStream,
    f: F,
    a: &cuda_core::DeviceBuffer<u32>,
    o: &mut cuda_core::DeviceBuffer<u32>,
) -> Result<(), cuda_core::DriverError> {
    m.map(s, cuda_core::LaunchConfig::for_num_elems(a.len() as u32), f, a, o)
}

fn key_of_map<F: Fn(u32) -> u32 + Copy>(_: &F) -> u64 {
    kernel_key(&kernels_dep::kernels::map::<u32, F>)
}

fn main() {
    let offset = 5u32;
    let f = move |x: u32| x + offset;
    if std::env::args().any(|a| a == "--cpu-only") {
        let manifests = cuda_core::embedded_manifests().expect("bundles");
        for (name, key) in [("op", kernel_key(&kernels_dep::kernels::op)), ("map", key_of_map(&f))] {
            let found = manifests.iter().any(|m| m.kernel_by_key(key).is_some());
            println!("{name} {}", if found { "linked" } else { "MISSING" });
        }
        return;
    }
    let ctx = cuda_core::CudaContext::new(0).unwrap();
    let s = ctx.default_stream();
    let m = kernels_dep::kernels::load(&ctx).unwrap();
    let a = cuda_core::DeviceBuffer::from_host(&s, &[1u32; 4]).unwrap();
    let mut o = cuda_core::DeviceBuffer::<u32>::zeroed(&s, 4).unwrap();
    launch(&m, &s, f, &a, &mut o).unwrap();
}
"#;

fn runtime_deps(root: &str) -> String {
    format!(
        "cuda-device = {{ path = \"{root}/runtime/cuda-device\" }}\n\
         cuda-core = {{ path = \"{root}/runtime/cuda-core\" }}\n\
         cuda-host = {{ path = \"{root}/runtime/cuda-host\" }}\n"
    )
}

const LINTS: &str = "\n[lints.rust]\nunexpected_cfgs = { level = \"warn\", check-cfg = [\"cfg(cuda_oxide)\"] }\n";

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("create dirs");
    std::fs::write(path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}

/// The kernels library as package `kernels-dep` in `dir`.
fn write_kernels_lib(dir: &Path, root: &str) {
    let manifest = format!(
        "[package]\nname = \"kernels-dep\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[dependencies]\n{}{LINTS}",
        runtime_deps(root)
    );
    write(&dir.join("Cargo.toml"), &manifest);
    write(&dir.join("src/lib.rs"), KERNELS_LIB);
}

/// Builds the binary `app` of the project at `dir` (with `cargo oxide build` and `extra`
/// arguments) and runs it with `--cpu-only`; every kernel must be linked.
fn build_and_check(dir: &Path, what: &str, extra: &[&str]) {
    seed_lockfile(dir);
    let mut args = vec!["build", "--arch", "sm_90"];
    args.extend_from_slice(extra);
    let out = cargo_oxide(dir, &args);
    assert_success(&out, &format!("cargo oxide build ({what})"));
    let profile = if extra.contains(&"--release") { "release" } else { "debug" };
    let exe = shared_target_dir().join("oxide").join(profile).join("app");
    let run = Command::new(&exe).arg("--cpu-only").output().expect("run the app");
    let text = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{what}: {} failed: {text}", exe.display());
    assert_eq!(text.lines().collect::<Vec<_>>(), ["op linked", "map linked"], "{what}");
}

#[test]
fn kernels_of_one_package_and_of_a_path_dependency() {
    // tests/gpu/identity: two modules with a kernel `op`, the package's library and binary both
    // with kernels, a path dependency with kernels, and a generic instance with borrowing closures.
    let dir = checkout_root().join("tests/gpu/identity");
    seed_lockfile(&dir);
    let out = cargo_oxide(&dir, &["build", "--arch", "sm_90"]);
    assert_success(&out, "cargo oxide build of tests/gpu/identity");
    let exe = shared_target_dir().join("oxide/debug/gpu-identity");
    let run = Command::new(&exe).arg("--cpu-only").output().expect("run gpu-identity --cpu-only");
    let text = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success() && text.contains(" passed, 0 failed"), "{text}");
}

#[test]
fn library_as_a_workspace_member() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let root = checkout_root().display().to_string();
    write(&tmp.path().join("Cargo.toml"), "[workspace]\nresolver = \"2\"\nmembers = [\"kernels-dep\", \"app\"]\n");
    write_kernels_lib(&tmp.path().join("kernels-dep"), &root);
    let app = "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[dependencies]\n\
               kernels-dep = { path = \"../kernels-dep\" }\n";
    write(&tmp.path().join("app/Cargo.toml"), app);
    write(&tmp.path().join("app/src/main.rs"), APP_MAIN);
    build_and_check(tmp.path(), "workspace member", &[]);
}

#[test]
fn library_under_fat_lto() {
    // LTO takes an rlib's objects as the bitcode in them: the library's bundle must survive it.
    let tmp = tempfile::tempdir().expect("temp dir");
    let root = checkout_root().display().to_string();
    write(
        &tmp.path().join("Cargo.toml"),
        "[workspace]\nresolver = \"2\"\nmembers = [\"kernels-dep\", \"app\"]\n\n[profile.release]\nlto = \"fat\"\n",
    );
    write_kernels_lib(&tmp.path().join("kernels-dep"), &root);
    let app = "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[dependencies]\n\
               kernels-dep = { path = \"../kernels-dep\" }\n";
    write(&tmp.path().join("app/Cargo.toml"), app);
    write(&tmp.path().join("app/src/main.rs"), APP_MAIN);
    build_and_check(tmp.path(), "fat LTO", &["--release"]);
}

#[test]
fn library_from_a_git_repository() {
    // Not a path dependency: checked out under CARGO_HOME and built with --cap-lints, as a
    // registry dependency is.
    let tmp = tempfile::tempdir().expect("temp dir");
    let root = checkout_root().display().to_string();
    let repo = tmp.path().join("kernels-dep");
    write_kernels_lib(&repo, &root);
    let git = |args: &[&str]| {
        let out = Command::new("git").args(args).current_dir(&repo).output().expect("run git");
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    git(&["init", "-q", "-b", "main"]);
    git(&["add", "."]);
    git(&["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "kernels"]);
    let app_dir = tmp.path().join("app");
    let app = format!(
        "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[dependencies]\n\
         kernels-dep = {{ git = \"file://{}\" }}\n\n[workspace]\n",
        repo.display()
    );
    write(&app_dir.join("Cargo.toml"), &app);
    write(&app_dir.join("src/main.rs"), APP_MAIN);
    build_and_check(&app_dir, "git dependency", &[]);
}
