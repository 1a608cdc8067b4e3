//! Command-line arguments of `cargo oxide` (clap derive).
use std::ffi::OsString;
use std::path::PathBuf;

use clap::{ArgAction, Args, Parser, Subcommand};
use oxide_contract::config::DeviceDebugInfo;

/// Build, run and inspect cuda-oxide crates: Rust host code and GPU kernels in one crate.
#[derive(Debug, Parser)]
#[command(name = "cargo oxide", bin_name = "cargo oxide", version)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Build the crate: host code with rustc, kernels to PTX/cubin/fatbin, embedded in the binary.
    Build(BuildArgs),
    /// Build, then run the binary with the arguments given after `--`.
    Run(RunArgs),
    /// Create a new cuda-oxide project from a template.
    New(NewArgs),
    /// Install the pinned Rust toolchain, the CUDA tools (ptxas, fatbinary, libNVVM, libdevice),
    /// CCCL and NCCL (for multi-GPU collectives).
    Setup(SetupArgs),
    /// Check that everything needed to build and run is installed, with the fix for what is not.
    Doctor,
    /// Print the manifest, PTX or LLVM IR that the last build made for a crate.
    Inspect(InspectArgs),
    /// Remove the cuda-oxide build outputs (`<target>/oxide`).
    Clean(CleanArgs),
    /// Run `cargo test` with device code compiled, passing the arguments after `--` to the tests.
    Test(RunArgs),
    /// Build, then run the binary under compute-sanitizer (memcheck unless --tool says otherwise);
    /// reports name the Rust file:line (device line info is on by default).
    Sanitize(SanitizeArgs),
    /// Build with full device debug information and no device optimisation (nvcc's -G), then
    /// start the binary under cuda-gdb.
    Debug(DebugArgs),
    /// Build (release unless --profile says otherwise), run under Nsight Compute and print per
    /// kernel: time, memory bandwidth and FLOP rate against the GPU's ceilings, occupancy, and
    /// the hottest Rust source lines.
    Profile(ProfileArgs),
}

/// Options shared by `build` and `run`; the cargo ones mean what they mean to `cargo build`.
#[derive(Clone, Debug, Default, Args)]
pub struct BuildArgs {
    /// GPU architectures, comma separated; `native` is the local GPU's (default: the local GPU's, else sm_90).
    #[arg(long, value_name = "SM,...")]
    pub arch: Option<String>,
    /// Device artifacts besides the defaults, comma separated: ptx, cubin, fatbin, ltoir.
    #[arg(long, value_name = "KIND,...")]
    pub emit: Option<String>,
    /// Keep Rust's exact rounding: never contract `a*b+c` into a fused multiply-add.
    #[arg(long)]
    pub no_fmad: bool,
    /// Approximate f32 division, sqrt, rsqrt, exp, log, sin, cos, pow in every kernel (nvcc's
    /// --use_fast_math, without flushing denormals); `#[fast_math]` does it per function.
    #[arg(long)]
    pub fast_math: bool,
    /// Build with the release profile.
    #[arg(short, long, conflicts_with = "profile")]
    pub release: bool,
    /// Build with this profile (dev, release, or one of your own).
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
    /// Package to build.
    #[arg(short, long, value_name = "SPEC")]
    pub package: Option<String>,
    /// Build only this binary.
    #[arg(long, value_name = "NAME")]
    pub bin: Option<String>,
    /// Build only this example.
    #[arg(long, value_name = "NAME")]
    pub example: Option<String>,
    /// Features to activate (space or comma separated).
    #[arg(short = 'F', long, value_name = "FEATURES")]
    pub features: Vec<String>,
    /// Activate all features.
    #[arg(long)]
    pub all_features: bool,
    /// Do not activate the `default` feature.
    #[arg(long)]
    pub no_default_features: bool,
    /// Path to Cargo.toml.
    #[arg(long, value_name = "PATH")]
    pub manifest_path: Option<PathBuf>,
    /// Pass `-v` to cargo (repeat for more).
    #[arg(short, long, action = ArgAction::Count)]
    pub verbose: u8,
    /// No progress bars and no summary.
    #[arg(short, long)]
    pub quiet: bool,
    /// Device debug information: none, lines (the default: source lines for profilers and
    /// sanitizers, same machine code) or full (variables for cuda-gdb, unoptimised device code).
    #[arg(long, value_name = "LEVEL", value_parser = DeviceDebugInfo::parse)]
    pub device_debug: Option<DeviceDebugInfo>,
    /// Also write each crate's `<crate>.ptx` next to its `Cargo.toml` (it always goes to
    /// `target/oxide/<profile>/`); per package: `ptx-beside-sources = true` in
    /// `[package.metadata.cuda-oxide]`.
    #[arg(long)]
    pub ptx_beside_sources: bool,
}

impl BuildArgs {
    /// The cargo profile the build uses.
    pub fn profile_name(&self) -> &str {
        match (&self.profile, self.release) {
            (Some(p), _) => p,
            (None, true) => "release",
            (None, false) => "dev",
        }
    }
}

#[derive(Clone, Debug, Default, Args)]
pub struct SetupArgs {
    /// Skip NCCL (NVIDIA's nvidia-nccl-cu13 wheel, about 250 MB), which only programs that use
    /// cuda-nccl's collectives need.
    #[arg(long)]
    pub no_nccl: bool,
}

