//! Declaring functions in the device module: by raw symbol name (LLVM intrinsics, libdevice,
//! kernel entries) or as Rust instances, which are queued to get their bodies.

use rustc_codegen_ssa::traits::*;
use rustc_hir::attrs::{InlineAttr, Linkage};
use rustc_hir::def_id::DefId;
use rustc_middle::mono::Visibility;
use rustc_middle::ty::{self, Instance, TyCtxt};

use super::context::{CodegenCx, Reached, bug_no_span, ptx_safe_name};
use super::errors::DeviceError;
use super::ir::{self, FuncData, TypeData, ValueKind};

impl<'tcx> CodegenCx<'tcx> {
    /// Declares (once) a function by its final symbol name and LLVM signature.
    pub fn declare_raw_fn(&self, name: &str, sig: ir::FnSig) -> ir::Value {
        let mut m = self.module.borrow_mut();
        if let Some(&idx) = m.func_by_name.get(name) {
            return m.funcs[idx as usize].value;
        }
        let idx = m.funcs.len() as u32;
        let ptr = m.ty(TypeData::Ptr(0));
        let value = m.value(ptr, format!("@{name}"), ValueKind::Func(idx));
        m.funcs.push(FuncData {
            name: name.to_string(),
            sig,
            value,
            linkage: "",
            kernel: false,
            fn_attrs: vec![],
            param_attrs: vec![],
            ret_attrs: String::new(),
            params: vec![],
            allocas: vec![],
            blocks: vec![],
            subprogram: None,
            prologue_loc: None,
        });
        m.func_by_name.insert(name.to_string(), idx);
        value
    }

    pub fn func_index(&self, f: ir::Value) -> u32 {
        match self.module.borrow().value_data(f).kind {
            ValueKind::Func(idx) => idx,
            ref other => bug_no_span(&format!("not a function value: {other:?}")),
        }
    }

    /// The function's signature, looked up from its value.
    pub fn func_sig(&self, f: ir::Value) -> ir::FnSig {
        let idx = self.func_index(f);
        self.module.borrow().funcs[idx as usize].sig
    }

    /// Creates the parameter values of a function that is about to get a body.
    pub fn ensure_params(&self, f: ir::Value) {
        let idx = self.func_index(f) as usize;
        let mut m = self.module.borrow_mut();
        if !m.funcs[idx].params.is_empty() {
            return;
        }
        let sig = m.funcs[idx].sig;
        let tys = m.sig_data(sig).params.clone();
        let params = tys.into_iter().enumerate().map(|(i, t)| m.value(t, format!("%p{i}"), ValueKind::Local)).collect();
        m.funcs[idx].params = params;
    }

    /// The function of a Rust instance, declared and queued for definition on first use.
    pub fn declare_instance(&self, instance: Instance<'tcx>) -> ir::Value {
        if let Some(caller) = self.current.get()
            && caller != instance
            && let ty::InstanceKind::Item(def_id) = instance.def
            && super::attrs::is_kernel(self.tcx, def_id)
        {
            // Like CUDA's `__global__`: a kernel is an entry point, launched from the host only.
            let kernel = self.tcx.def_path_str(def_id);
            super::errors::report(self, DeviceError::KernelCalledFromDevice { kernel });
        }
        // Fast math is inherited by everything a fast function calls.
        let fast = self.fast.get()
            || matches!(instance.def, ty::InstanceKind::Item(def_id) if super::attrs::is_fast_math(self.tcx, def_id));
        if let Some(&f) = self.instances.borrow().get(&(instance, fast)) {
            return f;
        }
        let fn_abi = self.fn_abi_of_instance(instance, ty::List::empty());
        let mut symbol = ptx_safe_name(self.tcx.symbol_name(instance).name);
        if fast && !self.fast_math {
            // The IEEE and the fast-math compilation of one function side by side.
            symbol.push_str("$fast");
        }
        // An export keeps its C name and external linkage, so CUDA C++ can call it; a second,
        // fast-math compilation of it stays internal.
        let mut export = if fast && !self.fast_math { None } else { self.exports.borrow().get(&instance).cloned() };
        if let ty::InstanceKind::Item(def_id) = instance.def
            && super::interop::is_import(self.tcx, def_id)
        {
            // A CUDA C++ function: its C name, external, for the device linker to resolve.
            export = Some(self.tcx.item_name(def_id).to_string());
            if let Some(&f) = self.instances.borrow().get(&(instance, !fast)) {
                return f;
            }
        }
        if let Some(name) = &export {
            symbol = name.clone();
        }
        let f = super::abi::declare_fn(self, &symbol, fn_abi);
        let idx = self.func_index(f) as usize;
        if let Some(inline) = inline_attr(self.tcx, instance) {
            self.module.borrow_mut().funcs[idx].fn_attrs.push(inline.into());
        }
        if export.is_none() {
            self.module.borrow_mut().funcs[idx].linkage = "internal";
        }
        self.instances.borrow_mut().insert((instance, fast), f);
        self.enqueue(instance, fast);
        f
    }

    /// Records who reached `instance`, for diagnostics, and queues it for definition.
    fn enqueue(&self, instance: Instance<'tcx>, fast: bool) {
        self.reached
            .borrow_mut()
            .entry(instance)
            .or_insert(Reached { caller: self.current.get(), span: self.current_span.get() });
        self.queue.borrow_mut().push((instance, fast));
    }
}

impl<'tcx> PreDefineCodegenMethods<'tcx> for CodegenCx<'tcx> {
    fn predefine_static(&mut self, _: DefId, _: Linkage, _: Visibility, _: &str) {}
    fn predefine_fn(&mut self, _: Instance<'tcx>, _: Linkage, _: Visibility, _: &str) {}
}

/// LLVM's inlining attribute for `instance`, as rustc_codegen_llvm gives it: `#[inline(always)]`
/// is `alwaysinline` (a helper taking `&mut` of a wgmma accumulator keeps it in registers only
/// when inlined), `#[inline]` and shims `inlinehint`. `#[inline(never)]` stays a hint LLVM may
/// override: core's panic entry points and `cuda_device`'s intrinsic stubs carry it, and the
/// device pipeline wants both inlined (bounds traps are merged per kernel, intrinsics are
/// instructions).
fn inline_attr<'tcx>(tcx: TyCtxt<'tcx>, instance: Instance<'tcx>) -> Option<&'static str> {
    let inline = match tcx.codegen_fn_attrs(instance.def_id()).inline {
        InlineAttr::None if instance.def.requires_inline(tcx) => InlineAttr::Hint,
        inline => inline,
    };
    match inline {
        InlineAttr::Hint => Some("inlinehint"),
        InlineAttr::Always | InlineAttr::Force { .. } => Some("alwaysinline"),
        InlineAttr::Never | InlineAttr::None => None,
    }
}
