//! The `oxide-fuzz` command line: `run`, `shrink`, `bundle`, `gen`, `features` (see README.md).
use oxide_fuzz::{bundle, crate_writer, failure, generator, pipeline, shrink, tools};

use std::path::PathBuf;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "oxide-fuzz", about = "Differential fuzzer of cuda-oxide's device compiler")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

/// Generator switches shared by every subcommand.
#[derive(clap::Args, Clone, Debug, Default)]
struct FeatureArgs {
    /// Generator features to turn on (comma separated; `oxide-fuzz features` lists them)
    #[arg(long, value_name = "NAME,...")]
    enable: Vec<String>,
    /// Generator features to turn off
    #[arg(long, value_name = "NAME,...")]
    disable: Vec<String>,
}

impl FeatureArgs {
    fn features(&self) -> Result<generator::Features, String> {
        generator::Features::with(&self.enable, &self.disable)
    }
}

/// Where the tools and outputs are.
#[derive(clap::Args, Clone, Debug)]
struct ToolArgs {
    /// The cargo-oxide to build with (default: $CARGO_OXIDE, else this checkout's target/release/cargo-oxide, else PATH)
    #[arg(long)]
    cargo_oxide: Option<PathBuf>,
    /// CARGO_TARGET_DIR of the generated crates (default: target/fuzz/cargo)
    #[arg(long)]
    target_dir: Option<PathBuf>,
    /// GPU architecture to build for
    #[arg(long, default_value = "sm_90")]
    arch: String,
}

impl ToolArgs {
    fn tools(&self) -> Result<tools::Tools, String> {
        tools::Tools::find(&checkout_root(), self.cargo_oxide.clone(), self.target_dir.clone(), &self.arch)
    }
}

#[derive(Subcommand)]
enum Cmd {
    /// Generate, build (every profile), ptxas-check and run the CPU side of programs SEED:0..COUNT
    Run {
        #[arg(long)]
        seed: u64,
        #[arg(long)]
        count: u64,
        /// Programs per crate and binary
        #[arg(long, default_value_t = 100)]
        per_crate: usize,
        /// debug, release or both
        #[arg(long, default_value = "both")]
        profile: String,
        /// Also write a GPU bundle (binaries, CPU checksums, run.sh) into this folder
        #[arg(long)]
        gpu_bundle: Option<PathBuf>,
        /// Largest part of the bundle in MiB (a bigger bundle is split into part-N/ folders)
        #[arg(long, default_value_t = 30)]
        bundle_max_mib: u64,
        /// Run the binaries on this machine's GPU as well
        #[arg(long)]
        gpu: bool,
        /// Work folder (default: target/fuzz/s<SEED>)
        #[arg(long)]
        work: Option<PathBuf>,
        /// Keep the build outputs of every crate
        #[arg(long)]
        keep: bool,
        #[command(flatten)]
        features: FeatureArgs,
        #[command(flatten)]
        tools: ToolArgs,
    },
    /// Build every prefix of a program (its first k statements of `run`, k = 0..=all) into one crate
    /// and bundle it: on the GPU, the first failing prefix names the statement where CPU and GPU part
    Localize {
        /// `SEED:INDEX`
        id: String,
        /// debug, release or both
        #[arg(long, default_value = "both")]
        profile: String,
        /// Write the GPU bundle of the prefixes into this folder
        #[arg(long)]
        gpu_bundle: Option<PathBuf>,
        /// Run the prefixes on this machine's GPU as well
        #[arg(long)]
        gpu: bool,
        #[command(flatten)]
        features: FeatureArgs,
        #[command(flatten)]
        tools: ToolArgs,
    },
    /// Shrink a failing program (a file or SEED:INDEX) while it keeps failing the same way
    Shrink {
        /// A program file, or SEED:INDEX
        target: String,
        /// The failure to keep: host-reject, cpu-panic, cpu-profiles, device-build, ptxas, mismatch (default: found out)
        #[arg(long)]
        kind: Option<String>,
        /// The profile of the device build that fails
        #[arg(long, default_value = "release")]
        profile: String,
        /// Run binaries on this machine's GPU (needed to shrink a mismatch)
        #[arg(long)]
        gpu: bool,
        /// Write the shrunk program here (default: target/fuzz/shrink/<id>/shrunk.rs)
        #[arg(long)]
        out: Option<PathBuf>,
        /// Append the shrunk program to the corpus (tests/gpu/corpus) as a regression case
        #[arg(long)]
        save_regression: bool,
        #[command(flatten)]
        features: FeatureArgs,
        #[command(flatten)]
        tools: ToolArgs,
    },
    /// Save a program reduced by hand (e.g. from `localize`, where a mismatch cannot be shrunk
    /// without a GPU here) in the corpus as a regression case, as `shrink --save-regression` does
    SaveRegression {
        /// The program file (a module with `pub fn run(seed: u64, input: &[u64; 64]) -> u64`)
        file: PathBuf,
        /// The fuzz program it came from, SEED:INDEX
        #[arg(long)]
        id: String,
        /// How it failed: device-build, ptxas or mismatch
        #[arg(long, default_value = "mismatch")]
        kind: String,
        /// One line on the symptom and the fix, kept above the case
        #[arg(long)]
        note: String,
    },
    /// Write a GPU bundle from the binaries of an earlier run (its work folder)
    Bundle {
        /// The run's work folder (target/fuzz/s<SEED>)
        #[arg(long)]
        work: PathBuf,
        /// The bundle folder to write
        #[arg(long)]
        out: PathBuf,
        /// Profiles to bundle: debug, release or both
        #[arg(long, default_value = "both")]
        profile: String,
        /// Largest part in MiB (a bigger bundle is split into part-N/ folders)
        #[arg(long, default_value_t = 30)]
        max_mib: u64,
    },
    /// Print one generated program, named `SEED:INDEX`
    Gen {
        /// `SEED:INDEX`
        id: String,
        #[command(flatten)]
        features: FeatureArgs,
    },
    /// List the generator's features
    Features,
    /// Write programs SEED:0..COUNT into a batch crate (kernels + host harness) in DIR
    BatchCrate {
        #[arg(long)]
        seed: u64,
        #[arg(long)]
        count: u64,
        #[arg(long)]
        dir: PathBuf,
        #[command(flatten)]
        features: FeatureArgs,
    },
    /// Write programs SEED:0..COUNT into a host-only crate (no device code) in DIR
    HostCrate {
        #[arg(long)]
        seed: u64,
        #[arg(long)]
        count: u64,
        #[arg(long)]
        dir: PathBuf,
        #[command(flatten)]
        features: FeatureArgs,
    },
}

