//! Golden-PTX helpers: build a throw-away crate for some archs, read the PTX of one arch, cut out
//! one entry's text, and run `ptxas` over every arch's PTX.
use std::path::PathBuf;

use oxide_contract::arch::Arch;
use oxide_contract::naming::files;

use crate::{TempProject, assert_success, cargo_oxide, device_dir, ptxas, remove_artifacts, stderr};

/// A crate built for `archs` in one cargo profile.
pub struct Built {
    pub project: TempProject,
    pub archs: &'static [&'static str],
    /// `dev` or `release`: where its device artifacts are.
    pub profile: &'static str,
}

impl Built {
    /// Builds `src` as package `name` for `archs` (dev profile); panics with the build's stderr on
    /// failure.
    pub fn new(name: &str, src: &str, archs: &'static [&'static str]) -> Built {
        Self::build(name, src, archs, "dev")
    }

    /// As [`Built::new`], with `--release` (the optimised code the perf checks read).
    pub fn release(name: &str, src: &str, archs: &'static [&'static str]) -> Built {
        Self::build(name, src, archs, "release")
    }

    fn build(name: &str, src: &str, archs: &'static [&'static str], profile: &'static str) -> Built {
        Self::from_project(TempProject::new(name, src), archs, profile)
    }

    /// Builds an already written project (several source files) in `profile` for `archs`.
    pub fn from_project(project: TempProject, archs: &'static [&'static str], profile: &'static str) -> Built {
        let name = project.crate_name();
        remove_artifacts(profile, &name);
        let arch_list = archs.join(",");
        let mut args = vec!["build"];
        if profile == "release" {
            args.push("--release");
        }
        args.extend(["--arch", &arch_list]);
        let out = cargo_oxide(project.path(), &args);
        assert_success(&out, &format!("cargo oxide {} ({name})", args.join(" ")));
        Built { project, archs, profile }
    }

    /// Path of the device artifact `file(crate_name)` (a name from `naming::files`).
    pub fn artifact_path(&self, file: impl FnOnce(&str) -> String) -> PathBuf {
        let crate_name = self.project.crate_name();
        device_dir(self.profile).join(&crate_name).join(file(&crate_name))
    }

    /// Path of the PTX for `arch`.
    pub fn ptx_path(&self, arch: &str) -> PathBuf {
        self.artifact_path(|c| files::ptx(c, Arch::parse(arch).expect("known arch")))
    }

    /// Path of the cubin for `arch`.
    pub fn cubin_path(&self, arch: &str) -> PathBuf {
        self.artifact_path(|c| files::cubin(c, Arch::parse(arch).expect("known arch")))
    }

    /// The PTX for `arch`.
    pub fn ptx(&self, arch: &str) -> String {
        read(&self.ptx_path(arch))
    }

    /// The LLVM IR the PTX was made from (`<crate>.ll`).
    pub fn ll(&self) -> String {
        read(&self.artifact_path(files::llvm_ir))
    }

    /// Asserts that entry `kernel` of every arch's PTX contains each of `needles`.
    pub fn assert_entry_has(&self, kernel: &str, needles: &[&str]) {
        for arch in self.archs {
            let text = self.ptx(arch);
            let body = entry(&text, kernel);
            for needle in needles {
                assert!(body.contains(needle), "{arch}: `.entry {kernel}` has no `{needle}`:\n{body}");
            }
        }
    }

    /// Asserts that entry `kernel` of every arch's PTX contains none of `needles`.
    pub fn assert_entry_lacks(&self, kernel: &str, needles: &[&str]) {
        for arch in self.archs {
            let text = self.ptx(arch);
            let body = entry(&text, kernel);
            for needle in needles {
                assert!(!body.contains(needle), "{arch}: `.entry {kernel}` has `{needle}`:\n{body}");
            }
        }
    }

    /// Runs `ptxas -arch=<arch>` on every arch's PTX.
    pub fn assert_ptxas(&self) {
        let ptxas = ptxas();
        for arch in self.archs {
            let path = self.ptx_path(arch);
            let cubin = self.project.path().join(format!("check.{arch}.cubin"));
            let out = std::process::Command::new(&ptxas)
                .arg(format!("-arch={arch}"))
                .arg(&path)
                .arg("-o")
                .arg(&cubin)
                .output()
                .expect("run ptxas");
            assert!(out.status.success(), "ptxas -arch={arch} {} failed:\n{}", path.display(), stderr(&out));
        }
    }
}

fn read(path: &std::path::Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

/// The text of entry `name` in `ptx`: from its `.entry` line to the next entry or function.
pub fn entry<'a>(ptx: &'a str, name: &str) -> &'a str {
    let start = ptx.find(&format!(".entry {name}(")).unwrap_or_else(|| panic!("no `.entry {name}` in the PTX"));
    until_next_function(&ptx[start..])
}

/// `text` up to the next `.entry` or `.func` after its first line.
fn until_next_function(text: &str) -> &str {
    let next = [".entry ", ".func "].iter().filter_map(|d| text[1..].find(d)).min();
    next.map_or(text, |e| &text[..e + 1])
}

/// A kernel's checked code and its code without checks: the unchecked twin's entry
/// (`<name>__oxide_fast_<hash>`, `pipeline/fast_twin.rs`) where the kernel has one, else the copy
/// without checks inside the kernel (empty when versioning added none).
pub fn copies(ptx: &str, name: &str) -> (String, String) {
    let kernel = entry(ptx, name);
    match ptx.find(&format!(".entry {name}__oxide_fast_")) {
        Some(start) => (kernel.to_string(), until_next_function(&ptx[start..]).to_string()),
        None => in_kernel_copies(kernel),
    }
}

/// An entry's text split into its checked copy (with the entry block) and the copy without
/// checks that `pipeline/uniform_bounds/` adds inside it (empty when it added none, or when
/// `fast_twin.rs` moved it into a twin), told apart by the IR block names `llc` writes after
/// each PTX label (`$L__BB3_2:  // %oxide.fast.start.0`).
pub fn in_kernel_copies(entry: &str) -> (String, String) {
    let (mut checked, mut fast) = (String::new(), String::new());
    let mut in_fast = false;
    for line in entry.lines() {
        if line.starts_with("$L__BB") {
            in_fast = line.contains("// %oxide.fast.");
        }
        let copy = if in_fast { &mut fast } else { &mut checked };
        copy.push_str(line);
        copy.push('\n');
    }
    (checked, fast)
}
