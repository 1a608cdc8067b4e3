//! Debug information, written as LLVM metadata text: rustc_codegen_ssa calls these hooks while it
//! lowers a function (rustc_codegen_llvm's `debuginfo/` does the same through LLVM's DIBuilder).
//!
//! `Lines` (the default) gives every instruction a `DILocation` under a `DebugDirectivesOnly`
//! compile unit: `llc` writes `.file`/`.loc` and no DWARF sections, so `ptxas -O3 -lineinfo` keeps
//! the optimised machine code and adds a line table (nvcc's `-lineinfo`). `Full` adds variables
//! and their types (`types.rs`) for `cuda-gdb` on unoptimised code (nvcc's `-G`).
//!
//! Functions of the crates in [`NO_DEBUGINFO_CRATES`] (core, cuda_device) get no debug
//! information: inlined into user code, their instructions take the caller's location (LLVM's
//! inliner does this for callees without a `DISubprogram`, and `CallSite` scopes below do it for
//! MIR inlining), so reports name the user's line, not a line of `core::ptr`.

mod types;

use std::cell::RefCell;
use std::fmt::Write;
use std::ops::Range;

use oxide_contract::config::{DeviceDebugInfo, NO_DEBUGINFO_CRATES};
use rustc_abi::Size;
use rustc_codegen_ssa::debuginfo::type_names;
use rustc_codegen_ssa::mir::debuginfo::{DebugScope, FunctionDebugContext, VariableKind};
use rustc_codegen_ssa::traits::*;
use rustc_data_structures::fx::FxHashMap;
use rustc_hir::def_id::DefId;
use rustc_index::IndexVec;
use rustc_index::bit_set::DenseBitSet;
use rustc_middle::mir::{self, SourceScope};
use rustc_middle::ty::layout::FnAbiOf;
use rustc_middle::ty::{self, Instance, Ty, TyCtxt, Unnormalized};
use rustc_session::config::DebugInfo;
use rustc_span::{BytePos, Pos, RemapPathScopeComponents, SourceFile, SourceFileAndLine, Span, hygiene};
use rustc_target::callconv::FnAbi;

use super::builder::Builder;
use super::context::CodegenCx;
use super::ir::{self, Meta};

/// A debug scope as rustc_codegen_ssa passes it around.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum DiScope {
    /// A `DISubprogram`, `DILexicalBlock` or `DILexicalBlockFile`.
    Node(Meta),
    /// Code of a crate without debug information, inlined by MIR: every location in it is the
    /// location of the call.
    CallSite(Meta),
}

/// The module-wide debug information state.
pub struct DebugCx<'tcx> {
    pub level: DeviceDebugInfo,
    unit: Meta,
    /// `!DISubroutineType(types: !{null})`, shared by every subprogram.
    fn_type: Meta,
    files: RefCell<FxHashMap<String, Meta>>,
    namespaces: RefCell<FxHashMap<DefId, Meta>>,
    types: RefCell<FxHashMap<Ty<'tcx>, Meta>>,
}

