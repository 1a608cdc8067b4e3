//! Lowering: the crate's kernels and everything they call, MIR → LLVM IR text for NVPTX, through
//! rustc_codegen_ssa driven with our builder. The files follow rustc_codegen_llvm's names where
//! the role is the same; ours are `collect` (kernel roots), `check` (before lowering), `entry`
//! (PTX entry points), `attrs` (our tool attributes), `errors` and `ir` (the IR text module).

mod abi;
mod asm;
mod attrs;
mod bounds;
mod builder;
mod cast;
pub mod check;
pub mod collect;
mod constant_memory;
mod consts;
mod context;
mod debuginfo;
mod declare;
mod entry;
pub mod errors;
mod interop;
mod intrinsic;
mod ir;
mod loop_hints;
mod type_;

use oxide_contract::manifest::KernelInfo;
use rustc_codegen_ssa::traits::*;
use rustc_middle::ty::{Instance, InstanceKind, TyCtxt};

use builder::Builder;
pub use context::CodegenCx;

/// LLVM's NVPTX target; host layouts are reused as they are (both are 64-bit little endian with
/// the same scalar alignments), so one `TyCtxt` serves both sides.
pub const TRIPLE: &str = "nvptx64-nvidia-cuda";
pub const DATALAYOUT: &str = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64";

pub use interop::{Export, c_header};

/// The crate's device functions that CUDA C++ can call (see `interop::exports`); errors about
/// them are reported.
pub fn exports<'tcx>(tcx: TyCtxt<'tcx>, kernels: &[collect::KernelRoot<'tcx>]) -> Vec<Export<'tcx>> {
    let entries: Vec<String> = kernels.iter().map(|k| k.entry.clone()).collect();
    interop::exports(tcx, &entries)
}

/// Lowers `kernels`, `exports` and everything they reach into `cx`'s module; returns each
/// kernel's manifest record. Check `cx.failed()` afterwards: errors are reported, not returned.
pub fn lower<'tcx>(
    cx: &CodegenCx<'tcx>,
    kernels: &[collect::KernelRoot<'tcx>],
    exports: &[Export<'tcx>],
) -> Vec<KernelInfo> {
    cx.exports.borrow_mut().extend(exports.iter().map(|e| (e.instance, e.symbol.clone())));
    let infos: Vec<_> = kernels
        .iter()
        .map(|k| {
            cx.fast.set(cx.fast_math);
            let info = entry::define(cx, k);
            // The kernel's body has one caller, its entry: inlined, its pointers are known to be
            // the entry's (global, `noalias`, aligned) and the launch bounds' facts reach it.
            let body = cx.func_index(cx.get_fn(k.instance)) as usize;
            let attrs = &mut cx.module.borrow_mut().funcs[body].fn_attrs;
            attrs.retain(|a| !matches!(a.as_str(), "inlinehint" | "alwaysinline"));
            attrs.push("alwaysinline".into());
            info
        })
        .collect();
    for export in exports {
        cx.fast.set(cx.fast_math);
        cx.get_fn(export.instance);
    }
    loop {
        let next = cx.queue.borrow_mut().pop();
        let Some((instance, fast)) = next else { break };
        cx.fast.set(fast);
        define(cx, instance);
    }
    infos
}

/// The module as LLVM IR text. Kernels and exports are listed in `@llvm.used`: link-time
/// optimisation of LTOIR drops every function it is not told to keep.
pub fn print(cx: &CodegenCx<'_>) -> String {
    let module = cx.module.borrow();
    let exports = cx.exports.borrow();
    let used: Vec<String> = module
        .funcs
        .iter()
        .filter(|f| f.kernel || exports.values().any(|s| *s == f.name))
        .map(|f| format!("ptr @{}", f.name))
        .collect();
    let trailer = if used.is_empty() {
        String::new()
    } else {
        format!(
            "@llvm.used = appending global [{} x ptr] [{}], section \"llvm.metadata\"\n",
            used.len(),
            used.join(", ")
        )
    };
    module.print(TRIPLE, DATALAYOUT, &trailer)
}

/// The CUDA C++ functions the device code still calls after optimisation, with their manifest
/// records (`optimized` is the optimised module's text).
pub fn live_imports<'tcx>(
    cx: &CodegenCx<'tcx>,
    optimized: &str,
) -> Vec<(Instance<'tcx>, oxide_contract::manifest::DeviceFunction)> {
    let imports = cx.imports.borrow().clone();
    let live: Vec<String> =
        crate::pipeline::llvm::still_referenced(optimized, imports.iter().map(|(_, f)| f.symbol.as_str()))
            .into_iter()
            .map(str::to_string)
            .collect();
    imports.into_iter().filter(|(_, f)| live.contains(&f.symbol)).collect()
}

/// Reports the functions without a device body that optimisation kept (`optimized` is the
/// optimised module's text): code that only a panic path references (formatting a panic
/// message, say) is gone by then, and is no error. Then reports the frees held back.
pub fn report_unavailable(cx: &CodegenCx<'_>, optimized: &str) {
    let missing = cx.unavailable.borrow().clone();
    let names: Vec<String> = missing.iter().map(|(name, _)| name.clone()).collect();
    let live = crate::pipeline::llvm::still_referenced(optimized, names.iter().map(String::as_str));
    for (name, instance) in &missing {
        if live.contains(&name.as_str()) {
            errors::unavailable(cx, *instance);
        }
    }
    errors::report_deferred(cx);
}

impl CodegenCx<'_> {
    /// `true` once an error was reported for this crate's device code.
    pub fn failed(&self) -> bool {
        self.reports.failed.get() || self.tcx.dcx().has_errors().is_some()
    }
}

