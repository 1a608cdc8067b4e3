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
//! The check's `icmp` is then replaced by its in-bounds result in the fast copy only. Sound
//! because the copy runs only when `U` holds, and then every replaced `icmp` would have computed
//! exactly that result. `U` depends on uniform values only, so every thread of a block takes the
//! same copy, and the barriers and warp-wide operations of the body see all their threads (the
//! `.aligned` barriers require it). Only kernels are versioned (a device function's parameters
//! are not uniform), only when at least one check goes, and not kernels with stack slots (they
//! must stay in the entry block). The fast copy doubles the kernel's code (PTX and SASS size).

use std::collections::{BTreeSet, HashMap, HashSet};

use super::flat_index_u32::GRID_THREADS_U32;
use super::ir_functions::{Block, split_blocks, strip_metadata, successor_indices, terminator_start};
use crate::lower::BOUNDS_FAIL_MARKER as MARKER;
use crate::lower::BOUNDS_POISON_OFFSET as POISON_OFFSET;

/// Prefix of the fast copy's names.
const FAST: &str = "oxide.fast.";
/// Prefix of the names in the new entry block.
const UV: &str = "oxide.uv";

/// The module with each kernel versioned where that removes checks (see the module docs).
pub fn version(module: &str) -> String {
    if !module.contains(&format!("@{MARKER}(")) {
        return module.to_string();
    }
    let mut decls: BTreeSet<&'static str> = BTreeSet::new();
    let mut out = super::ir_functions::rewrite_definitions(module, |define, body| {
        let block_size = max_block_size(module, define);
        let versioned = define
            .starts_with("define ptx_kernel ")
            .then(|| version_kernel(define, body, block_size, &mut decls))
            .flatten();
        versioned.unwrap_or_else(|| body.iter().map(|l| l.to_string()).collect())
    });
    for decl in decls {
        let name = decl.split('@').nth(1).and_then(|n| n.split('(').next()).unwrap_or(decl);
        let declared = out.lines().any(|l| l.starts_with("declare ") && l.contains(&format!("@{name}(")));
        if !declared {
            out.push_str(decl);
            out.push('\n');
        }
    }
    out
}

/// One check: the `icmp` named `cond`, which is `true` when out of bounds if `oob_when_true`.
struct Check<'a> {
    cond: &'a str,
    oob_when_true: bool,
}

/// `u < v` (`strict`) or `u <= v`, unsigned, known to hold; `u != v` if `ne`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Fact<'a> {
    lhs: &'a str,
    rhs: &'a str,
    strict: bool,
    ne: bool,
}

/// The most threads a block of the kernel `define` can have: the product of its
/// `"nvvm.maxntid"` (launch bounds; a launch with more fails), else the hardware's 1024.
fn max_block_size(module: &str, define: &str) -> u32 {
    let groups: Vec<&str> = define.split(" #").skip(1).filter_map(|g| g.split([' ', '{']).next()).collect();
    module
        .lines()
        .filter(|l| groups.iter().any(|g| l.starts_with(&format!("attributes #{g} = "))))
        .find_map(|l| {
            let dims = l.split("\"nvvm.maxntid\"=\"").nth(1)?.split('"').next()?;
            dims.split(',').map(|d| d.trim().parse::<u32>().ok()).product::<Option<u32>>()
        })
        .unwrap_or(1024)
        .min(1024)
}

fn version_kernel(
    define: &str,
    body: &[&str],
    block_size: u32,
    decls: &mut BTreeSet<&'static str>,
) -> Option<Vec<String>> {
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
    // A flat launch of fewer than 2^32 threads: the fast copy's index then fits in 32 bits
    // (`flat_index_u32.rs`, which finds the condition by its name). Spelled as the overflow of
    // the 32-bit product, which instcombine would make of an `i64` compare anyway (dropping the
    // name): one uniform `IMAD.WIDE.U32` and one `ISETP` on its high word.
    let mut grid_condition = None;
    if flat {
        let (blocks, threads) = (bounder.sreg("nctaid.x"), bounder.sreg("ntid.x"));
        bounder.decls.insert("declare { i32, i1 } @llvm.umul.with.overflow.i32(i32, i32)");
        let product = format!("%{GRID_THREADS_U32}");
        bounder.lines.push(format!(
            "  {product} = call {{ i32, i1 }} @llvm.umul.with.overflow.i32(i32 {blocks}, i32 {threads})"
        ));
        let wraps = bounder.emit(format!("extractvalue {{ i32, i1 }} {product}, 1"));
        grid_condition = Some(bounder.emit(format!("xor i1 {wraps}, true")));
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
    Some(out)
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

/// Whether the constant `c` of type `ty` is negative as a signed value.
fn negative(c: u64, ty: &str) -> bool {
    bits(ty).is_some_and(|w| c >> (w - 1) & 1 == 1)
}

/// The parameters of `define` that are slice lengths: an `i64` right after a `ptr` (a slice
/// is passed as its pointer and its length, `lower/entry.rs`).
fn slice_lengths(define: &str) -> HashSet<&str> {
    let Some(open) = define.find('(') else { return HashSet::new() };
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
        .windows(2)
        .filter(|w| w[0].starts_with("ptr") && w[1].starts_with("i64 "))
        .filter_map(|w| w[1].rsplit(' ').next().filter(|n| n.starts_with('%')))
        .collect()
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

/// The checks of a body: conditions of failure markers (true when out of bounds) and of poison
/// selects (`lower/bounds.rs`), each once.
/// Whether a fast copy pays for its entry test (~10–40 instructions per warp, most of them
/// uniform): when it removes at least half of the kernel's checks, or the grid linearisation of a
/// flat launch. stencil5 (bench) proved 1 of its 6 checks before `!=` facts, lower bounds and
/// row-major coordinate bounds (it never tests `y < n`) and ran 6 % more instructions with a copy
/// than without (bench/notes.md, perf4 measured); it now proves all 6.
fn worth_a_copy(proven: usize, checks: usize, flat: bool) -> bool {
    flat || 2 * proven >= checks
}

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

/// An instruction the bounds reason about.
#[derive(Clone, Copy, Debug)]
enum Inst<'a> {
    Bin {
        op: &'a str,
        ty: &'a str,
        a: &'a str,
        b: &'a str,
        nuw: bool,
    },
    Cast {
        op: &'a str,
        from: &'a str,
        a: &'a str,
        to: &'a str,
    },
    Icmp {
        pred: &'a str,
        ty: &'a str,
        a: &'a str,
        b: &'a str,
    },
    Select {
        c: &'a str,
        ty: &'a str,
        a: &'a str,
        b: &'a str,
    },
    Phi {
        ty: &'a str,
        incoming: &'a str,
    },
    /// A call of an intrinsic with up to two operands of type `ty`.
    Call {
        name: &'a str,
        ty: &'a str,
        args: [Option<&'a str>; 2],
    },
}

fn parse(rhs: &str) -> Option<Inst<'_>> {
    const FLAGS: [&str; 7] = ["nuw", "nsw", "exact", "disjoint", "nneg", "samesign", "fast"];
    let rhs = strip_metadata(rhs);
    let (op, rest) = rhs.split_once(' ')?;
    let nuw = rest.split(' ').take_while(|w| FLAGS.contains(w)).any(|w| w == "nuw");
    match op {
        "add" | "sub" | "mul" | "and" | "or" | "xor" | "shl" | "lshr" | "ashr" | "udiv" | "urem" => {
            let rest = skip_words(rest, &FLAGS);
            let (ty, rest) = rest.split_once(' ')?;
            let (a, b) = rest.split_once(", ")?;
            Some(Inst::Bin { op, ty, a, b, nuw })
        }
        "zext" | "sext" | "trunc" => {
            let rest = skip_words(rest, &FLAGS);
            let (from, rest) = rest.split_once(' ')?;
            let (a, to) = rest.split_once(" to ")?;
            Some(Inst::Cast { op, from, a, to: to.trim() })
        }
        "icmp" => {
            let rest = skip_words(rest, &FLAGS);
            let (pred, rest) = rest.split_once(' ')?;
            let (ty, rest) = rest.split_once(' ')?;
            let (a, b) = rest.split_once(", ")?;
            Some(Inst::Icmp { pred, ty, a, b })
        }
        "select" => {
            let rest = rest.strip_prefix("i1 ")?;
            let [c, x, y] = rest.split(", ").collect::<Vec<_>>()[..] else { return None };
            let (ty, a) = x.split_once(' ')?;
            let (ty2, b) = y.split_once(' ')?;
            (ty == ty2).then_some(Inst::Select { c, ty, a, b })
        }
        "phi" => {
            let (ty, incoming) = rest.split_once(' ')?;
            Some(Inst::Phi { ty, incoming })
        }
        "call" | "tail" => {
            let at = rest.find(" @")?;
            let ty = rest[..at].rsplit(' ').next()?;
            let (name, args) = rest[at + 2..].split_once('(')?;
            let args = args.strip_suffix(')')?;
            let mut ops = [None, None];
            if !args.is_empty() {
                for (k, arg) in args.split(", ").enumerate() {
                    let (_, v) = arg.rsplit_once(' ')?;
                    *ops.get_mut(k)? = Some(v);
                }
            }
            name.starts_with("llvm.").then_some(Inst::Call { name, ty, args: ops })
        }
        _ => None,
    }
}

/// A phi's `[ value, %label ]` arms as (value, label without `%`).
fn phi_arms(incoming: &str) -> Vec<(&str, &str)> {
    incoming
        .split("], ")
        .filter_map(|arm| {
            let (value, label) = arm.trim_start_matches(['[', ' ']).trim_end_matches([']', ' ']).split_once(", ")?;
            Some((value.trim(), label.trim().strip_prefix('%')?))
        })
        .collect()
}

/// `s` without its leading words that are in `words`.
fn skip_words<'s>(mut s: &'s str, words: &[&str]) -> &'s str {
    while let Some((w, r)) = s.split_once(' ')
        && words.contains(&w)
    {
        s = r;
    }
    s
}

/// Bits of an integer type (`i32` → 32).
fn bits(ty: &str) -> Option<u32> {
    ty.strip_prefix('i')?.parse().ok().filter(|b| (1..=64).contains(b))
}

/// An integer constant of type `ty`, as unsigned.
fn constant(v: &str, ty: &str) -> Option<u64> {
    let bits = bits(ty)?;
    let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
    let value = match v {
        "true" => 1,
        "false" => 0,
        _ => v.parse::<i128>().ok()? as u64,
    };
    Some(value & mask)
}

/// The facts an `icmp pred a, b` with result `outcome` gives.
fn icmp_facts<'a>(pred: &str, a: &'a str, b: &'a str, outcome: bool) -> Option<Vec<Fact<'a>>> {
    let f = |lhs, rhs, strict| Fact { lhs, rhs, strict, ne: false };
    let ne = |lhs, rhs| Fact { lhs, rhs, strict: false, ne: true };
    // Signed predicates appear only with `samesign` (parse drops the flag; the caller checks).
    let pred = match pred {
        "slt" => "ult",
        "sle" => "ule",
        "sgt" => "ugt",
        "sge" => "uge",
        p => p,
    };
    Some(match (pred, outcome) {
        ("ult", true) | ("uge", false) => vec![f(a, b, true)],
        ("ule", true) | ("ugt", false) => vec![f(a, b, false)],
        ("ugt", true) | ("ule", false) => vec![f(b, a, true)],
        ("uge", true) | ("ult", false) => vec![f(b, a, false)],
        ("eq", true) | ("ne", false) => vec![f(a, b, false), f(b, a, false)],
        ("eq", false) | ("ne", true) => vec![ne(a, b), ne(b, a)],
        _ => return None,
    })
}

/// A kernel body's definitions, dominators and guards.
struct Function<'a> {
    blocks: &'a [Block<'a>],
    /// `%name` → (block, right-hand side).
    defs: HashMap<&'a str, (usize, &'a str)>,
    preds: Vec<Vec<usize>>,
    idom: Vec<Option<usize>>,
    reachable: Vec<bool>,
}

