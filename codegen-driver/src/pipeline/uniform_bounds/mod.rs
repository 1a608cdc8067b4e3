//! After the first `opt`: a kernel whose bounds checks all pass whenever a condition on
//! *uniform* values holds gets a second copy of its body without those checks, chosen at entry.
//!
//! `if let Some(c) = c.get_mut(i) { *c = a[i] + b[i] }` checks `i < a.len` and `i < b.len`
//! under the guard `i < c.len`: both pass when `c.len <= a.len` and `c.len <= b.len`, which
//! every thread of the launch computes alike. Likewise the transpose's
//! `if x < w && y + j < h { tile[(ty + j) * 33 + tx] = input[(y + j) * w + x] }` passes its checks
//! when `h * w <= input.len` and `(ntid.y - 1 + j) * 33 + ntid.x - 1 < 1056`. So the kernel
//! becomes
//!
//! ```text
//! oxide.uv:                       ; new entry: U = AND of each check's uniform condition
//!   …
//!   br i1 %oxide.uv.ok, label %oxide.fast.start, label %start
//! start: …                        ; the body as it was
//! oxide.fast.start: …             ; a renamed copy in which those checks are constant `false`
//! ```
//!
//! and the short second `opt` folds the fast copy's poison selects and failure flags away, so
//! it issues the instructions of an unchecked kernel (bench/notes.md, "perf4"). The thread and
//! block indices the first block reads are read in the new entry, so that their latency hides
//! behind the test instead of delaying each copy's first load.
//!
//! **What a check's condition is.** A check (`icmp` whose result feeds a failure marker or a
//! poison select, `lower/bounds.rs`) says in bounds when `idx < len` (or `idx <= lim`) with `len`
//! uniform. [`Bounder::upper`] builds, at the new entry, an upper bound `B` of `idx` from uniform
//! values only; the check's condition is `B < len`. `B` holds at the check because:
//! - **Uniform values** (kernel parameters, `%ntid`, `%nctaid`, constants, and pure arithmetic
//!   of them) are recomputed exactly at entry, with the flags that could make them poison
//!   (`nuw`, `nsw`, `exact`, `disjoint`, …) dropped, and no division by a non-constant or shift by
//!   a non-constant amount: so `U` is never poison.
//! - **Special registers**: `%tid.c <= %ntid.c - 1`, `%ctaid.c <= %nctaid.c - 1`, `%laneid <= 31`;
//!   `%ntid.c` is at most the launch bounds' block size (`"nvvm.maxntid"`: a launch with more
//!   threads fails), else 1024, and the entry's reads say so (`range`). A condition whose bound
//!   is below a constant limit for every value it can take is decided here, not tested at entry
//!   (`parts[t / 32]` of 8 warp sums under `launch_bounds(256)`).
//! - **Arithmetic** in unsigned terms: `add`, `or`, `xor` are at most the sum of their operands'
//!   bounds, `mul` the product, `shl` by a constant `k` the product with `2^k`, computed
//!   saturating (an overflow makes the bound `u64::MAX`, so the condition fails; where the
//!   operands' largest values show no overflow is possible, as a plain `add`/`mul`, never with
//!   flags that could make `U` poison). That holds
//!   whatever the operation's wrap flags: an unsigned result that wraps is below `2^width`, which
//!   is at most its mathematical value, itself at most the bound; without a wrap it *is* the
//!   mathematical value. `and`, `urem`, `zext`, `trunc` and `sub nuw` are at most an operand,
//!   `lshr`/`udiv` by a constant at most the operand's bound shifted/divided (monotone);
//!   `select` and `phi` at most the larger of their operands' bounds.
//! - **Differences**: `a - b` without `nuw` (Rust's wrapping release `c - n`; `c - 1` is
//!   `add c, -1`) is at most `B(a)` where `a >= b`, so `U` also asks `L(a) >= b` (`b` uniform,
//!   else `L(a) >= B(b)`), with `L` a lower bound of `a` built at entry (`Bounder::lower`): where
//!   the check runs, `a >= L(a) >= b`, the difference does not wrap and is at most `a`. `L` comes
//!   from guards `k < v`, `k <= v`, `v != k` (constant `k`: `y != 0` gives 1), constants, uniform
//!   values, `zext`, and `add`/`mul` of lower bounds where the operation cannot wrap (`nuw`, or
//!   the operands' largest values); else it is 0. Each is at most the value where the check runs,
//!   so their sums and products do not wrap there either.
//!   Anything else (a load, `sext`, a call) has no bound, and the check stays in both copies.
//! - **Guards**: an `llvm.assume(c)` makes `c` hold in the blocks its block strictly dominates
//!   (the launch bounds' `tid.x < 256`; a constant bound from one is combined with the operands'
//!   bound, the smaller wins). A conditional branch whose successor has it as its only
//!   predecessor makes its condition hold in every block that successor dominates
//!   (`icmp ult/ule/ugt/uge` and `samesign`
//!   signed ones, `eq` on the true edge, `ne` on the false one; through `and`/`or`/`select`
//!   forms of `&&`/`||` and `xor … true`). So `x < w` there bounds `x` by `w - 1` (for `w = 0`
//!   the block never runs and any bound is true of it; likewise `ntid - 1`, never with
//!   `ntid = 0`). A guard `v & (2^k - 1) == 0` rounds `v`'s bound down to a multiple of `2^k`.
//!   These facts are about SSA values,
//!   which keep the value they had at the guard wherever the guard dominates. A `phi`'s incoming
//!   values are bounded under the facts of their own edge instead (those at the end of the
//!   predecessor plus the condition that takes the edge: a rotated loop's latch `j < n` bounds
//!   the `j` it brings back), not those of the phi's block (a loop may have redefined them).
//! - **Multiples**: a value that is a multiple of `2^k` by its definition (`shl`/`mul` by
//!   constants, sums of multiples, a phi all of whose arms are multiples when the phi is: the
//!   induction `t = phi [0, …], [t + 32, …]`) is at most its bound rounded down to one, so
//!   sgemm's `a[row * n + t + tx]` with `t < n` gets `((n - 1) & -32) + 31`, in bounds for the
//!   `n × n` matrices it is launched with.
//! - **`!=` facts** (the false edge of `v == k`, the true edge of `v != k`, `k` uniform): where
//!   `v <= B`, also `v <= (B == k ? B - 1 : B)`, a select at entry (folded where `B` is `k`,
//!   as `x < n` and `x != n - 1` give `n - 2`). Where `B = k = 0` no `v` is both, the block never
//!   runs, and the wrapped `B - 1` is as true of it as any bound.
//! - **Row-major indices**: a guard `c < len` where `c = v * n + x` (or `v * n`), `n` uniform,
//!   computed without wrapping (`nuw`, or the operands' largest values) bounds the coordinate
//!   `v` too, where it has no guard of its own: `v * n <= c < len`. For a uniform `k` with a
//!   guard `v != k` (the stencil's interior `y != n - 1`), `U` asks `(k + 1) * n >= len`
//!   (saturating: a saturated product is below the true one); then `v < k + 1`, and with
//!   `v != k`, `v <= k - 1` (`n = 0` would need `len = 0`, and the guard never held). With
//!   several such `k`, each is a select of `k - 1` and `v`'s largest value instead, so that no
//!   one of them must hold. (`v <= (len - 1) / n` needs no `k`, but a 64-bit division at entry
//!   costs more than the checks it removes: the entry runs once per warp, as often as the body
//!   of a kernel with one point per thread.) So the stencil's `input[c + n]` under
//!   `x < n`, `c = y * n + x < out.len`, `x, y != n - 1` is at most `(n - 2) * n + n - 2 + n`,
//!   below `input.len = out.len = n * n`. Such an index `c + t` under a guard `c < len` of a slice
//!   length is bounded through `c`'s operands, not that guard, and only where that bound does
//!   not come from the launch's extent (`reads_past_a_guarded_length`).
//!
//! A condition `base + c < L` with constants `c`, `L` is `base < L - c`, so the checks at
//! constant offsets from one index (an unrolled loop) share one condition, the strictest. And
//! `base + 1 < len` follows from `base + y < len` where `y >= 1` wherever the first check runs (a
//! guard `k < y` there): the stencil's `c + 1` and `c + n` under `x < n` share one condition.
//!
//! **Flat launches.** A kernel that reads `%ctaid.z` and `%nctaid.y` linearises the whole grid
//! (`thread::index_1d`), which nearly every launch of it does in one dimension: its `U` also
//! asks `ntid.y = ntid.z = nctaid.y = nctaid.z = 1`, and its fast copy reads `.y`/`.z` thread
//! and block indices as 0 and those extents as 1 (exact under that `U`), so the index is
//! `ctaid.x * ntid.x + tid.x`. A 2D or 3D launch of such a kernel takes the checked copy. `U`
//! also asks `nctaid.x * ntid.x < 2^32`, so that index fits in 32 bits (`flat_index_u32.rs`).
//!
//! **32-bit indices.** Where every check against a slice length has a row-major index
//! (`(y + j) * w + x` over zero-extended `u32`s), `U` also asks those lengths to be at most
//! `2^32` and the fast copy computes the indices in 32 bits (`narrow.rs`, with why it is exact).
//!
//! **`U` as data.** The bounder builds `U` as a program of `oxide_contract::fast_launch` steps
//! (`program.rs`: flag-free arithmetic, compares, selects, casts, the launch's extents, min/max
//! and saturating operations over parameters and constants), which is printed into the new entry
//! block and recorded as it is in the manifest with the kernel's unchecked twin (`fast_twin.rs`):
//! the host launches the twin where `U` holds, and the twin runs this fast copy without testing
//! it. Values keep their IR types throughout: a parameter is read only at its own type.
//!
//! The check's `icmp` is then replaced by its in-bounds result in the fast copy only. Sound
//! because the copy runs only when `U` holds, and then every replaced `icmp` would have computed
//! exactly that result. `U` depends on uniform values only, so every thread of a block takes the
//! same copy, and the barriers and warp-wide operations of the body see all their threads (the
//! `.aligned` barriers require it). Only kernels are versioned (a device function's parameters
//! are not uniform), only when at least one check goes, and not kernels with stack slots (they
//! must stay in the entry block). The kernel carries both copies until `fast_twin.rs` moves the fast
//! one into the twin the host launches, leaving the kernel its checked copy (a debug build, which
//! has no twins, keeps both and the test).

