//! Debugging and timing: `vprintf`, `__assertfail`, `%clock`, `%clock64`, `%globaltimer`, `nanosleep`.

use rustc_codegen_ssa::traits::*;

use super::super::builder::Builder;

/// Builds the body of the debugging intrinsic `name`; `false` if `name` is not one.
pub fn build(bx: &mut Builder<'_, '_>, name: &str) -> bool {
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
        "nanosleep" => {
            let ns = bx.get_param(0);
            bx.call_named("llvm.nvvm.nanosleep", void, &[ns]);
            bx.ret_void();
        }
        _ => return false,
    }
    true
}
