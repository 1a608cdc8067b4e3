//! Types: the base LLVM types and the mapping from Rust layouts to them (as rustc_codegen_llvm's
//! `type_.rs` and `type_of.rs`, with aggregates kept as byte arrays: every field access in
//! codegen_ssa is a byte offset, so only size and alignment matter).

use rustc_abi::{AddressSpace, BackendRepr, Primitive, Reg, RegKind, Size};
use rustc_codegen_ssa::common::TypeKind;
use rustc_codegen_ssa::traits::*;
use rustc_middle::ty::Ty;
use rustc_middle::ty::layout::TyAndLayout;
use rustc_target::callconv::{CastTarget, FnAbi, PassMode};

use super::context::CodegenCx;
use super::ir::{self, SigData, TypeData};

impl<'tcx> CodegenCx<'tcx> {
    pub fn type_void(&self) -> ir::Type {
        self.ty(TypeData::Void)
    }
    pub fn type_i1(&self) -> ir::Type {
        self.ty(TypeData::Int(1))
    }
    pub fn type_ix(&self, bits: u64) -> ir::Type {
        self.ty(TypeData::Int(bits as u32))
    }
    pub fn type_struct(&self, fields: &[ir::Type], packed: bool) -> ir::Type {
        self.ty(TypeData::Struct(fields.to_vec(), packed))
    }
    pub fn type_vector(&self, elem: ir::Type, len: u64) -> ir::Type {
        self.ty(TypeData::Vector(elem, len))
    }
    pub fn type_bytes(&self, size: Size) -> ir::Type {
        let i8t = self.type_i8();
        self.type_array(i8t, size.bytes())
    }
    pub fn sig_of(&self, sig: ir::FnSig) -> SigData {
        self.module.borrow().sig_data(sig).clone()
    }

    fn reg_type(&self, reg: &Reg) -> ir::Type {
        match reg.kind {
            RegKind::Integer => self.type_ix(reg.size.bits()),
            RegKind::Float => match reg.size.bits() {
                16 => self.type_f16(),
                32 => self.type_f32(),
                64 => self.type_f64(),
                _ => self.type_f128(),
            },
            RegKind::Vector { hint_vector_elem } => {
                let elem = self.type_from_primitive(hint_vector_elem);
                let n = reg.size.bytes() / hint_vector_elem.size(self).bytes();
                self.type_vector(elem, n)
            }
        }
    }

    /// The memory type of a scalar: `i8` for `bool`, `ptr` for pointers.
    fn scalar_type(&self, scalar: rustc_abi::Scalar) -> ir::Type {
        match scalar.primitive() {
            Primitive::Int(i, _) => self.type_from_integer(i),
            Primitive::Float(f) => self.type_from_float(f),
            Primitive::Pointer(AddressSpace(a)) => self.ty(TypeData::Ptr(a)),
        }
    }
}

