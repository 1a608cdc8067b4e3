//! `Builder`: one LLVM instruction per `BuilderMethods` call, appended as text to the current block.

use std::ops::Deref;

use rustc_abi::{self as abi, Align, HasDataLayout, Size, TargetDataLayout, WrappingRange};
use rustc_codegen_ssa::MemFlags;
use rustc_codegen_ssa::common::{AtomicRmwBinOp, IntPredicate, RealPredicate, SynchronizationScope};
use rustc_codegen_ssa::mir::operand::{OperandRef, OperandValue};
use rustc_codegen_ssa::mir::place::PlaceRef;
use rustc_codegen_ssa::traits::*;
use rustc_middle::middle::codegen_fn_attrs::CodegenFnAttrs;
use rustc_middle::ty::layout::{
    FnAbiError, FnAbiOfHelpers, FnAbiRequest, HasTyCtxt, HasTypingEnv, LayoutError, LayoutOfHelpers, TyAndLayout,
};
use rustc_middle::ty::{self, AtomicOrdering, Instance, Ty, TyCtxt};
use rustc_span::Span;
use rustc_target::callconv::FnAbi;
use rustc_target::spec::{HasTargetSpec, HasX86AbiOpt, Target, X86Abi};

use super::context::CodegenCx;
use super::errors::DeviceError;
use super::ir::{self, BlockData, TypeData, ValueKind, int_predicate, ordering, real_predicate};

pub struct Builder<'a, 'tcx> {
    pub cx: &'a CodegenCx<'tcx>,
    pub block: ir::Block,
    /// The source location of the instructions emitted now (`set_dbg_loc`).
    pub dbg_loc: Option<ir::Meta>,
}

impl<'a, 'tcx> Builder<'a, 'tcx> {
    /// Appends an instruction, under the current source location (or the function's first line
    /// when a function with debug information has none set).
    pub fn emit(&self, inst: String) {
        let mut m = self.cx.module.borrow_mut();
        let f = &mut m.funcs[self.block.func as usize];
        let loc = self.dbg_loc.or(f.prologue_loc);
        f.blocks[self.block.idx as usize].instrs.push((inst, loc));
    }

    /// Appends a debug record (`#dbg_declare(..)`), which names its location itself.
    pub fn emit_record(&self, record: String) {
        let mut m = self.cx.module.borrow_mut();
        m.funcs[self.block.func as usize].blocks[self.block.idx as usize].instrs.push((record, None));
    }

    /// Emits `%new = <rhs>` and returns `%new` with type `ty`.
    pub fn emit_value(&self, ty: ir::Type, rhs: String) -> ir::Value {
        let name = self.cx.module.borrow_mut().fresh_local();
        self.emit(format!("{name} = {rhs}"));
        self.cx.module.borrow_mut().value(ty, name, ValueKind::Local)
    }

    fn op(&self, v: ir::Value) -> String {
        self.cx.operand(v)
    }

    fn txt(&self, v: ir::Value) -> String {
        self.cx.value_text(v)
    }

    fn binop(&self, op: &str, lhs: ir::Value, rhs: ir::Value) -> ir::Value {
        let ty = self.cx.val_ty(lhs);
        self.emit_value(ty, format!("{op} {}, {}", self.op(lhs), self.txt(rhs)))
    }

    fn cast(&self, op: &str, val: ir::Value, dest: ir::Type) -> ir::Value {
        self.emit_value(dest, format!("{op} {} to {}", self.op(val), self.cx.type_str(dest)))
    }

    fn void(&self) -> ir::Value {
        let void = self.cx.type_void();
        self.cx.const_value(void, "undef".into(), None)
    }

    /// Calls an LLVM (or libdevice) function by name, declaring it on first use.
    pub fn call_named(&mut self, name: &str, ret: ir::Type, args: &[ir::Value]) -> ir::Value {
        let params: Vec<ir::Type> = args.iter().map(|&a| self.cx.val_ty(a)).collect();
        let sig = self.cx.type_func(&params, ret);
        let f = self.cx.declare_raw_fn(name, sig);
        self.call(sig, None, None, f, args, None, None)
    }

    /// Calls an overloaded LLVM intrinsic: `llvm.<base>.<suffix of each type>`.
    pub fn call_intrinsic(
        &mut self,
        base: &str,
        overloads: &[ir::Type],
        ret: ir::Type,
        args: &[ir::Value],
    ) -> ir::Value {
        let mut name = format!("llvm.{base}");
        for &t in overloads {
            name.push('.');
            name.push_str(&self.cx.module.borrow().mangle_type(t));
        }
        self.call_named(&name, ret, args)
    }
}

impl<'a, 'tcx> BuilderMethods<'a, 'tcx> for Builder<'a, 'tcx> {
    type CodegenCx = CodegenCx<'tcx>;

    fn build(cx: &'a CodegenCx<'tcx>, llbb: ir::Block) -> Self {
        Builder { cx, block: llbb, dbg_loc: None }
    }

