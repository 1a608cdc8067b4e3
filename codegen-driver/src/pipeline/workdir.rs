//! The private work directory of one rustc process, and publishing finished files from it.
//!
//! `cargo test` compiles a crate twice at once (library and test harness) under one crate name:
//! the tools of one compilation must never read the other's files, so each works in
//! `<artifact_dir>/<crate>/.work-<pid>/` and only finished files are published, by rename, to
//! the crate directory.

use std::path::{Path, PathBuf};

use oxide_contract::config::DeviceConfig;

use super::tools::ToolError;

pub struct WorkDir {
    /// Where this process's tools read and write.
    pub dir: PathBuf,
    /// `<artifact_dir>/<crate>/`, where finished files are published.
    crate_dir: PathBuf,
}

impl WorkDir {
    /// The work directory of this process below the artifact folder `crate_dir` (a name from
    /// `naming::crate_dir_name`).
    pub fn create(config: &DeviceConfig, crate_dir: &str) -> Result<WorkDir, ToolError> {
        let crate_dir = config.crate_dir(crate_dir);
        let dir = crate_dir.join(format!(".work-{}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| ToolError::Io(dir.clone(), e))?;
        Ok(WorkDir { dir, crate_dir })
    }

    /// `<work dir>/<name>`.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Copies a finished file into the crate directory; the rename makes it appear whole,
    /// whichever compilation finishes last.
    pub fn publish(&self, file: &Path) -> Result<(), ToolError> {
        let name = file.file_name().unwrap_or_default().to_string_lossy().into_owned();
        let staged = self.crate_dir.join(format!(".{name}.{}", std::process::id()));
        std::fs::copy(file, &staged).map_err(|e| ToolError::Io(staged.clone(), e))?;
        std::fs::rename(&staged, self.crate_dir.join(&name)).map_err(|e| ToolError::Io(self.crate_dir.join(&name), e))
    }

    /// Removes the device files of earlier builds that this build did not publish (an arch no
    /// longer asked for, say), so the folder shows only what the binary embeds. `keep` are file
    /// names; only files named `<crate>.…` with a device file extension are touched.
    pub fn remove_stale(&self, crate_name: &str, keep: &[String]) {
        let Ok(entries) = std::fs::read_dir(&self.crate_dir) else { return };
        let prefix = format!("{crate_name}.");
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let device_file = [".ptx", ".cubin", ".fatbin", ".ltoir"].iter().any(|ext| name.ends_with(ext));
            if name.starts_with(&prefix) && device_file && !keep.contains(&name) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }

    /// Removes the work directory (what it should keep is published already).
    pub fn remove(self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
