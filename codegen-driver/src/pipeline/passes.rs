//! The passes after the first `opt`, in the order they run, with the short `opt` runs between
//! them: one table ([`STAGES`]), and the runner that parses each `opt` output once, runs the
//! passes on the model, and (with `oxide_contract::config::VERIFY_PASSES_ENV`) verifies what each
//! pass made.

use std::ffi::OsStr;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use oxide_contract::config::{DeviceDebugInfo, ToolPaths, VERIFY_PASSES_ENV, VERIFY_PASSES_LOG_ENV};
use oxide_contract::fast_launch::FastLaunch;

use super::ir::Module;
use super::tools::{ToolError, run};
use super::workdir::WorkDir;
use super::{
    deferred_traps, fast_twin, flat_index_u32, narrow_counters, offset_checks, ptxas_quirks, remat_thread_index,
    toggle_ranges, uniform_bounds,
};

/// What the passes know besides the module, and what they hand on.
pub struct State {
    pub debuginfo: DeviceDebugInfo,
    /// The kernels that got an unchecked twin (by entry name), from `uniform_bounds` to
    /// `fast_twin` and the manifest.
    pub fast: Vec<(String, FastLaunch)>,
}

impl State {
    pub fn new(debuginfo: DeviceDebugInfo) -> State {
        State { debuginfo, fast: Vec::new() }
    }
}

/// A pass: edits the module, returns whether it changed it.
pub type Pass = fn(&mut Module, &mut State) -> bool;

/// One stage of the pipeline after the first `opt`.
pub enum Stage {
    Pass(&'static str, Pass),
    /// `opt` with `args` (after the target), when the pass named `after` changed the module.
    Opt {
        stage: &'static str,
        after: &'static str,
        args: &'static [&'static str],
    },
}

/// The stages, in order (each pass's module docs say what it does and why it runs there).
pub const STAGES: &[Stage] = &[
    // Kernels whose checks pass under a condition on uniform values get a copy without them.
    Stage::Pass("uniform_bounds", uniform_bounds::run),
    // 0-or-1 loop values get their range, and a short run folds the checks that depended on it,
    // before the traps are placed: a check left in a loop costs it a trap at its back-edge.
    // `instcombine` folds those at constant offsets (sgemm128's unrolled k tile); `indvars` those
    // that also depend on an inner loop's counter (`tile[buf * N + j]`).
    Stage::Pass("toggle_ranges", toggle_ranges::run),
    Stage::Opt {
        stage: "ranges",
        after: "toggle_ranges",
        args: &["-passes=function(instcombine<no-verify-fixpoint>,loop(indvars),instcombine<no-verify-fixpoint>)"],
    },
    // The traps of deferred bounds checks go where the optimised code leaves its loops and
    // functions; a short `opt` puts their flags in registers. `speculative-execution` (LLVM's
    // pass for GPUs) then hoists the address arithmetic out of small guarded blocks
    // (`if i < n { a[i] }`), leaving ptxas blocks it can predicate, and folds the fast copy's
    // poison selects. It gives up on a block with more instructions it cannot hoist than
    // `not-hoisted`; SROA splits each `F32x4` load into four scalar ones (llc joins them again),
    // so two vector loads count 8 and a limit of 8 left sgemm128's next-tile loads in a branch
    // that ptxas scheduled after all 512 FMAs (bench/notes.md).
    Stage::Pass("deferred_traps", deferred_traps::run),
    Stage::Opt {
        stage: "traps",
        after: "deferred_traps",
        args: &[
            "-passes=sroa,early-cse,instcombine<no-verify-fixpoint>,speculative-execution",
            "-spec-exec-max-speculation-cost=20",
            "-spec-exec-max-not-hoisted=16",
        ],
    },
    Stage::Pass("drop_dead_traps", deferred_traps::drop_dead_traps),
    // After the second `opt`, whose instcombine would undo them: the fast copy of a flat kernel
    // computes its index in 32 bits; accesses at constant offsets from one index share one
    // check; loop counters with constant ranges become 32-bit; thread indices used only after a
    // loop are computed again there.
    Stage::Pass("flat_index_u32", flat_index_u32::run),
    Stage::Pass("offset_checks", offset_checks::run),
    Stage::Pass("narrow_counters", narrow_counters::run),
    Stage::Pass("remat_thread_index", remat_thread_index::run),
    // Each versioned kernel's unchecked twin, once its fast copy is final.
    Stage::Pass("fast_twin", fast_twin::run),
    // Last: keeps ptxas away from code it miscompiles.
    Stage::Pass("ptxas_quirks", ptxas_quirks::run),
];

