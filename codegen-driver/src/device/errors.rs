//! Device diagnostics: unsupported Rust reached from a kernel, reported at the user's span with the
//! chain of calls that reached it. (Misuse of our attributes is reported by the macros; our own
//! bugs go through `bug!`.)

use rustc_hir::def_id::DefId;
use rustc_middle::ty::Instance;
use rustc_span::Span;

use super::context::CodegenCx;

/// Where a problem surfaced in the user's code.
struct UserSite<'tcx> {
    /// The innermost span on the call chain that lies in the crate being compiled.
    span: Span,
    /// The calls from the problem up to the kernel, for "called by" notes.
    chain: Vec<Instance<'tcx>>,
    /// What the user's code called at `span` (`None` when the problem is in the user's own code).
    callee: Option<Instance<'tcx>>,
    /// The user's function that contains `span`.
    function: Option<DefId>,
}

/// Reports `msg` at the user's span with "called by" notes and an optional help line. The device
/// build stops after lowering, so every problem of the crate is reported in one run.
pub fn unsupported(cx: &CodegenCx<'_>, msg: &str, help: Option<&str>) {
    let site = user_site(cx, cx.current.get(), cx.current_span.get());
    emit(cx, &site, msg, help);
}

/// Reports the use of a thread-local static: at the user's code that reached it (`KEY.with(..)`),
/// not inside the `thread_local!` expansion, with a note at the declaration.
pub fn thread_local_static(cx: &CodegenCx<'_>, static_def: DefId) {
    let tcx = cx.tcx;
    // The item `thread_local!` expands to (the `LocalKey` const) holds the static and its closures.
    let mut outer = static_def;
    while let Some(parent) = tcx.opt_parent(outer) {
        if parent.is_crate_root() || tcx.def_kind(parent) == rustc_hir::def::DefKind::Mod {
            break;
        }
        outer = parent;
    }
    let within = |mut d: DefId| loop {
        if d == outer {
            return true;
        }
        match tcx.opt_parent(d) {
            Some(p) => d = p,
            None => return false,
        }
    };
    let mut inst = cx.current.get();
    let mut span = cx.current_span.get();
    while let Some(i) = inst.filter(|i| within(i.def_id())) {
        let Some(r) = cx.reached.borrow().get(&i).copied() else { break };
        inst = r.caller;
        span = r.span;
    }
    let site = user_site(cx, inst, span);
    let name = tcx.def_path_str(outer);
    cx.failed.set(true);
    let mut diag = tcx.dcx().struct_span_err(site.span, format!("thread-local `{name}` is not supported in device code"));
    let start = site.chain.iter().position(|i| Some(i.def_id()) == site.function).unwrap_or(0);
    for (i, inst) in site.chain[start..].iter().enumerate() {
        let what = tcx.def_path_str(inst.def_id());
        diag.note(if i == 0 { format!("in device code of `{what}`") } else { format!("called by `{what}`") });
    }
    diag.span_note(tcx.def_span(outer), format!("`{name}` is declared with `thread_local!` here"));
    diag.help("GPU threads have no thread-local storage: keep per-thread values in local variables, or pass shared data in as a kernel parameter");
    diag.emit();
}

/// Reports that `callee` (the instance being defined) has no body the device compiler can use.
pub fn unavailable<'tcx>(cx: &CodegenCx<'tcx>, callee: Instance<'tcx>) {
    let tcx = cx.tcx;
    // A free is reported only where no allocation was: the allocation is the line to change.
    if tcx.item_name(callee.def_id()).as_str() == "__rust_dealloc" && !cx.reporting_deferred.get() {
        cx.failed.set(true);
        cx.deferred.borrow_mut().push(callee);
        return;
    }
    let site = user_site(cx, Some(callee), rustc_span::DUMMY_SP);
    let krate = tcx.crate_name(callee.def_id().krate);
    let name = tcx.item_name(callee.def_id());
    let called = tcx.def_path_str(site.callee.unwrap_or(callee).def_id());
    let heap = krate.as_str() == "alloc" || name.as_str().starts_with("__rust_");
    let key = (if heap { "heap" } else { "call" }, site.function, if heap { None } else { Some(callee.def_id()) });
    if !cx.reported.borrow_mut().insert(key) {
        return; // one allocation problem per function is enough to act on
    }
    let (msg, help) = if heap {
        (
            format!("heap allocation is not supported in device code: `{called}` allocates"),
            "`Vec`, `Box`, `String` and `format!` need a heap; use fixed-size arrays, slices passed in as kernel parameters, or shared memory",
        )
    } else if krate.as_str() == "std" {
        (
            format!("`{called}` is not available in device code: it needs `std`, which the GPU does not have"),
            "the GPU has no OS (files, stdout, clocks, threads): use `core` APIs or `cuda_device` (`gpu_printf!` to print, `clock64()` to time)",
        )
    } else if krate.as_str() == "core" {
        let path = tcx.def_path_str(callee.def_id());
        let help = if path.contains("fmt::") {
            "formatting (`core::fmt`) is not supported on the device: print with `gpu_printf!`"
        } else {
            "only generic and `#[inline]` functions of `core` reach the device; use an ASCII or byte-level alternative (e.g. `is_ascii_alphanumeric`, a loop over `as_bytes()`), or write the function in your crate"
        };
        (format!("`{called}` is not available in device code: `core` ships `{path}` precompiled, without MIR the device compiler could use"), help)
    } else {
        (
            format!("`{called}` is not available in device code: the device compiler has no body for `{}`", tcx.def_path_str(callee.def_id())),
            "device code can call functions whose MIR is available: this crate's, `cuda_device`'s, and generic or `#[inline]` functions of other crates",
        )
    };
    emit(cx, &site, &msg, Some(help));
}

