//! Snapshots of generated PTX, to see that a compiler change leaves the device code alone: per
//! function, a hash of its text with what moves between builds normalised (crate
//! disambiguators, type hashes in names, the numbering of labels and local depots, comments) and
//! line information left out (it moves with every edit of the source). `tests/ptx-snapshot/<name>.txt` holds the committed snapshot of a build;
//! [`check`] compares (`BLESS=1` writes it anew); `scripts/ptx-diff.sh` does the same for a whole
//! GPU bundle through the `ptx-snapshot` binary.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// `ptx` as (function name, normalised text) pairs, the module's header first as `(header)`.
pub fn functions(ptx: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = vec![("(header)".to_string(), String::new())];
    for line in ptx.lines() {
        if let Some((_, name)) = line.split_once("// -- Begin function ") {
            out.push((normalize(name.trim()), String::new()));
        }
        let code = line.split_once("//").map_or(line, |(code, _)| code).trim_end();
        // Line information (`.loc`, `.file`, the labels that delimit inlined ranges) moves with
        // every edit of the source; the code does not.
        let trimmed = code.trim_start();
        let debug_section = trimmed.starts_with(".section") && trimmed.contains(".debug_");
        if code.is_empty() || trimmed.starts_with(".loc") || trimmed.starts_with(".file") || debug_section {
            continue;
        }
        let normalized = normalize(code);
        if ["$L__tmp#:", "$L__func_begin#:", "$L__func_end#:"].contains(&normalized.trim()) {
            continue;
        }
        let text = &mut out.last_mut().expect("a function").1;
        text.push_str(&normalized);
        text.push('\n');
    }
    out
}

/// `text` with the names that change between equivalent builds made equal.
pub fn normalize(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let digits = |mut j: usize| {
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        j
    };
    while i < b.len() {
        let rest = &text[i..];
        // `Cs<base62>_`: a crate's disambiguator in a mangled name.
        if rest.starts_with("Cs") {
            let mut j = i + 2;
            while j < b.len() && b[j].is_ascii_alphanumeric() {
                j += 1;
            }
            if j > i + 2 && b.get(j) == Some(&b'_') {
                out.push_str("Cs#_");
                i = j + 1;
                continue;
            }
        }
        // Numbered labels and depots, and a generic kernel's or a twin's 16 hex digits.
        let numbered = ["L__BB", "__local_depot", "L__tmp", "L__func_begin", "L__func_end"];
        if let Some(p) = numbered.iter().find(|p| rest.starts_with(**p)) {
            let j = digits(i + p.len());
            if j > i + p.len() {
                out.push_str(p);
                out.push('#');
                i = j;
                continue;
            }
        }
        if b[i] == b'_'
            && i + 17 <= b.len()
            && b[i + 1..i + 17].iter().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
            && b.get(i + 17).is_none_or(|c| !c.is_ascii_hexdigit())
        {
            out.push_str("_#");
            i += 17;
            continue;
        }
        let c = rest.chars().next().expect("not at the end");
        out.push(c);
        i += c.len_utf8();
    }
    out
}

/// The snapshot of `ptx`: `<hash> <function>` per function, sorted.
pub fn snapshot(ptx: &str) -> String {
    let mut lines: Vec<String> = functions(ptx)
        .into_iter()
        .map(|(name, text)| format!("{} {name}", &oxide_contract::sha256_hex(text.as_bytes())[..16]))
        .collect();
    lines.sort_by(|a, b| a[17..].cmp(&b[17..]).then(a.cmp(b)));
    lines.join("\n") + "\n"
}

/// What differs between two snapshots: functions whose text changed, that are new, that are gone.
pub fn differences(old: &str, new: &str) -> Vec<String> {
    let index = |s: &str| -> BTreeMap<String, Vec<String>> {
        let mut m: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for l in s.lines().filter(|l| l.len() > 17) {
            m.entry(l[17..].to_string()).or_default().push(l[..16].to_string());
        }
        m
    };
    let (a, b) = (index(old), index(new));
    let mut out = Vec::new();
    for (name, hashes) in &a {
        match b.get(name) {
            None => out.push(format!("gone: {name}")),
            Some(h) if h != hashes => out.push(format!("changed: {name}")),
            Some(_) => {}
        }
    }
    out.extend(b.keys().filter(|n| !a.contains_key(*n)).map(|n| format!("new: {n}")));
    out
}

/// The committed snapshot `tests/ptx-snapshot/<name>.txt`.
pub fn committed(name: &str) -> PathBuf {
    crate::checkout_root().join("tests/ptx-snapshot").join(format!("{name}.txt"))
}

/// Compares the PTX at `ptx` with the committed snapshot `name` (`BLESS=1`: writes it). On a
/// difference, the normalised PTX is left in `target/ptx-snapshot/<name>.ptx` to read.
pub fn check(name: &str, ptx: &Path) {
    let text = std::fs::read_to_string(ptx).unwrap_or_else(|e| panic!("read {}: {e}", ptx.display()));
    let now = snapshot(&text);
    let path = committed(name);
    if std::env::var("BLESS").is_ok_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().expect("a folder")).expect("create tests/ptx-snapshot");
        std::fs::write(&path, &now).expect("write the snapshot");
        return;
    }
    let before = std::fs::read_to_string(&path).unwrap_or_default();
    let diff = differences(&before, &now);
    if diff.is_empty() {
        return;
    }
    let dump = crate::bin_dir().parent().expect("target").join("ptx-snapshot").join(format!("{name}.ptx"));
    let _ = std::fs::create_dir_all(dump.parent().expect("a folder"));
    let normalized: String = functions(&text).into_iter().map(|(n, t)| format!("// {n}\n{t}")).collect();
    let _ = std::fs::write(&dump, normalized);
    panic!(
        "the PTX of {name} differs from {} ({} functions):\n{}\nthe normalised PTX is in {}; if the change is meant, \
         explain it (bench/notes.md) and write the snapshot anew with BLESS=1",
        path.display(),
        diff.len(),
        diff.join("\n"),
        dump.display()
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moving_names_are_normalised() {
        let a = "\t// .globl\tk // -- Begin function k\n$L__BB3_2: // %x\n\tmov.u32 %r1, 1; // c\n\
                 \tcall _RNvNtCsaG4J5zyACtG_4core3fmt5write;\n\t.file\t1 \"/a/src/main.rs\"\n";
        let b = "\t// .globl\tk // -- Begin function k\n$L__BB7_2: // %y\n\tmov.u32 %r1, 1;\n\
                 \tcall _RNvNtCs82hc3kVDKTt_4core3fmt5write;\n\t.file\t1 \"/b/src/main.rs\"\n\t.loc\t1 7 3\n$L__tmp4:\n";
        assert_eq!(snapshot(a), snapshot(b));
        assert_eq!(normalize("vecadd__oxide_fast_83da1b2686265c53("), "vecadd__oxide_fast_#(");
        let c = b.replace("mov.u32 %r1, 1", "mov.u32 %r1, 2");
        assert_eq!(differences(&snapshot(a), &snapshot(&c)), vec!["changed: k"]);
        assert_eq!(differences(&snapshot(a), &snapshot("")), vec!["gone: k"]);
    }
}
