//! The device compiler's user errors, one typed set ([`DeviceError`]) with each message and help
//! line, and how they are reported: at the user's span, with the chain of calls that reached the
//! problem. Three kinds are kept apart: unsupported Rust reached from a kernel, misuse of our
//! attributes (checked before lowering, see `check.rs`), and our own bugs ([`DeviceError::Internal`]).

use std::cell::{Cell, RefCell};

use oxide_contract::abi::LaunchArg;
use rustc_data_structures::fx::FxHashSet;
use rustc_hir::def_id::DefId;
use rustc_middle::ty::Instance;
use rustc_span::Span;

use super::context::CodegenCx;

/// Every error the device compiler reports to the user.
pub enum DeviceError {
    /// The crate has kernels but was not built through `cargo oxide`.
    ConfigMissing {
        crate_name: String,
        var: &'static str,
    },
    /// The device build configuration could not be read.
    ConfigInvalid {
        error: String,
    },
    /// The device build stopped; `message` says where (the details were reported already, or are here).
    BuildFailed {
        crate_name: String,
        message: String,
    },
    /// A `#[cluster_launch]` kernel in a build for archs without clusters.
    ClusterNeedsNewerArch {
        kernel: String,
        min_sm: u32,
        archs: String,
    },
    /// A device instruction (`cuda_device::intrinsics::<op>`) that some target archs lack.
    NeedsArch {
        op: String,
        need: String,
        archs: String,
    },
    /// `#[kernel]`'s classification of a parameter (by syntax) disagrees with its type.
    LaunchArgMismatch {
        param: String,
        ty: String,
        read: LaunchArg,
        actual: LaunchArg,
    },
    /// A kernel's parameters exceed the PTX parameter space.
    ParamsTooLarge {
        kernel: String,
        bytes: u64,
    },
    /// A `SharedMemory` or `SharedArray` held by a local variable instead of a `static`;
    /// `declaration` is the `static` to write instead (in backticks), with the user's element
    /// type and length.
    SharedArrayLocal {
        ty: String,
        declaration: String,
    },
    /// A `static` whose type holds a `SharedMemory` or `SharedArray` without being one: it would
    /// be one global for the whole grid, not shared memory of each block.
    SharedArrayInStatic {
        name: String,
        ty: String,
    },
    /// A `static SharedArray` larger than static shared memory may be.
    SharedStaticTooLarge {
        name: String,
        bytes: u64,
    },
    /// `f128`, which NVPTX cannot lower.
    F128,
    InlineAsm,
    /// A `ptx_asm!` operand whose type does not fit its register constraint.
    PtxAsmOperand {
        ty: String,
        constraint: char,
        bits: u64,
    },
    GlobalAsm,
    /// `thread_local!` statics (reported by [`thread_local_static`], with a note at the declaration).
    ThreadLocal {
        name: String,
    },
    /// `Vec`, `Box`, `String`, `format!`: anything that reaches the allocator.
    HeapAllocation {
        called: String,
    },
    /// A function of `std`.
    NeedsStd {
        called: String,
    },
    /// A non-generic, non-inline function of `core`, which ships without MIR.
    CorePrecompiled {
        called: String,
        path: String,
    },
    /// Any other function without MIR.
    NoDeviceBody {
        called: String,
        path: String,
    },
    /// A `#[kernel]` called from device code.
    KernelCalledFromDevice {
        kernel: String,
    },
    StaticNotEvaluable {
        name: String,
    },
    /// Two `ConstantMemory` statics with one name: their PTX symbols would clash.
    ConstantMemoryNameClash {
        name: String,
    },
    /// `dyn Trait` calls, or a vtable (`what`) in a constant.
    DynTrait {
        what: Option<String>,
    },
    /// A rustc intrinsic without a device lowering and without a fallback body.
    IntrinsicUnsupported {
        name: String,
        simd: bool,
    },
    HostLlvmIntrinsic {
        name: String,
    },
    CVariadicFunction,
    CVariadicArgument,
    UnsizedByValue,
    /// An explicit device export (`#[device] #[no_mangle] extern "C" fn`) with a type C cannot take.
    ExportType {
        function: String,
        position: String,
        ty: String,
    },
    /// A device export whose C name another export, a kernel entry or the runtime already has.
    ExportNameTaken {
        symbol: String,
        taken_by: String,
    },
    /// A function of a `#[device] extern "C"` block with a type C cannot take.
    ImportType {
        function: String,
        position: String,
        ty: String,
    },
    /// A CUDA C++ function is called, but the crate names no CUDA C++ sources to link.
    ImportWithoutSources {
        function: String,
        crate_name: String,
    },
    /// A panic of ours (or of rustc_codegen_ssa) while lowering `what` for `kernel`.
    Internal {
        what: String,
        kernel: String,
        message: String,
    },
}

