//! Kernel entry points: a `ptx_kernel` function with the kernel ABI (docs/contracts.md §4) that
//! rebuilds the Rust arguments and calls the kernel's Rust body.

use oxide_contract::attrs::LangItem;
use oxide_contract::manifest::{KernelInfo, ParamInfo, ParamKind};
use rustc_abi::{BackendRepr, Size};
use rustc_codegen_ssa::traits::*;
use rustc_middle::ty::{self, Ty, TyCtxt};
use rustc_target::callconv::PassMode;

use super::attrs;
use super::builder::Builder;
use super::collect::KernelRoot;
use super::context::CodegenCx;
use super::ir;
use crate::markers::LAUNCH_ATTRS_HIDDEN_FROM_OPT as HIDDEN_FROM_OPT;

/// How a kernel parameter of type `ty` crosses the kernel boundary (contract §4).
pub fn param_kind<'tcx>(tcx: TyCtxt<'tcx>, ty: Ty<'tcx>, is_zst: bool) -> ParamKind {
    match ty.kind() {
        _ if is_zst => ParamKind::Zst,
        ty::Ref(_, inner, m) if inner.is_slice() => {
            if m.is_mut() {
                ParamKind::SliceMut
            } else {
                ParamKind::Slice
            }
        }
        ty::Adt(def, _) if attrs::lang_item(tcx, def.did()) == Some(LangItem::DisjointSlice) => {
            // An index space with run-time data (a row width) makes the slice larger than
            // pointer + length; that data is the third word of the ABI.
            if disjoint_slice_size(tcx, ty).is_some_and(|bytes| bytes > SLICE_BYTES) {
                ParamKind::RowWidthSlice
            } else {
                ParamKind::DisjointSlice
            }
        }
        ty::Bool | ty::Char | ty::Int(_) | ty::Uint(_) | ty::Float(_) | ty::RawPtr(..) => ParamKind::Scalar,
        _ => ParamKind::Byval,
    }
}

/// `true` for a type whose by-value kernel parameter is grid-constant: a `TensorMap`, or a value
/// holding one (`[TensorMap; 2]`, a struct of maps), whose maps TMA must find in parameter memory.
pub fn is_grid_constant<'tcx>(tcx: TyCtxt<'tcx>, ty: Ty<'tcx>) -> bool {
    holds_tensor_map(tcx, ty, 0)
}

fn holds_tensor_map<'tcx>(tcx: TyCtxt<'tcx>, ty: Ty<'tcx>, depth: u32) -> bool {
    if depth > 8 {
        return false;
    }
    match ty.kind() {
        ty::Adt(def, _) if attrs::lang_item(tcx, def.did()) == Some(LangItem::TensorMap) => true,
        ty::Adt(def, args) if def.is_struct() => {
            def.all_fields().any(|f| holds_tensor_map(tcx, f.ty(tcx, args).skip_normalization(), depth + 1))
        }
        ty::Array(elem, _) => holds_tensor_map(tcx, *elem, depth + 1),
        ty::Tuple(elems) => elems.iter().any(|t| holds_tensor_map(tcx, t, depth + 1)),
        _ => false,
    }
}

/// Pointer + `usize` length: a `DisjointSlice` whose index space carries no run-time data.
const SLICE_BYTES: u64 = 16;

/// The size of a (monomorphic) `DisjointSlice` type, `None` when it has no layout.
fn disjoint_slice_size<'tcx>(tcx: TyCtxt<'tcx>, ty: Ty<'tcx>) -> Option<u64> {
    let env = ty::TypingEnv::fully_monomorphized();
    tcx.layout_of(env.as_query_input(ty)).ok().map(|l| l.size.bytes())
}

