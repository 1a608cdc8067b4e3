//! Checked element addresses for the device library's own bounds checks
//! (`intrinsics::index_checked::<T>(base, i, len)`): the same deferred check as slice indexing
//! (`lower/bounds.rs`), or a branch to `trap` in debug builds.

use rustc_codegen_ssa::common::IntPredicate;
use rustc_codegen_ssa::traits::*;
use rustc_middle::ty::Instance;

use super::super::bounds;
use super::super::builder::Builder;

/// Builds `index_checked`; `false` for every other name.
pub fn build<'tcx>(bx: &mut Builder<'_, 'tcx>, name: &str, instance: Instance<'tcx>) -> bool {
    if name != "index_checked" {
        return false;
    }
    let elem = bx.cx.layout_of(instance.args.type_at(0));
    let elem_ty = bx.cx.type_array(bx.cx.type_i8(), elem.size.bytes());
    let (base, i, len) = (bx.get_param(0), bx.get_param(1), bx.get_param(2));
    let oob = bx.icmp(IntPredicate::IntUGE, i, len);
    if bx.cx.deferred_bounds {
        bounds::mark_failure(bx, oob);
        let p = bounds::poisoned_gep(bx, elem_ty, base, i, oob);
        bx.ret(p);
    } else {
        let fail = bx.append_sibling_block("oob");
        let ok = bx.append_sibling_block("ok");
        bx.cond_br(oob, fail, ok);
        bx.switch_to_block(fail);
        bx.abort();
        bx.unreachable();
        bx.switch_to_block(ok);
        let p = bx.inbounds_gep(elem_ty, base, &[i]);
        bx.ret(p);
    }
    true
}