use oxide_fuzz::{checkout_root, parse_id};

/// The checkout's commit, for the bundle's README (programs are named per generator version).
fn git_commit() -> String {
    std::process::Command::new("git")
        .args(["-C"])
        .arg(checkout_root())
        .args(["rev-parse", "--short", "HEAD"])
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
        .map(|s| format!("commit {s}"))
        .unwrap_or_else(|| "commit unknown".into())
}

fn mib(n: u64) -> u64 {
    n * 1024 * 1024
}

fn print_bundle(dir: &std::path::Path, info: &bundle::BundleInfo) {
    println!(
        "GPU bundle: {} ({} binaries, {:.1} MiB stripped, {:.1} MiB packed); run {}/run.sh on a GPU host",
        dir.display(),
        info.binaries,
        info.raw_bytes as f64 / 1048576.0,
        info.bytes as f64 / 1048576.0,
        dir.display()
    );
    if info.parts.len() > 1 {
        for (p, n, b) in &info.parts {
            println!("  {}: {n} binaries, {:.1} MiB (complete on its own)", p.display(), *b as f64 / 1048576.0);
        }
    }
}

fn programs(seed: u64, count: u64, f: &generator::Features) -> Vec<generator::Program> {
    (0..count).map(|i| generator::generate(seed, i, f)).collect()
}

