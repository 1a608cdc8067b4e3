//! Progress display of a build: a bar over the crates cargo compiles, one bar per crate's device
//! steps (read from the JSON lines `oxide-rustc` appends to the progress file), and pass-through of
//! cargo's own output above them.
use std::collections::HashMap;
use std::fs::File;
use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use oxide_contract::progress::{ProgressEvent, Step};

/// Bars of one build; cheap to clone and shared with the threads that feed it.
#[derive(Clone)]
pub struct Progress {
    multi: MultiProgress,
    crates: ProgressBar,
    device: Arc<Mutex<HashMap<String, (ProgressBar, u32)>>>,
    bars_visible: bool,
    /// `--quiet`: no bars and no status lines of ours (cargo's diagnostics still pass through).
    quiet: bool,
}

impl Progress {
    /// `total` is the estimated number of crates; bars are drawn only on a terminal and not `quiet`.
    pub fn new(total: u64, quiet: bool) -> Progress {
        let bars_visible = !quiet && std::io::stderr().is_terminal();
        let target = if bars_visible { ProgressDrawTarget::stderr() } else { ProgressDrawTarget::hidden() };
        let multi = MultiProgress::with_draw_target(target);
        let crates = multi.add(ProgressBar::new(total.max(1)));
        crates.set_style(
            ProgressStyle::with_template("{prefix:>12.cyan.bold} [{bar:30}] {pos}/{len} {wide_msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        crates.set_prefix("Building");
        crates.enable_steady_tick(Duration::from_millis(120));
        Progress { multi, crates, device: Arc::default(), bars_visible, quiet }
    }

    /// Prints one line of output above the bars.
    pub fn println(&self, line: &str) {
        if self.bars_visible {
            self.multi.suspend(|| eprintln!("{line}"));
        } else {
            eprintln!("{line}");
        }
    }

    /// Prints one status line of ours, unless quiet.
    fn status(&self, line: &str) {
        if !self.quiet {
            self.println(line);
        }
    }

    /// A crate finished compiling (fresh or not).
    pub fn crate_done(&self, name: &str) {
        if self.crates.position() + 1 >= self.crates.length().unwrap_or(0) {
            self.crates.inc_length(1);
        }
        self.crates.inc(1);
        self.crates.set_message(name.to_string());
    }

    /// Updates the device bars from one event of the progress file.
    pub fn device_event(&self, event: &ProgressEvent) {
        let Ok(mut bars) = self.device.lock() else { return };
        match event {
            ProgressEvent::CrateStarted { crate_name, kernels, steps } => {
                let bar = self.multi.add(ProgressBar::new(u64::from(*steps).max(1)));
                bar.set_style(
                    ProgressStyle::with_template("{prefix:>12.green.bold} [{bar:30}] {pos}/{len} {wide_msg}")
                        .unwrap_or_else(|_| ProgressStyle::default_bar())
                        .progress_chars("=> "),
                );
                bar.set_prefix("Device");
                bar.set_message(format!("{crate_name}: lowering"));
                bars.insert(crate_name.clone(), (bar, *kernels));
            }
            ProgressEvent::StepStarted { crate_name, step, arch } => {
                if let Some((bar, _)) = bars.get(crate_name) {
                    bar.set_message(format!("{crate_name}: {}", step_text(*step, arch.as_deref())));
                }
            }
            ProgressEvent::StepFinished { crate_name, .. } => {
                if let Some((bar, _)) = bars.get(crate_name) {
                    bar.inc(1);
                }
            }
            ProgressEvent::CrateFinished { crate_name, millis } => {
                let kernels = bars.remove(crate_name).map(|(bar, k)| {
                    bar.finish_and_clear();
                    self.multi.remove(&bar);
                    k
                });
                let kernels = kernels.map(|k| format!("{k} kernel{}, ", if k == 1 { "" } else { "s" }));
                self.status(&format!(
                    "{:>12} {crate_name} ({}{:.2}s)",
                    "Device",
                    kernels.unwrap_or_default(),
                    *millis as f64 / 1000.0
                ));
            }
            ProgressEvent::CrateFailed { crate_name, message } => {
                if let Some((bar, _)) = bars.remove(crate_name) {
                    bar.finish_and_clear();
                    self.multi.remove(&bar);
                }
                self.println(&format!("{:>12} {crate_name}: {message}", "Device failed"));
            }
        }
    }

    /// Removes every bar.
    pub fn finish(&self) {
        self.crates.finish_and_clear();
        if let Ok(mut bars) = self.device.lock() {
            for (_, (bar, _)) in bars.drain() {
                bar.finish_and_clear();
            }
        }
        let _ = self.multi.clear();
    }
}

fn step_text(step: Step, arch: Option<&str>) -> String {
    let name = match step {
        Step::Lower => "lower (MIR → LLVM IR)",
        Step::Ptx => "llc → PTX",
        Step::Cubin => "ptxas → cubin",
        Step::Fatbin => "fatbinary",
        Step::Ltoir => "libNVVM → LTOIR",
        Step::Nvcc => "nvcc → LTOIR (CUDA C++)",
        Step::Link => "nvJitLink → cubin",
        Step::Bundle => "bundle",
    };
    match arch {
        Some(arch) => format!("{name} {arch}"),
        None => name.to_string(),
    }
}

/// Follows the progress file while the build runs, feeding [`Progress::device_event`].
pub struct Tail {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl Tail {
    /// Empties `path` (events of an earlier build are stale) and starts following it.
    pub fn start(path: PathBuf, progress: Progress) -> Tail {
        let _ = File::create(&path);
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let handle = std::thread::spawn(move || follow(&path, &progress, &flag));
        Tail { stop, handle: Some(handle) }
    }

    /// Reads what is left in the file, then stops.
    pub fn stop(mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(handle) = self.handle.take() {
            // Wakes it from its wait, so that the build does not end up to one poll later.
            handle.thread().unpark();
            let _ = handle.join();
        }
    }
}

fn follow(path: &Path, progress: &Progress, stop: &AtomicBool) {
    let mut offset = 0u64;
    let mut pending = String::new();
    loop {
        let stopping = stop.load(Ordering::SeqCst);
        if let Ok(mut file) = File::open(path) {
            use std::io::{Seek, SeekFrom};
            let mut buf = Vec::new();
            if file.seek(SeekFrom::Start(offset)).is_ok() && file.read_to_end(&mut buf).is_ok() {
                offset += buf.len() as u64;
                pending.push_str(&String::from_utf8_lossy(&buf));
                while let Some(end) = pending.find('\n') {
                    let line: String = pending.drain(..=end).collect();
                    if let Some(event) = ProgressEvent::parse_line(&line) {
                        progress.device_event(&event);
                    }
                }
            }
        }
        if stopping {
            return;
        }
        // Woken early by `Tail::stop` (a sleep here made every build end up to 100 ms late).
        std::thread::park_timeout(Duration::from_millis(100));
    }
}
