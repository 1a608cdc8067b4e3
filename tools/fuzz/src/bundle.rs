//! The GPU bundle: the stripped batch binaries, the CPU reference digests computed here, and
//! `run.sh`, which runs them on a GPU host that has no Rust toolchain.
//!
//! The binaries are mostly PTX and cubin, so they travel as xz-compressed tars, ten batches (both
//! profiles) per archive: within an archive the binaries share their host code. Archives are
//! assigned to parts of at most `max_part` bytes; with one part the bundle is flat, with several it
//! has `part-N/` folders (each complete, with its own run.sh) and a run.sh that runs them all, so a
//! part can be carried to the GPU host on its own.
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::failure::Profile;

const RUN_SH: &str = include_str!("../template/run.sh");
const RUN_PARTS_SH: &str = include_str!("../template/run-parts.sh");

/// Batches per archive.
const GROUP: usize = 10;

pub struct BundleInfo {
    pub binaries: usize,
    /// Bytes of the stripped binaries before compression.
    pub raw_bytes: u64,
    /// Bytes of the whole bundle folder.
    pub bytes: u64,
    /// (folder, binaries, bytes) of each part.
    pub parts: Vec<(PathBuf, usize, u64)>,
}

fn sh(cmd: &mut Command, what: &str) -> Result<(), String> {
    let st = cmd.status().map_err(|e| format!("{what}: {e}"))?;
    if st.success() { Ok(()) } else { Err(format!("{what} failed ({st})")) }
}

fn dir_bytes(dir: &Path) -> u64 {
    let mut n = 0;
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            n += if p.is_dir() { dir_bytes(&p) } else { e.metadata().map(|m| m.len()).unwrap_or(0) };
        }
    }
    n
}

fn create(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("create {}: {e}", dir.display()))
}

fn copy(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::copy(from, to).map(|_| ()).map_err(|e| format!("copy {} to {}: {e}", from.display(), to.display()))
}

/// `tar -C <stage> -cf - bin | xz -9 > <archive>`.
fn pack(stage: &Path, archive: &Path) -> Result<(), String> {
    let out = std::fs::File::create(archive).map_err(|e| format!("create {}: {e}", archive.display()))?;
    let mut tar = Command::new("tar")
        .arg("-C")
        .arg(stage)
        .args(["-cf", "-", "bin"])
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("tar: {e}"))?;
    let tar_out = tar.stdout.take().ok_or("tar has no stdout")?;
    // -9 packs within 2% of -9e here, a third faster.
    sh(Command::new("xz").args(["-9", "-T1", "-c"]).stdin(tar_out).stdout(out), "xz")?;
    let st = tar.wait().map_err(|e| format!("tar: {e}"))?;
    if st.success() { Ok(()) } else { Err(format!("tar failed ({st})")) }
}

/// An archive made, with the reference files of its binaries.
struct Archive {
    path: PathBuf,
    refs: Vec<PathBuf>,
    binaries: usize,
    bytes: u64,
}

fn write_part_files(dir: &Path, readme: &str) -> Result<(), String> {
    let run_sh = dir.join("run.sh");
    std::fs::write(&run_sh, RUN_SH).map_err(|e| format!("write {}: {e}", run_sh.display()))?;
    sh(Command::new("chmod").arg("+x").arg(&run_sh), "chmod")?;
    std::fs::write(dir.join("README.txt"), readme).map_err(|e| format!("write README.txt: {e}"))
}

/// Strips the binaries of batch group `g` into a staging folder and packs them; returns the
/// archive and the bytes it holds unpacked (`None` when the group has no binaries).
fn pack_group(
    dir: &Path,
    work: &Path,
    archives_dir: &Path,
    g: usize,
    group: &[String],
    profiles: &[Profile],
) -> Result<Option<(Archive, u64)>, String> {
    let stage = dir.join(format!(".stage-{g}"));
    let _ = std::fs::remove_dir_all(&stage);
    create(&stage.join("bin"))?;
    let mut refs = Vec::new();
    for name in group {
        for p in profiles {
            let file = format!("{name}.{}", p.name());
            let (bin, r) = (work.join("bin").join(&file), work.join("refs").join(format!("{file}.txt")));
            if !bin.is_file() || !r.is_file() {
                continue;
            }
            let dest = stage.join("bin").join(&file);
            copy(&bin, &dest)?;
            sh(Command::new("strip").arg("--strip-all").arg(&dest), "strip")?;
            refs.push(r);
        }
    }
    if refs.is_empty() {
        let _ = std::fs::remove_dir_all(&stage);
        return Ok(None);
    }
    let raw = dir_bytes(&stage);
    let path = archives_dir.join(format!("bin-{:03}.tar.xz", g * GROUP));
    pack(&stage, &path)?;
    let _ = std::fs::remove_dir_all(&stage);
    let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    Ok(Some((Archive { path, binaries: refs.len(), refs, bytes }, raw)))
}

