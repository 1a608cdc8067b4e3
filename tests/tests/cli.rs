//! Command-line errors that need no backend: each is one line that says what to do.
use oxide_tests::*;

fn one_line_error(args: &[&str]) -> String {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = cargo_oxide(dir.path(), args);
    assert!(!out.status.success(), "`cargo oxide {}` should fail", args.join(" "));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "expected one line, got:\n{err}");
    assert!(err.starts_with("error: "), "{err}");
    err
}

#[test]
fn unknown_arch_is_one_line() {
    let err = one_line_error(&["build", "--arch", "sm_12"]);
    assert!(err.contains("`sm_12`"), "names the bad arch: {err}");
    assert!(err.contains("sm_80") && err.contains("sm_90") && err.contains("sm_100a"), "lists known archs: {err}");
    assert!(err.contains("example: `cargo oxide build --arch"), "gives an example: {err}");
}

#[test]
fn unknown_emit_kind_is_one_line() {
    let err = one_line_error(&["build", "--arch", "sm_90", "--emit", "sass"]);
    assert!(err.starts_with("error: unknown --emit kind `sass`"), "{err}");
}

#[test]
fn arch_native_without_a_gpu_says_so() {
    let err = one_line_error(&["build", "--arch", "native", "--emit", "ptx,ltoir"]);
    assert!(!err.contains("unknown GPU architecture"), "{err}");
    if cargo_oxide::gpu::local_gpu().is_none() {
        assert!(err.starts_with("error: --arch native: no GPU found on this machine"), "{err}");
        assert!(err.contains("e.g. `--arch sm_90`"), "{err}");
    }
}

#[test]
fn bad_project_name_is_one_line() {
    let err = one_line_error(&["new", "1st"]);
    assert!(err.contains("not a valid package name"), "{err}");
}

#[test]
fn doctor_lists_every_tool() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = cargo_oxide(dir.path(), &["doctor"]);
    let text = String::from_utf8_lossy(&out.stdout);
    for item in ["toolchain", "llc", "ptxas", "fatbinary", "libNVVM", "libdevice", "oxide-rustc", "GPU"] {
        assert!(
            text.lines().any(|l| l.contains(item) && (l.starts_with('✓') || l.starts_with('✗'))),
            "{item}:\n{text}"
        );
    }
    // This machine was set up (`./x test` runs `./x setup` first), so everything needed to build is there.
    assert_success(&out, &format!("cargo oxide doctor:\n{text}"));
}

#[test]
fn bad_device_debug_level_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = cargo_oxide(dir.path(), &["build", "--device-debug", "max"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("known levels: none, lines, full"), "{}", stderr(&out));
}

#[test]
fn debug_batch_file_must_exist() {
    let err = one_line_error(&["debug", "--batch", "no-such-script.gdb"]);
    assert!(err.contains("--batch no-such-script.gdb: no such file"), "{err}");
}

/// `sanitize`, `debug` and `profile` name the missing tool and how to get it, before building.
#[test]
fn missing_debugging_tools_are_named() {
    for (args, tool) in [
        (&["profile"][..], "`ncu` (Nsight Compute) not found"),
        (&["debug"][..], "`cuda-gdb` not found"),
        (&["sanitize"][..], "`compute-sanitizer` not found"),
    ] {
        let dir = tempfile::tempdir().expect("temp dir");
        let out = cargo_oxide(dir.path(), args);
        assert!(!out.status.success(), "`cargo oxide {}` in an empty dir should fail", args.join(" "));
        let err = stderr(&out);
        if err.contains("not found") {
            assert!(err.contains(tool) && err.contains("install"), "{err}");
            assert_eq!(err.lines().count(), 1, "{err}");
        } else {
            // The tool is installed here: then the empty directory is what is wrong.
            assert!(err.contains("Cargo.toml"), "{err}");
        }
    }
}

#[test]
fn inspect_before_any_build_says_to_build_first() {
    // A package of its own, never built, in the shared target dir that holds other projects'
    // crates: inspect must not pick one of those, nor ask to name one.
    let project = TempProject::new("e2e-inspect-unbuilt", SEED_VECADD);
    let out = cargo_oxide(project.path(), &["inspect", "--release"]);
    assert!(!out.status.success(), "inspect of a package never built succeeded");
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("error: no crate of this workspace has kernels built with this profile"), "{err}");
    assert!(err.contains("run `cargo oxide build --release` first"), "{err}");
}
