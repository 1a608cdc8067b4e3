//! What a `Builder` needs besides `BuilderMethods`: the layout/ABI plumbing traits, the no-op
//! debuginfo and coverage hooks, statics and (rejected) inline asm, and LLVM's spellings of
//! orderings and predicates.

use std::ops::Deref;

use rustc_abi::{HasDataLayout, Size, TargetDataLayout};
use rustc_codegen_ssa::common::{IntPredicate, RealPredicate};
use rustc_codegen_ssa::traits::*;
use rustc_middle::ty::layout::{
    FnAbiError, FnAbiOfHelpers, FnAbiRequest, HasTyCtxt, HasTypingEnv, LayoutError, LayoutOfHelpers,
};
use rustc_middle::ty::{self, AtomicOrdering, Instance, Ty, TyCtxt};
use rustc_span::Span;
use rustc_target::spec::{HasTargetSpec, HasX86AbiOpt, Target, X86Abi};

use super::builder::Builder;
use super::context::CodegenCx;
use super::ir;

pub(super) fn ordering(o: AtomicOrdering) -> &'static str {
    match o {
        AtomicOrdering::Relaxed => "monotonic",
        AtomicOrdering::Release => "release",
        AtomicOrdering::Acquire => "acquire",
        AtomicOrdering::AcqRel => "acq_rel",
        AtomicOrdering::SeqCst => "seq_cst",
    }
}

pub(super) fn int_predicate(p: IntPredicate) -> &'static str {
    use IntPredicate::*;
    match p {
        IntEQ => "eq",
        IntNE => "ne",
        IntUGT => "ugt",
        IntUGE => "uge",
        IntULT => "ult",
        IntULE => "ule",
        IntSGT => "sgt",
        IntSGE => "sge",
        IntSLT => "slt",
        IntSLE => "sle",
    }
}

pub(super) fn real_predicate(p: RealPredicate) -> &'static str {
    use RealPredicate::*;
    match p {
        RealPredicateFalse => "false",
        RealOEQ => "oeq",
        RealOGT => "ogt",
        RealOGE => "oge",
        RealOLT => "olt",
        RealOLE => "ole",
        RealONE => "one",
        RealORD => "ord",
        RealUNO => "uno",
        RealUEQ => "ueq",
        RealUGT => "ugt",
        RealUGE => "uge",
        RealULT => "ult",
        RealULE => "ule",
        RealUNE => "une",
        RealPredicateTrue => "true",
    }
}

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
    type DIScope = ();
    type DILocation = ();
    type DIVariable = ();
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

impl<'a, 'tcx> DebugInfoBuilderMethods<'tcx> for Builder<'a, 'tcx> {
    fn dbg_var_addr(&mut self, _: (), _: (), _: ir::Value, _: Size, _: &[Size], _: &Option<std::ops::Range<Size>>) {}
    fn dbg_var_value(&mut self, _: (), _: (), _: ir::Value, _: Size, _: &[Size], _: &Option<std::ops::Range<Size>>) {}
    fn set_dbg_loc(&mut self, _: ()) {}
    fn clear_dbg_loc(&mut self) {}
    fn insert_reference_to_gdb_debug_scripts_section_global(&mut self) {}
    fn set_var_name(&mut self, _: ir::Value, _: &str) {}
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

impl<'a, 'tcx> AsmBuilderMethods<'tcx> for Builder<'a, 'tcx> {
    fn codegen_inline_asm(
        &mut self,
        _template: &[rustc_ast::InlineAsmTemplatePiece],
        _operands: &[InlineAsmOperandRef<'tcx, Self>],
        _options: rustc_ast::InlineAsmOptions,
        line_spans: &[Span],
        _instance: Instance<'_>,
        _dest: Option<ir::Block>,
        _catch: Option<(ir::Block, Option<&()>)>,
    ) {
        if let Some(&span) = line_spans.first() {
            self.cx.current_span.set(span);
        }
        super::errors::unsupported(
            self.cx,
            "inline `asm!` is not supported in device code: it is written for the host target, and the device compiler does not accept PTX `asm!` either",
            Some("use the device intrinsics in `cuda_device` (thread and block registers, barriers, atomics, warp operations) instead"),
        );
        self.emit("unreachable".into());
    }
}
