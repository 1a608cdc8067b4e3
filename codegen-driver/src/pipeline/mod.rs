//! The device build of one crate, as a pipeline of steps: collect kernels → check → lower (MIR →
//! LLVM IR, then `opt`) → `llc` → PTX and `ptxas` → cubin per arch → `fatbinary` → bundle. The
//! steps are planned from the config first, so the progress bar's step count is the plan's length.

mod artifacts;
mod cuda;
mod deferred_traps;
mod fast_twin;
mod flat_index_u32;
#[cfg(test)]
mod golden;
pub mod ir;
mod link;
pub mod llvm;
mod narrow_counters;
mod nvvm_ir;
pub mod object;
mod offset_checks;
mod passes;
mod ptxas_quirks;
mod remat_thread_index;
mod toggle_ranges;
mod tools;
mod uniform_bounds;
mod workdir;

use std::path::PathBuf;
use std::time::Instant;

use oxide_contract::arch::Arch;
use oxide_contract::config::{CONFIG_ENV, DeviceConfig, DeviceDebugInfo, Emit};
use oxide_contract::progress::{ProgressEvent, Step};
use oxide_contract::toolkit::CudaRelease;
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
    /// libNVVM → the crate's LTOIR.
    Ltoir(Arch),
    /// `nvcc` → the LTOIR of the package's CUDA C++ sources.
    Nvcc(Arch),
    /// nvJitLink: Rust and CUDA C++ device code → cubin and PTX (instead of `llc` and `ptxas`).
    Link(Arch),
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
            Task::Ltoir(_) => Step::Ltoir,
            Task::Nvcc(_) => Step::Nvcc,
            Task::Link(_) => Step::Link,
            Task::Fatbin => Step::Fatbin,
            Task::Bundle => Step::Bundle,
        }
    }

    fn arch(self) -> Option<Arch> {
        match self {
            Task::Ptx(a) | Task::Cubin(a) | Task::Ltoir(a) | Task::Nvcc(a) | Task::Link(a) => Some(a),
            _ => None,
        }
    }
}

/// The steps `config` asks for, in the order they run; `linking` when the package names CUDA C++
/// sources, whose device code nvJitLink links with the crate's LTOIR.
fn plan(config: &DeviceConfig, linking: bool) -> Vec<Task> {
    let emits = config.emits();
    let mut tasks = vec![Task::Lower];
    for &arch in &config.archs {
        if linking {
            tasks.extend([Task::Ltoir(arch), Task::Nvcc(arch), Task::Link(arch)]);
            continue;
        }
        tasks.push(Task::Ptx(arch));
        if emits.contains(&Emit::Cubin) {
            tasks.push(Task::Cubin(arch));
        }
        if emits.contains(&Emit::Ltoir) {
            tasks.push(Task::Ltoir(arch));
        }
    }
    if emits.contains(&Emit::Fatbin) {
        tasks.push(Task::Fatbin);
    }
    tasks.push(Task::Bundle);
    tasks
}

/// Progress events for `cargo oxide`'s bars, appended to the config's progress file.
#[derive(Clone)]
struct Progress {
    crate_name: String,
    file: Option<PathBuf>,
}

impl Progress {
    fn send(&self, event: ProgressEvent) {
        if let Some(path) = &self.file {
            let _ = event.append_to(path);
        }
    }

