//! Shared memory: statics of the `SharedMemory<T, N, ALIGN>` and `SharedArray<T, N, ALIGN>` lang
//! items become uninitialised `addrspace(3)` globals, dynamic shared memory is one `external
//! addrspace(3)` array (aligned to the largest alignment any of the module's kernels asks for),
//! and `cvta.to.shared`.

use oxide_contract::attrs::LangItem;
use oxide_contract::limits::DEFAULT_SHARED_MEMORY_PER_BLOCK;
use rustc_codegen_ssa::traits::*;
use rustc_hir::def_id::DefId;
use rustc_middle::ty::{self, Instance, Unnormalized};

use super::super::builder::Builder;
use super::super::context::{CodegenCx, ptx_safe_name};
use super::super::errors::{DeviceError, report_at};
use super::super::ir::{self, GlobalData, TypeData, ValueKind};

/// PTX name of the dynamic shared memory array (`extern __shared__` in CUDA C++).
const DYNAMIC_SHARED: &str = "__oxide_dynamic_shared";

/// Adds a global in the shared address space (3) and returns its generic address.
fn shared_global(
    cx: &CodegenCx<'_>,
    name: &str,
    ty: ir::Type,
    init: bool,
    linkage: &'static str,
    align: u64,
) -> ir::Value {
    let existing = cx.module.borrow().global_by_name.get(name).copied();
    let global = match existing {
        Some(idx) => {
            // One declaration serves every use: it takes the strictest alignment asked for.
            let mut m = cx.module.borrow_mut();
            let g = &mut m.globals[idx as usize];
            g.align = g.align.max(align);
            g.value
        }
        None => {
            let undef = init.then(|| cx.const_undef(ty));
            let mut m = cx.module.borrow_mut();
            let idx = m.globals.len() as u32;
            let ptr3 = m.ty(TypeData::Ptr(3));
            let value = m.value(ptr3, format!("@{name}"), ValueKind::Global);
            m.global_by_name.insert(name.to_string(), idx);
            m.globals.push(GlobalData {
                name: name.to_string(),
                value,
                ty,
                init: undef,
                constant: false,
                linkage,
                align,
                addrspace: 3,
                externally_initialized: false,
            });
            value
        }
    };
    let ptr = cx.type_ptr();
    let text = format!("addrspacecast ({} to ptr)", cx.operand(global));
    cx.const_value(ptr, text, None)
}

/// The generic address of a `static` whose type is the `SharedMemory` or `SharedArray` lang item
/// (one per block, contents undefined at launch); `None` for every other static.
pub fn shared_static<'tcx>(cx: &CodegenCx<'tcx>, def_id: DefId) -> Option<ir::Value> {
    let tcx = cx.tcx;
    // Normalised, so that const arguments written as expressions (`{ SWIZZLE.alignment() }`)
    // are values below: unevaluated, `ALIGN` would read as "none asked".
    let declared = Unnormalized::new_wip(tcx.type_of(def_id).instantiate_identity().skip_normalization());
    let ty = tcx.normalize_erasing_regions(ty::TypingEnv::fully_monomorphized(), declared);
    let ty::Adt(adt, _) = ty.kind() else { return None };
    if !matches!(super::super::attrs::lang_item(tcx, adt.did()), Some(LangItem::SharedArray | LangItem::SharedMemory)) {
        return None;
    }
    let layout = cx.layout_of(ty);
    if layout.size.bytes() > u64::from(DEFAULT_SHARED_MEMORY_PER_BLOCK) {
        let error = DeviceError::SharedStaticTooLarge { name: tcx.def_path_str(def_id), bytes: layout.size.bytes() };
        report_at(tcx, Some(tcx.def_span(def_id)), error);
        cx.reports.failed.set(true);
    }
    let name = ptx_safe_name(tcx.symbol_name(Instance::mono(tcx, def_id)).name);
    let bytes = cx.type_array(cx.type_i8(), layout.size.bytes());
    // `<T, N, ALIGN>` (both types): ALIGN = 0 means the element's own alignment.
    let asked = match ty.kind() {
        ty::Adt(_, args) if args.len() > 2 => args.const_at(2).try_to_target_usize(tcx).unwrap_or_else(|| {
            rustc_middle::bug!(
                "cuda-oxide: the alignment of shared static `{}` is not a value",
                tcx.def_path_str(def_id)
            )
        }),
        _ => 0,
    };
    let align = layout.align.abi.bytes().max(4).max(asked);
    Some(shared_global(cx, &name, bytes, true, "internal", align))
}

/// Builds `dynamic_shared_ptr[_aligned]` and `cvta_to_shared`; `false` for every other name.
pub fn build<'tcx>(bx: &mut Builder<'_, 'tcx>, name: &str, instance: Instance<'tcx>) -> bool {
    match name {
        "dynamic_shared_ptr" | "dynamic_shared_ptr_aligned" => {
            let align = if name == "dynamic_shared_ptr" {
                16
            } else {
                instance.args.const_at(0).try_to_target_usize(bx.cx.tcx).unwrap_or(16).max(16)
            };
            let bytes = bx.cx.type_array(bx.cx.type_i8(), 0);
            let p = shared_global(bx.cx, DYNAMIC_SHARED, bytes, false, "", align);
            bx.ret(p);
        }
        "cvta_to_shared" => {
            let ptr = bx.get_param(0);
            let shared = bx.cx.type_ptr_ext(rustc_abi::AddressSpace(3));
            let i64t = bx.cx.type_i64();
            let p3 = bx.emit_value(shared, format!("addrspacecast {} to ptr addrspace(3)", bx.cx.operand(ptr)));
            let offset = bx.emit_value(i64t, format!("ptrtoint {} to i64", bx.cx.operand(p3)));
            bx.ret(offset);
        }
        _ => return false,
    }
    true
}
