//! Function declarations from `FnAbi` (signature and parameter attributes) and the argument
//! plumbing of `ArgAbiBuilderMethods`, as in rustc_codegen_llvm's `abi.rs`.

use rustc_abi::Size;
use rustc_codegen_ssa::MemFlags;
use rustc_codegen_ssa::mir::operand::{OperandRef, OperandValue};
use rustc_codegen_ssa::mir::place::{PlaceRef, PlaceValue};
use rustc_codegen_ssa::traits::*;
use rustc_middle::ty::Ty;
use rustc_target::callconv::{ArgAbi, ArgAttribute, ArgAttributes, ArgExtension, FnAbi, PassMode};

use super::builder::Builder;
use super::context::CodegenCx;
use super::errors::DeviceError;
use super::ir;

/// Declares `name` with the LLVM signature and parameter attributes of `fn_abi`.
pub fn declare_fn<'tcx>(cx: &CodegenCx<'tcx>, name: &str, fn_abi: &FnAbi<'tcx, Ty<'tcx>>) -> ir::Value {
    let sig = cx.fn_decl_backend_type(fn_abi);
    let f = cx.declare_raw_fn(name, sig);
    let idx = cx.func_index(f) as usize;
    let sig_data = cx.sig_of(sig);
    let mut attrs = Vec::with_capacity(sig_data.params.len());
    if let PassMode::Indirect { attrs: a, .. } = &fn_abi.ret.mode {
        attrs.push(format!("noalias sret({}) {}", cx.type_str(cx.type_bytes(fn_abi.ret.layout.size)), ptr_attrs(a)));
    }
    for arg in fn_abi.args.iter() {
        match &arg.mode {
            PassMode::Ignore => {}
            PassMode::Direct(a) => attrs.push(param_attrs(cx, a, sig_data.params.get(attrs.len()).copied())),
            PassMode::Pair(a, b) => {
                attrs.push(param_attrs(cx, a, sig_data.params.get(attrs.len()).copied()));
                attrs.push(param_attrs(cx, b, sig_data.params.get(attrs.len()).copied()));
            }
            PassMode::Indirect { attrs: a, meta_attrs: Some(m), .. } => {
                attrs.push(ptr_attrs(a));
                attrs.push(param_attrs(cx, m, sig_data.params.get(attrs.len()).copied()));
            }
            PassMode::Indirect { attrs: a, meta_attrs: None, .. } => attrs.push(ptr_attrs(a)),
            PassMode::Cast { pad_i32, .. } => {
                if *pad_i32 {
                    attrs.push(String::new());
                }
                attrs.push(String::new());
            }
        }
    }
    let mut m = cx.module.borrow_mut();
    let func = &mut m.funcs[idx];
    func.param_attrs = attrs;
    // Like clang's CUDA mode: every device function may contain a barrier until proven otherwise
    // (LLVM drops the attribute where it can), so no pass may make a barrier divergent.
    func.fn_attrs = vec!["convergent".into(), "nounwind".into()];
    f
}

fn param_attrs(cx: &CodegenCx<'_>, a: &ArgAttributes, ty: Option<ir::Type>) -> String {
    let is_ptr = ty.is_some_and(|t| matches!(cx.type_data(t), ir::TypeData::Ptr(_)));
    let mut out = if is_ptr { ptr_attrs(a) } else { String::new() };
    let mut push = |s: &str| {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(s);
    };
    if !is_ptr && a.regular.contains(ArgAttribute::NoUndef) {
        push("noundef");
    }
    match a.arg_ext {
        ArgExtension::Zext if !is_ptr => push("zeroext"),
        ArgExtension::Sext if !is_ptr => push("signext"),
        _ => {}
    }
    out
}

fn ptr_attrs(a: &ArgAttributes) -> String {
    let mut parts = Vec::new();
    if a.regular.contains(ArgAttribute::NoAlias) {
        parts.push("noalias".to_string());
    }
    if a.regular.contains(ArgAttribute::NonNull) && a.pointee_size == Size::ZERO {
        parts.push("nonnull".to_string());
    }
    if a.regular.contains(ArgAttribute::ReadOnly) {
        parts.push("readonly".to_string());
    }
    if a.regular.contains(ArgAttribute::NoUndef) {
        parts.push("noundef".to_string());
    }
    if let Some(align) = a.pointee_align {
        parts.push(format!("align {}", align.bytes()));
    }
    if a.pointee_size > Size::ZERO {
        let kind =
            if a.regular.contains(ArgAttribute::NonNull) { "dereferenceable" } else { "dereferenceable_or_null" };
        parts.push(format!("{kind}({})", a.pointee_size.bytes()));
    }
    parts.join(" ")
}

impl<'a, 'tcx> ArgAbiBuilderMethods<'tcx> for Builder<'a, 'tcx> {
    fn store_fn_arg(&mut self, arg_abi: &ArgAbi<'tcx, Ty<'tcx>>, idx: &mut usize, dst: PlaceRef<'tcx, ir::Value>) {
        let mut next = |bx: &mut Self| {
            let v = bx.get_param(*idx);
            *idx += 1;
            v
        };
        match arg_abi.mode {
            PassMode::Ignore => {}
            PassMode::Pair(..) => {
                let a = next(self);
                let b = next(self);
                OperandValue::Pair(a, b).store(self, dst);
            }
            PassMode::Indirect { meta_attrs: Some(_), .. } => {
                let a = next(self);
                let b = next(self);
                let place = PlaceValue { llval: a, llextra: Some(b), align: arg_abi.layout.align.abi };
                OperandValue::Ref(place).store(self, dst);
            }
            PassMode::Direct(_) | PassMode::Indirect { meta_attrs: None, .. } | PassMode::Cast { .. } => {
                let v = next(self);
                self.store_arg(arg_abi, v, dst);
            }
        }
    }

    fn store_arg(&mut self, arg_abi: &ArgAbi<'tcx, Ty<'tcx>>, val: ir::Value, dst: PlaceRef<'tcx, ir::Value>) {
        match &arg_abi.mode {
            PassMode::Ignore => {}
            PassMode::Indirect { attrs, meta_attrs: None, .. } => {
                let align = attrs.pointee_align.unwrap_or(arg_abi.layout.align.abi);
                OperandValue::Ref(PlaceValue::new_sized(val, align)).store(self, dst);
            }
            PassMode::Indirect { meta_attrs: Some(_), .. } => {
                super::errors::report(self.cx, DeviceError::UnsizedByValue);
            }
            PassMode::Cast { cast, .. } => {
                let size = cast.size(self);
                let align = cast.align(self);
                let copy = std::cmp::min(cast.unaligned_size(self).bytes(), arg_abi.layout.size.bytes());
                let scratch = self.alloca(size, align);
                rustc_codegen_ssa::mir::store_cast(self, cast, val, scratch, align);
                let n = self.cx.const_usize(copy);
                self.memcpy(dst.val.llval, arg_abi.layout.align.abi, scratch, align, n, MemFlags::empty(), None);
            }
            PassMode::Pair(..) | PassMode::Direct(_) => {
                OperandRef::from_immediate_or_packed_pair(self, val, arg_abi.layout).val.store(self, dst);
            }
        }
    }
}
