//! mbarrier (shared-memory barriers with arrival and transaction counts, arrivals of `cp.async`
//! copies and of other blocks of a cluster), `fence.proxy.async`,
//! `elect.sync` and `setmaxnreg`: the synchronisation of TMA/wgmma producer–consumer kernels.

use rustc_codegen_ssa::traits::*;
use rustc_middle::ty::Instance;

use super::super::builder::Builder;
use super::asm::{self, Effect};

/// Builds the body of the barrier/fence intrinsic `name`; `false` if `name` is not one.
pub fn build<'tcx>(bx: &mut Builder<'_, 'tcx>, name: &str, instance: Instance<'tcx>) -> bool {
    let (i32t, i64t) = (bx.cx.type_i32(), bx.cx.type_i64());
    let mem = Effect::Memory;
    let bar = |bx: &mut Builder<'_, 'tcx>| {
        let p = bx.get_param(0);
        asm::shared_addr(bx, p)
    };
    let ret = match name {
        "mbarrier_init" => {
            let (b, n) = (bar(bx), bx.get_param(1));
            asm::call(bx, &[], "mbarrier.init.shared.b64 [$0], $1;", "r,r", &[b, n], mem)
        }
        "mbarrier_inval" => {
            let b = bar(bx);
            asm::call(bx, &[], "mbarrier.inval.shared.b64 [$0];", "r", &[b], mem)
        }
        "mbarrier_arrive" => {
            let b = bar(bx);
            asm::call(bx, &[i64t], "mbarrier.arrive.shared.b64 $0, [$1];", "=l,r", &[b], mem)
        }
        "mbarrier_arrive_expect_tx" => {
            let (b, n) = (bar(bx), bx.get_param(1));
            asm::call(bx, &[i64t], "mbarrier.arrive.expect_tx.shared::cta.b64 $0, [$1], $2;", "=l,r,r", &[b, n], mem)
        }
        "mbarrier_expect_tx" => {
            let (b, n) = (bar(bx), bx.get_param(1));
            asm::call(bx, &[], "mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [$0], $1;", "r,r", &[b, n], mem)
        }
        "mbarrier_try_wait_parity" => {
            let (b, parity) = (bar(bx), bx.get_param(1));
            let text = "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [$1], $2; selp.u32 $0, 1, 0, p; }";
            asm::call(bx, &[i32t], text, "=r,r,r", &[b, parity], mem)
        }
        "mbarrier_try_wait" | "mbarrier_test_wait" => {
            // `try_wait` may suspend the thread a while (sm_90); `test_wait` answers at once (sm_80).
            let (b, state) = (bar(bx), bx.get_param(1));
            let op = if name == "mbarrier_try_wait" { "try_wait" } else { "test_wait" };
            // `.shared` (not `.shared::cta`, ISA 7.8) keeps the sm_80 forms within ISA 7.0.
            let space = if name == "mbarrier_try_wait" { "shared::cta" } else { "shared" };
            let text = format!("{{ .reg .pred p; mbarrier.{op}.{space}.b64 p, [$1], $2; selp.u32 $0, 1, 0, p; }}");
            asm::call(bx, &[i32t], &text, "=r,r,l", &[b, state], mem)
        }
        "mbarrier_arrive_cluster" => {
            // The operand is already a `shared::cluster` address (of this or another block).
            let addr = bx.get_param(0);
            asm::call(bx, &[], "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [$0];", "r", &[addr], mem)
        }
        "mbarrier_arrive_remote" => {
            let (b, rank) = (bar(bx), bx.get_param(1));
            let text = "{ .reg .b32 remote; mapa.shared::cluster.u32 remote, $0, $1; mbarrier.arrive.shared::cluster.b64 _, [remote]; }";
            asm::call(bx, &[], text, "r,r", &[b, rank], mem)
        }
        "cp_async_mbarrier_arrive" | "cp_async_mbarrier_arrive_noinc" => {
            let b = bar(bx);
            let noinc = if name.ends_with("_noinc") { ".noinc" } else { "" };
            let text = format!("cp.async.mbarrier.arrive{noinc}.shared.b64 [$0];");
            asm::call(bx, &[], &text, "r", &[b], mem)
        }
        "fence_proxy_async_shared_cta" => asm::call(bx, &[], "fence.proxy.async.shared::cta;", "", &[], mem),
        "fence_mbarrier_init_release_cluster" => {
            asm::call(bx, &[], "fence.mbarrier_init.release.cluster;", "", &[], mem)
        }
        "elect_sync" => {
            let mask = bx.get_param(0);
            let text = "{ .reg .pred p; elect.sync _|p, $1; selp.u32 $0, 1, 0, p; }";
            asm::call(bx, &[i32t], text, "=r,r", &[mask], mem)
        }
        "setmaxnreg_inc" | "setmaxnreg_dec" => {
            // The count is an immediate: the const argument, checked by `cuda_device::wgmma`.
            let n = asm::const_arg(instance, 0);
            let dir = &name["setmaxnreg_".len()..];
            asm::call(bx, &[], &format!("setmaxnreg.{dir}.sync.aligned.u32 {n};"), "", &[], mem)
        }
        _ => return false,
    };
    match ret {
        Some(v) => bx.ret(v),
        None => bx.ret_void(),
    }
    true
}