impl DeviceError {
    pub fn message(&self) -> String {
        use DeviceError::*;
        match self {
            ConfigMissing { crate_name, var } => format!(
                "crate `{crate_name}` has #[kernel] functions, but {var} is not set: \
                 build it with `cargo oxide build`, which compiles the device code"
            ),
            ConfigInvalid { error } => format!("{error}; rebuild with `cargo oxide build`"),
            BuildFailed { crate_name, message } => format!("device build of `{crate_name}` failed: {message}"),
            NeedsArch { op, need, archs } => {
                format!("`cuda_device::intrinsics::{op}` needs {need}, but this build targets {archs}")
            }
            ClusterNeedsNewerArch { kernel, min_sm, archs } => format!(
                "kernel `{kernel}` uses #[cluster_launch], which needs sm_{min_sm} or newer, but this build targets {archs}"
            ),
            LaunchArgMismatch { param, ty, read, actual } => format!(
                "kernel parameter `{param}` has type `{ty}`, which the kernel ABI passes as {}, \
                 but #[kernel] read its type as {}",
                actual.rust_form(),
                read.rust_form()
            ),
            ParamsTooLarge { kernel, bytes } => format!(
                "the parameters of kernel `{kernel}` take {bytes} bytes; a kernel's parameters may take at most {} bytes",
                oxide_contract::limits::MAX_KERNEL_PARAM_BYTES
            ),
            SharedArrayLocal { ty, .. } => format!(
                "`{ty}` must be a `static`: as a local variable it would be private to each thread, \
                 not shared memory of the block"
            ),
            SharedArrayInStatic { name, ty } => format!(
                "the static `{name}` holds shared memory inside a `{ty}`: only a static whose type is \
                 `SharedMemory<..>` or `SharedArray<..>` itself is placed in shared memory"
            ),
            SharedStaticTooLarge { name, bytes } => format!(
                "shared memory `{name}` takes {bytes} bytes; static shared memory is limited to {} bytes per block",
                oxide_contract::limits::DEFAULT_SHARED_MEMORY_PER_BLOCK
            ),
            F128 => "`f128` is not supported in device code: the GPU has no 128-bit floating point".into(),
            InlineAsm => "inline `asm!` is not supported in device code: `asm!` is written for the host target".into(),
            PtxAsmOperand { ty, constraint, bits } => format!(
                "a `ptx_asm!` operand of type `{ty}` cannot use the constraint `{constraint}`, which takes a {bits}-bit value"
            ),
            GlobalAsm => "`global_asm!` is not supported in device code".into(),
            ThreadLocal { name } => format!("thread-local `{name}` is not supported in device code"),
            HeapAllocation { called } => {
                format!("heap allocation is not supported in device code: `{called}` allocates")
            }
            NeedsStd { called } => {
                format!("`{called}` is not available in device code: it needs `std`, which the GPU does not have")
            }
            CorePrecompiled { called, path } => format!(
                "`{called}` is not available in device code: `core` ships `{path}` precompiled, without MIR the device compiler could use"
            ),
            NoDeviceBody { called, path } => {
                format!("`{called}` is not available in device code: the device compiler has no body for `{path}`")
            }
            KernelCalledFromDevice { kernel } => format!("the #[kernel] `{kernel}` cannot be called from device code"),
            StaticNotEvaluable { name } => format!("the static `{name}` could not be evaluated for the device"),
            ConstantMemoryNameClash { name } => {
                format!("two `ConstantMemory` statics are named `{name}`; constant memory is looked up by name")
            }
            DynTrait { what: None } => "`dyn Trait` calls are not supported in device code".into(),
            DynTrait { what: Some(ty) } => {
                format!("`dyn Trait` values (here a vtable for `{ty}`) are not supported in device code")
            }
            IntrinsicUnsupported { name, simd: true } => format!(
                "SIMD intrinsics (`{name}`, used by the library code called here) are not supported in device code yet"
            ),
            IntrinsicUnsupported { name, simd: false } => {
                format!("the intrinsic `{name}` is not supported in device code yet")
            }
            HostLlvmIntrinsic { name } => format!("the host LLVM intrinsic `{name}` is not supported in device code"),
            CVariadicFunction => "C variadic functions are not supported in device code".into(),
            CVariadicArgument => "C variadic arguments are not supported in device code".into(),
            UnsizedByValue => "unsized values passed by value are not supported in device code".into(),
            ExportType { function, position, ty } => format!(
                "`{function}` is exported to CUDA C++, but its {position} has type `{ty}`, which has no C equivalent"
            ),
            ExportNameTaken { symbol, taken_by } => {
                format!(
                    "the device function `{symbol}` cannot be exported to CUDA C++: {taken_by} already has that name"
                )
            }
            ImportType { function, position, ty } => format!(
                "the CUDA C++ function `{function}` cannot be called from Rust: its {position} has type `{ty}`, which has no C equivalent"
            ),
            ImportWithoutSources { function, crate_name } => format!(
                "`{function}` is a CUDA C++ function (declared in a #[device] extern block), but crate `{crate_name}` \
                 names no CUDA C++ sources to link it from"
            ),
            Internal { what, kernel, .. } => {
                format!("internal error in cuda-oxide's device compiler while compiling `{what}` for kernel `{kernel}`")
            }
        }
    }