impl<'tcx> BaseTypeCodegenMethods for CodegenCx<'tcx> {
    fn type_i8(&self) -> ir::Type {
        self.ty(TypeData::Int(8))
    }
    fn type_i16(&self) -> ir::Type {
        self.ty(TypeData::Int(16))
    }
    fn type_i32(&self) -> ir::Type {
        self.ty(TypeData::Int(32))
    }
    fn type_i64(&self) -> ir::Type {
        self.ty(TypeData::Int(64))
    }
    fn type_i128(&self) -> ir::Type {
        self.ty(TypeData::Int(128))
    }
    fn type_isize(&self) -> ir::Type {
        self.ty(TypeData::Int(self.tcx.data_layout.pointer_size().bits() as u32))
    }
    fn type_f16(&self) -> ir::Type {
        self.ty(TypeData::Half)
    }
    fn type_f32(&self) -> ir::Type {
        self.ty(TypeData::Float)
    }
    fn type_f64(&self) -> ir::Type {
        self.ty(TypeData::Double)
    }
    fn type_f128(&self) -> ir::Type {
        // NVPTX has no fp128: LLVM would abort on it. One error per function that uses it.
        if self.reports.first(("f128", self.current.get().map(|i| i.def_id()), None)) {
            super::errors::report(self, super::errors::DeviceError::F128);
        }
        self.ty(TypeData::Fp128)
    }
    fn type_array(&self, ty: ir::Type, len: u64) -> ir::Type {
        self.ty(TypeData::Array(ty, len))
    }
    fn type_func(&self, args: &[ir::Type], ret: ir::Type) -> ir::FnSig {
        self.module.borrow_mut().sig(SigData { params: args.to_vec(), ret, variadic: false })
    }
    fn type_kind(&self, ty: ir::Type) -> TypeKind {
        match self.type_data(ty) {
            TypeData::Void => TypeKind::Void,
            TypeData::Int(_) => TypeKind::Integer,
            TypeData::Half => TypeKind::Half,
            TypeData::BFloat => TypeKind::BFloat,
            TypeData::Float => TypeKind::Float,
            TypeData::Double => TypeKind::Double,
            TypeData::Fp128 => TypeKind::FP128,
            TypeData::Ptr(_) => TypeKind::Pointer,
            TypeData::Array(..) => TypeKind::Array,
            TypeData::Vector(..) => TypeKind::Vector,
            TypeData::Struct(..) => TypeKind::Struct,
        }
    }
    fn type_ptr(&self) -> ir::Type {
        self.ty(TypeData::Ptr(0))
    }
    fn type_ptr_ext(&self, address_space: AddressSpace) -> ir::Type {
        self.ty(TypeData::Ptr(address_space.0))
    }
    fn element_type(&self, ty: ir::Type) -> ir::Type {
        match self.type_data(ty) {
            TypeData::Array(e, _) | TypeData::Vector(e, _) => e,
            other => super::context::bug_no_span(&format!("element_type of {other:?}")),
        }
    }
    fn vector_length(&self, ty: ir::Type) -> usize {
        match self.type_data(ty) {
            TypeData::Vector(_, n) => n as usize,
            other => super::context::bug_no_span(&format!("vector_length of {other:?}")),
        }
    }
    fn float_width(&self, ty: ir::Type) -> usize {
        match self.type_data(ty) {
            TypeData::Half | TypeData::BFloat => 16,
            TypeData::Float => 32,
            TypeData::Double => 64,
            TypeData::Fp128 => 128,
            other => super::context::bug_no_span(&format!("float_width of {other:?}")),
        }
    }
    fn int_width(&self, ty: ir::Type) -> u64 {
        match self.type_data(ty) {
            TypeData::Int(w) => w as u64,
            other => super::context::bug_no_span(&format!("int_width of {other:?}")),
        }
    }
    fn val_ty(&self, v: ir::Value) -> ir::Type {
        self.module.borrow().value_data(v).ty
    }
}

