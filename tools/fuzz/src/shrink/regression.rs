//! Saves a shrunk program that exposed a compiler bug as a case of the differential corpus
//! (tests/gpu/corpus/src/cases/fuzz_regressions.rs): the program as a module, a `fn(u64) -> u64`
//! case running it on the fuzz input, and a line in the corpus macro of tests/gpu/corpus/src/main.rs.
use std::path::Path;

use crate::failure::Kind;

const FILE: &str = "tests/gpu/corpus/src/cases/fuzz_regressions.rs";
const MAIN: &str = "tests/gpu/corpus/src/main.rs";
const MODS: &str = "tests/gpu/corpus/src/cases/mod.rs";

/// The start of a new `fuzz_regressions.rs`: the fuzz input every case reads.
fn header() -> String {
    let words: Vec<String> = crate::crate_writer::fuzz_input().iter().map(|w| format!("{w:#018x}")).collect();
    format!(
        "//! Regression cases found by oxide-fuzz (tools/fuzz): shrunk generated programs that once made\n\
         //! the device compiler fail (`./x fuzz shrink … --save-regression` writes them). Each module is\n\
         //! the program as shrunk; its case runs it for one seed on the fuzz input.\n\
         #![allow(warnings)]\n\n\
         /// The input every fuzz program reads (tools/fuzz/template/common.rs `input()`).\n\
         pub const INPUT: [u64; 64] = [\n    {},\n];\n",
        words.join(",\n    ")
    )
}

fn case_name(id: &str) -> String {
    format!("fuzz_{}", id.replace(|c: char| !c.is_ascii_alphanumeric(), "_"))
}

/// Appends the case; returns its corpus line. `root` is the checkout.
pub fn save(root: &Path, id: &str, kind: Kind, signature: &str, source: &str) -> Result<String, String> {
    if !kind.is_compiler_bug() {
        return Err(format!(
            "a {} failure is the generator's bug, not the compiler's: not saved in the corpus",
            kind.name()
        ));
    }
    let name = case_name(id);
    let path = root.join(FILE);
    let mut text = std::fs::read_to_string(&path).unwrap_or_else(|_| header());
    if text.contains(&format!("pub mod {name} ")) {
        return Err(format!("{name} is already in {FILE}"));
    }
    let body: String = source
        .lines()
        .filter(|l| !l.starts_with("//!"))
        .map(|l| format!("    {l}\n").replace("    \n", "\n"))
        .collect();
    text += &format!(
        "\n/// {} {signature}\npub mod {name} {{\n{body}}}\n\npub fn {name}(seed: u64) -> u64 {{\n    {name}::run(seed, &INPUT)\n}}\n",
        kind.name()
    );
    std::fs::write(&path, text).map_err(|e| format!("write {}: {e}", path.display()))?;

    let mods = root.join(MODS);
    let m = std::fs::read_to_string(&mods).map_err(|e| format!("read {}: {e}", mods.display()))?;
    if !m.contains("pub mod fuzz_regressions;") {
        let m = m.replacen("pub mod floats;", "pub mod floats;\npub mod fuzz_regressions;", 1);
        std::fs::write(&mods, m).map_err(|e| format!("write {}: {e}", mods.display()))?;
    }

    // Float cases are compared exactly: the corpus builds with contraction on, so a case whose
    // floats could fuse (`a * b + c`) must be checked with a bound or rewritten.
    let line = format!("        fuzz_regressions::{name}(u64) -> u64, 0;");
    let main = root.join(MAIN);
    let m = std::fs::read_to_string(&main).map_err(|e| format!("read {}: {e}", main.display()))?;
    let anchor = "    }\n    extra {";
    let Some(at) = m.find(anchor) else {
        return Err(format!("{MAIN}: no `extra {{` after the cases of the corpus macro"));
    };
    let m = format!("{}{line}\n{}", &m[..at], &m[at..]);
    std::fs::write(&main, m).map_err(|e| format!("write {}: {e}", main.display()))?;
    Ok(line.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_saved_case_compiles_and_is_listed() {
        let root = std::env::temp_dir().join(format!("oxide-fuzz-regression-{}", std::process::id()));
        let src = root.join("tests/gpu/corpus/src");
        std::fs::create_dir_all(src.join("cases")).unwrap();
        std::fs::write(root.join(MODS), "pub mod control;\npub mod floats;\n").unwrap();
        std::fs::write(
            root.join(MAIN),
            "corpus! {\n    cases {\n        ints::a(u8) -> u8, 0;\n    }\n    extra {\n    }\n}\n",
        )
        .unwrap();
        let program = "//! oxide-fuzz 7:9, shrunk\n#![allow(warnings)]\npub fn run(seed: u64, input: &[u64]) -> u64 {\n    let input: &[u64; 64] = input.try_into().unwrap();\n    seed ^ input[3]\n}\n";
        let line = save(&root, "7:9", Kind::Mismatch, "", program).unwrap();
        assert_eq!(line, "fuzz_regressions::fuzz_7_9(u64) -> u64, 0;");
        assert!(
            std::fs::read_to_string(root.join(MAIN))
                .unwrap()
                .contains("        fuzz_regressions::fuzz_7_9(u64) -> u64, 0;\n    }\n    extra {")
        );
        assert!(std::fs::read_to_string(root.join(MODS)).unwrap().contains("pub mod fuzz_regressions;"));
        assert!(save(&root, "7:9", Kind::Mismatch, "", program).is_err(), "saved twice");
        assert!(save(&root, "7:10", Kind::CpuPanic, "", program).is_err(), "a generator bug was saved");
        let out = std::process::Command::new("rustc")
            .args(["--edition", "2024", "--crate-type", "lib", "--emit", "metadata", "-o"])
            .arg(root.join("check.rmeta"))
            .arg(root.join(FILE))
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let _ = std::fs::remove_dir_all(&root);
    }
}
