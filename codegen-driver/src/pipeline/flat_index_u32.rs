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

use super::ir::Module;
use super::ir_functions::{SREG, is_plain_name, split_blocks, strip_metadata, successor_indices, value_names};
use super::passes::{State, on_text};
use super::uniform_bounds::{FAST, GRID_THREADS_U32};
use std::collections::{HashMap, HashSet};

/// The pass (`passes.rs`).
pub fn run(module: &mut Module, _: &mut State) -> bool {
    on_text(module, narrow)
}

/// The module with the flat index of each marked kernel's fast copy in 32 bits (module docs).
pub fn narrow(module: &str) -> String {
    if !module.contains(&format!("%{GRID_THREADS_U32} = ")) {
        return module.to_string();
    }
    super::ir_functions::rewrite_bodies(module, rewrite_function)
}

fn rewrite_function(body: &[&str]) -> Vec<String> {
    let marker = format!("%{GRID_THREADS_U32} = ");
    if !body.iter().any(|l| l.trim_start().starts_with(&marker)) {
        return body.iter().map(|l| l.to_string()).collect();
    }
    let defs: HashMap<&str, &str> = body
        .iter()
        .filter_map(|l| l.trim_start().split_once(" = "))
        .filter(|(lhs, _)| is_plain_name(lhs))
        .map(|(lhs, rhs)| (lhs, strip_metadata(rhs)))
        .collect();
    // A loop's start value (a grid-stride loop's first index) stays: `llc`'s loop strength
    // reduction rebuilds the `i64` sum from the 32-bit parts, two more instructions (bench
    // `block_sum`).
    let phi_inputs: HashSet<&str> = body
        .iter()
        .filter_map(|l| l.trim_start().split_once(" = ").filter(|(_, rhs)| rhs.starts_with("phi ")))
        .flat_map(|(_, rhs)| value_names(rhs))
        .collect();
    // Each line's block, as `split_blocks` numbers them, and each block's predecessors.
    let split = split_blocks(body);
    let mut blocks = Vec::with_capacity(body.len());
    for (b, block) in split.iter().enumerate() {
        let lines = block.lines.len() + usize::from(block.label.is_some());
        blocks.extend(std::iter::repeat_n(b, lines));
    }
    let mut preds = vec![Vec::new(); split.len()];
    for (b, succs) in successor_indices(&split).into_iter().enumerate() {
        for s in succs {
            preds[s].push(b);
        }
    }
    let in_fast: Vec<bool> =
        split.iter().map(|b| b.label.as_deref().is_some_and(|l| l.trim_start_matches('"').starts_with(FAST))).collect();
    let mut narrowed: HashMap<&str, (usize, [&str; 3])> = HashMap::new();
    for (i, line) in body.iter().enumerate() {
        let flat = in_fast[blocks[i]].then(|| line.trim_start().split_once(" = ")).flatten();
        if let Some((lhs, rhs)) = flat
            && !phi_inputs.contains(lhs)
            && let Some(reads) = flat_index(&defs, strip_metadata(rhs))
        {
            narrowed.insert(lhs, (i, reads));
        }
    }
    // Addresses `p + index` (`p` a parameter) in a block guarded by the index's block (its only
    // predecessor: `if i < n { … }`) move next to the index: `llc` selects `mul.wide.u32` only
    // where it sees the `zext` (it selects one block at a time), and a `getelementptr` computes
    // the same value wherever the index is defined. bench `vecadd_v4` has its accesses in the
    // guarded block; `speculative-execution` hoisted `vecadd`'s. Not from farther: an address
    // moved before a loop would stay in registers through it (`remat_thread_index.rs`).
    let mut hoisted: HashMap<usize, Vec<usize>> = HashMap::new();
    for (j, line) in body.iter().enumerate() {
        if let Some(index) = address_of_parameter(line, &defs)
            && let Some(&(i, _)) = narrowed.get(index)
            && preds[blocks[j]] == [blocks[i]]
        {
            hoisted.entry(i).or_default().push(j);
        }
    }
    let moved: HashSet<usize> = hoisted.values().flatten().copied().collect();
    let mut out = Vec::with_capacity(body.len() + 3 * narrowed.len());
    for (i, line) in body.iter().enumerate() {
        if moved.contains(&i) {
            continue;
        }
        let Some((lhs, _)) = line.trim_start().split_once(" = ") else {
            out.push(line.to_string());
            continue;
        };
        let Some(&(_, [block, extent, thread])) = narrowed.get(lhs) else {
            out.push(line.to_string());
            continue;
        };
        // Named after the line, unique in the function whatever the index is called.
        let (mul, sum) = (format!("%oxide.u32.{i}.mul"), format!("%oxide.u32.{i}.index"));
        out.push(format!("  {mul} = mul nuw i32 {block}, {extent}"));
        out.push(format!("  {sum} = add nuw i32 {mul}, {thread}"));
        out.push(format!("  {lhs} = zext i32 {sum} to i64"));
        out.extend(hoisted.get(&i).into_iter().flatten().map(|&j| body[j].to_string()));
    }
    out
}