    /// Runs `task`'s work between its `StepStarted` and `StepFinished` events.
    fn run<T, E>(&self, task: Task, work: impl FnOnce() -> Result<T, E>) -> Result<T, E> {
        let crate_name = self.crate_name.clone();
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

/// A crate's device build after lowering: the external tools (llc, ptxas, fatbinary, libNVVM,
/// nvJitLink) run on a thread of their own while rustc generates the host code, so a cold build
/// waits for the longer of the two instead of their sum.
pub struct PendingDevice {
    crate_name: String,
    thread: std::thread::JoinHandle<Result<DeviceOutput, ToolError>>,
}

impl PendingDevice {
    /// Waits for the device build; the error is the message for rustc to report.
    pub fn join(self) -> Result<DeviceOutput, String> {
        let result = match self.thread.join() {
            Ok(result) => result.map_err(|e| e.to_string()),
            Err(_) => Err("the device build's thread panicked".to_string()),
        };
        result.map_err(|message| DeviceError::BuildFailed { crate_name: self.crate_name, message }.message())
    }
}

/// Compiles this crate's kernels, if it has any: lowers them here (errors are reported through
/// rustc's diagnostics and stop the compilation), and starts the rest (see [`PendingDevice`]).
pub fn compile_crate(tcx: TyCtxt<'_>) -> Option<PendingDevice> {
    let kernels = lower::collect::kernels(tcx);
    let exports = lower::exports(tcx, &kernels);
    if kernels.is_empty() && exports.is_empty() {
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

    let sources = cuda_sources(tcx, &config);
    let tasks = plan(&config, !sources.is_empty());
    let progress = Progress { crate_name: crate_name.clone(), file: config.progress_file.clone() };
    let started = Instant::now();
    progress.send(ProgressEvent::CrateStarted {
        crate_name: crate_name.clone(),
        kernels: kernels.len() as u32,
        steps: tasks.len() as u32,
    });
    let mut cx = CodegenCx::new(tcx, config.fmad, config.debuginfo);
    // Under the debugger a failed bounds check should stop at the check itself.
    cx.deferred_bounds = config.debuginfo != DeviceDebugInfo::Full;
    cx.fast_math = config.fast_math;
    cx.archs = config.archs.clone();
    let crate_in = CrateIn { name: &crate_name, kernels: &kernels, exports: &exports, sources: &sources };
    let failed = |stop: Stop| {
        let message = match stop {
            Stop::Unsupported => "device code uses unsupported Rust (see the errors above)".to_string(),
            Stop::Tool(e) => e.to_string(),
        };
        progress.send(ProgressEvent::CrateFailed { crate_name: crate_name.clone(), message: message.clone() });
        if tcx.dcx().has_errors().is_none() {
            report_at(tcx, None, DeviceError::BuildFailed { crate_name: crate_name.clone(), message });
        }
        tcx.dcx().abort_if_errors();
    };
    let external = match lower_crate(&cx, config, &crate_in, tasks, &progress) {
        Ok(external) => external,
        Err(stop) => {
            failed(stop);
            return None;
        }
    };
    let thread_progress = progress.clone();
    let spawned = std::thread::Builder::new().name(format!("device build of {crate_name}")).spawn(move || {
        let progress = thread_progress;
        let result = external.run(&progress);
        match &result {
            Ok(_) => {
                let millis = started.elapsed().as_millis() as u64;
                progress.send(ProgressEvent::CrateFinished { crate_name: progress.crate_name.clone(), millis });
            }
            Err(e) => progress
                .send(ProgressEvent::CrateFailed { crate_name: progress.crate_name.clone(), message: e.to_string() }),
        }
        result
    });
    match spawned {
        Ok(thread) => Some(PendingDevice { crate_name, thread }),
        Err(e) => {
            failed(Stop::Tool(ToolError::Io("a thread for the device build".into(), e)));
            None
        }
    }
}

/// The CUDA C++ sources this crate links: its package's (cargo sets `CARGO_MANIFEST_DIR` for each
/// crate), and those of the libraries it depends on, whose `#[device]` extern blocks its kernels
/// may call.
fn cuda_sources(tcx: TyCtxt<'_>, config: &DeviceConfig) -> Vec<oxide_contract::config::PackageSources> {
    let own = std::env::var_os("CARGO_MANIFEST_DIR")
        .and_then(|dir| config.sources_of_package(std::path::Path::new(&dir)).cloned());
    let deps = tcx.crates(()).iter().filter_map(|&cnum| config.sources_of_library(tcx.crate_name(cnum).as_str()));
    let mut out: Vec<_> = own.into_iter().collect();
    for dep in deps {
        if !out.contains(dep) {
            out.push(dep.clone());
        }
    }
    out
}

/// What one crate's device build starts from.
struct CrateIn<'a, 'tcx> {
    name: &'a str,
    kernels: &'a [lower::collect::KernelRoot<'tcx>],
    exports: &'a [lower::Export<'tcx>],
    /// The CUDA C++ sources to link (see [`cuda_sources`]).
    sources: &'a [oxide_contract::config::PackageSources],
}

/// The part of a device build that needs no `TyCtxt`: everything after lowering and `opt`.
struct External {
    config: DeviceConfig,
    tasks: Vec<Task>,
    /// The lowest arch the tasks build for (after `arch_upgrades`): the fatbinary's.
    lowest_arch: Arch,
    crate_name: String,
    sources: Vec<oxide_contract::config::PackageSources>,
    optimized: llvm::Optimized,
    infos: Vec<oxide_contract::manifest::KernelInfo>,
    work: WorkDir,
    isa_floor: (u32, u32),
    /// The artifact folder's name for the crate ([`object::crate_dir`]).
    crate_dir: String,
    interop: artifacts::Interop,
    symbol: String,
    stand_ins: Vec<String>,
    /// For a crate that may be an rlib: the host target's triple and data layout, for the
    /// bitcode of the bundle (`object::host_ir`).
    rlib_target: Option<(String, String)>,
}

/// Lowers the crate's device code (in rustc's thread, with its `TyCtxt`) and gathers what the
/// rest of the build needs.
fn lower_crate<'tcx>(
    cx: &CodegenCx<'tcx>,
    config: DeviceConfig,
    crate_in: &CrateIn<'_, 'tcx>,
    tasks: Vec<Task>,
    progress: &Progress,
) -> Result<External, Stop> {
    let (crate_name, kernels) = (crate_in.name, crate_in.kernels);
    let tools = &config.tools;
    let large_params = kernels
        .iter()
        .any(|k| lower::check::param_bytes(cx.tcx, k) > oxide_contract::limits::CLASSIC_KERNEL_PARAM_BYTES);
    let (optimized, infos, work) = progress.run(Task::Lower, || {
        let infos = lower::lower(cx, kernels, crate_in.exports);
        if cx.failed() {
            return Err(Stop::Unsupported);
        }
        let work = WorkDir::create(&config, &object::crate_dir(cx.tcx))?;
        let mut optimized = llvm::optimize(
            tools,
            &work,
            crate_name,
            lower::TRIPLE,
            config.lowest_arch(),
            config.debuginfo,
            &lower::print(cx),
        )?;
        lower::report_unavailable(cx, optimized.liveness_text());
        if crate_in.sources.is_empty() {
            // A CUDA C++ function called without sources to link it from.
            for (instance, _) in lower::live_imports(cx, optimized.liveness_text()) {
                lower::errors::import_without_sources(cx, instance, crate_name);
            }
        }
        if cx.failed() {
            work.remove();
            return Err(Stop::Unsupported);
        }
        if optimized.optimized_reference.is_some() {
            let unavailable = cx.unavailable.borrow();
            let names: Vec<&str> = unavailable.iter().map(|(name, _)| name.as_str()).collect();
            optimized.stub_dead_calls(&names)?;
        }
        let mut infos = infos;
        for info in &mut infos {
            if let Some((_, fast)) = optimized.fast.iter().find(|(name, _)| *name == info.entry) {
                info.fast = Some(fast.clone());
            }
        }
        Ok((optimized, infos, work))
    })?;
    let tasks = arch_upgrades(cx, &tasks);
    let lowest_arch = tasks.iter().filter_map(|t| t.arch()).min().unwrap_or(config.lowest_arch());
    // Large parameter spaces, hand-written PTX and some instructions (sm_90's TMA and mbarrier
    // forms) need a newer PTX ISA than the lowest that targets the arch.
    let isa_floor = llvm::isa_floor(large_params, cx.user_ptx.get()).max(cx.ptx_isa_floor.get());
    let tcx = cx.tcx;
    let interop = artifacts::Interop {
        fmad: config.fmad,
        exports: crate_in.exports.iter().map(|e| e.record(tcx)).collect(),
        imports: lower::live_imports(cx, &optimized.text).into_iter().map(|(_, f)| f).collect(),
    };
    let rlib = tcx.crate_types().contains(&rustc_session::config::CrateType::Rlib);
    let target = &tcx.sess.target;
    Ok(External {
        tasks,
        lowest_arch,
        crate_name: crate_name.to_string(),
        sources: crate_in.sources.to_vec(),
        optimized,
        infos,
        work,
        isa_floor,
        crate_dir: object::crate_dir(tcx),
        interop,
        symbol: object::bundle_symbol(tcx),
        stand_ins: object::host_stand_ins(tcx),
        rlib_target: rlib.then(|| (target.llvm_target.to_string(), target.data_layout.to_string())),
        config,
    })
}

