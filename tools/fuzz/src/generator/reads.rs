//! Scalar expressions that read compound values and call things: iterator folds over arrays and
//! slices, `Option` and enum matches, struct methods, closures, fn pointers, `&dyn` calls, helper
//! functions, generic and recursive functions.
use super::Gen;
use super::expr::atom;
use super::scope::{FieldKind, FnSig, Kind, Param, Ret, Shape};
use super::ty::{Int, Scalar};

/// One way of reading a `t` out of something in scope.
type Reader = Box<dyn for<'a, 'b> Fn(&'a mut Gen<'b>) -> Option<String>>;

impl Gen<'_> {
    /// A `t` read out of a compound variable or produced by a closure/method in scope, if any fits.
    pub fn compound_read(&mut self, t: Scalar) -> Option<String> {
        if self.nest >= 1 {
            return None;
        }
        self.nest += 1;
        let r = self.compound_read_inner(t);
        self.nest -= 1;
        r
    }

    fn compound_read_inner(&mut self, t: Scalar) -> Option<String> {
        let vars = self.scopes.vars_of(|_| true);
        let mut options: Vec<Reader> = Vec::new();
        for v in vars {
            let name = v.name.clone();
            match v.kind.clone() {
                Kind::Array(e, n) if self.feat.on("iterators") => {
                    options.push(Box::new(move |g| g.seq_read(&name, e, Some(n), t)));
                }
                Kind::Slice(e) | Kind::SliceMut(e) if v.frozen == 0 || matches!(v.kind, Kind::Slice(_)) => {
                    options.push(Box::new(move |g| g.seq_read(&name, e, None, t)));
                }
                Kind::Option(e) => options.push(Box::new(move |g| g.option_read(&name, e, t))),
                Kind::Enum(ei) => options.push(Box::new(move |g| g.enum_read(&name, ei, t))),
                Kind::Closure(a, r) | Kind::FnPtr(a, r) if r == t => {
                    options.push(Box::new(move |g| {
                        let arg = g.small(a);
                        Some(format!("{name}({arg})"))
                    }));
                }
                Kind::Struct(si) => {
                    let getters: Vec<_> = self.items.structs[si].getters.iter().filter(|m| m.2 == t).cloned().collect();
                    for (m, a, _) in getters {
                        let name = name.clone();
                        options.push(Box::new(move |g| {
                            let arg = g.small(a);
                            Some(format!("{name}.{m}({arg})"))
                        }));
                    }
                    if self.feat.on("dyn") && t == Scalar::Int(Int::U64) && self.items.dyn_trait.contains(&si) {
                        options.push(Box::new(move |g| g.dyn_read(&name)));
                    }
                }
                _ => {}
            }
        }
        if options.is_empty() {
            return None;
        }
        let i = self.rng.below(options.len());
        options.swap_remove(i)(self)
    }

    /// A `t` computed from an array (`len` known) or a non-empty slice `name` of `e`s.
    fn seq_read(&mut self, name: &str, e: Scalar, len: Option<usize>, t: Scalar) -> Option<String> {
        let x = self.scopes.fresh("x");
        let it = match self.rng.below(5) {
            0 => format!("{name}.iter().rev()"),
            1 => format!("{name}.iter().step_by({})", self.rng.range(1, 3)),
            2 => format!("{name}.iter().skip({})", self.rng.range(0, 2)),
            _ => format!("{name}.iter()"),
        };
        match t {
            Scalar::Bool => {
                let v = self.small(e);
                Some(match self.rng.below(3) {
                    0 => format!("{name}.contains(&{})", atom(&v)),
                    1 => format!("{it}.any(|&{x}| {x} {} {})", self.cmp_op(e), atom(&v)),
                    _ => format!("{it}.all(|&{x}| {x} {} {})", self.cmp_op(e), atom(&v)),
                })
            }
            Scalar::Int(i) if self.rng.chance(40) => {
                let n = i.name();
                Some(match self.rng.below(4) {
                    0 => format!("({name}.len() as {n})"),
                    1 => {
                        let v = atom(&self.small(e));
                        format!("({it}.filter(|&&{x}| {x} {} {v}).count() as {n})", self.cmp_op(e))
                    }
                    2 => {
                        let v = atom(&self.small(e));
                        let c = self.leaf(t);
                        format!("{name}.iter().position(|&{x}| {x} {} {v}).map_or({c}, |p| p as {n})", self.cmp_op(e))
                    }
                    _ => {
                        let split = self.small(Scalar::Int(Int::Usize));
                        let l = len.map(|n| n.to_string()).unwrap_or_else(|| format!("{name}.len()"));
                        format!("({name}.split_at({} % ({l} + 1)).0.len() as {n})", atom(&split))
                    }
                })
            }
            _ if e == t => {
                let acc = self.scopes.fresh("acc");
                let init = self.small(t);
                let step = match t {
                    Scalar::Int(_) => match self.rng.below(4) {
                        0 => format!("{acc}.wrapping_add({x})"),
                        1 => format!("{acc}.rotate_left(5) ^ {x}"),
                        2 => format!("{acc}.wrapping_mul(31).wrapping_add({x})"),
                        _ => format!("{acc}.max({x}).wrapping_sub({acc}.min({x}))"),
                    },
                    Scalar::F32 | Scalar::F64 => {
                        let b = if t == Scalar::F32 { "32" } else { "64" };
                        match self.rng.below(3) {
                            0 => format!("{acc} + {x}"),
                            1 => format!("{acc} * 0.5 - {x}"),
                            _ => format!("fmax{b}({acc}, {x})"),
                        }
                    }
                    Scalar::Bool => format!("{acc} ^ {x}"),
                };
                match (t, self.rng.below(3)) {
                    (Scalar::Int(_), 0) => {
                        let d = self.leaf(t);
                        Some(format!("{it}.copied().{}().unwrap_or({d})", self.rng.pick(&["max", "min"])))
                    }
                    (_, 1) => {
                        let d = self.leaf(t);
                        Some(format!("{name}.{}().copied().unwrap_or({d})", self.rng.pick(&["first", "last"])))
                    }
                    _ => Some(format!("{it}.fold({init}, |{acc}, &{x}| {step})")),
                }
            }
            _ => None,
        }
    }

    /// A comparison operator that is meaningful for `e`.
    fn cmp_op(&mut self, e: Scalar) -> &'static str {
        if e == Scalar::Bool {
            self.rng.pick(&["==", "!="])
        } else {
            self.rng.pick(&["<", ">", "==", "!=", "<=", ">="])
        }
    }

    fn option_read(&mut self, name: &str, e: Scalar, t: Scalar) -> Option<String> {
        if t == Scalar::Bool {
            return Some(match self.rng.below(3) {
                0 => format!("{name}.is_some()"),
                1 => format!("{name}.is_none()"),
                _ => {
                    let v = atom(&self.small(e));
                    format!("{name}.is_some_and(|p| p {} {v})", self.cmp_op(e))
                }
            });
        }
        let p = self.scopes.fresh("p");
        let c = self.small(t);
        self.scopes.push();
        self.scopes.declare(&p, Kind::Scalar(e), false);
        let body = if e == t && self.rng.chance(30) { p.clone() } else { self.expr(t, 1) };
        let guard = self.bool_expr(1);
        let other = self.expr(t, 1);
        self.scopes.pop();
        Some(match self.rng.below(3) {
            0 if e == t => format!("{name}.unwrap_or({c})"),
            0 | 1 => format!("{name}.map_or({c}, |{p}| {body})"),
            _ => format!("(match {name} {{ Some({p}) if {guard} => {body}, Some({p}) => {other}, None => {c} }})"),
        })
    }

    /// A `match` on enum variable `name` (or `matches!`) yielding a `t`.
    fn enum_read(&mut self, name: &str, ei: usize, t: Scalar) -> Option<String> {
        let def = self.items.enums[ei].clone();
        if t == Scalar::Bool && self.rng.chance(50) {
            let (v, shape) = self.rng.pick(&def.variants).clone();
            let pat = match shape {
                Shape::Unit => String::new(),
                Shape::Tuple(_) => "(..)".into(),
                Shape::Named(_) => " { .. }".into(),
            };
            return Some(format!("matches!({name}, {}::{v}{pat})", def.name));
        }
        let mut arms = Vec::new();
        let skip_last = self.rng.chance(30);
        for (k, (v, shape)) in def.variants.iter().enumerate() {
            if skip_last && k + 1 == def.variants.len() {
                break;
            }
            self.scopes.push();
            let pat = match shape {
                Shape::Unit => format!("{}::{v}", def.name),
                Shape::Tuple(ts) => {
                    let binds: Vec<String> = ts
                        .iter()
                        .map(|s| {
                            let b = self.scopes.fresh("b");
                            self.scopes.declare(&b, Kind::Scalar(*s), false);
                            b
                        })
                        .collect();
                    format!("{}::{v}({})", def.name, binds.join(", "))
                }
                Shape::Named(fs) => {
                    let binds: Vec<String> = fs
                        .iter()
                        .map(|(f, s)| {
                            let b = self.scopes.fresh("b");
                            self.scopes.declare(&b, Kind::Scalar(*s), false);
                            format!("{f}: {b}")
                        })
                        .collect();
                    format!("{}::{v} {{ {} }}", def.name, binds.join(", "))
                }
            };
            let guarded = !matches!(shape, Shape::Unit) && self.rng.chance(30);
            if guarded {
                let g = self.bool_expr(1);
                let e = self.expr(t, 1);
                arms.push(format!("{pat} if {g} => {e}"));
            }
            let e = self.expr(t, 1);
            self.scopes.pop();
            arms.push(format!("{pat} => {e}"));
        }
        if skip_last {
            let e = self.small(t);
            arms.push(format!("_ => {e}"));
        }
        Some(format!("(match {name} {{ {} }})", arms.join(", ")))
    }

    /// `<u64>` from a `&dyn Dyn` picked out of an array of trait objects.
    fn dyn_read(&mut self, name: &str) -> Option<String> {
        let others: Vec<String> = self
            .scopes
            .vars_of(|k| matches!(k, Kind::Struct(si) if self.items.dyn_trait.contains(si)))
            .into_iter()
            .map(|v| v.name)
            .collect();
        let other = self.rng.pick(&others).clone();
        let k = atom(&self.small(Scalar::Int(Int::U32)));
        let i = atom(&self.small(Scalar::Int(Int::Usize)));
        Some(format!("[&{name} as &dyn Dyn, &{other}][{i} & 1].poke({k})"))
    }

    /// A call of a helper, generic or recursive function returning `t`, if one exists.
    pub fn call_expr(&mut self, t: Scalar, d: u32) -> Option<String> {
        if self.nest >= 1 {
            return None;
        }
        self.nest += 1;
        let r = self.call_expr_inner(t, d);
        self.nest -= 1;
        r
    }

    fn call_expr_inner(&mut self, t: Scalar, d: u32) -> Option<String> {
        let mut choices: Vec<usize> = Vec::new();
        // Helpers whose result is, or holds, a `t`: (helper, the projection that picks it).
        let mut fns: Vec<(FnSig, String)> = Vec::new();
        for f in self.items.fns.iter().filter(|f| f.pure()) {
            match &f.ret {
                Ret::Scalar(r) if *r == t => fns.push((f.clone(), String::new())),
                Ret::Pair(a, b) => {
                    if *a == t {
                        fns.push((f.clone(), ".0".into()));
                    }
                    if *b == t {
                        fns.push((f.clone(), ".1".into()));
                    }
                }
                Ret::Struct(si) => {
                    for (field, k) in &self.items.structs[*si].fields {
                        if *k == FieldKind::Scalar(t) {
                            fns.push((f.clone(), format!(".{field}")));
                        }
                    }
                }
                _ => {}
            }
        }
        if !fns.is_empty() {
            choices.extend([0, 0, 0]);
        }
        let generics = self.items.generics.clone();
        if generics.mix_types.contains(&t) {
            if !generics.generic_fns.is_empty() {
                choices.push(1);
            }
            if generics.apply {
                choices.push(2);
            }
            if generics.fold_arr && !self.scopes.vars_of(|k| matches!(k, Kind::Array(e, _) if *e == t)).is_empty() {
                choices.push(3);
            }
        }
        let rec: Vec<_> = self.items.recursive.iter().filter(|r| r.1 == t).cloned().collect();
        if !rec.is_empty() {
            choices.push(4);
        }
        if choices.is_empty() {
            return None;
        }
        let n = t.name();
        Some(match *self.rng.pick(&choices) {
            0 => {
                let (f, proj) = self.rng.pick(&fns).clone();
                let args: Vec<String> = f.params.iter().map(|p| self.arg(p, d)).collect();
                format!("{}({}){proj}", f.name, args.join(", "))
            }
            1 => {
                let f = self.rng.pick(&generics.generic_fns).clone();
                let a = self.expr(t, d);
                let b = self.small(t);
                let k = self.small(Scalar::Int(Int::U32));
                format!("{f}::<{n}>({a}, {b}, {k})")
            }
            2 => {
                let p = self.scopes.fresh("p");
                let body = self.in_move_closure(|g| {
                    g.scopes.push();
                    g.scopes.declare(&p, Kind::Scalar(t), false);
                    let body = g.expr(t, 1);
                    g.scopes.pop();
                    body
                });
                let x = self.small(t);
                let k = self.small(Scalar::Int(Int::U32));
                format!("apply(move |{p}: {n}| {body}, {x}, {k})")
            }
            3 => {
                let arrs = self.scopes.vars_of(|k| matches!(k, Kind::Array(e, _) if *e == t));
                let a = self.rng.pick(&arrs).name.clone();
                let k = self.small(Scalar::Int(Int::U32));
                format!("fold_arr({a}, {k})")
            }
            _ => {
                let (f, _) = self.rng.pick(&rec).clone();
                let k = atom(&self.small(Scalar::Int(Int::U32)));
                let x = self.expr(t, d);
                format!("{f}({k} & 15, {x})")
            }
        })
    }

    /// An argument for a parameter of kind `p` in a pure call.
    pub fn arg(&mut self, p: &Param, d: u32) -> String {
        match p {
            Param::Value(s) => self.expr(*s, d),
            Param::Ref(s) => format!("&{}", atom(&self.expr(*s, d))),
            Param::Slice(s) => self.slice_arg(*s, false),
            Param::Array(s, n) => {
                let arrs = self.scopes.vars_of(|k| *k == Kind::Array(*s, *n));
                if !arrs.is_empty() && self.rng.chance(70) {
                    self.rng.pick(&arrs).name.clone()
                } else {
                    format!("[{}; {n}]", self.small(*s))
                }
            }
            Param::StructRef(si) => {
                let vars = self.scopes.vars_of(|k| *k == Kind::Struct(*si));
                if !vars.is_empty() && self.rng.chance(75) {
                    format!("&{}", self.rng.pick(&vars).name)
                } else {
                    format!("&{}", self.struct_literal(*si))
                }
            }
            Param::StructVal(si) => {
                let vars = self.scopes.vars_of(|k| *k == Kind::Struct(*si));
                if !vars.is_empty() && self.rng.chance(75) {
                    self.rng.pick(&vars).name.clone()
                } else {
                    self.struct_literal(*si)
                }
            }
            Param::MutRef(_) | Param::MutSlice(_) => unreachable!("pure calls take no &mut"),
        }
    }

    /// A non-empty `&[s]` (or `&mut [s]`) from an array in scope, or a temporary array.
    pub fn slice_arg(&mut self, s: Scalar, mutable: bool) -> String {
        let arrs = self.scopes.vars_of(|k| matches!(k, Kind::Array(e, _) if *e == s));
        let arrs: Vec<_> = arrs.into_iter().filter(|v| !mutable || (v.mutable && v.frozen == 0)).collect();
        let m = if mutable { "mut " } else { "" };
        if arrs.is_empty() || self.rng.chance(20) {
            let n = self.rng.range(1, 4);
            let elems: Vec<String> = (0..n).map(|_| self.small(s)).collect();
            return format!("&{m}[{}]", elems.join(", "));
        }
        let v = self.rng.pick(&arrs).clone();
        let Kind::Array(_, n) = v.kind else { unreachable!() };
        let lo = self.rng.below(n);
        let hi = self.rng.range(lo + 1, n);
        match self.rng.below(3) {
            0 => format!("&{m}{}[..]", v.name),
            1 => format!("&{m}{}[{lo}..{hi}]", v.name),
            _ => format!("&{m}{}[{lo}..]", v.name),
        }
    }

    /// `S { f: .., .. }` of generated struct `si`.
    pub fn struct_literal(&mut self, si: usize) -> String {
        let def = self.items.structs[si].clone();
        let fields: Vec<String> = def
            .fields
            .iter()
            .map(|(f, k)| match k {
                FieldKind::Scalar(s) => format!("{f}: {}", self.small(*s)),
                FieldKind::Array(s, n) => format!("{f}: [{}; {n}]", self.small(*s)),
            })
            .collect();
        format!("{} {{ {} }}", def.name, fields.join(", "))
    }
}
