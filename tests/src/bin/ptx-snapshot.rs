//! `ptx-snapshot save|compare <artifact dir> <snapshot dir>`: snapshots of every PTX file a build
//! wrote (`<artifact dir>/<profile>/device/<crate>/*.ptx`), or a comparison with earlier ones
//! (`oxide_tests::ptx_snapshot` says what is normalised). `scripts/ptx-diff.sh` runs it.
use std::path::{Path, PathBuf};

use oxide_tests::ptx_snapshot::{differences, functions, snapshot};

fn ptx_files(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let dirs = |p: &Path| std::fs::read_dir(p).into_iter().flatten().flatten().map(|e| e.path()).collect::<Vec<_>>();
    for profile in dirs(root) {
        for krate in dirs(&profile.join("device")) {
            out.extend(dirs(&krate).into_iter().filter(|f| f.extension().is_some_and(|e| e == "ptx")));
        }
    }
    out.sort();
    out
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [mode, src, snaps] = &args[..] else {
        eprintln!("usage: ptx-snapshot save|compare <artifact dir> <snapshot dir>");
        std::process::exit(2);
    };
    let (src, snaps) = (Path::new(src), Path::new(snaps));
    let (mut n, mut bad) = (0, 0);
    for ptx in ptx_files(src) {
        let rel = ptx.strip_prefix(src).expect("below the artifact dir");
        let text = std::fs::read_to_string(&ptx).unwrap_or_else(|e| panic!("read {}: {e}", ptx.display()));
        let snap = snaps.join(rel).with_extension("ptx.txt");
        let normalized = snaps.join(rel).with_extension("ptx.normalized");
        let full: String = functions(&text).into_iter().map(|(f, t)| format!("// {f}\n{t}")).collect();
        n += 1;
        match mode.as_str() {
            "save" => {
                std::fs::create_dir_all(snap.parent().expect("a folder")).expect("create the snapshot folder");
                std::fs::write(&snap, snapshot(&text)).expect("write a snapshot");
                std::fs::write(&normalized, full).expect("write a snapshot");
            }
            "compare" => {
                let before = std::fs::read_to_string(&snap).unwrap_or_default();
                let diff = differences(&before, &snapshot(&text));
                if !diff.is_empty() {
                    bad += 1;
                    let now = normalized.with_extension("now");
                    let _ = std::fs::write(&now, full);
                    println!(
                        "DIFFERS: {} ({}; `diff {} {}`)",
                        rel.display(),
                        diff.join(", "),
                        normalized.display(),
                        now.display()
                    );
                }
            }
            _ => {
                eprintln!("unknown mode `{mode}`: save or compare");
                std::process::exit(2);
            }
        }
    }
    match mode.as_str() {
        "save" => println!("saved {n} PTX snapshots to {}", snaps.display()),
        _ => println!("{n} PTX files compared, {bad} differ"),
    }
    if bad > 0 {
        std::process::exit(1);
    }
}
