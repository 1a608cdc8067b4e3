//! Every ```rust block of the guide (`docs/book/src/*.md`) builds through
//! `cargo oxide build --arch sm_90` (`sm_90a` for blocks using `wgmma`: [`Block::arch`]), so
//! the book cannot drift from the API.
//!
//! All blocks go into one crate (a module per block, named after its chapter and line), so one
//! build checks them all. A block is a complete piece of a program: items, and usually a
//! `fn main`. Lines starting with `# ` (or a lone `#`) are compiled but hidden in the rendered
//! book (mdBook's convention): use them for the `use` lines and set-up a snippet needs; a block's
//! crate attributes (`#![feature(f16)]`) go to the crate's root. Blocks in other languages
//! (`text`, `sh`, `toml`) are not compiled; `rust,ignore` is refused.
//!
//! Each block with a `fn main` is also built as a user would meet it: pasted whole (hidden lines
//! included, as mdBook's copy button copies them) as the `src/main.rs` of a project that
//! `cargo oxide new` made, in that template's edition, with no `allow` beyond the unused-code
//! lints of the one-crate build and every other warning denied.
use std::path::{Path, PathBuf};

use oxide_tests::*;

/// One ```rust block: where it is and the code to compile (hidden lines included).
struct Block {
    chapter: String,
    line: usize,
    code: String,
}

impl Block {
    /// Whether the block is a whole program (`fn main`, sync or `#[tokio::main] async`).
    fn has_main(&self) -> bool {
        self.code.lines().any(|l| l.starts_with("fn main(") || l.starts_with("async fn main("))
    }

    /// `ch_memory_l42`: a module name that says where the block is.
    fn module(&self) -> String {
        format!("ch_{}_l{}", self.chapter.replace('-', "_"), self.line)
    }

    /// `docs/book/src/memory.md:42`.
    fn place(&self) -> String {
        format!("docs/book/src/{}.md:{}", self.chapter, self.line)
    }

    /// The block's crate attributes (`#![feature(f16)]`) and the rest of its code.
    fn split_crate_attrs(&self) -> (Vec<&str>, String) {
        let (attrs, rest): (Vec<&str>, Vec<&str>) = self.code.lines().partition(|l| l.trim_start().starts_with("#!["));
        (attrs, rest.join("\n") + "\n")
    }

    /// The arch the block builds for: `sm_90a` when it uses an instruction only that target has
    /// (`wgmma`, `setmaxnreg`), as a reader would pass `--arch sm_90a`; else `sm_90` (clusters,
    /// TMA and mbarrier transaction counts need it).
    fn arch(&self) -> &'static str {
        let arch_specific = ["wgmma::", "setmaxnreg_"];
        if arch_specific.iter().any(|n| self.code.contains(n)) { "sm_90a" } else { "sm_90" }
    }

    /// The `cargo oxide new` template a user pasting this block starts from: `async` (cuda-async,
    /// tokio and cuda-host's `async` feature) when the block uses them, else the default.
    /// A call of a device function whose name ends in `_async` (`fence_proxy_async()`) is not
    /// the async API.
    fn template(&self) -> &'static str {
        let code = self.code.replace("fence_proxy_async(", "fence_proxy(");
        let needs_async = ["cuda_async", "tokio::", "_async(", "async fn main("];
        if needs_async.iter().any(|n| code.contains(n)) { "async" } else { "vecadd" }
    }
}

fn book_src() -> PathBuf {
    checkout_root().join("docs/book/src")
}

/// The chapters in `SUMMARY.md` order.
fn chapters() -> Vec<PathBuf> {
    let summary = std::fs::read_to_string(book_src().join("SUMMARY.md")).expect("read SUMMARY.md");
    summary
        .lines()
        .filter_map(|l| l.split_once("](").and_then(|(_, rest)| rest.split_once(')')).map(|(path, _)| path))
        .filter(|path| !path.is_empty())
        .map(|path| book_src().join(path))
        .collect()
}

