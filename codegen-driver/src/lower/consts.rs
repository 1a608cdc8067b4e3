//! Constants: scalars, aggregates, allocations turned into globals, and statics.

use rustc_abi::{self as abi, HasDataLayout, Primitive, Size, WrappingRange};
use rustc_codegen_ssa::traits::*;
use rustc_hir::def_id::DefId;
use rustc_middle::mir::interpret::{ConstAllocation, GlobalAlloc, Pointer, Scalar, read_target_uint};
use rustc_middle::ty::Instance;

use super::context::CodegenCx;
use super::errors::DeviceError;
use super::ir::{self, GlobalData, TypeData, ValueKind, c_string};

impl<'tcx> CodegenCx<'tcx> {
    pub fn const_bytes(&self, bytes: &[u8]) -> ir::Value {
        let ty = self.type_array(self.type_i8(), bytes.len() as u64);
        self.const_value(ty, c_string(bytes), None)
    }

    fn int_const(&self, ty: ir::Type, bits: u128) -> ir::Value {
        let width = self.int_width(ty) as u32;
        let (text, masked) = ir::int_literal(bits, width);
        self.const_value(ty, text, Some(masked))
    }

    /// A float constant from its IEEE bits, in LLVM's hexadecimal spelling.
    pub fn float_const(&self, ty: ir::Type, bits: u128) -> ir::Value {
        let text = ir::float_literal(&self.type_data(ty), bits);
        self.const_value(ty, text, None)
    }

    /// A constant of type `ty` holding the raw bits `bits` (integer, float, or pointer).
    pub fn const_from_bits(&self, ty: ir::Type, bits: u128) -> ir::Value {
        match self.type_data(ty) {
            TypeData::Int(_) => self.int_const(ty, bits),
            TypeData::Ptr(_) if bits == 0 => self.const_value(ty, "null".into(), None),
            TypeData::Ptr(_) => {
                let i64t = self.type_i64();
                let int = self.int_const(i64t, bits);
                let text = format!("inttoptr ({} to {})", self.operand(int), self.type_str(ty));
                self.const_value(ty, text, None)
            }
            _ => self.float_const(ty, bits),
        }
    }

    fn new_global(
        &self,
        name: String,
        init: ir::Value,
        constant: bool,
        align: u64,
        linkage: &'static str,
    ) -> ir::Value {
        let ty = self.val_ty(init);
        let mut m = self.module.borrow_mut();
        let idx = m.globals.len() as u32;
        let ptr = m.ty(TypeData::Ptr(0));
        let value = m.value(ptr, format!("@{name}"), ValueKind::Global);
        m.global_by_name.insert(name.clone(), idx);
        m.globals.push(GlobalData {
            name,
            value,
            ty,
            init: Some(init),
            constant,
            linkage,
            align,
            addrspace: 0,
            externally_initialized: false,
        });
        value
    }

    /// The initializer for an allocation: bytes and pointers as a packed struct.
    pub fn const_alloc(&self, alloc: ConstAllocation<'tcx>) -> ir::Value {
        let alloc = alloc.inner();
        let dl = self.data_layout();
        let psize = dl.pointer_size().bytes() as usize;
        let mut parts = Vec::new();
        let mut next = 0usize;
        let bytes = |range: std::ops::Range<usize>| alloc.inspect_with_uninit_and_ptr_outside_interpreter(range);
        for &(offset, prov) in alloc.provenance().ptrs().iter() {
            let offset = offset.bytes() as usize;
            if offset > next {
                parts.push(self.const_bytes(bytes(next..offset)));
            }
            let ptr_offset = read_target_uint(dl.endian, bytes(offset..offset + psize)).unwrap_or(0) as u64;
            let ptr = Pointer::new(prov, Size::from_bytes(ptr_offset));
            let ptr_scalar = abi::Scalar::Initialized {
                value: Primitive::Pointer(dl.instruction_address_space),
                valid_range: WrappingRange::full(dl.pointer_size()),
            };
            parts.push(self.scalar_to_backend(Scalar::from_pointer(ptr, &self.tcx), ptr_scalar, self.type_ptr()));
            next = offset + psize;
        }
        if alloc.len() > next || parts.is_empty() {
            parts.push(self.const_bytes(bytes(next..alloc.len())));
        }
        if let [single] = parts[..] { single } else { self.const_struct(&parts, true) }
    }
}

/// A private constant global holding `alloc`, shared by every use of the same allocation.
pub fn global_for_alloc<'tcx>(cx: &CodegenCx<'tcx>, alloc: ConstAllocation<'tcx>) -> ir::Value {
    if let Some(&g) = cx.const_allocs.borrow().get(&alloc) {
        return g;
    }
    let init = cx.const_alloc(alloc);
    let name = cx.module.borrow_mut().fresh_private("alloc");
    let constant = alloc.inner().mutability.is_not();
    let g = cx.new_global(name, init, constant, alloc.inner().align.bytes(), "private");
    cx.const_allocs.borrow_mut().insert(alloc, g);
    g
}