impl<'tcx> DebugCx<'tcx> {
    /// The compile unit and module flags; `None` for [`DeviceDebugInfo::None`].
    pub fn new(tcx: TyCtxt<'tcx>, module: &mut ir::Module, level: DeviceDebugInfo) -> Option<DebugCx<'tcx>> {
        let (kind, optimized) = match level {
            DeviceDebugInfo::None => return None,
            DeviceDebugInfo::Lines => ("DebugDirectivesOnly", true),
            DeviceDebugInfo::Full => ("FullDebug", false),
        };
        let (dir, name) = match tcx.sess.local_crate_source_file() {
            Some(file) => {
                let (dir, name) = file.embeddable_name(RemapPathScopeComponents::DEBUGINFO);
                (dir.to_string_lossy().into_owned(), name.to_string_lossy().into_owned())
            }
            None => (String::new(), tcx.crate_name(rustc_hir::def_id::LOCAL_CRATE).to_string()),
        };
        let file = module.meta(file_node(&name, &dir));
        let producer = format!("cuda-oxide ({})", tcx.sess.cfg_version);
        let unit = module.meta_distinct(format!(
            "distinct !DICompileUnit(language: DW_LANG_Rust, file: {file}, producer: {}, isOptimized: {optimized}, \
             runtimeVersion: 0, emissionKind: {kind}, splitDebugInlining: false, nameTableKind: None)",
            meta_string(&producer)
        ));
        // ptxas reads DWARF 2 (clang's CUDA device code uses the same).
        let dwarf = module.meta("!{i32 7, !\"Dwarf Version\", i32 2}".into());
        let version = module.meta("!{i32 2, !\"Debug Info Version\", i32 3}".into());
        module.named_meta.push(format!("!llvm.dbg.cu = !{{{unit}}}"));
        module.named_meta.push(format!("!llvm.module.flags = !{{{dwarf}, {version}}}"));
        let fn_type = module.meta("!DISubroutineType(types: !{null})".into());
        let files = RefCell::new(FxHashMap::from_iter([(format!("{dir}\0{name}"), file)]));
        Some(DebugCx { level, unit, fn_type, files, namespaces: Default::default(), types: Default::default() })
    }
}

/// Whether `def_id`'s crate gets no debug information (see the module docs).
fn without_debuginfo(tcx: TyCtxt<'_>, def_id: DefId) -> bool {
    NO_DEBUGINFO_CRATES.contains(&tcx.crate_name(def_id.krate).as_str())
}

/// A string as LLVM metadata spells it.
pub(super) fn meta_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for b in s.bytes() {
        if b.is_ascii_graphic() && b != b'"' && b != b'\\' || b == b' ' {
            out.push(b as char);
        } else {
            let _ = write!(out, "\\{b:02X}");
        }
    }
    out.push('"');
    out
}

fn file_node(name: &str, dir: &str) -> String {
    format!("!DIFile(filename: {}, directory: {})", meta_string(name), meta_string(dir))
}

/// A source position as debug information gives it: file, 1-based line and column.
struct DebugLoc {
    file: std::sync::Arc<SourceFile>,
    line: u32,
    col: u32,
}