/// Defines the entry for `kernel` and returns its manifest record.
pub fn define<'tcx>(cx: &CodegenCx<'tcx>, kernel: &KernelRoot<'tcx>) -> KernelInfo {
    let tcx = cx.tcx;
    let instance = kernel.instance;
    let rust_fn = cx.get_fn(instance);
    let fn_abi = cx.fn_abi_of_instance(instance, ty::List::empty());
    let names = tcx.fn_arg_idents(instance.def_id());

    // The entry's PTX parameters, per Rust argument.
    let mut params = Vec::new();
    let mut entry_tys = Vec::new();
    let mut entry_attrs = Vec::new();
    for (i, arg) in fn_abi.args.iter().enumerate() {
        let layout = arg.layout;
        let kind = param_kind(tcx, layout.ty, layout.is_zst());
        // Slices record their element's size and alignment (what the host buffer holds).
        let elem = match layout.ty.kind() {
            ty::Ref(_, inner, _) if inner.is_slice() => Some(cx.layout_of(inner.sequence_element_type(tcx))),
            ty::Adt(_, args) if matches!(kind, ParamKind::DisjointSlice | ParamKind::RowWidthSlice) => {
                // `DisjointSlice<'a, T, S>`: the element is the first type argument.
                args.types().next().map(|elem| cx.layout_of(elem))
            }
            _ => None,
        };
        let elem_align = elem.map_or(1, |e| e.align.abi.bytes());
        match kind {
            ParamKind::Slice | ParamKind::SliceMut | ParamKind::DisjointSlice | ParamKind::RowWidthSlice => {
                entry_tys.push(cx.type_ptr());
                // Elements with interior mutability (atomic cells) are written through `&[T]`.
                let frozen = elem.is_none_or(|e| e.ty.is_freeze(tcx, ty::TypingEnv::fully_monomorphized()));
                // Never null: an empty buffer is passed as `abi::EMPTY_SLICE_ADDRESS`.
                entry_attrs.push(match kind {
                    ParamKind::Slice if frozen => format!("noalias readonly nonnull align {elem_align}"),
                    ParamKind::Slice => format!("nonnull align {elem_align}"),
                    // Each thread writes only its own element, and Rust's borrows keep the
                    // buffer apart from every other argument.
                    _ => format!("noalias nonnull align {elem_align}"),
                });
                entry_tys.push(cx.type_i64());
                entry_attrs.push(String::new());
                if kind == ParamKind::RowWidthSlice {
                    entry_tys.push(cx.type_i32());
                    entry_attrs.push(String::new());
                }
            }
            ParamKind::Scalar => {
                entry_tys.push(cx.backend_type(layout));
                entry_attrs.push(String::new());
            }
            ParamKind::Byval => {
                entry_tys.push(cx.type_ptr());
                // A grid-constant parameter is read in place (NVPTXLowerArgs then takes its
                // generic address with `cvta.param` instead of copying it to local memory).
                let grid_constant = if is_grid_constant(tcx, layout.ty) { " \"nvvm.grid_constant\"" } else { "" };
                entry_attrs.push(format!(
                    "byval({}) align {}{grid_constant}",
                    cx.type_str(cx.type_bytes(layout.size)),
                    layout.align.abi.bytes()
                ));
            }
            ParamKind::Zst => {}
        }
        params.push(ParamInfo {
            name: names.get(i).copied().flatten().map(|n| n.to_string()).unwrap_or_else(|| format!("arg{i}")),
            ty: layout.ty.to_string(),
            kind,
            size: elem.map_or(layout.size.bytes(), |e| e.size.bytes()),
            align: elem.map_or(layout.align.abi.bytes(), |e| e.align.abi.bytes()),
        });
    }

    let void = cx.type_void();
    let sig = cx.type_func(&entry_tys, void);
    let entry = cx.declare_raw_fn(&kernel.entry, sig);
    let idx = cx.func_index(entry) as usize;
    {
        let mut m = cx.module.borrow_mut();
        let f = &mut m.funcs[idx];
        f.kernel = true;
        f.param_attrs = entry_attrs;
        f.fn_attrs = vec!["convergent".into(), "nounwind".into()];
        // ptxas refuses `.maxntid` beside `.reqntid`; an exact block is the stronger fact. Both
        // are spelled with `HIDDEN_FROM_OPT` until `opt` is done (see `assume_thread_bounds`).
        let exact_block = kernel.launch_contract.and_then(|c| c.block);
        if let Some([x, y, z]) = exact_block {
            f.fn_attrs.push(format!("\"{HIDDEN_FROM_OPT}nvvm.reqntid\"=\"{x},{y},{z}\""));
        }
        if let Some(lb) = kernel.launch_bounds.as_ref().filter(|_| exact_block.is_none()) {
            // `N,1,1` prints `.maxntid N, 1, 1`, nvcc's spelling of `__launch_bounds__(N)` (the
            // limit is the product either way; tools that read the PTX look for this form).
            f.fn_attrs.push(format!("\"{HIDDEN_FROM_OPT}nvvm.maxntid\"=\"{},1,1\"", lb.max_threads));
            if let Some(min) = lb.min_blocks {
                f.fn_attrs.push(format!("\"nvvm.minctasm\"=\"{min}\""));
            }
        }
        if let Some([x, y, z]) = kernel.cluster_dims {
            f.fn_attrs.push(format!("\"nvvm.cluster_dim\"=\"{x},{y},{z}\""));
        }
    }

    cx.debug_kernel_entry(entry, instance);
    let start = Builder::append_block(cx, entry, "start");
    let mut bx = Builder::build(cx, start);
    if let Some(block) = kernel.launch_contract.and_then(|c| c.block) {
        assume_thread_bounds(&mut bx, block);
    } else if let Some(lb) = &kernel.launch_bounds {
        assume_thread_bounds(&mut bx, [lb.max_threads; 3]);
    }
    let mut next = 0usize;
    let mut take = |bx: &mut Builder<'_, 'tcx>| {
        let v = bx.get_param(next);
        next += 1;
        v
    };
    let mut call_args = Vec::new();
    for (arg, info) in fn_abi.args.iter().zip(&params) {
        match info.kind {
            ParamKind::Zst => {}
            ParamKind::Slice | ParamKind::SliceMut | ParamKind::DisjointSlice => {
                let ptr = take(&mut bx);
                let len = take(&mut bx);
                push_pair(&mut bx, arg, ptr, len, &mut call_args);
            }
            ParamKind::RowWidthSlice => {
                let ptr = take(&mut bx);
                let len = take(&mut bx);
                let width = take(&mut bx);
                push_row_width_slice(&mut bx, arg, [ptr, len, width], &mut call_args);
            }
            ParamKind::Scalar => {
                let v = take(&mut bx);
                let v = match arg.layout.backend_repr {
                    BackendRepr::Scalar(s) => bx.to_immediate_scalar(v, s),
                    _ => v,
                };
                call_args.push(v);
            }
            ParamKind::Byval => {
                let ptr = take(&mut bx);
                if is_grid_constant(tcx, arg.layout.ty) && matches!(arg.mode, PassMode::Indirect { .. }) {
                    // The body gets the parameter itself, not a private copy: TMA needs the map's
                    // address in parameter memory. `check::grid_constant_params` refused a `mut`
                    // binding, so the body never writes through it.
                    call_args.push(ptr);
                } else {
                    push_from_memory(&mut bx, arg, ptr, &mut call_args);
                }
            }
        }
    }
    let sig = cx.func_sig(rust_fn);
    bx.call(sig, None, Some(fn_abi), rust_fn, &call_args, None, Some(instance));
    bx.ret_void();

    KernelInfo {
        // `app::kernels::map::<f32, {closure@src/main.rs:9:13}>`, as the generated loader names it.
        name: rustc_middle::ty::print::with_resolve_crate_name!(
            tcx.def_path_str_with_args(instance.def_id(), instance.args)
        ),
        // `combine::<f32, Add>`: every path trimmed to its last segment, for people to read.
        display_name: rustc_middle::ty::print::with_forced_trimmed_paths!(
            tcx.def_path_str_with_args(instance.def_id(), instance.args)
        ),
        key: kernel.key,
        entry: kernel.entry.clone(),
        params,
        launch_bounds: kernel.launch_bounds,
        cluster_dims: kernel.cluster_dims,
        cooperative: kernel.cooperative,
        launch_contract: kernel.launch_contract,
        fast: None,
    }
}

