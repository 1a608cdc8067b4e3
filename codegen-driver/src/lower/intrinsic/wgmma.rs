//! Warpgroup MMA (sm_90a): `wgmma.fence`, `wgmma.commit_group`, `wgmma.wait_group` and
//! `wgmma.mma_async.sync.aligned.m64nNk16.f32.{bf16,f16}` with both operands from shared-memory
//! descriptors. Everything is `sideeffect` so that the four stay in program order; the wait ties
//! the accumulators (`+f`) so that no read of them is scheduled above it.

use rustc_codegen_ssa::traits::*;
use rustc_middle::ty::Instance;

use super::super::builder::Builder;
use super::asm::{self, Effect};

/// Builds the body of the wgmma intrinsic `name`; `false` if `name` is not one.
pub fn build<'tcx>(bx: &mut Builder<'_, 'tcx>, name: &str, instance: Instance<'tcx>) -> bool {
    let f32t = bx.cx.type_f32();
    let mem = Effect::Memory;
    match name {
        "wgmma_fence" => {
            asm::call(bx, &[], "wgmma.fence.sync.aligned;", "", &[], mem);
        }
        "wgmma_commit_group" => {
            asm::call(bx, &[], "wgmma.commit_group.sync.aligned;", "", &[], mem);
        }
        "wgmma_wait_group" => {
            let (pending, nacc) = (asm::const_arg(instance, 0), asm::const_usize(bx, instance, 1));
            let acc = bx.get_param(0);
            let vals = asm::load_n(bx, f32t, acc, nacc as u64, 4);
            let ties: Vec<String> = (0..nacc).map(|i| i.to_string()).collect();
            let cons = [asm::constraints("=f", nacc), ties].concat().join(",");
            let outs = vec![f32t; nacc];
            let text = format!("wgmma.wait_group.sync.aligned {pending};");
            if let Some(v) = asm::call(bx, &outs, &text, &cons, &vals, mem) {
                asm::store_n(bx, f32t, v, acc, nacc as u64, 4);
            }
        }
        "wgmma_m64k16_f32" => {
            let nacc = asm::const_usize(bx, instance, 0);
            let n = 2 * nacc;
            let ab = if asm::const_arg(instance, 1) == 1 { "f16" } else { "bf16" };
            let trans_b = asm::const_arg(instance, 2);
            let (acc, da, db, scale_d) = (bx.get_param(0), bx.get_param(1), bx.get_param(2), bx.get_param(3));
            let mut args = vec![da, db, scale_d];
            args.extend(asm::load_n(bx, f32t, acc, nacc as u64, 4));
            // Operands: $0..nacc-1 the accumulators (tied to the last nacc inputs), then the
            // descriptors and scale-d. scale-a/b = 1, A K-major (tnsp-a 0), B as asked.
            let (pa, pb, ps) = (nacc, nacc + 1, nacc + 2);
            let text = format!(
                "{{ .reg .pred p; setp.ne.b32 p, ${ps}, 0; wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{ab}.{ab} {}, ${pa}, ${pb}, p, 1, 1, 0, {trans_b}; }}",
                asm::regs(0, nacc)
            );
            let ties: Vec<String> = (0..nacc).map(|i| i.to_string()).collect();
            let cons =
                [asm::constraints("=f", nacc), vec!["l".into(), "l".into(), "r".into()], ties].concat().join(",");
            let outs = vec![f32t; nacc];
            let v = asm::call(bx, &outs, &text, &cons, &args, mem).expect("accumulators");
            asm::store_n(bx, f32t, v, acc, nacc as u64, 4);
        }
        _ => return false,
    }
    bx.ret_void();
    true
}
