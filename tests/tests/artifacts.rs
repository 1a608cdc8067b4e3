//! Device artifacts that tell the truth: one folder per profile (`<target>/oxide/<profile>/device`),
//! no files of an arch the last build did not build, missing or edited files restored by the next
//! `cargo oxide build` from what the binary embeds, and `cargo oxide inspect` reading the profile
//! it is asked for and refusing a file that differs from the manifest. `<crate>.ptx` goes beside
//! the binaries (found there by the by-file-name loader), into the source tree only when asked;
//! `inspect` picks the current package and knows a workspace's member names in a shared target dir.
use std::path::Path;

use oxide_contract::arch::Arch;
use oxide_contract::naming::files;
use oxide_tests::*;

fn ptx_path(profile: &str, crate_name: &str, arch: &str) -> std::path::PathBuf {
    device_dir(profile).join(crate_name).join(files::ptx(crate_name, Arch::parse(arch).expect("known arch")))
}

fn build(dir: &Path, args: &[&str]) {
    let mut all = vec!["build"];
    all.extend_from_slice(args);
    let out = cargo_oxide(dir, &all);
    assert_success(&out, &format!("cargo oxide {}", all.join(" ")));
}

#[test]
fn artifacts_follow_the_profile_and_the_binary() {
    let project = TempProject::new("e2e-artifacts", SEED_VECADD);
    let name = project.crate_name();
    for profile in ["dev", "release"] {
        remove_artifacts(profile, &name);
    }

    // Debug and release keep their own files.
    build(project.path(), &["--arch", "sm_80,sm_90"]);
    build(project.path(), &["--release", "--arch", "sm_90"]);
    assert!(ptx_path("dev", &name, "sm_80").is_file() && ptx_path("dev", &name, "sm_90").is_file());
    assert!(ptx_path("release", &name, "sm_90").is_file());
    assert!(!ptx_path("release", &name, "sm_80").exists(), "release was built for sm_90 only");

    // An arch no longer built leaves no file behind.
    build(project.path(), &["--arch", "sm_90"]);
    assert!(!ptx_path("dev", &name, "sm_80").exists(), "stale sm_80 PTX kept");
    assert_eq!(read_manifest("dev", &name).payloads.iter().filter(|p| p.arch == "sm_80").count(), 0);

    // A deleted or edited file comes back on the next build (cargo itself has nothing to do).
    let ptx = ptx_path("dev", &name, "sm_90");
    let original = std::fs::read(&ptx).expect("read the PTX");
    std::fs::remove_file(&ptx).expect("delete the PTX");
    build(project.path(), &["--arch", "sm_90"]);
    assert_eq!(std::fs::read(&ptx).expect("PTX restored"), original);

    // inspect reads the profile asked for, and refuses a file that is not what was built.
    let inspect = |args: &[&str]| {
        let mut all = vec!["inspect", name.as_str()];
        all.extend_from_slice(args);
        cargo_oxide(project.path(), &all)
    };
    let out = inspect(&["--release", "--ptx", "--arch", "sm_90"]);
    assert_success(&out, "cargo oxide inspect --release --ptx");
    assert_eq!(out.stdout, std::fs::read(ptx_path("release", &name, "sm_90")).expect("release PTX"));
    std::fs::write(&ptx, "// edited\n").expect("edit the PTX");
    let out = inspect(&["--ptx", "--arch", "sm_90"]);
    assert!(!out.status.success(), "inspect showed an edited PTX");
    assert!(stderr(&out).contains("differs from the one the build embedded"), "{}", stderr(&out));
    build(project.path(), &["--arch", "sm_90"]);
    assert_eq!(std::fs::read(&ptx).expect("PTX restored"), original);
}

/// A program with a kernel whose `main` prints where `load_module_from_file("<crate>.ptx")`
/// finds the file (the first of its candidates that exists; no GPU needed), or `none`.
fn finds_its_ptx(crate_name: &str) -> String {
    format!(
        "use cuda_device::{{DisjointSlice, cuda_module, kernel, thread}};\n\
         #[cuda_module]\nmod kernels {{\n    use super::*;\n    #[kernel]\n    \
         pub fn fill(v: u32, mut out: DisjointSlice<u32>) {{\n        \
         if let Some(o) = out.get_mut(thread::index_1d()) {{ *o = v; }}\n    }}\n}}\n\
         fn main() {{\n    let found = cuda_core::module_file_candidates(\"{crate_name}.ptx\".as_ref())\n        \
         .into_iter().find(|p| p.is_file());\n    \
         println!(\"{{}}\", found.map_or(\"none\".to_string(), |p| p.display().to_string()));\n}}\n"
    )
}

