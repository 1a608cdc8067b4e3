//! `cargo-oxide` binary: parses `cargo oxide …` and prints any error as one line.
use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // Cargo runs `cargo-oxide oxide <args>`; run directly, it is `cargo-oxide <args>`.
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args.get(1).is_some_and(|a| a == "oxide") {
        args.remove(1);
    }
    let cli = cargo_oxide::cli::Cli::parse_from(args);
    match cargo_oxide::run(cli) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}
