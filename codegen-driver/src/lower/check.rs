//! Checks before lowering: that the archs of the build support each kernel's launch attributes,
//! that `#[kernel]`'s reading of each parameter (by syntax) agrees with the kernel ABI's (by
//! type), that the parameters fit the PTX parameter space; and, per function, that shared memory
//! is never a local variable. All problems of the crate are reported in one run.

use oxide_contract::arch::{Arch, CLUSTER_MIN_SM};
use oxide_contract::attrs::LangItem;
use oxide_contract::limits;
use rustc_middle::ty::{self, Instance, Ty, TyCtxt};

use super::attrs;
use super::collect::KernelRoot;
use super::context::CodegenCx;
use super::entry::{is_grid_constant, param_kind};
use super::errors::{DeviceError, report, report_at};

/// `true` when every kernel passed every check.
pub fn kernels<'tcx>(tcx: TyCtxt<'tcx>, kernels: &[KernelRoot<'tcx>], archs: &[Arch]) -> bool {
    let mut ok = true;
    for k in kernels {
        ok &= cluster_archs(tcx, k, archs);
        ok &= launch_args(tcx, k);
        ok &= param_space(tcx, k);
        ok &= grid_constant_params(tcx, k);
        host_references(tcx, k);
    }
    ok
}

/// A by-value parameter holding a reference (a closure capturing by reference, a struct with a
/// `&T` field) hands the kernel a host address: only GPUs that can read host memory (HMM, ATS)
/// follow it. Warned about at the parameter, since on those it is what the user means.
fn host_references<'tcx>(tcx: TyCtxt<'tcx>, k: &KernelRoot<'tcx>) {
    let env = ty::TypingEnv::fully_monomorphized();
    let Ok(fn_abi) = tcx.fn_abi_of_instance(env.as_query_input((k.instance, ty::List::empty()))) else { return };
    let def_id = k.instance.def_id();
    let idents = tcx.fn_arg_idents(def_id);
    for (i, arg) in fn_abi.args.iter().enumerate() {
        let ty = arg.layout.ty;
        if param_kind(tcx, ty, arg.layout.is_zst()) != oxide_contract::abi::ParamKind::Byval {
            continue;
        }
        let Some(inner) = held_reference(tcx, ty, 0) else { continue };
        let ident = idents.get(i).copied().flatten();
        let span = ident.map_or_else(|| tcx.def_span(def_id), |id| id.span);
        let param = ident.map_or_else(|| format!("#{i}"), |id| id.to_string());
        tcx.dcx()
            .struct_span_warn(
                span,
                format!("kernel parameter `{param}` holds a reference (`{inner}`): the kernel would read host memory through it"),
            )
            .with_note("only GPUs that can access host memory (HMM or ATS) follow such a reference; elsewhere the launch fails with an illegal address")
            .with_help("capture values, not references (`move |x| x * k` with `k` a number), or pass the data in a device buffer (`&[T]`)")
            .emit();
    }
}

/// The first reference a value of `ty` holds (not behind a raw pointer), if any.
fn held_reference<'tcx>(tcx: TyCtxt<'tcx>, ty: Ty<'tcx>, depth: u32) -> Option<Ty<'tcx>> {
    if depth > 8 {
        return None;
    }
    match ty.kind() {
        ty::Ref(..) => Some(ty),
        ty::Adt(def, args) => {
            def.all_fields().find_map(|f| held_reference(tcx, f.ty(tcx, args).skip_normalization(), depth + 1))
        }
        ty::Array(elem, _) => held_reference(tcx, *elem, depth + 1),
        ty::Tuple(elems) => elems.iter().find_map(|t| held_reference(tcx, t, depth + 1)),
        ty::Closure(_, args) => args.as_closure().upvar_tys().iter().find_map(|t| held_reference(tcx, t, depth + 1)),
        _ => None,
    }
}

/// The bytes of PTX parameters `kernel` takes (slices as pointer + length, values as their size,
/// each aligned), for the parameter space limits.
pub fn param_bytes<'tcx>(tcx: TyCtxt<'tcx>, kernel: &KernelRoot<'tcx>) -> u64 {
    let env = ty::TypingEnv::fully_monomorphized();
    let Ok(fn_abi) = tcx.fn_abi_of_instance(env.as_query_input((kernel.instance, ty::List::empty()))) else {
        return 0;
    };
    let mut bytes = 0u64;
    for arg in fn_abi.args.iter() {
        let kind = param_kind(tcx, arg.layout.ty, arg.layout.is_zst());
        let (size, align) =
            if kind.is_slice() { (16, 8) } else { (arg.layout.size.bytes(), arg.layout.align.abi.bytes()) };
        bytes = bytes.next_multiple_of(align.max(1)) + size;
    }
    bytes
}

