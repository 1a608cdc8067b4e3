//! `oxide-fuzz`: differential fuzzing of cuda-oxide's device compiler. Generates random,
//! well-defined Rust programs, builds them through `cargo oxide build` as kernels and as plain host
//! functions in one binary per batch, runs the host side, checks every PTX with `ptxas`, and packs a
//! GPU bundle whose `run.sh` compares GPU checksums with the CPU's. See README.md.
mod bundle;
mod crate_writer;
mod failure;
mod generator;
mod pipeline;
mod rng;
mod tools;

use std::path::{Path, PathBuf};

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "oxide-fuzz",
    about = "Differential fuzzer of cuda-oxide's device compiler"
)]
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
        tools::Tools::find(
            &checkout_root(),
            self.cargo_oxide.clone(),
            self.target_dir.clone(),
            &self.arch,
        )
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

/// The cuda-oxide checkout this binary was built from.
fn checkout_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap_or_else(|_| PathBuf::from("."))
}

/// Parses `SEED:INDEX`.
pub fn parse_id(id: &str) -> Result<(u64, u64), String> {
    let (s, i) = id
        .split_once(':')
        .ok_or_else(|| format!("`{id}` is not SEED:INDEX"))?;
    let s = s.parse().map_err(|e| format!("seed `{s}`: {e}"))?;
    let i = i.parse().map_err(|e| format!("index `{i}`: {e}"))?;
    Ok((s, i))
}

fn programs(seed: u64, count: u64, f: &generator::Features) -> Vec<generator::Program> {
    (0..count)
        .map(|i| generator::generate(seed, i, f))
        .collect()
}

/// Runs a subcommand; `Ok(false)` means it ran and found failures.
fn dispatch(cmd: Cmd) -> Result<bool, String> {
    match cmd {
        Cmd::Run {
            seed,
            count,
            per_crate,
            profile,
            gpu_bundle,
            gpu,
            work,
            keep,
            features,
            tools,
        } => {
            let profiles = failure::Profile::parse_list(&profile)?;
            let f = features.features()?;
            let tools = tools.tools()?;
            let work = work
                .unwrap_or_else(|| checkout_root().join("target/fuzz").join(format!("s{seed}")));
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
                    "./x fuzz --seed {seed} --count {count} --per-crate {per_crate}{}",
                    f.describe_changes()
                );
                let info = bundle::write(&dir, &opts.work, &sum.batches, &profiles, &replay)?;
                println!(
                    "GPU bundle: {} ({} binaries, {:.1} MiB stripped, {:.1} MiB packed); run {}/run.sh on a GPU host",
                    dir.display(),
                    info.binaries,
                    info.raw_bytes as f64 / 1048576.0,
                    info.bytes as f64 / 1048576.0,
                    dir.display()
                );
            }
            println!(
                "work folder: {} (failures.txt, report.txt)",
                opts.work.display()
            );
            Ok(sum.failures.is_empty())
        }
        Cmd::Gen { id, features } => {
            let (seed, index) = parse_id(&id)?;
            print!(
                "{}",
                generator::generate(seed, index, &features.features()?).source
            );
            Ok(true)
        }
        Cmd::Features => {
            for (name, on, what) in generator::FEATURE_LIST {
                println!("{name:<14} {:<4} {what}", if *on { "on" } else { "off" });
            }
            Ok(true)
        }
        Cmd::BatchCrate {
            seed,
            count,
            dir,
            features,
        } => {
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
        Cmd::HostCrate {
            seed,
            count,
            dir,
            features,
        } => {
            crate_writer::write_host(
                &dir,
                "fuzz_host",
                &programs(seed, count, &features.features()?),
            )?;
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