/// Writes the bundle for `batches` × `profiles` of the run in `work` into `dir` (replacing it).
/// `replay` is the command that regenerates the programs (for the README).
pub fn write(
    dir: &Path,
    work: &Path,
    batches: &[String],
    profiles: &[Profile],
    replay: &str,
    max_part: u64,
) -> Result<BundleInfo, String> {
    let _ = std::fs::remove_dir_all(dir);
    let archives_dir = dir.join(".archives");
    create(&archives_dir)?;
    let mut info = BundleInfo { binaries: 0, raw_bytes: 0, bytes: 0, parts: Vec::new() };
    // Two archives at a time: xz runs on one core, and packing 10,000 programs takes minutes.
    let groups: Vec<(usize, &[String])> = batches.chunks(GROUP).enumerate().collect();
    let archives_at: &Path = &archives_dir;
    let mut archives: Vec<Archive> = Vec::new();
    for pair in groups.chunks(2) {
        let made: Vec<Result<Option<(Archive, u64)>, String>> = std::thread::scope(|scope| {
            let handles: Vec<_> = pair
                .iter()
                .map(|&(g, group)| scope.spawn(move || pack_group(dir, work, archives_at, g, group, profiles)))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err("a packing thread panicked".into()))).collect()
        });
        for m in made {
            if let Some((a, raw)) = m? {
                eprintln!(
                    "  packed {} ({} binaries, {:.1} MiB)",
                    a.path.file_name().unwrap_or_default().to_string_lossy(),
                    a.binaries,
                    a.bytes as f64 / 1048576.0
                );
                info.binaries += a.binaries;
                info.raw_bytes += raw;
                archives.push(a);
            }
        }
    }

    // Parts: consecutive archives, each part at most `max_part` bytes (at least one archive).
    let mut parts: Vec<Vec<Archive>> = Vec::new();
    for a in archives {
        match parts.last_mut() {
            Some(p) if p.iter().map(|x| x.bytes).sum::<u64>() + a.bytes <= max_part => p.push(a),
            _ => parts.push(vec![a]),
        }
    }
    let readme = |what: &str| {
        format!(
            "oxide-fuzz GPU bundle{what}, made by\n    {replay}\n\n\
             Run ./run.sh on a machine with an NVIDIA GPU and driver (no Rust needed: bash, tar, and xz or\n\
             python3). It unpacks bin-*.tar.xz, runs every binary (each runs its programs on the CPU and\n\
             as kernels on the GPU and compares the checksums thread by thread, and with the build\n\
             machine's CPU in refs/), prints PASS/FAIL per program and `N passed, N failed`. A FAIL names\n\
             the program SEED:INDEX: on the build machine `oxide-fuzz gen SEED:INDEX` prints it.\n"
        )
    };
    let several = parts.len() > 1;
    for (k, part) in parts.iter().enumerate() {
        let pdir = if several { dir.join(format!("part-{}", k + 1)) } else { dir.to_path_buf() };
        create(&pdir.join("refs"))?;
        for a in part {
            let file = a.path.file_name().ok_or("archive without a name")?;
            std::fs::rename(&a.path, pdir.join(file)).map_err(|e| format!("move {}: {e}", a.path.display()))?;
            for r in &a.refs {
                copy(r, &pdir.join("refs").join(r.file_name().ok_or("refs without a name")?))?;
            }
        }
        let what = if several { format!(", part {} of {}", k + 1, parts.len()) } else { String::new() };
        write_part_files(&pdir, &readme(&what))?;
        info.parts.push((pdir.clone(), part.iter().map(|a| a.binaries).sum(), dir_bytes(&pdir)));
    }
    let _ = std::fs::remove_dir_all(&archives_dir);
    if several {
        let run_sh = dir.join("run.sh");
        std::fs::write(&run_sh, RUN_PARTS_SH).map_err(|e| format!("write run.sh: {e}"))?;
        sh(Command::new("chmod").arg("+x").arg(&run_sh), "chmod")?;
        let text = readme(&format!(" in {} parts", parts.len()))
            + "\nEach part-N/ is complete on its own (carry one at a time if the whole is too big);\n./run.sh here runs every part present.\n";
        std::fs::write(dir.join("README.txt"), text).map_err(|e| format!("write README.txt: {e}"))?;
    }
    info.bytes = dir_bytes(dir);
    Ok(info)
}
