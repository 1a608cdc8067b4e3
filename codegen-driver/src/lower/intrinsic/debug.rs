//! Debugging and timing: `vprintf`, `__assertfail`, `%clock`, `%clock64`, `%globaltimer`, `nanosleep`,
//! `brkpt`, `pmevent`.

use rustc_codegen_ssa::traits::*;
use rustc_middle::ty::Instance;

use super::super::builder::Builder;

/// Builds the body of the debugging intrinsic `name`; `false` if `name` is not one.
pub fn build<'tcx>(bx: &mut Builder<'_, 'tcx>, name: &str, instance: Instance<'tcx>) -> bool {
    let i32t = bx.cx.type_i32();
    let i64t = bx.cx.type_i64();
    let void = bx.cx.type_void();
    match name {
        "clock" | "clock64" | "globaltimer" => {
            let ty = if name == "clock" { i32t } else { i64t };
            let v = bx.call_named(&format!("llvm.nvvm.read.ptx.sreg.{name}"), ty, &[]);
            bx.ret(v);
        }
        "vprintf" => {
            // A CUDA system call that ptxas resolves: `.extern .func vprintf(.param .b64, .param .b64)`.
            let args = [bx.get_param(0), bx.get_param(1)];
            let v = bx.call_named("vprintf", i32t, &args);
            bx.ret(v);
        }
        "assert_fail" => {
            let args = [bx.get_param(0), bx.get_param(1), bx.get_param(2), bx.get_param(3), bx.cx.const_u64(1)];
            bx.call_named("__assertfail", void, &args);
            bx.call_named("llvm.trap", void, &[]);
            bx.unreachable();
        }
        "breakpoint" => {
            bx.call_named("llvm.debugtrap", void, &[]);
            bx.ret_void();
        }
        "pmevent" => {
            // The event number is an immediate operand: the const argument, checked to be 0..=15
            // by `debug::prof_trigger`.
            let event = instance.args.const_at(0).to_leaf().to_u32();
            bx.emit(format!("call void asm sideeffect \"pmevent {event};\", \"\"()"));
            bx.ret_void();
        }
        "nanosleep" => {
            let ns = bx.get_param(0);
            bx.call_named("llvm.nvvm.nanosleep", void, &[ns]);
            bx.ret_void();
        }
        _ => return false,
    }
    true
}
