//! `cargo oxide new`: creates a project from a template compiled into this binary.
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::cli::NewArgs;
use crate::tools::PINNED_TOOLCHAIN;

/// A template's files: (path in the new project, contents with placeholders).
type Files = &'static [(&'static str, &'static str)];

/// Files every template has.
macro_rules! template_files {
    ($dir:literal: $(($path:literal, $file:literal)),* $(,)?) => {
        &[
            ("rust-toolchain.toml", include_str!(concat!("../../templates/", $dir, "/rust-toolchain.toml.in"))),
            (".gitignore", include_str!(concat!("../../templates/", $dir, "/gitignore"))),
            $(($path, include_str!(concat!("../../templates/", $dir, "/", $file))),)*
        ]
    };
}

/// The templates: name, what it is (for `--help` and errors), files.
pub const TEMPLATES: &[(&str, &str, Files)] = &[
    (
        "vecadd",
        "one binary with a vector-add kernel",
        template_files!("vecadd": ("Cargo.toml", "Cargo.toml.in"), ("src/main.rs", "src/main.rs")),
    ),
    (
        "lib",
        "a library of kernels (one generic) and a binary that launches them",
        template_files!("lib": ("Cargo.toml", "Cargo.toml.in"), ("src/lib.rs", "src/lib.rs"), ("src/main.rs", "src/main.rs")),
    ),
    (
        "async",
        "cuda-async set up: lazy device operations chained and awaited under tokio",
        template_files!("async": ("Cargo.toml", "Cargo.toml.in"), ("src/main.rs", "src/main.rs")),
    ),
    (
        "workspace",
        "a workspace with a kernels crate and an app crate",
        template_files!("workspace":
            ("Cargo.toml", "Cargo.toml.in"),
            ("kernels/Cargo.toml", "kernels/Cargo.toml.in"),
            ("kernels/src/lib.rs", "kernels/src/lib.rs"),
            ("app/Cargo.toml", "app/Cargo.toml.in"),
            ("app/src/main.rs", "app/src/main.rs"),
        ),
    ),
    (
        "python",
        "a Python extension module (pyo3, abi3) whose functions launch kernels on PyTorch tensors",
        template_files!("python":
            ("Cargo.toml", "Cargo.toml.in"),
            ("src/lib.rs", "src/lib.rs"),
            ("check_gpu.py", "check_gpu.py"),
        ),
    ),
];

/// The cuda-oxide checkout this binary was built from; new projects take the runtime crates from it.
pub fn oxide_root() -> Result<PathBuf> {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let root = root.canonicalize().ok().filter(|r| r.join("runtime/cuda-core").is_dir());
    root.with_context(|| {
        format!(
            "the cuda-oxide checkout this cargo-oxide was built from ({}) is gone; run `./x setup` in a checkout to reinstall",
            concat!(env!("CARGO_MANIFEST_DIR"), "/..")
        )
    })
}

/// Checks a package name the way cargo does for the common cases.
fn check_name(name: &str) -> Result<()> {
    let mut chars = name.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic());
    if !first_ok || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        bail!(
            "`{name}` is not a valid package name: use letters, digits, `-` and `_`, starting with a letter (e.g. `hello_gpu`)"
        );
    }
    Ok(())
}

/// Fills the placeholders of one template file.
pub fn render(text: &str, name: &str, oxide_root: &Path) -> String {
    text.replace("{{name}}", name)
        .replace("{{crate_name}}", &name.replace('-', "_"))
        .replace("{{oxide_root}}", &oxide_root.display().to_string())
        .replace("{{toolchain}}", PINNED_TOOLCHAIN)
}

pub fn new_project(args: &NewArgs) -> Result<()> {
    let Some((_, _, files)) = TEMPLATES.iter().find(|(n, _, _)| *n == args.template) else {
        let names: Vec<_> = TEMPLATES.iter().map(|(n, what, _)| format!("  {n:<10} {what}")).collect();
        bail!("unknown template `{}`; available (`--template NAME`):\n{}", args.template, names.join("\n"));
    };
    let dir = PathBuf::from(&args.name);
    let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    check_name(&name)?;
    if dir.exists() {
        bail!("`{}` already exists; choose another name or remove it", dir.display());
    }
    let root = oxide_root()?;
    for (rel, text) in files.iter() {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).with_context(|| format!("could not create {}", parent.display()))?;
        }
        std::fs::write(&path, render(text, &name, &root))
            .with_context(|| format!("could not write {}", path.display()))?;
    }
    eprintln!("{:>12} `{name}` from the {} template in {}", "Created", args.template, dir.display());
    if args.template == "python" {
        eprintln!(
            "{:>12} cd {} && cargo oxide build --release && PYTHONPATH=target/oxide/release/python python3 check_gpu.py   (needs PyTorch and an NVIDIA GPU to run)",
            "Next",
            dir.display()
        );
    } else {
        eprintln!("{:>12} cd {} && cargo oxide run --release   (needs an NVIDIA GPU to run)", "Next", dir.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked() {
        assert!(check_name("hello").is_ok());
        assert!(check_name("hello-gpu_2").is_ok());
        for bad in ["", "1abc", "a b", "a/b", "é"] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_cli_offers_every_template() {
        use clap::CommandFactory;
        let cmd = crate::cli::Cli::command();
        let new = cmd.find_subcommand("oxide").unwrap_or(&cmd).find_subcommand("new").expect("a `new` command");
        let arg = new.get_arguments().find(|a| a.get_id() == "template").expect("--template");
        let offered: Vec<String> = arg.get_possible_values().iter().map(|v| v.get_name().to_string()).collect();
        let known: Vec<String> = TEMPLATES.iter().map(|(n, _, _)| n.to_string()).collect();
        assert_eq!(offered, known);
    }

    #[test]
    fn templates_have_no_placeholders_left() {
        let root = oxide_root().unwrap();
        for (_, _, files) in TEMPLATES {
            for (rel, text) in files.iter() {
                let out = render(text, "hello", &root);
                assert!(!out.contains("{{"), "{rel}: {out}");
            }
        }
    }
}