use std::collections::{BTreeSet, HashMap, HashSet};

use oxide_contract::config::DeviceDebugInfo;
use oxide_contract::fast_launch::{
    BinOp as H, Condition as HostCondition, FastLaunch, Operand, Pred as HostPred, Step, twin_entry,
};

use super::ir::{
    BinOp, Block, CastOp, Flags, Function, I1, I32, I64, Inst, Module, Namer, Op, Type, Value, types::prefixed,
};
use super::passes::State;
use crate::markers::{
    BOUNDS_FAIL_IF as MARKER, FAST_COPY as FAST, GRID_THREADS_U32, VERSION_ENTRY as UV, is_poison_index,
};

mod body;
mod bounder;
mod facts;
mod narrow;
mod program;
#[cfg(test)]
mod tests;

use body::Body;
use bounder::Bounder;
use facts::{Fact, icmp_facts, negative};

pub(super) use super::ir::SREG;

/// A kernel's name and its entry test as the host evaluates it.
pub type NamedCondition = (String, HostCondition);

/// The pass (`passes.rs`): versions the kernels of a module with bounds checks (module docs),
/// and records the twins of a build that is not for the debugger (one kernel to step through).
pub fn run(module: &mut Module, state: &mut State) -> bool {
    let conditions = version(module);
    let Some(conditions) = conditions else { return false };
    if state.debuginfo != DeviceDebugInfo::Full {
        let twin = |(name, condition): NamedCondition| {
            let entry = twin_entry(&name, &condition);
            (name, FastLaunch { entry, condition })
        };
        state.fast = conditions.into_iter().map(twin).collect();
    }
    true
}