impl<'tcx> CodegenCx<'tcx> {
    fn debug(&self) -> Option<&DebugCx<'tcx>> {
        self.debug.as_ref()
    }

    fn meta(&self, body: String) -> Meta {
        self.module.borrow_mut().meta(body)
    }

    fn lookup_debug_loc(&self, pos: BytePos) -> DebugLoc {
        match self.tcx.sess.source_map().lookup_line(pos) {
            Ok(SourceFileAndLine { sf: file, line }) => {
                let line_pos = file.lines()[line];
                let col = (file.relative_position(pos) - line_pos).to_u32() + 1;
                DebugLoc { file, line: line as u32 + 1, col }
            }
            Err(file) => DebugLoc { file, line: 0, col: 0 },
        }
    }

    /// The `DIFile` of a source file: the path relative to the compiler's working directory when
    /// it is below it (the directory is given separately), else the path as it is.
    fn file_meta(&self, file: &SourceFile) -> Meta {
        let (dir, name) = match &file.name {
            rustc_span::FileName::Real(real) => {
                let (wd, name) = real.embeddable_name(RemapPathScopeComponents::DEBUGINFO);
                match name.strip_prefix(wd) {
                    Ok(rel) => (wd.to_string_lossy().into_owned(), rel.to_string_lossy().into_owned()),
                    Err(_) => (String::new(), name.to_string_lossy().into_owned()),
                }
            }
            other => (String::new(), other.display(RemapPathScopeComponents::DEBUGINFO).to_string()),
        };
        let key = format!("{dir}\0{name}");
        if let Some(&m) = self.debug().and_then(|d| d.files.borrow().get(&key).copied()).as_ref() {
            return m;
        }
        let m = self.meta(file_node(&name, &dir));
        if let Some(d) = self.debug() {
            d.files.borrow_mut().insert(key, m);
        }
        m
    }

    /// The `DINamespace` chain of an item, from its crate down (rustc_codegen_llvm's
    /// `item_namespace`), so a debugger names functions by their Rust path.
    fn namespace(&self, def_id: DefId) -> Meta {
        let debug = self.debug().expect("namespaces only with debug information");
        if let Some(&m) = debug.namespaces.borrow().get(&def_id) {
            return m;
        }
        let key = self.tcx.def_key(def_id);
        let parent = key.parent.map(|index| self.namespace(DefId { krate: def_id.krate, index }));
        let mut name = String::new();
        type_names::push_item_name(self.tcx, def_id, false, &mut name);
        let scope = parent.map_or_else(|| "null".to_string(), |p| p.to_string());
        let m = self.meta(format!("!DINamespace(name: {}, scope: {scope})", meta_string(&name)));
        debug.namespaces.borrow_mut().insert(def_id, m);
        m
    }

    /// A function's name for debug information: its item name with generic arguments
    /// (`map<f32>`), as rustc_codegen_llvm spells it.
    fn debug_fn_name(&self, instance: Instance<'tcx>) -> String {
        let tcx = self.tcx;
        let def_id = instance.def_id();
        let mut name = String::with_capacity(64);
        type_names::push_item_name(tcx, def_id, false, &mut name);
        // A closure's arguments extend its enclosing function's; name only the function's.
        let generics = tcx.generics_of(tcx.typeck_root_def_id(def_id));
        let args = instance.args.truncate_to(tcx, generics);
        let args = tcx.normalize_erasing_regions(ty::TypingEnv::fully_monomorphized(), Unnormalized::new_wip(args));
        type_names::push_generic_args(tcx, args, &mut name);
        name
    }

    /// A `DISubprogram` for `def_id`'s source, named `name` in its module's namespace.
    fn subprogram(&self, def_id: DefId, name: &str, linkage_name: &str) -> Meta {
        let debug = self.debug().expect("subprograms only with debug information");
        let span = hygiene::walk_chain_collapsed(self.tcx.def_span(def_id), rustc_span::DUMMY_SP);
        let loc = self.lookup_debug_loc(span.lo());
        let file = self.file_meta(&loc.file);
        let scope = self.tcx.opt_parent(def_id).map_or_else(|| file, |p| self.namespace(p));
        let optimized = if debug.level == DeviceDebugInfo::Full { "" } else { " | DISPFlagOptimized" };
        let linkage = if linkage_name.is_empty() || linkage_name == name {
            String::new()
        } else {
            format!("linkageName: {}, ", meta_string(linkage_name))
        };
        self.module.borrow_mut().meta_distinct(format!(
            "distinct !DISubprogram(name: {}, {linkage}scope: {scope}, file: {file}, line: {line}, type: {ty}, \
             scopeLine: {line}, flags: DIFlagPrototyped, spFlags: DISPFlagDefinition{optimized}, unit: {unit})",
            meta_string(name),
            line = loc.line,
            ty = debug.fn_type,
            unit = debug.unit,
        ))
    }

    /// Gives a defined function its `DISubprogram` and prologue location (see `FuncData`).
    fn attach_subprogram(&self, llfn: ir::Value, sp: Meta, def_id: DefId) {
        let span = hygiene::walk_chain_collapsed(self.tcx.def_span(def_id), rustc_span::DUMMY_SP);
        let line = self.lookup_debug_loc(span.lo()).line;
        let loc = self.meta(format!("!DILocation(line: {line}, scope: {sp})"));
        let idx = self.func_index(llfn) as usize;
        let mut m = self.module.borrow_mut();
        m.funcs[idx].subprogram = Some(sp);
        m.funcs[idx].prologue_loc = Some(loc);
    }

    /// The kernel entry `entry` (a wrapper that calls the kernel's Rust body) as a subprogram of
    /// its own, named like the kernel: once `opt` inlines the body into it, the body's lines sit
    /// in a function with debug information (else `llc` drops them), and in `cuda-gdb` the
    /// entry is the outer frame.
    pub fn debug_kernel_entry(&self, entry: ir::Value, instance: Instance<'tcx>) {
        if self.debug().is_none() {
            return;
        }
        let name = self.debug_fn_name(instance);
        let symbol = self.module.borrow().funcs[self.func_index(entry) as usize].name.clone();
        let sp = self.subprogram(instance.def_id(), &name, &symbol);
        self.attach_subprogram(entry, sp, instance.def_id());
    }

    /// Whether `rustc_codegen_ssa` will ask for variables: full device debug information, and a
    /// host profile with full debug information too (rustc_codegen_ssa reads the latter).
    fn wants_variables(&self) -> bool {
        self.debug().is_some_and(|d| d.level == DeviceDebugInfo::Full)
            && self.tcx.sess.opts.debuginfo == DebugInfo::Full
    }
}