/// The global for a `static`, defined from its evaluated initializer.
pub fn get_static<'tcx>(cx: &CodegenCx<'tcx>, def_id: DefId) -> ir::Value {
    if let Some(&g) = cx.statics.borrow().get(&def_id) {
        return g;
    }
    if let Some(g) = super::constant_memory::constant_static(cx, def_id) {
        cx.statics.borrow_mut().insert(def_id, g);
        return g;
    }
    if let Some(g) = super::intrinsic::shared_static(cx, def_id) {
        cx.statics.borrow_mut().insert(def_id, g);
        return g;
    }
    let tcx = cx.tcx;
    if tcx.is_thread_local_static(def_id) {
        super::errors::thread_local_static(cx, def_id);
    }
    let ty = tcx.type_of(def_id).instantiate_identity().skip_normalization();
    if super::check::held_shared_array(tcx, ty, 0).is_some() {
        let error = DeviceError::SharedArrayInStatic { name: tcx.def_path_str(def_id), ty: ty.to_string() };
        super::errors::report_at(tcx, Some(tcx.def_span(def_id)), error);
        cx.reports.failed.set(true);
    }
    let Ok(alloc) = tcx.eval_static_initializer(def_id) else {
        super::errors::report(cx, DeviceError::StaticNotEvaluable { name: tcx.def_path_str(def_id) });
        let i8t = cx.type_i8();
        return cx.const_null(i8t);
    };
    let init = cx.const_alloc(alloc);
    let instance = Instance::mono(tcx, def_id);
    let name = super::context::ptx_safe_name(tcx.symbol_name(instance).name);
    let constant = alloc.inner().mutability.is_not();
    let g = cx.new_global(name, init, constant, alloc.inner().align.bytes(), "internal");
    cx.statics.borrow_mut().insert(def_id, g);
    g
}

pub fn define_static(cx: &CodegenCx<'_>, def_id: DefId) {
    get_static(cx, def_id);
}