#[test]
fn ptx_files_go_under_target_unless_asked_for_beside_the_sources() {
    let project = TempProject::new("e2e-ptx-place", "");
    let name = project.crate_name();
    std::fs::write(project.path().join("src/main.rs"), finds_its_ptx(&name)).expect("write main.rs");
    let beside = project.path().join(format!("{name}.ptx"));
    let under_target = artifact_dir().join("debug").join(format!("{name}.ptx"));
    let _ = std::fs::remove_file(&under_target);

    // By default: beside the binaries of the profile, nothing in the source tree.
    build(project.path(), &["--arch", "sm_80,sm_90"]);
    assert!(!beside.exists(), "{} was written into the source tree", beside.display());
    let lowest = std::fs::read(ptx_path("dev", &name, "sm_80")).expect("sm_80 PTX");
    assert_eq!(std::fs::read(&under_target).expect("<crate>.ptx under target/"), lowest, "the lowest arch's PTX");

    // The by-file-name loader finds it there, run from elsewhere without CARGO_MANIFEST_DIR.
    let elsewhere = tempfile::tempdir().expect("temp dir");
    let run = std::process::Command::new(artifact_dir().join("debug").join(&project.name))
        .current_dir(elsewhere.path())
        .env_remove("CARGO_MANIFEST_DIR")
        .output()
        .expect("run the program");
    assert_success(&run, "the program");
    assert_eq!(String::from_utf8_lossy(&run.stdout).trim(), under_target.display().to_string());

    // Asked for by flag, or per package in Cargo.toml: beside Cargo.toml too, the same file.
    build(project.path(), &["--arch", "sm_80,sm_90", "--ptx-beside-sources"]);
    assert_eq!(std::fs::read(&beside).expect("<crate>.ptx beside Cargo.toml"), lowest);
    std::fs::remove_file(&beside).expect("delete it");
    let manifest = project.path().join("Cargo.toml");
    let plain = std::fs::read_to_string(&manifest).expect("read Cargo.toml");
    let with_key = format!("{plain}\n[package.metadata.cuda-oxide]\nptx-beside-sources = true\n");
    std::fs::write(&manifest, &with_key).expect("write Cargo.toml");
    build(project.path(), &["--arch", "sm_80,sm_90"]);
    assert_eq!(std::fs::read(&beside).expect("<crate>.ptx beside Cargo.toml (metadata)"), lowest);

    // Not asked for any more: the file left there is stale, and the build says so.
    std::fs::write(&manifest, &plain).expect("write Cargo.toml");
    let out = cargo_oxide(project.path(), &["build", "--arch", "sm_80,sm_90"]);
    assert_success(&out, "build without the key");
    let err = stderr(&out);
    assert!(err.contains(&format!("warning: {} is left from an older build", beside.display())), "{err}");
    assert!(err.contains("ptx-beside-sources = true"), "the warning names the setting: {err}");

    // A program that reads the file where it was built (NVIDIA's `concat!(env!("CARGO_MANIFEST_DIR"),
    // "/<crate>.ptx")`) gets it there without asking.
    std::fs::remove_file(&beside).expect("delete it");
    let reads_it = format!(
        "{}\nfn reads() -> String {{ std::fs::read_to_string(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/{name}.ptx\")).unwrap_or_default() }}\n",
        finds_its_ptx(&name)
    );
    std::fs::write(project.path().join("src/main.rs"), reads_it).expect("write main.rs");
    build(project.path(), &["--arch", "sm_80,sm_90"]);
    assert_eq!(std::fs::read(&beside).expect("<crate>.ptx beside Cargo.toml (named by the sources)"), lowest);
    std::fs::write(project.path().join("src/main.rs"), finds_its_ptx(&name)).expect("write main.rs");

    // A value that is not a boolean is refused, naming the manifest and the key.
    std::fs::write(&manifest, format!("{plain}\n[package.metadata.cuda-oxide]\nptx-beside-sources = \"yes\"\n"))
        .expect("write Cargo.toml");
    let out = cargo_oxide(project.path(), &["build", "--arch", "sm_80,sm_90"]);
    assert!(!out.status.success(), "a non-boolean ptx-beside-sources was accepted");
    assert!(stderr(&out).contains("ptx-beside-sources` must be true or false"), "{}", stderr(&out));
}

#[test]
fn inspect_takes_the_current_package_and_member_names_in_a_shared_target_dir() {
    let dir = tempfile::Builder::new().prefix("oxide-test-").tempdir().expect("temp dir");
    let out = cargo_oxide(dir.path(), &["new", "e2e-inspect-ws", "--template", "workspace"]);
    assert_success(&out, "cargo oxide new --template workspace");
    let ws = dir.path().join("e2e-inspect-ws");
    seed_lockfile(&ws);
    // Another project's crate with kernels in the shared target dir, so there is a choice.
    let other = device_dir("dev").join("e2e_inspect_someone_else");
    std::fs::create_dir_all(&other).expect("create a stand-in artifact folder");
    std::fs::write(other.join("manifest.json"), "{}").expect("write its manifest");
    build(&ws, &["--arch", "sm_90"]);

    let shows_kernels_crate = |cwd: &Path, args: &[&str]| {
        let mut all = vec!["inspect"];
        all.extend_from_slice(args);
        let out = cargo_oxide(cwd, &all);
        assert_success(&out, &format!("cargo oxide {} in {}", all.join(" "), cwd.display()));
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(text.starts_with("crate e2e_inspect_ws_kernels "), "{}:\n{text}", all.join(" "));
    };
    // No name: the workspace's one crate with kernels, from the root and from a member.
    shows_kernels_crate(&ws, &[]);
    shows_kernels_crate(&ws.join("app"), &[]);
    shows_kernels_crate(&ws.join("kernels"), &[]);
    // The kernels crate by package name, crate name and member folder.
    for name in ["e2e-inspect-ws-kernels", "e2e_inspect_ws_kernels", "kernels"] {
        shows_kernels_crate(&ws, &[name]);
    }
    // An unknown name lists this workspace's crates first.
    let out = cargo_oxide(&ws, &["inspect", "nothing-here"]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains(
            "this workspace's crates with kernels: e2e_inspect_ws_kernels (package e2e-inspect-ws-kernels in kernels/)"
        ),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&other);
}