/// Versions the module's kernels where that removes checks; for each versioned kernel (by
/// name) its entry test `U` as the host evaluates it. `None` when nothing changed.
pub fn version(module: &mut Module) -> Option<Vec<NamedCondition>> {
    if !module.has_function(MARKER) {
        return None;
    }
    let launch_bounds = launch_bounds(module);
    let mut decls = BTreeSet::new();
    let mut conditions = Vec::new();
    let mut changed = false;
    for f in module.functions_mut().filter(|f| f.is_kernel) {
        let block_size = max_block_size(&launch_bounds, f);
        if let Some((blocks, condition)) = version_kernel(f, block_size, &mut decls) {
            f.blocks = blocks;
            conditions.extend(condition);
            changed = true;
        }
    }
    for decl in decls {
        module.declare(&decl);
    }
    changed.then_some(conditions)
}

/// One check: the `icmp` named `cond`, which is `true` when out of bounds if `oob_when_true`.
struct Check<'a> {
    cond: &'a str,
    oob_when_true: bool,
}

/// The most threads a block of `f` can have: the product of its `"nvvm.maxntid"` (launch
/// bounds, from `launch_bounds`; a launch with more fails), else the hardware's 1024.
fn max_block_size(launch_bounds: &HashMap<u32, u32>, f: &Function) -> u32 {
    f.attr_groups.iter().find_map(|g| launch_bounds.get(g).copied()).unwrap_or(1024).min(1024)
}

/// The module's attribute groups that have `"nvvm.maxntid"`, with the product of its extents.
fn launch_bounds(module: &Module) -> HashMap<u32, u32> {
    module
        .lines()
        .filter_map(|l| {
            let group = l.strip_prefix("attributes #")?.split(' ').next()?.parse().ok()?;
            let dims = l.split("\"nvvm.maxntid\"=\"").nth(1)?.split('"').next()?;
            Some((group, dims.split(',').map(|d| d.trim().parse::<u32>().ok()).product::<Option<u32>>()?))
        })
        .collect()
}

