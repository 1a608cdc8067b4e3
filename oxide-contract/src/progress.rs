//! Progress events that `oxide-rustc` appends as JSON lines for `cargo oxide`'s progress bars.

use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// A step of the device build of one crate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    /// MIR → LLVM IR.
    Lower,
    /// `opt` + `llc` → PTX.
    Ptx,
    /// `ptxas` → cubin.
    Cubin,
    /// `fatbinary` → fatbin.
    Fatbin,
    /// libNVVM → LTOIR.
    Ltoir,
    /// Writing the bundle object and `manifest.json`.
    Bundle,
}

/// One line of the progress file (`DeviceConfig::progress_file`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum ProgressEvent {
    /// Device work for a crate begins; `steps` is how many `StepFinished` events will follow.
    CrateStarted {
        crate_name: String,
        kernels: u32,
        steps: u32,
    },
    StepStarted {
        crate_name: String,
        step: Step,
        arch: Option<String>,
    },
    StepFinished {
        crate_name: String,
        step: Step,
        arch: Option<String>,
        millis: u64,
    },
    CrateFinished {
        crate_name: String,
        millis: u64,
    },
    /// The device build of a crate failed; the diagnostics went to rustc's error output.
    CrateFailed {
        crate_name: String,
        message: String,
    },
}

impl ProgressEvent {
    /// The event as one JSON line, newline included.
    pub fn to_line(&self) -> String {
        let mut line = serde_json::to_string(self).unwrap_or_default();
        line.push('\n');
        line
    }

    /// Parses one line; `None` for blank or unreadable lines (a line may be half written).
    pub fn parse_line(line: &str) -> Option<ProgressEvent> {
        let line = line.trim();
        if line.is_empty() {
            return None;
        }
        serde_json::from_str(line).ok()
    }

    /// Appends the event to `path` in a single write, so concurrent rustc processes don't interleave.
    pub fn append_to(&self, path: &Path) -> std::io::Result<()> {
        let mut file = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
        file.write_all(self.to_line().as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_round_trip() {
        let events = [
            ProgressEvent::CrateStarted { crate_name: "hello".into(), kernels: 2, steps: 3 },
            ProgressEvent::StepStarted { crate_name: "hello".into(), step: Step::Ptx, arch: Some("sm_90".into()) },
            ProgressEvent::StepFinished { crate_name: "hello".into(), step: Step::Cubin, arch: None, millis: 12 },
            ProgressEvent::CrateFinished { crate_name: "hello".into(), millis: 40 },
            ProgressEvent::CrateFailed { crate_name: "hello".into(), message: "ptxas failed".into() },
        ];
        for e in &events {
            let line = e.to_line();
            assert!(line.ends_with('\n') && line.matches('\n').count() == 1);
            assert_eq!(ProgressEvent::parse_line(&line).as_ref(), Some(e));
        }
        assert!(events[1].to_line().contains(r#""event":"step_started""#));
        assert_eq!(ProgressEvent::parse_line("{\"event\":\"crate_fin"), None);
        assert_eq!(ProgressEvent::parse_line("  "), None);
    }

    #[test]
    fn appends_to_file() {
        let path = std::env::temp_dir().join(format!("oxide-progress-{}.jsonl", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let e = ProgressEvent::CrateFinished { crate_name: "a".into(), millis: 1 };
        e.append_to(&path).unwrap();
        e.append_to(&path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        assert_eq!(text.lines().filter_map(ProgressEvent::parse_line).count(), 2);
    }
}
