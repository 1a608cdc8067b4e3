//! Statements about compound values: arrays and their in-place methods, subslice blocks, structs,
//! tuples, enums and `Option`s, blocks holding `&`/`&mut` references, raw pointers, closures
//! (`move` and `FnMut`), `fn` pointers, and calls that write through `&mut`.
use super::Gen;
use super::expr::atom;
use super::scope::{FieldKind, Kind, Param, Place, Ret, Shape};
use super::ty::{Int, Scalar};

impl Gen<'_> {
    pub fn array_let(&mut self) {
        let t = self.any_scalar();
        let n = *self.rng.pick(&[2usize, 3, 4, 4, 5, 8]);
        let init = match self.rng.below(4) {
            0 if n <= 5 => {
                let elems: Vec<String> = (0..n).map(|_| self.small(t)).collect();
                format!("[{}]", elems.join(", "))
            }
            1 if self.feat.on("iterators") && self.feat.on("closures") => {
                let j = self.scopes.fresh("j");
                self.scopes.push();
                self.scopes.declare(&j, Kind::Scalar(Scalar::Int(Int::Usize)), false);
                let e = self.expr(t, 1);
                self.scopes.pop();
                format!("core::array::from_fn(|{j}| {e})")
            }
            _ => format!("[{}; {n}]", self.expr(t, 2)),
        };
        let name = self.scopes.fresh("a");
        let m = self.rng.chance(75);
        self.line(&format!("let {}{name}: [{}; {n}] = {init};", if m { "mut " } else { "" }, t.name()));
        self.scopes.declare(&name, Kind::Array(t, n), m);
    }

    /// An in-place method on a writable array or `&mut` slice, or a block borrowing a subslice.
    pub fn array_op(&mut self) {
        let arrays = self.scopes.vars_of(|k| matches!(k, Kind::Array(..) | Kind::SliceMut(_)));
        let arrays: Vec<_> = arrays
            .into_iter()
            .filter(|v| v.frozen == 0 && (v.mutable || matches!(v.kind, Kind::SliceMut(_))))
            .collect();
        if arrays.is_empty() {
            return self.array_let();
        }
        let v = self.rng.pick(&arrays).clone();
        let (e, len) = match v.kind {
            Kind::Array(e, n) => (e, Some(n)),
            Kind::SliceMut(e) => (e, None),
            _ => unreachable!(),
        };
        let a = v.name.clone();
        let len_text = len.map(|n| n.to_string()).unwrap_or_else(|| format!("{a}.len()"));
        if len.is_some() && self.feat.on("slices") && self.depth < 3 && self.rng.chance(30) {
            return self.subslice_block(&a, e, len.unwrap_or(1));
        }
        // Expressions in the statement must not read the array while it is borrowed mutably.
        self.scopes.hide(&a);
        let text = match self.rng.below(8) {
            0 => {
                let i = self.index_unhidden(&a, len);
                let j = self.index_unhidden(&a, len);
                format!("{a}.swap({i}, {j});")
            }
            1 => format!("{a}.reverse();"),
            2 => {
                let k = atom(&self.small(Scalar::Int(Int::Usize)));
                format!("{a}.rotate_{}({k} % {len_text});", self.rng.pick(&["left", "right"]))
            }
            3 => format!("{a}.fill({});", self.small(e)),
            4 if e != Scalar::F32 && e != Scalar::F64 => format!("{a}.sort_unstable();"),
            5 if self.feat.on("iterators") && self.feat.on("closures") => {
                let x = self.scopes.fresh("x");
                self.scopes.push();
                self.scopes.declare(&format!("(*{x})"), Kind::Scalar(e), false);
                let body = self.expr(e, 1);
                self.scopes.pop();
                format!("{a}.iter_mut().for_each(|{x}| *{x} = {body});")
            }
            6 if len.is_some() => {
                let n = len.unwrap_or(1);
                let others = self.scopes.vars_of(|k| matches!(k, Kind::Array(t, m) if *t == e && *m >= 1));
                match others.first() {
                    Some(b) => {
                        let Kind::Array(_, m) = b.kind else { unreachable!() };
                        let k = self.rng.range(1, n.min(m));
                        let off = self.rng.range(0, n - k);
                        format!("{a}[{off}..{}].copy_from_slice(&{}[..{k}]);", off + k, b.name)
                    }
                    None => format!("{a}.reverse();"),
                }
            }
            _ => {
                let lo = self.rng.below(len.unwrap_or(1));
                format!("{a}[{lo}..].reverse();")
            }
        };
        self.scopes.unhide(&a);
        self.line(&text);
    }

    /// An index into `a` whose text may name `a` itself (`% a.len()`), generated while `a` is hidden.
    fn index_unhidden(&mut self, a: &str, len: Option<usize>) -> String {
        self.index(len, a)
    }

    /// `{ let s = &a[lo..hi]; … }` or the `&mut` form, or `split_at_mut` into two halves.
    fn subslice_block(&mut self, a: &str, e: Scalar, n: usize) {
        let s = self.scopes.fresh("s");
        self.line("{");
        self.indent += 1;
        let lo = self.scopes.fresh("lo");
        let hi = self.scopes.fresh("hi");
        let k1 = atom(&self.small_int());
        let k2 = atom(&self.small_int());
        self.line(&format!("let {lo} = ({k1} as usize) % {n};"));
        self.line(&format!("let {hi} = {lo} + 1 + ({k2} as usize) % ({n} - {lo});"));
        self.scopes.push();
        match self.rng.below(3) {
            0 => {
                self.line(&format!("let {s}: &[{}] = &{a}[{lo}..{hi}];", e.name()));
                self.scopes.freeze(a);
                self.scopes.declare(&s, Kind::Slice(e), false);
                self.block_stmts(3);
                self.scopes.unfreeze(a);
            }
            1 => {
                self.line(&format!("let {s}: &mut [{}] = &mut {a}[{lo}..{hi}];", e.name()));
                self.scopes.hide(a);
                self.scopes.declare(&s, Kind::SliceMut(e), false);
                self.block_stmts(3);
                self.scopes.unhide(a);
            }
            _ if n >= 2 => {
                let (l, r) = (self.scopes.fresh("s"), self.scopes.fresh("s"));
                let mid = self.rng.range(1, n - 1);
                self.line(&format!("let ({l}, {r}) = {a}.split_at_mut({mid});"));
                self.scopes.hide(a);
                self.scopes.declare(&l, Kind::SliceMut(e), false);
                self.scopes.declare(&r, Kind::SliceMut(e), false);
                self.block_stmts(3);
                self.scopes.unhide(a);
            }
            _ => {
                self.line(&format!("let {s}: &[{}] = &{a}[..];", e.name()));
                self.scopes.freeze(a);
                self.scopes.declare(&s, Kind::Slice(e), false);
                self.block_stmts(2);
                self.scopes.unfreeze(a);
            }
        }
        if self.has_ck {
            self.fold_innermost_scope();
        }
        self.scopes.pop();
        self.indent -= 1;
        self.line("}");
    }

    /// Up to `max` statements at the current indentation and scope.
    fn block_stmts(&mut self, max: usize) {
        self.depth += 1;
        for _ in 0..self.rng.range(1, max) {
            if self.budget > 0 {
                self.stmt();
            }
        }
        self.depth -= 1;
    }

    pub fn struct_or_tuple_let(&mut self) {
        let name_kind = if !self.items.structs.is_empty() && self.rng.chance(65) {
            let si = self.rng.below(self.items.structs.len());
            let def_name = self.items.structs[si].name.clone();
            let others = self.scopes.vars_of(|k| *k == Kind::Struct(si));
            let init = if !others.is_empty() && self.rng.chance(30) {
                // Struct update syntax: some fields new, the rest copied.
                let base = self.rng.pick(&others).name.clone();
                let (f, k) = self.rng.pick(&self.items.structs[si].fields).clone();
                let v = match k {
                    FieldKind::Scalar(s) => self.expr(s, 2),
                    FieldKind::Array(s, n) => format!("[{}; {n}]", self.small(s)),
                };
                format!("{def_name} {{ {f}: {v}, ..{base} }}")
            } else {
                self.struct_literal(si)
            };
            (init, Kind::Struct(si), def_name)
        } else {
            let n = self.rng.range(2, 3);
            let ts: Vec<Scalar> = (0..n).map(|_| self.any_scalar()).collect();
            if self.rng.chance(30) {
                // Destructuring into fresh scalars.
                let names: Vec<String> = ts.iter().map(|_| self.scopes.fresh("v")).collect();
                let es: Vec<String> = ts.iter().map(|t| self.expr(*t, 2)).collect();
                self.line(&format!(
                    "let ({}) = ({});",
                    names.iter().map(|n| format!("mut {n}")).collect::<Vec<_>>().join(", "),
                    es.join(", ")
                ));
                for (n, t) in names.iter().zip(&ts) {
                    self.scopes.declare(n, Kind::Scalar(*t), true);
                }
                return;
            }
            let es: Vec<String> = ts.iter().map(|t| self.expr(*t, 1)).collect();
            let ty = format!("({})", ts.iter().map(|t| t.name()).collect::<Vec<_>>().join(", "));
            (format!("({})", es.join(", ")), Kind::Tuple(ts), ty)
        };
        let (init, kind, ty) = name_kind;
        let name = self.scopes.fresh(if matches!(kind, Kind::Struct(_)) { "s" } else { "t" });
        let m = self.rng.chance(70);
        self.line(&format!("let {}{name}: {ty} = {init};", if m { "mut " } else { "" }));
        self.scopes.declare(&name, kind, m);
    }

    pub fn enum_or_option_let(&mut self) {
        if !self.items.enums.is_empty() && self.rng.chance(50) {
            let ei = self.rng.below(self.items.enums.len());
            let def = self.items.enums[ei].clone();
            let sel = atom(&self.small_int());
            let mut arms = Vec::new();
            for (k, (v, shape)) in def.variants.iter().enumerate() {
                let ctor = match shape {
                    Shape::Unit => format!("{}::{v}", def.name),
                    Shape::Tuple(ts) => {
                        let es: Vec<String> = ts.iter().map(|t| self.small(*t)).collect();
                        format!("{}::{v}({})", def.name, es.join(", "))
                    }
                    Shape::Named(fs) => {
                        let es: Vec<String> = fs.iter().map(|(f, t)| format!("{f}: {}", self.small(*t))).collect();
                        format!("{}::{v} {{ {} }}", def.name, es.join(", "))
                    }
                };
                let pat = if k + 1 == def.variants.len() { "_".to_string() } else { k.to_string() };
                arms.push(format!("{pat} => {ctor}"));
            }
            let name = self.scopes.fresh("e");
            let m = self.rng.chance(40);
            let modulus = def.variants.len();
            self.line(&format!(
                "let {}{name}: {} = match {sel} % {modulus} {{ {} }};",
                if m { "mut " } else { "" },
                def.name,
                arms.join(", ")
            ));
            self.scopes.declare(&name, Kind::Enum(ei), m);
            return;
        }
        let t = self.any_scalar();
        let n = t.name();
        let init = match (t, self.rng.below(5)) {
            (Scalar::Int(i), 0) => {
                let a = atom(&self.expr(t, 1));
                let b = self.expr(t, 1);
                let _ = i;
                format!("{a}.checked_{}({b})", self.rng.pick(&["add", "sub", "mul", "div", "rem"]))
            }
            (_, 1) => {
                let arrs = self.scopes.vars_of(|k| matches!(k, Kind::Array(e, _) if *e == t));
                match arrs.first() {
                    Some(a) => {
                        let x = self.scopes.fresh("x");
                        let v = atom(&self.small(t));
                        format!(
                            "{}.iter().copied().find(|&{x}| {x} {} {v})",
                            a.name,
                            if t == Scalar::Bool { "==" } else { ">" }
                        )
                    }
                    None => format!("Some({})", self.small(t)),
                }
            }
            (_, 2) => {
                let opts = self.scopes.vars_of(|k| *k == Kind::Option(t));
                match opts.first() {
                    Some(o) => {
                        let p = self.scopes.fresh("p");
                        self.scopes.push();
                        self.scopes.declare(&p, Kind::Scalar(t), false);
                        let c = self.bool_expr(1);
                        let e = self.expr(t, 1);
                        self.scopes.pop();
                        match self.rng.below(3) {
                            0 => format!("{}.filter(|&{p}| {c})", o.name),
                            1 => format!("{}.map(|{p}| {e})", o.name),
                            _ => format!("{}.or(Some({}))", o.name, self.small(t)),
                        }
                    }
                    None => "None".to_string(),
                }
            }
            _ => {
                let c = self.bool_expr(1);
                let e = self.expr(t, 1);
                format!("if {c} {{ Some({e}) }} else {{ None }}")
            }
        };
        let name = self.scopes.fresh("o");
        self.line(&format!("let {name}: Option<{n}> = {init};"));
        self.scopes.declare(&name, Kind::Option(t), false);
    }

    /// A block that holds a `&mut` (or `&`) to a scalar place or a struct and works through it.
    pub fn ref_block(&mut self) {
        let structs = self.scopes.vars_of(|k| matches!(k, Kind::Struct(_)));
        let structs: Vec<_> =
            structs.into_iter().filter(|v| v.mutable && v.frozen == 0 && !v.name.starts_with('(')).collect();
        let r = self.scopes.fresh("r");
        if !structs.is_empty() && self.rng.chance(30) {
            let s = self.rng.pick(&structs).clone();
            self.line(&format!("{{ let {r} = &mut {};", s.name));
            self.scopes.hide(&s.name);
            self.scopes.push();
            self.scopes.declare(&format!("(*{r})"), s.kind.clone(), true);
            self.block_body(2, "}");
            self.scopes.pop();
            self.scopes.unhide(&s.name);
            return;
        }
        let t = self.any_scalar();
        let mutable = self.rng.chance(65);
        let places = self.scopes.places(t, &self.items, mutable);
        let places: Vec<Place> = places.into_iter().filter(|p| !place_base(p).starts_with('(')).collect();
        if places.is_empty() {
            return self.let_scalar();
        }
        let p = self.rng.pick(&places).clone();
        let base = place_base(&p);
        let text = self.place_text(&p);
        let m = if mutable { "mut " } else { "" };
        self.line(&format!("{{ let {r} = &{m}{text};"));
        if mutable {
            self.scopes.hide(&base)
        } else {
            self.scopes.freeze(&base)
        }
        self.scopes.push();
        self.scopes.declare(&format!("(*{r})"), Kind::Scalar(t), mutable);
        self.block_body(2, "}");
        self.scopes.pop();
        if mutable { self.scopes.unhide(&base) } else { self.scopes.unfreeze(&base) }
    }
}