impl<'a, 'tcx> DebugInfoBuilderMethods<'tcx> for Builder<'a, 'tcx> {
    fn dbg_var_addr(
        &mut self,
        var: Option<Meta>,
        loc: Meta,
        addr: ir::Value,
        direct_offset: Size,
        indirect_offsets: &[Size],
        fragment: &Option<Range<Size>>,
    ) {
        let Some(var) = var else { return };
        let expr = expression(direct_offset, indirect_offsets, fragment);
        let addr = self.cx.operand(addr);
        self.emit_record(format!("#dbg_declare({addr}, {var}, {expr}, {loc})"));
    }

    fn dbg_var_value(
        &mut self,
        var: Option<Meta>,
        loc: Meta,
        value: ir::Value,
        direct_offset: Size,
        indirect_offsets: &[Size],
        fragment: &Option<Range<Size>>,
    ) {
        let Some(var) = var else { return };
        let expr = expression(direct_offset, indirect_offsets, fragment);
        let value = self.cx.operand(value);
        self.emit_record(format!("#dbg_value({value}, {var}, {expr}, {loc})"));
    }

    fn set_dbg_loc(&mut self, loc: Meta) {
        self.dbg_loc = Some(loc);
    }

    fn clear_dbg_loc(&mut self) {
        self.dbg_loc = None;
    }

    fn insert_reference_to_gdb_debug_scripts_section_global(&mut self) {}

    fn set_var_name(&mut self, _: ir::Value, _: &str) {}
}

/// The `DIExpression` that finds a variable from its address (rustc_codegen_llvm's
/// `dbg_var_addr`): offsets, one dereference per indirection, and the fragment it covers.
fn expression(direct_offset: Size, indirect_offsets: &[Size], fragment: &Option<Range<Size>>) -> String {
    let mut ops = Vec::new();
    if direct_offset.bytes() > 0 {
        ops.push(format!("DW_OP_plus_uconst, {}", direct_offset.bytes()));
    }
    for offset in indirect_offsets {
        ops.push("DW_OP_deref".to_string());
        if offset.bytes() > 0 {
            ops.push(format!("DW_OP_plus_uconst, {}", offset.bytes()));
        }
    }
    if let Some(f) = fragment {
        ops.push(format!("DW_OP_LLVM_fragment, {}, {}", f.start.bits(), (f.end - f.start).bits()));
    }
    format!("!DIExpression({})", ops.join(", "))
}