/// Tells LLVM what `#[launch_bounds]` or an exact `#[launch_contract(block)]` guarantees: each
/// thread index is below its axis' bound. The kernel's own reads of `%tid` are the same calls,
/// so once inlined (and CSE'd with these) they share these facts, and bounds checks against
/// shared arrays of that size fold away.
fn assume_thread_bounds(bx: &mut Builder<'_, '_>, bound: [u32; 3]) {
    let i32t = bx.cx.type_i32();
    for (axis, max) in ["x", "y", "z"].into_iter().zip(bound) {
        let tid = bx.call_named(&format!("llvm.nvvm.read.ptx.sreg.tid.{axis}"), i32t, &[]);
        let max = bx.cx.const_u32(max);
        let below = bx.icmp(rustc_codegen_ssa::common::IntPredicate::IntULT, tid, max);
        bx.assume(below);
    }
}

/// A pointer + length pair, passed the way the Rust ABI wants this argument.
fn push_pair<'tcx>(
    bx: &mut Builder<'_, 'tcx>,
    arg: &rustc_target::callconv::ArgAbi<'tcx, Ty<'tcx>>,
    ptr: ir::Value,
    len: ir::Value,
    out: &mut Vec<ir::Value>,
) {
    match arg.mode {
        PassMode::Pair(..) => out.extend([ptr, len]),
        _ => {
            // Spill to a stack slot and pass it as memory would be passed.
            let slot = bx.alloca(arg.layout.size, arg.layout.align.abi);
            bx.store(ptr, slot, arg.layout.align.abi);
            let off = bx.cx.const_usize(8);
            let len_slot = bx.inbounds_ptradd(slot, off);
            bx.store(len, len_slot, arg.layout.align.abi);
            push_from_memory(bx, arg, slot, out);
        }
    }
}