    pub fn help(&self) -> Option<&'static str> {
        use DeviceError::*;
        Some(match self {
            NeedsArch { .. } => {
                "build only for targets that have it (`cargo oxide build --arch sm_90a` for wgmma and setmaxnreg), \
                 or keep this code in a crate built for them"
            }
            ClusterNeedsNewerArch { .. } => {
                "thread block clusters need Hopper or newer: build with `cargo oxide build --arch sm_90`"
            }
            LaunchArgMismatch { read: LaunchArg::Value, .. } => {
                "write the parameter's type out in the kernel's signature (`&[T]`, `&mut [T]` or `DisjointSlice<T>`) \
                 instead of through a type alias or macro, so the launch method passes the right argument"
            }
            LaunchArgMismatch { .. } => {
                "only `&[T]`, `&mut [T]` and `cuda_device::DisjointSlice<T>` are passed as device buffers; \
                 rename a type of your own that is spelled like them, or pass a raw pointer"
            }
            ParamsTooLarge { .. } => {
                "pass large data in a device buffer (`&[T]`), not by value; or split the value over several launches"
            }
            SharedArrayLocal { .. } => {
                "or use dynamic shared memory (`cuda_device::shared::dynamic`) sized by `LaunchConfig::shared_mem_bytes`"
            }
            SharedArrayInStatic { .. } => {
                "declare each shared array as a `static` of its own (`static TILE: SharedMemory<T, N> = SharedMemory::UNINIT;`); \
                 as part of another type it would be one global variable for the whole grid"
            }
            SharedStaticTooLarge { .. } => {
                "use dynamic shared memory (`cuda_device::shared::dynamic`) sized by `LaunchConfig::shared_mem_bytes`: \
                 up to the GPU's opt-in limit (227 KB on sm_90), which the launch sets for the kernel"
            }
            F128 => "use `f64`, or split the value into two `f64`s (double-double arithmetic)",
            InlineAsm => {
                "for PTX, use `cuda_device::ptx_asm!`; or the device intrinsics in `cuda_device` (thread and block registers, barriers, atomics, warp operations)"
            }
            PtxAsmOperand { .. } => {
                "`h`: 16 bits (`u16`, `i16`, `f16`), `r`: 32 (`u32`, `i32`, `f32` bits), `l`: 64 (`u64`, `i64`, pointers), \
                 `q`: 128, `f`: `f32`, `d`: `f64`; convert the value with `as` or `to_bits()` first"
            }
            ThreadLocal { .. } => {
                "GPU threads have no thread-local storage: keep per-thread values in local variables, or pass shared data in as a kernel parameter"
            }
            HeapAllocation { .. } => {
                "`Vec`, `Box`, `String` and `format!` need a heap; use fixed-size arrays, slices passed in as kernel parameters, or shared memory"
            }
            NeedsStd { .. } => {
                "the GPU has no OS (files, stdout, clocks, threads): use `core` APIs or `cuda_device` (`gpu_printf!` to print, `clock64()` to time)"
            }
            CorePrecompiled { path, .. } if path.contains("fmt::") => {
                "formatting (`core::fmt`) is not supported on the device: print with `gpu_printf!`"
            }
            CorePrecompiled { .. } => {
                "only generic and `#[inline]` functions of `core` reach the device; use an ASCII or byte-level alternative (e.g. `is_ascii_alphanumeric`, a loop over `as_bytes()`), or write the function in your crate"
            }
            NoDeviceBody { .. } => {
                "device code can call functions whose MIR is available: this crate's, `cuda_device`'s, and generic or `#[inline]` functions of other crates"
            }
            KernelCalledFromDevice { .. } => {
                "move the shared code into an ordinary function (mark it #[device] if you like) and call that from both kernels"
            }
            DynTrait { .. } => "use generics (static dispatch) instead of trait objects",
            IntrinsicUnsupported { .. } => {
                "this is a gap in cuda-oxide's device compiler: please report it; meanwhile write the operation as a plain loop on the device"
            }
            HostLlvmIntrinsic { .. } => "use the functions of `cuda_device` for device-specific operations",
            ExportType { .. } | ImportType { .. } => {
                "across the Rust ⇄ CUDA C++ boundary pass integers (`i8`..`u64`, `isize`, `usize`), `f32`, `f64` \
                 and raw pointers; pass a `bool` as `u8` and structs and slices by pointer"
            }
            ExportNameTaken { .. } => {
                "give the function another C name with `#[unsafe(export_name = \"...\")]`, or rename it"
            }
            ImportWithoutSources { .. } => {
                "name the .cu files that define it in Cargo.toml: `[package.metadata.cuda-oxide] cuda-sources = \
                 [\"src/ops.cu\"]` (see docs/interop.md)"
            }
            ConstantMemoryNameClash { .. } => {
                "rename one of them: the host writes constant memory by the static's name (`write_global(stream, \"NAME\", ..)`)"
            }
            Internal { .. } => "until it is fixed, rewriting the expression at this span differently usually avoids it",
            ConfigMissing { .. }
            | ConfigInvalid { .. }
            | BuildFailed { .. }
            | GlobalAsm
            | StaticNotEvaluable { .. }
            | CVariadicFunction
            | CVariadicArgument
            | UnsizedByValue => return None,
        })
    }

    /// A help line made of the user's own types, shown before [`DeviceError::help`].
    fn suggestion(&self) -> Option<String> {
        match self {
            DeviceError::SharedArrayLocal { declaration, .. } => Some(format!(
                "declare it as a `static` (one per block), in the kernel or at module level: {declaration}"
            )),
            _ => None,
        }
    }

    /// Notes that follow the "called by" chain.
    fn notes(&self) -> Vec<String> {
        match self {
            DeviceError::Internal { message, .. } => vec![
                format!("the device compiler stopped with: {}", message.trim()),
                "this is a bug in cuda-oxide, not in your code: please report it at https://github.com/cuda-oxide/cuda-oxide/issues with this message".into(),
            ],
            _ => Vec::new(),
        }
    }
}

