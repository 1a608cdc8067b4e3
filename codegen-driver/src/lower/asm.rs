//! Inline and global assembly: both are written for the host target, so device code that reaches
//! them gets an error at the `asm!`.

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
        super::errors::report(self.cx, DeviceError::InlineAsm);
        self.emit("unreachable".into());
    }
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
