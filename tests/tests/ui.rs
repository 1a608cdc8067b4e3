//! Device diagnostics: each `ui/<case>.rs` is built as a crate's `src/main.rs` through
//! `cargo oxide build` and must fail. Its compiler output, normalised, must equal `ui/<case>.stderr`
//! (`BLESS=1 cargo test -p oxide-tests --test ui` rewrites those files), and every
//! `//~ ERROR <text>` comment must be matched by an error at that line of `src/main.rs` whose
//! output contains `<text>`. `OXIDE_UI_CASES=shared_,f128` runs only the cases whose names contain
//! one of the comma-separated parts.
use std::path::{Path, PathBuf};

use oxide_tests::*;

fn cases() -> Vec<PathBuf> {
    let dir = checkout_root().join("tests/ui");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .filter(|p| selected(&p.file_stem().unwrap_or_default().to_string_lossy()))
        .collect();
    cases.sort();
    cases
}

/// Whether case `stem` is among those `OXIDE_UI_CASES` asks for (all when it is unset).
fn selected(stem: &str) -> bool {
    match std::env::var("OXIDE_UI_CASES") {
        Ok(parts) => parts.split(',').any(|part| !part.is_empty() && stem.contains(part)),
        Err(_) => true,
    }
}

/// `(line, text)` of every `//~ ERROR text` annotation.
fn annotations(source: &str) -> Vec<(usize, String)> {
    source
        .lines()
        .enumerate()
        .filter_map(|(i, line)| line.split_once("//~ ERROR").map(|(_, text)| (i + 1, text.trim().to_string())))
        .collect()
}

/// Checks one case; returns what is wrong with it.
fn check(case: &Path) -> Result<(), String> {
    let stem = case.file_stem().and_then(|s| s.to_str()).expect("utf-8 case name").to_string();
    let source = std::fs::read_to_string(case).map_err(|e| format!("read {}: {e}", case.display()))?;
    let project = TempProject::new(&format!("ui-{}", stem.replace('_', "-")), &source);
    let out = cargo_oxide(project.path(), &["build", "--arch", "sm_90"]);
    let raw = stderr(&out);
    if out.status.success() {
        return Err(format!("{stem}: the build succeeded, but it must fail; stderr:\n{raw}"));
    }
    for (line, text) in annotations(&source) {
        let location = format!("src/main.rs:{line}:");
        let block = raw.split("\n\n").find(|b| b.contains(&location) && b.contains(&text));
        if block.is_none() {
            return Err(format!("{stem}: no error at {location} containing `{text}`; stderr:\n{raw}"));
        }
    }
    let actual = normalize_diagnostics(&raw, project.path());
    let expected_path = case.with_extension("stderr");
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(&expected_path, &actual).map_err(|e| format!("write {}: {e}", expected_path.display()))?;
        return Ok(());
    }
    let expected = std::fs::read_to_string(&expected_path).map_err(|_| {
        format!(
            "{stem}: {} is missing; create it with `BLESS=1 cargo test -p oxide-tests --test ui`. Actual:\n{actual}",
            expected_path.display()
        )
    })?;
    if expected != actual {
        return Err(format!(
            "{stem}: output differs from {} (bless with BLESS=1).\n--- expected\n{expected}\n--- actual\n{actual}",
            expected_path.display()
        ));
    }
    Ok(())
}

#[test]
fn device_diagnostics() {
    let cases = cases();
    assert!(!cases.is_empty(), "no cases in tests/ui");
    let failures: Vec<String> = cases.iter().filter_map(|c| check(c).err()).collect();
    assert!(failures.is_empty(), "{} of {} ui cases failed:\n\n{}", failures.len(), cases.len(), failures.join("\n\n"));
}

#[test]
fn annotations_are_found() {
    let src = "fn a() {}\nlet v = vec![1]; //~ ERROR not supported\n";
    assert_eq!(annotations(src), [(2, "not supported".to_string())]);
}

#[test]
fn normalisation_keeps_only_diagnostics() {
    let dir = Path::new("/tmp/oxide-test-abc");
    let raw = "   Compiling ui-x v0.1.0 (/tmp/oxide-test-abc)\n\
               warning: unused import: `kernel`\n --> src/main.rs:3:47\n\
               \n\
               error: `alloc::alloc::exchange_malloc` is not supported in device code\n  --> src/main.rs:11:17\n   |\n\
               \n\
               error: could not compile `ui-x` (bin \"ui-x\") due to 1 previous error\n\
               error: build failed (cargo's errors are above)\n";
    assert_eq!(
        normalize_diagnostics(raw, dir),
        "error: `alloc::alloc::exchange_malloc` is not supported in device code\n  --> src/main.rs:11:17\n   |\n"
    );
}
