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
//! **The host's copy of `U`.** The entry test's lines are also parsed into an
//! `oxide_contract::fast_launch::Condition` (only the forms written here: flag-free arithmetic,
//! compares, selects, extents, min/max and saturating intrinsics; a kernel with another form gets
//! no twin), which the manifest records with the kernel's unchecked twin (`fast_twin.rs`): the
//! host launches the twin where `U` holds, and the twin runs this fast copy without testing it.
//!
//! The check's `icmp` is then replaced by its in-bounds result in the fast copy only. Sound
//! because the copy runs only when `U` holds, and then every replaced `icmp` would have computed
//! exactly that result. `U` depends on uniform values only, so every thread of a block takes the
//! same copy, and the barriers and warp-wide operations of the body see all their threads (the
//! `.aligned` barriers require it). Only kernels are versioned (a device function's parameters
//! are not uniform), only when at least one check goes, and not kernels with stack slots (they
//! must stay in the entry block). The fast copy doubles the kernel's code (PTX and SASS size).

use std::collections::{BTreeSet, HashMap, HashSet};

use oxide_contract::config::DeviceDebugInfo;
use oxide_contract::fast_launch::Condition as HostCondition;

use super::ir::Module;
use super::passes::{State, on_text};

use super::ir_functions::{Block, SREG, split_blocks, strip_metadata, successor_indices, terminator_start};
use crate::markers::BOUNDS_FAIL_IF as MARKER;
use crate::markers::POISON_OFFSET;

mod bounder;
mod function;
mod ir;
mod narrow;
#[cfg(test)]
mod tests;

use bounder::Bounder;
use function::Function;
use ir::{Fact, Inst, constant, icmp_facts, negative, parse};

/// Prefix of the fast copy's names (`flat_index_u32.rs` finds its blocks by it).
pub(super) const FAST: &str = "oxide.fast.";
/// Label of the new entry block and prefix of the names in it (`fast_twin.rs` finds it).
pub(super) const UV: &str = "oxide.uv";
/// Name (without `%`) of a flat kernel's entry compare `nctaid.x <= 2^32 / B` (`U` asks it;
/// `flat_index_u32.rs` narrows the fast copies of the kernels that have it).
pub(super) const GRID_THREADS_U32: &str = "oxide.uv.grid_threads_u32";

/// A kernel's name and its entry test as the host evaluates it.
pub type NamedCondition = (String, HostCondition);

/// The pass (`passes.rs`): versions the kernels, and records the twins of a build that is not
/// for the debugger (one kernel to step through).
pub fn run(module: &mut Module, state: &mut State) -> bool {
    let mut conditions = Vec::new();
    let changed = on_text(module, |text| {
        let (versioned, found) = version_with_conditions(text);
        conditions = found;
        versioned
    });
    if state.debuginfo != DeviceDebugInfo::Full {
        let twin = |(name, condition): (String, HostCondition)| {
            let entry = oxide_contract::fast_launch::twin_entry(&name, &condition);
            (name, oxide_contract::fast_launch::FastLaunch { entry, condition })
        };
        state.fast = conditions.into_iter().map(twin).collect();
    }
    changed
}

/// The versioned module alone (the unit tests read it).
#[cfg(test)]
pub fn version(module: &str) -> String {
    version_with_conditions(module).0
}

/// The module with each kernel versioned where that removes checks (see the module docs), and
/// for each versioned kernel (by name) its entry test `U` as the host evaluates it (`oxide_contract::fast_launch`), where it has only forms the host evaluates.
pub fn version_with_conditions(module: &str) -> (String, Vec<NamedCondition>) {
    let mut conditions = Vec::new();
    if !module.contains(&format!("@{MARKER}(")) {
        return (module.to_string(), conditions);
    }
    let mut decls: BTreeSet<&'static str> = BTreeSet::new();
    let launch_bounds = launch_bounds(module);
    let mut out = super::ir_functions::rewrite_definitions(module, |define, body| {
        let versioned = define
            .starts_with("define ptx_kernel ")
            .then(|| version_kernel(define, body, max_block_size(&launch_bounds, define), &mut decls))
            .flatten();
        match versioned {
            Some((lines, condition)) => {
                conditions.extend(condition);
                lines
            }
            None => body.iter().map(|l| l.to_string()).collect(),
        }
    });
    for decl in decls {
        let name = decl.split('@').nth(1).and_then(|n| n.split('(').next()).unwrap_or(decl);
        let declared = out.lines().any(|l| l.starts_with("declare ") && l.contains(&format!("@{name}(")));
        if !declared {
            out.push_str(decl);
            out.push('\n');
        }
    }
    (out, conditions)
}

