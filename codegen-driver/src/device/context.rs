//! `CodegenCx`: the device module being built, the worklist of instances to define, and the
//! context-level traits of rustc_codegen_ssa (misc, statics, debuginfo, asm).

use std::cell::{Cell, RefCell};

use rustc_abi::{HasDataLayout, TargetDataLayout};
use rustc_codegen_ssa::traits::*;
use rustc_data_structures::fx::FxHashMap;
use rustc_hir::attrs::Linkage;
use rustc_hir::def_id::DefId;
use rustc_middle::mono::Visibility;
use rustc_middle::ty::layout::{
    FnAbiError, FnAbiOfHelpers, FnAbiRequest, HasTyCtxt, HasTypingEnv, LayoutError,
    LayoutOfHelpers,
};
use rustc_middle::ty::{self, Instance, Ty, TyCtxt};
use rustc_session::Session;
use rustc_span::{DUMMY_SP, Span};
use rustc_target::callconv::FnAbi;
use rustc_target::spec::{HasTargetSpec, HasX86AbiOpt, Target, X86Abi};

use super::ir::{self, FuncData, Module, TypeData, ValueKind};

/// Why an instance is being compiled: who called it and from where (for "called by" notes).
#[derive(Clone, Copy)]
pub struct Reached<'tcx> {
    pub caller: Option<Instance<'tcx>>,
    pub span: Span,
}