impl<'a> Function<'a> {
    fn new(blocks: &'a [Block<'a>]) -> Self {
        let mut defs = HashMap::new();
        for (b, block) in blocks.iter().enumerate() {
            for line in &block.lines {
                if let Some((lhs, rhs)) = line.trim_start().split_once(" = ")
                    && lhs.starts_with('%')
                {
                    defs.insert(lhs, (b, rhs));
                }
            }
        }
        let succ = successor_indices(blocks);
        let n = blocks.len();
        let mut preds = vec![Vec::new(); n];
        for (b, ss) in succ.iter().enumerate() {
            for &s in ss {
                preds[s].push(b);
            }
        }
        // Reverse post-order from the entry, then the iterative dominator algorithm.
        let mut order = Vec::new();
        let mut state = vec![0u8; n];
        let mut stack = vec![(0usize, 0usize)];
        state[0] = 1;
        while let Some(&mut (b, ref mut next)) = stack.last_mut() {
            if let Some(&s) = succ[b].get(*next) {
                *next += 1;
                if state[s] == 0 {
                    state[s] = 1;
                    stack.push((s, 0));
                }
            } else {
                order.push(b);
                stack.pop();
            }
        }
        order.reverse();
        let mut rpo = vec![usize::MAX; n];
        for (i, &b) in order.iter().enumerate() {
            rpo[b] = i;
        }
        let mut idom: Vec<Option<usize>> = vec![None; n];
        idom[0] = Some(0);
        let mut changed = true;
        while changed {
            changed = false;
            for &b in order.iter().skip(1) {
                let mut new: Option<usize> = None;
                for &p in &preds[b] {
                    if idom[p].is_none() {
                        continue;
                    }
                    new = Some(match new {
                        None => p,
                        Some(mut x) => {
                            let mut y = p;
                            while x != y {
                                while rpo[x] > rpo[y] {
                                    x = idom[x].expect("processed");
                                }
                                while rpo[y] > rpo[x] {
                                    y = idom[y].expect("processed");
                                }
                            }
                            x
                        }
                    });
                }
                if new.is_some() && idom[b] != new {
                    idom[b] = new;
                    changed = true;
                }
            }
        }
        let reachable = (0..n).map(|b| state[b] != 0).collect();
        Function { blocks, defs, preds, idom, reachable }
    }

    fn inst(&self, v: &str) -> Option<Inst<'a>> {
        let inst = parse(self.defs.get(v)?.1)?;
        // A signed compare says something about unsigned values only with `samesign`.
        if let Inst::Icmp { pred, .. } = inst
            && pred.starts_with('s')
            && !self.defs.get(v)?.1.starts_with("icmp samesign ")
        {
            return None;
        }
        Some(inst)
    }

    /// The facts that hold in `block`: the conditions of the guarded edges that dominate it,
    /// and those of the `llvm.assume`s in the blocks that strictly dominate it (the launch
    /// bounds' `tid.x < 256`), with `block`'s own at its end only (`at_end`): an assume holds
    /// after it runs.
    fn facts_at(&self, block: usize, at_end: bool) -> Vec<Fact<'a>> {
        let mut facts = Vec::new();
        let mut b = block;
        loop {
            if b != block || at_end {
                self.assumed(b, &mut facts);
            }
            if let [p] = self.preds[b][..]
                && let Some((cond, then, els)) = self.cond_branch(p)
                && then != els
            {
                self.condition_facts(cond, b == then, 0, &mut facts);
            }
            match self.idom[b] {
                Some(d) if d != b => b = d,
                _ => break,
            }
        }
        facts
    }

    /// The facts of the `llvm.assume(i1 %c)` calls in `block`.
    fn assumed(&self, block: usize, out: &mut Vec<Fact<'a>>) {
        for line in &self.blocks[block].lines {
            let Some(rest) = line.trim_start().split("call void @llvm.assume(i1 ").nth(1) else { continue };
            let cond = rest.split(')').next().unwrap_or_default();
            if cond.starts_with('%') {
                self.condition_facts(cond, true, 0, out);
            }
        }
    }

    /// The largest `k` (up to 63) such that `facts` say `v` is a multiple of `2^k`: a fact
    /// `v & (2^k - 1) <= 0`, on `v` itself or on its zero-extension or the value it extends.
    fn alignment(&self, v: &str, facts: &[Fact<'a>]) -> u32 {
        let same = |x: &str| {
            x == v
                || matches!(self.inst(x), Some(Inst::Cast { op: "zext", a, .. }) if a == v)
                || matches!(self.inst(v), Some(Inst::Cast { op: "zext", a, .. }) if a == x)
        };
        let mut best = 0;
        for fact in facts {
            let zero = fact.rhs == "0" && !fact.strict || fact.rhs == "1" && fact.strict;
            if !zero || fact.ne {
                continue;
            }
            let Some(Inst::Bin { op: "and", ty, a, b, .. }) = self.inst(fact.lhs) else { continue };
            let (x, mask) = match (constant(a, ty), constant(b, ty)) {
                (None, Some(m)) => (a, m),
                (Some(m), None) => (b, m),
                _ => continue,
            };
            if same(x) && mask != u64::MAX && (mask + 1).is_power_of_two() {
                best = best.max((mask + 1).trailing_zeros().min(63));
            }
        }
        best
    }

    /// The facts that hold on the edge `pred → succ`: those at the end of `pred` and, where
    /// `pred` ends in a conditional branch with two targets, the condition that takes the edge.
    fn edge_facts(&self, pred: &str, succ: usize) -> Option<Vec<Fact<'a>>> {
        let p = self.blocks.iter().position(|b| b.label.as_deref() == Some(pred))?;
        let mut facts = self.facts_at(p, true);
        if let Some((cond, then, els)) = self.cond_branch(p)
            && then != els
        {
            self.condition_facts(cond, succ == then, 0, &mut facts);
        }
        Some(facts)
    }

    /// The largest `k` (up to 63) such that `v` is a multiple of `2^k` by its definition:
    /// constants, `shl` by a constant, `mul` by a constant, `add`/`or` of multiples, and a phi
    /// of multiples — with the phi itself assumed to be one while its arms are looked at, which
    /// is induction over the loop's iterations (`t = phi [0, …], [t + 32, …]`).
    fn multiple_of(&self, v: &str, ty: &str, assumed: &mut Vec<(String, u32)>, depth: usize) -> u32 {
        if let Some(c) = constant(v, ty) {
            return if c == 0 { 63 } else { c.trailing_zeros().min(63) };
        }
        if depth > 12 {
            return 0;
        }
        if let Some(&(_, k)) = assumed.iter().find(|(a, _)| a == v) {
            return k;
        }
        match self.inst(v) {
            Some(Inst::Bin { op: "shl", ty, a, b, .. }) => match constant(b, ty) {
                Some(k) if k < 64 => (self.multiple_of(a, ty, assumed, depth + 1) + k as u32).min(63),
                _ => 0,
            },
            Some(Inst::Bin { op: "mul", ty, a, b, .. }) => {
                (self.multiple_of(a, ty, assumed, depth + 1) + self.multiple_of(b, ty, assumed, depth + 1)).min(63)
            }
            Some(Inst::Bin { op: "add" | "or", ty, a, b, .. }) => {
                self.multiple_of(a, ty, assumed, depth + 1).min(self.multiple_of(b, ty, assumed, depth + 1))
            }
            Some(Inst::Cast { op: "zext", from, a, .. }) => self.multiple_of(a, from, assumed, depth + 1),
            Some(Inst::Phi { ty, incoming }) => {
                // The largest k every arm keeps, assuming the phi has it: start from the
                // non-recursive arms' and lower until the assumption reproduces itself.
                let arms = phi_arms(incoming);
                let mut k = 63;
                loop {
                    assumed.push((v.to_string(), k));
                    let got = arms.iter().map(|(a, _)| self.multiple_of(a, ty, assumed, depth + 1)).min().unwrap_or(0);
                    assumed.pop();
                    if got >= k {
                        return k;
                    }
                    k = got;
                }
            }
            _ => 0,
        }
    }

    /// The largest value `v` of type `ty` can have, from its type and `zext`, `add`, `mul`
    /// (clamped to the type: a wrapped result is below it too).
    fn value_max(&self, v: &str, ty: &str, depth: usize) -> u128 {
        let full = (1u128 << bits(ty).unwrap_or(64)) - 1;
        if let Some(c) = constant(v, ty) {
            return u128::from(c);
        }
        if depth > 8 {
            return full;
        }
        match self.inst(v) {
            Some(Inst::Cast { op: "zext", from, a, .. }) => self.value_max(a, from, depth + 1).min(full),
            Some(Inst::Bin { op: "add", ty, a, b, .. }) => {
                (self.value_max(a, ty, depth + 1) + self.value_max(b, ty, depth + 1)).min(full)
            }
            Some(Inst::Bin { op: "mul", ty, a, b, .. }) => {
                (self.value_max(a, ty, depth + 1).saturating_mul(self.value_max(b, ty, depth + 1))).min(full)
            }
            _ => full,
        }
    }

    /// `br i1 %c, label %then, label %else` ending `block`, as (c, then, else).
    fn cond_branch(&self, block: usize) -> Option<(&'a str, usize, usize)> {
        let lines = &self.blocks[block].lines;
        let term = strip_metadata(lines[terminator_start(lines)?].trim_start());
        let rest = term.strip_prefix("br i1 ")?;
        let [c, t, e] = rest.split(", ").collect::<Vec<_>>()[..] else { return None };
        let find = |l: &str| {
            let l = l.strip_prefix("label %")?;
            self.blocks.iter().position(|b| b.label.as_deref() == Some(l))
        };
        Some((c, find(t)?, find(e)?))
    }

    fn condition_facts(&self, cond: &'a str, outcome: bool, depth: usize, out: &mut Vec<Fact<'a>>) {
        if depth > 8 {
            return;
        }
        match self.inst(cond) {
            Some(Inst::Icmp { pred, a, b, .. }) => out.extend(icmp_facts(pred, a, b, outcome).unwrap_or_default()),
            // `a && b` holds both on its true edge, `a || b` neither on its false edge.
            Some(Inst::Bin { op: "and", ty: "i1", a, b, .. }) if outcome => {
                self.condition_facts(a, true, depth + 1, out);
                self.condition_facts(b, true, depth + 1, out);
            }
            Some(Inst::Bin { op: "or", ty: "i1", a, b, .. }) if !outcome => {
                self.condition_facts(a, false, depth + 1, out);
                self.condition_facts(b, false, depth + 1, out);
            }
            Some(Inst::Bin { op: "xor", ty: "i1", a, b: "true", .. }) => {
                self.condition_facts(a, !outcome, depth + 1, out)
            }
            Some(Inst::Select { c, ty: "i1", a, b: "false" }) if outcome => {
                self.condition_facts(c, true, depth + 1, out);
                self.condition_facts(a, true, depth + 1, out);
            }
            Some(Inst::Select { c, ty: "i1", a: "true", b }) if !outcome => {
                self.condition_facts(c, false, depth + 1, out);
                self.condition_facts(b, false, depth + 1, out);
            }
            _ => {}
        }
    }
}

