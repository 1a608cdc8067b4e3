//! Thread block clusters (sm_90): cluster registers, `barrier.cluster`, `mapa`.

use rustc_codegen_ssa::traits::*;

use super::super::builder::Builder;

/// Builds the body of the cluster intrinsic `name`; `false` if `name` is not one.
pub fn build(bx: &mut Builder<'_, '_>, name: &str) -> bool {
    let i32t = bx.cx.type_i32();
    let void = bx.cx.type_void();
    let sreg = match name {
        "cluster_ctarank" => Some("cluster.ctarank".to_string()),
        "cluster_nctarank" => Some("cluster.nctarank".to_string()),
        _ => ["cluster_ctaid", "cluster_nctaid", "clusterid", "nclusterid"].iter().find_map(|reg| {
            let axis = name.strip_prefix(reg)?.strip_prefix('_')?;
            matches!(axis, "x" | "y" | "z").then(|| format!("{}.{axis}", reg.replace('_', ".")))
        }),
    };
    if let Some(reg) = sreg {
        let v = bx.call_named(&format!("llvm.nvvm.read.ptx.sreg.{reg}"), i32t, &[]);
        bx.ret(v);
        return true;
    }
    match name {
        "cluster_sync" => {
            bx.call_named("llvm.nvvm.barrier.cluster.arrive", void, &[]);
            bx.call_named("llvm.nvvm.barrier.cluster.wait", void, &[]);
            bx.ret_void();
        }
        "cluster_arrive" | "cluster_arrive_relaxed" | "cluster_wait" => {
            let which = name.trim_start_matches("cluster_").replace('_', ".");
            bx.call_named(&format!("llvm.nvvm.barrier.cluster.{which}"), void, &[]);
            bx.ret_void();
        }
        "cluster_map_shared" => {
            let ptr = bx.get_param(0);
            let rank = bx.get_param(1);
            let pt = bx.cx.type_ptr();
            let v = bx.call_named("llvm.nvvm.mapa", pt, &[ptr, rank]);
            bx.ret(v);
        }
        "is_cluster_shared" => {
            let ptr = bx.get_param(0);
            let i1t = bx.cx.type_i1();
            let v = bx.call_named("llvm.nvvm.isspacep.shared.cluster", i1t, &[ptr]);
            bx.ret(v);
        }
        _ => return false,
    }
    true
}