/// Runs a subcommand; `Ok(false)` means it ran and found failures.
fn dispatch(cmd: Cmd) -> Result<bool, String> {
    match cmd {
        Cmd::Run { seed, count, per_crate, profile, gpu_bundle, bundle_max_mib, gpu, work, keep, features, tools } => {
            let profiles = failure::Profile::parse_list(&profile)?;
            let f = features.features()?;
            let tools = tools.tools()?;
            let work = work.unwrap_or_else(|| checkout_root().join("target/fuzz").join(format!("s{seed}")));
            let opts = pipeline::RunOpts {
                seed,
                count,
                per_crate: per_crate.max(1),
                profiles: profiles.clone(),
                work,
                features: f.clone(),
                gpu,
                keep,
            };
            let sum = pipeline::run(&tools, &opts)?;
            print!("{}", sum.report(&opts));
            if let Some(dir) = gpu_bundle {
                let replay = format!(
                    "./x fuzz --seed {seed} --count {count} --per-crate {per_crate}{} (generator v{}, {})",
                    f.describe_changes(),
                    generator::VERSION,
                    git_commit()
                );
                let info = bundle::write(&dir, &opts.work, &sum.batches, &profiles, &replay, mib(bundle_max_mib))?;
                print_bundle(&dir, &info);
            }
            println!("work folder: {} (failures.txt, report.txt)", opts.work.display());
            Ok(sum.failures.is_empty())
        }
        Cmd::Shrink { target, kind, profile, gpu, out, save_regression, features, tools } => {
            let kind =
                kind.map(|k| failure::Kind::parse(&k).ok_or(format!("unknown failure kind `{k}`"))).transpose()?;
            let profile = match failure::Profile::parse_list(&profile)?.as_slice() {
                [p] => *p,
                _ => return Err("--profile takes debug or release".into()),
            };
            // Without the CUDA tools only the CPU checks are possible.
            let tools = tools.tools().map_err(|e| eprintln!("note: {e}; only the CPU checks run")).ok();
            let opts = shrink::ShrinkOpts { target, kind, profile, features: features.features()?, gpu, out };
            let root = checkout_root();
            let s = shrink::shrink(tools.as_ref(), &root, &opts)?;
            println!("{}", s.summary);
            if save_regression {
                let line = shrink::regression::save(&root, &s.id, s.kind, &s.signature, &s.source)?;
                println!("saved in the corpus: {line}");
            }
            Ok(true)
        }
        Cmd::SaveRegression { file, id, kind, note } => {
            let kind = failure::Kind::parse(&kind).ok_or(format!("unknown failure kind `{kind}`"))?;
            let source = std::fs::read_to_string(&file).map_err(|e| format!("read {}: {e}", file.display()))?;
            if !source.contains("pub fn run(") {
                return Err(format!("{}: no `pub fn run(seed: u64, input: &[u64; 64]) -> u64`", file.display()));
            }
            let line = shrink::regression::save(&checkout_root(), &id, kind, &note, &source)?;
            println!("saved in the corpus: {line}");
            Ok(true)
        }
        Cmd::Bundle { work, out, profile, max_mib } => {
            let profiles = failure::Profile::parse_list(&profile)?;
            let mut batches: Vec<String> = std::fs::read_dir(work.join("bin"))
                .map_err(|e| format!("read {}/bin: {e}", work.display()))?
                .flatten()
                .filter_map(|e| e.file_name().to_string_lossy().rsplit_once('.').map(|(b, _)| b.to_string()))
                .collect();
            batches.sort();
            batches.dedup();
            let replay = format!("oxide-fuzz bundle --work {}", work.display());
            let info = bundle::write(&out, &work, &batches, &profiles, &replay, mib(max_mib))?;
            print_bundle(&out, &info);
            Ok(true)
        }
        Cmd::Localize { id, profile, gpu_bundle, gpu, features, tools } => {
            let (seed, index) = parse_id(&id)?;
            let f = features.features()?;
            let tools = tools.tools()?;
            let n = generator::generate(seed, index, &f).statements;
            let programs: Vec<_> = (0..=n).map(|k| generator::generate_prefix(seed, index, &f, Some(k))).collect();
            let profiles = failure::Profile::parse_list(&profile)?;
            let work = checkout_root().join("target/fuzz/localize").join(format!("{seed}_{index}"));
            let opts = pipeline::RunOpts {
                seed,
                count: programs.len() as u64,
                per_crate: programs.len(),
                profiles: profiles.clone(),
                work,
                features: f,
                gpu,
                keep: false,
            };
            let mut sum = pipeline::Summary { programs: opts.count, ..Default::default() };
            let name = format!("localize_{seed}_{index}");
            pipeline::run_batch(&tools, &opts, &name, programs, &mut sum)?;
            print!("{}", sum.report(&opts));
            if let Some(dir) = gpu_bundle {
                let info = bundle::write(
                    &dir,
                    &opts.work,
                    &sum.batches,
                    &profiles,
                    &format!("oxide-fuzz localize {id}"),
                    mib(30),
                )?;
                print_bundle(&dir, &info);
                println!(
                    "the first prefix that fails ({id}@K) ends with the statement where CPU and GPU part: `oxide-fuzz gen {id}@K`"
                );
            }
            Ok(sum.failures.is_empty())
        }
        Cmd::Gen { id, features } => {
            // `SEED:INDEX@K` is the program's prefix of K statements (see `localize`).
            let (id, stop) = match id.split_once('@') {
                Some((i, k)) => (i.to_string(), Some(k.parse::<usize>().map_err(|e| format!("prefix `{k}`: {e}"))?)),
                None => (id, None),
            };
            let (seed, index) = parse_id(&id)?;
            if let Some(k) = stop {
                print!("{}", generator::generate_prefix(seed, index, &features.features()?, Some(k)).source);
                return Ok(true);
            }
            print!("{}", generator::generate(seed, index, &features.features()?).source);
            Ok(true)
        }
        Cmd::Features => {
            for (name, on, what) in generator::FEATURE_LIST {
                println!("{name:<14} {:<4} {what}", if *on { "on" } else { "off" });
            }
            Ok(true)
        }
        Cmd::BatchCrate { seed, count, dir, features } => {
            let root = checkout_root();
            crate_writer::write_batch(
                &dir,
                "fuzz_batch",
                &programs(seed, count, &features.features()?),
                &root.join("runtime"),
                &root.join("Cargo.lock"),
            )?;
            Ok(true)
        }
        Cmd::HostCrate { seed, count, dir, features } => {
            crate_writer::write_host(&dir, "fuzz_host", &programs(seed, count, &features.features()?))?;
            Ok(true)
        }
    }
}

fn main() {
    match dispatch(Cli::parse().cmd) {
        Ok(true) => {}
        Ok(false) => std::process::exit(1),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