/// Builds the new entry block: exact uniform values and upper bounds, as `i64` operands.
struct Bounder<'f, 'a> {
    func: &'f Function<'a>,
    /// Bounds hold in a flat launch only (`U` asks for one): `.y`/`.z` extents are 1.
    flat: bool,
    /// The most threads per block (launch bounds): the range of the `%ntid` reads at entry, so
    /// that `opt` folds conditions such as `(ntid.x - 1) & -32 < 225` under `launch_bounds(256)`.
    block_size: u32,
    lines: Vec<String>,
    decls: BTreeSet<&'static str>,
    n: usize,
    exact: HashMap<&'a str, Option<String>>,
    in_progress: HashSet<(&'a str, bool)>,
    /// Bounds already built for the current check (its facts).
    memo: HashMap<(&'a str, bool), Option<String>>,
    /// `X - 1` built by `sub1` → `X`.
    minus_one: HashMap<String, String>,
    /// The largest value of each built value (`u64::MAX` when not listed).
    max: HashMap<String, u128>,
    /// Built values that are `base + constant`.
    affine: HashMap<String, (String, u64)>,
    /// Built values by their right-hand side (every one is pure and at entry).
    cse: HashMap<String, String>,
    /// Lower bounds already built for the current check.
    memo_lower: HashMap<(&'a str, bool), String>,
    /// Conditions (`i1`s at entry, or `true`/`false`) the current check's bound needs besides
    /// `bound < len`: a `sub` that cannot wrap below zero.
    side: Vec<String>,
    /// A value whose own guards are not used (`reads_past_a_guarded_length`).
    skip_guard: Option<&'a str>,
    /// How many bounds came from the launch's extent (`%tid`, `%ctaid`).
    extents_used: usize,
    /// Bounds built as already below a value `k` they would otherwise equal (`row_bounds`).
    below: HashMap<String, String>,
    /// Built sums `a + b` of two values (neither a constant) → `(a, b)`.
    sums: HashMap<String, (String, String)>,
}

/// The special registers that are the same in every thread of a launch.
const UNIFORM_SREGS: [&str; 6] = ["ntid.x", "ntid.y", "ntid.z", "nctaid.x", "nctaid.y", "nctaid.z"];
const SREG: &str = "llvm.nvvm.read.ptx.sreg.";

impl<'f, 'a> Bounder<'f, 'a> {
    fn new(func: &'f Function<'a>, flat: bool, block_size: u32) -> Self {
        Bounder {
            func,
            flat,
            block_size,
            lines: Vec::new(),
            decls: BTreeSet::new(),
            n: 0,
            exact: HashMap::new(),
            in_progress: HashSet::new(),
            memo: HashMap::new(),
            minus_one: HashMap::new(),
            max: HashMap::new(),
            affine: HashMap::new(),
            cse: HashMap::new(),
            memo_lower: HashMap::new(),
            side: Vec::new(),
            skip_guard: None,
            extents_used: 0,
            below: HashMap::new(),
            sums: HashMap::new(),
        }
    }

    fn fresh(&mut self) -> String {
        self.n += 1;
        format!("%{UV}.{}", self.n)
    }

    fn emit(&mut self, rhs: String) -> String {
        if let Some(v) = self.cse.get(&rhs) {
            return v.clone();
        }
        let v = self.fresh();
        self.lines.push(format!("  {v} = {rhs}"));
        self.cse.insert(rhs, v.clone());
        v
    }

    /// The largest value `x` (a constant or a built `i64`) can have.
    fn max_of(&self, x: &str) -> u128 {
        x.parse::<u64>().map_or_else(|_| *self.max.get(x).unwrap_or(&u128::from(u64::MAX)), u128::from)
    }

    /// `x` as `base + constant` (`None` base: a constant).
    fn split(&self, x: &str) -> (Option<String>, u64) {
        if let Ok(c) = x.parse::<u64>() {
            return (None, c);
        }
        match self.affine.get(x) {
            Some((base, c)) => (Some(base.clone()), *c),
            None => (Some(x.to_string()), 0),
        }
    }

    fn sreg(&mut self, reg: &str) -> String {
        let decl: &'static str = match reg {
            "ntid.x" => "declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()",
            "ntid.y" => "declare i32 @llvm.nvvm.read.ptx.sreg.ntid.y()",
            "ntid.z" => "declare i32 @llvm.nvvm.read.ptx.sreg.ntid.z()",
            "nctaid.x" => "declare i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()",
            "nctaid.y" => "declare i32 @llvm.nvvm.read.ptx.sreg.nctaid.y()",
            _ => "declare i32 @llvm.nvvm.read.ptx.sreg.nctaid.z()",
        };
        self.decls.insert(decl);
        if reg.starts_with("ntid.") {
            return self.emit(format!("call range(i32 1, {}) i32 @{SREG}{reg}()", self.block_size + 1));
        }
        self.emit(format!("call i32 @{SREG}{reg}()"))
    }

    /// `v` (of type `ty`) recomputed at entry, in its own type, if it is uniform.
    fn uniform(&mut self, v: &'a str, ty: &str) -> Option<String> {
        if let Some(c) = constant(v, ty) {
            return Some(if ty == "i1" { (c == 1).to_string() } else { c.to_string() });
        }
        if !v.starts_with('%') {
            return None;
        }
        if !self.func.defs.contains_key(v) {
            // Not defined in the body: a kernel parameter.
            return Some(v.to_string());
        }
        if let Some(done) = self.exact.get(v) {
            return done.clone();
        }
        self.exact.insert(v, None);
        let value = self.uniform_def(v);
        self.exact.insert(v, value.clone());
        value
    }

    fn uniform_def(&mut self, v: &'a str) -> Option<String> {
        let inst = self.func.inst(v)?;
        Some(match inst {
            Inst::Bin { op, ty, a, b, .. } => {
                bits(ty)?;
                // No division by zero and no shift past the width: those would be poison or UB.
                let (b_const, width) = (constant(b, ty), u64::from(bits(ty)?));
                match op {
                    "udiv" | "urem" if !b_const.is_some_and(|c| c != 0) => return None,
                    "shl" | "lshr" | "ashr" if !b_const.is_some_and(|c| c < width) => return None,
                    _ => {}
                }
                let (a, b) = (self.uniform(a, ty)?, self.uniform(b, ty)?);
                self.emit(format!("{op} {ty} {a}, {b}"))
            }
            Inst::Cast { op, from, a, to } => {
                let a = self.uniform(a, from)?;
                let v = self.emit(format!("{op} {from} {a} to {to}"));
                if op == "zext" {
                    self.max.insert(v.clone(), (1u128 << bits(from)?) - 1);
                }
                v
            }
            Inst::Icmp { pred, ty, a, b } => {
                let (a, b) = (self.uniform(a, ty)?, self.uniform(b, ty)?);
                self.emit(format!("icmp {pred} {ty} {a}, {b}"))
            }
            Inst::Select { c, ty, a, b } => {
                let c = self.uniform(c, "i1")?;
                let (a, b) = (self.uniform(a, ty)?, self.uniform(b, ty)?);
                self.emit(format!("select i1 {c}, {ty} {a}, {ty} {b}"))
            }
            Inst::Call { name, ty, args } => {
                if let Some(reg) = name.strip_prefix(SREG).filter(|r| UNIFORM_SREGS.contains(r)) {
                    if self.flat && ty == "i32" && !reg.ends_with(".x") {
                        return Some("1".to_string());
                    }
                    return (ty == "i32").then(|| self.sreg(reg));
                }
                let is_minmax =
                    ["llvm.umin.", "llvm.umax.", "llvm.smin.", "llvm.smax."].iter().any(|p| name.starts_with(p));
                let [Some(a), Some(b)] = args else { return None };
                if !is_minmax {
                    return None;
                }
                self.decls.insert(minmax_decl(name)?);
                let (a, b) = (self.uniform(a, ty)?, self.uniform(b, ty)?);
                self.emit(format!("call {ty} @{name}({ty} {a}, {ty} {b})"))
            }
            Inst::Phi { .. } => return None,
        })
    }

    /// A uniform special register, zero-extended to `i64`.
    fn exact64_sreg(&mut self, reg: &str) -> String {
        let n = self.sreg(reg);
        let v = self.emit(format!("zext i32 {n} to i64"));
        let max = if reg.starts_with("ntid.") { self.block_size } else { u32::MAX };
        self.max.insert(v.clone(), u128::from(max));
        v
    }

    /// `v` recomputed at entry as an `i64`, if it is uniform.
    fn exact64(&mut self, v: &'a str, ty: &str) -> Option<String> {
        let bits = bits(ty)?;
        let value = self.uniform(v, ty)?;
        if bits == 64 || value.parse::<u64>().is_ok() {
            return Some(value);
        }
        let v = self.emit(format!("zext {ty} {value} to i64"));
        self.max.insert(v.clone(), (1u128 << bits) - 1);
        Some(v)
    }

    /// An upper bound (unsigned, as an `i64` at entry) of `v` of type `ty` wherever `facts`
    /// hold (`None`: without guards). See the module docs for why each rule holds.
    fn upper(&mut self, v: &'a str, ty: &str, facts: Option<&[Fact<'a>]>) -> Option<String> {
        bits(ty)?;
        if let Some(c) = constant(v, ty) {
            return Some(c.to_string());
        }
        if let Some(e) = self.exact64(v, ty) {
            return Some(e);
        }
        let key = (v, facts.is_some());
        if let Some(done) = self.memo.get(&key) {
            return done.clone();
        }
        if !self.in_progress.insert(key) {
            return None;
        }
        // A guard's bound, else the operands': the guard is what the user wrote to stay in
        // bounds, and the entry block stays short.
        let mut candidates: Vec<String> = Vec::new();
        for fact in facts.unwrap_or_default() {
            if fact.ne || fact.lhs != v || self.skip_guard == Some(v) {
                continue;
            }
            if let Some(b) = self.upper(fact.rhs, ty, facts) {
                candidates.push(if fact.strict { self.sub1(b) } else { b });
            }
        }
        // Else a guard on a row-major index `v * n + x`.
        for fact in facts.unwrap_or_default() {
            if candidates.is_empty() && !fact.ne && fact.lhs != v {
                let bounds = self.row_bounds(v, ty, fact, facts);
                candidates.extend(bounds);
            }
        }
        // A constant from a guard or an assume (`tid.x < 256` of the launch bounds) may be
        // looser than the operands' bound (`ntid.y - 1` of a 32 x 8 launch): keep both then.
        if candidates.iter().all(|c| c.parse::<u64>().is_ok())
            && let Some(b) = self.structural(v, facts)
        {
            candidates.push(b);
        }
        self.in_progress.remove(&key);
        let mut bound = candidates.into_iter().reduce(|x, y| self.minmax("umin", x, y));
        // `v <= B` and `v != K` give `v <= B - 1` where `K = B` (`x != n - 1` under `x < n`).
        for fact in facts.unwrap_or_default() {
            if !fact.ne || fact.lhs != v {
                continue;
            }
            // (`v != 0` lowers only a bound 0, under which no `v != 0` runs.)
            let (Some(b), Some(k)) = (bound.clone(), self.exact64(fact.rhs, ty)) else { continue };
            if k != "0" {
                bound = Some(self.below_if_equal(b, k));
            }
        }
        // A multiple of 2^k is at most the bound rounded down to one (`t % 32 == 0` guards the
        // warp leaders' `parts[t / 32]`, which opt spells `t <= 224`; sgemm's `t += 32`). A
        // saturated bound stays saturated: it says no condition can hold.
        let by_guard = facts.map_or(0, |f| self.func.alignment(v, f));
        let align = by_guard.max(self.func.multiple_of(v, ty, &mut Vec::new(), 0));
        let saturated = u64::MAX.to_string();
        if align > 0
            && bound.as_ref().is_some_and(|b| *b != saturated)
            && let Some(b) = bound.take()
        {
            let mask = !((1u64 << align) - 1);
            bound = Some(match b.parse::<u64>() {
                Ok(c) => (c & mask).to_string(),
                Err(_) => {
                    let max = self.max_of(&b) & u128::from(mask);
                    let v = self.emit(format!("and i64 {b}, {}", mask as i64));
                    self.max.insert(v.clone(), max);
                    v
                }
            });
        }
        self.memo.insert(key, bound.clone());
        bound
    }

    fn structural(&mut self, v: &'a str, facts: Option<&[Fact<'a>]>) -> Option<String> {
        let inst = self.func.inst(v)?;
        match inst {
            Inst::Call { name, ty, args } => {
                let per_axis = |prefix: &str| {
                    name.strip_prefix(SREG)?.strip_prefix(prefix).filter(|a| ["x", "y", "z"].contains(a))
                };
                if self.flat && (per_axis("tid.").is_some() || per_axis("ctaid.").is_some()) && !name.ends_with(".x") {
                    return Some("0".to_string());
                }
                if per_axis("tid.").is_some() || per_axis("ctaid.").is_some() {
                    self.extents_used += 1;
                }
                if let Some(axis) = per_axis("tid.") {
                    let n = self.exact64_sreg(&format!("ntid.{axis}"));
                    return Some(self.sub1(n));
                }
                if let Some(axis) = per_axis("ctaid.") {
                    let n = self.exact64_sreg(&format!("nctaid.{axis}"));
                    return Some(self.sub1(n));
                }
                if name == "llvm.nvvm.read.ptx.sreg.laneid" {
                    return Some("31".to_string());
                }
                let [Some(a), Some(b)] = args else { return None };
                if name.starts_with("llvm.umin.") {
                    match (self.upper(a, ty, facts), self.upper(b, ty, facts)) {
                        (Some(x), Some(y)) => Some(self.minmax("umin", x, y)),
                        (x, y) => x.or(y),
                    }
                } else if name.starts_with("llvm.umax.") {
                    let (x, y) = (self.upper(a, ty, facts)?, self.upper(b, ty, facts)?);
                    Some(self.minmax("umax", x, y))
                } else {
                    None
                }
            }
            Inst::Bin { op, ty, a, b, nuw } => match op {
                // `a + (-k)` is `a - k`.
                "add" if constant(b, ty).is_some_and(|k| negative(k, ty)) => {
                    let k = constant(b, ty)?.wrapping_neg() & (u64::MAX >> (64 - bits(ty)?));
                    self.difference(a, Ok(k), ty, facts)
                }
                "sub" if !nuw => self.difference(a, Err(b), ty, facts),
                "add" | "or" | "xor" => {
                    let (x, y) = (self.upper(a, ty, facts)?, self.upper(b, ty, facts)?);
                    Some(self.add_sat(x, y))
                }
                "mul" => {
                    let (x, y) = (self.upper(a, ty, facts)?, self.upper(b, ty, facts)?);
                    Some(self.mul_sat(x, y))
                }
                "shl" => {
                    let width = u64::from(bits(ty)?);
                    let k = constant(b, ty).filter(|&k| k < width)?;
                    let x = self.upper(a, ty, facts)?;
                    Some(self.mul_sat(x, (1u64 << k).to_string()))
                }
                "and" => {
                    let (x, y) = (self.upper(a, ty, facts), self.upper(b, ty, facts));
                    match (x, y) {
                        (Some(x), Some(y)) => Some(self.minmax("umin", x, y)),
                        (x, y) => x.or(y),
                    }
                }
                "lshr" | "udiv" => {
                    // Monotone: by a constant, the bound shifted or divided too (`t / 32`).
                    let x = self.upper(a, ty, facts)?;
                    let divisor = match (op, constant(b, ty)) {
                        ("lshr", Some(k)) if k < 64 => 1u64 << k,
                        ("udiv", Some(d)) if d > 0 => d,
                        _ => return Some(x),
                    };
                    Some(match x.parse::<u64>() {
                        Ok(c) => (c / divisor).to_string(),
                        Err(_) if divisor == 1 => x,
                        Err(_) => {
                            let max = self.max_of(&x) / u128::from(divisor);
                            let v = self.emit(format!("udiv i64 {x}, {divisor}"));
                            self.max.insert(v.clone(), max);
                            v
                        }
                    })
                }
                "urem" => {
                    let (x, y) = (self.upper(a, ty, facts), self.upper(b, ty, facts).map(|y| self.sub1(y)));
                    match (x, y) {
                        (Some(x), Some(y)) => Some(self.minmax("umin", x, y)),
                        (x, y) => x.or(y),
                    }
                }
                "sub" if nuw => self.upper(a, ty, facts),
                _ => None,
            },
            Inst::Cast { op: "zext" | "trunc", from, a, .. } => self.upper(a, from, facts),
            Inst::Select { ty, a, b, .. } => {
                let (x, y) = (self.upper(a, ty, facts)?, self.upper(b, ty, facts)?);
                Some(self.minmax("umax", x, y))
            }
            Inst::Phi { ty, incoming } => {
                // Each incoming value under the facts of its own edge: those that hold at the
                // end of the predecessor and the branch condition that takes that edge (a
                // rotated loop's `t < n` at its latch bounds the `t` it brings back). Not the
                // facts of the phi's block: a loop may have redefined a value since its guard.
                let phi_block = self.func.defs.get(v)?.0;
                let mut acc: Option<String> = None;
                for (value, pred) in phi_arms(incoming) {
                    let edge = self.func.edge_facts(pred, phi_block)?;
                    // The memo holds bounds under the check's facts: keep it apart.
                    let memo = std::mem::take(&mut self.memo);
                    let memo_lower = std::mem::take(&mut self.memo_lower);
                    let x = self.upper(value, ty, Some(&edge));
                    self.memo = memo;
                    self.memo_lower = memo_lower;
                    let mut x = x?;
                    // An arm's bound may hold only when its edge is taken: a guard's `n - 1`
                    // wraps to u64::MAX for n = 0, while another arm runs. Still an upper
                    // bound, but above the largest value `max` records, on which later sums
                    // rely to skip saturation: clamp it (a no-op whenever the edge is taken).
                    let max = self.max_of(&x);
                    if x.parse::<u64>().is_err() && max < u128::from(u64::MAX) {
                        // As IR spells an i64 constant (signed); not through `minmax`, which
                        // would drop a `umin` with a constant no smaller than the largest value.
                        self.decls.insert("declare i64 @llvm.umin.i64(i64, i64)");
                        x = self.emit(format!("call i64 @llvm.umin.i64(i64 {x}, i64 {})", max as u64 as i64));
                        self.max.insert(x.clone(), max);
                    }
                    acc = Some(match acc {
                        None => x,
                        Some(prev) => self.minmax("umax", prev, x),
                    });
                }
                acc
            }
            _ => None,
        }
    }

