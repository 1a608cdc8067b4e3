//! `oxide-fuzz shrink`: reduces a failing program while it keeps failing the same way (same kind,
//! same normalised first error line): deletes items and statements, replaces expressions by their
//! sub-expressions and literals by 0 or 1, greedily, until a whole pass changes nothing. Candidates
//! that are not valid Rust are discarded by a plain rustc type-check before the expensive check.
mod oracle;
mod reduce;
pub mod regression;

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::failure::{Kind, Profile};
use crate::generator::{Features, generate};
use crate::tools::Tools;
use oracle::{Oracle, Outcome};
use reduce::Edit;

pub struct ShrinkOpts {
    /// A program file, or `SEED:INDEX`.
    pub target: String,
    /// The failure to preserve (found out when `None`).
    pub kind: Option<Kind>,
    pub profile: Profile,
    pub features: Features,
    /// Run binaries on this machine's GPU (needed for mismatches).
    pub gpu: bool,
    /// Where to write the shrunk program (default: the scratch folder's `shrunk.rs`).
    pub out: Option<PathBuf>,
}

pub struct Shrunk {
    pub id: String,
    pub kind: Kind,
    pub signature: String,
    pub source: String,
    pub summary: String,
}

/// The program `target` names: its id and source.
fn load(target: &str, features: &Features) -> Result<(String, String), String> {
    if let Ok((seed, index)) = crate::parse_id(target) {
        let p = generate(seed, index, features);
        return Ok((p.id, p.source));
    }
    let text = std::fs::read_to_string(target).map_err(|e| format!("read {target}: {e}"))?;
    let id = Path::new(target).file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "file".into());
    Ok((id, text))
}

/// Which way `source` fails, trying the cheap checks first.
fn detect(oracle: &mut Oracle<'_>, source: &str) -> Result<(Kind, String), String> {
    if let Err(sig) = oracle.valid(source)? {
        return Ok((Kind::HostReject, sig));
    }
    let mut kinds = vec![Kind::CpuPanic];
    if oracle.tools.is_some() {
        kinds.push(if oracle.gpu { Kind::Mismatch } else { Kind::DeviceBuild });
    }
    for k in kinds {
        if let Outcome::Failed(kind, sig) = oracle.check(source, k)? {
            return Ok((kind, sig));
        }
    }
    Err("the program passes every check available here (a mismatch needs --gpu on a GPU machine)".into())
}

/// The program without its inner doc comment (printing would turn it into `#![doc = …]`).
fn parse(source: &str) -> Result<syn::File, String> {
    let mut file = syn::parse_file(source).map_err(|e| format!("parse the program: {e}"))?;
    file.attrs.retain(|a| !a.path().is_ident("doc"));
    Ok(file)
}

fn text(file: &syn::File) -> String {
    quote::quote!(#file).to_string()
}

pub fn shrink(tools: Option<&Tools>, root: &Path, opts: &ShrinkOpts) -> Result<Shrunk, String> {
    let t0 = Instant::now();
    let (id, source) = load(&opts.target, &opts.features)?;
    let dir = oracle::scratch_dir(root, &id);
    let mut oracle = Oracle { tools, dir: dir.clone(), profile: opts.profile, gpu: opts.gpu, checks: 0 };
    let (kind, signature) = match opts.kind {
        None => detect(&mut oracle, &source)?,
        Some(k) => match oracle.check(&source, k)? {
            Outcome::Failed(got, sig) if got == k => (k, sig),
            other => return Err(format!("{id} does not fail as {} ({other:?})", k.name())),
        },
    };
    eprintln!("shrinking {id}: {} `{signature}`", kind.name());
    let mut file = parse(&source)?;
    let before = text(&file).len();
    let mut tried = 0usize;
    loop {
        let mut progress = false;
        for edit in [Edit::Item, Edit::Stmt, Edit::Hoist, Edit::Literal] {
            let choices = match edit {
                Edit::Hoist => 4,
                Edit::Literal => 2,
                _ => 1,
            };
            let mut site = 0;
            while site < reduce::count(&file, edit) {
                let mut accepted = false;
                for choice in 0..choices {
                    let Some(cand) = reduce::apply(&file, edit, site, choice) else {
                        continue;
                    };
                    let cand_text = text(&cand);
                    tried += 1;
                    if kind != Kind::HostReject && oracle.valid(&cand_text)?.is_err() {
                        continue;
                    }
                    if let Outcome::Failed(k, sig) = oracle.check(&cand_text, kind)?
                        && k == kind
                        && sig == signature
                    {
                        file = cand;
                        accepted = true;
                        progress = true;
                        eprintln!("  {} bytes ({:?} {site}), {} checks", text(&file).len(), edit, oracle.checks);
                        break;
                    }
                }
                if !accepted {
                    site += 1;
                }
            }
        }
        if !progress {
            break;
        }
    }
    let header = format!("//! oxide-fuzz {id}, shrunk: {} `{signature}`\n", kind.name());
    let shrunk = reduce::print(&file, &header);
    let path = opts.out.clone().unwrap_or_else(|| dir.join("shrunk.rs"));
    if let Some(d) = path.parent() {
        let _ = std::fs::create_dir_all(d);
    }
    std::fs::write(&path, &shrunk).map_err(|e| format!("write {}: {e}", path.display()))?;
    let summary = format!(
        "{id}: {} `{signature}`; {before} -> {} bytes of tokens, {tried} candidates, {} checks, {:.0} s; written to {}",
        kind.name(),
        text(&file).len(),
        oracle.checks,
        t0.elapsed().as_secs_f64(),
        path.display()
    );
    Ok(Shrunk { id, kind, signature, source: shrunk, summary })
}
