//! Inline and global assembly: both are written for the host target, so device code that reaches
//! them gets an error at the `asm!` (`ptx_asm!` does not come here: `intrinsic/inline_ptx.rs`).
//! One exception: `libm`'s x86 square roots, which are `llvm.sqrt`.

use rustc_codegen_ssa::traits::*;
use rustc_middle::ty::Instance;
use rustc_span::{DUMMY_SP, Span};

use super::builder::Builder;
use super::context::{CodegenCx, ptx_safe_name};
use super::errors::DeviceError;
use super::ir;

impl<'a, 'tcx> AsmBuilderMethods<'tcx> for Builder<'a, 'tcx> {
    fn codegen_inline_asm(
        &mut self,
        template: &[rustc_ast::InlineAsmTemplatePiece],
        operands: &[InlineAsmOperandRef<'tcx, Self>],
        _options: rustc_ast::InlineAsmOptions,
        line_spans: &[Span],
        _instance: Instance<'_>,
        _dest: Option<ir::Block>,
        _catch: Option<(ir::Block, Option<&()>)>,
    ) {
        if x86_sqrt(self, template, operands) {
            return;
        }
        if let Some(&span) = line_spans.first() {
            self.cx.current_span.set(span);
        }
        super::errors::report(self.cx, DeviceError::InlineAsm);
        self.emit("unreachable".into());
    }
}

/// The `libm` crate's square roots on x86 (`sqrtss {x}, {x}` / `sqrtsd`, one `inout(xmm_reg)`),
/// which rustc inlines into device code before the device compiler sees the call (see
/// `intrinsic::define_libm_crate_entry`): the instruction is the IEEE square root, which is
/// `llvm.sqrt`. Any other `asm!` stays an error.
fn x86_sqrt<'tcx>(
    bx: &mut Builder<'_, 'tcx>,
    template: &[rustc_ast::InlineAsmTemplatePiece],
    operands: &[InlineAsmOperandRef<'tcx, Builder<'_, 'tcx>>],
) -> bool {
    let text: String = template.iter().map(|p| p.to_string()).collect();
    let ty = match text.trim() {
        "sqrtss {0}, {0}" => bx.cx.type_f32(),
        "sqrtsd {0}, {0}" => bx.cx.type_f64(),
        _ => return false,
    };
    let [InlineAsmOperandRef::InOut { in_value, out_place: Some(place), .. }] = operands else { return false };
    let x = in_value.immediate();
    if bx.cx.val_ty(x) != ty {
        return false;
    }
    let root = bx.call_intrinsic("sqrt", &[ty], ty, &[x]);
    rustc_codegen_ssa::mir::operand::OperandValue::Immediate(root).store(bx, *place);
    true
}

impl<'tcx> AsmCodegenMethods<'tcx> for CodegenCx<'tcx> {
    fn codegen_global_asm(
        &mut self,
        _template: &[rustc_ast::InlineAsmTemplatePiece],
        _operands: &[GlobalAsmOperandRef<'tcx>],
        _options: rustc_ast::InlineAsmOptions,
        line_spans: &[Span],
    ) {
        let span = line_spans.first().copied().unwrap_or(DUMMY_SP);
        super::errors::report_at(self.tcx, Some(span), DeviceError::GlobalAsm);
        self.reports.failed.set(true);
    }

    fn mangled_name(&self, instance: Instance<'tcx>) -> String {
        ptx_safe_name(self.tcx.symbol_name(instance).name)
    }
}
