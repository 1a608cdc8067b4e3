//! Loops with bounded trip counts: `for` over ranges (typed, reversed, stepped, inclusive) and over
//! arrays (`iter`, `enumerate`, `zip`, `iter_mut`), `while` and `loop` with a counter that the
//! body cannot touch (incremented first, so `continue` cannot skip it), `break` with values, labels,
//! and labelled blocks.
use super::expr::atom;
use super::scope::Kind;
use super::ty::{Int, Scalar};
use super::{Gen, LoopCtx};

impl Gen<'_> {
    pub fn loop_stmt(&mut self) {
        let label = if self.rng.chance(30) { format!("'{}", self.scopes.fresh("l")) } else { String::new() };
        let head = if label.is_empty() { String::new() } else { format!("{label}: ") };
        let arrays = self.scopes.vars_of(|k| matches!(k, Kind::Array(..)));
        let kind = self.rng.weighted(&[8, if arrays.is_empty() || !self.feat.on("iterators") { 0 } else { 5 }, 3, 3]);
        self.loop_depth += 1;
        match kind {
            0 => self.for_range(&head, &label),
            1 => {
                let a = self.rng.pick(&arrays).clone();
                self.for_array(&head, &label, &a.name, &a.kind, a.mutable && a.frozen == 0);
            }
            2 => {
                let w = self.scopes.fresh("w");
                let k = self.rng.range(1, 8);
                self.line(&format!("let mut {w}: u32 = 0;"));
                self.scopes.declare(&w, Kind::Scalar(Scalar::Int(Int::U32)), true);
                self.scopes.freeze(&w);
                self.line(&format!("{head}while {w} < {k} {{"));
                self.indent += 1;
                self.line(&format!("{w} += 1;"));
                self.indent -= 1;
                self.loop_body(&label, None);
                self.scopes.unfreeze(&w);
            }
            _ => {
                let c = self.scopes.fresh("c");
                let k = self.rng.range(1, 8);
                let t = self.any_scalar();
                let v = self.scopes.fresh("v");
                self.line(&format!("let mut {c}: u32 = 0;"));
                self.scopes.declare(&c, Kind::Scalar(Scalar::Int(Int::U32)), true);
                self.scopes.freeze(&c);
                let e = self.expr(t, 1);
                self.line(&format!("let {v}: {} = {head}loop {{", t.name()));
                self.indent += 1;
                self.line(&format!("{c} += 1;"));
                self.line(&format!("if {c} > {k} {{ break {e}; }}"));
                self.indent -= 1;
                self.loop_body(&label, Some(t));
                // The closing line of a `let … = loop { … }` needs its semicolon.
                self.out.pop();
                self.out.push_str(";\n");
                self.scopes.unfreeze(&c);
                self.scopes.declare(&v, Kind::Scalar(t), false);
            }
        }
        self.loop_depth -= 1;
    }

    /// The body of a loop whose header line is written; `value` is the type of `break value`.
    fn loop_body(&mut self, label: &str, value: Option<Scalar>) {
        self.loops.push(LoopCtx { label: label.to_string(), value, is_block: false });
        self.block_body(4, "}");
        self.loops.pop();
    }

    fn for_range(&mut self, head: &str, label: &str) {
        let i = self.any_int();
        let n = i.name();
        let lo: i64 = if i.signed() { self.rng.range(0, 6) as i64 - 3 } else { self.rng.range(0, 3) as i64 };
        let hi = lo + self.rng.range(0, 7) as i64;
        let lit = |v: i64| {
            if v < 0 { format!("({v}{n})") } else { format!("{v}{n}") }
        };
        let range = match self.rng.below(6) {
            0 => format!("({}..{}).rev()", lit(lo), lit(hi)),
            1 => format!("({}..={}).step_by({})", lit(lo), lit(hi), self.rng.range(1, 3)),
            2 => {
                // A bound computed at run time, still at most 7 iterations.
                let e = atom(&self.small(Scalar::Int(i)));
                format!("{}..({e} & 7)", lit(0))
            }
            _ => format!("{}..{}", lit(lo), lit(hi)),
        };
        let v = self.scopes.fresh("i");
        self.line(&format!("{head}for {v} in {range} {{"));
        self.scopes.push();
        self.scopes.declare(&v, Kind::Scalar(Scalar::Int(i)), false);
        self.loop_body(label, None);
        self.scopes.pop();
    }

    /// `for` over array `a`: by value, enumerated, zipped with another array, or `iter_mut`.
    fn for_array(&mut self, head: &str, label: &str, a: &str, kind: &Kind, writable: bool) {
        let Kind::Array(e, _) = kind else { unreachable!() };
        let e = *e;
        let x = self.scopes.fresh("x");
        self.scopes.push();
        if writable && self.rng.chance(35) {
            // The body writes each element through `&mut`; the array itself is borrowed.
            self.line(&format!("{head}for {x} in {a}.iter_mut() {{"));
            self.scopes.hide(a);
            self.scopes.declare(&format!("(*{x})"), Kind::Scalar(e), true);
            self.loop_body(label, None);
            self.scopes.unhide(a);
        } else {
            self.scopes.freeze(a);
            match self.rng.below(4) {
                0 => {
                    let j = self.scopes.fresh("j");
                    self.line(&format!("{head}for ({j}, &{x}) in {a}.iter().enumerate() {{"));
                    self.scopes.declare(&j, Kind::Scalar(Scalar::Int(Int::Usize)), false);
                }
                1 => {
                    let others = self.scopes.vars_of(|k| matches!(k, Kind::Array(..)));
                    let b = self.rng.pick(&others).clone();
                    let Kind::Array(be, _) = b.kind else { unreachable!() };
                    let y = self.scopes.fresh("y");
                    self.line(&format!("{head}for (&{x}, &{y}) in {a}.iter().zip({}.iter().rev()) {{", b.name));
                    self.scopes.declare(&y, Kind::Scalar(be), false);
                    self.scopes.freeze(&b.name);
                    self.scopes.declare(&x, Kind::Scalar(e), false);
                    self.loop_body(label, None);
                    self.scopes.unfreeze(&b.name);
                    self.scopes.unfreeze(a);
                    self.scopes.pop();
                    return;
                }
                2 => {
                    let step = self.rng.range(1, 3);
                    self.line(&format!("{head}for &{x} in {a}.iter().step_by({step}) {{"));
                }
                _ => self.line(&format!("{head}for &{x} in {a}.iter() {{")),
            }
            self.scopes.declare(&x, Kind::Scalar(e), false);
            self.loop_body(label, None);
            self.scopes.unfreeze(a);
        }
        self.scopes.pop();
    }

    /// `let v: T = 'b: { …; if c { break 'b e; } …; e };`
    pub fn labelled_block(&mut self) {
        let label = format!("'{}", self.scopes.fresh("b"));
        let t = self.any_scalar();
        let v = self.scopes.fresh("v");
        self.line(&format!("let {v}: {} = {label}: {{", t.name()));
        self.loops.push(LoopCtx { label: label.clone(), value: Some(t), is_block: true });
        self.indent += 1;
        self.depth += 1;
        self.scopes.push();
        let c = self.bool_expr(1);
        let e = self.expr(t, 1);
        self.line(&format!("if {c} {{ break {label} {e}; }}"));
        let n = self.rng.range(1, 3);
        for _ in 0..n {
            if self.budget > 0 {
                self.stmt();
            }
        }
        let e = self.expr(t, 2);
        self.line(&e);
        self.scopes.pop();
        self.depth -= 1;
        self.indent -= 1;
        self.loops.pop();
        self.line("};");
        self.scopes.declare(&v, Kind::Scalar(t), false);
    }
}
