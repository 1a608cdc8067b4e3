//! Debug information: the hooks rustc_codegen_ssa calls while lowering a function. The device
//! module carries no debug information yet, so they record nothing.

use rustc_abi::Size;
use rustc_codegen_ssa::traits::*;
use rustc_middle::ty::{self, Instance, Ty};
use rustc_span::Span;
use rustc_target::callconv::FnAbi;

use super::builder::Builder;
use super::context::CodegenCx;
use super::ir;

impl<'a, 'tcx> DebugInfoBuilderMethods<'tcx> for Builder<'a, 'tcx> {
    fn dbg_var_addr(&mut self, _: (), _: (), _: ir::Value, _: Size, _: &[Size], _: &Option<std::ops::Range<Size>>) {}
    fn dbg_var_value(&mut self, _: (), _: (), _: ir::Value, _: Size, _: &[Size], _: &Option<std::ops::Range<Size>>) {}
    fn set_dbg_loc(&mut self, _: ()) {}
    fn clear_dbg_loc(&mut self) {}
    fn insert_reference_to_gdb_debug_scripts_section_global(&mut self) {}
    fn set_var_name(&mut self, _: ir::Value, _: &str) {}
}

impl<'tcx> DebugInfoCodegenMethods<'tcx> for CodegenCx<'tcx> {
    fn create_vtable_debuginfo(&self, _: Ty<'tcx>, _: Option<ty::ExistentialTraitRef<'tcx>>, _: ir::Value) {}

    fn create_function_debug_context(
        &self,
        _instance: Instance<'tcx>,
        _fn_abi: &FnAbi<'tcx, Ty<'tcx>>,
        _llfn: ir::Value,
        _mir: &rustc_middle::mir::Body<'tcx>,
    ) -> Option<rustc_codegen_ssa::mir::debuginfo::FunctionDebugContext<'tcx, (), ()>> {
        None
    }

    fn dbg_scope_fn(&self, _: Instance<'tcx>, _: &FnAbi<'tcx, Ty<'tcx>>, _: Option<ir::Value>) {}

    fn dbg_loc(&self, _: (), _: Option<()>, _: Span) {}

    fn extend_scope_to_file(&self, _: (), _: &rustc_span::SourceFile) {}

    fn debuginfo_finalize(&self) {}

    fn create_dbg_var(
        &self,
        _: rustc_span::Symbol,
        _: Ty<'tcx>,
        _: (),
        _: rustc_codegen_ssa::mir::debuginfo::VariableKind,
        _: Span,
    ) {
    }
}