/// What has been reported so far, kept apart from the codegen state.
#[derive(Default)]
pub struct Reports<'tcx> {
    /// Set once an error was reported; the device build then stops after lowering.
    pub failed: Cell<bool>,
    /// Frees held back until every allocation is known ([`unavailable`]).
    deferred: RefCell<Vec<Instance<'tcx>>>,
    reporting_deferred: Cell<bool>,
    /// One report per cause, not one per library frame.
    reported: RefCell<FxHashSet<ReportKey>>,
}

/// What makes a report the same as an earlier one: (kind, user's function, callee).
pub type ReportKey = (&'static str, Option<DefId>, Option<DefId>);

impl Reports<'_> {
    /// `true` the first time `key` is seen.
    pub fn first(&self, key: ReportKey) -> bool {
        self.reported.borrow_mut().insert(key)
    }
}

/// Where a problem surfaced in the user's code.
struct UserSite<'tcx> {
    /// The innermost span on the call chain that lies in the crate being compiled.
    span: Span,
    /// The calls from the problem up to the kernel, for "called by" notes.
    chain: Vec<Instance<'tcx>>,
    /// What the user's code called at `span` (`None` when the problem is in the user's own code).
    callee: Option<Instance<'tcx>>,
    /// The user's function that contains `span`.
    function: Option<DefId>,
}

