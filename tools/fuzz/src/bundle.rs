//! The GPU bundle: the stripped batch binaries (one xz-compressed tar: they are mostly PTX and
//! cubin, which compress several times over, and share their host code), the CPU reference digests
//! computed here, and `run.sh`, which runs them on a GPU host that has no Rust toolchain.
use std::path::Path;
use std::process::{Command, Stdio};

use crate::failure::Profile;

const RUN_SH: &str = include_str!("../template/run.sh");

pub struct BundleInfo {
    pub binaries: usize,
    /// Bytes of the stripped binaries before compression.
    pub raw_bytes: u64,
    /// Bytes of the bundle folder.
    pub bytes: u64,
}

fn sh(cmd: &mut Command, what: &str) -> Result<(), String> {
    let st = cmd.status().map_err(|e| format!("{what}: {e}"))?;
    if st.success() {
        Ok(())
    } else {
        Err(format!("{what} failed ({st})"))
    }
}

fn dir_bytes(dir: &Path) -> u64 {
    let mut n = 0;
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            n += if p.is_dir() {
                dir_bytes(&p)
            } else {
                e.metadata().map(|m| m.len()).unwrap_or(0)
            };
        }
    }
    n
}

/// Writes the bundle for `batches` × `profiles` of the run in `work` into `dir` (replacing it).
/// `replay` is the command that regenerates the programs, written into the bundle's README.
pub fn write(
    dir: &Path,
    work: &Path,
    batches: &[String],
    profiles: &[Profile],
    replay: &str,
) -> Result<BundleInfo, String> {
    let _ = std::fs::remove_dir_all(dir);
    let stage = dir.join(".stage/bin");
    std::fs::create_dir_all(&stage).map_err(|e| format!("create {}: {e}", stage.display()))?;
    std::fs::create_dir_all(dir.join("refs"))
        .map_err(|e| format!("create {}/refs: {e}", dir.display()))?;
    let mut binaries = 0;
    for name in batches {
        for p in profiles {
            let file = format!("{name}.{}", p.name());
            let bin = work.join("bin").join(&file);
            let refs = work.join("refs").join(format!("{file}.txt"));
            if !bin.is_file() || !refs.is_file() {
                continue;
            }
            let dest = stage.join(&file);
            std::fs::copy(&bin, &dest).map_err(|e| format!("copy {}: {e}", bin.display()))?;
            sh(Command::new("strip").arg("--strip-all").arg(&dest), "strip")?;
            std::fs::copy(&refs, dir.join("refs").join(format!("{file}.txt")))
                .map_err(|e| format!("copy {}: {e}", refs.display()))?;
            binaries += 1;
        }
    }
    let raw_bytes = dir_bytes(&stage);
    // One solid archive: the binaries' shared host code is stored once.
    let archive = std::fs::File::create(dir.join("bin.tar.xz"))
        .map_err(|e| format!("create bin.tar.xz: {e}"))?;
    let mut tar = Command::new("tar")
        .arg("-C")
        .arg(dir.join(".stage"))
        .args(["-cf", "-", "bin"])
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("tar: {e}"))?;
    let tar_out = tar.stdout.take().ok_or("tar has no stdout")?;
    sh(
        Command::new("xz")
            .args(["-9e", "-T1", "-c"])
            .stdin(tar_out)
            .stdout(archive),
        "xz",
    )?;
    let st = tar.wait().map_err(|e| format!("tar: {e}"))?;
    if !st.success() {
        return Err(format!("tar failed ({st})"));
    }
    let _ = std::fs::remove_dir_all(dir.join(".stage"));
    let run_sh = dir.join("run.sh");
    std::fs::write(&run_sh, RUN_SH).map_err(|e| format!("write run.sh: {e}"))?;
    sh(Command::new("chmod").arg("+x").arg(&run_sh), "chmod")?;
    let readme = format!(
        "oxide-fuzz GPU bundle: {binaries} binaries ({} programs each at most), made by\n    {replay}\n\n\
         Run ./run.sh on a machine with an NVIDIA GPU and driver (no Rust needed). It prints PASS/FAIL per\n\
         program and `N passed, N failed`. A FAIL names the program as SEED:INDEX; on the build machine,\n\
         `./x fuzz shrink SEED:INDEX --kind mismatch` (with a GPU) or `oxide-fuzz gen SEED:INDEX` shows it.\n",
        "the run's"
    );
    std::fs::write(dir.join("README.txt"), readme).map_err(|e| format!("write README.txt: {e}"))?;
    Ok(BundleInfo {
        binaries,
        raw_bytes,
        bytes: dir_bytes(dir),
    })
}