/// The kernel `f` versioned (its new blocks), with its entry test for the host where its name
/// can be launched by; `None` where versioning removes no check worth a copy.
fn version_kernel(
    f: &Function,
    block_size: u32,
    decls: &mut BTreeSet<String>,
) -> Option<(Vec<Block>, Option<NamedCondition>)> {
    let insts = || f.blocks.iter().flat_map(|b| &b.insts);
    let ours = |n: &str| n.contains(FAST) || n.contains(UV);
    if f.names().iter().any(|n| ours(n)) || insts().any(|i| matches!(i.op(), Op::Alloca { .. })) {
        return None;
    }
    let entry_label = f.blocks[0].label.clone();
    if entry_label.is_none() && f.has_numbered_names() {
        // The unnamed entry has the first free number; a label in front would shift the others.
        return None;
    }
    let body = Body::new(f);
    let lengths = slice_lengths(f);
    let checks = find_checks(f);
    if checks.is_empty() {
        return None;
    }
    // A kernel that linearises the whole grid (`thread::index_1d`: `%ctaid.z` and `%nctaid.y`)
    // is launched flat almost always: its fast copy also assumes a 1D launch, where `.y`/`.z`
    // thread and block indices are 0 and extents 1, and the index is `ctaid.x * ntid.x + tid.x`.
    // Its bounds are built under that launch too (`U` asks for it), so the entry test bounds
    // `ctaid.x * ntid.x + tid.x`, not a saturating product of six extents.
    let flat = body.calls(&format!("{SREG}ctaid.z")) && body.calls(&format!("{SREG}nctaid.y"));
    let mut bounder = Bounder::new(&body, flat, block_size);
    // Each proven check's `icmp` and the value it has in bounds.
    let mut proven: Vec<(&str, bool)> = Vec::new();
    // Proven checks whose index the fast copy computes in 32 bits: `icmp` → index.
    let mut narrowed: HashMap<&str, &Value> = HashMap::new();
    // Proven checks against a slice length: (`icmp`, index, length, worth narrowing).
    let mut against_lengths: Vec<(&str, &Value, Operand, bool)> = Vec::new();
    // Conditions `lhs pred rhs` on `i64`s; with a constant `rhs`, one per `(lhs, pred)`.
    let mut conditions: Vec<Condition> = Vec::new();
    // Conditions already built as `i1`s (`sub` that cannot wrap below zero: `Bounder::upper`).
    let mut sides: Vec<Operand> = Vec::new();
    for check in &checks {
        let cond = Value::local(check.cond);
        let Some(block) = body.block_of(&cond) else { continue };
        if !body.cfg.reachable[block] {
            continue;
        }
        let Some(Op::Icmp { pred, ty, a, b, .. }) = body.inst(&cond) else { continue };
        // The in-bounds outcome of the icmp, as a fact `idx < len` / `idx <= lim`.
        let in_bounds = !check.oob_when_true;
        let &[fact] = &icmp_facts(*pred, a, b, ty, in_bounds)[..] else { continue };
        if fact.ne {
            continue;
        }
        let facts = body.facts_at(block, false);
        bounder.memo.clear();
        bounder.memo_lower.clear();
        bounder.side.clear();
        bounder.skip_guard = reads_past_a_guarded_length(&body, fact.lhs, &facts, &lengths);
        let extents_before = bounder.extents_used;
        let Some(limit) = bounder.exact64(fact.rhs, ty) else { continue };
        let Some(bound) = bounder.upper(fact.lhs, ty, Some(&facts)) else { continue };
        if bound == Operand::Const(u64::MAX) || bounder.side.contains(&Operand::Const(0)) {
            // Saturated: the condition could never hold.
            continue;
        }
        if bounder.skip_guard.is_some() && bounder.extents_used != extents_before {
            // The guarded index bounded by the launch's extent, which grids round up past the
            // guarded length: the condition would fail for the usual launch.
            continue;
        }
        for side in bounder.side.drain(..) {
            if side != Operand::Const(1) && !sides.contains(&side) {
                sides.push(side);
            }
        }
        let pred = if fact.strict { HostPred::Ult } else { HostPred::Ule };
        // The bound's largest value (launch bounds: `ntid.x <= 256`) may decide it already.
        let largest = bounder.max_of(bound);
        let holds = |x: u128, y: u128| if fact.strict { x < y } else { x <= y };
        match (konst(bound), konst(limit)) {
            (Some(x), Some(y)) if holds(x.into(), y.into()) => {}
            (Some(_), Some(_)) => continue,
            (_, Some(y)) if holds(largest, y.into()) => {}
            _ => {
                let (base, offset) = bounder.split(bound);
                let condition = match (konst(limit), base) {
                    // `base + c < L` is `base < L - c`: checks at constant offsets share one.
                    (Some(l), Some(base)) if offset > 0 => {
                        let Some(rest) = l.checked_sub(offset).filter(|&r| !fact.strict || r > 0) else { continue };
                        Condition::new(base, 0, pred, Operand::Const(rest))
                    }
                    // `base + c < len`: kept apart, so the largest `c` stands for the others.
                    (None, Some(base)) if offset > 0 => Condition::new(base, offset, pred, limit),
                    _ => Condition::new(bound, 0, pred, limit),
                };
                // The uniform values at least 1 where the check runs (`x < n`: `n`), each read
                // at its own fact's type.
                let mut positive = Vec::new();
                for f in facts.iter().filter(|f| f.strict && !f.ne) {
                    positive.extend(bounder.exact64(f.rhs, f.ty));
                }
                let condition = Condition { positive, ..condition };
                add_condition(&mut conditions, condition, &bounder.sums);
            }
        }
        proven.push((check.cond, in_bounds));
        if konst(limit).is_none() {
            let worth = !flat && *ty == I64 && narrow::narrowable(&body, fact.lhs);
            against_lengths.push((check.cond, fact.lhs, limit, worth));
        }
    }
    // The checks against slice lengths compute their index in 32 bits in the fast copy
    // (`narrow.rs`) when every one of them is worth it: where one keeps its 64-bit index (the
    // stencil's `c + 1`), the others' 64-bit arithmetic stays anyway, and 32-bit copies of it
    // would only add to it. Each such length is then asked to be at most 2^32.
    if !against_lengths.is_empty() && against_lengths.iter().all(|c| c.3) {
        for (cond, idx, length, _) in against_lengths {
            let at_most_2_32 = Condition::new(length, 0, HostPred::Ule, Operand::Const(1 << 32));
            add_condition(&mut conditions, at_most_2_32, &bounder.sums);
            narrowed.insert(cond, idx);
        }
    }
    if proven.is_empty() || !worth_a_copy(proven.len(), checks.len(), flat) {
        return None;
    }
    let mut flat_condition = None;
    if flat {
        // Each extent is at least 1, so their `or` is 1 exactly when all are 1.
        let mut any = Operand::Const(1);
        for reg in ["ntid.y", "ntid.z", "nctaid.y", "nctaid.z"] {
            let n = bounder.sreg(reg);
            any = bounder.emit(Step::Binary { op: H::Or, bits: 32, a: any, b: n });
        }
        flat_condition = Some(bounder.cmp(HostPred::Eq, 32, any, Operand::Const(1)));
    }
    // A flat launch of at most 2^32 threads: the fast copy's index then fits in 32 bits
    // (`flat_index_u32.rs`, which finds the condition by its name). With at most `block_size`
    // threads per block that is `nctaid.x <= 2^32 / block_size`: one compare, where the product
    // `nctaid.x * ntid.x` would put a uniform multiply on the way to the entry's branch. Only
    // for kernels with a loop: measured on the H200 (bench/notes.md, perf5), the 32-bit index
    // made n-body 2 % faster and the straight-line vecadd, saxpy, axpy_bf16 1-2 % slower (the
    // compare and the moved addresses sit on the way to their only loads).
    let mut grid_condition = None;
    if flat && body.cfg.has_loop() {
        let blocks = bounder.sreg("nctaid.x");
        let most = ((1u64 << 32) / u64::from(block_size)).min(u64::from(i32::MAX as u32));
        let step = Step::Compare { pred: HostPred::Ule, bits: 32, a: blocks, b: Operand::Const(most) };
        grid_condition = Some(bounder.program.emit_named(step, GRID_THREADS_U32));
    }
    let conditions: Vec<Operand> = conditions
        .into_iter()
        .map(|c| match bounder.minus_one.get(&c.base) {
            // `X - 1 < len` is `X <= len` (see `sub1` for `X = 0`).
            Some(&x) if c.offset == 0 && c.pred == HostPred::Ult => bounder.cmp(HostPred::Ule, 64, x, c.rhs),
            _ => {
                let lhs = if c.offset > 0 {
                    bounder.emit(Step::Binary { op: H::Add, bits: 64, a: c.base, b: Operand::Const(c.offset) })
                } else {
                    c.base
                };
                bounder.cmp(c.pred, 64, lhs, c.rhs)
            }
        })
        .chain(sides)
        .chain(flat_condition)
        .chain(grid_condition)
        .collect();
    // `U`: their conjunction, the program's last step.
    let mut answer = Operand::Const(1);
    for c in conditions.iter().copied().chain(conditions.is_empty().then_some(Operand::Const(1))) {
        answer = bounder.program.push(Step::Binary { op: H::And, bits: 1, a: answer, b: c });
    }
    let host =
        (!f.name.starts_with('"')).then(|| (f.name.clone(), HostCondition { steps: bounder.program.steps.clone() }));
    let (mut entry, answer) = bounder.program.print(f, block_size, answer, decls);
    // The index registers both copies read first are read once, before the test: ptxas then
    // issues their `S2R` at the kernel's first instruction and the test hides its latency
    // (otherwise each copy starts by waiting for it, in front of its first load).
    let hoisted = early_index_reads(&f.blocks[0], flat);
    for (reg, call) in &hoisted {
        entry.push(Inst::assign(&format!("{UV}.{reg}"), call.clone()));
    }
    let read_early = |inst: &Inst| {
        let reg = index_register(inst)?;
        hoisted.iter().any(|(r, _)| *r == reg).then(|| Value::Local(format!("{UV}.{reg}")))
    };
    let entry_name = entry_label.unwrap_or_else(|| "oxide.orig".to_string());
    entry.push(Inst::effect(Op::CondBr { cond: answer, then: fast_name(&entry_name), els: entry_name.clone() }));
    let mut test = Block::new(UV);
    test.lead.clear();
    test.insts = entry;
    // The checked copy: as it was, its index registers read from the entry's.
    let same_read = |inst: &Inst| -> Inst {
        match (inst.result(), read_early(inst)) {
            (Some(r), Some(hoisted)) => Inst::assign(r, add_zero(hoisted)),
            _ => inst.clone(),
        }
    };
    let mut checked: Vec<Block> = f.blocks.clone();
    checked[0].relabel(Some(entry_name));
    for block in &mut checked {
        block.insts = block.insts.iter().map(same_read).collect();
    }
    // The fast copy.
    let mut defined: HashSet<&str> = body.defs.keys().copied().collect();
    defined.extend(f.blocks.iter().filter_map(|b| b.label.as_deref()));
    let replaced: HashMap<&str, bool> = proven.iter().copied().collect();
    let rename = |inst: &Inst| inst.rename(|n| defined.contains(n).then(|| fast_name(n)));
    let mut n32 = Namer::new(f, &format!("{FAST}n32."));
    let mut n64 = Namer::new(f, &format!("{FAST}n64."));
    let mut fast: Vec<Block> = Vec::new();
    for (b, block) in checked.iter().enumerate() {
        let mut copy = Block::new(&fast_name(block.label.as_deref().unwrap_or("oxide.orig")));
        let original = &f.blocks[b];
        for inst in &original.insts {
            if let Some(r) = inst.result() {
                let name = fast_name(r);
                if let Some(&value) = replaced.get(r) {
                    let and = Op::Bin {
                        op: BinOp::And,
                        flags: Flags::NONE,
                        ty: I1,
                        a: Value::bool(true),
                        b: Value::bool(value),
                    };
                    copy.insts.push(Inst::assign(&name, and));
                    continue;
                }
                if flat && let Some(value) = flat_value(inst) {
                    copy.insts.push(Inst::assign(&name, add_zero(Value::int(value, &I32))));
                    continue;
                }
                if let Some(hoisted) = read_early(inst) {
                    copy.insts.push(Inst::assign(&name, add_zero(hoisted)));
                    continue;
                }
                if let Some(select) = narrowed_select(inst, &narrowed, &body, &mut n32, &mut n64) {
                    copy.insts.extend(select.iter().map(rename));
                    continue;
                }
            }
            let mut renamed = rename(inst);
            // A marker of a proven check records nothing (`deferred_traps` skips `i1 false`).
            if let Some(Op::Call(call)) = (inst.callee() == Some(MARKER)).then(|| inst.op())
                && let [(_, Value::Local(cond))] = &call.args[..]
                && let Some(&value) = replaced.get(cond.as_str())
            {
                renamed = renamed.replace_use(&fast_name(cond), &Value::bool(value));
            }
            copy.insts.push(renamed);
        }
        fast.push(copy);
    }
    let mut blocks = vec![test];
    blocks.extend(checked);
    blocks.extend(fast);
    Some((blocks, host))
}