/// The entry test's lines as a [`HostCondition`], with the kernel's name: `None` where the
/// define line cannot be read or a line has a form the host does not evaluate.
fn host_condition(define: &str, lines: &[String], answer: &str) -> Option<NamedCondition> {
    let (head, _) = define.split_once('(')?;
    let name = head.rsplit_once(" @")?.1;
    if name.starts_with('"') {
        return None;
    }
    let params: Vec<(&str, &str)> = define_params(define)
        .into_iter()
        .filter(|p| !p.is_empty())
        .map(|p| {
            let ty = p.split(' ').next().unwrap_or("");
            let name = p.rsplit(' ').next().filter(|n| n.starts_with('%')).unwrap_or("");
            (name, ty)
        })
        .collect();
    let lines: Vec<&str> = lines.iter().map(|l| l.as_str()).collect();
    Some((name.to_string(), HostCondition::parse(&lines, &params, answer)?))
}

/// One check: the `icmp` named `cond`, which is `true` when out of bounds if `oob_when_true`.
struct Check<'a> {
    cond: &'a str,
    oob_when_true: bool,
}

/// The most threads a block of the kernel `define` can have: the product of its
/// `"nvvm.maxntid"` (launch bounds, from `launch_bounds`; a launch with more fails), else the
/// hardware's 1024.
fn max_block_size(launch_bounds: &HashMap<&str, u32>, define: &str) -> u32 {
    let mut groups = define.split(" #").skip(1).filter_map(|g| g.split([' ', '{']).next());
    groups.find_map(|g| launch_bounds.get(g).copied()).unwrap_or(1024).min(1024)
}

/// The module's attribute groups that have `"nvvm.maxntid"`, with the product of its extents.
fn launch_bounds(module: &str) -> HashMap<&str, u32> {
    module
        .lines()
        .filter_map(|l| {
            let group = l.strip_prefix("attributes #")?.split(' ').next()?;
            let dims = l.split("\"nvvm.maxntid\"=\"").nth(1)?.split('"').next()?;
            Some((group, dims.split(',').map(|d| d.trim().parse::<u32>().ok()).product::<Option<u32>>()?))
        })
        .collect()
}

