//! The new entry block's values: exact uniform values, and upper and lower bounds built from
//! them (the rules are in the module docs of `uniform_bounds`).

use std::collections::{BTreeSet, HashMap, HashSet};

use super::UV;
use super::function::Function;
use super::ir::{Fact, Inst, SREG, bits, constant, negative, phi_arms};

/// Builds the new entry block: exact uniform values and upper bounds, as `i64` operands.
pub(super) struct Bounder<'f, 'a> {
    pub(super) func: &'f Function<'a>,
    /// Bounds hold in a flat launch only (`U` asks for one): `.y`/`.z` extents are 1.
    pub(super) flat: bool,
    /// The most threads per block (launch bounds): the range of the `%ntid` reads at entry, so
    /// that `opt` folds conditions such as `(ntid.x - 1) & -32 < 225` under `launch_bounds(256)`.
    pub(super) block_size: u32,
    pub(super) lines: Vec<String>,
    pub(super) decls: BTreeSet<&'static str>,
    pub(super) n: usize,
    pub(super) exact: HashMap<&'a str, Option<String>>,
    pub(super) in_progress: HashSet<(&'a str, bool)>,
    /// Bounds already built for the current check (its facts).
    pub(super) memo: HashMap<(&'a str, bool), Option<String>>,
    /// `X - 1` built by `sub1` → `X`.
    pub(super) minus_one: HashMap<String, String>,
    /// The largest value of each built value (`u64::MAX` when not listed).
    pub(super) max: HashMap<String, u128>,
    /// Built values that are `base + constant`.
    pub(super) affine: HashMap<String, (String, u64)>,
    /// Built values by their right-hand side (every one is pure and at entry).
    pub(super) cse: HashMap<String, String>,
    /// Lower bounds already built for the current check.
    pub(super) memo_lower: HashMap<(&'a str, bool), String>,
    /// Conditions (`i1`s at entry, or `true`/`false`) the current check's bound needs besides
    /// `bound < len`: a `sub` that cannot wrap below zero.
    pub(super) side: Vec<String>,
    /// A value whose own guards are not used (`reads_past_a_guarded_length`).
    pub(super) skip_guard: Option<&'a str>,
    /// How many bounds came from the launch's extent (`%tid`, `%ctaid`).
    pub(super) extents_used: usize,
    /// Bounds built as already below a value `k` they would otherwise equal (`row_bounds`).
    pub(super) below: HashMap<String, String>,
    /// Built sums `a + b` of two values (neither a constant) → `(a, b)`.
    pub(super) sums: HashMap<String, (String, String)>,
}

/// The special registers that are the same in every thread of a launch.
pub(super) const UNIFORM_SREGS: [&str; 6] = ["ntid.x", "ntid.y", "ntid.z", "nctaid.x", "nctaid.y", "nctaid.z"];

impl<'f, 'a> Bounder<'f, 'a> {
    pub(super) fn new(func: &'f Function<'a>, flat: bool, block_size: u32) -> Self {
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

    pub(super) fn emit(&mut self, rhs: String) -> String {
        if let Some(v) = self.cse.get(&rhs) {
            return v.clone();
        }
        let v = self.fresh();
        self.lines.push(format!("  {v} = {rhs}"));
        self.cse.insert(rhs, v.clone());
        v
    }

    /// The largest value `x` (a constant or a built `i64`) can have.
    pub(super) fn max_of(&self, x: &str) -> u128 {
        x.parse::<u64>().map_or_else(|_| *self.max.get(x).unwrap_or(&u128::from(u64::MAX)), u128::from)
    }

    /// `x` as `base + constant` (`None` base: a constant).
    pub(super) fn split(&self, x: &str) -> (Option<String>, u64) {
        if let Ok(c) = x.parse::<u64>() {
            return (None, c);
        }
        match self.affine.get(x) {
            Some((base, c)) => (Some(base.clone()), *c),
            None => (Some(x.to_string()), 0),
        }
    }

    pub(super) fn sreg(&mut self, reg: &str) -> String {
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
    pub(super) fn exact64(&mut self, v: &'a str, ty: &str) -> Option<String> {
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
    pub(super) fn upper(&mut self, v: &'a str, ty: &str, facts: Option<&[Fact<'a>]>) -> Option<String> {
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
