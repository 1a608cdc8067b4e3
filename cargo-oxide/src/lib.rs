//! `cargo oxide`: the command-line front end of cuda-oxide (build, run, test, new, setup, doctor, inspect, clean, sanitize, debug).
//!
//! The binary (`main.rs`) only parses arguments and prints errors; every command lives here so that
//! the end-to-end tests in `tests/` can reuse the tool resolution ([`tools`]) they check PTX with.

pub mod artifacts;
pub mod build;
pub mod cache;
pub mod cli;
pub mod debug;
pub mod doctor;
pub mod gpu;
pub mod inspect;
pub mod inspect_target;
pub mod nccl;
pub mod new;
pub mod profile;
pub mod progress;
pub mod project;
pub mod ptx_file;
pub mod python;
pub mod setup;
pub mod summary;
pub mod tools;

use std::io::Write;
use std::process::ExitCode;

/// Writes `text` to stdout; a closed pipe (`cargo oxide inspect --ptx | head`) is not an error.
pub fn print_stdout(text: &str) -> std::io::Result<()> {
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// Runs one parsed command line; the error, if any, is one line for the user.
pub fn run(cli: cli::Cli) -> anyhow::Result<ExitCode> {
    use cli::Command;
    match cli.command {
        Command::Build(args) => build::build(&args).map(|_| ExitCode::SUCCESS),
        Command::Run(args) => build::run(&args),
        Command::New(args) => new::new_project(&args).map(|()| ExitCode::SUCCESS),
        Command::Setup(args) => setup::setup(&args).map(|()| ExitCode::SUCCESS),
        Command::Doctor => doctor::doctor(),
        Command::Inspect(args) => inspect::inspect(&args).map(|()| ExitCode::SUCCESS),
        Command::Clean(args) => inspect::clean(&args).map(|()| ExitCode::SUCCESS),
        Command::Test(args) => build::test(&args),
        Command::Sanitize(args) => debug::sanitize(&args),
        Command::Debug(args) => debug::debug(&args),
        Command::Profile(args) => profile::profile(&args),
    }
}
