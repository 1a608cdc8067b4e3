//! Golden tests of the passes after `opt`: `codegen-driver/tests/passes/<pass>/<case>.ll` in, the
//! blessed `<case>.out.ll` out (`BLESS=1 cargo test -p codegen-driver golden` writes them anew),
//! and every output verified by the pinned toolchain's `opt -passes=verify`.
//!
//! A case runs the pass its folder names, or the passes its first line lists
//! (`; passes: uniform_bounds fast_twin`), in that order, on one [`State`].

use std::path::{Path, PathBuf};

use oxide_contract::config::DeviceDebugInfo;

use super::ir::Module;
use super::passes::{STAGES, Stage, State, verify_file};

fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/passes")
}

/// The pinned toolchain's `opt` (rustup's `llvm-tools`).
fn opt() -> PathBuf {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let out = std::process::Command::new(rustc).args(["--print", "sysroot"]).output().expect("rustc runs");
    let sysroot = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    let host = std::process::Command::new("rustc").args(["-vV"]).output().expect("rustc runs");
    let host = String::from_utf8_lossy(&host.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_string))
        .expect("a host triple");
    let opt = sysroot.join("lib/rustlib").join(host).join("bin/opt");
    assert!(opt.is_file(), "{} is missing: run ./x setup (llvm-tools)", opt.display());
    opt
}

/// The passes a case runs.
fn passes_of(case: &Path, text: &str) -> Vec<String> {
    match text.lines().next().and_then(|l| l.strip_prefix("; passes:")) {
        Some(list) => list.split_whitespace().map(str::to_string).collect(),
        None => vec![case.parent().and_then(Path::file_name).expect("a pass folder").to_string_lossy().into_owned()],
    }
}

fn run_passes(names: &[String], module: &mut Module) {
    let mut state = State::new(DeviceDebugInfo::Lines);
    for name in names {
        let pass = STAGES
            .iter()
            .find_map(|s| match s {
                Stage::Pass(n, pass) if n == name => Some(pass),
                _ => None,
            })
            .unwrap_or_else(|| panic!("no pass `{name}` in passes::STAGES"));
        pass(module, &mut state);
    }
}

#[test]
fn every_pass_makes_its_blessed_output() {
    let bless = std::env::var("BLESS").is_ok_and(|v| v == "1");
    let opt = opt();
    let scratch = std::env::temp_dir().join(format!("oxide-golden-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).expect("a scratch folder");
    let mut cases: Vec<PathBuf> = Vec::new();
    for pass in std::fs::read_dir(cases_dir()).expect("tests/passes") {
        let dir = pass.expect("an entry").path();
        for case in std::fs::read_dir(&dir).expect("a pass folder") {
            let path = case.expect("an entry").path();
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            if name.ends_with(".ll") && !name.ends_with(".out.ll") {
                cases.push(path);
            }
        }
    }
    cases.sort();
    let mut failures = Vec::new();
    let mut covered: Vec<String> = Vec::new();
    for case in &cases {
        let input = std::fs::read_to_string(case).expect("readable");
        let passes = passes_of(case, &input);
        covered.extend(passes.iter().cloned());
        let mut module = Module::parse(&input);
        run_passes(&passes, &mut module);
        let out = module.to_string();
        let expected_path = case.with_extension("out.ll");
        let label = case.strip_prefix(cases_dir()).unwrap_or(case).display().to_string();
        if let Err(e) = verify_file(&opt, &passes.join("+"), &out, &scratch.join("out.ll")) {
            failures.push(format!("{label}: the output is not valid IR: {e}"));
        }
        if bless {
            std::fs::write(&expected_path, &out).expect("write the blessed output");
            continue;
        }
        match std::fs::read_to_string(&expected_path) {
            Ok(expected) if expected == out => {}
            Ok(expected) => failures.push(format!(
                "{label}: output differs from {}:\n{}",
                expected_path.display(),
                diff(&expected, &out)
            )),
            Err(_) => failures.push(format!("{label}: no {} (run with BLESS=1)", expected_path.display())),
        }
    }
    let missing: Vec<&str> = STAGES
        .iter()
        .filter_map(|s| match s {
            Stage::Pass(name, _) if !covered.iter().any(|c| c == name) => Some(*name),
            _ => None,
        })
        .collect();
    let _ = std::fs::remove_dir_all(&scratch);
    assert!(missing.is_empty(), "passes without a golden case in tests/passes: {missing:?}");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The lines of `b` that differ from `a`, as `-`/`+` lines (enough to see what changed).
fn diff(a: &str, b: &str) -> String {
    let (a, b): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    let mut out = String::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            i += 1;
            j += 1;
            continue;
        }
        // The next line of each side that the other has again, whichever is nearer.
        let next_a = (i..a.len()).find(|&k| j < b.len() && a[k] == b[j]);
        let next_b = (j..b.len()).find(|&k| i < a.len() && b[k] == a[i]);
        match (next_a, next_b) {
            (Some(k), Some(l)) if k - i <= l - j => {
                a[i..k].iter().for_each(|l| out.push_str(&format!("-{l}\n")));
                i = k;
            }
            (_, Some(l)) => {
                b[j..l].iter().for_each(|l| out.push_str(&format!("+{l}\n")));
                j = l;
            }
            (Some(k), None) => {
                a[i..k].iter().for_each(|l| out.push_str(&format!("-{l}\n")));
                i = k;
            }
            (None, None) => {
                if i < a.len() {
                    out.push_str(&format!("-{}\n", a[i]));
                    i += 1;
                }
                if j < b.len() {
                    out.push_str(&format!("+{}\n", b[j]));
                    j += 1;
                }
            }
        }
    }
    out
}