/// Reports `error` at the user's span of the code being lowered, with "called by" notes. The
/// device build stops after lowering, so every problem of the crate is reported in one run.
pub fn report(cx: &CodegenCx<'_>, error: DeviceError) {
    let site = user_site(cx, cx.current.get(), cx.current_span.get());
    emit(cx, &site, &error);
}

/// Reports an error that is not about device code being lowered (configuration, attributes,
/// a failed build), at `span` when there is one.
pub fn report_at(tcx: rustc_middle::ty::TyCtxt<'_>, span: Option<Span>, error: DeviceError) {
    let mut diag = match span {
        Some(span) => tcx.dcx().struct_span_err(span, error.message()),
        None => tcx.dcx().struct_err(error.message()),
    };
    if let Some(help) = error.help() {
        diag.help(help);
    }
    diag.emit();
}

/// Reports the use of a thread-local static: at the user's code that reached it (`KEY.with(..)`),
/// not inside the `thread_local!` expansion, with a note at the declaration.
pub fn thread_local_static(cx: &CodegenCx<'_>, static_def: DefId) {
    let tcx = cx.tcx;
    // The item `thread_local!` expands to (the `LocalKey` const) holds the static and its closures.
    let mut outer = static_def;
    while let Some(parent) = tcx.opt_parent(outer) {
        if parent.is_crate_root() || tcx.def_kind(parent) == rustc_hir::def::DefKind::Mod {
            break;
        }
        outer = parent;
    }
    let within = |mut d: DefId| loop {
        if d == outer {
            return true;
        }
        match tcx.opt_parent(d) {
            Some(p) => d = p,
            None => return false,
        }
    };
    let mut inst = cx.current.get();
    let mut span = cx.current_span.get();
    while let Some(i) = inst.filter(|i| within(i.def_id())) {
        let Some(r) = cx.reached.borrow().get(&i).copied() else { break };
        inst = r.caller;
        span = r.span;
    }
    let site = user_site(cx, inst, span);
    let name = tcx.def_path_str(outer);
    let error = DeviceError::ThreadLocal { name: name.clone() };
    cx.reports.failed.set(true);
    let mut diag = tcx.dcx().struct_span_err(site.span, error.message());
    add_chain(cx, &mut diag, &site);
    diag.span_note(tcx.def_span(outer), format!("`{name}` is declared with `thread_local!` here"));
    if let Some(help) = error.help() {
        diag.help(help);
    }
    diag.emit();
}

/// Reports that `callee` (the instance being defined) has no body the device compiler can use.
pub fn unavailable<'tcx>(cx: &CodegenCx<'tcx>, callee: Instance<'tcx>) {
    let tcx = cx.tcx;
    let reports = &cx.reports;
    // A free is reported only where no allocation was: the allocation is the line to change.
    if tcx.item_name(callee.def_id()).as_str() == "__rust_dealloc" && !reports.reporting_deferred.get() {
        reports.failed.set(true);
        reports.deferred.borrow_mut().push(callee);
        return;
    }
    let site = user_site(cx, Some(callee), rustc_span::DUMMY_SP);
    let krate = tcx.crate_name(callee.def_id().krate);
    let name = tcx.item_name(callee.def_id());
    let called = tcx.def_path_str(site.callee.unwrap_or(callee).def_id());
    let heap = krate.as_str() == "alloc" || name.as_str().starts_with("__rust_");
    let key = (if heap { "heap" } else { "call" }, site.function, if heap { None } else { Some(callee.def_id()) });
    if !reports.first(key) {
        return; // one allocation problem per function is enough to act on
    }
    let path = tcx.def_path_str(callee.def_id());
    let error = if heap {
        DeviceError::HeapAllocation { called }
    } else if krate.as_str() == "std" {
        DeviceError::NeedsStd { called }
    } else if krate.as_str() == "core" {
        DeviceError::CorePrecompiled { called, path }
    } else {
        DeviceError::NoDeviceBody { called, path }
    };
    emit(cx, &site, &error);
}