impl<'tcx> DebugInfoCodegenMethods<'tcx> for CodegenCx<'tcx> {
    fn create_vtable_debuginfo(&self, _: Ty<'tcx>, _: Option<ty::ExistentialTraitRef<'tcx>>, _: ir::Value) {}

    fn create_function_debug_context(
        &self,
        instance: Instance<'tcx>,
        fn_abi: &FnAbi<'tcx, Ty<'tcx>>,
        llfn: ir::Value,
        mir: &mir::Body<'tcx>,
    ) -> Option<FunctionDebugContext<'tcx, DiScope, Meta>> {
        self.debug()?;
        if without_debuginfo(self.tcx, instance.def_id()) {
            return None;
        }
        let root = self.dbg_scope_fn(instance, fn_abi, Some(llfn));
        let empty =
            DebugScope { dbg_scope: root, inlined_at: None, file_start_pos: BytePos(0), file_end_pos: BytePos(0) };
        let mut context = FunctionDebugContext {
            scopes: IndexVec::from_elem(empty, &mir.source_scopes),
            inlined_function_scopes: Default::default(),
        };
        // Scopes with variables get lexical blocks of their own (rustc_codegen_llvm's rule).
        let variables = self.wants_variables().then(|| {
            let mut vars = DenseBitSet::new_empty(mir.source_scopes.len());
            for var in &mir.var_debug_info {
                vars.insert(var.source_info.scope);
            }
            vars
        });
        let mut done = DenseBitSet::new_empty(mir.source_scopes.len());
        for scope in mir.source_scopes.indices() {
            self.make_mir_scope(instance, mir, variables.as_ref(), &mut context, &mut done, scope);
        }
        Some(context)
    }

    fn dbg_scope_fn(
        &self,
        instance: Instance<'tcx>,
        _fn_abi: &FnAbi<'tcx, Ty<'tcx>>,
        llfn: Option<ir::Value>,
    ) -> DiScope {
        let name = self.debug_fn_name(instance);
        let symbol = match llfn {
            Some(f) => self.module.borrow().funcs[self.func_index(f) as usize].name.clone(),
            None => self.tcx.symbol_name(instance).name.to_string(),
        };
        let sp = self.subprogram(instance.def_id(), &name, &symbol);
        if let Some(f) = llfn {
            self.attach_subprogram(f, sp, instance.def_id());
        }
        DiScope::Node(sp)
    }

    fn dbg_loc(&self, scope: DiScope, inlined_at: Option<Meta>, span: Span) -> Meta {
        let scope = match scope {
            DiScope::CallSite(loc) => return loc,
            DiScope::Node(s) => s,
        };
        let (line, col) = if span.is_dummy() {
            (0, 0)
        } else {
            let loc = self.lookup_debug_loc(span.lo());
            (loc.line, loc.col)
        };
        let inlined = inlined_at.map_or(String::new(), |i| format!(", inlinedAt: {i}"));
        self.meta(format!("!DILocation(line: {line}, column: {col}, scope: {scope}{inlined})"))
    }

    fn extend_scope_to_file(&self, scope: DiScope, file: &SourceFile) -> DiScope {
        match scope {
            DiScope::CallSite(_) => scope,
            DiScope::Node(s) => {
                let file = self.file_meta(file);
                DiScope::Node(self.meta(format!("!DILexicalBlockFile(scope: {s}, file: {file}, discriminator: 0)")))
            }
        }
    }

    fn debuginfo_finalize(&self) {}

    fn create_dbg_var(
        &self,
        name: rustc_span::Symbol,
        ty: Ty<'tcx>,
        scope: DiScope,
        kind: VariableKind,
        span: Span,
    ) -> Option<Meta> {
        let DiScope::Node(scope) = scope else { return None };
        if !self.wants_variables() {
            return None;
        }
        let loc = self.lookup_debug_loc(span.lo());
        let file = self.file_meta(&loc.file);
        let ty = self.debug_type(ty);
        let arg = match kind {
            VariableKind::ArgumentVariable(i) => format!("arg: {i}, "),
            VariableKind::LocalVariable => String::new(),
        };
        Some(self.meta(format!(
            "!DILocalVariable(name: {}, {arg}scope: {scope}, file: {file}, line: {}, type: {ty})",
            meta_string(name.as_str()),
            loc.line
        )))
    }
}