/// Gives one queued instance its body.
fn define<'tcx>(cx: &CodegenCx<'tcx>, instance: Instance<'tcx>) {
    let tcx = cx.tcx;
    cx.current.set(Some(instance));
    cx.current_span.set(rustc_span::DUMMY_SP);
    cx.pending_asserts.borrow_mut().clear();
    cx.deferred_checks.borrow_mut().clear();
    if intrinsic::define_device_intrinsic(cx, instance) || intrinsic::define_libm_crate_entry(cx, instance) {
        return;
    }
    if let InstanceKind::Item(def_id) = instance.def
        && interop::is_import(tcx, def_id)
    {
        // Defined by CUDA C++: stays a declaration, which the device linker resolves.
        let f = cx.get_fn(instance);
        let idx = cx.func_index(f) as usize;
        cx.module.borrow_mut().funcs[idx].linkage = "";
        let symbol = cx.module.borrow().funcs[idx].name.clone();
        let call = cx.reached.borrow().get(&instance).map_or(rustc_span::DUMMY_SP, |r| r.span);
        match interop::import(tcx, instance, &symbol, call) {
            Some(record) => cx.imports.borrow_mut().push((instance, record)),
            None => cx.reports.failed.set(true),
        }
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
        if !required_consts_ok(tcx, instance) || !check::shared_locals(cx, instance) {
            cx.reports.failed.set(true);
            return;
        }
        without_ice(cx, instance, || rustc_codegen_ssa::mir::codegen_mir::<Builder<'_, 'tcx>>(cx, instance));
        return;
    }
    // Functions without a body that never return are core's panic entry points (precompiled, no
    // MIR): on the device a panic traps, which the host sees as an error at the next sync.
    let returns_never = tcx.fn_sig(instance.def_id()).instantiate(tcx, instance.args).skip_binder().output().is_never();
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

/// Evaluates the constants `instance`'s MIR needs (inline `const { assert!(..) }` blocks among
/// them), as rustc's mono collector does for host code: device-only functions are never seen by
/// that collector, and codegen_ssa assumes these constants evaluate. Errors are reported by the
/// const evaluator at the user's span.
fn required_consts_ok<'tcx>(tcx: TyCtxt<'tcx>, instance: Instance<'tcx>) -> bool {
    let body = tcx.instance_mir(instance.def);
    let env = rustc_middle::ty::TypingEnv::fully_monomorphized();
    let mut ok = true;
    for c in body.required_consts() {
        let value = instance.instantiate_mir_and_normalize_erasing_regions(
            tcx,
            env,
            rustc_middle::ty::EarlyBinder::bind(c.const_),
        );
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