/// Reports a panic of ours (or of rustc_codegen_ssa) while `instance` was being compiled as a
/// compiler bug at the user's span, naming the kernel that reached it, instead of a backtrace.
pub fn internal_error<'tcx>(cx: &CodegenCx<'tcx>, instance: Instance<'tcx>, message: &str) {
    let site = user_site(cx, Some(instance), cx.current_span.get());
    let what = cx.tcx.def_path_str(instance.def_id());
    let kernel = site.chain.last().map(|k| cx.tcx.def_path_str(k.def_id())).unwrap_or_else(|| what.clone());
    let error = DeviceError::Internal { what, kernel, message: message.to_string() };
    cx.reports.failed.set(true);
    let mut diag = cx.tcx.dcx().struct_span_err(site.span, error.message());
    for note in error.notes() {
        diag.note(note);
    }
    if let Some(help) = error.help() {
        diag.help(help);
    }
    diag.emit();
}

/// Reports a call of CUDA C++ function `callee` in a crate with no CUDA C++ sources, at the
/// user's call.
pub fn import_without_sources<'tcx>(cx: &CodegenCx<'tcx>, callee: Instance<'tcx>, crate_name: &str) {
    let site = user_site(cx, Some(callee), rustc_span::DUMMY_SP);
    if !cx.reports.first(("import", site.function, Some(callee.def_id()))) {
        return;
    }
    let function = cx.tcx.def_path_str(callee.def_id());
    emit(cx, &site, &DeviceError::ImportWithoutSources { function, crate_name: crate_name.to_string() });
}

/// Reports the problems held back by [`unavailable`], now that every allocation is known.
pub fn report_deferred(cx: &CodegenCx<'_>) {
    cx.reports.reporting_deferred.set(true);
    let deferred = std::mem::take(&mut *cx.reports.deferred.borrow_mut());
    for callee in deferred {
        unavailable(cx, callee);
    }
}

fn emit<'tcx>(cx: &CodegenCx<'tcx>, site: &UserSite<'tcx>, error: &DeviceError) {
    cx.reports.failed.set(true);
    let mut diag = cx.tcx.dcx().struct_span_err(site.span, error.message());
    add_chain(cx, &mut diag, site);
    if let Some(suggestion) = error.suggestion() {
        diag.help(suggestion);
    }
    if let Some(help) = error.help() {
        diag.help(help);
    }
    diag.emit();
}

/// "in device code of `f`", then "called by `g`" up to the kernel. The notes start at the user's
/// function: the library-internal frames help nobody.
fn add_chain<'tcx>(cx: &CodegenCx<'tcx>, diag: &mut rustc_errors::Diag<'_>, site: &UserSite<'tcx>) {
    let start = site.chain.iter().position(|i| Some(i.def_id()) == site.function).unwrap_or(0);
    for (i, inst) in site.chain[start..].iter().enumerate() {
        let what = readable_instance(cx.tcx, *inst);
        if i == 0 {
            diag.note(format!("in device code of `{what}`"));
        } else {
            diag.note(format!("called by `{what}`"));
        }
    }
}

/// `kernels::combine::<f32, Add>`: the function's path, and for an instance of a generic
/// function its type and const arguments with their paths trimmed (no hashes, no long paths).
pub fn readable_instance<'tcx>(tcx: rustc_middle::ty::TyCtxt<'tcx>, inst: Instance<'tcx>) -> String {
    let path = tcx.def_path_str(inst.def_id());
    let args: Vec<String> = rustc_middle::ty::print::with_forced_trimmed_paths!(
        inst.args.iter().filter(|a| a.as_region().is_none()).map(|a| a.to_string()).collect()
    );
    if args.is_empty() { path } else { format!("{path}::<{}>", args.join(", ")) }
}

/// Walks the "reached from" chain upwards to the first span in the crate being compiled
/// (macro expansions count at their call site: `vec![..]` is the user's line).
fn user_site<'tcx>(cx: &CodegenCx<'tcx>, mut inst: Option<Instance<'tcx>>, span: Span) -> UserSite<'tcx> {
    let source_map = cx.tcx.sess.source_map();
    let is_user = |s: Span| !s.is_dummy() && !source_map.is_imported(s);
    let mut span = span.source_callsite();
    let mut site = UserSite { span, chain: Vec::new(), callee: None, function: None };
    let mut found = false;
    let mut callee = None;
    for _ in 0..64 {
        if !found && is_user(span) {
            found = true;
            site.span = span;
            site.callee = callee;
            site.function = inst.map(|i| i.def_id());
        }
        let Some(i) = inst else { break };
        site.chain.push(i);
        callee = Some(i);
        let Some(r) = cx.reached.borrow().get(&i).copied() else { break };
        span = r.span.source_callsite();
        inst = r.caller;
    }
    if !found {
        site.span = span;
    }
    site
}