/// The ```rust blocks of one chapter; panics on a `rust,ignore` (or any other rust attribute
/// that would keep a block from being compiled).
fn blocks(path: &Path) -> Vec<Block> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let chapter = path.file_stem().unwrap().to_string_lossy().into_owned();
    let mut out = Vec::new();
    let mut current: Option<Block> = None;
    let mut skipping = false;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if let Some(info) = trimmed.strip_prefix("```") {
            if skipping {
                skipping = false;
                continue;
            }
            if let Some(block) = current.take() {
                out.push(block);
                continue;
            }
            let mut attrs = info.split(',').map(str::trim);
            if attrs.next() == Some("rust") {
                let rest: Vec<&str> = attrs.collect();
                assert!(
                    rest.is_empty(),
                    "{}:{}: ```rust,{} — every Rust block of the book is compiled; make it a complete \
                     program with hidden `# ` lines, or use ```text",
                    path.display(),
                    i + 1,
                    rest.join(",")
                );
                current = Some(Block { chapter: chapter.clone(), line: i + 1, code: String::new() });
            } else {
                // A block in another language: its lines are skipped up to its closing fence.
                skipping = !skipping;
            }
            continue;
        }
        if let Some(block) = current.as_mut() {
            let code = if trimmed == "#" { "" } else { trimmed.strip_prefix("# ").unwrap_or(line) };
            block.code.push_str(code);
            block.code.push('\n');
        }
    }
    out
}

/// The generated crate's `main` and the trait that turns each block's `main` result into one.
const RUNNER: &str = r#"
trait Outcome {
    fn outcome(self) -> Result<(), String>;
}
impl Outcome for () {
    fn outcome(self) -> Result<(), String> {
        Ok(())
    }
}
impl<E: std::fmt::Debug> Outcome for Result<(), E> {
    fn outcome(self) -> Result<(), String> {
        self.map_err(|e| format!("{e:?}"))
    }
}

fn main() {
    let mut failed = 0;
    for (place, program) in PROGRAMS {
        match std::panic::catch_unwind(program) {
            Ok(Ok(())) => println!("PASS {place}"),
            Ok(Err(e)) => { failed += 1; println!("FAIL {place}: {e}") }
            Err(_) => { failed += 1; println!("FAIL {place}: panicked") }
        }
    }
    println!("{} passed, {failed} failed", PROGRAMS.len() - failed);
    std::process::exit(if failed == 0 { 0 } else { 1 });
}
"#;

/// The lints a block may leave unused: a snippet's imports and helpers need not all be used.
const UNUSED_CODE_LINTS: &str = "dead_code, unused_imports, unused_variables, unused_mut, unreachable_code";

/// The crate that holds every block: `main.rs` with one module per block.
fn book_crate(blocks: &[Block]) -> String {
    let mut main = format!(
        "// Generated by tests/tests/book.rs from docs/book/src: one module per ```rust block.\n\
         #![allow({UNUSED_CODE_LINTS}, clippy::all)]\n"
    );
    let mut crate_attrs: Vec<&str> = blocks.iter().flat_map(|b| b.split_crate_attrs().0).collect();
    crate_attrs.sort_unstable();
    crate_attrs.dedup();
    for attr in crate_attrs {
        main += attr.trim();
        main.push('\n');
    }
    main.push('\n');
    for b in blocks {
        let call = if b.has_main() {
            "pub(crate) fn book_main() -> Result<(), String> {\n    crate::Outcome::outcome(main())\n}\n"
        } else {
            ""
        };
        main += &format!(
            "/// {}\n#[rustfmt::skip]\nmod {} {{\n{}{call}}}\n\n",
            b.place(),
            b.module(),
            b.split_crate_attrs().1
        );
    }
    // Each block's `main` is called (never, at run time), so the kernel instances it launches
    // are collected and compiled for the GPU like in a real program.
    // Run on a GPU (the compile test never runs it), every block's `main` runs and prints PASS or
    // FAIL with its place.
    main += RUNNER;
    main += "const PROGRAMS: &[(&str, fn() -> Result<(), String>)] = &[\n";
    for b in blocks.iter().filter(|b| b.has_main()) {
        main += &format!("    (\"{}\", {}::book_main),\n", b.place(), b.module());
    }
    main += "];\n";
    main
}

