//! `cp.async` (sm_80): global → shared copies of 4, 8 or 16 bytes (optionally zero-filling past
//! a source size), `commit_group`, `wait_group N`, `wait_all`.

use rustc_codegen_ssa::traits::*;

use super::super::builder::Builder;
use super::super::ir::TypeData;

/// Builds the body of the `cp_async_*` intrinsic `name`; `false` if `name` is not one.
pub fn build(bx: &mut Builder<'_, '_>, name: &str) -> bool {
    let Some(op) = name.strip_prefix("cp_async_") else { return false };
    let void = bx.cx.type_void();
    match op {
        "commit_group" => {
            bx.call_named("llvm.nvvm.cp.async.commit.group", void, &[]);
        }
        "wait_all" => {
            bx.call_named("llvm.nvvm.cp.async.wait.all", void, &[]);
        }
        "wait_group" => {
            // The count is an immediate in PTX: one case per count, folded to one once the call
            // is inlined with a constant.
            let n = bx.get_param(0);
            let i32t = bx.cx.type_i32();
            let cases: Vec<_> = (0..8u32).map(|k| (k, bx.append_sibling_block(&format!("wait{k}")))).collect();
            let done = bx.append_sibling_block("done");
            let last = cases[7].1;
            bx.switch(n, last, cases.iter().map(|&(k, b)| (k as u128, b)));
            for &(k, b) in &cases {
                bx.switch_to_block(b);
                let imm = bx.cx.const_u32(k);
                let _ = i32t;
                bx.call_named("llvm.nvvm.cp.async.wait.group", void, &[imm]);
                bx.br(done);
            }
            bx.switch_to_block(done);
        }
        _ => {
            let (cache, bytes, zfill) = match op.split('_').collect::<Vec<_>>()[..] {
                [cache @ ("ca" | "cg"), bytes] => (cache, bytes, false),
                [cache @ ("ca" | "cg"), "zfill", bytes] => (cache, bytes, true),
                _ => return false,
            };
            let shared = bx.cx.ty(TypeData::Ptr(3));
            let global = bx.cx.ty(TypeData::Ptr(1));
            let (dst, src) = (bx.get_param(0), bx.get_param(1));
            let dst = bx.pointercast(dst, shared);
            let src = bx.pointercast(src, global);
            let suffix = if zfill { ".s" } else { "" };
            let mut args = vec![dst, src];
            if zfill {
                args.push(bx.get_param(2));
            }
            bx.call_named(&format!("llvm.nvvm.cp.async.{cache}.shared.global.{bytes}{suffix}"), void, &args);
        }
    }
    bx.ret_void();
    true
}