/// The variable a place belongs to (`a` of `a[i]`, `s` of `s.f`).
pub fn place_base(p: &Place) -> String {
    let text = match p {
        Place::Var(n) | Place::Field(n) | Place::Index(n, _) => n,
    };
    if text.starts_with('(') {
        // `(*r3)` or `(*r3).f`
        return text.split(')').next().map(|s| format!("{s})")).unwrap_or_else(|| text.clone());
    }
    text.split(['.', '[']).next().unwrap_or(text).to_string()
}

impl Gen<'_> {
    /// Calls that write through `&mut`: helpers with `&mut T`/`&mut [T]` parameters, `&mut self`
    /// methods.
    pub fn mutating_call(&mut self) {
        let setters: Vec<(String, String, Scalar)> = self
            .scopes
            .vars_of(|k| matches!(k, Kind::Struct(_)))
            .into_iter()
            .filter(|v| v.mutable && v.frozen == 0)
            .flat_map(|v| {
                let Kind::Struct(si) = v.kind else { unreachable!() };
                self.items.structs[si]
                    .setters
                    .iter()
                    .map(move |(m, a)| (v.name.clone(), m.clone(), *a))
                    .collect::<Vec<_>>()
            })
            .collect();
        // Helpers that write through `&mut` or return an aggregate are called as statements.
        let fns: Vec<_> =
            self.items.fns.iter().filter(|f| !f.pure() || !matches!(f.ret, Ret::Scalar(_))).cloned().collect();
        if !setters.is_empty() && (fns.is_empty() || self.rng.chance(40)) {
            let (s, m, a) = self.rng.pick(&setters).clone();
            let arg = self.small(a);
            self.line(&format!("{s}.{m}({arg});"));
            return;
        }
        if fns.is_empty() {
            return self.assign();
        }
        let f = self.rng.pick(&fns).clone();
        // The `&mut` arguments first, each hiding its variable, so no other argument borrows it.
        let mut hidden = Vec::new();
        let mut args = vec![String::new(); f.params.len()];
        for (k, p) in f.params.iter().enumerate() {
            args[k] = match p {
                Param::MutRef(t) => {
                    let places = self.scopes.places(*t, &self.items, true);
                    if places.is_empty() {
                        format!("&mut {}", t.literal(self.rng))
                    } else {
                        let pl = self.rng.pick(&places).clone();
                        let text = self.place_text(&pl);
                        let base = place_base(&pl);
                        self.scopes.hide(&base);
                        hidden.push(base);
                        format!("&mut {text}")
                    }
                }
                Param::MutSlice(t) => {
                    let text = self.slice_arg(*t, true);
                    if let Some(base) =
                        text.strip_prefix("&mut ").and_then(|r| r.split('[').next()).filter(|b| !b.is_empty())
                    {
                        self.scopes.hide(base);
                        hidden.push(base.to_string());
                    }
                    text
                }
                _ => continue,
            };
        }
        for (k, p) in f.params.iter().enumerate() {
            if !p.mutates() {
                args[k] = self.arg(p, 1);
            }
        }
        for b in hidden {
            self.scopes.unhide(&b);
        }
        let call = format!("{}({})", f.name, args.join(", "));
        match f.ret {
            Ret::Scalar(r) if self.has_ck && self.rng.chance(70) => self.fold_stmt(&call, r),
            Ret::Pair(a, b) => {
                let (x, y) = (self.scopes.fresh("v"), self.scopes.fresh("v"));
                self.line(&format!("let (mut {x}, mut {y}): ({}, {}) = {call};", a.name(), b.name()));
                self.scopes.declare(&x, Kind::Scalar(a), true);
                self.scopes.declare(&y, Kind::Scalar(b), true);
            }
            Ret::Struct(si) => {
                let s = self.scopes.fresh("s");
                self.line(&format!("let mut {s}: {} = {call};", self.items.structs[si].name));
                self.scopes.declare(&s, Kind::Struct(si), true);
            }
            Ret::Scalar(_) => self.line(&format!("let _ = {call};")),
        }
    }
}
