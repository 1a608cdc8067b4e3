//! The CI slice of the differential fuzzer (tools/fuzz): 100 generated programs (fixed seed) in one
//! crate, built through `cargo oxide build --no-fmad --arch sm_90` in release and debug, every PTX
//! checked with `ptxas`, the CPU side run in both profiles (no program may panic, both profiles must
//! compute the same checksums). A build that fails is narrowed down to the programs that make it
//! fail; any failure fails the test with the report (`./x fuzz shrink SEED:INDEX` reduces one).
//! The GPU side runs from a bundle: `./x fuzz --seed 2024 --count 100 --gpu-bundle DIR`.
use oxide_fuzz::failure::Profile;
use oxide_fuzz::generator::Features;
use oxide_fuzz::pipeline::{self, RunOpts};
use oxide_fuzz::tools::Tools;
use oxide_tests::*;

const SEED: u64 = 2024;
const COUNT: u64 = 100;

#[test]
fn fixed_seed_slice_builds_and_runs_on_the_cpu() {
    let tools = Tools::find(
        &checkout_root(),
        Some(workspace_bin("cargo-oxide")),
        Some(shared_target_dir().join("fuzz")),
        "sm_90",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let work = tempfile::Builder::new().prefix("oxide-fuzz-").tempdir().expect("temp dir");
    let opts = RunOpts {
        seed: SEED,
        count: COUNT,
        per_crate: COUNT as usize,
        profiles: vec![Profile::Release, Profile::Debug],
        work: work.path().to_path_buf(),
        features: Features::default(),
        gpu: false,
        keep: false,
    };
    let summary = pipeline::run(&tools, &opts).unwrap_or_else(|e| panic!("fuzz run: {e}"));
    let report = summary.report(&opts);
    eprintln!("{report}");
    assert!(summary.failures.is_empty(), "{report}");
}