impl<'tcx> ConstCodegenMethods for CodegenCx<'tcx> {
    fn const_null(&self, t: ir::Type) -> ir::Value {
        match self.type_data(t) {
            TypeData::Int(_)
            | TypeData::Ptr(_)
            | TypeData::Half
            | TypeData::Float
            | TypeData::Double
            | TypeData::Fp128 => {}
            _ => return self.const_value(t, "zeroinitializer".into(), None),
        }
        self.const_from_bits(t, 0)
    }
    fn const_undef(&self, t: ir::Type) -> ir::Value {
        self.const_value(t, "undef".into(), None)
    }
    fn const_poison(&self, t: ir::Type) -> ir::Value {
        self.const_value(t, "poison".into(), None)
    }
    fn const_bool(&self, val: bool) -> ir::Value {
        self.int_const(self.type_i1(), val as u128)
    }
    fn const_i8(&self, i: i8) -> ir::Value {
        self.int_const(self.type_i8(), i as u8 as u128)
    }
    fn const_i16(&self, i: i16) -> ir::Value {
        self.int_const(self.type_i16(), i as u16 as u128)
    }
    fn const_i32(&self, i: i32) -> ir::Value {
        self.int_const(self.type_i32(), i as u32 as u128)
    }
    fn const_i64(&self, i: i64) -> ir::Value {
        self.int_const(self.type_i64(), i as u64 as u128)
    }
    fn const_int(&self, t: ir::Type, i: i64) -> ir::Value {
        self.int_const(t, i as i128 as u128)
    }
    fn const_u8(&self, i: u8) -> ir::Value {
        self.int_const(self.type_i8(), i as u128)
    }
    fn const_u32(&self, i: u32) -> ir::Value {
        self.int_const(self.type_i32(), i as u128)
    }
    fn const_u64(&self, i: u64) -> ir::Value {
        self.int_const(self.type_i64(), i as u128)
    }
    fn const_u128(&self, i: u128) -> ir::Value {
        self.int_const(self.type_i128(), i)
    }
    fn const_usize(&self, i: u64) -> ir::Value {
        self.int_const(self.type_isize(), i as u128)
    }
    fn const_uint(&self, t: ir::Type, i: u64) -> ir::Value {
        self.int_const(t, i as u128)
    }
    fn const_uint_big(&self, t: ir::Type, u: u128) -> ir::Value {
        self.int_const(t, u)
    }
    fn const_real(&self, t: ir::Type, val: f64) -> ir::Value {
        let bits = match self.type_data(t) {
            TypeData::Half => return self.const_value(t, format!("0x{:016X}", val.to_bits()), None),
            TypeData::Float => (val as f32).to_bits() as u128,
            _ => val.to_bits() as u128,
        };
        self.float_const(t, bits)
    }
    fn const_str(&self, s: &str) -> (ir::Value, ir::Value) {
        let bytes = self.const_bytes(s.as_bytes());
        let name = self.module.borrow_mut().fresh_private("str");
        let g = self.new_global(name, bytes, true, 1, "private");
        (g, self.const_usize(s.len() as u64))
    }
    fn const_struct(&self, elts: &[ir::Value], packed: bool) -> ir::Value {
        let tys: Vec<ir::Type> = elts.iter().map(|&v| self.val_ty(v)).collect();
        let ty = self.type_struct(&tys, packed);
        let inner: Vec<String> = elts.iter().map(|&v| self.operand(v)).collect();
        let text = if packed { format!("<{{ {} }}>", inner.join(", ")) } else { format!("{{ {} }}", inner.join(", ")) };
        self.const_value(ty, text, None)
    }
    fn const_vector(&self, elts: &[ir::Value]) -> ir::Value {
        let elem = self.val_ty(elts[0]);
        let ty = self.type_vector(elem, elts.len() as u64);
        let inner: Vec<String> = elts.iter().map(|&v| self.operand(v)).collect();
        self.const_value(ty, format!("<{}>", inner.join(", ")), None)
    }
    fn const_to_opt_uint(&self, v: ir::Value) -> Option<u64> {
        self.const_to_opt_u128(v, false).and_then(|x| u64::try_from(x).ok())
    }
    fn const_to_opt_u128(&self, v: ir::Value, sign_ext: bool) -> Option<u128> {
        let m = self.module.borrow();
        let d = m.value_data(v);
        let ValueKind::Const { int: Some(bits) } = d.kind else { return None };
        let TypeData::Int(width) = *m.type_data(d.ty) else { return None };
        if sign_ext && width < 128 && bits >> (width - 1) & 1 == 1 {
            Some(bits | (u128::MAX << width))
        } else {
            Some(bits)
        }
    }
    fn scalar_to_backend(&self, cv: Scalar, layout: abi::Scalar, llty: ir::Type) -> ir::Value {
        let bitsize = if layout.is_bool() { 1 } else { layout.size(self).bits() };
        match cv {
            Scalar::Int(int) => {
                let bits = int.to_bits(layout.size(self));
                if self.type_kind(llty) == rustc_codegen_ssa::common::TypeKind::Integer {
                    let _ = bitsize;
                    self.int_const(llty, bits)
                } else {
                    self.const_from_bits(llty, bits)
                }
            }
            Scalar::Ptr(ptr, _) => {
                let (prov, offset) = ptr.prov_and_relative_offset();
                let base = match self.tcx.global_alloc(prov.alloc_id()) {
                    GlobalAlloc::Memory(alloc) if alloc.inner().len() == 0 => {
                        let addr = alloc.inner().align.bytes().wrapping_add(offset.bytes());
                        return self.int_or_ptr(addr as u128, layout, llty);
                    }
                    GlobalAlloc::Memory(alloc) => global_for_alloc(self, alloc),
                    GlobalAlloc::Function { instance, .. } => self.get_fn_addr(instance),
                    GlobalAlloc::VTable(ty, _) => {
                        super::errors::report(self, DeviceError::DynTrait { what: Some(ty.to_string()) });
                        return self.const_poison(llty);
                    }
                    GlobalAlloc::Static(def_id) => get_static(self, def_id),
                    GlobalAlloc::TypeId { .. } => {
                        return self.int_or_ptr(offset.bytes() as u128, layout, llty);
                    }
                };
                let ptr = self.const_ptr_byte_offset(base, offset);
                if matches!(layout.primitive(), Primitive::Pointer(_)) {
                    ptr
                } else {
                    let text = format!("ptrtoint ({} to {})", self.operand(ptr), self.type_str(llty));
                    self.const_value(llty, text, None)
                }
            }
        }
    }
    fn const_ptr_byte_offset(&self, base: ir::Value, offset: Size) -> ir::Value {
        if offset.bytes() == 0 {
            return base;
        }
        let ptr = self.val_ty(base);
        let text = format!("getelementptr inbounds (i8, {}, i64 {})", self.operand(base), offset.bytes());
        self.const_value(ptr, text, None)
    }
}

impl<'tcx> CodegenCx<'tcx> {
    fn int_or_ptr(&self, bits: u128, layout: abi::Scalar, llty: ir::Type) -> ir::Value {
        if matches!(layout.primitive(), Primitive::Pointer(_)) {
            self.const_from_bits(llty, bits)
        } else {
            self.int_const(llty, bits)
        }
    }
}

impl<'tcx> StaticCodegenMethods for CodegenCx<'tcx> {
    fn static_addr_of(
        &self,
        alloc: rustc_middle::mir::interpret::ConstAllocation<'_>,
        _kind: Option<&str>,
    ) -> ir::Value {
        // SAFETY of the lifetime extension: every allocation handed to us lives in this `tcx`.
        let alloc: rustc_middle::mir::interpret::ConstAllocation<'tcx> = unsafe { std::mem::transmute(alloc) };
        super::consts::global_for_alloc(self, alloc)
    }

    fn codegen_static(&mut self, def_id: DefId) {
        super::consts::define_static(self, def_id);
    }
}
