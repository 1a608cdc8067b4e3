//! After the second `opt`: the fast copy of a flat kernel computes its thread index in 32 bits.
//!
//! `thread::index_1d` in the fast copy of a flat launch (`uniform_bounds.rs`) folds to
//! `add nuw nsw i64 (mul nuw nsw i64 (zext %ctaid.x), (zext %ntid.x)), (zext %tid.x)`. That
//! 64-bit index makes each address a 64-bit shift and a 64-bit add (`SHF.L.U64.HI`, `IMAD.SHL`,
//! `IADD3` + `IADD3.X` per pointer), where nvcc's `int i` gives one `IMAD.WIDE` per pointer.
//! So in the fast copy it becomes `zext (add nuw i32 (mul nuw i32 %ctaid.x, %ntid.x), %tid.x)`,
//! which `llc` selects as `mul.wide.u32` and ptxas as one `IMAD.WIDE.U32` per address. `llc`
//! does so only where the `zext` and the address are in one block, so the addresses of a
//! parameter at that index move into the index's block (pure arithmetic, computed earlier on
//! the same path: the same value wherever it is used).
//!
//! **Why it is exact.** A flat kernel's `U` also asks `nctaid.x <= 2^32 / B`, `B` the most
//! threads a block can have (launch bounds, else 1024), so `nctaid.x * ntid.x <= 2^32`. That
//! compare is named [`GRID_THREADS_U32`], and the name marks the kernels whose `U` has it (where
//! `opt` rewrote it and dropped the name, nothing is narrowed). The blocks named
//! `oxide.fast.*` run only when `U` held: they are reached only through the entry's branch on
//! `U`, and no pass between here and there moves an instruction into them from the entry (one
//! that moved the index out of them would only leave it unrewritten). There
//! `ctaid.x <= nctaid.x - 1` and `tid.x <= ntid.x - 1`, so
//! `ctaid.x * ntid.x + tid.x <= nctaid.x * ntid.x - 1 <= 2^32 - 1`: neither the `i32` product
//! nor the sum wraps (their `nuw` holds) and the zero-extended sum is the `i64` index. A launch
//! with more blocks takes the checked copy, which keeps the 64-bit index. A kernel without
//! the marker (not flat) is left as it is.

use std::collections::{HashMap, HashSet};

use super::ir::{BinOp, CastOp, Cfg, Flags, Function, I32, I64, Inst, Module, Namer, Op, SREG, Type, Value};
use super::passes::State;
use crate::markers::{GRID_THREADS_U32, is_fast_copy_label};

/// The pass (`passes.rs`): the flat index of each marked kernel's fast copy in 32 bits (module
/// docs).
pub fn run(module: &mut Module, _: &mut State) -> bool {
    let mut changed = false;
    for f in module.functions_mut() {
        changed |= narrow(f);
    }
    changed
}

/// The 32-bit index of one thread's read registers: `[ctaid.x, ntid.x, tid.x]`.
type Reads = [Value; 3];