/// A kernel's parameters must fit the largest parameter space PTX has (32,764 bytes from PTX ISA
/// 8.1; the pipeline asks for that ISA when a kernel needs more than the classic 4 KB).
fn param_space<'tcx>(tcx: TyCtxt<'tcx>, k: &KernelRoot<'tcx>) -> bool {
    let bytes = param_bytes(tcx, k);
    if bytes <= limits::MAX_KERNEL_PARAM_BYTES {
        return true;
    }
    let def_id = k.instance.def_id();
    let kernel = tcx.item_name(def_id).to_string();
    report_at(tcx, Some(tcx.def_span(def_id)), DeviceError::ParamsTooLarge { kernel, bytes });
    false
}

/// A grid-constant parameter (a `TensorMap` by value, or a value holding one) is handed to the body in place, in read-only
/// parameter memory: a body that writes it (`mut map`, `&mut map`) is refused at the parameter.
fn grid_constant_params<'tcx>(tcx: TyCtxt<'tcx>, k: &KernelRoot<'tcx>) -> bool {
    use rustc_middle::mir::visit::{PlaceContext, Visitor};
    use rustc_middle::mir::{Local, Location};

    struct Writes(Vec<Local>);
    impl<'tcx> Visitor<'tcx> for Writes {
        fn visit_local(&mut self, local: Local, context: PlaceContext, _: Location) {
            if context.is_mutating_use()
                && !matches!(context, PlaceContext::MutatingUse(rustc_middle::mir::visit::MutatingUseContext::Drop))
            {
                self.0.push(local);
            }
        }
    }
    let def_id = k.instance.def_id();
    let body = tcx.instance_mir(k.instance.def);
    let mut writes = Writes(Vec::new());
    writes.visit_body(body);
    let idents = tcx.fn_arg_idents(def_id);
    let mut ok = true;
    for (i, arg) in body.args_iter().enumerate() {
        let decl = &body.local_decls[arg];
        let env = ty::TypingEnv::fully_monomorphized();
        let ty = k.instance.instantiate_mir_and_normalize_erasing_regions(tcx, env, ty::EarlyBinder::bind(decl.ty));
        if !is_grid_constant(tcx, ty) || (decl.mutability.is_not() && !writes.0.contains(&arg)) {
            continue;
        }
        let ident = idents.get(i).copied().flatten();
        let span = ident.map_or_else(|| tcx.def_span(def_id), |id| id.span);
        let param = ident.map_or_else(|| format!("#{i}"), |id| id.to_string());
        tcx.dcx()
            .struct_span_err(span, format!("kernel parameter `{param}: {ty}` is grid-constant and cannot be written"))
            .with_note("a tensor map passed by value stays in read-only parameter memory, where TMA reads it")
            .with_help("drop the `mut`; to change a map, build a new one on the host")
            .emit();
        ok = false;
    }
    ok
}

/// Shared memory is a `static` (one per block): a local `SharedMemory` or `SharedArray` would be
/// private to each thread, in local memory, and threads would read each other's uninitialised
/// data. Reported at the `let`, with the `static` to write instead, for every such local of
/// `instance`'s body; `false` if there was one.
pub fn shared_locals<'tcx>(cx: &CodegenCx<'tcx>, instance: Instance<'tcx>) -> bool {
    let tcx = cx.tcx;
    let body = tcx.instance_mir(instance.def);
    let env = ty::TypingEnv::fully_monomorphized();
    let mut ok = true;
    for decl in body.local_decls.iter() {
        let ty = instance.instantiate_mir_and_normalize_erasing_regions(tcx, env, ty::EarlyBinder::bind(decl.ty));
        let Some(shared) = held_shared_array(tcx, ty, 0) else { continue };
        let span = cx.user_span(decl.source_info.span);
        if cx.reports.first(("shared-local", Some(instance.def_id()), None)) {
            let previous = cx.current_span.replace(span);
            let declaration = shared_declaration(tcx, shared);
            report(cx, DeviceError::SharedArrayLocal { ty: ty.to_string(), declaration });
            cx.current_span.set(previous);
        }
        ok = false;
    }
    ok
}

