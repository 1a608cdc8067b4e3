//! Checked element addresses for the device library's own bounds checks:
//! `intrinsics::index_checked::<T>(base, i, len)` is the deferred check of slice indexing
//! (`lower/bounds.rs`: failure marker and poisoned address); `shared_index_checked` (shared
//! memory) only records the failure. Debug builds branch to `trap` instead.

use rustc_codegen_ssa::common::IntPredicate;
use rustc_codegen_ssa::traits::*;
use rustc_middle::ty::Instance;

use super::super::bounds;
use super::super::builder::Builder;

/// Builds `index_checked`; `false` for every other name.
pub fn build<'tcx>(bx: &mut Builder<'_, 'tcx>, name: &str, instance: Instance<'tcx>) -> bool {
    let poison = match name {
        "index_checked" => true,
        "shared_index_checked" => false,
        _ => return false,
    };
    let elem = bx.cx.layout_of(instance.args.type_at(0));
    let elem_ty = bx.cx.type_array(bx.cx.type_i8(), elem.size.bytes());
    let (base, i, len) = (bx.get_param(0), bx.get_param(1), bx.get_param(2));
    let oob = bx.icmp(IntPredicate::IntUGE, i, len);
    if bx.cx.deferred_bounds {
        bounds::mark_failure(bx, oob);
        let p = if poison { bounds::poisoned_gep(bx, elem_ty, base, i, oob) } else { bx.gep(elem_ty, base, &[i]) };
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
