//! `oxide-rustc`: rustc with a codegen backend that also compiles the crate's kernels for the GPU.
//!
//! Cargo runs it as `RUSTC_WRAPPER`: `oxide-rustc <path-to-rustc> <rustc args…>`. It runs rustc
//! in-process (the pinned nightly's `rustc_driver`), adds the settings device code needs, and
//! installs [`backend::OxideBackend`], which wraps rustc's LLVM backend.
#![feature(rustc_private)]

extern crate rustc_abi;
extern crate rustc_ast;
extern crate rustc_codegen_llvm;
extern crate rustc_codegen_ssa;
extern crate rustc_const_eval;
extern crate rustc_data_structures;
extern crate rustc_driver;
extern crate rustc_errors;
extern crate rustc_hir;
extern crate rustc_index;
extern crate rustc_interface;
extern crate rustc_metadata;
extern crate rustc_middle;
extern crate rustc_session;
extern crate rustc_span;
extern crate rustc_symbol_mangling;
extern crate rustc_target;

mod backend;
mod lower;
mod markers;
mod pipeline;

use std::process::ExitCode;

use rustc_driver::Compilation;
use rustc_interface::interface;

/// The settings every crate gets, so that `#[kernel]`'s tool attributes resolve and device code in
/// other crates carries MIR.
struct OxideCallbacks;

impl rustc_driver::Callbacks for OxideCallbacks {
    fn config(&mut self, config: &mut interface::Config) {
        let opts = &mut config.opts;
        opts.unstable_opts.crate_attr.push("feature(register_tool)".into());
        opts.unstable_opts.crate_attr.push("register_tool(oxide)".into());
        opts.unstable_opts.always_encode_mir = true;
        // MIR jump threading duplicates calls into both arms of a branch, which makes a barrier
        // (`sync_threads`, `cluster::sync`) divergent: in `if t == 0 {..} sync_threads(); if t == 0
        // {..}` each arm gets its own `bar.sync`, and a warp split across two of them hangs. rustc
        // turns the pass off for GPU targets (rust-lang/rust#137086); the MIR of our crates is
        // optimised for the host target, so turn it off here. LLVM's jump threading, which respects
        // `convergent`, still runs on both sides.
        opts.unstable_opts.mir_enable_passes.push(("JumpThreading".into(), false));
        config.crate_cfg.push("cuda_oxide".into());
        config.crate_check_cfg.push("cfg(cuda_oxide)".into());
        config.make_codegen_backend = Some(Box::new(backend::OxideBackend::boxed));
    }

    /// Makes cargo rebuild crates that can hold kernels when the device options change (`--arch`,
    /// …): the config becomes an env dependency in their dep-info, which is written right after
    /// expansion. A crate can hold kernels when `cuda_device` is among the crates it links, also
    /// through a library (a binary instantiating a library's generic kernel compiles that instance).
    fn after_expansion<'tcx>(&mut self, _: &interface::Compiler, tcx: rustc_middle::ty::TyCtxt<'tcx>) -> Compilation {
        let var = oxide_contract::config::CONFIG_ENV;
        if lower::collect::may_have_kernels(tcx)
            && let Ok(raw) = std::env::var(var)
        {
            let entry = (rustc_span::Symbol::intern(var), Some(rustc_span::Symbol::intern(&raw)));
            tcx.sess.env_depinfo.borrow_mut().insert(entry);
        }
        Compilation::Continue
    }
}

fn main() -> ExitCode {
    let early_dcx = rustc_session::EarlyDiagCtxt::new(rustc_session::config::ErrorOutputType::default());
    rustc_driver::init_rustc_env_logger(&early_dcx);
    rustc_driver::install_ice_hook(
        "https://github.com/cuda-oxide/cuda-oxide/issues (this is a bug in oxide-rustc)",
        |_| (),
    );
    let mut args: Vec<String> = std::env::args().collect();
    // As RUSTC_WRAPPER we get the real rustc's path first; we are that rustc, so drop it.
    if args.get(1).is_some_and(|a| is_rustc_path(a)) {
        args.remove(1);
    }
    rustc_driver::catch_with_exit_code(|| rustc_driver::run_compiler(&args, &mut OxideCallbacks))
}

fn is_rustc_path(arg: &str) -> bool {
    std::path::Path::new(arg).file_stem().is_some_and(|s| s == "rustc")
}
