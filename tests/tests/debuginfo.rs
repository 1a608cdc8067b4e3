//! Device debug information (issue 13), checked without a GPU: a release build's PTX carries
//! `.loc` lines into the user's `.rs` file, a `--device-debug full` build's DWARF names a local
//! variable, and line information leaves the machine code of the bench kernels unchanged.
use std::collections::BTreeMap;
use std::path::Path;

use object::{Object, ObjectSection};
use oxide_contract::arch::Arch;
use oxide_contract::naming::files;
use oxide_tests::*;

const ARCH: &str = "sm_90";
/// The bench kernels include wgmma (sm_90a only).
const BENCH_ARCH: &str = "sm_90a";

const KERNELS: &str = r#"
use cuda_device::{cuda_module, kernel, thread, DisjointSlice};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    pub fn prefix_dot(a: &[f32], b: &[f32], mut out: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        let mut running_total = 0.0f32;
        let mut k = 0;
        while k <= i && k < a.len() {
            running_total += a[k] * b[k]; // LINE: product
            k += 1;
        }
        if let Some(slot) = out.get_mut(idx) {
            *slot = running_total;
        }
    }
}

fn main() {}
"#;

/// The 1-based line of `main.rs` that ends with `// LINE: <tag>`.
fn line_of(tag: &str) -> usize {
    let marker = format!("// LINE: {tag}");
    KERNELS.lines().position(|l| l.trim_end().ends_with(&marker)).expect("tagged line") + 1
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

fn artifact(profile: &str, crate_name: &str, file: &str) -> Vec<u8> {
    read(&device_dir(profile).join(crate_name).join(file))
}

/// The `.file` directives of a PTX text: index → path.
fn ptx_files(ptx: &str) -> BTreeMap<u32, String> {
    ptx.lines()
        .filter_map(|l| {
            let rest = l.trim().strip_prefix(".file")?.trim();
            let (index, path) = rest.split_once(char::is_whitespace)?;
            let path = path.trim().split('"').nth(1)?;
            Some((index.parse().ok()?, path.to_string()))
        })
        .collect()
}

/// `(file index, line)` of every `.loc` directive.
fn ptx_locs(ptx: &str) -> Vec<(u32, usize)> {
    ptx.lines()
        .filter_map(|l| {
            let mut words = l.trim().strip_prefix(".loc")?.split_whitespace();
            Some((words.next()?.parse().ok()?, words.next()?.parse().ok()?))
        })
        .collect()
}

#[test]
fn release_ptx_has_lines_of_the_users_file() {
    let project = TempProject::new("e2e-debuginfo-lines", KERNELS);
    let crate_name = project.crate_name();
    remove_artifacts("release", &crate_name);
    let out = cargo_oxide(project.path(), &["build", "--release", "--arch", ARCH]);
    assert_success(&out, "cargo oxide build --release (line info)");
    let ptx = String::from_utf8(artifact("release", &crate_name, &files::ptx(&crate_name, Arch::parse(ARCH).unwrap())))
        .expect("PTX is text");

    let files = ptx_files(&ptx);
    let main_rs = project.path().join("src/main.rs");
    let main_rs = main_rs.to_str().unwrap();
    let (&main_index, _) = files
        .iter()
        .find(|(_, path)| path.as_str() == main_rs || main_rs.ends_with(&format!("/{path}")))
        .unwrap_or_else(|| panic!("no `.file` for {main_rs} in the PTX; files: {files:?}"));
    // core's and cuda_device's code, once inlined, is attributed to the user's lines.
    assert!(files.values().all(|p| p.ends_with("src/main.rs")), "`.file` outside the user's crate: {files:?}");
    let locs = ptx_locs(&ptx);
    let product = line_of("product");
    assert!(
        locs.contains(&(main_index, product)),
        "no `.loc {main_index} {product}` (the multiply-add) among {locs:?}\n{ptx}"
    );
    // Line information only: no variables and no DWARF sections in a release build.
    assert!(!ptx.contains(".section\t.debug_info") && !ptx.contains(".section .debug_info"), "{ptx}");
}

#[test]
fn full_debug_build_names_a_local_in_its_dwarf() {
    let project = TempProject::new("e2e-debuginfo-full", KERNELS);
    let crate_name = project.crate_name();
    remove_artifacts("dev", &crate_name);
    let out = cargo_oxide(project.path(), &["build", "--device-debug", "full", "--arch", ARCH]);
    assert_success(&out, "cargo oxide build --device-debug full");
    let ll = String::from_utf8(artifact("dev", &crate_name, &format!("{crate_name}.ll"))).expect("IR is text");
    assert!(ll.contains("!DILocalVariable(name: \"running_total\""), "no variable in the IR:\n{ll}");
    assert!(ll.contains("emissionKind: FullDebug"), "{ll}");

    // cuda-gdb reads the cubin's DWARF: its name of the local must be there.
    let cubin = artifact("dev", &crate_name, &files::cubin(&crate_name, Arch::parse(ARCH).unwrap()));
    let elf = object::File::parse(&*cubin).expect("cubin is ELF");
    let dwarf: Vec<u8> = elf
        .sections()
        .filter(|s| s.name().is_ok_and(|n| n.contains("debug_info") || n.contains("debug_str")))
        .flat_map(|s| s.data().map(<[u8]>::to_vec).unwrap_or_default())
        .collect();
    assert!(!dwarf.is_empty(), "the cubin has no .debug_info");
    assert!(dwarf.windows(14).any(|w| w == b"running_total\0"), "the cubin's DWARF does not name `running_total`");
}

/// The PTX's instructions and declarations without what line info adds (`.loc`, `.file`,
/// labels, comments, the DWARF sections).
fn ptx_without_debug(ptx: &str) -> Vec<&str> {
    let dwarf = ptx.find("\t.section\t.debug").unwrap_or(ptx.len());
    ptx[..dwarf]
        .lines()
        .map(str::trim)
        .filter(|l| !(l.is_empty() || l.starts_with(".loc") || l.starts_with(".file") || l.starts_with("//")))
        .filter(|l| !(l.starts_with("$L__") && l.ends_with(':')))
        .collect()
}

/// Machine code size of each kernel in a cubin (`.text.<kernel>`); SASS instructions are 16 bytes.
fn text_sizes(cubin: &[u8]) -> BTreeMap<String, u64> {
    let elf = object::File::parse(cubin).expect("cubin is ELF");
    elf.sections().filter_map(|s| Some((s.name().ok()?.strip_prefix(".text.")?.to_string(), s.size()))).collect()
}

#[test]
fn full_debug_information_describes_every_bench_kernel() {
    let project = bench_kernels_project("e2e-debuginfo-bench-full");
    let crate_name = project.crate_name();
    remove_artifacts("dev", &crate_name);
    let out = cargo_oxide(project.path(), &["build", "--device-debug", "full", "--arch", BENCH_ARCH]);
    assert_success(&out, "cargo oxide build --device-debug full (bench kernels)");
    let cubin = artifact("dev", &crate_name, &files::cubin(&crate_name, Arch::parse(BENCH_ARCH).unwrap()));
    let elf = object::File::parse(&*cubin).expect("cubin is ELF");
    assert!(elf.section_by_name(".debug_info").is_some(), "no .debug_info in the -G cubin");
}

#[test]
fn line_info_leaves_bench_sass_unchanged() {
    let project = bench_kernels_project("e2e-debuginfo-bench");
    let crate_name = project.crate_name();
    let cubin_name = files::cubin(&crate_name, Arch::parse(BENCH_ARCH).unwrap());
    let ptx_name = files::ptx(&crate_name, Arch::parse(BENCH_ARCH).unwrap());
    let mut sizes = Vec::new();
    let mut line_tables = Vec::new();
    let mut code = Vec::new();
    for level in ["none", "lines"] {
        remove_artifacts("release", &crate_name);
        force_rebuild(project.path());
        let out = cargo_oxide(project.path(), &["build", "--release", "--device-debug", level, "--arch", BENCH_ARCH]);
        assert_success(&out, &format!("cargo oxide build --release --device-debug {level} (bench kernels)"));
        let cubin = artifact("release", &crate_name, &cubin_name);
        sizes.push(text_sizes(&cubin));
        let elf = object::File::parse(&*cubin).expect("cubin is ELF");
        line_tables.push(elf.section_by_name(".debug_line").is_some());
        code.push(String::from_utf8(artifact("release", &crate_name, &ptx_name)).expect("PTX is text"));
    }
    // Our part: the same PTX instructions, line info aside.
    assert!(
        ptx_without_debug(&code[0]) == ptx_without_debug(&code[1]),
        "--device-debug lines changed the PTX instructions, not only their `.loc`s"
    );
    // ptxas's part: it may schedule a few instructions differently around `.loc`s (measured: 8 of
    // 1,520 in examples/gemm's TMA-store epilogue), never more than 1 % of a kernel.
    let (none, lines) = (&sizes[0], &sizes[1]);
    assert!(none.len() >= 8, "too few kernels in the bench cubin: {none:?}");
    assert_eq!(none.keys().collect::<Vec<_>>(), lines.keys().collect::<Vec<_>>(), "different kernels");
    for (kernel, &size) in none {
        let with_lines = lines[kernel];
        assert!(
            with_lines.abs_diff(size) * 100 <= size,
            "`{kernel}`: {size} bytes of SASS without line info, {with_lines} with: more than 1 % apart\n\
             none:  {none:?}\nlines: {lines:?}"
        );
    }
    let ptx =
        String::from_utf8(artifact("release", &crate_name, &files::ptx(&crate_name, Arch::parse(BENCH_ARCH).unwrap())))
            .expect("PTX is text");
    assert!(ptx.contains(".loc"), "the lines build has no `.loc`");
    // The bench's device code is the committed snapshot's (`tests/ptx-snapshot/`, `BLESS=1`).
    let ptx_path =
        device_dir("release").join(&crate_name).join(files::ptx(&crate_name, Arch::parse(BENCH_ARCH).unwrap()));
    ptx_snapshot::check("bench.sm_90a", &ptx_path);
    // ptxas made a line table from them (`-lineinfo`), and none without them.
    assert_eq!(line_tables, [false, true], "`.debug_line` in the cubins of none, lines");
}

/// Every corpus kernel (iterators, closures, asserts, chars, i128, …) gets a valid description:
/// `llc` and `ptxas --device-debug` accept the module. At `-O0` the panic paths that `-O3`
/// removes still call functions without a device body; they trap, as the release build would.
#[test]
fn corpus_builds_with_full_debug_information() {
    let dir = checkout_root().join("tests/gpu/corpus");
    seed_lockfile(&dir);
    let out = cargo_oxide(&dir, &["build", "--device-debug", "full", "--arch", ARCH]);
    assert_success(&out, "cargo oxide build --device-debug full (tests/gpu/corpus)");
    let cubin = artifact("dev", "gpu_corpus", &files::cubin("gpu_corpus", Arch::parse(ARCH).unwrap()));
    let elf = object::File::parse(&*cubin).expect("cubin is ELF");
    assert!(elf.section_by_name(".debug_info").is_some(), "no .debug_info in the corpus's -G cubin");
    let ll = String::from_utf8(artifact("dev", "gpu_corpus", "gpu_corpus.ll")).expect("IR is text");
    assert!(ll.matches("!DILocalVariable(").count() > 100, "few variables described in the corpus");
}
