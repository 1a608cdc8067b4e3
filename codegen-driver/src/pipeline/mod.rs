//! The device build of one crate, as a pipeline of steps: collect kernels → check → lower (MIR →
//! LLVM IR, then `opt`) → `llc` → PTX and `ptxas` → cubin per arch → `fatbinary` → bundle. The
//! steps are planned from the config first, so the progress bar's step count is the plan's length.

mod artifacts;
mod cuda;
mod deferred_traps;
pub mod llvm;
pub mod object;
mod tools;
mod workdir;

use std::path::PathBuf;
use std::time::Instant;

use oxide_contract::arch::Arch;
use oxide_contract::config::{CONFIG_ENV, DeviceConfig, Emit};
use oxide_contract::progress::{ProgressEvent, Step};
use rustc_middle::ty::TyCtxt;

use crate::lower::errors::{DeviceError, report_at};
use crate::lower::{self, CodegenCx};
use artifacts::Built;
use object::DeviceOutput;
use tools::ToolError;
use workdir::WorkDir;

/// One step of the plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Task {
    /// MIR → LLVM IR, libdevice, `opt`.
    Lower,
    Ptx(Arch),
    Cubin(Arch),
    Fatbin,
    /// Manifest, bundle bytes, published files.
    Bundle,
}

impl Task {
    fn step(self) -> Step {
        match self {
            Task::Lower => Step::Lower,
            Task::Ptx(_) => Step::Ptx,
            Task::Cubin(_) => Step::Cubin,
            Task::Fatbin => Step::Fatbin,
            Task::Bundle => Step::Bundle,
        }
    }

    fn arch(self) -> Option<Arch> {
        match self {
            Task::Ptx(a) | Task::Cubin(a) => Some(a),
            _ => None,
        }
    }
}

/// The steps `config` asks for, in the order they run.
fn plan(config: &DeviceConfig) -> Vec<Task> {
    let emits = config.emits();
    let mut tasks = vec![Task::Lower];
    for &arch in &config.archs {
        tasks.push(Task::Ptx(arch));
        if emits.contains(&Emit::Cubin) {
            tasks.push(Task::Cubin(arch));
        }
    }
    if emits.contains(&Emit::Fatbin) {
        tasks.push(Task::Fatbin);
    }
    tasks.push(Task::Bundle);
    tasks
}

/// Progress events for `cargo oxide`'s bars, appended to the config's progress file.
struct Progress<'a> {
    crate_name: &'a str,
    file: Option<&'a PathBuf>,
}

impl Progress<'_> {
    fn send(&self, event: ProgressEvent) {
        if let Some(path) = self.file {
            let _ = event.append_to(path);
        }
    }

    /// Runs `task`'s work between its `StepStarted` and `StepFinished` events.
    fn run<T, E>(&self, task: Task, work: impl FnOnce() -> Result<T, E>) -> Result<T, E> {
        let crate_name = self.crate_name.to_string();
        let (step, arch) = (task.step(), task.arch().map(|a| a.to_string()));
        let t = Instant::now();
        self.send(ProgressEvent::StepStarted { crate_name: crate_name.clone(), step, arch: arch.clone() });
        let out = work()?;
        self.send(ProgressEvent::StepFinished { crate_name, step, arch, millis: t.elapsed().as_millis() as u64 });
        Ok(out)
    }
}

/// Why the build stopped after lowering started.
enum Stop {
    /// Unsupported device code: the errors are reported already.
    Unsupported,
    Tool(ToolError),
}

impl From<ToolError> for Stop {
    fn from(e: ToolError) -> Stop {
        Stop::Tool(e)
    }
}

/// Compiles this crate's kernels, if it has any. Errors are reported through rustc's diagnostics
/// (and stop the compilation).
pub fn compile_crate(tcx: TyCtxt<'_>) -> Option<DeviceOutput> {
    let kernels = lower::collect::kernels(tcx);
    if kernels.is_empty() {
        return None;
    }
    let crate_name = tcx.crate_name(rustc_hir::def_id::LOCAL_CRATE).to_string();
    let config = match DeviceConfig::from_env() {
        Ok(Some(config)) => config,
        Ok(None) => {
            report_at(tcx, None, DeviceError::ConfigMissing { crate_name, var: CONFIG_ENV });
            return None;
        }
        Err(e) => {
            report_at(tcx, None, DeviceError::ConfigInvalid { error: e.to_string() });
            return None;
        }
    };
    if !lower::check::kernels(tcx, &kernels, &config.archs) {
        return None;
    }

    let tasks = plan(&config);
    let progress = Progress { crate_name: &crate_name, file: config.progress_file.as_ref() };
    let started = Instant::now();
    progress.send(ProgressEvent::CrateStarted {
        crate_name: crate_name.clone(),
        kernels: kernels.len() as u32,
        steps: tasks.len() as u32,
    });
    let mut cx = CodegenCx::new(tcx, config.fmad);
    // Under the debugger a failed bounds check should stop at the check itself.
    cx.deferred_bounds = !config.debug;
    cx.fast_math = config.fast_math;
    match run(&cx, &config, &crate_name, &kernels, &tasks, &progress) {
        Ok((bundle, bitcode)) => {
            let millis = started.elapsed().as_millis() as u64;
            progress.send(ProgressEvent::CrateFinished { crate_name: crate_name.clone(), millis });
            Some(DeviceOutput { symbol: object::bundle_symbol(tcx), bundle, bitcode })
        }
        Err(stop) => {
            let message = match stop {
                Stop::Unsupported => "device code uses unsupported Rust (see the errors above)".to_string(),
                Stop::Tool(e) => e.to_string(),
            };
            progress.send(ProgressEvent::CrateFailed { crate_name: crate_name.clone(), message: message.clone() });
            if tcx.dcx().has_errors().is_none() {
                report_at(tcx, None, DeviceError::BuildFailed { crate_name, message });
            }
            tcx.dcx().abort_if_errors();
            None
        }
    }
}