/// The index of `line` if it is `%a = getelementptr [flags] T, ptr %p, i64 %index` with `%p` a
/// parameter (defined nowhere in the body).
fn address_of_parameter<'a>(line: &'a str, defs: &HashMap<&str, &str>) -> Option<&'a str> {
    let (_, rhs) = line.trim_start().split_once(" = ")?;
    let parts: Vec<&str> = strip_metadata(rhs).strip_prefix("getelementptr ")?.split(", ").collect();
    let [_, base, index] = parts[..] else { return None };
    let base = base.strip_prefix("ptr ")?;
    let index = index.strip_prefix("i64 ")?;
    (is_plain_name(base) && !defs.contains_key(base) && is_plain_name(index)).then_some(index)
}

/// `[ctaid.x, ntid.x, tid.x]` (their `i32` reads) if `rhs` is
/// `add i64 (mul i64 (zext ctaid.x), (zext ntid.x)), (zext tid.x)` in any operand order.
fn flat_index<'a>(defs: &HashMap<&'a str, &'a str>, rhs: &'a str) -> Option<[&'a str; 3]> {
    let (a, b) = binary(rhs, "add")?;
    let (sum_reads, mul) = [(a, b), (b, a)].into_iter().find_map(|(x, y)| Some((read_of(defs, x)?, y)))?;
    let (sreg, thread) = sum_reads;
    if sreg != "tid.x" {
        return None;
    }
    let (c, d) = binary(defs.get(mul)?, "mul")?;
    let (c, d) = (read_of(defs, c)?, read_of(defs, d)?);
    let [block, extent] = match (c.0, d.0) {
        ("ctaid.x", "ntid.x") => [c.1, d.1],
        ("ntid.x", "ctaid.x") => [d.1, c.1],
        _ => return None,
    };
    Some([block, extent, thread])
}

/// The operands of `op [flags] i64 a, b`.
fn binary<'a>(rhs: &'a str, op: &str) -> Option<(&'a str, &'a str)> {
    let rest = rhs.strip_prefix(op)?.strip_prefix(' ')?;
    let rest = rest.trim_start_matches("nuw ").trim_start_matches("nsw ");
    let (a, b) = rest.strip_prefix("i64 ")?.split_once(", ")?;
    (is_plain_name(a) && is_plain_name(b)).then_some((a, b))
}

/// `(register, its i32 read)` if `v` is `zext [nneg] i32 %read to i64` of a special register.
fn read_of<'a>(defs: &HashMap<&'a str, &'a str>, v: &str) -> Option<(&'a str, &'a str)> {
    let rhs = defs.get(v)?;
    let rest = rhs.strip_prefix("zext ")?;
    let read = rest.trim_start_matches("nneg ").strip_prefix("i32 ")?.strip_suffix(" to i64")?;
    if !is_plain_name(read) {
        return None;
    }
    let call = defs.get(read)?;
    // `[tail] call [noundef] [range(i32 a, b)] i32 @llvm.nvvm.read.ptx.sreg.R()`.
    let (head, reg) = call.split_once(SREG)?;
    let is_call = head.starts_with("call ") || head.starts_with("tail call ");
    (is_call && head.ends_with(" i32 @")).then_some(())?;
    Some((reg.strip_suffix("()")?, read))
}

#[cfg(test)]
mod tests {
    use super::{GRID_THREADS_U32, narrow};

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
        let want = "  %oxide.u32.15.mul = mul nuw i32 %oxide.fast.b, %oxide.fast.n\n  \
                    %oxide.u32.15.index = add nuw i32 %oxide.u32.15.mul, %oxide.fast.t\n  \
                    %oxide.fast.i = zext i32 %oxide.u32.15.index to i64\n  %a = getelementptr";
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
        let want = "  %oxide.fast.i = zext i32 %oxide.u32.15.index to i64\n  \
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
        assert!(out.contains("%oxide.fast.i = zext i32 %oxide.u32.15.index to i64\n  br label"), "{out}");
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