#[derive(Clone, Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub build: BuildArgs,
    /// Do not build: run this binary, built earlier (e.g. copied to a GPU host without Rust).
    #[arg(long, value_name = "PATH")]
    pub exe: Option<PathBuf>,
    /// Arguments for the program.
    #[arg(last = true, value_name = "ARGS")]
    pub args: Vec<OsString>,
}

#[derive(Debug, Args)]
pub struct SanitizeArgs {
    /// compute-sanitizer tool: memcheck, racecheck, initcheck or synccheck.
    #[arg(long, default_value = "memcheck", value_parser = ["memcheck", "racecheck", "initcheck", "synccheck"])]
    pub tool: String,
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Debug, Args)]
pub struct DebugArgs {
    /// Run the cuda-gdb commands in FILE without a prompt, then exit (cuda-gdb -batch -x FILE).
    #[arg(long, value_name = "FILE")]
    pub batch: Option<PathBuf>,
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Debug, Args)]
pub struct ProfileArgs {
    /// Hottest source lines to print per kernel.
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub lines: usize,
    /// Profile only kernels whose name contains this (ncu --kernel-name regex:...).
    #[arg(long, value_name = "NAME")]
    pub kernel: Option<String>,
    /// Where ncu finds the Rust sources when they are not at the paths the build recorded
    /// (a binary built on another machine; ncu --source-folders).
    #[arg(long, value_name = "DIR,...")]
    pub source_folders: Option<String>,
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Debug, Args)]
pub struct NewArgs {
    /// Name of the project; also the directory it is created in.
    pub name: String,
    /// Template to start from: `vecadd` (one binary), `lib` (a library of kernels and a binary
    /// using it), `async` (cuda-async and tokio set up), `workspace` (a kernels crate and an app),
    /// `python` (a Python extension module launching kernels on PyTorch tensors).
    #[arg(long, default_value = "vecadd", value_parser = ["vecadd", "lib", "async", "workspace", "python"])]
    pub template: String,
}

#[derive(Debug, Args)]
pub struct InspectArgs {
    /// Crate to inspect (default: the only crate with kernels).
    #[arg(value_name = "CRATE")]
    pub crate_name: Option<String>,
    /// Print the PTX (of `--arch`, default the first built arch).
    #[arg(long, conflicts_with_all = ["ll", "json", "sass"])]
    pub ptx: bool,
    /// Print the SASS of the cubin (of `--arch`, default the first built arch), via nvdisasm.
    #[arg(long, conflicts_with_all = ["ll", "json"])]
    pub sass: bool,
    /// Print the device LLVM IR.
    #[arg(long, conflicts_with = "json")]
    pub ll: bool,
    /// Print manifest.json as it is.
    #[arg(long)]
    pub json: bool,
    /// Architecture for `--ptx` and `--sass`.
    #[arg(long, value_name = "SM")]
    pub arch: Option<String>,
    /// Inspect the release build (default: the dev build).
    #[arg(short, long, conflicts_with = "profile")]
    pub release: bool,
    /// Inspect the build of this profile.
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
    /// Path to Cargo.toml.
    #[arg(long, value_name = "PATH")]
    pub manifest_path: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CleanArgs {
    /// Path to Cargo.toml.
    #[arg(long, value_name = "PATH")]
    pub manifest_path: Option<PathBuf>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cli_is_well_formed() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }

    #[test]
    fn run_takes_program_args_after_double_dash() {
        let cli = Cli::parse_from(["cargo oxide", "run", "--release", "--", "-n", "5"]);
        let Command::Run(run) = cli.command else { panic!("not run") };
        assert!(run.build.release);
        assert_eq!(run.args, ["-n", "5"]);
    }

    #[test]
    fn sanitize_takes_a_tool_and_program_args() {
        let cli = Cli::parse_from(["cargo oxide", "sanitize", "--tool", "racecheck", "--release", "--", "x"]);
        let Command::Sanitize(s) = cli.command else { panic!("not sanitize") };
        assert_eq!(s.tool, "racecheck");
        assert!(s.run.build.release);
        assert_eq!(s.run.args, ["x"]);
        assert!(Cli::try_parse_from(["cargo oxide", "sanitize", "--tool", "nope"]).is_err());
    }

    #[test]
    fn debug_takes_a_batch_file_and_profile_a_line_count() {
        let cli = Cli::parse_from(["cargo oxide", "debug", "--batch", "s.gdb", "--bin", "b", "--", "7"]);
        let Command::Debug(d) = cli.command else { panic!("not debug") };
        assert_eq!(d.batch.as_deref(), Some(std::path::Path::new("s.gdb")));
        assert_eq!((d.run.build.bin.as_deref(), &d.run.args[..]), (Some("b"), &["7".into()][..]));
        let cli = Cli::parse_from(["cargo oxide", "profile", "--lines", "3", "--example", "e"]);
        let Command::Profile(p) = cli.command else { panic!("not profile") };
        assert_eq!((p.lines, p.run.build.example.as_deref()), (3, Some("e")));
        let cli = Cli::parse_from(["cargo oxide", "build", "--device-debug", "none"]);
        let Command::Build(b) = cli.command else { panic!("not build") };
        assert_eq!(b.device_debug, Some(DeviceDebugInfo::None));
        assert!(Cli::try_parse_from(["cargo oxide", "build", "--device-debug", "-G"]).is_err());
    }
}