    /// An upper bound of `a - b` (of type `ty`, wrapping) where `a >= b`: `a`'s, with the condition
    /// `L(a) >= b` (`b` uniform, else `L(a) >= B(b)`) for `U`. Where it holds and the check runs,
    /// `a >= L(a) >= b`, so the difference does not wrap and is at most `a`.
    fn difference(
        &mut self,
        a: &'a str,
        b: Result<u64, &'a str>,
        ty: &str,
        facts: Option<&[Fact<'a>]>,
    ) -> Option<String> {
        let bound = self.upper(a, ty, facts)?;
        let low = self.lower(a, ty, facts, 0);
        let b = match b {
            Ok(c) => c.to_string(),
            Err(b) => match self.exact64(b, ty) {
                Some(e) => e,
                None => self.upper(b, ty, facts)?,
            },
        };
        let side = match (low.parse::<u64>(), b.parse::<u64>()) {
            (Ok(l), Ok(b)) => (l >= b).to_string(),
            _ if low == b => "true".to_string(),
            _ => self.emit(format!("icmp uge i64 {low}, {b}")),
        };
        self.side.push(side);
        Some(bound)
    }

    /// `b` lowered by one where it equals `k`: a bound of a value that is at most `b` and not
    /// `k`. (Where `b = k = 0` no value is both, the block never runs, and the wrapped `b - 1`
    /// is a bound as good as any.)
    fn below_if_equal(&mut self, b: String, k: String) -> String {
        if self.below.get(&b) == Some(&k) {
            return b;
        }
        if b == k || self.minus_one.get(&b).is_some_and(|x| self.plus_one(&k).as_ref() == Some(x)) {
            // (`sub1(x)` and the uniform `x - 1` are one value.)
            return self.sub1(b);
        }
        if let (Ok(x), Ok(y)) = (b.parse::<u64>(), k.parse::<u64>()) {
            return if x == y { x.saturating_sub(1) } else { x }.to_string();
        }
        let max = self.max_of(&b);
        let equal = self.emit(format!("icmp eq i64 {b}, {k}"));
        let less = self.emit(format!("add i64 {b}, -1"));
        let v = self.emit(format!("select i1 {equal}, i64 {less}, i64 {b}"));
        self.max.insert(v.clone(), max);
        v
    }

    /// Bounds of `v` from a guard `c < len` (`c <= lim`) where `c` is `v * n + x` (or `v * n`),
    /// computed without wrapping (`nuw`, or the operands' largest values show no wrap is
    /// possible), `n` uniform: then `v * n <= c < len`. For each uniform `k` that a guard says
    /// `v != k` of (the stencil's interior `y != n - 1`), where `(k + 1) * n >= len` (computed
    /// saturating: a saturated product is below the true one) `v * n < (k + 1) * n`, so `v <= k`
    /// (`n = 0` gives `len = 0`, and the guard never held), and with `v != k`, `v <= k - 1`;
    /// elsewhere the bound is `v`'s largest value. (Dividing `len - 1` by `n` would bound `v`
    /// without such a `k`, but a 64-bit division at entry costs more than the checks it removes:
    /// it runs once per warp, as often as a one-point-per-thread kernel's body.)
    fn row_bounds(&mut self, v: &'a str, ty: &str, fact: &Fact<'a>, facts: Option<&[Fact<'a>]>) -> Vec<String> {
        let func = self.func;
        let no_wrap = |inst: Inst<'_>| match inst {
            Inst::Bin { op, ty, a, b, nuw } => {
                let (ma, mb) = (func.value_max(a, ty, 0), func.value_max(b, ty, 0));
                let full = (1u128 << bits(ty).unwrap_or(64)) - 1;
                nuw || (op == "mul" && ma * mb <= full) || (op == "add" && ma + mb <= full)
            }
            _ => false,
        };
        let is_mul = |x: &str| matches!(func.inst(x), Some(Inst::Bin { op: "mul", .. }));
        let product = match func.inst(fact.lhs) {
            Some(Inst::Bin { op: "mul", .. }) => fact.lhs,
            Some(c @ Inst::Bin { op: "add", a, b, .. }) if no_wrap(c) => {
                if is_mul(a) {
                    a
                } else if is_mul(b) {
                    b
                } else {
                    return Vec::new();
                }
            }
            _ => return Vec::new(),
        };
        let Some(m @ Inst::Bin { op: "mul", ty: mty, a, b, .. }) = func.inst(product) else { return Vec::new() };
        if mty != ty || !no_wrap(m) {
            return Vec::new();
        }
        let n = if a == v {
            b
        } else if b == v {
            a
        } else {
            return Vec::new();
        };
        let (Some(n), Some(len)) = (self.exact64(n, ty), self.upper(fact.rhs, ty, facts)) else { return Vec::new() };
        let top = func.value_max(v, ty, 0).min(u128::from(u64::MAX)) as u64;
        // (k, `k - 1`, its largest value, whether `v <= k` holds: a constant or an `i1`).
        let mut found: Vec<(String, String, u128, String)> = Vec::new();
        for ne in facts.unwrap_or_default().iter().filter(|f| f.ne && f.lhs == v) {
            let Some(k) = self.exact64(ne.rhs, ty) else { continue };
            if k == "0" {
                // `v <= 0` and `v != 0`: nothing runs; no bound worth a test.
                continue;
            }
            let x = self.plus_one(&k);
            let (k1, below, max) = match &x {
                // Where the check runs and `v <= k` holds, `k >= 1` (`v != k`), so `x >= 2` and
                // `x - 2` is at most `max(x) - 2`.
                Some(x) => {
                    let max = self.max_of(x).saturating_sub(2);
                    let below = self.emit(format!("add i64 {x}, -2"));
                    self.max.insert(below.clone(), max);
                    (x.clone(), below, max)
                }
                None => {
                    let below = self.sub1(k.clone());
                    let max = self.max_of(&below);
                    (self.plus(k.clone(), "1".to_string()), below, max)
                }
            };
            let reach = self.mul_sat(k1, n.clone());
            let pred = if fact.strict { "uge" } else { "ugt" };
            let covers = match (reach.parse::<u64>(), len.parse::<u64>()) {
                (Ok(r), Ok(l)) => (if fact.strict { r >= l } else { r > l }).to_string(),
                _ => self.emit(format!("icmp {pred} i64 {reach}, {len}")),
            };
            if covers != "false" {
                found.push((k, below, max, covers));
            }
        }
        let mut bounds = Vec::new();
        let alone = found.len() == 1;
        for (k, below, max, covers) in found {
            let bound = if covers == "true" {
                below
            } else if alone {
                // One such `k`: `U` asks for `v <= k` (without it the bound would be `v`'s
                // largest value, too large for any condition on a length to hold).
                self.side.push(covers);
                below
            } else {
                let max = max.max(u128::from(top));
                let b = self.emit(format!("select i1 {covers}, i64 {below}, i64 {top}"));
                self.max.insert(b.clone(), max);
                b
            };
            self.below.insert(bound.clone(), k);
            bounds.push(bound);
        }
        bounds
    }

    /// `x` where `k` was built as `x - 1` (wrapping: `k + 1 = x` whatever `x`).
    fn plus_one(&self, k: &str) -> Option<String> {
        let rhs = self.cse.iter().find(|(_, v)| *v == k)?.0;
        let x = rhs.strip_prefix("add i64 ")?;
        let x = x.strip_suffix(", -1").or_else(|| x.strip_suffix(", 18446744073709551615"))?;
        (!x.contains(' ')).then(|| x.to_string())
    }

    /// A lower bound (unsigned, as an `i64` at entry; `0` where none is known) of `v` of type
    /// `ty` wherever `facts` hold: from guards `k < v`, `k <= v` and `v != k` with `k` uniform,
    /// and through `add`/`mul` that cannot wrap (`nuw`, or the operands' largest values) and
    /// `zext`. Where the check runs, each is at most `v`, so their sums and products do not
    /// wrap either; at entry, where it does not, they are plain arithmetic (never poison).
    fn lower(&mut self, v: &'a str, ty: &str, facts: Option<&[Fact<'a>]>, depth: usize) -> String {
        if let Some(c) = constant(v, ty) {
            return c.to_string();
        }
        if let Some(e) = self.exact64(v, ty) {
            return e;
        }
        if depth > 8 {
            return "0".to_string();
        }
        if let Some(done) = self.memo_lower.get(&(v, facts.is_some())) {
            return done.clone();
        }
        let mut low = "0".to_string();
        for fact in facts.unwrap_or_default() {
            if fact.ne || fact.rhs != v {
                continue;
            }
            let Some(k) = self.exact64(fact.lhs, ty) else { continue };
            // `k < v` leaves room for `k + 1` below `v`: no wrap where the check runs.
            let k = if fact.strict { self.plus(k, "1".to_string()) } else { k };
            low = self.minmax("umax", low, k);
        }
        if low == "0"
            && let Some(inst) = self.func.inst(v)
        {
            low = match inst {
                Inst::Bin { op: op @ ("add" | "mul"), ty, a, b, nuw } => {
                    let (ma, mb) = (self.func.value_max(a, ty, 0), self.func.value_max(b, ty, 0));
                    let full = (1u128 << bits(ty).unwrap_or(64)) - 1;
                    let fits = if op == "add" { ma + mb <= full } else { ma * mb <= full };
                    if nuw || fits {
                        let (x, y) = (self.lower(a, ty, facts, depth + 1), self.lower(b, ty, facts, depth + 1));
                        if op == "add" { self.plus(x, y) } else { self.times(x, y) }
                    } else {
                        low
                    }
                }
                Inst::Cast { op: "zext", from, a, .. } => self.lower(a, from, facts, depth + 1),
                _ => low,
            };
        }
        // `v >= L` and `v != k` give `v >= L + 1` where `k = L` (`y != 0`); constants `k` only,
        // smallest first, so the entry test stays short.
        let mut ks: Vec<u64> = facts
            .unwrap_or_default()
            .iter()
            .filter(|f| f.ne && f.lhs == v)
            .filter_map(|f| constant(f.rhs, ty))
            .collect();
        ks.sort_unstable();
        for k in ks {
            low = match low.parse::<u64>() {
                Ok(l) if l == k => (l + 1).to_string(),
                Ok(_) => low,
                Err(_) => {
                    let equal = self.emit(format!("icmp eq i64 {low}, {k}"));
                    let more = self.plus(low.clone(), "1".to_string());
                    self.emit(format!("select i1 {equal}, i64 {more}, i64 {low}"))
                }
            };
        }
        self.memo_lower.insert((v, facts.is_some()), low.clone());
        low
    }

