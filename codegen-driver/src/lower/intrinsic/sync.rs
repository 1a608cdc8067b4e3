//! Barriers, fences and traps: `bar.sync` (also named, with a count), `bar.arrive`, `bar.red`,
//! `bar.warp.sync`, `fence`, `trap`.

use rustc_codegen_ssa::traits::*;

use super::super::builder::Builder;
use super::asm::{self, Effect};

/// Builds the body of the synchronisation intrinsic `name`; `false` if `name` is not one.
pub fn build(bx: &mut Builder<'_, '_>, name: &str) -> bool {
    let void = bx.cx.type_void();
    match name {
        "sync_threads" => {
            bx.call_named("llvm.nvvm.barrier0", void, &[]);
            bx.ret_void();
        }
        "sync_threads_count" | "sync_threads_and" | "sync_threads_or" => {
            let op = match name {
                "sync_threads_count" => "popc",
                "sync_threads_and" => "and",
                _ => "or",
            };
            let pred = bx.get_param(0);
            let i32t = bx.cx.type_i32();
            let v = bx.call_named(&format!("llvm.nvvm.barrier0.{op}"), i32t, &[pred]);
            bx.ret(v);
        }
        "sync_warp" => {
            let mask = bx.get_param(0);
            bx.call_named("llvm.nvvm.bar.warp.sync", void, &[mask]);
            bx.ret_void();
        }
        "bar_sync_count" | "bar_arrive_count" => {
            let (id, threads) = (bx.get_param(0), bx.get_param(1));
            let op = if name == "bar_sync_count" { "sync" } else { "arrive" };
            asm::call(bx, &[], &format!("bar.{op} $0, $1;"), "r,r", &[id, threads], Effect::Memory);
            bx.ret_void();
        }
        "threadfence_block" | "threadfence" | "threadfence_system" => {
            let scope = match name {
                "threadfence_block" => "syncscope(\"block\") ",
                "threadfence" => "syncscope(\"device\") ",
                _ => "",
            };
            bx.emit(format!("fence {scope}seq_cst"));
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
