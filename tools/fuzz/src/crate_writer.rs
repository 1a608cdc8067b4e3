//! Writes generated programs into cargo crates: a batch crate (one `#[kernel]` wrapper per program,
//! the same functions called on the host, the harness of template/) that `cargo oxide build`
//! compiles, or a host-only crate (no device code, plain `cargo build`) for fast CPU checks.
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::generator::Program;

const HARNESS: &str = include_str!("../template/harness.rs");
// The same file, compiled here too: the shrinker's regression cases embed the input.
#[path = "../template/common.rs"]
#[allow(dead_code)]
mod common;
const COMMON: &str = include_str!("../template/common.rs");

/// `programs/mod.rs` always has this: the per-thread seed, also computed on the device.
const THREAD_SEED: &str = "\
/// The seed of thread `i`: edge values for the first threads, mixed bits after.
pub fn thread_seed(i: usize) -> u64 {
    match i {
        0 => 0,
        1 => u64::MAX,
        2 => 1,
        3 => 1 << 63,
        4 => 0x7fff_ffff,
        _ => {
            let mut z = (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }
    }
}
";

/// The input every generated program reads.
pub fn fuzz_input() -> Vec<u64> {
    common::input()
}

/// The module name of the `k`-th program of a crate.
pub fn module_name(k: usize) -> String {
    format!("p{k:04}")
}

/// A program's file inside a batch crate.
pub fn program_path(crate_dir: &Path, k: usize) -> PathBuf {
    crate_dir.join("src/programs").join(format!("{}.rs", module_name(k)))
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("create {}: {e}", dir.display()))?;
    }
    // Unchanged files keep their mtime, so cargo does not rebuild what it has.
    if std::fs::read_to_string(path).is_ok_and(|old| old == text) {
        return Ok(());
    }
    std::fs::write(path, text).map_err(|e| format!("write {}: {e}", path.display()))
}

/// `Cargo.toml`; `runtime` is the checkout's `runtime/` for a batch crate, `None` for host-only.
fn manifest(name: &str, runtime: Option<&Path>) -> String {
    let mut m = format!(
        "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2024\"\npublish = false\n\n[dependencies]\n"
    );
    if let Some(rt) = runtime {
        for dep in ["cuda-device", "cuda-core", "cuda-host"] {
            let _ = writeln!(m, "{dep} = {{ path = \"{}\" }}", rt.join(dep).display());
        }
    }
    // Generated code is not linted; overflow checks follow the profile (on in debug).
    m += "\n[lints.rust]\nunexpected_cfgs = { level = \"allow\" }\n\n";
    m += "# A crate of its own, built by oxide-fuzz through `cargo oxide build`.\n[workspace]\n";
    m
}

fn programs_mod(programs: &[Program]) -> String {
    let mut s = String::from("//! The generated programs of this crate (oxide-fuzz).\n");
    for k in 0..programs.len() {
        let _ = writeln!(s, "pub mod {};", module_name(k));
    }
    s.push('\n');
    s + THREAD_SEED
}

fn write_programs(dir: &Path, programs: &[Program]) -> Result<(), String> {
    write(&dir.join("src/programs/mod.rs"), &programs_mod(programs))?;
    for (k, p) in programs.iter().enumerate() {
        write(&program_path(dir, k), &p.source)?;
    }
    // Programs of an earlier, larger batch in the same directory must not linger.
    if let Ok(entries) = std::fs::read_dir(dir.join("src/programs")) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let keep = name == "mod.rs" || (0..programs.len()).any(|k| name == format!("{}.rs", module_name(k)));
            if !keep {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
    Ok(())
}

/// A batch crate `name` in `dir`: programs as kernels and as host functions, one binary.
pub fn write_batch(
    dir: &Path,
    name: &str,
    programs: &[Program],
    runtime: &Path,
    lockfile: &Path,
) -> Result<(), String> {
    write(&dir.join("Cargo.toml"), &manifest(name, Some(runtime)))?;
    if !dir.join("Cargo.lock").exists() {
        // The workspace's versions of the dependencies: no registry look-up, shared artifacts.
        let _ = std::fs::copy(lockfile, dir.join("Cargo.lock"));
    }
    write(&dir.join("src/harness.rs"), HARNESS)?;
    write(&dir.join("src/common.rs"), COMMON)?;
    write_programs(dir, programs)?;
    let mut kernels = String::new();
    let mut table = String::new();
    for (k, p) in programs.iter().enumerate() {
        let m = module_name(k);
        let _ = write!(
            kernels,
            "\n    #[kernel]\n    pub fn {m}(input: &[u64], mut out: DisjointSlice<u64>) {{\n        let idx = thread::index_1d();\n        let i = idx.get();\n        if let Some(slot) = out.get_mut(idx) {{\n            *slot = crate::programs::{m}::run(crate::programs::thread_seed(i), input);\n        }}\n    }}\n"
        );
        let _ = writeln!(
            table,
            "    harness::Program {{ id: \"{}\", cpu: programs::{m}::run, gpu: |m, s, c, i, o| m.{m}(s, c, i, o) }},",
            p.id
        );
    }
    let main = format!(
        "//! oxide-fuzz batch `{name}`: {} generated programs, each run on the CPU and, through a `#[kernel]`\n\
         //! wrapper, on the GPU (generated by oxide-fuzz, do not edit).\n\
         #![allow(warnings)]\n\nmod common;\nmod harness;\nmod programs;\n\nuse cuda_device::cuda_module;\n\n\
         #[cuda_module]\npub mod kernels {{\n    use cuda_device::{{DisjointSlice, kernel, thread}};\n{kernels}}}\n\n\
         static PROGRAMS: &[harness::Program<kernels::Module>] = &[\n{table}];\n\n\
         fn main() {{\n    harness::main(PROGRAMS, kernels::load)\n}}\n",
        programs.len()
    );
    write(&dir.join("src/main.rs"), &main)
}

/// A host-only crate `name` in `dir`: prints `CPU-OK id digest` or `FAIL id: cpu panicked: …`
/// per program; exits 1 if any panicked.
pub fn write_host(dir: &Path, name: &str, programs: &[Program]) -> Result<(), String> {
    write(&dir.join("Cargo.toml"), &manifest(name, None))?;
    write(&dir.join("src/common.rs"), COMMON)?;
    write_programs(dir, programs)?;
    let mut table = String::new();
    for (k, p) in programs.iter().enumerate() {
        let _ = writeln!(table, "    (\"{}\", programs::{}::run),", p.id, module_name(k));
    }
    let main = format!(
        "//! oxide-fuzz host check `{name}`: the CPU side of {} generated programs, without device code\n\
         //! (generated by oxide-fuzz, do not edit).\n#![allow(warnings)]\n\nmod common;\nmod programs;\n\n\
         static PROGRAMS: &[(&str, fn(u64, &[u64]) -> u64)] = &[\n{table}];\n\n\
         fn main() {{\n    std::panic::set_hook(Box::new(|_| {{}}));\n    let input = common::input();\n    let mut failed = 0;\n    \
         for (id, run) in PROGRAMS {{\n        match common::cpu_sums(*run, programs::thread_seed, &input) {{\n            \
         Ok(s) => println!(\"CPU-OK {{id}} {{:016x}}\", common::digest(&s)),\n            \
         Err(m) => {{\n                failed += 1;\n                println!(\"FAIL {{id}}: cpu panicked: {{m}}\");\n            }}\n        }}\n    }}\n    \
         std::process::exit(if failed == 0 {{ 0 }} else {{ 1 }});\n}}\n",
        programs.len()
    );
    write(&dir.join("src/main.rs"), &main)
}