    /// `x + y`, wrapping (a lower bound's arithmetic), folded where both are constants.
    fn plus(&mut self, x: String, y: String) -> String {
        match (x.parse::<u64>(), y.parse::<u64>()) {
            (Ok(a), Ok(b)) => a.wrapping_add(b).to_string(),
            (Ok(0), _) => y,
            (_, Ok(0)) => x,
            _ => self.emit(format!("add i64 {x}, {y}")),
        }
    }

    /// `x * y`, wrapping, folded where both are constants.
    fn times(&mut self, x: String, y: String) -> String {
        match (x.parse::<u64>(), y.parse::<u64>()) {
            (Ok(a), Ok(b)) => a.wrapping_mul(b).to_string(),
            (Ok(0), _) | (_, Ok(0)) => "0".to_string(),
            (Ok(1), _) => y,
            (_, Ok(1)) => x,
            _ => self.emit(format!("mul i64 {x}, {y}")),
        }
    }

    /// `x - 1`, wrapping: every `x` lowered here is at least 1 whenever the check it bounds can
    /// run (an extent of the launch; the right side of a guard `v < x` that held; a divisor), so
    /// for `x = 0` the check never runs and any condition is true of it.
    fn sub1(&mut self, x: String) -> String {
        if let Ok(c) = x.parse::<u64>() {
            return c.saturating_sub(1).to_string();
        }
        let v = self.emit(format!("add i64 {x}, -1"));
        let max = self.max_of(&x);
        self.max.insert(v.clone(), max.saturating_sub(1));
        self.minus_one.insert(v.clone(), x);
        v
    }

    fn add_sat(&mut self, x: String, y: String) -> String {
        match (x.parse::<u64>(), y.parse::<u64>()) {
            (Ok(a), Ok(b)) => a.saturating_add(b).to_string(),
            // A negative offset (`add nsw %i, -1`) as unsigned: the sum saturates unless the
            // other operand is 0; `u64::MAX` is a bound all the same, and drops the check.
            (Ok(c), _) | (_, Ok(c)) if c >= 1 << 63 => u64::MAX.to_string(),
            (Ok(0), _) => y,
            (_, Ok(0)) => x,
            _ if self.max_of(&x) + self.max_of(&y) <= u128::from(u64::MAX) => {
                // Cannot overflow: a plain sum, kept as `base + constant` so that checks at
                // constant offsets from one index share their condition. No `nuw`: the largest
                // values assume every `sub1` operand is at least 1, and where one is 0 (a check
                // that cannot run) the sum may wrap; it must not be poison.
                let max = self.max_of(&x) + self.max_of(&y);
                let ((bx, cx), (by, cy)) = (self.split(&x), self.split(&y));
                let base = match (bx, by) {
                    (Some(a), Some(b)) => {
                        let (a, b) = if a <= b { (a, b) } else { (b, a) };
                        let sum_max = self.max_of(&a) + self.max_of(&b);
                        let v = self.emit(format!("add i64 {a}, {b}"));
                        self.max.insert(v.clone(), sum_max);
                        self.sums.insert(v.clone(), (a, b));
                        Some(v)
                    }
                    (a, b) => a.or(b),
                };
                let c = cx + cy;
                match base {
                    None => c.to_string(),
                    Some(b) if c == 0 => b,
                    Some(b) => {
                        let v = self.emit(format!("add i64 {b}, {c}"));
                        self.max.insert(v.clone(), max);
                        self.affine.insert(v.clone(), (b, c));
                        v
                    }
                }
            }
            _ => {
                self.decls.insert("declare i64 @llvm.uadd.sat.i64(i64, i64)");
                self.emit(format!("call i64 @llvm.uadd.sat.i64(i64 {x}, i64 {y})"))
            }
        }
    }

    fn mul_sat(&mut self, x: String, y: String) -> String {
        match (x.parse::<u64>(), y.parse::<u64>()) {
            (Ok(a), Ok(b)) => a.saturating_mul(b).to_string(),
            (Ok(1), _) => y,
            (_, Ok(1)) => x,
            _ if self.max_of(&x) * self.max_of(&y) <= u128::from(u64::MAX) => {
                let max = self.max_of(&x) * self.max_of(&y);
                let v = self.emit(format!("mul i64 {x}, {y}"));
                self.max.insert(v.clone(), max);
                v
            }
            _ => {
                self.decls.insert("declare { i64, i1 } @llvm.umul.with.overflow.i64(i64, i64)");
                let m = self.emit(format!("call {{ i64, i1 }} @llvm.umul.with.overflow.i64(i64 {x}, i64 {y})"));
                let value = self.emit(format!("extractvalue {{ i64, i1 }} {m}, 0"));
                let overflow = self.emit(format!("extractvalue {{ i64, i1 }} {m}, 1"));
                self.emit(format!("select i1 {overflow}, i64 -1, i64 {value}"))
            }
        }
    }

    fn minmax(&mut self, op: &str, x: String, y: String) -> String {
        if let (Ok(a), Ok(b)) = (x.parse::<u64>(), y.parse::<u64>()) {
            return if op == "umin" { a.min(b) } else { a.max(b) }.to_string();
        }
        if x == y {
            return x;
        }
        match (op, x.as_str(), y.as_str()) {
            ("umax", "0", _) | ("umin", _, "0") => return y,
            ("umax", _, "0") | ("umin", "0", _) => return x,
            _ => {}
        }
        // `umin(v, c)` is `v` when `v` is at most `c`. (A `v` that may wrap above its largest
        // value only when its check cannot run is then a looser bound, still a bound.)
        if op == "umin" {
            for (v, c) in [(&x, &y), (&y, &x)] {
                if c.parse::<u64>().is_ok_and(|c| self.max_of(v) <= u128::from(c)) {
                    return v.clone();
                }
            }
        }
        let decl =
            if op == "umin" { "declare i64 @llvm.umin.i64(i64, i64)" } else { "declare i64 @llvm.umax.i64(i64, i64)" };
        self.decls.insert(decl);
        let (mx, my) = (self.max_of(&x), self.max_of(&y));
        let v = self.emit(format!("call i64 @llvm.{op}.i64(i64 {x}, i64 {y})"));
        self.max.insert(v.clone(), if op == "umin" { mx.min(my) } else { mx.max(my) });
        v
    }
}

/// The declaration of a two-operand min/max intrinsic such as `llvm.umin.i32`.
fn minmax_decl(name: &str) -> Option<&'static str> {
    const DECLS: [&str; 8] = [
        "declare i32 @llvm.umin.i32(i32, i32)",
        "declare i64 @llvm.umin.i64(i64, i64)",
        "declare i32 @llvm.umax.i32(i32, i32)",
        "declare i64 @llvm.umax.i64(i64, i64)",
        "declare i32 @llvm.smin.i32(i32, i32)",
        "declare i64 @llvm.smin.i64(i64, i64)",
        "declare i32 @llvm.smax.i32(i32, i32)",
        "declare i64 @llvm.smax.i64(i64, i64)",
    ];
    DECLS.iter().copied().find(|d| d.contains(&format!("@{name}(")))
}

#[cfg(test)]
mod tests {
    use super::version;

    const POISON_F32: u64 = super::POISON_OFFSET / 4;

    /// A kernel with parameters `%x` (f32 data), `%len`, `%n`, `%w`, `%h` and `body` after the
    /// label `start`.
    fn kernel(body: &str) -> String {
        format!(
            "define ptx_kernel void @k(ptr %x, i64 %len, i64 %n, i64 %w, i64 %h) {{\nstart:\n{body}}}\n\
             declare void @__oxide_bounds_fail_if(i1)\n"
        )
    }

    /// The checked load `x[idx]` with its marker and poison select (`lower/bounds.rs`).
    fn checked_load(n: u32, idx: &str) -> String {
        format!(
            "  %oob{n} = icmp uge i64 {idx}, %len\n  tail call void @__oxide_bounds_fail_if(i1 %oob{n})\n  \
             %s{n} = select i1 %oob{n}, i64 {POISON_F32}, i64 {idx}\n  %a{n} = getelementptr float, ptr %x, i64 %s{n}\n  \
             %v{n} = load float, ptr %a{n}, align 4\n"
        )
    }

    /// `%i` = this thread's 1D index; `if %i < %n { x[%i] }`.
    fn guarded(index_def: &str) -> String {
        kernel(&format!(
            "{index_def}  %in = icmp ult i64 %i, %n\n  br i1 %in, label %then, label %exit\nthen:\n{}  br label %exit\n\
             exit:\n  ret void\n",
            checked_load(0, "%i")
        ))
    }

    const THREAD_INDEX: &str = "  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n  %i = zext i32 %t to i64\n";