#[test]
fn every_chapter_in_summary_exists_and_has_a_title() {
    let chapters = chapters();
    assert!(chapters.len() >= 13, "SUMMARY.md lists {} chapters", chapters.len());
    for path in chapters {
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        // A chapter owned by a file in docs/ includes it (`{{#include ../../supported-rust.md}}`).
        let included = text.trim().strip_prefix("{{#include ").and_then(|t| t.strip_suffix("}}"));
        let text = match included {
            Some(rel) => {
                let owner = path.parent().unwrap().join(rel);
                std::fs::read_to_string(&owner)
                    .unwrap_or_else(|e| panic!("{} includes {}: {e}", path.display(), owner.display()))
            }
            None => text,
        };
        assert!(text.starts_with("# "), "{} does not start with a `# Title`", path.display());
    }
}

#[test]
fn hidden_lines_are_compiled_and_other_languages_are_not() {
    let dir = tempfile::tempdir().unwrap();
    let md = dir.path().join("demo.md");
    std::fs::write(&md, "# Demo\n\n```rust\n# use a::b;\nfn main() {}\n#\n```\n\n```sh\nls\n```\n").unwrap();
    let found = blocks(&md);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].code, "use a::b;\nfn main() {}\n\n");
    assert_eq!(found[0].module(), "ch_demo_l3");
}

#[test]
fn crate_attributes_go_to_the_root_and_templates_follow_the_code() {
    let block = Block { chapter: "memory".into(), line: 7, code: "#![feature(f16)]\nuse a::b;\nfn main() {}\n".into() };
    assert_eq!(block.split_crate_attrs(), (vec!["#![feature(f16)]"], "use a::b;\nfn main() {}\n".to_string()));
    assert_eq!(block.template(), "vecadd");
    assert_eq!(block.place(), "docs/book/src/memory.md:7");
    let crate_text = book_crate(std::slice::from_ref(&block));
    let root_attr = crate_text.find("#![feature(f16)]").expect("hoisted");
    assert!(root_attr < crate_text.find("mod ch_memory_l7").expect("module"), "{crate_text}");
    assert_eq!(block.arch(), "sm_90");
    let uses_tokio = Block { code: "#[tokio::main]\nasync fn main() {}\n".into(), ..block };
    assert_eq!(uses_tokio.template(), "async");
    let uses_wgmma =
        Block { code: "unsafe { wgmma::fence() };\nmbarrier::fence_proxy_async();\n".into(), ..uses_tokio };
    assert_eq!(uses_wgmma.arch(), "sm_90a");
    assert_eq!(uses_wgmma.template(), "vecadd");
}

/// The arch of the one crate holding every block: `sm_90a` when a block needs it (its code then
/// loads on sm_90 GPUs only, as the upgrade the compiler would make anyway), else `sm_90`.
fn book_arch(blocks: &[Block]) -> &'static str {
    if blocks.iter().any(|b| b.arch() == "sm_90a") { "sm_90a" } else { "sm_90" }
}

/// Writes the crate of every block into a temp dir (and into `$OXIDE_BOOK_CRATE` when set, with
/// an `oxide-arch` file naming the arch it builds for, which scripts/gpu-bundle.sh reads) and
/// builds it; returns the dir (kept alive by the caller) after checking the build succeeded.
fn build_book_crate(extra_args: &[&str]) -> tempfile::TempDir {
    let all: Vec<Block> = chapters().iter().flat_map(|c| blocks(c)).collect();
    assert!(all.len() >= 30, "only {} Rust blocks in the book", all.len());
    let dir = tempfile::Builder::new().prefix("oxide-book-").tempdir().expect("temp dir");
    // scripts/gpu-bundle.sh keeps the crate (in this folder) to build it into the GPU bundle.
    let keep = std::env::var_os("OXIDE_BOOK_CRATE").map(std::path::PathBuf::from);
    let root = checkout_root();
    let root = root.display();
    let manifest = format!(
        "[package]\nname = \"book-blocks\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[dependencies]\n\
         cuda-device = {{ path = \"{root}/runtime/cuda-device\" }}\n\
         cuda-core = {{ path = \"{root}/runtime/cuda-core\" }}\n\
         cuda-host = {{ path = \"{root}/runtime/cuda-host\", features = [\"async\"] }}\n\
         cuda-async = {{ path = \"{root}/runtime/cuda-async\" }}\n\
         cuda-nccl = {{ path = \"{root}/runtime/cuda-nccl\" }}\n\
         tokio = {{ version = \"1\", features = [\"rt-multi-thread\", \"macros\"] }}\n\n[workspace]\n"
    );
    std::fs::write(dir.path().join("Cargo.toml"), manifest).unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/main.rs"), book_crate(&all)).unwrap();
    std::fs::write(dir.path().join("oxide-arch"), book_arch(&all)).unwrap();
    seed_lockfile(dir.path());
    if let Some(keep) = &keep {
        let _ = std::fs::remove_dir_all(keep);
        std::fs::create_dir_all(keep.join("src")).expect("create OXIDE_BOOK_CRATE");
        for file in ["Cargo.toml", "Cargo.lock", "src/main.rs", "oxide-arch"] {
            std::fs::copy(dir.path().join(file), keep.join(file)).expect("copy the book crate");
        }
    }
    let mut args = vec!["build", "--arch", book_arch(&all)];
    args.extend_from_slice(extra_args);
    let out = cargo_oxide(dir.path(), &args);
    // Errors name the module, `ch_<chapter>_l<line>`: the chapter file and the line of the fence.
    assert_success(&out, "cargo oxide build of the book's code blocks (modules are ch_<chapter>_l<line>)");
    dir
}