/// Runs the planned tasks; returns the bundle bytes and, for a crate that may be an rlib, the
/// bitcode of the bundle for LTO (`object::host_ir`).
fn run<'tcx>(
    cx: &CodegenCx<'tcx>,
    config: &DeviceConfig,
    crate_name: &str,
    kernels: &[lower::collect::KernelRoot<'tcx>],
    tasks: &[Task],
    progress: &Progress<'_>,
) -> Result<(Vec<u8>, Option<Vec<u8>>), Stop> {
    let tools = &config.tools;
    let large_params = kernels
        .iter()
        .any(|k| lower::check::param_bytes(cx.tcx, k) > oxide_contract::limits::CLASSIC_KERNEL_PARAM_BYTES);
    let (optimized, mut infos, work) = progress.run(Task::Lower, || {
        let infos = lower::lower(cx, kernels);
        if cx.failed() {
            return Err(Stop::Unsupported);
        }
        let work = WorkDir::create(config, &object::crate_dir(cx.tcx))?;
        let optimized =
            llvm::optimize(tools, &work, crate_name, lower::TRIPLE, config.lowest_arch(), &lower::print(cx))?;
        lower::report_unavailable(cx, &optimized.text);
        if cx.failed() {
            work.remove();
            return Err(Stop::Unsupported);
        }
        Ok((optimized, infos, work))
    })?;

    let mut built = Built::default();
    let mut bundle = Vec::new();
    for &task in tasks.iter().filter(|t| **t != Task::Lower) {
        progress.run(task, || -> Result<(), Stop> {
            match task {
                Task::Lower => {}
                Task::Ptx(arch) => {
                    built.ptx.push((arch, llvm::llc(tools, &work, crate_name, &optimized, arch, large_params)?))
                }
                Task::Cubin(arch) => {
                    let ptx = built.ptx_for(arch).cloned().unwrap_or_default();
                    built.cubins.push((arch, cuda::ptxas(tools, &work, crate_name, &ptx, arch, config.debug)?));
                }
                Task::Fatbin => {
                    let fatbin = cuda::fatbinary(tools, &work, crate_name, &built.cubins, &built.ptx)?;
                    built.fatbin = Some((config.lowest_arch(), fatbin));
                }
                Task::Bundle => {
                    let dir = object::crate_dir(cx.tcx);
                    bundle = artifacts::write(tools, &work, crate_name, &dir, std::mem::take(&mut infos), &built)?
                }
            }
            Ok(())
        })?;
    }
    let tcx = cx.tcx;
    let bitcode = if tcx.crate_types().contains(&rustc_session::config::CrateType::Rlib) {
        let target = &tcx.sess.target;
        let ir = object::host_ir(&object::bundle_symbol(tcx), &bundle, &target.llvm_target, &target.data_layout);
        Some(llvm::assemble(tools, &work, crate_name, &ir)?)
    } else {
        None
    };
    work.remove();
    Ok((bundle, bitcode))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(archs: &str, emit: &[Emit]) -> DeviceConfig {
        DeviceConfig {
            archs: Arch::parse_list(archs).unwrap(),
            emit: emit.to_vec(),
            fmad: true,
            fast_math: false,
            debug: false,
            artifact_dir: "/t".into(),
            tools: Default::default(),
            progress_file: None,
            compiler: String::new(),
        }
    }

    #[test]
    fn plans_follow_the_config() {
        let one = plan(&config("sm_90", &[]));
        let sm90 = Arch::parse("sm_90").unwrap();
        assert_eq!(one, [Task::Lower, Task::Ptx(sm90), Task::Cubin(sm90), Task::Bundle]);
        let two = plan(&config("sm_80,sm_90", &[]));
        assert_eq!(two.len(), 7);
        assert_eq!(two[5], Task::Fatbin);
        assert_eq!(plan(&config("sm_90", &[Emit::Fatbin])).len(), 5);
    }
}