fn narrow(f: &mut Function) -> bool {
    let marked = f.blocks.iter().flat_map(|b| &b.insts).any(|i| i.result() == Some(GRID_THREADS_U32));
    if !marked {
        return false;
    }
    let defs = f.defs();
    let def = |v: &Value| -> Option<&Op> {
        let &(b, i) = defs.get(v.as_local()?)?;
        Some(f.blocks[b].insts[i].op())
    };
    // A loop's start value (a grid-stride loop's first index) stays: `llc`'s loop strength
    // reduction rebuilds the `i64` sum from the 32-bit parts, two more instructions (bench
    // `block_sum`).
    let phi_inputs: HashSet<&str> = f
        .blocks
        .iter()
        .flat_map(|b| &b.insts)
        .filter(|i| matches!(i.op(), Op::Phi { .. }))
        .flat_map(|i| i.uses())
        .collect();
    // The flat indices of the fast copy: (block, instruction) → the reads it is made of.
    let mut narrowed: HashMap<(usize, usize), Reads> = HashMap::new();
    let mut index_at: HashMap<&str, (usize, usize)> = HashMap::new();
    for (b, block) in f.blocks.iter().enumerate() {
        if !block.label.as_deref().is_some_and(is_fast_copy_label) {
            continue;
        }
        for (i, inst) in block.insts.iter().enumerate() {
            if let Some(r) = inst.result()
                && !phi_inputs.contains(r)
                && let Some(reads) = flat_index(inst.op(), &def)
            {
                narrowed.insert((b, i), reads);
                index_at.insert(r, (b, i));
            }
        }
    }
    if narrowed.is_empty() {
        return false;
    }
    // Addresses `p + index` (`p` a parameter) in a block guarded by the index's block (its only
    // predecessor: `if i < n { … }`) move next to the index: `llc` selects `mul.wide.u32` only
    // where it sees the `zext` (it selects one block at a time), and a `getelementptr` computes
    // the same value wherever the index is defined. bench `vecadd_v4` has its accesses in the
    // guarded block; `speculative-execution` hoisted `vecadd`'s. Not from farther: an address
    // moved before a loop would stay in registers through it (`remat_thread_index.rs`).
    let cfg = Cfg::new(f);
    let mut hoisted: HashMap<(usize, usize), Vec<Inst>> = HashMap::new();
    let mut moved: HashSet<(usize, usize)> = HashSet::new();
    for (b, block) in f.blocks.iter().enumerate() {
        for (j, inst) in block.insts.iter().enumerate() {
            if let Some(index) = address_of_parameter(inst.op(), f, &defs)
                && let Some(&(ib, ii)) = index_at.get(index)
                && cfg.preds[b] == [ib]
            {
                hoisted.entry((ib, ii)).or_default().push(inst.clone());
                moved.insert((b, j));
            }
        }
    }
    let mut namer = Namer::new(f, "oxide.u32.");
    for b in 0..f.blocks.len() {
        let old = std::mem::take(&mut f.blocks[b].insts);
        let mut insts = Vec::with_capacity(old.len() + 3);
        for (i, inst) in old.into_iter().enumerate() {
            if moved.contains(&(b, i)) {
                continue;
            }
            let (Some([block, extent, thread]), Some(r)) = (narrowed.get(&(b, i)), inst.result()) else {
                insts.push(inst);
                continue;
            };
            let (mul, sum) = (namer.fresh(), namer.fresh());
            let bin = |op, a: &Value, b: &Value| Op::Bin { op, flags: Flags::NUW, ty: I32, a: a.clone(), b: b.clone() };
            insts.push(Inst::assign(&mul, bin(BinOp::Mul, block, extent)));
            insts.push(Inst::assign(&sum, bin(BinOp::Add, &Value::local(&mul), thread)));
            let zext = Op::Cast { op: CastOp::ZExt, flags: Flags::NONE, from: I32, a: Value::local(&sum), to: I64 };
            insts.push(Inst::assign(r, zext));
            insts.extend(hoisted.remove(&(b, i)).unwrap_or_default());
        }
        f.blocks[b].insts = insts;
    }
    true
}

/// The index of `op` if it is `getelementptr [flags] T, ptr %p, i64 %index` with `%p` a
/// parameter.
fn address_of_parameter<'a>(op: &'a Op, f: &Function, defs: &HashMap<&str, (usize, usize)>) -> Option<&'a str> {
    let Op::Gep { base: Value::Local(base), base_ty: Type::Ptr(0), indices, .. } = op else { return None };
    let [(ty, Value::Local(index))] = &indices[..] else { return None };
    (*ty == I64 && !defs.contains_key(base.as_str()) && f.param(base).is_some()).then_some(index.as_str())
}

/// `[ctaid.x, ntid.x, tid.x]` (their `i32` reads) if `op` is
/// `add i64 (mul i64 (zext ctaid.x), (zext ntid.x)), (zext tid.x)` in any operand order.
fn flat_index<'a>(op: &Op, def: &impl Fn(&Value) -> Option<&'a Op>) -> Option<Reads> {
    let (a, b) = binary(op, BinOp::Add)?;
    let ((reg, thread), mul) = [(a, b), (b, a)].into_iter().find_map(|(x, y)| Some((read_of(def, x)?, y)))?;
    if reg != "tid.x" {
        return None;
    }
    let (c, d) = binary(def(mul)?, BinOp::Mul)?;
    let (c, d) = (read_of(def, c)?, read_of(def, d)?);
    let (block, extent) = match (c.0, d.0) {
        ("ctaid.x", "ntid.x") => (c.1, d.1),
        ("ntid.x", "ctaid.x") => (d.1, c.1),
        _ => return None,
    };
    Some([block, extent, thread])
}