/// Reports a panic of ours (or of rustc_codegen_ssa) while `instance` was being compiled as a
/// compiler bug at the user's span, naming the kernel that reached it, instead of a backtrace.
pub fn internal_error<'tcx>(cx: &CodegenCx<'tcx>, instance: Instance<'tcx>, message: &str) {
    let site = user_site(cx, Some(instance), cx.current_span.get());
    let what = cx.tcx.def_path_str(instance.def_id());
    let kernel = site.chain.last().map(|k| cx.tcx.def_path_str(k.def_id())).unwrap_or_else(|| what.clone());
    let msg = format!("internal error in cuda-oxide's device compiler while compiling `{what}` for kernel `{kernel}`");
    cx.failed.set(true);
    let mut diag = cx.tcx.dcx().struct_span_err(site.span, msg);
    diag.note(format!("the device compiler stopped with: {}", message.trim()));
    diag.note("this is a bug in cuda-oxide, not in your code: please report it at https://github.com/cuda-oxide/cuda-oxide/issues with this message");
    diag.help("until it is fixed, rewriting the expression at this span differently usually avoids it");
    diag.emit();
}

/// Reports the problems held back by [`unavailable`], now that every allocation is known.
pub fn report_deferred(cx: &CodegenCx<'_>) {
    cx.reporting_deferred.set(true);
    let deferred = std::mem::take(&mut *cx.deferred.borrow_mut());
    for callee in deferred {
        unavailable(cx, callee);
    }
}

fn emit(cx: &CodegenCx<'_>, site: &UserSite<'_>, msg: &str, help: Option<&str>) {
    cx.failed.set(true);
    let mut diag = cx.tcx.dcx().struct_span_err(site.span, msg.to_string());
    // The notes start at the user's function: the library-internal frames help nobody.
    let start = site.chain.iter().position(|i| Some(i.def_id()) == site.function).unwrap_or(0);
    for (i, inst) in site.chain[start..].iter().enumerate() {
        let what = cx.tcx.def_path_str(inst.def_id());
        if i == 0 {
            diag.note(format!("in device code of `{what}`"));
        } else {
            diag.note(format!("called by `{what}`"));
        }
    }
    if let Some(help) = help {
        diag.help(help.to_string());
    }
    diag.emit();
}

/// Walks the "reached from" chain upwards to the first span in the crate being compiled
/// (macro expansions count at their call site: `vec![..]` is the user's line).
fn user_site<'tcx>(cx: &CodegenCx<'tcx>, mut inst: Option<Instance<'tcx>>, span: Span) -> UserSite<'tcx> {
    let source_map = cx.tcx.sess.source_map();
    let is_user = |s: Span| !s.is_dummy() && !source_map.is_imported(s);
    let mut span = span.source_callsite();
    let mut site = UserSite { span, chain: Vec::new(), callee: None, function: None };
    let mut found = false;
    let mut callee = None;
    for _ in 0..64 {
        if !found && is_user(span) {
            found = true;
            site.span = span;
            site.callee = callee;
            site.function = inst.map(|i| i.def_id());
        }
        let Some(i) = inst else { break };
        site.chain.push(i);
        callee = Some(i);
        let Some(r) = cx.reached.borrow().get(&i).copied() else { break };
        span = r.span.source_callsite();
        inst = r.caller;
    }
    if !found {
        site.span = span;
    }
    site
}
