//! The device pipeline of one crate: find kernels → lower their call graph MIR → LLVM IR
//! (through rustc_codegen_ssa and our text builder) → PTX/cubin/fatbin → bundle.

mod abi;
mod builder;
mod builder_support;
mod cast;
mod collect;
mod consts;
mod context;
mod entry;
mod errors;
mod intrinsic;
mod ir;
mod type_;

use std::time::Instant;

use oxide_format::config::{CONFIG_ENV, DeviceConfig};
use oxide_format::progress::{ProgressEvent, Step};
use rustc_codegen_ssa::traits::*;
use rustc_middle::ty::{Instance, InstanceKind, TyCtxt};

use crate::bundle::DeviceOutput;
use builder::Builder;
use context::CodegenCx;

/// LLVM's NVPTX target; host layouts are reused as they are (both are 64-bit little endian with
/// the same scalar alignments), so one `TyCtxt` serves both sides.
pub const TRIPLE: &str = "nvptx64-nvidia-cuda";
pub const DATALAYOUT: &str = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64";

/// Compiles this crate's kernels, if it has any. Errors are reported through rustc's diagnostics.
pub fn compile_crate(tcx: TyCtxt<'_>) -> Option<DeviceOutput> {
    let kernels = collect::kernels(tcx);
    if kernels.is_empty() {
        return None;
    }
    let crate_name = tcx.crate_name(rustc_hir::def_id::LOCAL_CRATE).to_string();
    let config = match DeviceConfig::from_env() {
        Ok(Some(config)) => config,
        Ok(None) => {
            tcx.dcx().err(format!(
                "crate `{crate_name}` has #[kernel] functions, but {CONFIG_ENV} is not set: \
                 build it with `cargo oxide build`, which compiles the device code"
            ));
            return None;
        }
        Err(e) => {
            tcx.dcx().err(format!("{e}; rebuild with `cargo oxide build`"));
            return None;
        }
    };

    if !check_cluster_archs(tcx, &kernels, &config) {
        return None;
    }

    let progress = |event: ProgressEvent| {
        if let Some(path) = &config.progress_file {
            let _ = event.append_to(path);
        }
    };
    // Reports a failed device build (the diagnostics are out already) and stops the compilation.
    let fail = |message: String| -> Option<DeviceOutput> {
        progress(ProgressEvent::CrateFailed { crate_name: crate_name.clone(), message: message.clone() });
        if tcx.dcx().has_errors().is_none() {
            tcx.dcx().err(format!("device build of `{crate_name}` failed: {message}"));
        }
        tcx.dcx().abort_if_errors();
        None
    };
    const UNSUPPORTED: &str = "device code uses unsupported Rust (see the errors above)";
    let started = Instant::now();
    progress(ProgressEvent::CrateStarted {
        crate_name: crate_name.clone(),
        kernels: kernels.len() as u32,
        steps: crate::toolchain::step_count(&config),
    });

    let lower_start = Instant::now();
    progress(ProgressEvent::StepStarted { crate_name: crate_name.clone(), step: Step::Lower, arch: None });
    let cx = CodegenCx::new(tcx, config.fmad);
    let infos: Vec<_> = kernels.iter().map(|k| entry::define(&cx, k)).collect();
    loop {
        let next = cx.queue.borrow_mut().pop();
        let Some(instance) = next else { break };
        define(&cx, instance);
    }
    if cx.failed.get() || tcx.dcx().has_errors().is_some() {
        return fail(UNSUPPORTED.into());
    }
    let ll = cx.module.borrow().print(TRIPLE, DATALAYOUT, "");
    let optimized = match crate::toolchain::optimize(&config, &crate_name, &ll) {
        Ok(o) => o,
        Err(e) => return fail(e.to_string()),
    };
    // Functions without a device body are errors only if optimisation kept them: code that only a
    // panic path references (formatting a panic message, say) is gone by now.
    let missing = cx.unavailable.borrow().clone();
    let names: Vec<String> = missing.iter().map(|(name, _)| name.clone()).collect();
    let live = crate::toolchain::still_referenced(&optimized.text, names.iter().map(String::as_str));
    for (name, instance) in &missing {
        if live.contains(&name.as_str()) {
            errors::unavailable(&cx, *instance);
        }
    }
    errors::report_deferred(&cx);
    if cx.failed.get() {
        optimized.discard();
        return fail(UNSUPPORTED.into());
    }
    progress(ProgressEvent::StepFinished {
        crate_name: crate_name.clone(),
        step: Step::Lower,
        arch: None,
        millis: lower_start.elapsed().as_millis() as u64,
    });

    let result = crate::toolchain::build_device_artifacts(&config, &crate_name, &optimized, infos, &progress);
    match result {
        Ok(output) => {
            progress(ProgressEvent::CrateFinished { crate_name: crate_name.clone(), millis: started.elapsed().as_millis() as u64 });
            Some(output)
        }
        Err(e) => fail(e.to_string()),
    }
}