/// The `static` (in backticks) that declares shared memory of type `shared` (a `SharedMemory` or `SharedArray`),
/// written with the user's element type, length and alignment: `SharedMemory` as a plain `static`
/// (the form whose methods compile in every edition); a `SharedArray` keeps its `static mut`.
fn shared_declaration<'tcx>(tcx: TyCtxt<'tcx>, shared: Ty<'tcx>) -> String {
    let ty::Adt(def, args) = shared.kind() else { return String::new() };
    let elem = ty::print::with_forced_trimmed_paths!(args.type_at(0).to_string());
    let len = args.const_at(1).try_to_target_usize(tcx).map_or_else(|| "N".to_string(), |n| n.to_string());
    let align = args.const_at(2).try_to_target_usize(tcx).unwrap_or(0);
    let params = if align == 0 { format!("{elem}, {len}") } else { format!("{elem}, {len}, {align}") };
    let plain = format!("`static TILE: SharedMemory<{params}> = SharedMemory::UNINIT;`");
    match attrs::lang_item(tcx, def.did()) {
        Some(LangItem::SharedArray) => {
            format!("{plain}, or indexed: `static mut TILE: SharedArray<{params}> = SharedArray::UNINIT;`")
        }
        _ => plain,
    }
}

/// The `SharedMemory` or `SharedArray` a value of `ty` holds itself (not behind a reference or
/// pointer), if any.
pub fn held_shared_array<'tcx>(tcx: TyCtxt<'tcx>, ty: Ty<'tcx>, depth: u32) -> Option<Ty<'tcx>> {
    if depth > 8 {
        return None;
    }
    match ty.kind() {
        ty::Adt(def, args) => {
            if matches!(attrs::lang_item(tcx, def.did()), Some(LangItem::SharedArray | LangItem::SharedMemory)) {
                return Some(ty);
            }
            def.all_fields().find_map(|f| held_shared_array(tcx, f.ty(tcx, args).skip_normalization(), depth + 1))
        }
        ty::Array(elem, _) | ty::Slice(elem) => held_shared_array(tcx, *elem, depth + 1),
        ty::Tuple(elems) => elems.iter().find_map(|t| held_shared_array(tcx, t, depth + 1)),
        ty::Closure(_, args) => args.as_closure().upvar_tys().iter().find_map(|t| held_shared_array(tcx, t, depth + 1)),
        _ => None,
    }
}

/// Thread block clusters exist from sm_90 on: a `#[cluster_launch]` kernel built for an older
/// arch is an error at the kernel.
fn cluster_archs(tcx: TyCtxt<'_>, k: &KernelRoot<'_>, archs: &[Arch]) -> bool {
    let old: Vec<String> = archs.iter().filter(|a| !a.has_clusters()).map(|a| a.to_string()).collect();
    if old.is_empty() || k.cluster_dims.is_none() {
        return true;
    }
    let def_id = k.instance.def_id();
    let kernel = tcx.item_name(def_id).to_string();
    let error = DeviceError::ClusterNeedsNewerArch { kernel, min_sm: CLUSTER_MIN_SM, archs: old.join(", ") };
    report_at(tcx, Some(tcx.def_span(def_id)), error);
    false
}

/// The launch methods push what `#[kernel]` read from the signature; the PTX entry takes what
/// the types say. They differ when a type alias hides a slice or a `DisjointSlice`, say.
fn launch_args<'tcx>(tcx: TyCtxt<'tcx>, k: &KernelRoot<'tcx>) -> bool {
    let def_id = k.instance.def_id();
    let from_macro = attrs::kernel_launch_args(tcx, def_id);
    let env = ty::TypingEnv::fully_monomorphized();
    // The same view of the parameters as the entry point's (`entry::define`).
    let Ok(fn_abi) = tcx.fn_abi_of_instance(env.as_query_input((k.instance, ty::List::empty()))) else {
        return true; // reported when the kernel is lowered
    };
    let idents = tcx.fn_arg_idents(def_id);
    let mut ok = true;
    for (i, (arg, read)) in fn_abi.args.iter().zip(from_macro).enumerate() {
        let Some(read) = read else { continue };
        let (ty, layout) = (arg.layout.ty, arg.layout);
        let kind = param_kind(tcx, ty, layout.is_zst());
        if kind.launch_arg() == read {
            continue;
        }
        let ident = idents.get(i).copied().flatten();
        let span = ident.map_or_else(|| tcx.def_span(def_id), |id| id.span);
        let error = DeviceError::LaunchArgMismatch {
            param: ident.map_or_else(|| format!("#{i}"), |id| id.to_string()),
            ty: ty.to_string(),
            read,
            actual: kind.launch_arg(),
        };
        report_at(tcx, Some(span), error);
        ok = false;
    }
    ok
}