#[test]
fn every_rust_block_builds_through_cargo_oxide() {
    let _dir = build_book_crate(&[]);
    let manifest = read_manifest("dev", "book_blocks");
    // The generic kernel of the launching chapter, compiled for the instance its `main` launches.
    assert!(
        manifest.kernels.iter().any(|k| k.display_name().starts_with("map::<f32, {closure")),
        "{:?}",
        manifest.entries()
    );
}

/// On an sm_90 GPU (the cluster examples need sm_90, the wgmma one builds the crate for sm_90a):
/// every block with a `main` runs and succeeds.
/// The launching chapter's `cuda_launch!` example sideloads crate `vecadd`, so examples/vecadd is
/// built first, into the same target directory.
#[test]
#[ignore = "needs an NVIDIA GPU (sm_90)"]
fn every_program_of_the_book_runs_on_the_gpu() {
    let vecadd = checkout_root().join("examples/vecadd");
    let out = cargo_oxide(&vecadd, &["build", "--arch", "sm_90"]);
    assert_success(&out, "cargo oxide build of examples/vecadd");
    let _dir = build_book_crate(&[]);
    let exe = artifact_dir().join("debug/book-blocks");
    let out = std::process::Command::new(&exe).output().expect("run the book's programs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    assert!(out.status.success(), "some of the book's programs failed:\n{stdout}\n{}", stderr(&out));
    assert!(stdout.contains(" passed, 0 failed"), "{stdout}");
}

/// Each block that is a whole program, pasted into a project that `cargo oxide new` made (one
/// project per template, its `src/main.rs` replaced for each block), builds for its arch (sm_90,
/// or sm_90a for wgmma) with only the unused-code lints allowed and every other warning denied.
/// Every failing block is reported.
#[test]
fn every_program_builds_pasted_into_a_new_project() {
    let programs: Vec<Block> = chapters().iter().flat_map(|c| blocks(c)).filter(Block::has_main).collect();
    assert!(programs.len() >= 12, "only {} complete programs in the book", programs.len());
    let parent = tempfile::Builder::new().prefix("oxide-guide-").tempdir().expect("temp dir");
    let mut failures = Vec::new();
    for template in ["vecadd", "async"] {
        let name = format!("guide-{template}");
        let out = cargo_oxide(parent.path(), &["new", &name, "--template", template]);
        assert_success(&out, &format!("cargo oxide new {name} --template {template}"));
        let project = parent.path().join(&name);
        let manifest = std::fs::read_to_string(project.join("Cargo.toml")).expect("read the new Cargo.toml");
        assert!(manifest.contains("edition = \"2024\""), "the {template} template's edition changed:\n{manifest}");
        seed_lockfile(&project);
        for block in programs.iter().filter(|b| b.template() == template) {
            let main = format!("#![deny(warnings)]\n#![allow({UNUSED_CODE_LINTS})]\n{}", block.code);
            std::fs::write(project.join("src/main.rs"), main).expect("write src/main.rs");
            let out = cargo_oxide(&project, &["build", "--arch", block.arch()]);
            if !out.status.success() {
                let arch = block.arch();
                failures.push(format!("{} (template {template}, --arch {arch}):\n{}", block.place(), stderr(&out)));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} guide programs do not build as pasted:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
