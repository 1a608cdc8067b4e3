//! Device diagnostics: unsupported Rust reached from a kernel, reported at the user's span with the
//! chain of calls that reached it. (Misuse of our attributes is reported by the macros; our own
//! bugs go through `bug!`.)

use rustc_middle::ty::Instance;
use rustc_span::Span;

use super::context::CodegenCx;

/// Reports `msg` at the innermost span in the user's own crate on the path to the current
/// instance, with "called by" notes and an optional help line. The build stops after codegen.
pub fn unsupported(cx: &CodegenCx<'_>, msg: &str, help: Option<&str>) {
    cx.failed.set(true);
    let (span, chain, _) = user_span_and_chain(cx, cx.current.get(), cx.current_span.get());
    let mut diag = cx.tcx.dcx().struct_span_err(span, msg.to_string());
    for (i, inst) in chain.iter().enumerate() {
        let what = describe(cx, *inst);
        if i == 0 {
            diag.note(format!("reached in device code through `{what}`"));
        } else {
            diag.note(format!("which is called by `{what}`"));
        }
    }
    if let Some(help) = help {
        diag.help(help.to_string());
    }
    diag.emit();
}

/// Reports that `callee` has no device implementation.
pub fn unavailable<'tcx>(cx: &CodegenCx<'tcx>, callee: Instance<'tcx>) {
    // Name what the user's code called, not the innermost library function without a body.
    let (_, _, entry) = user_span_and_chain(cx, cx.current.get(), cx.current_span.get());
    let name = cx.tcx.def_path_str(entry.unwrap_or(callee).def_id());
    let (msg, help) = classify(&name);
    unsupported(cx, &msg.replace("{}", &name), Some(help));
}

fn classify(path: &str) -> (String, &'static str) {
    let heap = ["alloc::", "__rust_alloc", "__rust_dealloc", "__rust_realloc", "exchange_malloc"];
    if heap.iter().any(|p| path.starts_with(p) || path.contains(p)) {
        return (
            "heap allocation (`Vec`, `Box`, `String`, `format!`) is not supported in device code: `{}` allocates".into(),
            "use fixed-size arrays, slices passed in as kernel parameters, or shared memory",
        );
    }
    if path.starts_with("std::") {
        return (
            "`{}` is part of `std`, which is not available in device code".into(),
            "use `core` APIs or the device functions in `cuda_device`",
        );
    }
    (
        "`{}` is not available in device code: its body is not available to the device compiler".into(),
        "device code can call functions whose MIR is available (this crate, `cuda_device`, generic and `#[inline]` functions of other crates)",
    )
}

fn describe(cx: &CodegenCx<'_>, inst: Instance<'_>) -> String {
    cx.tcx.def_path_str(inst.def_id())
}

/// Walks the "reached from" chain upwards; returns the first span that lies in the crate being
/// compiled (the user's code), the instances on the way for the notes, and the instance that the
/// user's code called at that span.
fn user_span_and_chain<'tcx>(
    cx: &CodegenCx<'tcx>,
    mut inst: Option<Instance<'tcx>>,
    mut span: Span,
) -> (Span, Vec<Instance<'tcx>>, Option<Instance<'tcx>>) {
    let source_map = cx.tcx.sess.source_map();
    let mut chain = Vec::new();
    let mut best = None;
    let mut entry = None;
    let mut callee: Option<Instance<'tcx>> = None;
    for _ in 0..64 {
        if best.is_none() && !span.is_dummy() && !source_map.is_imported(span) {
            best = Some(span);
            entry = callee;
        }
        let Some(i) = inst else { break };
        callee = Some(i);
        chain.push(i);
        let Some(r) = cx.reached.borrow().get(&i).copied() else { break };
        span = r.span;
        inst = r.caller;
    }
    (best.unwrap_or(span), chain, entry)
}