/// The operands of `op i64 a, b` (wrap flags allowed), both named values.
fn binary(op: &Op, want: BinOp) -> Option<(&Value, &Value)> {
    match op {
        Op::Bin { op, flags, ty, a, b }
            if *op == want
                && *ty == I64
                && !flags.exact
                && !flags.disjoint
                && a.as_local().is_some()
                && b.as_local().is_some() =>
        {
            Some((a, b))
        }
        _ => None,
    }
}

/// `(register, its i32 read)` if `v` is `zext [nneg] i32 %read to i64` of a special register
/// read (`[tail] call … i32 @llvm.nvvm.read.ptx.sreg.R()`).
fn read_of<'a>(def: &impl Fn(&Value) -> Option<&'a Op>, v: &Value) -> Option<(&'a str, Value)> {
    let Op::Cast { op: CastOp::ZExt, from, a: read, to, .. } = def(v)? else { return None };
    if *from != I32 || *to != I64 || read.as_local().is_none() {
        return None;
    }
    let Op::Call(call) = def(read)? else { return None };
    if call.ret != I32 || !call.args.is_empty() {
        return None;
    }
    Some((call.name()?.strip_prefix(SREG)?, read.clone()))
}

#[cfg(test)]
mod tests {
    use super::GRID_THREADS_U32;
    use crate::pipeline::ir::Module;
    use crate::pipeline::passes::State;

    /// The pass over `module`, as text.
    fn narrow(module: &str) -> String {
        let mut m = Module::parse(module);
        super::run(&mut m, &mut State::new(oxide_contract::config::DeviceDebugInfo::Lines));
        m.to_string()
    }

    /// A kernel whose entry defines the marker (or not) and branches to a fast copy computing
    /// the flat index `%i` (`index` gives its last line) and storing `x[i]`.
    fn kernel(marked: bool, index: &str) -> String {
        let marker = if marked { format!("%{GRID_THREADS_U32}") } else { "%oxide.uv.9".to_string() };
        format!(
            "define ptx_kernel void @k(ptr %x) {{\noxide.uv:\n  %g = call i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()\n  \
             {marker} = call {{ i32, i1 }} @llvm.umul.with.overflow.i32(i32 %g, i32 %g)\n  \
             %w = extractvalue {{ i32, i1 }} {marker}, 1\n  br i1 %w, label %start, label %oxide.fast.start\n\
             start:\n  ret void\n\
             oxide.fast.start:\n  \
             %oxide.fast.b = tail call noundef range(i32 0, 2147483647) i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()\n  \
             %oxide.fast.b64 = zext nneg i32 %oxide.fast.b to i64\n  \
             %oxide.fast.n = tail call range(i32 1, 1025) i32 @llvm.nvvm.read.ptx.sreg.ntid.x()\n  \
             %oxide.fast.n64 = zext nneg i32 %oxide.fast.n to i64, !dbg !3\n  \
             %oxide.fast.m = mul nuw nsw i64 %oxide.fast.n64, %oxide.fast.b64\n  \
             %oxide.fast.t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n  \
             %oxide.fast.t64 = zext i32 %oxide.fast.t to i64\n  \
             {index}\n  %a = getelementptr inbounds float, ptr %x, i64 %oxide.fast.i\n  \
             store float 0.0, ptr %a, align 4\n  ret void\n}}\n"
        )
    }

    const INDEX: &str = "%oxide.fast.i = add nuw nsw i64 %oxide.fast.t64, %oxide.fast.m, !dbg !4";

    #[test]
    fn the_fast_copy_computes_the_flat_index_in_32_bits() {
        let out = narrow(&kernel(true, INDEX));
        let want = "  %oxide.u32.1 = mul nuw i32 %oxide.fast.b, %oxide.fast.n\n  \
                    %oxide.u32.2 = add nuw i32 %oxide.u32.1, %oxide.fast.t\n  \
                    %oxide.fast.i = zext i32 %oxide.u32.2 to i64\n  %a = getelementptr";
        assert!(out.contains(want), "{out}");
        assert!(!out.contains("add nuw nsw i64"), "{out}");
    }

