//! Memory comparison intrinsics (`compare_bytes`, `raw_eq`): the host lowers them to `memcmp`,
//! which the GPU has not, so they become an inline byte loop (slice `==` and `cmp` of `[u8]` use them).

use rustc_abi::{Align, BackendRepr};
use rustc_codegen_ssa::common::IntPredicate;
use rustc_codegen_ssa::traits::*;
use rustc_middle::ty::Ty;
use rustc_middle::ty::layout::LayoutOf;

use super::super::builder::Builder;
use super::super::ir;

/// `compare_bytes(a, b, n) -> i32`: the sign of the first differing byte pair (as unsigned), or 0.
pub fn compare_bytes(bx: &mut Builder<'_, '_>, a: ir::Value, b: ir::Value, n: ir::Value) -> ir::Value {
    let cx = bx.cx;
    let (i8t, i32t, i64t) = (cx.type_i8(), cx.type_i32(), cx.type_i64());
    let n = bx.intcast(n, i64t, false);
    let one = Align::ONE;
    let (word, dword) = (Align::from_bytes(4).unwrap_or(one), Align::from_bytes(8).unwrap_or(one));
    let result = bx.alloca(rustc_abi::Size::from_bytes(4), word);
    let index = bx.alloca(rustc_abi::Size::from_bytes(8), dword);
    bx.store(cx.const_i32(0), result, word);
    bx.store(cx.const_u64(0), index, dword);
    let head = bx.append_sibling_block("cmp_head");
    let body = bx.append_sibling_block("cmp_body");
    let next = bx.append_sibling_block("cmp_next");
    let differ = bx.append_sibling_block("cmp_differ");
    let done = bx.append_sibling_block("cmp_done");
    bx.br(head);

    bx.switch_to_block(head);
    let i = bx.load(i64t, index, dword);
    let at_end = bx.icmp(IntPredicate::IntEQ, i, n);
    bx.cond_br(at_end, done, body);

    bx.switch_to_block(body);
    let pa = bx.inbounds_gep(i8t, a, &[i]);
    let pb = bx.inbounds_gep(i8t, b, &[i]);
    let x = bx.load(i8t, pa, one);
    let y = bx.load(i8t, pb, one);
    let ne = bx.icmp(IntPredicate::IntNE, x, y);
    bx.cond_br(ne, differ, next);

    bx.switch_to_block(next);
    let i1 = bx.add(i, cx.const_u64(1));
    bx.store(i1, index, dword);
    bx.br(head);

    bx.switch_to_block(differ);
    let xw = bx.zext(x, i32t);
    let yw = bx.zext(y, i32t);
    let diff = bx.sub(xw, yw);
    bx.store(diff, result, word);
    bx.br(done);

    bx.switch_to_block(done);
    bx.load(i32t, result, word)
}

/// `raw_eq::<T>(a, b) -> bool` (as `i1`): one integer compare for scalar-sized `T`, else bytes.
pub fn raw_eq<'tcx>(bx: &mut Builder<'_, 'tcx>, ty: Ty<'tcx>, a: ir::Value, b: ir::Value) -> ir::Value {
    let cx = bx.cx;
    let layout = cx.layout_of(ty);
    let size = layout.size;
    if size.bytes() == 0 {
        return cx.const_bool(true);
    }
    let scalar_like =
        matches!(layout.backend_repr, BackendRepr::Scalar(_) | BackendRepr::ScalarPair(..)) || size.bytes() <= 16;
    if scalar_like && size.bytes().is_power_of_two() {
        let t = cx.type_ix(size.bits());
        let x = bx.load(t, a, layout.align.abi);
        let y = bx.load(t, b, layout.align.abi);
        return bx.icmp(IntPredicate::IntEQ, x, y);
    }
    let n = cx.const_u64(size.bytes());
    let c = compare_bytes(bx, a, b, n);
    bx.icmp(IntPredicate::IntEQ, c, cx.const_i32(0))
}