/// Where the `opt` runs between passes happen.
pub struct Runner<'a> {
    pub tools: &'a ToolPaths,
    pub work: &'a WorkDir,
    pub crate_name: &'a str,
    /// `-mtriple=…`, `-mcpu=…`.
    pub target: [&'a str; 2],
}

/// Whether `VERIFY_PASSES_ENV` asks for verification.
pub fn verify_requested() -> bool {
    std::env::var(VERIFY_PASSES_ENV).is_ok_and(|v| v == "1")
}

impl Runner<'_> {
    /// Runs `stages` on `module`; with `verify`, checks each pass's output with `opt`.
    pub fn run(&self, stages: &[Stage], module: &mut Module, state: &mut State, verify: bool) -> Result<(), ToolError> {
        let mut changed: Vec<&str> = Vec::new();
        for stage in stages {
            match stage {
                Stage::Pass(name, pass) => {
                    if pass(module, state) {
                        changed.push(name);
                        if verify {
                            self.verify(name, module)?;
                        }
                    }
                }
                Stage::Opt { stage, after, args } => {
                    if changed.contains(after) {
                        *module = self.opt(stage, module, args)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// `opt` over `module` (written to `<crate>.<stage>.ll`, removed after), read back.
    fn opt(&self, stage: &str, module: &Module, args: &[&str]) -> Result<Module, ToolError> {
        let input = self.work.path(&format!("{}.{stage}.ll", self.crate_name));
        let output = self.work.path(&format!("{}.{stage}.out.ll", self.crate_name));
        write(&input, &module.to_string())?;
        let mut all: Vec<&OsStr> = self.target.iter().map(OsStr::new).collect();
        all.extend(args.iter().map(OsStr::new));
        all.extend(["-S".as_ref(), input.as_os_str(), "-o".as_ref(), output.as_os_str()]);
        run(&self.tools.opt, &all, &input)?;
        let text = std::fs::read_to_string(&output).map_err(|e| ToolError::Io(output.clone(), e))?;
        let _ = std::fs::remove_file(&input);
        let _ = std::fs::remove_file(&output);
        Ok(Module::parse(&text))
    }

    /// `opt -passes=verify` on the module `pass` made; the module is kept where it fails.
    fn verify(&self, pass: &str, module: &Module) -> Result<(), ToolError> {
        let path = self.work.path(&format!("{}.after-{pass}.ll", self.crate_name));
        verify_file(&self.tools.opt, pass, &module.to_string(), &path)?;
        let _ = std::fs::remove_file(&path);
        if let Ok(log) = std::env::var(VERIFY_PASSES_LOG_ENV) {
            let line = format!("{} {pass} {}\n", self.crate_name, module.definitions());
            let _ = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(log)
                .and_then(|mut f| f.write_all(line.as_bytes()));
        }
        Ok(())
    }
}

/// Writes `text` to `path` and has `opt` verify it; the error names `pass`.
pub fn verify_file(opt: &Path, pass: &str, text: &str, path: &Path) -> Result<(), ToolError> {
    write(path, text)?;
    let args: [&OsStr; 3] = ["-passes=verify".as_ref(), "-disable-output".as_ref(), path.as_os_str()];
    run(opt, &args, path).map(drop).map_err(|e| match e {
        ToolError::Failed { stderr, input, .. } => ToolError::InvalidPass { pass: pass.to_string(), stderr, input },
        other => other,
    })
}

fn write(path: &Path, text: &str) -> Result<(), ToolError> {
    std::fs::write(path, text).map_err(|e| ToolError::Io(PathBuf::from(path), e))
}
