//! The new entry block's values: exact uniform values, and upper and lower bounds built from
//! them (the rules are in the module docs of `uniform_bounds`), as steps of the [`Program`].

use std::collections::{HashMap, HashSet};

use oxide_contract::fast_launch::{BinOp as H, CastOp as HostCast, Operand, Pred as HostPred, Step};

use super::body::Body;
use super::facts::{Fact, negative};
use super::program::{Program, extent_of, host_op, host_pred, min_max};
use crate::pipeline::ir::{BinOp, CastOp, I1, Op, Type, Value};

/// A value built at entry: a constant, a kernel parameter or a step; bounds are `i64`s.
type V = Operand;

const MAX: V = Operand::Const(u64::MAX);

fn c(x: u64) -> V {
    Operand::Const(x)
}

fn konst(v: V) -> Option<u64> {
    match v {
        Operand::Const(x) => Some(x),
        _ => None,
    }
}

/// Builds the new entry block: exact uniform values and upper bounds, as `i64` operands.
pub(super) struct Bounder<'f, 'a> {
    pub(super) body: &'f Body<'a>,
    /// Bounds hold in a flat launch only (`U` asks for one): `.y`/`.z` extents are 1.
    pub(super) flat: bool,
    /// The most threads per block (launch bounds): the range of the `%ntid` reads at entry, so
    /// that `opt` folds conditions such as `(ntid.x - 1) & -32 < 225` under `launch_bounds(256)`.
    pub(super) block_size: u32,
    pub(super) program: Program,
    exact: HashMap<&'a str, Option<V>>,
    in_progress: HashSet<(&'a Value, bool)>,
    /// Bounds already built for the current check (its facts).
    pub(super) memo: HashMap<(&'a Value, bool), Option<V>>,
    /// `X - 1` built by `sub1` → `X`.
    pub(super) minus_one: HashMap<V, V>,
    /// The largest value of each built value (`u64::MAX` when not listed).
    max: HashMap<V, u128>,
    /// Built values that are `base + constant`.
    affine: HashMap<V, (V, u64)>,
    /// Lower bounds already built for the current check.
    pub(super) memo_lower: HashMap<(&'a Value, bool), V>,
    /// Conditions (`i1`s at entry, or the constants 1 and 0) the current check's bound needs
    /// besides `bound < len`: a `sub` that cannot wrap below zero.
    pub(super) side: Vec<V>,
    /// A value whose own guards are not used (`reads_past_a_guarded_length`).
    pub(super) skip_guard: Option<&'a Value>,
    /// How many bounds came from the launch's extent (`%tid`, `%ctaid`).
    pub(super) extents_used: usize,
    /// Bounds built as already below a value `k` they would otherwise equal (`row_bounds`).
    below: HashMap<V, V>,
    /// Built sums `a + b` of two values (neither a constant) → `(a, b)`.
    pub(super) sums: HashMap<V, (V, V)>,
}

/// The special registers that are the same in every thread of a launch.
const UNIFORM_SREGS: [&str; 6] = ["ntid.x", "ntid.y", "ntid.z", "nctaid.x", "nctaid.y", "nctaid.z"];

impl<'f, 'a> Bounder<'f, 'a> {
    pub(super) fn new(body: &'f Body<'a>, flat: bool, block_size: u32) -> Self {
        Bounder {
            body,
            flat,
            block_size,
            program: Program::default(),
            exact: HashMap::new(),
            in_progress: HashSet::new(),
            memo: HashMap::new(),
            minus_one: HashMap::new(),
            max: HashMap::new(),
            affine: HashMap::new(),
            memo_lower: HashMap::new(),
            side: Vec::new(),
            skip_guard: None,
            extents_used: 0,
            below: HashMap::new(),
            sums: HashMap::new(),
        }
    }

    pub(super) fn emit(&mut self, step: Step) -> V {
        self.program.emit(step)
    }

    fn bin(&mut self, op: H, bits: u32, a: V, b: V) -> V {
        self.emit(Step::Binary { op, bits, a, b })
    }

    pub(super) fn cmp(&mut self, pred: HostPred, bits: u32, a: V, b: V) -> V {
        self.emit(Step::Compare { pred, bits, a, b })
    }

    /// The largest value `x` (a constant or a built `i64`) can have.
    pub(super) fn max_of(&self, x: V) -> u128 {
        match x {
            Operand::Const(v) => u128::from(v),
            _ => *self.max.get(&x).unwrap_or(&u128::from(u64::MAX)),
        }
    }

    /// `x` as `base + constant` (`None` base: a constant).
    pub(super) fn split(&self, x: V) -> (Option<V>, u64) {
        if let Some(v) = konst(x) {
            return (None, v);
        }
        match self.affine.get(&x) {
            Some(&(base, c)) => (Some(base), c),
            None => (Some(x), 0),
        }
    }

    /// A uniform special register (`ntid.x`).
    pub(super) fn sreg(&mut self, reg: &str) -> V {
        let extent = extent_of(reg).expect("a uniform register");
        self.emit(Step::Extent(extent))
    }

    /// `v` (of type `ty`) recomputed at entry, in its own type, if it is uniform.
    fn uniform(&mut self, v: &'a Value, ty: &Type) -> Option<V> {
        let bits = ty.int_bits()?;
        if let Some(k) = v.as_int(ty) {
            return Some(c(k));
        }
        let name = v.as_local()?;
        if let Some((index, pty)) = self.body.param(v) {
            // A parameter of another type than the one its use here has is not the value asked for.
            return (pty == ty).then_some(Operand::Param { index: index as u32, bits });
        }
        if self.body.type_of(v) != Some(ty) {
            return None;
        }
        if let Some(done) = self.exact.get(name) {
            return *done;
        }
        self.exact.insert(name, None);
        let value = self.uniform_def(v);
        self.exact.insert(name, value);
        value
    }

    fn uniform_def(&mut self, v: &'a Value) -> Option<V> {
        let op = self.body.inst(v)?;
        Some(match op {
            Op::Bin { op, ty, a, b, .. } => {
                let width = u64::from(ty.int_bits()?);
                // No division by zero and no shift past the width: those would be poison or UB.
                let b_const = b.as_int(ty);
                match op {
                    BinOp::UDiv | BinOp::URem if !b_const.is_some_and(|c| c != 0) => return None,
                    BinOp::Shl | BinOp::LShr | BinOp::AShr if !b_const.is_some_and(|c| c < width) => return None,
                    _ => {}
                }
                let host = host_op(*op)?;
                let (a, b) = (self.uniform(a, ty)?, self.uniform(b, ty)?);
                self.bin(host, width as u32, a, b)
            }
            Op::Cast { op, from, a, to, .. } => {
                let cast = match op {
                    CastOp::ZExt => HostCast::ZExt,
                    CastOp::SExt => HostCast::SExt,
                    CastOp::Trunc => HostCast::Trunc,
                    _ => return None,
                };
                let (f, t) = (from.int_bits()?, to.int_bits()?);
                let a = self.uniform(a, from)?;
                let v = self.emit(Step::Cast { op: cast, from: f, to: t, a });
                if cast == HostCast::ZExt {
                    self.max.insert(v, (1u128 << f) - 1);
                }
                v
            }
            Op::Icmp { pred, ty, a, b, .. } => {
                let bits = ty.int_bits()?;
                let (a, b) = (self.uniform(a, ty)?, self.uniform(b, ty)?);
                self.cmp(host_pred(*pred), bits, a, b)
            }
            Op::Select { cond, ty, a, b } => {
                let bits = ty.int_bits()?;
                let cond = self.uniform(cond, &I1)?;
                let (a, b) = (self.uniform(a, ty)?, self.uniform(b, ty)?);
                self.emit(Step::Select { c: cond, bits, a, b })
            }
            Op::Call(call) => {
                let name = call.name()?;
                if let Some(reg) = name.strip_prefix(super::SREG).filter(|r| UNIFORM_SREGS.contains(r)) {
                    if call.ret != crate::pipeline::ir::I32 {
                        return None;
                    }
                    if self.flat && !reg.ends_with(".x") {
                        return Some(c(1));
                    }
                    return Some(self.sreg(reg));
                }
                let (intrinsic, suffix) = name.strip_prefix("llvm.")?.rsplit_once('.')?;
                let op = min_max(intrinsic)?;
                let ty = &call.ret;
                if suffix != ty.to_string() {
                    return None;
                }
                let [(_, a), (_, b)] = &call.args[..] else { return None };
                let (a, b) = (self.uniform(a, ty)?, self.uniform(b, ty)?);
                self.bin(op, ty.int_bits()?, a, b)
            }
            _ => return None,
        })
    }

    /// A uniform special register, zero-extended to `i64`.
    fn exact64_sreg(&mut self, reg: &str) -> V {
        let n = self.sreg(reg);
        let v = self.emit(Step::Cast { op: HostCast::ZExt, from: 32, to: 64, a: n });
        let max = if reg.starts_with("ntid.") { self.block_size } else { u32::MAX };
        self.max.insert(v, u128::from(max));
        v
    }

    /// `v` recomputed at entry as an `i64`, if it is uniform.
    pub(super) fn exact64(&mut self, v: &'a Value, ty: &Type) -> Option<V> {
        let bits = ty.int_bits()?;
        let value = self.uniform(v, ty)?;
        if bits == 64 || konst(value).is_some() {
            return Some(value);
        }
        let v = self.emit(Step::Cast { op: HostCast::ZExt, from: bits, to: 64, a: value });
        self.max.insert(v, (1u128 << bits) - 1);
        Some(v)
    }

    /// An upper bound (unsigned, as an `i64` at entry) of `v` of type `ty` wherever `facts`
    /// hold (`None`: without guards). See the module docs for why each rule holds.
    pub(super) fn upper(&mut self, v: &'a Value, ty: &Type, facts: Option<&[Fact<'a>]>) -> Option<V> {
        ty.int_bits()?;
        if let Some(k) = v.as_int(ty) {
            return Some(c(k));
        }
        if let Some(e) = self.exact64(v, ty) {
            return Some(e);
        }
        let key = (v, facts.is_some());
        if let Some(done) = self.memo.get(&key) {
            return *done;
        }
        if !self.in_progress.insert(key) {
            return None;
        }
        // A guard's bound, else the operands': the guard is what the user wrote to stay in
        // bounds, and the entry block stays short.
        let mut candidates: Vec<V> = Vec::new();
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
        if candidates.iter().all(|c| konst(*c).is_some())
            && let Some(b) = self.structural(v, facts)
        {
            candidates.push(b);
        }
        self.in_progress.remove(&key);
        let mut bound = candidates.into_iter().reduce(|x, y| self.minmax(H::UMin, x, y));
        // `v <= B` and `v != K` give `v <= B - 1` where `K = B` (`x != n - 1` under `x < n`).
        for fact in facts.unwrap_or_default() {
            if !fact.ne || fact.lhs != v {
                continue;
            }
            // (`v != 0` lowers only a bound 0, under which no `v != 0` runs.)
            let (Some(b), Some(k)) = (bound, self.exact64(fact.rhs, ty)) else { continue };
            if k != c(0) {
                bound = Some(self.below_if_equal(b, k));
            }
        }
        // A multiple of 2^k is at most the bound rounded down to one (`t % 32 == 0` guards the
        // warp leaders' `parts[t / 32]`, which opt spells `t <= 224`; sgemm's `t += 32`). A
        // saturated bound stays saturated: it says no condition can hold.
        let by_guard = facts.map_or(0, |f| self.body.alignment(v, f));
        let align = by_guard.max(self.body.multiple_of(v, ty, &mut Vec::new(), 0));
        if align > 0
            && bound.is_some_and(|b| b != MAX)
            && let Some(b) = bound.take()
        {
            let mask = !((1u64 << align) - 1);
            bound = Some(match konst(b) {
                Some(k) => c(k & mask),
                None => {
                    let max = self.max_of(b) & u128::from(mask);
                    let v = self.bin(H::And, 64, b, c(mask));
                    self.max.insert(v, max);
                    v
                }
            });
        }
        self.memo.insert(key, bound);
        bound
    }

    fn structural(&mut self, v: &'a Value, facts: Option<&[Fact<'a>]>) -> Option<V> {
        let op = self.body.inst(v)?;
        match op {
            Op::Call(call) => {
                let name = call.name()?;
                let ty = &call.ret;
                let per_axis = |prefix: &str| {
                    name.strip_prefix(super::SREG)?.strip_prefix(prefix).filter(|a| ["x", "y", "z"].contains(a))
                };
                if self.flat && (per_axis("tid.").is_some() || per_axis("ctaid.").is_some()) && !name.ends_with(".x") {
                    return Some(c(0));
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
                    return Some(c(31));
                }
                let [(_, a), (_, b)] = &call.args[..] else { return None };
                if name.starts_with("llvm.umin.") {
                    match (self.upper(a, ty, facts), self.upper(b, ty, facts)) {
                        (Some(x), Some(y)) => Some(self.minmax(H::UMin, x, y)),
                        (x, y) => x.or(y),
                    }
                } else if name.starts_with("llvm.umax.") {
                    let (x, y) = (self.upper(a, ty, facts)?, self.upper(b, ty, facts)?);
                    Some(self.minmax(H::UMax, x, y))
                } else {
                    None
                }
            }
            Op::Bin { op, flags, ty, a, b } => match op {
                // `a + (-k)` is `a - k`.
                BinOp::Add if b.as_int(ty).is_some_and(|k| negative(k, ty)) => {
                    let k = b.as_int(ty)?.wrapping_neg() & ty.mask()?;
                    self.difference(a, Ok(k), ty, facts)
                }
                BinOp::Sub if !flags.nuw => self.difference(a, Err(b), ty, facts),
                BinOp::Add | BinOp::Or | BinOp::Xor => {
                    let (x, y) = (self.upper(a, ty, facts)?, self.upper(b, ty, facts)?);
                    Some(self.add_sat(x, y))
                }
                BinOp::Mul => {
                    let (x, y) = (self.upper(a, ty, facts)?, self.upper(b, ty, facts)?);
                    Some(self.mul_sat(x, y))
                }
                BinOp::Shl => {
                    let width = u64::from(ty.int_bits()?);
                    let k = b.as_int(ty).filter(|&k| k < width)?;
                    let x = self.upper(a, ty, facts)?;
                    Some(self.mul_sat(x, c(1u64 << k)))
                }
                BinOp::And => {
                    let (x, y) = (self.upper(a, ty, facts), self.upper(b, ty, facts));
                    match (x, y) {
                        (Some(x), Some(y)) => Some(self.minmax(H::UMin, x, y)),
                        (x, y) => x.or(y),
                    }
                }
                BinOp::LShr | BinOp::UDiv => {
                    // Monotone: by a constant, the bound shifted or divided too (`t / 32`).
                    let x = self.upper(a, ty, facts)?;
                    let divisor = match (op, b.as_int(ty)) {
                        (BinOp::LShr, Some(k)) if k < 64 => 1u64 << k,
                        (BinOp::UDiv, Some(d)) if d > 0 => d,
                        _ => return Some(x),
                    };
                    Some(match konst(x) {
                        Some(k) => c(k / divisor),
                        None if divisor == 1 => x,
                        None => {
                            let max = self.max_of(x) / u128::from(divisor);
                            let v = self.bin(H::UDiv, 64, x, c(divisor));
                            self.max.insert(v, max);
                            v
                        }
                    })
                }
                BinOp::URem => {
                    let x = self.upper(a, ty, facts);
                    let y = self.upper(b, ty, facts).map(|y| self.sub1(y));
                    match (x, y) {
                        (Some(x), Some(y)) => Some(self.minmax(H::UMin, x, y)),
                        (x, y) => x.or(y),
                    }
                }
                BinOp::Sub => self.upper(a, ty, facts),
                _ => None,
            },
            Op::Cast { op: CastOp::ZExt | CastOp::Trunc, from, a, .. } => self.upper(a, from, facts),
            Op::Select { ty, a, b, .. } => {
                let (x, y) = (self.upper(a, ty, facts)?, self.upper(b, ty, facts)?);
                Some(self.minmax(H::UMax, x, y))
            }
            Op::Phi { ty, arms } => {
                // Each incoming value under the facts of its own edge: those that hold at the
                // end of the predecessor and the branch condition that takes that edge (a
                // rotated loop's `t < n` at its latch bounds the `t` it brings back). Not the
                // facts of the phi's block: a loop may have redefined a value since its guard.
                let phi_block = self.body.block_of(v)?;
                let mut acc: Option<V> = None;
                for (value, pred) in arms {
                    let edge = self.body.edge_facts(pred, phi_block)?;
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
                    // Not through `minmax`, which would drop a `umin` with a constant no
                    // smaller than the largest value.
                    let max = self.max_of(x);
                    if konst(x).is_none() && max < u128::from(u64::MAX) {
                        x = self.bin(H::UMin, 64, x, c(max as u64));
                        self.max.insert(x, max);
                    }
                    acc = Some(match acc {
                        None => x,
                        Some(prev) => self.minmax(H::UMax, prev, x),
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
        a: &'a Value,
        b: Result<u64, &'a Value>,
        ty: &Type,
        facts: Option<&[Fact<'a>]>,
    ) -> Option<V> {
        let bound = self.upper(a, ty, facts)?;
        let low = self.lower(a, ty, facts, 0);
        let b = match b {
            Ok(k) => c(k),
            Err(b) => match self.exact64(b, ty) {
                Some(e) => e,
                None => self.upper(b, ty, facts)?,
            },
        };
        let side = match (konst(low), konst(b)) {
            (Some(l), Some(b)) => c(u64::from(l >= b)),
            _ if low == b => c(1),
            _ => self.cmp(HostPred::Uge, 64, low, b),
        };
        self.side.push(side);
        Some(bound)
    }

    /// `b` lowered by one where it equals `k`: a bound of a value that is at most `b` and not
    /// `k`. (Where `b = k = 0` no value is both, the block never runs, and the wrapped `b - 1`
    /// is a bound as good as any.)
    fn below_if_equal(&mut self, b: V, k: V) -> V {
        if self.below.get(&b) == Some(&k) {
            return b;
        }
        if b == k || self.minus_one.get(&b).is_some_and(|x| self.plus_one(k) == Some(*x)) {
            // (`sub1(x)` and the uniform `x - 1` are one value.)
            return self.sub1(b);
        }
        if let (Some(x), Some(y)) = (konst(b), konst(k)) {
            return c(if x == y { x.saturating_sub(1) } else { x });
        }
        let max = self.max_of(b);
        let equal = self.cmp(HostPred::Eq, 64, b, k);
        let less = self.bin(H::Add, 64, b, MAX);
        let v = self.emit(Step::Select { c: equal, bits: 64, a: less, b });
        self.max.insert(v, max);
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
    fn row_bounds(&mut self, v: &'a Value, ty: &Type, fact: &Fact<'a>, facts: Option<&[Fact<'a>]>) -> Vec<V> {
        let body = self.body;
        let no_wrap = |op: &Op| match op {
            Op::Bin { op, flags, ty, a, b } => {
                let (ma, mb) = (body.value_max(a, ty, 0), body.value_max(b, ty, 0));
                let full = (1u128 << ty.int_bits().unwrap_or(64)) - 1;
                flags.nuw || (*op == BinOp::Mul && ma * mb <= full) || (*op == BinOp::Add && ma + mb <= full)
            }
            _ => false,
        };
        let is_mul = |x: &Value| matches!(body.inst(x), Some(Op::Bin { op: BinOp::Mul, .. }));
        let product = match body.inst(fact.lhs) {
            Some(Op::Bin { op: BinOp::Mul, .. }) => fact.lhs,
            Some(sum @ Op::Bin { op: BinOp::Add, a, b, .. }) if no_wrap(sum) => {
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
        let Some(m @ Op::Bin { op: BinOp::Mul, ty: mty, a, b, .. }) = body.inst(product) else { return Vec::new() };
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
        let top = body.value_max(v, ty, 0).min(u128::from(u64::MAX)) as u64;
        // (k, `k - 1`, its largest value, whether `v <= k` holds: a constant or an `i1`).
        let mut found: Vec<(V, V, u128, V)> = Vec::new();
        for ne in facts.unwrap_or_default().iter().filter(|f| f.ne && f.lhs == v) {
            let Some(k) = self.exact64(ne.rhs, ty) else { continue };
            if k == c(0) {
                // `v <= 0` and `v != 0`: nothing runs; no bound worth a test.
                continue;
            }
            let x = self.plus_one(k);
            let (k1, below, max) = match x {
                // Where the check runs and `v <= k` holds, `k >= 1` (`v != k`), so `x >= 2` and
                // `x - 2` is at most `max(x) - 2`.
                Some(x) => {
                    let max = self.max_of(x).saturating_sub(2);
                    let below = self.bin(H::Add, 64, x, c(u64::MAX - 1));
                    self.max.insert(below, max);
                    (x, below, max)
                }
                None => {
                    let below = self.sub1(k);
                    let max = self.max_of(below);
                    (self.plus(k, c(1)), below, max)
                }
            };
            let reach = self.mul_sat(k1, n);
            let pred = if fact.strict { HostPred::Uge } else { HostPred::Ugt };
            let covers = match (konst(reach), konst(len)) {
                (Some(r), Some(l)) => c(u64::from(if fact.strict { r >= l } else { r > l })),
                _ => self.cmp(pred, 64, reach, len),
            };
            if covers != c(0) {
                found.push((k, below, max, covers));
            }
        }
        let mut bounds = Vec::new();
        let alone = found.len() == 1;
        for (k, below, max, covers) in found {
            let bound = if covers == c(1) {
                below
            } else if alone {
                // One such `k`: `U` asks for `v <= k` (without it the bound would be `v`'s
                // largest value, too large for any condition on a length to hold).
                self.side.push(covers);
                below
            } else {
                let max = max.max(u128::from(top));
                let b = self.emit(Step::Select { c: covers, bits: 64, a: below, b: c(top) });
                self.max.insert(b, max);
                b
            };
            self.below.insert(bound, k);
            bounds.push(bound);
        }
        bounds
    }

    /// `x` where `k` was built as `x - 1` (wrapping: `k + 1 = x` whatever `x`).
    fn plus_one(&self, k: V) -> Option<V> {
        match self.program.step(k)? {
            Step::Binary { op: H::Add, bits: 64, a, b: Operand::Const(u64::MAX) } => Some(*a),
            _ => None,
        }
    }

    /// A lower bound (unsigned, as an `i64` at entry; `0` where none is known) of `v` of type
    /// `ty` wherever `facts` hold: from guards `k < v`, `k <= v` and `v != k` with `k` uniform,
    /// and through `add`/`mul` that cannot wrap (`nuw`, or the operands' largest values) and
    /// `zext`. Where the check runs, each is at most `v`, so their sums and products do not
    /// wrap either; at entry, where it does not, they are plain arithmetic (never poison).
    fn lower(&mut self, v: &'a Value, ty: &Type, facts: Option<&[Fact<'a>]>, depth: usize) -> V {
        if let Some(k) = v.as_int(ty) {
            return c(k);
        }
        if let Some(e) = self.exact64(v, ty) {
            return e;
        }
        if depth > 8 {
            return c(0);
        }
        if let Some(done) = self.memo_lower.get(&(v, facts.is_some())) {
            return *done;
        }
        let mut low = c(0);
        for fact in facts.unwrap_or_default() {
            if fact.ne || fact.rhs != v {
                continue;
            }
            let Some(k) = self.exact64(fact.lhs, ty) else { continue };
            // `k < v` leaves room for `k + 1` below `v`: no wrap where the check runs.
            let k = if fact.strict { self.plus(k, c(1)) } else { k };
            low = self.minmax(H::UMax, low, k);
        }
        if low == c(0)
            && let Some(op) = self.body.inst(v)
        {
            low = match op {
                Op::Bin { op: op @ (BinOp::Add | BinOp::Mul), flags, ty, a, b } => {
                    let (ma, mb) = (self.body.value_max(a, ty, 0), self.body.value_max(b, ty, 0));
                    let full = (1u128 << ty.int_bits().unwrap_or(64)) - 1;
                    let fits = if *op == BinOp::Add { ma + mb <= full } else { ma * mb <= full };
                    if flags.nuw || fits {
                        let (x, y) = (self.lower(a, ty, facts, depth + 1), self.lower(b, ty, facts, depth + 1));
                        if *op == BinOp::Add { self.plus(x, y) } else { self.times(x, y) }
                    } else {
                        low
                    }
                }
                Op::Cast { op: CastOp::ZExt, from, a, .. } => self.lower(a, from, facts, depth + 1),
                _ => low,
            };
        }
        // `v >= L` and `v != k` give `v >= L + 1` where `k = L` (`y != 0`); constants `k` only,
        // smallest first, so the entry test stays short.
        let mut ks: Vec<u64> =
            facts.unwrap_or_default().iter().filter(|f| f.ne && f.lhs == v).filter_map(|f| f.rhs.as_int(ty)).collect();
        ks.sort_unstable();
        for k in ks {
            low = match konst(low) {
                Some(l) if l == k => c(l + 1),
                Some(_) => low,
                None => {
                    let equal = self.cmp(HostPred::Eq, 64, low, c(k));
                    let more = self.plus(low, c(1));
                    self.emit(Step::Select { c: equal, bits: 64, a: more, b: low })
                }
            };
        }
        self.memo_lower.insert((v, facts.is_some()), low);
        low
    }

    /// `x + y`, wrapping (a lower bound's arithmetic), folded where both are constants.
    fn plus(&mut self, x: V, y: V) -> V {
        match (konst(x), konst(y)) {
            (Some(a), Some(b)) => c(a.wrapping_add(b)),
            (Some(0), _) => y,
            (_, Some(0)) => x,
            _ => self.bin(H::Add, 64, x, y),
        }
    }

    /// `x * y`, wrapping, folded where both are constants.
    fn times(&mut self, x: V, y: V) -> V {
        match (konst(x), konst(y)) {
            (Some(a), Some(b)) => c(a.wrapping_mul(b)),
            (Some(0), _) | (_, Some(0)) => c(0),
            (Some(1), _) => y,
            (_, Some(1)) => x,
            _ => self.bin(H::Mul, 64, x, y),
        }
    }

    /// `x - 1`, wrapping: every `x` lowered here is at least 1 whenever the check it bounds can
    /// run (an extent of the launch; the right side of a guard `v < x` that held; a divisor), so
    /// for `x = 0` the check never runs and any condition is true of it.
    pub(super) fn sub1(&mut self, x: V) -> V {
        if let Some(k) = konst(x) {
            return c(k.saturating_sub(1));
        }
        let v = self.bin(H::Add, 64, x, MAX);
        let max = self.max_of(x);
        self.max.insert(v, max.saturating_sub(1));
        self.minus_one.insert(v, x);
        v
    }

    fn add_sat(&mut self, x: V, y: V) -> V {
        match (konst(x), konst(y)) {
            (Some(a), Some(b)) => c(a.saturating_add(b)),
            // A negative offset (`add nsw %i, -1`) as unsigned: the sum saturates unless the
            // other operand is 0; `u64::MAX` is a bound all the same, and drops the check.
            (Some(k), _) | (_, Some(k)) if k >= 1 << 63 => MAX,
            (Some(0), _) => y,
            (_, Some(0)) => x,
            _ if self.max_of(x) + self.max_of(y) <= u128::from(u64::MAX) => {
                // Cannot overflow: a plain sum, kept as `base + constant` so that checks at
                // constant offsets from one index share their condition. No `nuw`: the largest
                // values assume every `sub1` operand is at least 1, and where one is 0 (a check
                // that cannot run) the sum may wrap; it must not be poison.
                let max = self.max_of(x) + self.max_of(y);
                let ((bx, cx), (by, cy)) = (self.split(x), self.split(y));
                let base = match (bx, by) {
                    (Some(a), Some(b)) => {
                        let (a, b) = if self.ir_name(a) <= self.ir_name(b) { (a, b) } else { (b, a) };
                        let sum_max = self.max_of(a) + self.max_of(b);
                        let v = self.bin(H::Add, 64, a, b);
                        self.max.insert(v, sum_max);
                        self.sums.insert(v, (a, b));
                        Some(v)
                    }
                    (a, b) => a.or(b),
                };
                let k = cx + cy;
                match base {
                    None => c(k),
                    Some(b) if k == 0 => b,
                    Some(b) => {
                        let v = self.bin(H::Add, 64, b, c(k));
                        self.max.insert(v, max);
                        self.affine.insert(v, (b, k));
                        v
                    }
                }
            }
            _ => self.bin(H::UAddSat, 64, x, y),
        }
    }

    fn mul_sat(&mut self, x: V, y: V) -> V {
        match (konst(x), konst(y)) {
            (Some(a), Some(b)) => c(a.saturating_mul(b)),
            (Some(1), _) => y,
            (_, Some(1)) => x,
            _ if self.max_of(x) * self.max_of(y) <= u128::from(u64::MAX) => {
                let max = self.max_of(x) * self.max_of(y);
                let v = self.bin(H::Mul, 64, x, y);
                self.max.insert(v, max);
                v
            }
            _ => self.bin(H::UMulSat, 64, x, y),
        }
    }

    /// `v` as the entry block spells it (`program.rs`): sums are written with their operands in
    /// this order, so one sum is one value whichever way round it was asked for.
    fn ir_name(&self, v: V) -> String {
        match v {
            Operand::Const(k) => k.to_string(),
            Operand::Param { index, .. } => {
                format!("%{}", self.body.f.params[index as usize].name.as_deref().unwrap_or(""))
            }
            Operand::Step(i) => format!("%{}.{}", crate::markers::VERSION_ENTRY, i + 1),
        }
    }

    pub(super) fn minmax(&mut self, op: H, x: V, y: V) -> V {
        let umin = op == H::UMin;
        if let (Some(a), Some(b)) = (konst(x), konst(y)) {
            return c(if umin { a.min(b) } else { a.max(b) });
        }
        if x == y {
            return x;
        }
        match (umin, konst(x), konst(y)) {
            (false, Some(0), _) | (true, _, Some(0)) => return y,
            (false, _, Some(0)) | (true, Some(0), _) => return x,
            _ => {}
        }
        // `umin(v, c)` is `v` when `v` is at most `c`. (A `v` that may wrap above its largest
        // value only when its check cannot run is then a looser bound, still a bound.)
        if umin {
            for (v, k) in [(x, y), (y, x)] {
                if konst(k).is_some_and(|k| self.max_of(v) <= u128::from(k)) {
                    return v;
                }
            }
        }
        let (mx, my) = (self.max_of(x), self.max_of(y));
        let v = self.bin(op, 64, x, y);
        self.max.insert(v, if umin { mx.min(my) } else { mx.max(my) });
        v
    }
}
