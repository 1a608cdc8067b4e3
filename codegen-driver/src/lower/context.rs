//! `CodegenCx`: the device module being built, the worklist of instances to define, and the
//! context-level traits of rustc_codegen_ssa (misc, statics, debuginfo, asm).

use std::cell::{Cell, RefCell};

use rustc_abi::{HasDataLayout, TargetDataLayout};
use rustc_codegen_ssa::traits::*;
use rustc_data_structures::fx::FxHashMap;
use rustc_hir::def_id::DefId;
use rustc_middle::ty::layout::{
    FnAbiError, FnAbiOfHelpers, FnAbiRequest, HasTyCtxt, HasTypingEnv, LayoutError, LayoutOfHelpers,
};
use rustc_middle::ty::{self, Instance, Ty, TyCtxt};
use rustc_session::Session;
use rustc_span::{DUMMY_SP, Span};
use rustc_target::spec::{HasTargetSpec, HasX86AbiOpt, Target, X86Abi};

use super::errors::Reports;
use super::ir::{self, Module, TypeData, ValueKind};

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
    /// The functions declared so far, per instance and math mode (`true`: fast math).
    pub instances: RefCell<FxHashMap<(Instance<'tcx>, bool), ir::Value>>,
    pub statics: RefCell<FxHashMap<DefId, ir::Value>>,
    pub const_allocs: RefCell<FxHashMap<rustc_middle::mir::interpret::ConstAllocation<'tcx>, ir::Value>>,
    pub queue: RefCell<Vec<(Instance<'tcx>, bool)>>,
    pub reached: RefCell<FxHashMap<Instance<'tcx>, Reached<'tcx>>>,
    /// The instance whose body is being generated, and the span of the statement at hand.
    pub current: Cell<Option<Instance<'tcx>>>,
    pub current_span: Cell<Span>,
    pub vtables: RefCell<FxHashMap<(Ty<'tcx>, Option<ty::ExistentialTraitRef<'tcx>>), ir::Value>>,
    /// Maps spans of MIR-inlined code to their call site in the body being lowered.
    pub inlined_spans: RefCell<FxHashMap<Span, Span>>,
    /// Instances with no device body, left as declarations (symbol name, instance).
    pub unavailable: RefCell<Vec<(String, Instance<'tcx>)>>,
    /// The lowest PTX ISA the intrinsics used so far need (`ArchNeed::min_ptx_isa`); the PTX is
    /// emitted at this ISA or the arch's own lowest, whichever is higher.
    pub ptx_isa_floor: std::cell::Cell<(u32, u32)>,
    /// The errors reported so far (see `errors.rs`).
    pub reports: Reports<'tcx>,
    /// Debug information state, unless the build asked for none (`debuginfo.rs`).
    pub debug: Option<super::debuginfo::DebugCx<'tcx>>,
    /// Device functions exported to CUDA C++, with their C names (`interop.rs`).
    pub exports: RefCell<FxHashMap<Instance<'tcx>, String>>,
    /// CUDA C++ functions the device code calls, left as declarations for the device linker.
    pub imports: RefCell<Vec<(Instance<'tcx>, oxide_contract::manifest::DeviceFunction)>>,
    /// Bounds checks poison the access and defer the trap (`bounds.rs`); off for debug builds.
    pub deferred_bounds: bool,
    /// Whether the module holds a `ptx_asm!` statement (`intrinsic/inline_ptx.rs`): its PTX then
    /// targets at least [`oxide_contract::limits::INLINE_PTX_ISA`].
    pub user_ptx: Cell<bool>,
    /// `--fast-math`: every function uses approximate division, square root and transcendentals.
    pub fast_math: bool,
    /// Whether the function being lowered uses fast math: the whole build's `--fast-math`, or it
    /// is (reached from) a function marked `#[fast_math]`. Such functions are compiled a second
    /// time, under another symbol, when IEEE code calls them too.
    pub fast: Cell<bool>,
    /// The asserts of the function being lowered whose bounds check may still be deferred.
    pub pending_asserts: RefCell<Vec<super::bounds::PendingAssert>>,
    /// The deferred bounds checks of the function being lowered.
    pub deferred_checks: RefCell<Vec<super::bounds::DeferredCheck>>,
    /// The archs this build targets (instructions some of them lack are errors at the call).
    pub archs: Vec<oxide_contract::arch::Arch>,
    /// Plain archs of the build whose device code becomes their arch-specific variant because a
    /// kernel uses an instruction only that variant has (`sm_90` → `sm_90a` for wgmma), with
    /// the first such instruction: see `pipeline::arch_upgrades`.
    pub arch_upgrades: RefCell<Vec<(oxide_contract::arch::Arch, oxide_contract::arch::Arch, String)>>,
}

impl<'tcx> CodegenCx<'tcx> {
    pub fn new(tcx: TyCtxt<'tcx>, fmad: bool, debuginfo: oxide_contract::config::DeviceDebugInfo) -> Self {
        let mut module = Module::default();
        let debug = super::debuginfo::DebugCx::new(tcx, &mut module, debuginfo);
        CodegenCx {
            tcx,
            fmad,
            module: RefCell::new(module),
            instances: Default::default(),
            statics: Default::default(),
            const_allocs: Default::default(),
            queue: Default::default(),
            reached: Default::default(),
            current: Cell::new(None),
            current_span: Cell::new(DUMMY_SP),
            vtables: Default::default(),
            inlined_spans: Default::default(),
            unavailable: Default::default(),
            ptx_isa_floor: Default::default(),
            reports: Default::default(),
            debug,
            exports: Default::default(),
            imports: Default::default(),
            deferred_bounds: true,
            user_ptx: Cell::new(false),
            archs: Vec::new(),
            arch_upgrades: Default::default(),
            fast_math: false,
            fast: Cell::new(false),
            pending_asserts: Default::default(),
            deferred_checks: Default::default(),
        }
    }

    pub fn ty(&self, data: TypeData) -> ir::Type {
        self.module.borrow_mut().ty(data)
    }

    /// The user's float add/sub/mul, marked `contract` when fusing is allowed: only the user's
    /// arithmetic may fuse, never libdevice's, whose algorithms count on separate roundings.
    /// Fast math contracts too, as nvcc's `--use_fast_math` implies `-fmad=true`.
    pub fn fp_op(&self, op: &'static str) -> &'static str {
        match (self.fmad || self.fast.get(), op) {
            (true, "fadd") => "fadd contract",
            (true, "fsub") => "fsub contract",
            (true, "fmul") => "fmul contract",
            _ => op,
        }
    }

    /// A copy of the type's description, so no borrow of the module outlives the call.
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
            let infos =
                block.statements.iter().map(|s| s.source_info).chain(block.terminator.as_ref().map(|t| t.source_info));
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
    type DIScope = super::debuginfo::DiScope;
    type DILocation = ir::Meta;
    type DIVariable = Option<ir::Meta>;
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
    fn vtables(&self) -> &RefCell<FxHashMap<(Ty<'tcx>, Option<ty::ExistentialTraitRef<'tcx>>), ir::Value>> {
        &self.vtables
    }

    fn get_fn(&self, instance: Instance<'tcx>) -> ir::Value {
        self.declare_instance(instance)
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

impl<'tcx> TypeMembershipCodegenMethods<'tcx> for CodegenCx<'tcx> {}
