//! Compile test: the seed's vecadd built through `cargo oxide build --arch sm_80,sm_90,sm_100a`;
//! checks the manifest, every PTX with `ptxas`, the PTX itself and the bundle in the binary.
//! One build is shared by every test in this file.
use std::path::PathBuf;
use std::sync::OnceLock;

use object::{Object, ObjectSection, ObjectSymbol};
use oxide_contract::manifest::{ParamKind, PayloadKind};
use oxide_tests::*;

const ARCHS: [&str; 3] = ["sm_80", "sm_90", "sm_100a"];

struct Built {
    project: TempProject,
    binary: PathBuf,
}

fn built() -> &'static Built {
    static BUILT: OnceLock<Built> = OnceLock::new();
    BUILT.get_or_init(|| {
        let project = TempProject::new("e2e-vecadd", SEED_VECADD);
        remove_artifacts("dev", &project.crate_name());
        let out = cargo_oxide(project.path(), &["build", "--arch", &ARCHS.join(",")]);
        assert_success(&out, "cargo oxide build --arch sm_80,sm_90,sm_100a");
        let binary = artifact_dir().join("debug").join(&project.name);
        assert!(binary.is_file(), "no binary at {}; stderr:\n{}", binary.display(), stderr(&out));
        Built { project, binary }
    })
}

fn crate_name() -> String {
    built().project.crate_name()
}

fn ptx_file(arch: &str) -> String {
    oxide_contract::naming::files::ptx(&crate_name(), oxide_contract::arch::Arch::parse(arch).expect("known arch"))
}

#[test]
fn manifest_lists_vecadd_with_its_parameter_kinds() {
    let manifest = read_manifest("dev", &crate_name());
    assert_eq!(manifest.crate_name, crate_name());
    let kernel = manifest.kernel("vecadd").unwrap_or_else(|| panic!("no kernel `vecadd` in {:?}", manifest.entries()));
    let kinds: Vec<ParamKind> = kernel.params.iter().map(|p| p.kind).collect();
    assert_eq!(kinds, [ParamKind::Slice, ParamKind::Slice, ParamKind::DisjointSlice], "{:?}", kernel.params);
    for arch in ARCHS {
        assert!(
            manifest.payloads.iter().any(|p| p.arch == arch && p.kind == PayloadKind::Ptx),
            "no PTX payload for {arch}: {:?}",
            manifest.payloads
        );
    }
}

#[test]
fn every_ptx_passes_ptxas() {
    let dir = device_dir("dev").join(crate_name());
    let ptxas = ptxas();
    for arch in ARCHS {
        let ptx = dir.join(ptx_file(arch));
        assert!(ptx.is_file(), "missing {}", ptx.display());
        let cubin = built().project.path().join(format!("check.{arch}.cubin"));
        let out = std::process::Command::new(&ptxas)
            .arg(format!("-arch={arch}"))
            .arg(&ptx)
            .arg("-o")
            .arg(&cubin)
            .output()
            .expect("run ptxas");
        assert!(out.status.success(), "ptxas -arch={arch} {} failed:\n{}", ptx.display(), stderr(&out));
    }
}

#[test]
fn ptx_has_the_entry_and_read_only_loads() {
    let dir = device_dir("dev").join(crate_name());
    for arch in ARCHS {
        let path = dir.join(ptx_file(arch));
        let ptx = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
        assert!(ptx.contains(".entry vecadd"), "{}: no `.entry vecadd`", path.display());
        assert!(ptx.contains("ld.global.nc"), "{}: `&[f32]` loads should be ld.global.nc", path.display());
    }
}

#[test]
fn binary_embeds_the_bundle() {
    let bytes = std::fs::read(&built().binary).expect("read the built binary");
    let file = object::File::parse(&*bytes).expect("parse the built binary");
    // Every bundle lies in the bundle section; this binary has one, with the kernel.
    let section = file.section_by_name(oxide_contract::naming::BUNDLE_SECTION).unwrap_or_else(|| {
        panic!("{} has no section {}", built().binary.display(), oxide_contract::naming::BUNDLE_SECTION)
    });
    let bundles = oxide_contract::bundle::parse_section(section.data().expect("section data")).expect("bundles parse");
    assert_eq!(
        bundles.len(),
        1,
        "one bundle: {:?}",
        bundles.iter().map(|b| &b.manifest.crate_name).collect::<Vec<_>>()
    );
    assert!(bundles[0].manifest.kernel("vecadd").is_some(), "embedded manifest: {:?}", bundles[0].manifest.entries());
    // Its symbol names the crate (plus its crate id), and is where the section's bundle starts.
    let prefix = format!("__cuda_oxide_bundle_{}_", crate_name());
    let sym = file
        .symbols()
        .find(|s| s.name().is_ok_and(|n| n.starts_with(&prefix)))
        .unwrap_or_else(|| panic!("{} has no symbol {prefix}…", built().binary.display()));
    assert_eq!(sym.section_index(), Some(section.index()));
}

#[test]
fn inspect_shows_the_sass_with_read_only_loads() {
    let out = cargo_oxide(built().project.path(), &["inspect", &crate_name(), "--sass", "--arch", "sm_90"]);
    assert_success(&out, "cargo oxide inspect --sass --arch sm_90");
    let sass = String::from_utf8_lossy(&out.stdout);
    // `&[f32]` parameters are noalias + readonly: ptxas turns ld.global.nc into LDG.E.CONSTANT.
    assert!(sass.contains("LDG.E.CONSTANT"), "no read-only loads in the SASS:\n{sass}");
    assert!(sass.contains("FADD"), "no FADD in the SASS:\n{sass}");
}