    fn cx(&self) -> &CodegenCx<'tcx> {
        self.cx
    }

    fn llbb(&self) -> ir::Block {
        self.block
    }

    fn set_span(&mut self, span: Span) {
        self.cx.current_span.set(self.cx.user_span(span));
    }

    fn append_block(cx: &'a CodegenCx<'tcx>, llfn: ir::Value, name: &str) -> ir::Block {
        let func = cx.func_index(llfn);
        cx.ensure_params(llfn);
        let mut m = cx.module.borrow_mut();
        let f = &mut m.funcs[func as usize];
        let idx = f.blocks.len() as u32;
        let clean: String = name.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
        f.blocks.push(BlockData { label: format!("{clean}.{idx}"), instrs: vec![] });
        ir::Block { func, idx }
    }

    fn append_sibling_block(&mut self, name: &str) -> ir::Block {
        let f = self.cx.module.borrow().funcs[self.block.func as usize].value;
        Self::append_block(self.cx, f, name)
    }

    fn switch_to_block(&mut self, llbb: ir::Block) {
        self.block = llbb;
    }

    fn ret_void(&mut self) {
        self.emit("ret void".into());
    }

    fn ret(&mut self, v: ir::Value) {
        self.emit(format!("ret {}", self.op(v)));
    }

    fn br(&mut self, dest: ir::Block) {
        self.emit(format!("br label %{}", self.label(dest)));
    }

    fn cond_br(&mut self, cond: ir::Value, then_llbb: ir::Block, else_llbb: ir::Block) {
        super::bounds::note_cond_br(self, cond, then_llbb, else_llbb);
        self.emit(format!("br {}, label %{}, label %{}", self.op(cond), self.label(then_llbb), self.label(else_llbb)));
    }

    fn switch(&mut self, v: ir::Value, else_llbb: ir::Block, cases: impl ExactSizeIterator<Item = (u128, ir::Block)>) {
        let ty = self.cx.val_ty(v);
        let ty_s = self.cx.type_str(ty);
        let mut arms = String::new();
        for (val, bb) in cases {
            let c = self.cx.const_uint_big(ty, val);
            arms.push_str(&format!(" {ty_s} {}, label %{}", self.txt(c), self.label(bb)));
        }
        self.emit(format!("switch {}, label %{} [{arms} ]", self.op(v), self.label(else_llbb)));
    }

    fn invoke(
        &mut self,
        llty: ir::FnSig,
        fn_attrs: Option<&CodegenFnAttrs>,
        fn_abi: Option<&FnAbi<'tcx, Ty<'tcx>>>,
        llfn: ir::Value,
        args: &[ir::Value],
        then: ir::Block,
        _catch: ir::Block,
        funclet: Option<&()>,
        instance: Option<Instance<'tcx>>,
    ) -> ir::Value {
        // Device code never unwinds: an invoke is a call that always continues normally.
        let ret = self.call(llty, fn_attrs, fn_abi, llfn, args, funclet, instance);
        self.br(then);
        ret
    }

    fn unreachable(&mut self) {
        self.emit("unreachable".into());
    }

    fn add(&mut self, l: ir::Value, r: ir::Value) -> ir::Value {
        self.binop("add", l, r)
    }
    fn fadd(&mut self, l: ir::Value, r: ir::Value) -> ir::Value {
        self.binop(self.cx.fp_op("fadd"), l, r)
    }
    fn fadd_fast(&mut self, l: ir::Value, r: ir::Value) -> ir::Value {
        self.binop("fadd fast", l, r)
    }
    fn fadd_algebraic(&mut self, l: ir::Value, r: ir::Value) -> ir::Value {
        self.binop("fadd reassoc nsz arcp contract", l, r)
    }
    fn sub(&mut self, l: ir::Value, r: ir::Value) -> ir::Value {
        self.binop("sub", l, r)
    }
    fn fsub(&mut self, l: ir::Value, r: ir::Value) -> ir::Value {
        self.binop(self.cx.fp_op("fsub"), l, r)
    }
    fn fsub_fast(&mut self, l: ir::Value, r: ir::Value) -> ir::Value {
        self.binop("fsub fast", l, r)
    }
    fn fsub_algebraic(&mut self, l: ir::Value, r: ir::Value) -> ir::Value {
        self.binop("fsub reassoc nsz arcp contract", l, r)
    }
    fn mul(&mut self, l: ir::Value, r: ir::Value) -> ir::Value {
        self.binop("mul", l, r)
    }
    fn fmul(&mut self, l: ir::Value, r: ir::Value) -> ir::Value {
        self.binop(self.cx.fp_op("fmul"), l, r)
    }
    fn fmul_fast(&mut self, l: ir::Value, r: ir::Value) -> ir::Value {
        self.binop("fmul fast", l, r)
    }
    fn fmul_algebraic(&mut self, l: ir::Value, r: ir::Value) -> ir::Value {
        self.binop("fmul reassoc nsz arcp contract", l, r)
    }
    fn udiv(&mut self, l: ir::Value, r: ir::Value) -> ir::Value {
        self.binop("udiv", l, r)
    }
    fn exactudiv(&mut self, l: ir::Value, r: ir::Value) -> ir::Value {
        self.binop("udiv exact", l, r)
    }
    fn sdiv(&mut self, l: ir::Value, r: ir::Value) -> ir::Value {
        self.binop("sdiv", l, r)
    }
    fn exactsdiv(&mut self, l: ir::Value, r: ir::Value) -> ir::Value {
        self.binop("sdiv exact", l, r)
    }
    fn fdiv(&mut self, l: ir::Value, r: ir::Value) -> ir::Value {
        // Fast math: `afn` makes NVPTX emit `div.approx.f32` (f64 stays IEEE, as with nvcc).
        let f32 = matches!(self.cx.type_data(self.cx.val_ty(l)), TypeData::Float);
        self.binop(if self.cx.fast.get() && f32 { "fdiv afn arcp contract" } else { "fdiv" }, l, r)
    }
    fn fdiv_fast(&mut self, l: ir::Value, r: ir::Value) -> ir::Value {
        self.binop("fdiv fast", l, r)
    }
    fn fdiv_algebraic(&mut self, l: ir::Value, r: ir::Value) -> ir::Value {
        self.binop("fdiv reassoc nsz arcp contract", l, r)
    }
    fn urem(&mut self, l: ir::Value, r: ir::Value) -> ir::Value {
        self.binop("urem", l, r)
    }
    fn srem(&mut self, l: ir::Value, r: ir::Value) -> ir::Value {
        self.binop("srem", l, r)
    }
    fn frem(&mut self, l: ir::Value, r: ir::Value) -> ir::Value {
        // NVPTX lowers `frem` as `l - trunc(l / r) * r`: inexact, and wrong for infinities.
        // Rust's `%` is C's exact `fmod`, which libdevice has.
        let t = self.cx.val_ty(l);
        match self.cx.type_data(t) {
            TypeData::Double => self.call_named("__nv_fmod", t, &[l, r]),
            TypeData::Float => self.call_named("__nv_fmodf", t, &[l, r]),
            TypeData::Half => {
                // Exact in f32, and the remainder of two halves is a half.
                let f32t = self.cx.type_f32();
                let (a, b) = (self.fpext(l, f32t), self.fpext(r, f32t));
                let m = self.call_named("__nv_fmodf", f32t, &[a, b]);
                self.fptrunc(m, t)
            }
            _ => self.binop("frem", l, r),
        }
    }
    fn frem_fast(&mut self, l: ir::Value, r: ir::Value) -> ir::Value {
        self.binop("frem fast", l, r)
    }
    fn frem_algebraic(&mut self, l: ir::Value, r: ir::Value) -> ir::Value {
        self.binop("frem reassoc nsz arcp contract", l, r)
    }
    fn shl(&mut self, l: ir::Value, r: ir::Value) -> ir::Value {
        self.binop("shl", l, r)
    }
    fn lshr(&mut self, l: ir::Value, r: ir::Value) -> ir::Value {
        self.binop("lshr", l, r)
    }
    fn ashr(&mut self, l: ir::Value, r: ir::Value) -> ir::Value {
        self.binop("ashr", l, r)
    }
    fn unchecked_sadd(&mut self, l: ir::Value, r: ir::Value) -> ir::Value {
        self.binop("add nsw", l, r)
    }
    fn unchecked_uadd(&mut self, l: ir::Value, r: ir::Value) -> ir::Value {
        self.binop("add nuw", l, r)
    }
    fn unchecked_ssub(&mut self, l: ir::Value, r: ir::Value) -> ir::Value {
        self.binop("sub nsw", l, r)
    }
    fn unchecked_usub(&mut self, l: ir::Value, r: ir::Value) -> ir::Value {
        self.binop("sub nuw", l, r)
    }
    fn unchecked_smul(&mut self, l: ir::Value, r: ir::Value) -> ir::Value {
        self.binop("mul nsw", l, r)
    }
    fn unchecked_umul(&mut self, l: ir::Value, r: ir::Value) -> ir::Value {
        self.binop("mul nuw", l, r)
    }
    fn and(&mut self, l: ir::Value, r: ir::Value) -> ir::Value {
        self.binop("and", l, r)
    }
    fn or(&mut self, l: ir::Value, r: ir::Value) -> ir::Value {
        self.binop("or", l, r)
    }
    fn xor(&mut self, l: ir::Value, r: ir::Value) -> ir::Value {
        self.binop("xor", l, r)
    }

    fn neg(&mut self, v: ir::Value) -> ir::Value {
        let zero = self.cx.const_null(self.cx.val_ty(v));
        self.binop("sub", zero, v)
    }

    fn fneg(&mut self, v: ir::Value) -> ir::Value {
        let ty = self.cx.val_ty(v);
        self.emit_value(ty, format!("fneg {}", self.op(v)))
    }

    fn not(&mut self, v: ir::Value) -> ir::Value {
        let ty = self.cx.val_ty(v);
        let ones = self.cx.const_int(ty, -1);
        self.binop("xor", v, ones)
    }

    fn checked_binop(
        &mut self,
        oop: OverflowOp,
        ty: Ty<'tcx>,
        lhs: ir::Value,
        rhs: ir::Value,
    ) -> (ir::Value, ir::Value) {
        let (size, signed) = ty.int_size_and_signed(self.cx.tcx);
        if !signed {
            match oop {
                OverflowOp::Sub => {
                    let sub = self.sub(lhs, rhs);
                    let cmp = self.icmp(IntPredicate::IntULT, lhs, rhs);
                    return (sub, cmp);
                }
                OverflowOp::Add => {
                    let add = self.add(lhs, rhs);
                    let cmp = self.icmp(IntPredicate::IntULT, add, lhs);
                    return (add, cmp);
                }
                OverflowOp::Mul => {}
            }
        }
        let op = match oop {
            OverflowOp::Add => "add",
            OverflowOp::Sub => "sub",
            OverflowOp::Mul => "mul",
        };
        let int = self.cx.type_ix(size.bits());
        let pair = self.cx.type_struct(&[int, self.cx.type_i1()], false);
        let base = format!("{}{op}.with.overflow", if signed { 's' } else { 'u' });
        let res = self.call_intrinsic(&base, &[int], pair, &[lhs, rhs]);
        (self.extract_value(res, 0), self.extract_value(res, 1))
    }

    fn from_immediate(&mut self, val: ir::Value) -> ir::Value {
        if self.cx.val_ty(val) == self.cx.type_i1() {
            let i8t = self.cx.type_i8();
            self.zext(val, i8t)
        } else {
            val
        }
    }

    fn to_immediate_scalar(&mut self, val: ir::Value, scalar: abi::Scalar) -> ir::Value {
        if scalar.is_bool() {
            let i1 = self.cx.type_i1();
            return self.trunc(val, i1);
        }
        val
    }

    fn alloca(&mut self, size: Size, align: Align) -> ir::Value {
        let ptr = self.cx.type_ptr();
        let name = self.cx.module.borrow_mut().fresh_local();
        let inst = format!("{name} = alloca [{} x i8], align {}", size.bytes(), align.bytes());
        let mut m = self.cx.module.borrow_mut();
        m.funcs[self.block.func as usize].allocas.push(inst);
        m.value(ptr, name, ValueKind::Local)
    }

    fn alloca_with_ty(&mut self, layout: TyAndLayout<'tcx>) -> ir::Value {
        self.alloca(layout.size, layout.align.abi)
    }

    fn load(&mut self, ty: ir::Type, ptr: ir::Value, align: Align) -> ir::Value {
        let t = self.cx.type_str(ty);
        self.emit_value(ty, format!("load {t}, {}, align {}", self.op(ptr), align.bytes()))
    }

    fn volatile_load(&mut self, ty: ir::Type, ptr: ir::Value) -> ir::Value {
        let t = self.cx.type_str(ty);
        self.emit_value(ty, format!("load volatile {t}, {}", self.op(ptr)))
    }

    fn atomic_load(&mut self, ty: ir::Type, ptr: ir::Value, order: AtomicOrdering, size: Size) -> ir::Value {
        // Inline PTX rather than `load atomic`: see `core_load_store`.
        super::intrinsic::core_load_store(self, ty, ptr, None, order, size.bytes())
            .unwrap_or_else(|| rustc_middle::bug!("cuda-oxide: an atomic load gave no value"))
    }

    fn load_operand(&mut self, place: PlaceRef<'tcx, ir::Value>) -> OperandRef<'tcx, ir::Value> {
        if place.layout.is_zst() {
            return OperandRef::zero_sized(place.layout);
        }
        let val = if place.val.llextra.is_some() {
            OperandValue::Ref(place.val)
        } else if self.cx.is_backend_immediate(place.layout) {
            let llty = self.cx.backend_type(place.layout);
            let load = self.load(llty, place.val.llval, place.val.align);
            let load = match place.layout.backend_repr {
                abi::BackendRepr::Scalar(s) => self.to_immediate_scalar(load, s),
                _ => load,
            };
            OperandValue::Immediate(load)
        } else if let abi::BackendRepr::ScalarPair(a, b) = place.layout.backend_repr {
            let b_offset = a.size(self).align_to(b.align(self).abi);
            let a_ty = self.cx.scalar_pair_element_backend_type(place.layout, 0, false);
            let b_ty = self.cx.scalar_pair_element_backend_type(place.layout, 1, false);
            let a_val = self.load(a_ty, place.val.llval, place.val.align);
            let a_val = self.to_immediate_scalar(a_val, a);
            let off = self.cx.const_usize(b_offset.bytes());
            let b_ptr = self.inbounds_ptradd(place.val.llval, off);
            let b_val = self.load(b_ty, b_ptr, place.val.align.restrict_for_offset(b_offset));
            let b_val = self.to_immediate_scalar(b_val, b);
            OperandValue::Pair(a_val, b_val)
        } else {
            OperandValue::Ref(place.val)
        };
        OperandRef { val, layout: place.layout, move_annotation: None }
    }

    fn write_operand_repeatedly(
        &mut self,
        elem: OperandRef<'tcx, ir::Value>,
        count: u64,
        dest: PlaceRef<'tcx, ir::Value>,
    ) {
        // A counted loop through a stack slot; mem2reg turns it into a phi.
        let usize_ty = self.cx.type_isize();
        let slot = self.alloca(Size::from_bytes(8), Align::EIGHT);
        let zero = self.cx.const_usize(0);
        self.store(zero, slot, Align::EIGHT);
        let header = self.append_sibling_block("repeat_header");
        let body = self.append_sibling_block("repeat_body");
        let next = self.append_sibling_block("repeat_next");
        self.br(header);
        self.switch_to_block(header);
        let i = self.load(usize_ty, slot, Align::EIGHT);
        let n = self.cx.const_usize(count);
        let go = self.icmp(IntPredicate::IntULT, i, n);
        self.cond_br(go, body, next);
        self.switch_to_block(body);
        let place = dest.project_index(self, i);
        elem.val.store(self, place);
        let one = self.cx.const_usize(1);
        let i1 = self.unchecked_uadd(i, one);
        self.store(i1, slot, Align::EIGHT);
        self.br(header);
        self.switch_to_block(next);
    }

    fn range_metadata(&mut self, _load: ir::Value, _range: WrappingRange) {}
    fn nonnull_metadata(&mut self, _load: ir::Value) {}

    fn store(&mut self, val: ir::Value, ptr: ir::Value, align: Align) -> ir::Value {
        self.store_with_flags(val, ptr, align, MemFlags::empty())
    }

    fn store_with_flags(&mut self, val: ir::Value, ptr: ir::Value, align: Align, flags: MemFlags) -> ir::Value {
        let align = if flags.contains(MemFlags::UNALIGNED) { 1 } else { align.bytes() };
        let volatile = if flags.contains(MemFlags::VOLATILE) { "volatile " } else { "" };
        self.emit(format!("store {volatile}{}, {}, align {align}", self.op(val), self.op(ptr)));
        self.void()
    }

    fn atomic_store(&mut self, val: ir::Value, ptr: ir::Value, order: AtomicOrdering, size: Size) {
        let ty = self.cx.val_ty(val);
        super::intrinsic::core_load_store(self, ty, ptr, Some(val), order, size.bytes());
    }

    fn gep(&mut self, ty: ir::Type, ptr: ir::Value, indices: &[ir::Value]) -> ir::Value {
        self.gep_impl("", ty, ptr, indices)
    }

    fn inbounds_gep(&mut self, ty: ir::Type, ptr: ir::Value, indices: &[ir::Value]) -> ir::Value {
        self.gep_impl("inbounds ", ty, ptr, indices)
    }

    fn inbounds_nuw_gep(&mut self, ty: ir::Type, ptr: ir::Value, indices: &[ir::Value]) -> ir::Value {
        // codegen_ssa's `project_index`: the access a deferred bounds check guards.
        if let [index] = indices
            && let Some(p) = super::bounds::checked_index_gep(self, ty, ptr, *index)
        {
            return p;
        }
        self.gep_impl("inbounds ", ty, ptr, indices)
    }

    fn trunc(&mut self, v: ir::Value, t: ir::Type) -> ir::Value {
        self.cast("trunc", v, t)
    }
    fn sext(&mut self, v: ir::Value, t: ir::Type) -> ir::Value {
        self.cast("sext", v, t)
    }
    fn zext(&mut self, v: ir::Value, t: ir::Type) -> ir::Value {
        self.cast("zext", v, t)
    }
    fn fptoui(&mut self, v: ir::Value, t: ir::Type) -> ir::Value {
        self.cast("fptoui", v, t)
    }
    fn fptosi(&mut self, v: ir::Value, t: ir::Type) -> ir::Value {
        self.cast("fptosi", v, t)
    }
    fn uitofp(&mut self, v: ir::Value, t: ir::Type) -> ir::Value {
        if super::cast::is_i128(self, self.cx.val_ty(v)) {
            return super::cast::i128_to_float(self, v, t, false);
        }
        self.cast("uitofp", v, t)
    }
    fn sitofp(&mut self, v: ir::Value, t: ir::Type) -> ir::Value {
        if super::cast::is_i128(self, self.cx.val_ty(v)) {
            return super::cast::i128_to_float(self, v, t, true);
        }
        self.cast("sitofp", v, t)
    }
    fn fptrunc(&mut self, v: ir::Value, t: ir::Type) -> ir::Value {
        self.cast("fptrunc", v, t)
    }
    fn fpext(&mut self, v: ir::Value, t: ir::Type) -> ir::Value {
        self.cast("fpext", v, t)
    }
    fn ptrtoint(&mut self, v: ir::Value, t: ir::Type) -> ir::Value {
        self.cast("ptrtoint", v, t)
    }
    fn inttoptr(&mut self, v: ir::Value, t: ir::Type) -> ir::Value {
        self.cast("inttoptr", v, t)
    }

    fn fptoui_sat(&mut self, v: ir::Value, t: ir::Type) -> ir::Value {
        if super::cast::is_i128(self, t) {
            return super::cast::float_to_i128_sat(self, v, false);
        }
        let from = self.cx.val_ty(v);
        self.call_intrinsic("fptoui.sat", &[t, from], t, &[v])
    }

    fn fptosi_sat(&mut self, v: ir::Value, t: ir::Type) -> ir::Value {
        if super::cast::is_i128(self, t) {
            return super::cast::float_to_i128_sat(self, v, true);
        }
        let from = self.cx.val_ty(v);
        self.call_intrinsic("fptosi.sat", &[t, from], t, &[v])
    }

    fn bitcast(&mut self, v: ir::Value, t: ir::Type) -> ir::Value {
        if self.cx.val_ty(v) == t {
            return v;
        }
        self.cast("bitcast", v, t)
    }

    fn intcast(&mut self, v: ir::Value, t: ir::Type, is_signed: bool) -> ir::Value {
        let from = self.cx.int_width(self.cx.val_ty(v));
        let to = self.cx.int_width(t);
        match from.cmp(&to) {
            std::cmp::Ordering::Equal => v,
            std::cmp::Ordering::Greater => self.trunc(v, t),
            std::cmp::Ordering::Less if is_signed => self.sext(v, t),
            std::cmp::Ordering::Less => self.zext(v, t),
        }
    }

    fn pointercast(&mut self, v: ir::Value, t: ir::Type) -> ir::Value {
        if self.cx.val_ty(v) == t {
            return v;
        }
        self.cast("addrspacecast", v, t)
    }

    fn icmp(&mut self, op: IntPredicate, l: ir::Value, r: ir::Value) -> ir::Value {
        let i1 = self.cx.type_i1();
        self.emit_value(i1, format!("icmp {} {}, {}", int_predicate(op), self.op(l), self.txt(r)))
    }

    fn fcmp(&mut self, op: RealPredicate, l: ir::Value, r: ir::Value) -> ir::Value {
        let i1 = self.cx.type_i1();
        self.emit_value(i1, format!("fcmp {} {}, {}", real_predicate(op), self.op(l), self.txt(r)))
    }

    fn memcpy(
        &mut self,
        dst: ir::Value,
        dst_align: Align,
        src: ir::Value,
        src_align: Align,
        size: ir::Value,
        flags: MemFlags,
        _tt: Option<rustc_ast::expand::typetree::FncTree>,
    ) {
        if !flags.contains(MemFlags::VOLATILE)
            && let Some(n) = self.cx.const_to_opt_uint(size)
            && self.vector_copy(dst, dst_align.min(src_align), src, n)
        {
            return;
        }
        self.mem_transfer("memcpy", dst, dst_align, src, src_align, size, flags);
    }

    fn memmove(
        &mut self,
        dst: ir::Value,
        dst_align: Align,
        src: ir::Value,
        src_align: Align,
        size: ir::Value,
        flags: MemFlags,
    ) {
        self.mem_transfer("memmove", dst, dst_align, src, src_align, size, flags);
    }

    fn memset(&mut self, ptr: ir::Value, fill: ir::Value, size: ir::Value, align: Align, flags: MemFlags) {
        let size_ty = self.cx.val_ty(size);
        let name = format!("llvm.memset.p0.{}", self.cx.module.borrow().mangle_type(size_ty));
        self.declare_intrinsic_sig(&name, &[self.cx.type_ptr(), self.cx.type_i8(), size_ty, self.cx.type_i1()]);
        let volatile = flags.contains(MemFlags::VOLATILE);
        self.emit(format!(
            "call void @{name}(ptr align {} {}, {}, {}, i1 {volatile})",
            align.bytes(),
            self.txt(ptr),
            self.op(fill),
            self.op(size)
        ));
    }

    fn select(&mut self, cond: ir::Value, then_val: ir::Value, else_val: ir::Value) -> ir::Value {
        let ty = self.cx.val_ty(then_val);
        self.emit_value(ty, format!("select {}, {}, {}", self.op(cond), self.op(then_val), self.op(else_val)))
    }

    fn va_arg(&mut self, _list: ir::Value, ty: ir::Type) -> ir::Value {
        super::errors::report(self.cx, DeviceError::CVariadicArgument);
        self.cx.const_poison(ty)
    }

    fn extract_element(&mut self, vec: ir::Value, idx: ir::Value) -> ir::Value {
        let elem = self.cx.element_type(self.cx.val_ty(vec));
        self.emit_value(elem, format!("extractelement {}, {}", self.op(vec), self.op(idx)))
    }

    fn vector_splat(&mut self, num_elts: usize, elt: ir::Value) -> ir::Value {
        let ety = self.cx.val_ty(elt);
        let vty = self.cx.type_vector(ety, num_elts as u64);
        let vs = self.cx.type_str(vty);
        let one = self.emit_value(vty, format!("insertelement {vs} poison, {}, i32 0", self.op(elt)));
        self.emit_value(vty, format!("shufflevector {}, {vs} poison, <{num_elts} x i32> zeroinitializer", self.op(one)))
    }

    fn extract_value(&mut self, agg: ir::Value, idx: u64) -> ir::Value {
        let aty = self.cx.val_ty(agg);
        let ety = match self.cx.type_data(aty) {
            TypeData::Struct(fields, _) => fields[idx as usize],
            TypeData::Array(e, _) => e,
            other => super::context::bug_no_span(&format!("extract_value from {other:?}")),
        };
        self.emit_value(ety, format!("extractvalue {}, {idx}", self.op(agg)))
    }

    fn insert_value(&mut self, agg: ir::Value, elt: ir::Value, idx: u64) -> ir::Value {
        let aty = self.cx.val_ty(agg);
        self.emit_value(aty, format!("insertvalue {}, {}, {idx}", self.op(agg), self.op(elt)))
    }

    fn set_personality_fn(&mut self, _personality: ir::Value) {}

    fn cleanup_landing_pad(&mut self, _pers_fn: ir::Value) -> (ir::Value, ir::Value) {
        // Only reached from unwind edges, which device code never takes.
        let ptr = self.cx.type_ptr();
        let i32t = self.cx.type_i32();
        (self.cx.const_poison(ptr), self.cx.const_poison(i32t))
    }

    fn filter_landing_pad(&mut self, _pers_fn: ir::Value) {}

    fn resume(&mut self, _exn0: ir::Value, _exn1: ir::Value) {
        self.emit("unreachable".into());
    }

    fn cleanup_pad(&mut self, _parent: Option<ir::Value>, _args: &[ir::Value]) {}

    fn cleanup_ret(&mut self, _funclet: &(), _unwind: Option<ir::Block>) {
        self.emit("unreachable".into());
    }

    fn catch_pad(&mut self, _parent: ir::Value, _args: &[ir::Value]) {}

    fn catch_switch(
        &mut self,
        _parent: Option<ir::Value>,
        _unwind: Option<ir::Block>,
        _handlers: &[ir::Block],
    ) -> ir::Value {
        self.emit("unreachable".into());
        self.void()
    }

    fn get_funclet_cleanuppad(&self, _funclet: &()) -> ir::Value {
        self.void()
    }

    fn atomic_cmpxchg(
        &mut self,
        dst: ir::Value,
        cmp: ir::Value,
        src: ir::Value,
        order: AtomicOrdering,
        failure_order: AtomicOrdering,
        weak: bool,
    ) -> (ir::Value, ir::Value) {
        let ty = self.cx.val_ty(cmp);
        let pair = self.cx.type_struct(&[ty, self.cx.type_i1()], false);
        let weak = if weak { "weak " } else { "" };
        let res = self.emit_value(
            pair,
            format!(
                "cmpxchg {weak}{}, {}, {} {} {}",
                self.op(dst),
                self.op(cmp),
                self.op(src),
                ordering(order),
                ordering(failure_order)
            ),
        );
        (self.extract_value(res, 0), self.extract_value(res, 1))
    }

    fn atomic_rmw(
        &mut self,
        op: AtomicRmwBinOp,
        dst: ir::Value,
        src: ir::Value,
        order: AtomicOrdering,
        _ret_ptr: bool,
    ) -> ir::Value {
        // LLVM's NVPTX backend drops the ordering and scope of `atomicrmw`: see `core_rmw`.
        super::intrinsic::core_rmw(self, op, dst, src, order)
    }

    fn atomic_fence(&mut self, order: AtomicOrdering, scope: SynchronizationScope) {
        let scope = match scope {
            SynchronizationScope::SingleThread => "syncscope(\"singlethread\") ",
            SynchronizationScope::CrossThread => "",
        };
        self.emit(format!("fence {scope}{}", ordering(order)));
    }

    fn set_invariant_load(&mut self, _load: ir::Value) {}

    fn lifetime_start(&mut self, _ptr: ir::Value, _size: Size) {}

    fn lifetime_end(&mut self, _ptr: ir::Value, _size: Size) {}

    fn call(
        &mut self,
        llty: ir::FnSig,
        _caller_attrs: Option<&CodegenFnAttrs>,
        _fn_abi: Option<&FnAbi<'tcx, Ty<'tcx>>>,
        fn_val: ir::Value,
        args: &[ir::Value],
        _funclet: Option<&()>,
        callee_instance: Option<Instance<'tcx>>,
    ) -> ir::Value {
        super::bounds::note_call(self, callee_instance, args);
        if super::loop_hints::is_marker(self, callee_instance) {
            return self.void();
        }
        let sig = self.cx.sig_of(llty);
        let params: Vec<String> = sig.params.iter().map(|&t| self.cx.type_str(t)).collect();
        let mut fnty = format!("{} ({}", self.cx.type_str(sig.ret), params.join(", "));
        if sig.variadic {
            fnty.push_str(if params.is_empty() { "..." } else { ", ..." });
        }
        fnty.push(')');
        let args: Vec<String> = args.iter().map(|&a| self.op(a)).collect();
        let call = format!("call {fnty} {}({})", self.txt(fn_val), args.join(", "));
        if sig.ret == self.cx.type_void() {
            self.emit(call);
            self.void()
        } else {
            self.emit_value(sig.ret, call)
        }
    }

    fn tail_call(
        &mut self,
        llty: ir::FnSig,
        caller_attrs: Option<&CodegenFnAttrs>,
        fn_abi: &FnAbi<'tcx, Ty<'tcx>>,
        llfn: ir::Value,
        args: &[ir::Value],
        funclet: Option<&()>,
        callee_instance: Option<Instance<'tcx>>,
    ) {
        let ret = self.call(llty, caller_attrs, Some(fn_abi), llfn, args, funclet, callee_instance);
        if self.cx.sig_of(llty).ret == self.cx.type_void() {
            self.ret_void();
        } else {
            self.ret(ret);
        }
    }

    fn apply_attrs_to_cleanup_callsite(&mut self, _llret: ir::Value) {}
}