    #[test]
    fn a_guard_on_a_uniform_length_versions_the_kernel() {
        let out = version(&guarded("  %i = load i64, ptr %x, align 8\n"));
        // U: n - 1 < len, spelled n <= len.
        assert!(out.contains("%oxide.uv.2 = icmp ule i64 %n, %len"), "{out}");
        assert!(out.contains("br i1 %oxide.uv.ok.0, label %oxide.fast.start, label %start\nstart:\n"), "{out}");
        // The fast copy: the check is its in-bounds value, the marker records nothing.
        assert!(out.contains("  %oxide.fast.oob0 = and i1 true, false\n"), "{out}");
        assert!(out.contains("@__oxide_bounds_fail_if(i1 false)"), "{out}");
        assert!(
            out.contains(&format!("%oxide.fast.s0 = select i1 %oxide.fast.oob0, i64 {POISON_F32}, i64 %oxide.fast.i"))
        );
        assert!(out.contains("br i1 %oxide.fast.in, label %oxide.fast.then, label %oxide.fast.exit"), "{out}");
        // The original copy is unchanged.
        assert!(out.contains("tail call void @__oxide_bounds_fail_if(i1 %oob0)"), "{out}");
    }

    #[test]
    fn thread_indices_are_bounded_by_the_block_size() {
        // No guard: tid.x <= ntid.x - 1 < len.
        let body = format!("{THREAD_INDEX}{}  ret void\n", checked_load(0, "%i"));
        let out = version(&kernel(&body));
        // Without launch bounds a block has at most 1024 threads.
        assert!(out.contains("call range(i32 1, 1025) i32 @llvm.nvvm.read.ptx.sreg.ntid.x()"), "{out}");
        assert!(out.contains("declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()"), "{out}");
        assert!(out.contains("%oxide.fast.oob0 = and i1 true, false"), "{out}");
        // `launch_bounds(256)` (`"nvvm.maxntid"="256,1,1"`): at most 256.
        let bounded = kernel(&body).replace(") {\nstart:", ") #3 {\nstart:")
            + "attributes #3 = { convergent \"nvvm.maxntid\"=\"256,1,1\" }\n";
        let out = version(&bounded);
        assert!(out.contains("call range(i32 1, 257) i32 @llvm.nvvm.read.ptx.sreg.ntid.x()"), "{out}");
    }

    #[test]
    fn launch_bounds_decide_a_condition_at_compile_time() {
        // `parts[t / 32]` under `t % 32 == 0` with 8 parts and launch_bounds(256): the bound
        // `(ntid.x - 1) & -32` is at most 224 < 225, so no runtime condition is needed.
        let body = "  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n  %t64 = zext i32 %t to i64\n  \
                    %low = and i64 %t64, 31\n  %lead = icmp eq i64 %low, 0\n  br i1 %lead, label %w, label %exit\n\
                    w:\n  %i = lshr i64 %t64, 5\n"
            .to_string()
            + &checked_load(0, "%i").replace("%len", "8")
            + "  br label %exit\nexit:\n  ret void\n";
        let bounded = kernel(&body).replace(") {\nstart:", ") #3 {\nstart:")
            + "attributes #3 = { convergent \"nvvm.maxntid\"=\"256,1,1\" }\n";
        let out = version(&bounded);
        assert!(out.contains("  br i1 true, label %oxide.fast.start, label %start"), "{out}");
        assert!(out.contains("%oxide.fast.oob0 = and i1 true, false"), "{out}");
        // Without launch bounds (1024 threads) it is a runtime condition, `(ntid.x - 1) / 32 < 8`.
        assert!(version(&kernel(&body)).contains(", 32\n"), "{}", version(&kernel(&body)));
        let out = version(&kernel(&body));
        assert!(out.contains("icmp ult i64 %oxide.uv."), "{out}");
    }

    #[test]
    fn an_assumed_constant_bound_is_combined_with_the_operands_bound() {
        // `tid.x < 256` assumed (launch bounds) and a shared index `tid.x * 33 < 1056`: 255 alone
        // proves nothing, `ntid.x - 1` (a runtime condition) does; both are kept.
        let body = "  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n  %small = icmp ult i32 %t, 256\n  \
                    call void @llvm.assume(i1 %small)\n  br label %next\nnext:\n  %t64 = zext i32 %t to i64\n  \
                    %i = mul i64 %t64, 33\n"
            .to_string()
            + &checked_load(0, "%i").replace("%len", "1056")
            + "  ret void\n";
        let out = version(&kernel(&body));
        assert!(
            out.contains("@llvm.umin.i64(i64 255, i64 %oxide.uv.") || out.contains("@llvm.umin.i64(i64 %oxide.uv."),
            "{out}"
        );
        assert!(out.contains("%oxide.fast.oob0 = and i1 true, false"), "{out}");
    }

    #[test]
    fn two_guarded_coordinates_bound_a_row_major_index() {
        // transpose: `if x < w && y < h { x[y * w + x] }`, x and y loaded (not uniform).
        let body = format!(
            "  %x0 = load i64, ptr %x, align 8\n  %y0 = load i64, ptr %x, align 8\n  %cx = icmp ult i64 %x0, %w\n  \
             %cy = icmp ult i64 %y0, %h\n  %both = select i1 %cx, i1 %cy, i1 false\n  br i1 %both, label %then, label %exit\n\
             then:\n  %row = mul i64 %y0, %w\n  %i = add i64 %row, %x0\n{}  br label %exit\nexit:\n  ret void\n",
            checked_load(0, "%i")
        );
        let out = version(&kernel(&body));
        assert!(out.contains("@llvm.umul.with.overflow.i64(i64 %oxide.uv.1, i64 %w)"), "{out}");
        assert!(out.contains("%oxide.fast.oob0 = and i1 true, false"), "{out}");
    }

    #[test]
    fn a_constant_length_check_of_shared_memory_is_bounded_by_ntid() {
        // `tile[tid.x * 33 + tid.y]` against 1056 elements, spelled as opt does (`ugt … 1055`).
        let body = "  %tx = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n  %ty = call i32 @llvm.nvvm.read.ptx.sreg.tid.y()\n  \
                    %a = zext i32 %tx to i64\n  %b = zext i32 %ty to i64\n  %m = mul nuw nsw i64 %a, 33\n  \
                    %i = add nuw nsw i64 %m, %b\n  %bad = icmp samesign ugt i64 %i, 1055\n  \
                    tail call void @__oxide_bounds_fail_if(i1 %bad)\n  ret void\n";
        let out = version(&kernel(body));
        assert!(out.contains("ntid.y()"), "{out}");
        assert!(out.contains("icmp ule i64 %oxide.uv."), "{out}");
        assert!(out.contains(", 1055\n"), "{out}");
        assert!(out.contains("%oxide.fast.bad = and i1 true, false"), "{out}");
    }

    #[test]
    fn a_multiple_of_a_power_of_two_rounds_its_bound_down() {
        // `if t % 32 == 0 { parts[t / 32] }` with 8 parts, spelled as opt does: `t > 224` fails.
        let body = "  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n  %z = zext i32 %t to i64\n  \
                    %low = and i64 %z, 31\n  %lead = icmp eq i64 %low, 0\n  br i1 %lead, label %then, label %exit\n\
                    then:\n  %bad = icmp samesign ugt i32 %t, 224\n  tail call void @__oxide_bounds_fail_if(i1 %bad)\n  \
                    br label %exit\nexit:\n  ret void\n";
        let out = version(&kernel(body));
        assert!(out.contains("= and i64 %oxide.uv.3, -32\n"), "{out}");
        assert!(out.contains("%oxide.fast.bad = and i1 true, false"), "{out}");
    }

    #[test]
    fn checks_at_constant_offsets_share_one_condition() {
        // `tile[i]` and `tile[i + 264]` of a 1056-element tile: one condition `i <= 791`.
        let body = "  %tx = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n  %i = zext i32 %tx to i64\n  \
                    %j = add nuw nsw i64 %i, 264\n  %bad0 = icmp ugt i64 %i, 1055\n  \
                    tail call void @__oxide_bounds_fail_if(i1 %bad0)\n  %bad1 = icmp ugt i64 %j, 1055\n  \
                    tail call void @__oxide_bounds_fail_if(i1 %bad1)\n  ret void\n";
        let out = version(&kernel(body));
        let entry = &out[..out.find("\nstart:").unwrap()];
        assert_eq!(entry.matches(" = icmp ").count(), 1, "{out}");
        assert!(entry.contains("icmp ule i64 %oxide.uv.3, 791"), "{out}");
        assert!(
            out.contains("%oxide.fast.bad0 = and i1 true, false")
                && out.contains("%oxide.fast.bad1 = and i1 true, false")
        );
    }

    #[test]
    fn checks_at_constant_offsets_against_a_length_share_the_largest() {
        // `x[t]`, `x[t + 256]` with `t < ntid.x`: one condition `ntid.x - 1 + 256 < len`.
        let body = format!(
            "{THREAD_INDEX}{}  %j = add nuw i64 %i, 256\n{}  ret void\n",
            checked_load(0, "%i"),
            checked_load(1, "%j")
        );
        let out = version(&kernel(&body));
        let entry = &out[..out.find("\nstart:").unwrap()];
        assert_eq!(entry.matches(" = icmp ").count(), 1, "{out}");
        assert!(entry.contains(", 256\n"), "{out}");
        assert!(entry.contains("icmp ult i64 %oxide.uv."), "{out}");
    }

    #[test]
    fn a_kernel_that_linearises_the_grid_assumes_a_flat_launch_in_its_fast_copy() {
        let body = format!(
            "  %bz = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.z()\n  %gy = call i32 @llvm.nvvm.read.ptx.sreg.nctaid.y()\n\
             {THREAD_INDEX}{}  ret void\n",
            checked_load(0, "%i")
        );
        let out = version(&kernel(&body));
        for reg in ["ntid.y", "ntid.z", "nctaid.y", "nctaid.z"] {
            assert!(out.contains(&format!("@llvm.nvvm.read.ptx.sreg.{reg}()")), "{out}");
        }
        assert!(out.contains("= icmp eq i32 %oxide.uv."), "{out}");
        assert!(out.contains("  %oxide.fast.bz = add i32 0, 0\n  %oxide.fast.gy = add i32 1, 0\n"), "{out}");
        // The checked copy reads them.
        assert!(out.contains("  %bz = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.z()"), "{out}");
    }

    #[test]
    fn a_flat_kernel_asks_for_fewer_than_2_pow_32_threads() {
        // The fast copy computes `ctaid.x * ntid.x + tid.x` in 32 bits (`flat_index_u32.rs`):
        // `U` asks that `nctaid.x * ntid.x` not wrap in 32 bits, under the name that pass looks for.
        let flat = format!(
            "  %bz = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.z()\n  %gy = call i32 @llvm.nvvm.read.ptx.sreg.nctaid.y()\n\
             {THREAD_INDEX}{}  ret void\n",
            checked_load(0, "%i")
        );
        let out = version(&kernel(&flat));
        let entry = out.split("\nstart:").next().unwrap();
        let line = |prefix: &str| entry.lines().find(|l| l.trim_start().starts_with(prefix)).map(str::trim);
        // The name of the entry's value `= rhs`.
        let defined_as = |rhs: &str| {
            let tail = format!(" = {rhs}");
            entry.lines().map(str::trim).find(|l| l.ends_with(&tail)).and_then(|l| l.split(" = ").next())
        };
        // The entry's read of `reg` (maybe with a `range`).
        let read = |reg: &str| {
            let tail = format!(" i32 @llvm.nvvm.read.ptx.sreg.{reg}()");
            entry
                .lines()
                .map(str::trim)
                .find(|l| l.starts_with("%oxide.uv.") && l.ends_with(&tail))?
                .split(" = ")
                .next()
        };
        let (blocks, threads) = (read("nctaid.x").expect(&out), read("ntid.x").expect(&out));
        let product = format!("%{}", super::GRID_THREADS_U32);
        let call = format!("{product} = call {{ i32, i1 }} @llvm.umul.with.overflow.i32(i32 {blocks}, i32 {threads})");
        assert_eq!(line(&product), Some(call.as_str()), "{out}");
        assert!(out.contains("declare { i32, i1 } @llvm.umul.with.overflow.i32(i32, i32)"), "{out}");
        // Its overflow bit, negated, is one of the conditions the branch to the fast copy ands.
        let wraps = defined_as(&format!("extractvalue {{ i32, i1 }} {product}, 1")).expect(&out);
        let fits = defined_as(&format!("xor i1 {wraps}, true")).expect(&out);
        let anded = entry
            .lines()
            .any(|l| l.contains("%oxide.uv.ok.") && l.contains(" = and i1 ") && l.ends_with(&format!(", {fits}")));
        assert!(anded, "{out}");
        // A kernel that does not linearise the grid gets no such condition.
        let out = version(&kernel(&format!("{THREAD_INDEX}{}  ret void\n", checked_load(0, "%i"))));
        assert!(out.contains("%oxide.fast.") && !out.contains("umul.with.overflow"), "{out}");
    }

