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
fn ltoir_is_refused_until_it_exists() {
    let err = one_line_error(&["build", "--arch", "sm_90", "--emit", "ptx,ltoir"]);
    assert!(err.starts_with("error: --emit ltoir is not supported yet"), "{err}");
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
