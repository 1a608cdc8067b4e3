//! Barriers and traps: `bar.sync`, `trap`.

use rustc_codegen_ssa::traits::*;

use super::super::builder::Builder;

/// Builds the body of the synchronisation intrinsic `name`; `false` if `name` is not one.
pub fn build(bx: &mut Builder<'_, '_>, name: &str) -> bool {
    let void = bx.cx.type_void();
    match name {
        "sync_threads" => {
            bx.call_named("llvm.nvvm.barrier0", void, &[]);
            bx.ret_void();
        }
        "trap" => {
            bx.call_named("llvm.trap", void, &[]);
            bx.unreachable();
        }
        _ => return false,
    }
    true
}