    #[test]
    fn a_flat_kernel_bounds_its_index_as_in_a_flat_launch() {
        // `thread::index_1d`: ((ctaid.z * nctaid.y + ctaid.y) * nctaid.x + ctaid.x) * threads +
        // thread, unchecked `x[i]`. In a flat launch that is `ctaid.x * ntid.x + tid.x`: the
        // entry test needs no saturating product of the six extents.
        let sreg = |v: &str, r: &str| format!("  %{v} = call i32 @llvm.nvvm.read.ptx.sreg.{r}()\n");
        let mut body = String::new();
        for (v, r) in [("bz", "ctaid.z"), ("gy", "nctaid.y"), ("by", "ctaid.y"), ("gx", "nctaid.x"), ("bx", "ctaid.x")]
        {
            body += &sreg(v, r);
        }
        for (v, r) in [("nx", "ntid.x"), ("ny", "ntid.y"), ("tx", "tid.x"), ("ty", "tid.y")] {
            body += &sreg(v, r);
        }
        body += "  %b0 = mul i32 %bz, %gy\n  %b1 = add i32 %b0, %by\n  %b2 = zext i32 %b1 to i64\n  \
                 %gx64 = zext i32 %gx to i64\n  %b3 = mul i64 %b2, %gx64\n  %bx64 = zext i32 %bx to i64\n  \
                 %b4 = add i64 %b3, %bx64\n  %n0 = mul i32 %nx, %ny\n  %n64 = zext i32 %n0 to i64\n  \
                 %b5 = mul i64 %b4, %n64\n  %t0 = mul i32 %ty, %nx\n  %t1 = add i32 %t0, %tx\n  \
                 %t64 = zext i32 %t1 to i64\n  %i = add i64 %b5, %t64\n";
        body += &checked_load(0, "%i");
        body += "  ret void\n";
        let out = version(&kernel(&body));
        let entry = out.split("br i1").next().unwrap();
        // The one `umul.with.overflow` is the test for fewer than 2^32 threads, not a bound's.
        assert_eq!(entry.matches("umul.with.overflow").count(), 1, "{out}");
        assert!(!entry.contains("uadd.sat"), "{out}");
        // The bound is (nctaid.x - 1) * ntid.x + ntid.x - 1 < len.
        assert!(entry.contains("call i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()"), "{out}");
        assert!(entry.contains("icmp ult i64 %oxide.uv.") && entry.contains(", %len"), "{out}");
        assert!(out.contains("  %oxide.fast.oob0 = and i1 true, false\n"), "{out}");
    }

    #[test]
    fn the_first_blocks_index_reads_happen_before_the_test() {
        // `tid.x` (first block) is read once in the new entry, both copies use that value; the
        // read in a later block stays where it is.
        let body = format!(
            "  %t = tail call noundef range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x(), !dbg !7\n  \
             %i = zext i32 %t to i64\n{}  br label %next\nnext:\n  \
             %u = call i32 @llvm.nvvm.read.ptx.sreg.tid.y()\n  ret void\n",
            checked_load(0, "%i")
        );
        let out = version(&kernel(&body));
        let entry = out.split("br i1").next().unwrap();
        assert!(
            entry
                .contains("  %oxide.uv.tid_x = call noundef range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n"),
            "{out}"
        );
        assert!(out.contains("  %t = add i32 %oxide.uv.tid_x, 0\n"), "{out}");
        assert!(out.contains("  %oxide.fast.t = add i32 %oxide.uv.tid_x, 0\n"), "{out}");
        assert!(out.contains("  %oxide.fast.u = call i32 @llvm.nvvm.read.ptx.sreg.tid.y()"), "{out}");
        assert!(!entry.contains("tid.y"), "{out}");
    }

    #[test]
    fn a_read_past_a_guarded_length_stays_checked() {
        // `if i < n { x[i]; x[i + 1] }`: only `x[i]` gets a condition (`n <= len`).
        let body = format!(
            "  %i = load i64, ptr %x, align 8\n  %in = icmp ult i64 %i, %n\n  br i1 %in, label %then, label %exit\n\
             then:\n{}  %j = add nuw i64 %i, 1\n{}  br label %exit\nexit:\n  ret void\n",
            checked_load(0, "%i"),
            checked_load(1, "%j")
        );
        // `n` the length of another slice (`out.get_mut(i)`).
        let input = kernel(&body).replace("i64 %len, i64 %n,", "i64 %len, ptr %out, i64 %n,");
        let out = version(&input);
        assert!(out.contains("icmp ule i64 %n, %len"), "{out}");
        assert!(out.contains("%oxide.fast.oob0 = and i1 true, false"), "{out}");
        assert!(out.contains("%oxide.fast.oob1 = icmp uge i64 %oxide.fast.j, %len"), "{out}");
        // `n` a plain parameter: both checks get a condition.
        assert!(version(&kernel(&body)).contains("%oxide.fast.oob1 = and i1 true, false"));
    }

    /// The bench's stencil5 as opt leaves it: `x < w` (`to_linear`), `c = y * w + x < n` with
    /// `n` the length of `out` (`out.get_mut(c)`), interior `x, y != 0`, `x, y != w - 1`; then
    /// `x[c]`, `x[c - w]`, `x[c + w]`, `x[c - 1]`, `x[c + 1]`. `flags` go on the row index's
    /// `mul` and `add` (`x`, `y` and `w` are 32-bit values zero-extended: no wrap either way).
    fn stencil(flags: &str) -> String {
        let body = format!(
            "  %x32 = load i32, ptr %x, align 4\n  %y32 = load i32, ptr %x, align 4\n  %w32 = trunc i64 %w to i32\n  \
             %x0 = zext i32 %x32 to i64\n  %y0 = zext i32 %y32 to i64\n  %ww = zext i32 %w32 to i64\n  \
             %inx = icmp ult i64 %x0, %ww\n  br i1 %inx, label %row, label %exit\nrow:\n  \
             %r = mul {flags}i64 %ww, %y0\n  %c = add {flags}i64 %r, %x0\n  %inc = icmp ult i64 %c, %n\n  \
             br i1 %inc, label %b0, label %exit\nb0:\n  %x00 = icmp eq i64 %x0, 0\n  %y00 = icmp eq i32 %y32, 0\n  \
             %e0 = or i1 %y00, %x00\n  br i1 %e0, label %exit, label %b1\nb1:\n  %last = add nsw i64 %ww, -1\n  \
             %xl = icmp eq i64 %x0, %last\n  %yl = icmp eq i64 %last, %y0\n  %e1 = or i1 %xl, %yl\n  \
             br i1 %e1, label %exit, label %then\nthen:\n{}  %north = sub nsw i64 %c, %ww\n{}  \
             %south = add nuw nsw i64 %c, %ww\n{}  %west = add nsw i64 %c, -1\n{}  %east = add nuw nsw i64 %c, 1\n{}  \
             br label %exit\nexit:\n  ret void\n",
            checked_load(0, "%c"),
            checked_load(1, "%north"),
            checked_load(2, "%south"),
            checked_load(3, "%west"),
            checked_load(4, "%east"),
        );
        // `n` the length of another slice, `out`.
        kernel(&body).replace("i64 %len, i64 %n,", "i64 %len, ptr %out, i64 %n,")
    }

    #[test]
    fn a_stencil_loses_all_its_checks() {
        for flags in ["nuw nsw ", ""] {
            let out = version(&stencil(flags));
            for k in 0..5 {
                assert!(out.contains(&format!("%oxide.fast.oob{k} = and i1 true, false")), "{k} {flags}: {out}");
            }
            let entry = &out[..out.find("\nstart:").unwrap()];
            // y <= w - 2 (`y != w - 1` and `c < n`) where U has `w * w >= n`; x <= w - 2.
            assert!(entry.contains(" = mul i64 %oxide.uv.2, %oxide.uv.2\n"), "{out}");
            assert!(entry.contains(" = add i64 %oxide.uv.2, -2\n"), "{out}");
            assert!(entry.contains(" = icmp uge i64 %oxide.uv.8, %n\n"), "{out}");
            // All plain arithmetic: no division, no overflow tests.
            for op in ["udiv", "with.overflow", "uadd.sat", "icmp eq"] {
                assert!(!entry.contains(op), "{op}: {out}");
            }
            // `c` and `c - w`, `c - 1`: `n - 1 < len`; `c + w`, `c + 1` from `y * w + x`.
            assert!(entry.contains("icmp ule i64 %n, %len"), "{out}");
            // (`c + 1 < len` follows from `c + w < len` where `w >= 1`, as `x < w` says.)
            assert_eq!(entry.matches(", %len\n").count(), 2, "{out}");
        }
    }

    #[test]
    fn an_offset_of_one_is_implied_by_a_positive_offset() {
        // `if i < w { x[i + 1]; x[i + n] }` (`w`, `n` u32s): `w - 1 + 1 < len` follows from
        // `w - 1 + n < len` only where `n >= 1`, which a guard `k < n` says (a loaded `k`).
        let body = |guard: &str| {
            format!(
                "  %i = load i64, ptr %x, align 8\n  %k = load i64, ptr %x, align 8\n  %w32 = trunc i64 %w to i32\n  \
                 %wz = zext i32 %w32 to i64\n  %in = icmp ult i64 %i, %wz\n  %n32 = trunc i64 %n to i32\n  %nz = zext i32 %n32 to i64\n  %kn = icmp ult i64 %k, {guard}\n  \
                 %both = select i1 %in, i1 %kn, i1 false\n  br i1 %both, label %then, label %exit\nthen:\n  \
                 %a = add nuw i64 %i, 1\n{}  %b = add nuw i64 %i, %nz\n{}  br label %exit\nexit:\n  ret void\n",
                checked_load(0, "%a"),
                checked_load(1, "%b")
            )
        };
        let conditions = |out: &str| out[..out.find("\nstart:").unwrap()].matches(", %len\n").count();
        let out = version(&kernel(&body("%nz")));
        assert!(out.contains("%oxide.fast.oob0 = and i1 true, false"), "{out}");
        assert_eq!(conditions(&out), 1, "{out}");
        // `k < h` says nothing of `n`: both conditions.
        let out = version(&kernel(&body("%h")));
        assert!(out.contains("%oxide.fast.oob0 = and i1 true, false"), "{out}");
        assert_eq!(conditions(&out), 2, "{out}");
    }

    #[test]
    fn several_ne_guards_on_a_coordinate_each_select_their_bound() {
        // The stencil with one more interior test `y != h`: no one `k` is asked of U; each
        // `k - 1` is chosen where `(k + 1) * w >= n`, else `y`'s largest value (u32::MAX).
        let input = stencil("").replace(
            "%e1 = or i1 %xl, %yl\n",
            "%yh = icmp eq i64 %y0, %h\n  %e2 = or i1 %xl, %yh\n  %e1 = or i1 %e2, %yl\n",
        );
        let out = version(&input);
        let entry = &out[..out.find("\nstart:").unwrap()];
        assert_eq!(entry.matches(", i64 4294967295\n").count(), 2, "{out}");
        for k in 0..5 {
            assert!(out.contains(&format!("%oxide.fast.oob{k} = and i1 true, false")), "{k}: {out}");
        }
    }

    #[test]
    fn a_ne_guard_lowers_a_bound_that_equals_it() {
        // `if i < n && i != n - 1 { x[i + 1] }`: i <= n - 2, so n - 2 + 1 < len.
        let body = format!(
            "  %i = load i64, ptr %x, align 8\n  %in = icmp ult i64 %i, %n\n  %m = add i64 %n, -1\n  \
             %last = icmp eq i64 %i, %m\n  br i1 %in, label %test, label %exit\ntest:\n  \
             br i1 %last, label %exit, label %then\nthen:\n  %j = add nuw i64 %i, 1\n{}  br label %exit\n\
             exit:\n  ret void\n",
            checked_load(0, "%j")
        );
        let out = version(&kernel(&body));
        let entry = &out[..out.find("\nstart:").unwrap()];
        assert!(entry.contains("%oxide.uv.1 = add i64 %n, -1\n"), "{out}");
        assert!(entry.contains("%oxide.uv.3 = add i64 %oxide.uv.1, -1\n  %oxide.uv.4 = add i64 %oxide.uv.3, 1\n"));
        assert!(entry.contains("icmp ult i64 %oxide.uv.4, %len") && !entry.contains("select"), "{out}");
        // `i != w` with `w` another uniform value: `i <= (n - 1 == w ? n - 2 : n - 1)`.
        let out = version(&kernel(&body.replace("%last = icmp eq i64 %i, %m", "%last = icmp eq i64 %w, %i")));
        assert!(out.contains("= icmp eq i64 %oxide.uv.1, %w\n"), "{out}");
        assert!(out.contains("= select i1 %oxide.uv."), "{out}");
        assert!(out.contains("%oxide.fast.oob0 = and i1 true, false"), "{out}");
    }