fn konst(v: Operand) -> Option<u64> {
    match v {
        Operand::Const(c) => Some(c),
        _ => None,
    }
}

/// `v + 0` as an `i32` (a copy of `v` under another name).
fn add_zero(v: Value) -> Op {
    Op::Bin { op: BinOp::Add, flags: Flags::NONE, ty: I32, a: v, b: Value::int(0, &I32) }
}

/// A proven check's poison select `%s = select i1 %oob, i64 POISON, i64 %idx` with `%idx`
/// computed in 32 bits before it (`narrow.rs`), in the body's names; `None` for others.
fn narrowed_select(
    inst: &Inst,
    narrowed: &HashMap<&str, &Value>,
    body: &Body<'_>,
    n32: &mut Namer,
    n64: &mut Namer,
) -> Option<Vec<Inst>> {
    let Op::Select { cond, ty, a, b } = inst.op() else { return None };
    let idx = *narrowed.get(cond.as_local()?)?;
    if *ty != I64 || b != idx || a.as_local().is_some() {
        return None;
    }
    let mut lines = Vec::new();
    let low = narrow::emit_u32(body, idx, &mut || n32.fresh(), &mut lines)?;
    let wide = n64.fresh();
    lines.push(Inst::assign(&wide, Op::Cast { op: CastOp::ZExt, flags: Flags::NONE, from: I32, a: low, to: I64 }));
    lines.push(inst.with_op(Op::Select { cond: cond.clone(), ty: I64, a: a.clone(), b: Value::local(&wide) }));
    Some(lines)
}