impl<'a, 'tcx> Builder<'a, 'tcx> {
    fn label(&self, b: ir::Block) -> String {
        self.cx.module.borrow().funcs[b.func as usize].blocks[b.idx as usize].label.clone()
    }

    fn gep_impl(&mut self, flags: &str, ty: ir::Type, ptr: ir::Value, indices: &[ir::Value]) -> ir::Value {
        let idx: Vec<String> = indices.iter().map(|&i| self.op(i)).collect();
        let pty = self.cx.val_ty(ptr);
        self.emit_value(
            pty,
            format!("getelementptr {flags}{}, {}, {}", self.cx.type_str(ty), self.op(ptr), idx.join(", ")),
        )
    }

    fn declare_intrinsic_sig(&self, name: &str, params: &[ir::Type]) {
        let void = self.cx.type_void();
        let sig = self.cx.type_func(params, void);
        self.cx.declare_raw_fn(name, sig);
    }

    /// Copies `size` bytes as 128-bit vector loads, then stores, when both sides are 16-byte
    /// aligned and the size is 16 to 64 bytes in 16-byte steps; `false` (nothing emitted)
    /// otherwise. NVPTX expands `llvm.memcpy` into 8-byte moves, after the pass that would fuse
    /// them, so copying a `float4`-like struct would never become the one `ld.global.v4` nvcc
    /// emits for it. All loads come before the stores, so overlapping places copy correctly.
    fn vector_copy(&mut self, dst: ir::Value, align: Align, src: ir::Value, size: u64) -> bool {
        const CHUNK: u64 = 16;
        if align.bytes() < CHUNK || size == 0 || !size.is_multiple_of(CHUNK) || size > 4 * CHUNK {
            return false;
        }
        let i8t = self.cx.type_i8();
        let v4 = self.cx.type_vector(self.cx.type_i32(), 4);
        let chunk_align = Align::from_bytes(CHUNK).expect("16 is a power of two");
        let at = |bx: &mut Self, base: ir::Value, k: u64| {
            if k == 0 {
                base
            } else {
                let offset = bx.cx.const_usize(k * CHUNK);
                bx.inbounds_gep(i8t, base, &[offset])
            }
        };
        let chunks = size / CHUNK;
        let values: Vec<ir::Value> = (0..chunks)
            .map(|k| {
                let p = at(self, src, k);
                self.load(v4, p, chunk_align)
            })
            .collect();
        for (k, v) in (0..chunks).zip(values) {
            let p = at(self, dst, k);
            self.store(v, p, chunk_align);
        }
        true
    }

