//! `cargo oxide new`: creates a project from a template compiled into this binary.
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::cli::NewArgs;
use crate::tools::PINNED_TOOLCHAIN;

/// A template: (path in the new project, contents with placeholders).
type Template = &'static [(&'static str, &'static str)];

const VECADD: Template = &[
    ("Cargo.toml", include_str!("../../templates/vecadd/Cargo.toml.in")),
    ("rust-toolchain.toml", include_str!("../../templates/vecadd/rust-toolchain.toml.in")),
    (".gitignore", include_str!("../../templates/vecadd/gitignore")),
    ("src/main.rs", include_str!("../../templates/vecadd/src/main.rs")),
];

const TEMPLATES: &[(&str, Template)] = &[("vecadd", VECADD)];

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
        .replace("{{oxide_root}}", &oxide_root.display().to_string())
        .replace("{{toolchain}}", PINNED_TOOLCHAIN)
}

pub fn new_project(args: &NewArgs) -> Result<()> {
    let Some((_, files)) = TEMPLATES.iter().find(|(n, _)| *n == args.template) else {
        let names: Vec<_> = TEMPLATES.iter().map(|(n, _)| *n).collect();
        bail!("unknown template `{}`; available: {}", args.template, names.join(", "));
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
    eprintln!("{:>12} cd {} && cargo oxide run --release   (needs an NVIDIA GPU to run)", "Next", dir.display());
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
    fn templates_have_no_placeholders_left() {
        let root = oxide_root().unwrap();
        for (_, files) in TEMPLATES {
            for (rel, text) in files.iter() {
                let out = render(text, "hello", &root);
                assert!(!out.contains("{{"), "{rel}: {out}");
            }
        }
    }
}