/// If `idx` is `v + t` (`t` not 0 and not negative) where a guard says `v < len` with `len` a
/// slice's length (the stencil's `input[c + n]` under `out.get_mut(c)`), that `v`: bounded by its
/// guard, the condition would ask for `input` longer than `out`, false for the equal lengths such
/// a kernel is launched with. `v` is then bounded by its operands (`Bounder::skip_guard`), and
/// only where that bound comes from other guards (the stencil's `x < n`, `y != n - 1`), not
/// from the launch's extent, which grids round up past the length.
fn reads_past_a_guarded_length<'a>(
    body: &Body<'a>,
    idx: &Value,
    facts: &[Fact<'a>],
    lengths: &HashSet<&str>,
) -> Option<&'a Value> {
    let Some(Op::Bin { op: BinOp::Add | BinOp::Or, ty, a, b, .. }) = body.inst(idx) else { return None };
    let guarded =
        |v: &Value| facts.iter().any(|f| !f.ne && f.lhs == v && f.rhs.as_local().is_some_and(|n| lengths.contains(n)));
    let past = |t: &Value| t.as_int(ty) != Some(0) && !t.as_int(ty).is_some_and(|c| negative(c, ty));
    if guarded(a) && past(b) {
        Some(a)
    } else if guarded(b) && past(a) {
        Some(b)
    } else {
        None
    }
}