pub struct CodegenCx<'tcx> {
    pub tcx: TyCtxt<'tcx>,
    /// Whether the user's `a*b+c` may become one `fma` (`--no-fmad` turns it off).
    pub fmad: bool,
    pub module: RefCell<Module>,
    pub instances: RefCell<FxHashMap<Instance<'tcx>, ir::Value>>,
    pub statics: RefCell<FxHashMap<DefId, ir::Value>>,
    pub const_allocs: RefCell<FxHashMap<rustc_middle::mir::interpret::ConstAllocation<'tcx>, ir::Value>>,
    pub queue: RefCell<Vec<Instance<'tcx>>>,
    pub reached: RefCell<FxHashMap<Instance<'tcx>, Reached<'tcx>>>,
    /// The instance whose body is being generated, and the span of the statement at hand.
    pub current: Cell<Option<Instance<'tcx>>>,
    pub current_span: Cell<Span>,
    pub vtables: RefCell<FxHashMap<(Ty<'tcx>, Option<ty::ExistentialTraitRef<'tcx>>), ir::Value>>,
    /// Set once an unsupported construct was reported; the device build then stops.
    pub failed: Cell<bool>,
    /// Problems already reported, so one cause is not reported once per library frame.
    pub deferred: RefCell<Vec<Instance<'tcx>>>,
    pub inlined_spans: RefCell<FxHashMap<Span, Span>>,
    /// Instances with no device body, left as declarations (symbol name, instance).
    pub unavailable: RefCell<Vec<(String, Instance<'tcx>)>>,
    pub reporting_deferred: Cell<bool>,
    pub reported: RefCell<rustc_data_structures::fx::FxHashSet<(&'static str, Option<DefId>, Option<DefId>)>>,
}

impl<'tcx> CodegenCx<'tcx> {
    pub fn new(tcx: TyCtxt<'tcx>, fmad: bool) -> Self {
        CodegenCx {
            tcx,
            fmad,
            module: RefCell::new(Module::default()),
            instances: Default::default(),
            statics: Default::default(),
            const_allocs: Default::default(),
            queue: Default::default(),
            reached: Default::default(),
            current: Cell::new(None),
            current_span: Cell::new(DUMMY_SP),
            vtables: Default::default(),
            failed: Cell::new(false),
            reported: Default::default(),
            deferred: Default::default(),
            inlined_spans: Default::default(),
            unavailable: Default::default(),
            reporting_deferred: Cell::new(false),
        }
    }

    pub fn ty(&self, data: TypeData) -> ir::Type {
        self.module.borrow_mut().ty(data)
    }

    /// A copy of the type's description, so no borrow of the module outlives the call.
    /// The user's float add/sub/mul, marked `contract` when fusing is allowed: only the user's
    /// arithmetic may fuse, never libdevice's, whose algorithms count on separate roundings.
    pub fn fp_op(&self, op: &'static str) -> &'static str {
        match (self.fmad, op) {
            (true, "fadd") => "fadd contract",
            (true, "fsub") => "fsub contract",
            (true, "fmul") => "fmul contract",
            _ => op,
        }
    }

    pub fn type_data(&self, t: ir::Type) -> TypeData {
        self.module.borrow().type_data(t).clone()
    }

    pub fn type_str(&self, t: ir::Type) -> String {
        self.module.borrow().type_str(t)
    }

    pub fn operand(&self, v: ir::Value) -> String {
        self.module.borrow().operand(v)
    }

    pub fn value_text(&self, v: ir::Value) -> String {
        self.module.borrow().value_data(v).text.clone()
    }

    pub fn const_value(&self, ty: ir::Type, text: String, int: Option<u128>) -> ir::Value {
        self.module.borrow_mut().value(ty, text, ValueKind::Const { int })
    }

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
        let params = tys
            .into_iter()
            .enumerate()
            .map(|(i, t)| m.value(t, format!("%p{i}"), ValueKind::Local))
            .collect();
        m.funcs[idx].params = params;
    }

    /// Records who reached `instance`, for diagnostics, and queues it for definition.
    fn enqueue(&self, instance: Instance<'tcx>) {
        self.reached
            .borrow_mut()
            .entry(instance)
            .or_insert(Reached { caller: self.current.get(), span: self.current_span.get() });
        self.queue.borrow_mut().push(instance);
    }

    /// Maps the spans of MIR-inlined code in `def_id`'s body to the call site in that body, so
    /// diagnostics point at the user's call rather than into the library it inlined.
    pub fn set_inlined_spans(&self, tcx: TyCtxt<'tcx>, def_id: DefId) {
        let mut map = self.inlined_spans.borrow_mut();
        map.clear();
        if !tcx.is_mir_available(def_id) {
            return;
        }
        let body = tcx.optimized_mir(def_id);
        let callsite = |mut scope: rustc_middle::mir::SourceScope| {
            let mut site = None;
            while let Some(data) = body.source_scopes.get(scope) {
                if let Some((_, span)) = data.inlined {
                    site = Some(span);
                }
                match data.inlined_parent_scope.or(data.parent_scope) {
                    Some(parent) => scope = parent,
                    None => break,
                }
            }
            site
        };
        for block in body.basic_blocks.iter() {
            let infos = block.statements.iter().map(|s| s.source_info).chain(block.terminator.as_ref().map(|t| t.source_info));
            for info in infos {
                if let Some(site) = callsite(info.scope) {
                    map.insert(info.span, site);
                }
            }
        }
    }

    /// The span to blame for `span`: its inlining call site if it came from an inlined body.
    pub fn user_span(&self, span: Span) -> Span {
        self.inlined_spans.borrow().get(&span).copied().unwrap_or(span)
    }
}

/// An internal invariant broke without a span to point at.
pub fn bug_no_span(msg: &str) -> ! {
    rustc_middle::bug!("cuda-oxide device codegen: {msg}")
}

/// PTX identifiers allow `[A-Za-z0-9_$]`; rustc's symbols may contain `.`.
pub fn ptx_safe_name(symbol: &str) -> String {
    symbol.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '$' { c } else { '_' }).collect()
}

impl<'tcx> BackendTypes for CodegenCx<'tcx> {
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

impl<'tcx> HasTyCtxt<'tcx> for CodegenCx<'tcx> {
    fn tcx(&self) -> TyCtxt<'tcx> {
        self.tcx
    }
}

impl<'tcx> HasDataLayout for CodegenCx<'tcx> {
    fn data_layout(&self) -> &TargetDataLayout {
        &self.tcx.data_layout
    }
}

impl<'tcx> HasTargetSpec for CodegenCx<'tcx> {
    fn target_spec(&self) -> &Target {
        &self.tcx.sess.target
    }
}

impl<'tcx> HasX86AbiOpt for CodegenCx<'tcx> {
    fn x86_abi_opt(&self) -> X86Abi {
        X86Abi { regparm: None, reg_struct_return: false }
    }
}

impl<'tcx> HasTypingEnv<'tcx> for CodegenCx<'tcx> {
    fn typing_env(&self) -> ty::TypingEnv<'tcx> {
        ty::TypingEnv::fully_monomorphized()
    }
}