fn version_kernel(
    define: &str,
    body: &[&str],
    block_size: u32,
    decls: &mut BTreeSet<&'static str>,
) -> Option<(Vec<String>, Option<NamedCondition>)> {
    if body.iter().any(|l| l.contains(FAST) || l.contains(UV) || l.contains(" = alloca ")) {
        return None;
    }
    let blocks = split_blocks(body);
    let entry_label = blocks[0].label.clone();
    if entry_label.is_none() && body.iter().any(|l| has_numbered_name(l)) {
        // The unnamed entry has the first free number; a label in front would shift the others.
        return None;
    }
    let func = Function::new(&blocks);
    let lengths = slice_lengths(define);
    let checks = find_checks(&blocks);
    if checks.is_empty() {
        return None;
    }
    let reads = |reg: &str| body.iter().any(|l| l.contains(&format!("@{SREG}{reg}()")));
    // A kernel that linearises the whole grid (`thread::index_1d`: `%ctaid.z` and `%nctaid.y`)
    // is launched flat almost always: its fast copy also assumes a 1D launch, where `.y`/`.z`
    // thread and block indices are 0 and extents 1, and the index is `ctaid.x * ntid.x + tid.x`.
    // Its bounds are built under that launch too (`U` asks for it), so the entry test bounds
    // `ctaid.x * ntid.x + tid.x`, not a saturating product of six extents.
    let flat = reads("ctaid.z") && reads("nctaid.y");
    let mut bounder = Bounder::new(&func, flat, block_size);
    // Each proven check's `icmp` and the value it has in bounds.
    let mut proven: Vec<(&str, bool)> = Vec::new();
    // Proven checks whose index the fast copy computes in 32 bits: `icmp` → index.
    let mut narrowed: HashMap<&str, &str> = HashMap::new();
    // Proven checks against a slice length: (`icmp`, index, length, worth narrowing).
    let mut against_lengths: Vec<(&str, &str, String, bool)> = Vec::new();
    // Conditions `lhs pred rhs` on `i64`s; with a constant `rhs`, one per `(lhs, pred)`.
    let mut conditions: Vec<Condition> = Vec::new();
    // Conditions already built as `i1`s (`sub` that cannot wrap below zero: `Bounder::upper`).
    let mut sides: Vec<String> = Vec::new();
    for check in &checks {
        let Some(&(block, _)) = func.defs.get(check.cond) else { continue };
        if !func.reachable[block] {
            continue;
        }
        let Some(Inst::Icmp { pred, ty, a, b }) = func.inst(check.cond) else { continue };
        // The in-bounds outcome of the icmp, as a fact `idx < len` / `idx <= lim`.
        let in_bounds = !check.oob_when_true;
        let Some(&[fact]) = icmp_facts(pred, a, b, in_bounds).as_deref() else { continue };
        if fact.ne {
            continue;
        }
        let facts = func.facts_at(block, false);
        bounder.memo.clear();
        bounder.memo_lower.clear();
        bounder.side.clear();
        bounder.skip_guard = reads_past_a_guarded_length(&func, fact.lhs, &facts, &lengths);
        let extents_before = bounder.extents_used;
        let Some(limit) = bounder.exact64(fact.rhs, ty) else { continue };
        let length = limit.clone();
        let Some(bound) = bounder.upper(fact.lhs, ty, Some(&facts)) else { continue };
        if bound == u64::MAX.to_string() || bounder.side.iter().any(|s| s == "false") {
            // Saturated: the condition could never hold.
            continue;
        }
        if bounder.skip_guard.is_some() && bounder.extents_used != extents_before {
            // The guarded index bounded by the launch's extent, which grids round up past the
            // guarded length: the condition would fail for the usual launch.
            continue;
        }
        for side in bounder.side.drain(..) {
            if side != "true" && !sides.contains(&side) {
                sides.push(side);
            }
        }
        let pred = if fact.strict { "ult" } else { "ule" };
        // The bound's largest value (launch bounds: `ntid.x <= 256`) may decide it already.
        let largest = bounder.max_of(&bound);
        match (bound.parse::<u64>(), limit.parse::<u64>()) {
            (Ok(x), Ok(y)) if (fact.strict && x < y) || (!fact.strict && x <= y) => {}
            (Ok(_), Ok(_)) => continue,
            (_, Ok(y)) if (fact.strict && largest < u128::from(y)) || (!fact.strict && largest <= u128::from(y)) => {}
            _ => {
                let (base, offset) = bounder.split(&bound);
                let condition = match (limit.parse::<u64>(), base) {
                    // `base + c < L` is `base < L - c`: checks at constant offsets share one.
                    (Ok(l), Some(base)) if offset > 0 => {
                        let Some(rest) = l.checked_sub(offset).filter(|&r| !fact.strict || r > 0) else { continue };
                        Condition::new(base, 0, pred, rest.to_string())
                    }
                    // `base + c < len`: kept apart, so the largest `c` stands for the others.
                    (Err(_), Some(base)) if offset > 0 => Condition::new(base, offset, pred, limit),
                    _ => Condition::new(bound, 0, pred, limit),
                };
                // The uniform values at least 1 where the check runs (`x < n`: `n`).
                let mut positive = Vec::new();
                for f in facts.iter().filter(|f| f.strict && !f.ne) {
                    positive.extend(bounder.exact64(f.rhs, ty));
                }
                let condition = Condition { positive, ..condition };
                add_condition(&mut conditions, condition, &bounder.sums);
            }
        }
        proven.push((check.cond, in_bounds));
        if length.parse::<u64>().is_err() {
            let worth = !flat && ty == "i64" && narrow::narrowable(&func, fact.lhs);
            against_lengths.push((check.cond, fact.lhs, length, worth));
        }
    }
    // The checks against slice lengths compute their index in 32 bits in the fast copy
    // (`narrow.rs`) when every one of them is worth it: where one keeps its 64-bit index (the
    // stencil's `c + 1`), the others' 64-bit arithmetic stays anyway, and 32-bit copies of it
    // would only add to it. Each such length is then asked to be at most 2^32.
    if !against_lengths.is_empty() && against_lengths.iter().all(|c| c.3) {
        for (cond, idx, length, _) in against_lengths {
            let at_most_2_32 = Condition::new(length, 0, "ule", (1u64 << 32).to_string());
            add_condition(&mut conditions, at_most_2_32, &bounder.sums);
            narrowed.insert(cond, idx);
        }
    }
    if proven.is_empty() {
        return None;
    }
    if !worth_a_copy(proven.len(), checks.len(), flat) {
        return None;
    }
    let mut flat_condition = None;
    if flat {
        // Each extent is at least 1, so their `or` is 1 exactly when all are 1.
        let mut any = String::from("1");
        for reg in ["ntid.y", "ntid.z", "nctaid.y", "nctaid.z"] {
            let n = bounder.sreg(reg);
            any = bounder.emit(format!("or i32 {any}, {n}"));
        }
        flat_condition = Some(bounder.emit(format!("icmp eq i32 {any}, 1")));
    }
    // A flat launch of at most 2^32 threads: the fast copy's index then fits in 32 bits
    // (`flat_index_u32.rs`, which finds the condition by its name). With at most `block_size`
    // threads per block that is `nctaid.x <= 2^32 / block_size`: one compare, where the product
    // `nctaid.x * ntid.x` would put a uniform multiply on the way to the entry's branch. Only
    // for kernels with a loop: measured on the H200 (bench/notes.md, perf5), the 32-bit index
    // made n-body 2 % faster and the straight-line vecadd, saxpy, axpy_bf16 1-2 % slower (the
    // compare and the moved addresses sit on the way to their only loads).
    let mut grid_condition = None;
    if flat && func.has_loop() {
        let blocks = bounder.sreg("nctaid.x");
        let most = ((1u64 << 32) / u64::from(block_size)).min(u64::from(i32::MAX as u32));
        let name = format!("%{GRID_THREADS_U32}");
        bounder.lines.push(format!("  {name} = icmp ule i32 {blocks}, {most}"));
        grid_condition = Some(name);
    }
    let conditions: Vec<String> = conditions
        .into_iter()
        .map(|c| match bounder.minus_one.get(&c.base) {
            // `X - 1 < len` is `X <= len` (see `sub1` for `X = 0`).
            Some(x) if c.offset == 0 && c.pred == "ult" => {
                let x = x.clone();
                bounder.emit(format!("icmp ule i64 {x}, {}", c.rhs))
            }
            _ => {
                let lhs = if c.offset > 0 { bounder.emit(format!("add i64 {}, {}", c.base, c.offset)) } else { c.base };
                bounder.emit(format!("icmp {} i64 {lhs}, {}", c.pred, c.rhs))
            }
        })
        .chain(sides)
        .chain(flat_condition)
        .chain(grid_condition)
        .collect();
    decls.extend(bounder.decls.iter().copied());
    let mut out: Vec<String> = vec![format!("{UV}:")];
    out.append(&mut bounder.lines);
    let mut all = String::from("true");
    for (k, c) in conditions.iter().enumerate() {
        let name = format!("%{UV}.ok.{k}");
        out.push(format!("  {name} = and i1 {all}, {c}"));
        all = name;
    }
    let host = host_condition(define, &out[1..], &all);
    // The index registers both copies read first are read once, before the test: ptxas then
    // issues their `S2R` at the kernel's first instruction and the test hides its latency
    // (otherwise each copy starts by waiting for it, in front of its first load).
    let hoisted = early_index_reads(&blocks[0], flat);
    for (reg, rhs) in &hoisted {
        out.push(format!("  %{UV}.{reg} = {rhs}"));
    }
    let read_early = |line: &str| {
        let (lhs, rhs) = line.trim_start().split_once(" = ")?;
        let reg = index_register(rhs)?;
        hoisted.iter().any(|(r, _)| *r == reg).then(|| (lhs.to_string(), reg))
    };
    let entry = entry_label.clone().unwrap_or_else(|| "oxide.orig".to_string());
    out.push(format!("  br i1 {all}, label %{}, label %{entry}", fast_name(&entry)));
    if entry_label.is_none() {
        out.push(format!("{entry}:"));
    }
    out.extend(body.iter().map(|l| match read_early(l) {
        Some((lhs, reg)) => format!("  {lhs} = add i32 %{UV}.{reg}, 0"),
        None => l.to_string(),
    }));
    // The fast copy.
    let mut defined: HashSet<&str> = func.defs.keys().map(|v| &v[1..]).collect();
    defined.extend(blocks.iter().filter_map(|b| b.label.as_deref()));
    let replaced: HashMap<&str, bool> = proven.iter().copied().collect();
    let mut narrowed_names = 0;
    if entry_label.is_none() {
        out.push(format!("{}:", fast_name(&entry)));
    }
    for line in body {
        if let Some(label) = super::ir_functions::block_label(line) {
            out.push(format!("{}:", fast_name(&label)));
            continue;
        }
        let t = line.trim_start();
        if let Some((lhs, _)) = t.split_once(" = ")
            && let Some(&value) = replaced.get(lhs)
        {
            out.push(format!("  %{} = and i1 true, {value}", fast_name(&lhs[1..])));
            continue;
        }
        if flat
            && let Some((lhs, rhs)) = t.split_once(" = ")
            && let Some(value) = flat_value(rhs)
        {
            out.push(format!("  %{} = add i32 {value}, 0", fast_name(&lhs[1..])));
            continue;
        }
        if let Some((lhs, reg)) = read_early(line) {
            out.push(format!("  %{} = add i32 %{UV}.{reg}, 0", fast_name(&lhs[1..])));
            continue;
        }
        if let Some(select) = narrowed_select(t, &narrowed, &func, &mut narrowed_names) {
            out.extend(select.iter().map(|l| rename(l, &defined)));
            continue;
        }
        let mut renamed = rename(line, &defined);
        for (cond, value) in &proven {
            // A marker of a proven check records nothing (`deferred_traps` skips `i1 false`).
            let marker = format!("@{MARKER}(i1 %{})", fast_name(&cond[1..]));
            if renamed.contains(&marker) {
                renamed = renamed.replace(&marker, &format!("@{MARKER}(i1 {value})"));
            }
        }
        out.push(renamed);
    }
    Some((out, host))
}

