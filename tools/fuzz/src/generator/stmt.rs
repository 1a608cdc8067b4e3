//! Statements: `let`, assignments (every compound operator that cannot panic), checksum folds,
//! `if`/`if let`/`match` with blocks, `break`/`continue`/`return`; the dispatcher that picks one,
//! and the folds that observe every variable before it goes out of scope.
use super::expr::atom;
use super::scope::{Kind, Var};
use super::ty::Scalar;
use super::{Gen, fold_call};

impl Gen<'_> {
    /// One random statement (which may contain blocks of further statements).
    pub fn stmt(&mut self) {
        self.budget -= 1;
        let nest = self.depth < 2 && self.budget > 1;
        let f = |on: bool, w: u32| if on { w } else { 0 };
        let loops = self.feat.on("loops");
        let in_loop = !self.loops.is_empty();
        let weights = [
            12,                                                       // 0 let
            14,                                                       // 1 assign
            f(self.has_ck, 8),                                        // 2 fold
            f(nest, 6),                                               // 3 if
            f(nest && loops && self.loop_depth < 2, 7),               // 4 loop
            f(in_loop, 5),                                            // 5 break/continue
            f(nest, 4),                                               // 6 match
            f(self.feat.on("arrays"), 5),                             // 7 array let
            f(self.feat.on("arrays"), 5),                             // 8 array/slice ops
            f(self.feat.on("structs"), 4),                            // 9 struct/tuple let
            f(self.feat.on("enums"), 4),                              // 10 enum/option let
            f(nest && self.feat.on("refs"), 3),                       // 11 reference block
            f(self.feat.on("raw-ptr"), 3),                            // 12 raw pointers
            f(self.feat.on("closures"), 3),                           // 13 closures
            f(self.feat.on("calls") || self.feat.on("structs"), 4),   // 14 mutating calls
            f(self.feat.on("fn-ptr") && self.feat.on("closures"), 1), // 15 fn pointer
            f(nest && self.feat.on("loops"), 1),                      // 16 labelled block
            f(self.ret.is_some() && self.depth > 0, 1),               // 17 early return
        ];
        match self.rng.weighted(&weights) {
            0 => self.let_scalar(),
            1 => self.assign(),
            2 => {
                let t = self.any_scalar();
                let e = self.expr(t, 2);
                self.fold_stmt(&e, t);
            }
            3 => self.if_stmt(),
            4 => self.loop_stmt(),
            5 => self.break_stmt(),
            6 => self.match_stmt(),
            7 => self.array_let(),
            8 => self.array_op(),
            9 => self.struct_or_tuple_let(),
            10 => self.enum_or_option_let(),
            11 => self.ref_block(),
            12 => self.raw_ptr_stmt(),
            13 => self.closure_stmt(),
            14 => self.mutating_call(),
            15 => self.fn_ptr_let(),
            16 => self.labelled_block(),
            _ => {
                let r = self.ret.expect("weighted only in functions that return");
                let c = self.bool_expr(1);
                let e = self.expr(r, 1);
                self.line(&format!("if {c} {{ return {e}; }}"));
            }
        }
    }

    /// `{`, up to `max` statements in a new scope (folding what they declared), `}` — the caller
    /// writes the opening line; this writes the statements and the closing brace line `close`.
    pub fn block_body(&mut self, max: usize, close: &str) {
        self.indent += 1;
        self.depth += 1;
        self.scopes.push();
        let n = self.rng.range(1, max.max(1));
        for _ in 0..n {
            if self.budget <= 0 {
                break;
            }
            self.stmt();
        }
        if self.has_ck && self.rng.chance(70) {
            self.fold_innermost_scope();
        }
        self.scopes.pop();
        self.depth -= 1;
        self.indent -= 1;
        self.line(close);
    }

    pub fn let_scalar(&mut self) {
        let t = self.any_scalar();
        let d = self.rng.range(1, 2) as u32;
        let e = self.expr(t, d);
        let name = self.scopes.fresh("v");
        let m = self.rng.chance(60);
        self.line(&format!("let {}{name}: {} = {e};", if m { "mut " } else { "" }, t.name()));
        self.scopes.declare(&name, Kind::Scalar(t), m);
    }

    pub fn assign(&mut self) {
        let t = self.any_scalar();
        let places = self.scopes.places(t, &self.items, true);
        if places.is_empty() {
            return self.let_scalar();
        }
        let p = self.rng.pick(&places).clone();
        let lhs = self.place_text(&p);
        let e = self.expr(t, 2);
        let a = atom(&e);
        let text = match t {
            Scalar::Int(i) => {
                let bits = i.bits();
                match self.rng.below(9) {
                    0 | 1 => format!("{lhs} = {e};"),
                    2 => format!("{lhs} ^= {e};"),
                    3 => format!("{lhs} |= {e};"),
                    4 => format!("{lhs} &= {e};"),
                    5 => format!("{lhs} <<= {a} & {};", bits - 1),
                    6 => format!("{lhs} >>= {a} & {};", bits - 1),
                    7 => format!("{lhs} = {lhs}.wrapping_{}({e});", self.rng.pick(&["add", "sub", "mul"])),
                    _ if self.feat.on("plain-arith") => {
                        format!("{lhs} = ({lhs} >> 1) + ({a} >> 1);")
                    }
                    _ => format!("{lhs} = {lhs}.rotate_left(({a} as u32) & 7);"),
                }
            }
            Scalar::F32 | Scalar::F64 => match self.rng.below(6) {
                0 | 1 => format!("{lhs} = {e};"),
                2 => format!("{lhs} += {e};"),
                3 => format!("{lhs} -= {e};"),
                4 => format!("{lhs} *= {e};"),
                _ => format!("{lhs} /= {e};"),
            },
            Scalar::Bool => match self.rng.below(4) {
                0 | 1 => format!("{lhs} = {e};"),
                2 => format!("{lhs} ^= {e};"),
                _ => format!("{lhs} {}= {e};", self.rng.pick(&["&", "|"])),
            },
        };
        self.line(&text);
    }

    fn if_stmt(&mut self) {
        let opts = self.scopes.vars_of(|k| matches!(k, Kind::Option(_)));
        if self.feat.on("enums") && !opts.is_empty() && self.rng.chance(25) {
            let o = self.rng.pick(&opts).clone();
            let Kind::Option(e) = o.kind else { unreachable!() };
            let p = self.scopes.fresh("p");
            self.line(&format!("if let Some({p}) = {} {{", o.name));
            self.scopes.push();
            self.scopes.declare(&p, Kind::Scalar(e), false);
            self.block_body(3, "} else {");
            self.scopes.pop();
            self.block_body(2, "}");
            return;
        }
        let c = self.bool_expr(2);
        self.line(&format!("if {c} {{"));
        match self.rng.below(3) {
            0 => self.block_body(4, "}"),
            1 => {
                self.block_body(3, "} else {");
                self.block_body(3, "}");
            }
            _ => {
                let c2 = self.bool_expr(1);
                self.block_body(2, &format!("}} else if {c2} {{"));
                self.block_body(2, "} else {");
                self.block_body(2, "}");
            }
        }
    }

    fn match_stmt(&mut self) {
        let enums = self.scopes.vars_of(|k| matches!(k, Kind::Enum(_)));
        if !enums.is_empty() && self.rng.chance(40) {
            let v = self.rng.pick(&enums).clone();
            return self.enum_match_stmt(v);
        }
        let i = self.any_int();
        let sel = self.expr(Scalar::Int(i), 1);
        let mask = *self.rng.pick(&[3u32, 7, 15]);
        self.line(&format!("match {} & {mask} {{", atom(&sel)));
        self.indent += 1;
        self.line("0 => {");
        self.block_body(2, "}");
        self.line("1 | 2 => {");
        self.block_body(2, "}");
        if mask > 3 {
            self.line(&format!("3..={} => {{", mask / 2 + 1));
            self.block_body(2, "}");
        }
        self.line("_ => {");
        self.block_body(2, "}");
        self.indent -= 1;
        self.line("}");
    }

    fn enum_match_stmt(&mut self, v: Var) {
        let Kind::Enum(ei) = v.kind else { unreachable!() };
        let def = self.items.enums[ei].clone();
        self.line(&format!("match {} {{", v.name));
        self.indent += 1;
        let wildcard = self.rng.chance(30);
        for (k, (vname, shape)) in def.variants.iter().enumerate() {
            if wildcard && k + 1 == def.variants.len() {
                break;
            }
            self.scopes.push();
            let pat = self.variant_pattern(&def.name, vname, shape);
            if !matches!(shape, super::scope::Shape::Unit) && self.rng.chance(30) {
                let g = self.bool_expr(1);
                self.line(&format!("{pat} if {g} => {{"));
                self.block_body(2, "}");
            }
            self.line(&format!("{pat} => {{"));
            self.block_body(2, "}");
            self.scopes.pop();
        }
        if wildcard {
            self.line("_ => {");
            self.block_body(2, "}");
        }
        self.indent -= 1;
        self.line("}");
    }

    /// A pattern for one variant, its bindings declared in the current scope.
    pub fn variant_pattern(&mut self, enum_name: &str, v: &str, shape: &super::scope::Shape) -> String {
        use super::scope::Shape;
        match shape {
            Shape::Unit => format!("{enum_name}::{v}"),
            Shape::Tuple(ts) => {
                let binds: Vec<String> = ts
                    .iter()
                    .map(|s| {
                        if self.rng.chance(20) {
                            return "_".to_string();
                        }
                        let b = self.scopes.fresh("b");
                        self.scopes.declare(&b, Kind::Scalar(*s), false);
                        b
                    })
                    .collect();
                format!("{enum_name}::{v}({})", binds.join(", "))
            }
            Shape::Named(fs) => {
                let mut binds = Vec::new();
                let mut rest = false;
                for (f, s) in fs {
                    if self.rng.chance(25) {
                        rest = true;
                        continue;
                    }
                    let b = self.scopes.fresh("b");
                    self.scopes.declare(&b, Kind::Scalar(*s), false);
                    binds.push(format!("{f}: {b}"));
                }
                if rest {
                    binds.push("..".into());
                }
                format!("{enum_name}::{v} {{ {} }}", binds.join(", "))
            }
        }
    }

    fn break_stmt(&mut self) {
        let k = self.rng.below(self.loops.len());
        let target = self.loops[self.loops.len() - 1 - k].clone();
        let innermost = k == 0;
        let label = if !target.label.is_empty() {
            format!(" {}", target.label)
        } else if innermost && !target.is_block {
            String::new()
        } else {
            return self.assign();
        };
        let c = self.bool_expr(2);
        let cont = !target.is_block && self.rng.chance(40);
        let text = if cont {
            format!("continue{label}")
        } else if let Some(t) = target.value {
            let e = self.expr(t, 1);
            format!("break{label} {e}")
        } else {
            format!("break{label}")
        };
        // An unlabelled `break`/`continue` must not sit directly in a labelled block (E0695).
        if label.is_empty() && self.loops.last().is_some_and(|l| l.is_block) {
            return self.assign();
        }
        self.line(&format!("if {c} {{ {text}; }}"));
    }

    /// Folds the variables of the innermost scope into `ck`.
    pub fn fold_innermost_scope(&mut self) {
        let vars = self.scopes.innermost();
        for v in vars {
            self.fold_var(&v);
        }
    }

    /// Folds every visible variable into `ck` (the end of `run`).
    pub fn fold_scope_vars(&mut self) {
        let vars: Vec<Var> = self.scopes.visible().cloned().collect();
        for v in vars {
            self.fold_var(&v);
        }
    }

    fn fold_var(&mut self, v: &Var) {
        let n = &v.name;
        match &v.kind {
            Kind::Scalar(t) => self.fold_stmt(n, *t),
            Kind::Array(t, _) | Kind::Slice(t) | Kind::SliceMut(t) => {
                let x = self.scopes.fresh("x");
                let f = fold_call("ck", &x, *t);
                self.line(&format!("for &{x} in {n}.iter() {{ ck = {f}; }}"));
            }
            Kind::Tuple(ts) => {
                for (i, t) in ts.clone().iter().enumerate() {
                    self.fold_stmt(&format!("{n}.{i}"), *t);
                }
            }
            Kind::Struct(_) | Kind::Enum(_) => self.line(&format!("ck = fold(ck, {n}.digest());")),
            Kind::Option(t) => {
                let p = self.scopes.fresh("p");
                let f = fold_call("ck", &p, *t);
                self.line(&format!("ck = match {n} {{ Some({p}) => {f}, None => fold(ck, 0x5a5a) }};"));
            }
            Kind::Closure(a, r) | Kind::FnPtr(a, r) => {
                let arg = a.literal(self.rng);
                self.fold_stmt(&format!("{n}({arg})"), *r);
            }
        }
    }
}