/// The parameters of `f` that are slice lengths: an `i64` right after a `ptr` (a slice is
/// passed as its pointer and its length, `lower/entry.rs`).
fn slice_lengths(f: &Function) -> HashSet<&str> {
    f.params
        .windows(2)
        .filter(|w| matches!(w[0].ty, Type::Ptr(_)) && w[1].ty == I64)
        .filter_map(|w| w[1].name.as_deref())
        .collect()
}

/// One condition of `U`: `base + offset pred rhs` on `i64`s.
struct Condition {
    base: Operand,
    offset: u64,
    pred: HostPred,
    rhs: Operand,
    /// Built values that are at least 1 where the check runs.
    positive: Vec<Operand>,
}

impl Condition {
    fn new(base: Operand, offset: u64, pred: HostPred, rhs: Operand) -> Condition {
        let pred = if pred == HostPred::Ult { HostPred::Ult } else { HostPred::Ule };
        Condition { base, offset, pred, rhs, positive: Vec::new() }
    }
}

/// Adds `condition` to `conditions` unless one there implies it; of two on the same `base` and
/// `pred`, keeps the stronger: the smaller constant `rhs`, or with the same `rhs` the larger
/// `offset` (`base + offset` does not wrap where the check can run: see `Bounder::add_sat`).
/// `base + 1 pred rhs` is implied by `(base + y) pred rhs` where `y >= 1` wherever its check
/// runs (the stencil's `c + 1` and `c + n` under `x < n`); `sums` has the built sums `base + y`.
fn add_condition(conditions: &mut Vec<Condition>, condition: Condition, sums: &HashMap<Operand, (Operand, Operand)>) {
    // `sum` is `one.base + y` with `y` positive where `one`'s check runs.
    let covers = |sum: &Condition, one: &Condition| {
        let same = sum.offset == 0 && one.offset == 1 && sum.pred == one.pred && sum.rhs == one.rhs;
        same && sums.get(&sum.base).is_some_and(|(a, b)| {
            (*a == one.base && one.positive.contains(b)) || (*b == one.base && one.positive.contains(a))
        })
    };
    if conditions.iter().any(|c| covers(c, &condition)) {
        return;
    }
    if let Some(k) = conditions.iter().position(|c| covers(&condition, c)) {
        conditions[k] = condition;
        return;
    }
    for c in conditions.iter_mut() {
        if c.base != condition.base || c.pred != condition.pred {
            continue;
        }
        // One condition for several checks: positive only what is positive at all of them.
        if c.rhs == condition.rhs {
            c.offset = c.offset.max(condition.offset);
            c.positive.retain(|p| condition.positive.contains(p));
            return;
        }
        if let (Some(old), Some(new), 0, 0) = (konst(c.rhs), konst(condition.rhs), c.offset, condition.offset) {
            c.rhs = Operand::Const(old.min(new));
            c.positive.retain(|p| condition.positive.contains(p));
            return;
        }
    }
    conditions.push(condition);
}