    #[allow(clippy::too_many_arguments)]
    fn mem_transfer(
        &mut self,
        which: &str,
        dst: ir::Value,
        dst_align: Align,
        src: ir::Value,
        src_align: Align,
        size: ir::Value,
        flags: MemFlags,
    ) {
        let size_ty = self.cx.val_ty(size);
        let name = format!("llvm.{which}.p0.p0.{}", self.cx.module.borrow().mangle_type(size_ty));
        let ptr = self.cx.type_ptr();
        self.declare_intrinsic_sig(&name, &[ptr, ptr, size_ty, self.cx.type_i1()]);
        let volatile = flags.contains(MemFlags::VOLATILE);
        self.emit(format!(
            "call void @{name}(ptr align {} {}, ptr align {} {}, {}, i1 {volatile})",
            dst_align.bytes(),
            self.txt(dst),
            src_align.bytes(),
            self.txt(src),
            self.op(size)
        ));
    }
}

// --- What a `Builder` needs besides `BuilderMethods`: layouts, ABIs, statics, coverage ---------------

impl<'a, 'tcx> Deref for Builder<'a, 'tcx> {
    type Target = CodegenCx<'tcx>;
    fn deref(&self) -> &CodegenCx<'tcx> {
        self.cx
    }
}

impl<'a, 'tcx> BackendTypes for Builder<'a, 'tcx> {
    type Function = ir::Value;
    type BasicBlock = ir::Block;
    type Funclet = ();
    type Value = ir::Value;
    type Type = ir::Type;
    type FunctionSignature = ir::FnSig;
    type DIScope = super::debuginfo::DiScope;
    type DILocation = ir::Meta;
    type DIVariable = Option<ir::Meta>;
}

