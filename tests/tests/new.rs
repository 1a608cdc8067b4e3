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
    let summary =
        build_template_in(template, name, &tempfile::Builder::new().prefix("oxide-new-").tempdir().expect("temp dir"));
    assert!(artifact_dir().join("debug").join(name).is_file(), "no binary {name}; stderr:\n{summary}");
    summary
}

/// [`build_template`] in `parent`, without looking for a binary.
fn build_template_in(template: &str, name: &str, parent: &tempfile::TempDir) -> String {
    let out = cargo_oxide(parent.path(), &["new", name, "--template", template]);
    assert_success(&out, &format!("cargo oxide new {name} --template {template}"));
    let project = parent.path().join(name);
    seed_lockfile(&project);
    let out = cargo_oxide(&project, &["build", "--arch", "sm_90"]);
    assert_success(&out, &format!("cargo oxide build of the {template} template"));
    stderr(&out)
}

/// The Python template builds an extension module placed under its import name, which this
/// machine's Python imports; its argument checks answer without a GPU (torch is not needed:
/// stand-ins with `__cuda_array_interface__`). The GPU check is the template's check_gpu.py,
/// run from the GPU bundle.
#[test]
fn python_template_builds_an_importable_extension() {
    let parent = tempfile::Builder::new().prefix("oxide-new-").tempdir().expect("temp dir");
    let summary = build_template_in("python", "tmpl-py", &parent);
    assert!(summary.contains("tmpl_py::kernels::scaled_add("), "{summary}");
    let module = artifact_dir().join("debug/python/tmpl_py.abi3.so");
    assert!(module.is_file(), "no {}; stderr:\n{summary}", module.display());
    assert!(summary.contains("`import tmpl_py`"), "{summary}");
    assert!(parent.path().join("tmpl-py/check_gpu.py").is_file(), "the template's GPU check is missing");
    let script = r#"
import tmpl_py
def error(*args):
    try:
        tmpl_py.scaled_add(*args)
    except Exception as e:
        return f"{type(e).__name__}: {e}"
    return "no error"
class Array:
    def __init__(self, typestr="<f4", shape=(4,), strides=None, readonly=False):
        self.__cuda_array_interface__ = dict(shape=shape, typestr=typestr, strides=strides,
                                              data=(0, readonly), version=3)
f = Array()
print(error([1.0], f, 1.0, f))
print(error(Array("<f8"), f, 1.0, f))
print(error(Array(shape=(2, 3), strides=(4, 8)), f, 1.0, f))
print(error(f, f, 1.0, Array(readonly=True)))
print(error(f, Array(shape=(5,)), 1.0, f))
"#;
    let python = std::process::Command::new("python3")
        .arg("-c")
        .arg(script)
        .env("PYTHONPATH", module.parent().expect("python dir"))
        .output()
        .unwrap_or_else(|e| panic!("python3 could not be run ({e}); install Python 3 (the CI machine has it)"));
    let text = format!("{}{}", String::from_utf8_lossy(&python.stdout), String::from_utf8_lossy(&python.stderr));
    assert!(python.status.success(), "importing the extension failed:\n{text}");
    for expected in [
        "TypeError: argument `x` is a list, not a CUDA array",
        "TypeError: argument `x` has dtype float64; this function takes float32",
        "ValueError: argument `x` is not contiguous (strides [4, 8]); pass `x.contiguous()`",
        "ValueError: argument `out` is read-only",
        "ValueError: arguments `x` and `y` must have the same shape; they have (4,) and (5,)",
    ] {
        assert!(text.contains(expected), "missing `{expected}` in:\n{text}");
    }
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
    for name in ["vecadd", "lib", "async", "workspace", "python"] {
        assert!(err.contains(name), "{err}");
    }
}