    #[test]
    fn only_marked_kernels_are_narrowed() {
        // Without `U`'s `nctaid.x * ntid.x <= 2^32` the index may not fit.
        let ir = kernel(false, INDEX);
        assert_eq!(narrow(&ir), ir);
    }

    #[test]
    fn only_the_fast_copy_is_narrowed() {
        // The same index in the checked copy (the block `start`) runs for every launch.
        let ir = kernel(true, INDEX).replace("start:\n  ret void\noxide.fast.start:\n", "oxide.fast.start:\nstart:\n");
        assert!(ir.contains("\nstart:\n  %oxide.fast.b = "), "{ir}");
        assert_eq!(narrow(&ir), ir);
    }

    #[test]
    fn addresses_in_other_blocks_move_next_to_the_index() {
        let ir = kernel(true, INDEX).replace(
            "\n  %a = getelementptr inbounds float, ptr %x, i64 %oxide.fast.i\n",
            "\n  br label %oxide.fast.then\noxide.fast.then:\n  \
             %a = getelementptr inbounds nuw [16 x i8], ptr %x, i64 %oxide.fast.i, !dbg !5\n  \
             %b = getelementptr float, ptr %a, i64 %oxide.fast.i\n",
        );
        assert!(ir.contains("oxide.fast.then:\n  %a = getelementptr"), "{ir}");
        let out = narrow(&ir);
        // `%a` moves (its base is a parameter); `%b`'s base is defined in the body.
        let want = "  %oxide.fast.i = zext i32 %oxide.u32.2 to i64\n  \
                    %a = getelementptr inbounds nuw [16 x i8], ptr %x, i64 %oxide.fast.i, !dbg !5\n  \
                    br label %oxide.fast.then\noxide.fast.then:\n  %b = getelementptr float, ptr %a, i64 %oxide.fast.i\n";
        assert!(out.contains(want), "{out}");
    }

    #[test]
    fn addresses_after_a_loop_stay_where_they_are() {
        // Moved before the loop, the address would stay in registers through it.
        let ir = kernel(true, INDEX).replace(
            "\n  %a = getelementptr inbounds float, ptr %x, i64 %oxide.fast.i\n",
            "\n  br label %oxide.fast.loop\noxide.fast.loop:\n  %c = load i1, ptr %x, align 1\n  \
             br i1 %c, label %oxide.fast.loop, label %oxide.fast.after\noxide.fast.after:\n  \
             %a = getelementptr inbounds float, ptr %x, i64 %oxide.fast.i\n",
        );
        let out = narrow(&ir);
        assert!(out.contains("%oxide.fast.i = zext i32 %oxide.u32.2 to i64\n  br label"), "{out}");
        assert!(out.contains("oxide.fast.after:\n  %a = getelementptr"), "{out}");
    }

    #[test]
    fn a_loop_start_is_left_as_it_is() {
        let ir = kernel(true, INDEX).replace(
            "  ret void\n}",
            "  br label %oxide.fast.loop\noxide.fast.loop:\n  \
             %oxide.fast.j = phi i64 [ %oxide.fast.i, %oxide.fast.start ], [ %oxide.fast.j, %oxide.fast.loop ]\n  \
             br label %oxide.fast.loop\n}",
        );
        assert!(ir.contains("phi i64 [ %oxide.fast.i,"), "{ir}");
        assert_eq!(narrow(&ir), ir);
    }

    #[test]
    fn other_indices_are_left_as_they_are() {
        // `ctaid.x * ntid.x + tid.y`, `+ 5`, and an `i32` add are not the flat index.
        for index in [
            INDEX.replace("%oxide.fast.t64, ", "%oxide.fast.b64, "),
            "%oxide.fast.i = add nuw nsw i64 %oxide.fast.m, 5".to_string(),
            "%oxide.fast.i = add i64 %oxide.fast.m, %oxide.fast.m".to_string(),
        ] {
            let ir = kernel(true, &index);
            assert_eq!(narrow(&ir), ir, "{index}");
        }
        let ir = kernel(true, INDEX).replace("sreg.tid.x()", "sreg.tid.y()");
        assert_eq!(narrow(&ir), ir);
    }
}