impl<'a, 'tcx> HasTyCtxt<'tcx> for Builder<'a, 'tcx> {
    fn tcx(&self) -> TyCtxt<'tcx> {
        self.cx.tcx
    }
}
impl<'a, 'tcx> HasDataLayout for Builder<'a, 'tcx> {
    fn data_layout(&self) -> &TargetDataLayout {
        self.cx.data_layout()
    }
}
impl<'a, 'tcx> HasTargetSpec for Builder<'a, 'tcx> {
    fn target_spec(&self) -> &Target {
        self.cx.target_spec()
    }
}
impl<'a, 'tcx> HasX86AbiOpt for Builder<'a, 'tcx> {
    fn x86_abi_opt(&self) -> X86Abi {
        self.cx.x86_abi_opt()
    }
}
impl<'a, 'tcx> HasTypingEnv<'tcx> for Builder<'a, 'tcx> {
    fn typing_env(&self) -> ty::TypingEnv<'tcx> {
        self.cx.typing_env()
    }
}
impl<'a, 'tcx> LayoutOfHelpers<'tcx> for Builder<'a, 'tcx> {
    fn handle_layout_err(&self, err: LayoutError<'tcx>, span: Span, ty: Ty<'tcx>) -> ! {
        self.cx.handle_layout_err(err, span, ty)
    }
}
impl<'a, 'tcx> FnAbiOfHelpers<'tcx> for Builder<'a, 'tcx> {
    fn handle_fn_abi_err(&self, err: FnAbiError<'tcx>, span: Span, req: FnAbiRequest<'tcx>) -> ! {
        self.cx.handle_fn_abi_err(err, span, req)
    }
}

impl<'a, 'tcx> CoverageInfoBuilderMethods<'tcx> for Builder<'a, 'tcx> {
    fn add_coverage(&mut self, _: Instance<'tcx>, _: &rustc_middle::mir::coverage::CoverageKind) {}
}

impl<'a, 'tcx> AbiBuilderMethods for Builder<'a, 'tcx> {
    fn get_param(&mut self, index: usize) -> ir::Value {
        self.cx.module.borrow().funcs[self.block.func as usize].params[index]
    }
}

impl<'a, 'tcx> StaticBuilderMethods for Builder<'a, 'tcx> {
    fn get_static(&mut self, def_id: rustc_hir::def_id::DefId) -> ir::Value {
        super::consts::get_static(self.cx, def_id)
    }
}
