//! Shared memory: statics of the `SharedArray<T, N>` lang item become uninitialised
//! `addrspace(3)` globals, and dynamic shared memory is one `external addrspace(3)` array.

use oxide_contract::attrs::LangItem;
use rustc_codegen_ssa::traits::*;
use rustc_hir::def_id::DefId;
use rustc_middle::ty::{self, Instance};

use super::super::builder::Builder;
use super::super::context::{CodegenCx, ptx_safe_name};
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
        Some(idx) => cx.module.borrow().globals[idx as usize].value,
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

/// The generic address of a `static` whose type is the `SharedArray` lang item
/// (one per block, contents undefined at launch); `None` for every other static.
pub fn shared_static<'tcx>(cx: &CodegenCx<'tcx>, def_id: DefId) -> Option<ir::Value> {
    let tcx = cx.tcx;
    let ty = tcx.type_of(def_id).instantiate_identity().skip_normalization();
    let ty::Adt(adt, _) = ty.kind() else { return None };
    if super::super::attrs::lang_item(tcx, adt.did()) != Some(LangItem::SharedArray) {
        return None;
    }
    let layout = cx.layout_of(ty);
    let name = ptx_safe_name(tcx.symbol_name(Instance::mono(tcx, def_id)).name);
    let bytes = cx.type_array(cx.type_i8(), layout.size.bytes());
    Some(shared_global(cx, &name, bytes, true, "internal", layout.align.abi.bytes().max(4)))
}

/// Builds `dynamic_shared_ptr`; `false` for every other name.
pub fn build(bx: &mut Builder<'_, '_>, name: &str) -> bool {
    match name {
        "dynamic_shared_ptr" => {
            let bytes = bx.cx.type_array(bx.cx.type_i8(), 0);
            let p = shared_global(bx.cx, DYNAMIC_SHARED, bytes, false, "", 16);
            bx.ret(p);
        }
        _ => return false,
    }
    true
}