impl<'tcx> LayoutTypeCodegenMethods<'tcx> for CodegenCx<'tcx> {
    fn backend_type(&self, layout: TyAndLayout<'tcx>) -> ir::Type {
        match layout.backend_repr {
            BackendRepr::Scalar(s) => self.scalar_type(s),
            BackendRepr::ScalarPair(a, b) => {
                let (a, b) = (self.scalar_type(a), self.scalar_type(b));
                self.type_struct(&[a, b], false)
            }
            BackendRepr::SimdVector { element, count } => {
                let e = self.scalar_type(element);
                self.type_vector(e, count)
            }
            BackendRepr::SimdScalableVector { .. } | BackendRepr::Memory { .. } => self.type_bytes(layout.size),
        }
    }

    fn cast_backend_type(&self, cast: &CastTarget) -> ir::Type {
        let unit = self.reg_type(&cast.rest.unit);
        let rest_count = if cast.rest.total == Size::ZERO {
            0
        } else {
            cast.rest.total.bytes().div_ceil(cast.rest.unit.size.bytes())
        };
        if cast.prefix.iter().all(|x| x.is_none()) {
            if rest_count == 1 && (!cast.rest.is_consecutive || cast.rest.unit != Reg::i128()) {
                return unit;
            }
            return self.type_array(unit, rest_count);
        }
        let mut fields: Vec<ir::Type> = cast.prefix.iter().flatten().map(|reg| self.reg_type(reg)).collect();
        fields.extend((0..rest_count).map(|_| unit));
        self.type_struct(&fields, false)
    }

    fn fn_decl_backend_type(&self, fn_abi: &FnAbi<'tcx, Ty<'tcx>>) -> ir::FnSig {
        let args = if fn_abi.c_variadic { &fn_abi.args[..fn_abi.fixed_count as usize] } else { &fn_abi.args };
        let mut params = Vec::with_capacity(args.len() + 1);
        let ret = match &fn_abi.ret.mode {
            PassMode::Ignore => self.type_void(),
            PassMode::Direct(_) | PassMode::Pair(..) => self.immediate_backend_type(fn_abi.ret.layout),
            PassMode::Cast { cast, .. } => self.cast_backend_type(cast),
            PassMode::Indirect { .. } => {
                params.push(self.type_ptr());
                self.type_void()
            }
        };
        for arg in args {
            match &arg.mode {
                PassMode::Ignore => {}
                PassMode::Direct(_) => params.push(self.immediate_backend_type(arg.layout)),
                PassMode::Pair(..) => {
                    params.push(self.scalar_pair_element_backend_type(arg.layout, 0, true));
                    params.push(self.scalar_pair_element_backend_type(arg.layout, 1, true));
                }
                PassMode::Indirect { meta_attrs: Some(_), .. } => {
                    let ptr = self.layout_of(Ty::new_mut_ptr(self.tcx, arg.layout.ty));
                    params.push(self.scalar_pair_element_backend_type(ptr, 0, true));
                    params.push(self.scalar_pair_element_backend_type(ptr, 1, true));
                }
                PassMode::Indirect { meta_attrs: None, .. } => params.push(self.type_ptr()),
                PassMode::Cast { cast, pad_i32 } => {
                    if *pad_i32 {
                        params.push(self.type_i32());
                    }
                    params.push(self.cast_backend_type(cast));
                }
            }
        }
        self.module.borrow_mut().sig(SigData { params, ret, variadic: fn_abi.c_variadic })
    }

    fn fn_ptr_backend_type(&self, _fn_abi: &FnAbi<'tcx, Ty<'tcx>>) -> ir::Type {
        self.type_ptr()
    }

    fn reg_backend_type(&self, ty: &Reg) -> ir::Type {
        self.reg_type(ty)
    }

    fn immediate_backend_type(&self, layout: TyAndLayout<'tcx>) -> ir::Type {
        match layout.backend_repr {
            BackendRepr::Scalar(s) if s.is_bool() => self.type_i1(),
            BackendRepr::ScalarPair(..) => {
                let a = self.scalar_pair_element_backend_type(layout, 0, true);
                let b = self.scalar_pair_element_backend_type(layout, 1, true);
                self.type_struct(&[a, b], false)
            }
            _ => self.backend_type(layout),
        }
    }

    fn is_backend_immediate(&self, layout: TyAndLayout<'tcx>) -> bool {
        match layout.backend_repr {
            BackendRepr::Scalar(_) | BackendRepr::SimdVector { .. } => true,
            BackendRepr::ScalarPair(..) | BackendRepr::SimdScalableVector { .. } => false,
            BackendRepr::Memory { .. } => layout.is_zst(),
        }
    }

    fn is_backend_scalar_pair(&self, layout: TyAndLayout<'tcx>) -> bool {
        matches!(layout.backend_repr, BackendRepr::ScalarPair(..))
    }

    fn scalar_pair_element_backend_type(&self, layout: TyAndLayout<'tcx>, index: usize, immediate: bool) -> ir::Type {
        let BackendRepr::ScalarPair(a, b) = layout.backend_repr else {
            super::context::bug_no_span(&format!("scalar pair element of {layout:?}"))
        };
        let s = if index == 0 { a } else { b };
        if immediate && s.is_bool() { self.type_i1() } else { self.scalar_type(s) }
    }
}
