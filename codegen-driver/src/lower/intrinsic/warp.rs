//! Warp operations: `shfl.sync`, `vote.sync`, `match.sync`, `redux.sync`, `activemask`.

use rustc_codegen_ssa::traits::*;

use super::super::builder::Builder;

/// Builds the body of the warp intrinsic `name`; `false` if `name` is not one.
pub fn build(bx: &mut Builder<'_, '_>, name: &str) -> bool {
    let i32t = bx.cx.type_i32();
    let i1t = bx.cx.type_i1();
    let params = |bx: &mut Builder<'_, '_>, n: usize| (0..n).map(|i| bx.get_param(i)).collect::<Vec<_>>();
    let v = match name {
        "shfl_sync_idx_i32" | "shfl_sync_up_i32" | "shfl_sync_down_i32" | "shfl_sync_bfly_i32" => {
            let mode = name.trim_start_matches("shfl_sync_").trim_end_matches("_i32");
            let args = params(bx, 4);
            bx.call_named(&format!("llvm.nvvm.shfl.sync.{mode}.i32"), i32t, &args)
        }
        "vote_all_sync" | "vote_any_sync" | "vote_uni_sync" => {
            let mode = &name[5..8];
            let args = params(bx, 2);
            bx.call_named(&format!("llvm.nvvm.vote.{mode}.sync"), i1t, &args)
        }
        "vote_ballot_sync" => {
            let args = params(bx, 2);
            bx.call_named("llvm.nvvm.vote.ballot.sync", i32t, &args)
        }
        "activemask" => bx.call_named("llvm.nvvm.activemask", i32t, &[]),
        "match_any_sync_i32" | "match_any_sync_i64" => {
            let args = params(bx, 2);
            bx.call_named(&format!("llvm.nvvm.match.any.sync.{}", &name[15..]), i32t, &args)
        }
        "match_all_sync_i32" | "match_all_sync_i64" => {
            let args = params(bx, 2);
            let pair = bx.cx.type_struct(&[i32t, i1t], false);
            let r = bx.call_named(&format!("llvm.nvvm.match.all.sync.{}p", &name[15..]), pair, &args);
            bx.extract_value(r, 0)
        }
        "redux_sync_add_u32" | "redux_sync_min_u32" | "redux_sync_max_u32" | "redux_sync_min_i32"
        | "redux_sync_max_i32" => {
            let op = &name[11..14];
            let op = match (op, name.ends_with("u32")) {
                ("min", true) => "umin",
                ("max", true) => "umax",
                (op, _) => op,
            };
            // The intrinsic takes (value, mask); ours takes (mask, value) like the other `.sync` ops.
            let mask = bx.get_param(0);
            let val = bx.get_param(1);
            bx.call_named(&format!("llvm.nvvm.redux.sync.{op}"), i32t, &[val, mask])
        }
        "redux_sync_and_b32" | "redux_sync_or_b32" | "redux_sync_xor_b32" => {
            let op = name.trim_start_matches("redux_sync_").trim_end_matches("_b32");
            let mask = bx.get_param(0);
            let val = bx.get_param(1);
            bx.call_named(&format!("llvm.nvvm.redux.sync.{op}"), i32t, &[val, mask])
        }

        _ => return false,
    };
    bx.ret(v);
    true
}
