//! Warpgroup MMA (sm_90a): `wgmma.fence`, `wgmma.commit_group`, `wgmma.wait_group` and
//! `wgmma.mma_async.sync.aligned`: `m64nNk16.f32.{bf16,f16}` with A from a shared-memory
//! descriptor (K- or M-major) or from registers and B K- or N-major, `m64nNk32.f32.{e4m3,e5m2}`
//! with both K-major descriptors. Everything is `sideeffect` so that the four stay in program
//! order; the wait ties the accumulators (`+f`) so that no read of them is scheduled above it.

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
        "wgmma_m64k16_f32" | "wgmma_m64k16_f32_rs" => {
            let nacc = asm::const_usize(bx, instance, 0);
            let ab = if asm::const_arg(instance, 1) == 1 { "f16" } else { "bf16" };
            let shape = format!("m64n{}k16.f32.{ab}.{ab}", 2 * nacc);
            // scale-a/b = 1; the transposes as asked (tnsp-a only where A is a descriptor: a
            // register fragment has its own layout).
            let (a, imms) = if name == "wgmma_m64k16_f32" {
                (Operand::Desc, format!("1, 1, {}, {}", asm::const_arg(instance, 2), asm::const_arg(instance, 3)))
            } else {
                (Operand::Regs, format!("1, 1, {}", asm::const_arg(instance, 2)))
            };
            mma_async(bx, nacc, &shape, a, &imms);
        }
        "wgmma_m64k32_f32_fp8" => {
            let nacc = asm::const_usize(bx, instance, 0);
            let fp8 = |i| if asm::const_arg(instance, i) == 1 { "e5m2" } else { "e4m3" };
            let shape = format!("m64n{}k32.f32.{}.{}", 2 * nacc, fp8(1), fp8(2));
            // fp8 has no transpose immediates: both operands K-major.
            mma_async(bx, nacc, &shape, Operand::Desc, "1, 1");
        }
        _ => return false,
    }
    bx.ret_void();
    true
}

/// Where `wgmma.mma_async` reads A from.
#[derive(Clone, Copy, PartialEq)]
enum Operand {
    /// A shared-memory descriptor (one `l` operand; the SS form).
    Desc,
    /// Four 32-bit registers of packed pairs (`r` operands; the RS form).
    Regs,
}

/// `wgmma.mma_async.sync.aligned.<shape> {d…}, a, desc-b, p, <imms>;` over the intrinsic's
/// parameters `(acc, a…, desc_b, scale_d)`: the `nacc` accumulators at `acc` are loaded, tied
/// to the outputs and stored back; `scale_d` becomes the predicate `p`.
fn mma_async(bx: &mut Builder<'_, '_>, nacc: usize, shape: &str, a: Operand, imms: &str) {
    let f32t = bx.cx.type_f32();
    let na = if a == Operand::Desc { 1 } else { 4 };
    // Parameters: acc, then A (descriptor or a0..a3), desc_b, scale_d.
    let mut args: Vec<_> = (1..=na + 2).map(|i| bx.get_param(i)).collect();
    let acc = bx.get_param(0);
    args.extend(asm::load_n(bx, f32t, acc, nacc as u64, 4));
    // Operands: $0..nacc-1 the accumulators (tied to the last nacc inputs), then A, desc_b and
    // scale-d.
    let (pb, ps) = (nacc + na, nacc + na + 1);
    let a_text = if a == Operand::Desc { format!("${nacc}") } else { asm::regs(nacc, 4) };
    let text = format!(
        "{{ .reg .pred p; setp.ne.b32 p, ${ps}, 0; wgmma.mma_async.sync.aligned.{shape} {}, {a_text}, ${pb}, p, {imms}; }}",
        asm::regs(0, nacc)
    );
    let a_cons = if a == Operand::Desc { vec!["l".to_string()] } else { asm::constraints("r", 4) };
    let ties: Vec<String> = (0..nacc).map(|i| i.to_string()).collect();
    let cons = [asm::constraints("=f", nacc), a_cons, vec!["l".into(), "r".into()], ties].concat().join(",");
    let outs = vec![f32t; nacc];
    let v = asm::call(bx, &outs, &text, &cons, &args, Effect::Memory).expect("accumulators");
    asm::store_n(bx, f32t, v, acc, nacc as u64, 4);
}