impl External {
    /// Runs the planned tasks after lowering: the bundle, and for a crate that may be an rlib the
    /// bitcode of the bundle for LTO (`object::host_ir`).
    fn run(mut self, progress: &Progress) -> Result<DeviceOutput, ToolError> {
        let (config, work, crate_name) = (&self.config, &self.work, self.crate_name.as_str());
        let tools = &config.tools;
        let optimized = &self.optimized;
        let mut built = Built::default();
        let mut bundle = Vec::new();
        let nvvm_ir = self
            .tasks
            .iter()
            .any(|t| matches!(t, Task::Ltoir(_)))
            .then(|| nvvm_ir::nvvm_ir(&optimized.text, config.debuginfo.link_debug()));
        let mut source_ltoir: Vec<(PathBuf, Option<CudaRelease>)> = Vec::new();
        for &task in self.tasks.iter().filter(|t| **t != Task::Lower) {
            progress.run(task, || -> Result<(), ToolError> {
                match task {
                    Task::Lower => {}
                    Task::Ptx(arch) => built.ptx.push((
                        arch,
                        llvm::llc(tools, work, crate_name, optimized, arch, self.isa_floor, config.debuginfo)?,
                    )),
                    Task::Cubin(arch) => {
                        let ptx = built.ptx_for(arch).cloned().unwrap_or_default();
                        built.cubins.push((arch, cuda::ptxas(tools, work, crate_name, &ptx, arch, config.debuginfo)?));
                    }
                    Task::Ltoir(arch) => {
                        let ir = nvvm_ir.as_deref().unwrap_or_default();
                        let ltoir =
                            link::ltoir(tools, work, crate_name, ir, arch, config.fmad, config.debuginfo.link_debug())?;
                        built.ltoir.push((arch, ltoir, tools.libnvvm_release));
                    }
                    Task::Nvcc(arch) => {
                        source_ltoir.clear();
                        for sources in &self.sources {
                            source_ltoir.extend(link::cuda_sources(tools, work, crate_name, sources, arch)?);
                        }
                    }
                    Task::Link(arch) => {
                        let own = built
                            .ltoir
                            .iter()
                            .find(|(a, ..)| *a == arch)
                            .map(|(_, p, _)| p.clone())
                            .unwrap_or_default();
                        let inputs: Vec<PathBuf> = source_ltoir.iter().map(|(p, _)| p.clone()).collect();
                        let (cubin, ptx) = link::link(config, work, crate_name, &own, &inputs, arch)?;
                        built.cubins.push((arch, cubin));
                        built.ptx.push((arch, ptx));
                        if config.emits().contains(&Emit::Ltoir) {
                            // With the crate's LTOIR, the sources' LTOIR: a load-time link needs both.
                            let ltoir =
                                source_ltoir.iter().filter(|(p, _)| p.extension().is_some_and(|e| e == "ltoir"));
                            built.source_ltoir.extend(ltoir.map(|(p, release)| (arch, p.clone(), *release)));
                        } else {
                            built.ltoir.retain(|(a, ..)| *a != arch);
                        }
                    }
                    Task::Fatbin => {
                        let fatbin = cuda::fatbinary(tools, work, crate_name, &built.cubins, &built.ptx)?;
                        built.fatbin = Some((self.lowest_arch, fatbin));
                    }
                    Task::Bundle => {
                        let kernels = std::mem::take(&mut self.infos);
                        bundle =
                            artifacts::write(tools, work, crate_name, &self.crate_dir, kernels, &built, &self.interop)?
                    }
                }
                Ok(())
            })?;
        }
        let bitcode = match &self.rlib_target {
            Some((triple, datalayout)) => {
                let ir = object::host_ir(&self.symbol, &bundle, &self.stand_ins, triple, datalayout);
                Some(llvm::assemble(tools, work, crate_name, &ir)?)
            }
            None => None,
        };
        let External { work, symbol, stand_ins, .. } = self;
        work.remove();
        Ok(DeviceOutput { symbol, bundle, bitcode, stand_ins })
    }
}

