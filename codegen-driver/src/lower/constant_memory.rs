//! Constant memory: a `static` of the `ConstantMemory<T>` lang item becomes a global in the
//! `.const` state space (address space 4), visible under the static's own name
//! (`oxide_contract::naming::constant_symbol`) so that the host finds it with
//! `cuModuleGetGlobal`, and `externally_initialized` so that no read folds its initial value.

use oxide_contract::attrs::LangItem;
use oxide_contract::naming::constant_symbol;
use rustc_codegen_ssa::traits::*;
use rustc_hir::def_id::DefId;
use rustc_middle::ty;

use super::context::CodegenCx;
use super::errors::DeviceError;
use super::ir::{self, GlobalData, TypeData, ValueKind};

/// The generic address of a `ConstantMemory` static; `None` for every other static.
pub fn constant_static<'tcx>(cx: &CodegenCx<'tcx>, def_id: DefId) -> Option<ir::Value> {
    let tcx = cx.tcx;
    let ty = tcx.type_of(def_id).instantiate_identity().skip_normalization();
    let ty::Adt(adt, _) = ty.kind() else { return None };
    if super::attrs::lang_item(tcx, adt.did()) != Some(LangItem::ConstantMemory) {
        return None;
    }
    let name = constant_symbol(tcx.item_name(def_id).as_str());
    let ptr = cx.type_ptr();
    if cx.module.borrow().global_by_name.contains_key(&name) {
        // `get_static` caches by `DefId`: the name is taken by a different static.
        super::errors::report(cx, DeviceError::ConstantMemoryNameClash { name: name.clone() });
        return Some(cx.const_null(ptr));
    }
    let Ok(alloc) = tcx.eval_static_initializer(def_id) else {
        super::errors::report(cx, DeviceError::StaticNotEvaluable { name: tcx.def_path_str(def_id) });
        return Some(cx.const_null(ptr));
    };
    let init = cx.const_alloc(alloc);
    let align = alloc.inner().align.bytes().max(4);
    let global = {
        let mut m = cx.module.borrow_mut();
        let idx = m.globals.len() as u32;
        let ptr4 = m.ty(TypeData::Ptr(4));
        let value = m.value(ptr4, format!("@{name}"), ValueKind::Global);
        let ty = m.value_data(init).ty;
        m.global_by_name.insert(name.clone(), idx);
        m.globals.push(GlobalData {
            name,
            value,
            ty,
            init: Some(init),
            constant: false,
            linkage: "",
            align,
            addrspace: 4,
            externally_initialized: true,
        });
        value
    };
    let text = format!("addrspacecast ({} to ptr)", cx.operand(global));
    Some(cx.const_value(ptr, text, None))
}