/// A proven check's poison select `%s = select i1 %oob, i64 POISON, i64 %idx` with `%idx`
/// computed in 32 bits before it (`narrow.rs`), in the body's names; `None` for other lines.
fn narrowed_select(
    line: &str,
    narrowed: &HashMap<&str, &str>,
    func: &Function<'_>,
    n: &mut usize,
) -> Option<Vec<String>> {
    let (lhs, rhs) = line.split_once(" = ")?;
    let Inst::Select { c, ty: "i64", a, b } = parse(rhs)? else { return None };
    let idx = *narrowed.get(c)?;
    if b != idx || a.starts_with('%') {
        return None;
    }
    let mut lines = Vec::new();
    let low = narrow::emit_u32(func, idx, &format!("{FAST}n32."), n, &mut lines)?;
    *n += 1;
    let wide = format!("%{FAST}n64.{n}");
    lines.push(format!("  {wide} = zext i32 {low} to i64"));
    lines.push(format!("  {lhs} = select i1 {c}, i64 {a}, i64 {wide}"));
    Some(lines)
}

/// If `idx` is `v + t` (`t` not 0 and not negative) where a guard says `v < len` with `len` a
/// slice's length (the stencil's `input[c + n]` under `out.get_mut(c)`), that `v`: bounded by its
/// guard, the condition would ask for `input` longer than `out`, false for the equal lengths such
/// a kernel is launched with. `v` is then bounded by its operands (`Bounder::skip_guard`), and
/// only where that bound comes from other guards (the stencil's `x < n`, `y != n - 1`), not
/// from the launch's extent, which grids round up past the length.
fn reads_past_a_guarded_length<'a>(
    func: &Function<'a>,
    idx: &str,
    facts: &[Fact<'a>],
    lengths: &HashSet<&str>,
) -> Option<&'a str> {
    let Some(Inst::Bin { op: "add" | "or", ty, a, b, .. }) = func.inst(idx) else { return None };
    let guarded = |v: &str| facts.iter().any(|f| !f.ne && f.lhs == v && lengths.contains(f.rhs));
    let past = |t: &str| t != "0" && !constant(t, ty).is_some_and(|c| negative(c, ty));
    if guarded(a) && past(b) {
        Some(a)
    } else if guarded(b) && past(a) {
        Some(b)
    } else {
        None
    }
}