/// The thread and block index registers (`tid.x`, `ctaid.y`, …) that the kernel's first block
/// reads, each once, as (register, the read without its attachments): they are read at the
/// kernel's start whichever copy runs. In a flat kernel only the `.x` ones (its fast copy reads
/// the others as 0).
fn early_index_reads(first: &Block, flat: bool) -> Vec<(String, Op)> {
    let mut reads: Vec<(String, Op)> = Vec::new();
    for inst in &first.insts {
        let Some(reg) = index_register(inst) else { continue };
        if (flat && !reg.ends_with("_x")) || reads.iter().any(|(r, _)| *r == reg) {
            continue;
        }
        let Op::Call(call) = inst.op() else { continue };
        let mut call = call.clone();
        call.tail = None;
        reads.push((reg, Op::Call(call)));
    }
    reads
}

/// The special register an instruction reads without arguments, if it reads one (`tid.x`).
fn register_read(inst: &Inst) -> Option<&str> {
    let Op::Call(call) = inst.op() else { return None };
    if !call.args.is_empty() {
        return None;
    }
    call.name()?.strip_prefix(SREG)
}

/// `tid_x`, `ctaid_y`, … when `inst` reads that index register (a name usable in IR values).
fn index_register(inst: &Inst) -> Option<String> {
    let (base, axis) = register_read(inst)?.split_once('.')?;
    (["tid", "ctaid"].contains(&base) && ["x", "y", "z"].contains(&axis)).then(|| format!("{base}_{axis}"))
}

/// In a 1D launch: the value of a `.y`/`.z` special register `inst` reads, if it reads one.
fn flat_value(inst: &Inst) -> Option<u64> {
    match register_read(inst)? {
        "tid.y" | "tid.z" | "ctaid.y" | "ctaid.z" => Some(0),
        "ntid.y" | "ntid.z" | "nctaid.y" | "nctaid.z" => Some(1),
        _ => None,
    }
}

/// `name` (a value or label name without `%`, maybe quoted) in the fast copy.
fn fast_name(name: &str) -> String {
    prefixed(FAST, name)
}

/// Whether a fast copy pays for its entry test (~10–40 instructions per warp, most of them
/// uniform): when it removes at least half of the kernel's checks, or the grid linearisation of a
/// flat launch. stencil5 (bench) proved 1 of its 6 checks before `!=` facts, lower bounds and
/// row-major coordinate bounds (it never tests `y < n`) and ran 6 % more instructions with a copy
/// than without (bench/notes.md, perf4 measured); it now proves all 6.
fn worth_a_copy(proven: usize, checks: usize, flat: bool) -> bool {
    flat || 2 * proven >= checks
}

/// The checks of a body: conditions of failure markers (true when out of bounds) and of poison
/// selects (`lower/bounds.rs`), each once.
fn find_checks<'a>(f: &'a Function) -> Vec<Check<'a>> {
    let mut found: Vec<Check<'a>> = Vec::new();
    let mut seen: HashMap<&str, bool> = HashMap::new();
    let mut conflicting: HashSet<&str> = HashSet::new();
    for inst in f.blocks.iter().flat_map(|b| &b.insts) {
        let mut note = |cond: &'a Value, oob_when_true: bool| {
            let Some(cond) = cond.as_local() else { return };
            match seen.insert(cond, oob_when_true) {
                None => found.push(Check { cond, oob_when_true }),
                Some(before) if before != oob_when_true => {
                    conflicting.insert(cond);
                }
                Some(_) => {}
            }
        };
        match inst.op() {
            Op::Call(call) if call.name() == Some(MARKER) => {
                if let [(_, cond)] = &call.args[..] {
                    note(cond, true);
                }
            }
            Op::Select { cond, ty, a, b } => {
                let is_poison = |v: &Value| v.as_int(ty).is_some_and(is_poison_index);
                if is_poison(a) && !is_poison(b) {
                    note(cond, true);
                } else if is_poison(b) && !is_poison(a) {
                    note(cond, false);
                }
            }
            _ => {}
        }
    }
    found.retain(|c| !conflicting.contains(c.cond));
    found
}