    #[test]
    fn a_difference_that_cannot_wrap_is_bounded_by_its_first_operand() {
        // `if t != 0 { x[t - 1] }` (opt: `add nsw %t, -1`): t >= 1, so t - 1 <= ntid.x - 1.
        let body = format!(
            "{THREAD_INDEX}  %z = icmp eq i64 %i, 0\n  br i1 %z, label %exit, label %then\nthen:\n  \
             %j = add nsw i64 %i, -1\n{}  br label %exit\nexit:\n  ret void\n",
            checked_load(0, "%j")
        );
        let out = version(&kernel(&body));
        assert!(out.contains("%oxide.fast.oob0 = and i1 true, false"), "{out}");
        // `if n <= i { x[i - n] }` (a `sub` of a uniform value): U asks `n >= n`.
        let body = format!(
            "  %i = load i64, ptr %x, align 8\n  %in = icmp ult i64 %i, %w\n  %ge = icmp uge i64 %i, %n\n  \
             %both = select i1 %in, i1 %ge, i1 false\n  br i1 %both, label %then, label %exit\nthen:\n  \
             %j = sub i64 %i, %n\n{}  br label %exit\nexit:\n  ret void\n",
            checked_load(0, "%j")
        );
        let out = version(&kernel(&body));
        assert!(out.contains("%oxide.fast.oob0 = and i1 true, false"), "{out}");
        let entry = &out[..out.find("\nstart:").unwrap()];
        assert!(entry.contains("icmp ule i64 %w, %len") && !entry.contains("icmp uge"), "{out}");
        // Not below 2: `x[t - 2]` stays checked.
        unchanged_by_version(&kernel(&format!(
            "{THREAD_INDEX}  %z = icmp eq i64 %i, 0\n  br i1 %z, label %exit, label %then\nthen:\n  \
             %j = add nsw i64 %i, -2\n{}  br label %exit\nexit:\n  ret void\n",
            checked_load(0, "%j")
        )));
    }

    fn unchanged_by_version(input: &str) {
        assert_eq!(version(input), input);
    }

    #[test]
    fn refusals_leave_the_kernel_as_it_was() {
        let unchanged = |input: String| assert_eq!(version(&input), input);
        // An index loaded from memory, no guard: no bound.
        unchanged(kernel(&format!("  %i = load i64, ptr %x, align 8\n{}  ret void\n", checked_load(0, "%i"))));
        // Arithmetic that may wrap below zero: `sub` without `nuw`, `sext`.
        unchanged(kernel(&format!("{THREAD_INDEX}  %j = sub i64 %i, 1\n{}  ret void\n", checked_load(0, "%j"))));
        unchanged(kernel(&format!(
            "  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n  %i = sext i32 %t to i64\n{}  ret void\n",
            checked_load(0, "%i")
        )));
        // A guard with a bound that is not uniform (loaded).
        let loaded_bound = guarded("  %i = load i64, ptr %x, align 8\n").replace(
            "  %in = icmp ult i64 %i, %n\n",
            "  %m = load i64, ptr %x, align 8\n  %in = icmp ult i64 %i, %m\n",
        );
        unchanged(loaded_bound);
        // A length that is not uniform.
        unchanged(
            kernel(&format!("{THREAD_INDEX}  %l = load i64, ptr %x, align 8\n{}  ret void\n", checked_load(0, "%i")))
                .replace("icmp uge i64 %i, %len", "icmp uge i64 %i, %l"),
        );
        // A guard that does not dominate the check: `then` is also reached without it.
        let joined = kernel(&format!(
            "  %i = load i64, ptr %x, align 8\n  %in = icmp ult i64 %i, %n\n  %other = icmp eq i64 %n, 7\n  \
             br i1 %other, label %then, label %test\ntest:\n  br i1 %in, label %then, label %exit\nthen:\n{}  \
             br label %exit\nexit:\n  ret void\n",
            checked_load(0, "%i")
        ));
        unchanged(joined);
        // A guard on the false edge of `<` says nothing about an upper bound.
        unchanged(
            guarded("  %i = load i64, ptr %x, align 8\n")
                .replace("label %then, label %exit", "label %exit, label %then"),
        );
        // A device function: its parameters differ between threads.
        unchanged(guarded("  %i = load i64, ptr %x, align 8\n").replace("define ptx_kernel void", "define void"));
        // A bound that saturates (the condition could never hold): 31 * 2^63.
        unchanged(kernel(&format!(
            "  %l = call i32 @llvm.nvvm.read.ptx.sreg.laneid()\n  %i = zext i32 %l to i64\n  \
             %j = shl i64 %i, 63\n{}  ret void\n",
            checked_load(0, "%j")
        )));
        // One check proven of three (two indices loaded from memory): the copy would not pay
        // for its entry test.
        unchanged(kernel(&format!(
            "{THREAD_INDEX}{}  %u = load i64, ptr %x, align 8\n{}  %v = load i64, ptr %x, align 8\n{}  ret void\n",
            checked_load(0, "%i"),
            checked_load(1, "%u"),
            checked_load(2, "%v")
        )));
        // A loop counter whose back edge has a guard on a loaded value.
        unchanged(kernel(&format!(
            "  %m = load i64, ptr %x, align 8\n  br label %loop\nloop:\n  %i = phi i64 [ 0, %start ], [ %j, %loop ]\n{}  \
             %j = add i64 %i, 1\n  %more = icmp ult i64 %j, %m\n  br i1 %more, label %loop, label %exit\nexit:\n  \
             ret void\n",
            checked_load(0, "%i")
        )));
    }

    #[test]
    fn a_loop_counter_is_bounded_by_the_guard_of_its_back_edge() {
        // A rotated loop: `x[i]` runs for i = 0 and for every `j` that passed `j < n` at the
        // latch, so i <= max(0, n - 1). With n = 0 that `n - 1` wraps to u64::MAX: the phi's
        // first arm runs anyway, and the condition fails as it must (no `n <= len` shortcut).
        let out = version(&kernel(&format!(
            "  br label %loop\nloop:\n  %i = phi i64 [ 0, %start ], [ %j, %loop ]\n{}  %j = add i64 %i, 1\n  \
             %more = icmp ult i64 %j, %n\n  br i1 %more, label %loop, label %exit\nexit:\n  ret void\n",
            checked_load(0, "%i")
        )));
        assert!(out.contains("= add i64 %n, -1\n"), "{out}");
        // Clamped to its largest value when the edge is taken (u64::MAX - 1): see the next test.
        // (`umax(0, b)` is `b`.)
        assert!(out.contains("= call i64 @llvm.umin.i64(i64 %oxide.uv.1, i64 -2)"), "{out}");
        assert!(!out.contains("icmp ule i64 %n, %len"), "{out}");
        assert!(out.contains("%oxide.fast.oob0 = and i1 true, false"), "{out}");
    }

    #[test]
    fn a_phi_arm_bounded_by_its_edge_is_clamped_to_its_largest_value() {
        // `n` a u32: the back edge's `j < n` bounds `j` by `n - 1`, at most 2^32 - 2 when that
        // edge is taken; but the first arm runs for n = 0 too, where `n - 1` wraps to u64::MAX
        // and `+ 5` would wrap to 4 (a fast copy for len = 5 reading x[5]). The clamp keeps it
        // at 2^32 - 2.
        let out = version(&kernel(&format!(
            "  %n32 = trunc i64 %n to i32\n  %nz = zext i32 %n32 to i64\n  br label %loop\nloop:\n  \
             %i = phi i64 [ 0, %start ], [ %j, %loop ]\n  %k = add i64 %i, 5\n{}  %j = add i64 %i, 1\n  \
             %more = icmp ult i64 %j, %nz\n  br i1 %more, label %loop, label %exit\nexit:\n  ret void\n",
            checked_load(0, "%k")
        )));
        assert!(out.contains("@llvm.umin.i64(i64 %oxide.uv."), "{out}");
        assert!(out.contains(", i64 4294967294)"), "{out}");
        assert!(out.contains("%oxide.fast.oob0 = and i1 true, false"), "{out}");
    }

    #[test]
    fn an_induction_variable_stepping_by_a_power_of_two_rounds_its_bound_down() {
        // sgemm's `t` (0, 32, 64, … while `t < n`) plus `tx <= 31`: t <= (n - 1) & -32, so
        // `x[t + tx]` is in bounds when ((n - 1) & -32) + 31 < len.
        let out = version(&kernel(&format!(
            "  %tx = call i32 @llvm.nvvm.read.ptx.sreg.laneid()\n  %tx64 = zext i32 %tx to i64\n  \
             br label %loop\nloop:\n  %t = phi i64 [ 0, %start ], [ %u, %loop ]\n  %i = add i64 %t, %tx64\n{}  \
             %u = add nuw i64 %t, 32\n  %more = icmp ult i64 %u, %n\n  br i1 %more, label %loop, label %exit\n\
             exit:\n  ret void\n",
            checked_load(0, "%i")
        )));
        assert!(out.contains("= and i64 %oxide.uv."), "{out}");
        assert!(out.contains(", -32\n"), "{out}");
        assert!(out.contains("%oxide.fast.oob0 = and i1 true, false"), "{out}");
    }

    #[test]
    fn checks_that_cannot_be_proven_stay_in_both_copies() {
        // `x[l]` with `l` loaded has no bound; `x[i - 1]` (`add nsw %i, -1`) has only `u64::MAX`.
        // Two of the four checks are proven: enough for a copy (`worth_a_copy`).
        let body = format!(
            "{THREAD_INDEX}  %l = load i64, ptr %x, align 8\n{}{}  %j = add nsw i64 %i, -1\n{}{}  ret void\n",
            checked_load(0, "%i"),
            checked_load(1, "%l"),
            checked_load(2, "%j"),
            checked_load(3, "%i")
        );
        let out = version(&kernel(&body));
        assert!(out.contains("%oxide.fast.oob2 = icmp uge i64 %oxide.fast.j, %len"), "{out}");
        assert!(out.contains("%oxide.fast.oob0 = and i1 true, false"), "{out}");
        assert!(out.contains("%oxide.fast.oob1 = icmp uge i64 %oxide.fast.l, %len"), "{out}");
        assert!(out.contains("@__oxide_bounds_fail_if(i1 %oxide.fast.oob1)"), "{out}");
    }

    #[test]
    fn uniform_values_are_recomputed_without_poison_flags() {
        // The guard's bound `n * 4 + 1` is uniform; `nuw`/`nsw` are dropped at entry.
        let out = version(&guarded("  %i = load i64, ptr %x, align 8\n").replace(
            "  %in = icmp ult i64 %i, %n\n",
            "  %n4 = shl nuw nsw i64 %n, 2\n  %n5 = add nuw i64 %n4, 1\n  %in = icmp ult i64 %i, %n5\n",
        ));
        assert!(out.contains("%oxide.uv.1 = shl i64 %n, 2\n  %oxide.uv.2 = add i64 %oxide.uv.1, 1\n"), "{out}");
    }

    #[test]
    fn renaming_leaves_strings_params_and_comments() {
        let defined = ["a", "b.1", "\"q r\""].into_iter().collect();
        let line = "  %b.1 = call i32 asm \"mov.u32 %a, 1;\", \"=r\"(i32 %a, ptr %p, i32 %\"q r\") ; uses %a";
        assert_eq!(
            super::rename(line, &defined),
            "  %oxide.fast.b.1 = call i32 asm \"mov.u32 %a, 1;\", \"=r\"(i32 %oxide.fast.a, ptr %p, i32 %\"oxide.fast.q r\") ; uses %a"
        );
    }
}