/// Gives one queued instance its body.
fn define<'tcx>(cx: &CodegenCx<'tcx>, instance: Instance<'tcx>) {
    let tcx = cx.tcx;
    cx.current.set(Some(instance));
    cx.current_span.set(rustc_span::DUMMY_SP);
    if intrinsic::define_device_intrinsic(cx, instance) {
        return;
    }
    if let InstanceKind::Item(def_id) = instance.def {
        cx.set_inlined_spans(tcx, def_id);
    }
    let has_mir = match instance.def {
        InstanceKind::Item(def_id) => tcx.is_mir_available(def_id) && !tcx.is_foreign_item(def_id),
        InstanceKind::Intrinsic(_) | InstanceKind::Virtual(..) => false,
        _ => true,
    };
    if has_mir {
        if !required_consts_ok(tcx, instance) {
            cx.failed.set(true);
            return;
        }
        without_ice(cx, instance, || rustc_codegen_ssa::mir::codegen_mir::<Builder<'_, 'tcx>>(cx, instance));
        return;
    }
    // Functions without a body that never return are core's panic entry points (precompiled, no
    // MIR): on the device a panic traps, which the host sees as an error at the next sync.
    let returns_never = tcx
        .fn_sig(instance.def_id())
        .instantiate(tcx, instance.args)
        .skip_binder()
        .output()
        .is_never();
    if intrinsic::define_libm(cx, instance) {
        return;
    }
    let f = cx.get_fn(instance);
    if !returns_never {
        // Left as a declaration; an error if optimisation does not remove every use of it.
        let idx = cx.func_index(f) as usize;
        let name = cx.module.borrow().funcs[idx].name.clone();
        cx.unavailable.borrow_mut().push((name, instance));
        return;
    }
    let start = Builder::append_block(cx, f, "start");
    let mut bx = Builder::build(cx, start);
    bx.abort();
    bx.unreachable();
}

/// Thread block clusters exist from sm_90 on: a `#[cluster_launch]` kernel built for an older
/// arch is an error at the kernel (all such kernels reported in one run).
fn check_cluster_archs(tcx: TyCtxt<'_>, kernels: &[collect::KernelRoot<'_>], config: &DeviceConfig) -> bool {
    let old: Vec<String> = config.archs.iter().filter(|a| a.sm() < 90).map(|a| a.to_string()).collect();
    if old.is_empty() {
        return true;
    }
    let mut ok = true;
    for k in kernels.iter().filter(|k| k.cluster_dims.is_some()) {
        let span = tcx.def_span(k.instance.def_id());
        tcx.dcx()
            .struct_span_err(span, format!("kernel `{}` uses #[cluster_launch], which needs sm_90 or newer, but this build targets {}", tcx.item_name(k.instance.def_id()), old.join(", ")))
            .with_help("thread block clusters need Hopper or newer: build with `cargo oxide build --arch sm_90`")
            .emit();
        ok = false;
    }
    ok
}

/// Evaluates the constants `instance`'s MIR needs (inline `const { assert!(..) }` blocks among
/// them), as rustc's mono collector does for host code: device-only functions are never seen by
/// that collector, and codegen_ssa assumes these constants evaluate. Errors are reported by the
/// const evaluator at the user's span.
fn required_consts_ok<'tcx>(tcx: TyCtxt<'tcx>, instance: Instance<'tcx>) -> bool {
    let body = tcx.instance_mir(instance.def);
    let env = rustc_middle::ty::TypingEnv::fully_monomorphized();
    let mut ok = true;
    for c in body.required_consts() {
        let value = instance.instantiate_mir_and_normalize_erasing_regions(tcx, env, rustc_middle::ty::EarlyBinder::bind(c.const_));
        if let Err(err) = value.eval(tcx, env, c.span) {
            err.emit_note(tcx);
            ok = false;
        }
    }
    ok
}

/// Runs `f` (the lowering of `instance`); a panic in it (ours, or a `span_bug!` in
/// rustc_codegen_ssa) becomes a compiler-bug error naming the kernel and the user's span, without
/// the ICE backtrace. Fatal errors (already reported) keep unwinding to rustc's driver.
fn without_ice<'tcx>(cx: &CodegenCx<'tcx>, instance: Instance<'tcx>, f: impl FnOnce()) {
    use std::panic::{self, AssertUnwindSafe};
    use std::sync::Mutex;
    static MESSAGE: Mutex<String> = Mutex::new(String::new());
    let saved = panic::take_hook();
    panic::set_hook(Box::new(|info| {
        let text = match info.payload_as_str() {
            Some(s) => format!("{s} (at {})", info.location().map_or_else(String::new, |l| l.to_string())),
            None => "an internal compiler error (see `error: internal compiler error` above)".to_string(),
        };
        if let Ok(mut m) = MESSAGE.lock() {
            *m = text;
        }
    }));
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    panic::set_hook(saved);
    if let Err(payload) = result {
        if payload.is::<rustc_span::fatal_error::FatalErrorMarker>() {
            panic::resume_unwind(payload);
        }
        let message = MESSAGE.lock().map(|m| m.clone()).unwrap_or_default();
        errors::internal_error(cx, instance, &message);
    }
}
