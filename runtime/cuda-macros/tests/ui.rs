//! Compile-fail tests of the macros' diagnostics (`TRYBUILD=overwrite` re-blesses the .stderr files).

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