/// The parameters of `define` that are slice lengths: an `i64` right after a `ptr` (a slice
/// is passed as its pointer and its length, `lower/entry.rs`).
fn slice_lengths(define: &str) -> HashSet<&str> {
    define_params(define)
        .windows(2)
        .filter(|w| w[0].starts_with("ptr") && w[1].starts_with("i64 "))
        .filter_map(|w| w[1].rsplit(' ').next().filter(|n| n.starts_with('%')))
        .collect()
}

/// The parameters of a `define` line, each trimmed (`ptr noalias … %p0`): its parameter list up
/// to the closing parenthesis, split at the commas outside attributes' parentheses.
fn define_params(define: &str) -> Vec<&str> {
    let Some(open) = define.find('(') else { return Vec::new() };
    let mut params = Vec::new();
    let (mut depth, mut start) = (0usize, open + 1);
    for (i, c) in define[open..].char_indices().map(|(i, c)| (i + open, c)) {
        match c {
            '(' => depth += 1,
            ')' if depth == 1 => {
                params.push(define[start..i].trim());
                break;
            }
            ')' => depth -= 1,
            ',' if depth == 1 => {
                params.push(define[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    params
}

/// One condition of `U`: `base + offset pred rhs` on `i64`s.
struct Condition {
    base: String,
    offset: u64,
    pred: &'static str,
    rhs: String,
    /// Built values that are at least 1 where the check runs.
    positive: Vec<String>,
}

impl Condition {
    fn new(base: String, offset: u64, pred: &str, rhs: String) -> Condition {
        let pred = if pred == "ult" { "ult" } else { "ule" };
        Condition { base, offset, pred, rhs, positive: Vec::new() }
    }
}

/// Adds `condition` to `conditions` unless one there implies it; of two on the same `base` and
/// `pred`, keeps the stronger: the smaller constant `rhs`, or with the same `rhs` the larger
/// `offset` (`base + offset` does not wrap where the check can run: see `Bounder::add_sat`).
/// `base + 1 pred rhs` is implied by `(base + y) pred rhs` where `y >= 1` wherever its check
/// runs (the stencil's `c + 1` and `c + n` under `x < n`); `sums` has the built sums `base + y`.
fn add_condition(conditions: &mut Vec<Condition>, condition: Condition, sums: &HashMap<String, (String, String)>) {
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
        if let (Ok(old), Ok(new), 0, 0) =
            (c.rhs.parse::<u64>(), condition.rhs.parse::<u64>(), c.offset, condition.offset)
        {
            c.rhs = old.min(new).to_string();
            c.positive.retain(|p| condition.positive.contains(p));
            return;
        }
    }
    conditions.push(condition);
}

/// The thread and block index registers (`tid.x`, `ctaid.y`, …) that the kernel's first block
/// reads, each once, as (register, right-hand side without metadata): they are read at the
/// kernel's start whichever copy runs. In a flat kernel only the `.x` ones (its fast copy reads
/// the others as 0).
fn early_index_reads(first: &Block<'_>, flat: bool) -> Vec<(String, String)> {
    let mut reads: Vec<(String, String)> = Vec::new();
    for line in &first.lines {
        let Some((_, rhs)) = line.trim_start().split_once(" = ") else { continue };
        let Some(reg) = index_register(rhs) else { continue };
        if (flat && !reg.ends_with("_x")) || reads.iter().any(|(r, _)| *r == reg) {
            continue;
        }
        let rhs = strip_metadata(rhs);
        reads.push((reg, rhs.strip_prefix("tail ").unwrap_or(rhs).to_string()));
    }
    reads
}

/// `tid_x`, `ctaid_y`, … when `rhs` reads that index register (a name usable in IR values).
fn index_register(rhs: &str) -> Option<String> {
    let Some(Inst::Call { name, args: [None, None], .. }) = parse(rhs) else { return None };
    let reg = name.strip_prefix(SREG)?;
    let (base, axis) = reg.split_once('.')?;
    (["tid", "ctaid"].contains(&base) && ["x", "y", "z"].contains(&axis)).then(|| format!("{base}_{axis}"))
}

/// In a 1D launch: the value of a `.y`/`.z` special register read by `rhs`, if it reads one.
fn flat_value(rhs: &str) -> Option<u32> {
    let Some(Inst::Call { name, args: [None, None], .. }) = parse(rhs) else { return None };
    match name.strip_prefix(SREG)? {
        "tid.y" | "tid.z" | "ctaid.y" | "ctaid.z" => Some(0),
        "ntid.y" | "ntid.z" | "nctaid.y" | "nctaid.z" => Some(1),
        _ => None,
    }
}

/// `name` (a value or label name without `%`, maybe quoted) in the fast copy.
fn fast_name(name: &str) -> String {
    match name.strip_prefix('"') {
        Some(quoted) => format!("\"{FAST}{quoted}"),
        None => format!("{FAST}{name}"),
    }
}

/// Whether `line` names a numbered value or block (`%7`, `7:`).
fn has_numbered_name(line: &str) -> bool {
    let label = super::ir_functions::block_label(line).is_some_and(|l| l.bytes().all(|b| b.is_ascii_digit()));
    label || line.match_indices('%').any(|(i, _)| line[i + 1..].starts_with(|c: char| c.is_ascii_digit()))
}

/// `line` with every `%name` in `defined` renamed for the fast copy; string literals (inline
/// asm) and comments are left as they are.
fn rename(line: &str, defined: &HashSet<&str>) -> String {
    let mut out = String::with_capacity(line.len() + 32);
    let mut rest = line;
    while let Some(i) = rest.find(['%', '"', ';']) {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        match tail.as_bytes()[0] {
            b';' => {
                out.push_str(tail);
                return out;
            }
            b'"' => {
                let end = tail[1..].find('"').map_or(tail.len(), |j| j + 2);
                out.push_str(&tail[..end]);
                rest = &tail[end..];
            }
            _ => {
                let name_len = if tail[1..].starts_with('"') {
                    tail[2..].find('"').map_or(tail.len() - 1, |j| j + 2)
                } else {
                    tail[1..]
                        .find(|c: char| !(c.is_ascii_alphanumeric() || "._$-".contains(c)))
                        .unwrap_or(tail.len() - 1)
                };
                let name = &tail[1..1 + name_len];
                out.push('%');
                if defined.contains(name) {
                    out.push_str(&fast_name(name));
                } else {
                    out.push_str(name);
                }
                rest = &tail[1 + name_len..];
            }
        }
    }
    out.push_str(rest);
    out
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
fn find_checks<'a>(blocks: &[Block<'a>]) -> Vec<Check<'a>> {
    let mut found: Vec<Check<'a>> = Vec::new();
    let mut seen: HashMap<&str, bool> = HashMap::new();
    let mut conflicting: HashSet<&str> = HashSet::new();
    let is_poison = |v: &str| v.parse::<u64>().is_ok_and(|p| p != 0 && (0..=31).any(|k| POISON_OFFSET >> k == p));
    for line in blocks.iter().flat_map(|b| b.lines.iter()) {
        let t = strip_metadata(line.trim_start());
        let mut note = |cond: &'a str, oob_when_true: bool| {
            if !cond.starts_with('%') {
                return;
            }
            match seen.insert(cond, oob_when_true) {
                None => found.push(Check { cond, oob_when_true }),
                Some(before) if before != oob_when_true => {
                    conflicting.insert(cond);
                }
                Some(_) => {}
            }
        };
        if let Some(i) = t.find(&format!("@{MARKER}(i1 ")) {
            let operand = &t[i + MARKER.len() + 5..];
            note(operand.split(')').next().unwrap_or("").trim(), true);
        } else if let Some((_, rhs)) = t.split_once(" = ")
            && let Some(rest) = rhs.strip_prefix("select i1 ")
            && let [cond, x, y] = rest.split(", ").collect::<Vec<_>>()[..]
        {
            let (x, y) = (x.split(' ').nth(1).unwrap_or(""), y.split(' ').nth(1).unwrap_or(""));
            if is_poison(x) && !is_poison(y) {
                note(cond, true);
            } else if is_poison(y) && !is_poison(x) {
                note(cond, false);
            }
        }
    }
    found.retain(|c| !conflicting.contains(c.cond));
    found
}