/// A `#[repr(C)]` `DisjointSlice { ptr, len, width: u32, .. }` rebuilt in a stack slot and passed
/// the way the Rust ABI wants it.
fn push_row_width_slice<'tcx>(
    bx: &mut Builder<'_, 'tcx>,
    arg: &rustc_target::callconv::ArgAbi<'tcx, Ty<'tcx>>,
    [ptr, len, width]: [ir::Value; 3],
    out: &mut Vec<ir::Value>,
) {
    let align = arg.layout.align.abi;
    let slot = bx.alloca(arg.layout.size, align);
    bx.store(ptr, slot, align);
    for (value, offset) in [(len, 8), (width, 16)] {
        let off = bx.cx.const_usize(offset);
        let field = bx.inbounds_ptradd(slot, off);
        bx.store(value, field, align.restrict_for_offset(Size::from_bytes(offset)));
    }
    push_from_memory(bx, arg, slot, out);
}

/// Loads the Rust-ABI form of `arg` from memory at `ptr` (a byval parameter or a stack slot).
fn push_from_memory<'tcx>(
    bx: &mut Builder<'_, 'tcx>,
    arg: &rustc_target::callconv::ArgAbi<'tcx, Ty<'tcx>>,
    ptr: ir::Value,
    out: &mut Vec<ir::Value>,
) {
    let layout = arg.layout;
    let align = layout.align.abi;
    match &arg.mode {
        PassMode::Ignore => {}
        PassMode::Direct(_) => {
            let ty = bx.cx.backend_type(layout);
            let v = bx.load(ty, ptr, align);
            let v = match layout.backend_repr {
                BackendRepr::Scalar(s) => bx.to_immediate_scalar(v, s),
                _ => v,
            };
            out.push(v);
        }
        PassMode::Pair(..) => {
            let BackendRepr::ScalarPair(a, b) = layout.backend_repr else { unreachable!() };
            let b_off = a.size(bx).align_to(b.align(bx).abi);
            let a_ty = bx.cx.scalar_pair_element_backend_type(layout, 0, false);
            let b_ty = bx.cx.scalar_pair_element_backend_type(layout, 1, false);
            let av = bx.load(a_ty, ptr, align);
            let av = bx.to_immediate_scalar(av, a);
            let off = bx.cx.const_usize(b_off.bytes());
            let bp = bx.inbounds_ptradd(ptr, off);
            let bv = bx.load(b_ty, bp, align.restrict_for_offset(b_off));
            let bv = bx.to_immediate_scalar(bv, b);
            out.extend([av, bv]);
        }
        PassMode::Cast { cast, pad_i32 } => {
            if *pad_i32 {
                let i32t = bx.cx.type_i32();
                out.push(bx.cx.const_undef(i32t));
            }
            // The cast type may be larger than the value (trailing padding): copy into a slot
            // of the cast's size first.
            let size = std::cmp::max(cast.size(bx), layout.size);
            let slot = bx.alloca(size, std::cmp::max(cast.align(bx), align));
            let n = bx.cx.const_usize(layout.size.bytes());
            bx.memcpy(slot, align, ptr, align, n, rustc_codegen_ssa::MemFlags::empty(), None);
            let ty = bx.cx.cast_backend_type(cast);
            out.push(bx.load(ty, slot, align));
        }
        PassMode::Indirect { .. } => {
            // The callee may write to its copy; give it a private one.
            let slot = bx.alloca(layout.size.max(Size::from_bytes(1)), align);
            let n = bx.cx.const_usize(layout.size.bytes());
            bx.memcpy(slot, align, ptr, align, n, rustc_codegen_ssa::MemFlags::empty(), None);
            out.push(slot);
        }
    }
}