impl<'tcx> LayoutOfHelpers<'tcx> for CodegenCx<'tcx> {
    fn handle_layout_err(&self, err: LayoutError<'tcx>, span: Span, ty: Ty<'tcx>) -> ! {
        self.tcx.dcx().span_fatal(span, format!("cannot compute the layout of `{ty}` for the device: {err}"))
    }
}

impl<'tcx> FnAbiOfHelpers<'tcx> for CodegenCx<'tcx> {
    fn handle_fn_abi_err(&self, err: FnAbiError<'tcx>, span: Span, req: FnAbiRequest<'tcx>) -> ! {
        self.tcx.dcx().span_fatal(span, format!("cannot compute the device ABI of {req:?}: {err:?}"))
    }
}

impl<'tcx> MiscCodegenMethods<'tcx> for CodegenCx<'tcx> {
    fn vtables(
        &self,
    ) -> &RefCell<FxHashMap<(Ty<'tcx>, Option<ty::ExistentialTraitRef<'tcx>>), ir::Value>> {
        &self.vtables
    }

    fn get_fn(&self, instance: Instance<'tcx>) -> ir::Value {
        if let Some(caller) = self.current.get()
            && caller != instance
            && let ty::InstanceKind::Item(def_id) = instance.def
            && super::collect::is_kernel(self.tcx, def_id)
        {
            // Like CUDA's `__global__`: a kernel is an entry point, launched from the host only.
            super::errors::unsupported(
                self,
                &format!("the #[kernel] `{}` cannot be called from device code", self.tcx.def_path_str(def_id)),
                Some("move the shared code into an ordinary function (mark it #[device] if you like) and call that from both kernels"),
            );
        }
        if let Some(&f) = self.instances.borrow().get(&instance) {
            return f;
        }
        let fn_abi = self.fn_abi_of_instance(instance, ty::List::empty());
        let symbol = self.tcx.symbol_name(instance).name;
        let f = super::abi::declare_fn(self, &ptx_safe_name(symbol), fn_abi);
        let idx = self.func_index(f) as usize;
        self.module.borrow_mut().funcs[idx].linkage = "internal";
        self.instances.borrow_mut().insert(instance, f);
        self.enqueue(instance);
        f
    }

    fn get_fn_addr(&self, instance: Instance<'tcx>) -> ir::Value {
        self.get_fn(instance)
    }

    fn eh_personality(&self) -> ir::Value {
        // Device code never unwinds (panics trap), but codegen_ssa asks for a personality
        // whenever MIR has cleanup blocks. Those blocks end up unreachable.
        let i32t = self.ty(TypeData::Int(32));
        let sig = self.module.borrow_mut().sig(ir::SigData { params: vec![], ret: i32t, variadic: true });
        self.declare_raw_fn("__oxide_no_personality", sig)
    }

    fn sess(&self) -> &Session {
        self.tcx.sess
    }

    fn set_frame_pointer_type(&self, _llfn: ir::Value) {}

    fn apply_target_cpu_attr(&self, _llfn: ir::Value) {}

    fn declare_c_main(&self, _fn_type: ir::FnSig) -> Option<ir::Value> {
        None
    }
}

impl<'tcx> PreDefineCodegenMethods<'tcx> for CodegenCx<'tcx> {
    fn predefine_static(&mut self, _: DefId, _: Linkage, _: Visibility, _: &str) {}
    fn predefine_fn(&mut self, _: Instance<'tcx>, _: Linkage, _: Visibility, _: &str) {}
}

impl<'tcx> StaticCodegenMethods for CodegenCx<'tcx> {
    fn static_addr_of(
        &self,
        alloc: rustc_middle::mir::interpret::ConstAllocation<'_>,
        _kind: Option<&str>,
    ) -> ir::Value {
        // SAFETY of the lifetime extension: every allocation handed to us lives in this `tcx`.
        let alloc: rustc_middle::mir::interpret::ConstAllocation<'tcx> =
            unsafe { std::mem::transmute(alloc) };
        super::consts::global_for_alloc(self, alloc)
    }

    fn codegen_static(&mut self, def_id: DefId) {
        super::consts::define_static(self, def_id);
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
        self.tcx.dcx().span_err(span, "`global_asm!` is not supported in device code");
        self.failed.set(true);
    }

    fn mangled_name(&self, instance: Instance<'tcx>) -> String {
        ptx_safe_name(self.tcx.symbol_name(instance).name)
    }
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

impl<'tcx> TypeMembershipCodegenMethods<'tcx> for CodegenCx<'tcx> {}