/// `tasks` with every plain arch that lowering upgraded (`CodegenCx::arch_upgrades`) replaced by
/// its arch-specific variant, or dropped when the build has that variant already; each upgrade
/// is noted in the build output. The plain target cannot hold those instructions, and the
/// variant's code runs on the same GPUs the kernels using them can run on.
fn arch_upgrades(cx: &CodegenCx<'_>, tasks: &[Task]) -> Vec<Task> {
    let upgrades = cx.arch_upgrades.borrow();
    let crate_name = cx.tcx.crate_name(rustc_hir::def_id::LOCAL_CRATE);
    for (from, to, op) in upgrades.iter() {
        cx.tcx.dcx().note(format!(
            "crate `{crate_name}` uses `{op}`, which {from} lacks: its device code for {from} is built for {to} \
             instead (it loads only on compute capability {}.{} GPUs); pass `--arch {to}` to ask for this",
            to.major(),
            to.minor()
        ));
    }
    let upgraded = |arch: Arch| upgrades.iter().find(|(from, _, _)| *from == arch).map(|(_, to, _)| *to);
    let has = |arch: Arch| cx.archs.contains(&arch);
    let mut out = Vec::new();
    for &task in tasks {
        let task = match (task.arch().and_then(upgraded), task) {
            (Some(to), _) if has(to) => continue,
            (Some(to), Task::Ptx(_)) => Task::Ptx(to),
            (Some(to), Task::Cubin(_)) => Task::Cubin(to),
            (Some(to), Task::Ltoir(_)) => Task::Ltoir(to),
            (Some(to), Task::Nvcc(_)) => Task::Nvcc(to),
            (Some(to), Task::Link(_)) => Task::Link(to),
            (_, task) => task,
        };
        out.push(task);
    }
    out
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
            debuginfo: Default::default(),
            artifact_dir: "/t".into(),
            tools: Default::default(),
            progress_file: None,
            compiler: String::new(),
            cuda_sources: Vec::new(),
        }
    }

    #[test]
    fn plans_follow_the_config() {
        let one = plan(&config("sm_90", &[]), false);
        let sm90 = Arch::parse("sm_90").unwrap();
        assert_eq!(one, [Task::Lower, Task::Ptx(sm90), Task::Cubin(sm90), Task::Bundle]);
        let two = plan(&config("sm_80,sm_90", &[]), false);
        assert_eq!(two.len(), 7);
        assert_eq!(two[5], Task::Fatbin);
        assert_eq!(plan(&config("sm_90", &[Emit::Fatbin]), false).len(), 5);
        let lto = plan(&config("sm_90", &[Emit::Ltoir]), false);
        assert_eq!(lto, [Task::Lower, Task::Ptx(sm90), Task::Cubin(sm90), Task::Ltoir(sm90), Task::Bundle]);
        // CUDA C++ sources: nvJitLink makes the cubin and PTX from LTOIR.
        let linked = plan(&config("sm_90", &[]), true);
        assert_eq!(linked, [Task::Lower, Task::Ltoir(sm90), Task::Nvcc(sm90), Task::Link(sm90), Task::Bundle]);
    }
}