impl<'tcx> CodegenCx<'tcx> {
    /// The debug scope of one MIR source scope (rustc_codegen_llvm's `make_mir_scope`), its
    /// parents first.
    fn make_mir_scope(
        &self,
        instance: Instance<'tcx>,
        mir: &mir::Body<'tcx>,
        variables: Option<&DenseBitSet<SourceScope>>,
        context: &mut FunctionDebugContext<'tcx, DiScope, Meta>,
        done: &mut DenseBitSet<SourceScope>,
        scope: SourceScope,
    ) {
        if done.contains(scope) {
            return;
        }
        done.insert(scope);
        let data = &mir.source_scopes[scope];
        let Some(parent) = data.parent_scope else {
            // The function itself.
            let file = self.tcx.sess.source_map().lookup_source_file(mir.span.lo());
            let root = &mut context.scopes[scope];
            root.file_start_pos = file.start_pos;
            root.file_end_pos = file.end_position();
            return;
        };
        self.make_mir_scope(instance, mir, variables, context, done, parent);
        let parent_scope = context.scopes[parent];
        // Inside a crate without debug information everything is at the call site; and a block
        // needs a scope of its own only when variables are declared in it.
        let plain_block = data.inlined.is_none() && variables.is_none_or(|v| !v.contains(scope));
        if matches!(parent_scope.dbg_scope, DiScope::CallSite(_)) || plain_block {
            context.scopes[scope] = parent_scope;
            return;
        }
        let loc = self.lookup_debug_loc(data.span.lo());
        let file_range = (loc.file.start_pos, loc.file.end_position());
        let DiScope::Node(parent_node) = parent_scope.dbg_scope else { unreachable!("handled above") };
        context.scopes[scope] = match data.inlined {
            Some((callee, callsite)) => {
                let callee = self.tcx.instantiate_and_normalize_erasing_regions(
                    instance.args,
                    ty::TypingEnv::fully_monomorphized(),
                    ty::EarlyBinder::bind(callee),
                );
                let callsite = hygiene::walk_chain_collapsed(callsite, mir.span);
                let callsite_scope = parent_scope.adjust_dbg_scope_for_span(self, callsite);
                // One call-site node per inlined scope, even where a macro makes two calls at one
                // span: LLVM tells inlined instances apart by their `inlinedAt` node.
                let at = self.dbg_loc(callsite_scope, parent_scope.inlined_at, callsite);
                let at = self.distinct_copy(at);
                if without_debuginfo(self.tcx, callee.def_id()) {
                    DebugScope {
                        dbg_scope: DiScope::CallSite(at),
                        inlined_at: parent_scope.inlined_at,
                        file_start_pos: file_range.0,
                        file_end_pos: file_range.1,
                    }
                } else {
                    let sp = match context.inlined_function_scopes.get(&callee) {
                        Some(&sp) => sp,
                        None => {
                            let fn_abi = self.fn_abi_of_instance(callee, ty::List::empty());
                            let sp = self.dbg_scope_fn(callee, fn_abi, None);
                            context.inlined_function_scopes.insert(callee, sp);
                            sp
                        }
                    };
                    DebugScope {
                        dbg_scope: sp,
                        inlined_at: Some(at),
                        file_start_pos: file_range.0,
                        file_end_pos: file_range.1,
                    }
                }
            }
            None => {
                let file = self.file_meta(&loc.file);
                let block = self.module.borrow_mut().meta_distinct(format!(
                    "distinct !DILexicalBlock(scope: {parent_node}, file: {file}, line: {}, column: {})",
                    loc.line, loc.col
                ));
                DebugScope {
                    dbg_scope: DiScope::Node(block),
                    inlined_at: parent_scope.inlined_at,
                    file_start_pos: file_range.0,
                    file_end_pos: file_range.1,
                }
            }
        };
    }

    /// A `distinct` node with the same body as the location `loc`.
    fn distinct_copy(&self, loc: Meta) -> Meta {
        let mut m = self.module.borrow_mut();
        let body = m.meta_body(loc).to_string();
        m.meta_distinct(format!("distinct {body}"))
    }
}
