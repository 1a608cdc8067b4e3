//! Device artifacts that tell the truth: one folder per profile (`<target>/oxide/<profile>/device`),
//! no files of an arch the last build did not build, missing or edited files restored by the next
//! `cargo oxide build` from what the binary embeds, and `cargo oxide inspect` reading the profile
//! it is asked for and refusing a file that differs from the manifest.
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
