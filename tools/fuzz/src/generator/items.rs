//! The items before `run`: structs with methods, enums with payloads, a trait implemented for
//! several scalar types with generic functions over it (const generics, closures), `&dyn`
//! dispatch, a bounded self-recursive function and helper functions taking values, `&`, `&mut`,
//! slices, arrays and struct references. Each is registered in [`Items`] as it is written, so later
//! code calls only what exists (helpers call earlier helpers: no unbounded recursion).
use super::Gen;
use super::scope::{EnumDef, FieldKind, FnSig, Kind, Param, Ret, Scopes, Shape, StructDef};
use super::ty::{Int, Scalar};
use super::{LoopCtx, fold_call};

impl Gen<'_> {
    /// Every item of the program, as source text.
    pub fn items_section(&mut self) -> String {
        let mut out = String::new();
        if self.feat.on("structs") {
            for _ in 0..self.rng.weighted(&[5, 4, 1]) {
                out += &self.struct_item();
            }
            if self.feat.on("dyn") && !self.items.structs.is_empty() && self.rng.chance(60) {
                out += &self.dyn_items();
            }
        }
        if self.feat.on("enums") {
            for _ in 0..self.rng.weighted(&[5, 4, 1]) {
                out += &self.enum_item();
            }
        }
        if self.feat.on("generics") && self.rng.chance(50) {
            out += &self.generic_items();
        }
        if self.feat.on("recursion") && self.rng.chance(25) {
            out += &self.recursive_item();
        }
        if self.feat.on("calls") {
            for _ in 0..self.rng.weighted(&[4, 4, 2, 1]) {
                out += &self.helper_fn();
            }
        }
        out
    }

    /// Writes a function: resets the per-function state, declares `params`, runs `body`, restores.
    fn in_fn(
        &mut self,
        params: &[(String, Kind, bool)],
        ret: Option<Scalar>,
        has_ck: bool,
        body: impl FnOnce(&mut Self),
    ) -> String {
        let next = self.scopes.next_id();
        let saved = (
            std::mem::replace(&mut self.scopes, Scopes::with_next(next)),
            std::mem::take(&mut self.loops),
            self.ret,
            self.has_ck,
        );
        let had_input = std::mem::replace(&mut self.has_input, false);
        self.ret = ret;
        self.has_ck = has_ck;
        self.depth = 0;
        self.loop_depth = 0;
        self.scopes.push();
        for (n, k, m) in params {
            self.scopes.declare(n, k.clone(), *m);
        }
        let text = self.capture(|g| {
            g.indent += 1;
            body(g);
            g.indent -= 1;
        });
        let next = self.scopes.next_id();
        let (scopes, loops, r, ck): (Scopes, Vec<LoopCtx>, Option<Scalar>, bool) = saved;
        self.scopes = scopes;
        self.scopes.set_next(next);
        self.loops = loops;
        self.ret = r;
        self.has_ck = ck;
        self.has_input = had_input;
        text
    }

    fn struct_item(&mut self) -> String {
        let si = self.items.structs.len();
        let name = format!("S{si}");
        let nf = self.rng.range(1, 4);
        let fields: Vec<(String, FieldKind)> = (0..nf)
            .map(|k| {
                let t = self.any_scalar();
                let fk = if self.feat.on("arrays") && self.rng.chance(25) {
                    FieldKind::Array(t, *self.rng.pick(&[2, 4, 3]))
                } else {
                    FieldKind::Scalar(t)
                };
                (format!("f{k}"), fk)
            })
            .collect();
        let mut out = String::from("#[derive(Clone, Copy)]\n");
        out += &format!("struct {name} {{\n");
        for (f, k) in &fields {
            let ty = match k {
                FieldKind::Scalar(t) => t.name().to_string(),
                FieldKind::Array(t, n) => format!("[{}; {n}]", t.name()),
            };
            out += &format!("    {f}: {ty},\n");
        }
        out += "}\n\n";
        out += &format!("impl {name} {{\n");
        out += "    fn digest(&self) -> u64 {\n        let mut h: u64 = 0x51;\n";
        for (f, k) in &fields {
            match k {
                FieldKind::Scalar(t) => out += &format!("        h = {};\n", fold_call("h", &format!("self.{f}"), *t)),
                FieldKind::Array(t, _) => {
                    out += &format!("        for &x in self.{f}.iter() {{ h = {}; }}\n", fold_call("h", "x", *t))
                }
            }
        }
        out += "        h\n    }\n";
        self.items.structs.push(StructDef { name: name.clone(), fields, getters: vec![], setters: vec![] });
        let me = || ("(*self)".to_string(), Kind::Struct(si), false);
        for k in 0..self.rng.weighted(&[1, 2]) {
            let (a, r) = (self.any_scalar(), self.any_scalar());
            let m = format!("get{k}");
            let q = self.scopes.fresh("q");
            let params = [me(), (q.clone(), Kind::Scalar(a), false)];
            let body = self.in_fn(&params, Some(r), false, |g| {
                let e = g.expr(r, 3);
                g.line(&e);
            });
            out += &format!("\n    fn {m}(&self, {q}: {}) -> {} {{\n{}    }}\n", a.name(), r.name(), indent(&body));
            self.items.structs[si].getters.push((m, a, r));
        }
        for k in 0..self.rng.weighted(&[2, 2]) {
            let a = self.any_scalar();
            let m = format!("set{k}");
            let q = self.scopes.fresh("q");
            let mut mine = me();
            mine.2 = true;
            let params = [mine, (q.clone(), Kind::Scalar(a), false)];
            let body = self.in_fn(&params, None, false, |g| {
                g.budget = g.rng.range(1, 2) as i32;
                while g.budget > 0 {
                    g.stmt();
                }
            });
            out += &format!("\n    fn {m}(&mut self, {q}: {}) {{\n{}    }}\n", a.name(), indent(&body));
            self.items.structs[si].setters.push((m, a));
        }
        out += "}\n\n";
        out
    }

    /// `trait Dyn` and an impl for every struct, reached through `&dyn Dyn` in [`Gen::compound_read`].
    fn dyn_items(&mut self) -> String {
        let mut out = String::from("trait Dyn {\n    fn poke(&self, k: u32) -> u64;\n}\n\n");
        for si in 0..self.items.structs.len() {
            let name = self.items.structs[si].name.clone();
            let params = [
                ("(*self)".to_string(), Kind::Struct(si), false),
                ("k".to_string(), Kind::Scalar(Scalar::Int(Int::U32)), false),
            ];
            let body = self.in_fn(&params, Some(Scalar::Int(Int::U64)), false, |g| {
                let e = g.expr(Scalar::Int(Int::U64), 2);
                g.line(&format!("fold(self.digest(), k as u64) ^ {}", super::expr::atom(&e)));
            });
            out += &format!(
                "impl Dyn for {name} {{\n    fn poke(&self, k: u32) -> u64 {{\n{}    }}\n}}\n\n",
                indent(&body)
            );
        }
        self.items.dyn_trait = (0..self.items.structs.len()).collect();
        out
    }

    fn enum_item(&mut self) -> String {
        let ei = self.items.enums.len();
        let name = format!("E{ei}");
        let nv = self.rng.range(2, 4);
        let variants: Vec<(String, Shape)> = (0..nv)
            .map(|k| {
                let v = ["A", "B", "C", "D"][k].to_string();
                let shape = match self.rng.below(3) {
                    0 => Shape::Unit,
                    1 => Shape::Tuple((0..self.rng.range(1, 2)).map(|_| self.any_scalar()).collect()),
                    _ => Shape::Named(
                        (0..self.rng.range(1, 3))
                            .map(|j| (["x", "y", "z"][j].to_string(), self.any_scalar()))
                            .collect(),
                    ),
                };
                (v, shape)
            })
            .collect();
        let mut out = format!("#[derive(Clone, Copy)]\nenum {name} {{\n");
        let mut digest = String::new();
        for (k, (v, shape)) in variants.iter().enumerate() {
            match shape {
                Shape::Unit => {
                    out += &format!("    {v},\n");
                    digest += &format!("            {name}::{v} => {k},\n");
                }
                Shape::Tuple(ts) => {
                    let tys: Vec<&str> = ts.iter().map(|t| t.name()).collect();
                    out += &format!("    {v}({}),\n", tys.join(", "));
                    let binds: Vec<String> = (0..ts.len()).map(|j| format!("p{j}")).collect();
                    let mut h = format!("{k}");
                    for (j, t) in ts.iter().enumerate() {
                        h = fold_call(&h, &format!("*p{j}"), *t);
                    }
                    digest += &format!("            {name}::{v}({}) => {h},\n", binds.join(", "));
                }
                Shape::Named(fs) => {
                    let tys: Vec<String> = fs.iter().map(|(f, t)| format!("{f}: {}", t.name())).collect();
                    out += &format!("    {v} {{ {} }},\n", tys.join(", "));
                    let binds: Vec<&str> = fs.iter().map(|(f, _)| f.as_str()).collect();
                    let mut h = format!("{k}");
                    for (f, t) in fs {
                        h = fold_call(&h, &format!("*{f}"), *t);
                    }
                    digest += &format!("            {name}::{v} {{ {} }} => {h},\n", binds.join(", "));
                }
            }
        }
        out += "}\n\n";
        out += &format!(
            "impl {name} {{\n    fn digest(&self) -> u64 {{\n        match self {{\n{digest}        }}\n    }}\n}}\n\n"
        );
        self.items.enums.push(EnumDef { name, variants });
        out
    }

    /// `trait Mix` for two or three scalar types, generic functions over it, `apply` (a closure
    /// parameter) and `fold_arr` (a const generic).
    fn generic_items(&mut self) -> String {
        let mut out = String::from(
            "trait Mix: Copy + PartialOrd {\n    fn mix(self, k: u32) -> Self;\n    fn join(self, o: Self) -> Self;\n}\n\n",
        );
        let mut types: Vec<Scalar> = Vec::new();
        for _ in 0..self.rng.range(2, 3) {
            let t = self.any_scalar();
            if !types.contains(&t) {
                types.push(t);
            }
        }
        for &t in &types {
            let n = t.name();
            let k_params = [
                ("self".to_string(), Kind::Scalar(t), false),
                ("k".to_string(), Kind::Scalar(Scalar::Int(Int::U32)), false),
            ];
            let mix = self.in_fn(&k_params, Some(t), false, |g| {
                let e = g.expr(t, 2);
                g.line(&e);
            });
            let o_params = [("self".to_string(), Kind::Scalar(t), false), ("o".to_string(), Kind::Scalar(t), false)];
            let join = self.in_fn(&o_params, Some(t), false, |g| {
                let e = g.expr(t, 2);
                g.line(&e);
            });
            out += &format!(
                "impl Mix for {n} {{\n    fn mix(self, k: u32) -> {n} {{\n{}    }}\n\n    fn join(self, o: {n}) -> {n} {{\n{}    }}\n}}\n\n",
                indent(&mix),
                indent(&join)
            );
        }
        let mut fns = Vec::new();
        for k in 0..self.rng.range(1, 2) {
            let name = format!("g{k}");
            let mut body = String::new();
            body += "    let mut v = a;\n";
            body += &format!("    for i in 0..(n & {}) {{\n", self.rng.pick(&[3, 7]));
            for _ in 0..self.rng.range(1, 3) {
                let s = match self.rng.below(4) {
                    0 => format!("v = {};", self.generic_expr(2, true)),
                    1 => format!("if {} {{ v = {}; }}", self.generic_cond(true), self.generic_expr(1, true)),
                    2 => format!("if {} {{ break; }}", self.generic_cond(true)),
                    _ => format!("if {} {{ continue; }}", self.generic_cond(true)),
                };
                body += &format!("        {s}\n");
            }
            body += "    }\n";
            body += &format!("    {}\n", self.generic_expr(2, false));
            out += &format!("fn {name}<T: Mix>(a: T, b: T, n: u32) -> T {{\n{body}}}\n\n");
            fns.push(name);
        }
        let apply = self.feat.on("closures");
        if apply {
            out += "fn apply<T: Copy, F: Fn(T) -> T>(f: F, x: T, n: u32) -> T {\n    let mut v = x;\n    for _ in 0..(n & 3) {\n        v = f(v);\n    }\n    v\n}\n\n";
        }
        out += "fn fold_arr<T: Mix, const N: usize>(a: [T; N], k: u32) -> T {\n    let mut acc = a[N - 1];\n    for (i, &x) in a.iter().enumerate() {\n        acc = acc.join(x.mix(k ^ i as u32));\n    }\n    acc\n}\n\n";
        self.items.generics =
            super::scope::Generics { mix_types: types, generic_fns: fns, apply, fold_arr: self.feat.on("arrays") };
        out
    }

    /// An expression of type `T` in a generic function over `a`, `b`, `v` (and `n: u32`, and the
    /// loop's `i: u32` when `in_loop`).
    fn generic_expr(&mut self, d: u32, in_loop: bool) -> String {
        if d == 0 {
            return self.rng.pick(&["a", "b", "v"]).to_string();
        }
        let x = self.generic_expr(d - 1, in_loop);
        match self.rng.below(4) {
            0 => format!("{x}.mix({})", self.generic_k(in_loop)),
            1 => format!("{x}.join({})", self.generic_expr(d - 1, in_loop)),
            2 => format!(
                "(if {} {{ {x} }} else {{ {} }})",
                self.generic_cond(in_loop),
                self.generic_expr(d - 1, in_loop)
            ),
            _ => x,
        }
    }

    fn generic_cond(&mut self, in_loop: bool) -> String {
        let (a, b) = (self.generic_expr(1, in_loop), self.generic_expr(0, in_loop));
        format!("{a} {} {b}", self.rng.pick(&["<", "==", ">=", "!="]))
    }

    fn generic_k(&mut self, in_loop: bool) -> String {
        let i = if in_loop { "i" } else { "7" };
        match self.rng.below(4) {
            0 => format!("{i} ^ n"),
            1 => format!("n.wrapping_mul({}).rotate_left({i})", self.rng.range(3, 99)),
            2 => format!("{}u32", self.rng.below(1000)),
            _ => format!("n >> ({i} & 31)"),
        }
    }

    fn recursive_item(&mut self) -> String {
        let t = self.any_scalar();
        let name = "rec0".to_string();
        let params = [
            ("n".to_string(), Kind::Scalar(Scalar::Int(Int::U32)), false),
            ("acc".to_string(), Kind::Scalar(t), false),
        ];
        let step = self.in_fn(&params, Some(t), false, |g| {
            let e = g.expr(t, 2);
            g.line(&e);
        });
        self.items.recursive.push((name.clone(), t));
        format!(
            "fn {name}(n: u32, acc: {0}) -> {0} {{\n    if n == 0 {{\n        acc\n    }} else {{\n        let next = {{\n{1}        }};\n        {name}(n - 1, next)\n    }}\n}}\n\n",
            t.name(),
            indent(&indent(&step))
        )
    }

    fn helper_fn(&mut self) -> String {
        let k = self.items.fns.len();
        let name = format!("h{k}");
        let ret = self.any_scalar();
        let aggregates = self.feat.on("aggregates");
        let ret_kind = match self.rng.below(10) {
            0 | 1 if aggregates => Ret::Pair(ret, self.any_scalar()),
            2 | 3 if aggregates && !self.items.structs.is_empty() => {
                Ret::Struct(self.rng.below(self.items.structs.len()))
            }
            _ => Ret::Scalar(ret),
        };
        let np = self.rng.range(1, 3);
        let mut sig = Vec::new();
        let mut params = Vec::new();
        for _ in 0..np {
            let t = self.any_scalar();
            let q = self.scopes.fresh("q");
            let mutating = self.rng.chance(30);
            let (p, kind, ty, m) = match self.rng.below(6) {
                0 if mutating => (Param::MutRef(t), Kind::Scalar(t), format!("&mut {}", t.name()), true),
                0 => (Param::Ref(t), Kind::Scalar(t), format!("&{}", t.name()), false),
                1 if self.feat.on("slices") && mutating => {
                    (Param::MutSlice(t), Kind::SliceMut(t), format!("&mut [{}]", t.name()), false)
                }
                1 if self.feat.on("slices") => (Param::Slice(t), Kind::Slice(t), format!("&[{}]", t.name()), false),
                2 if self.feat.on("arrays") => {
                    let n = *self.rng.pick(&[2usize, 3, 4]);
                    (Param::Array(t, n), Kind::Array(t, n), format!("[{}; {n}]", t.name()), true)
                }
                3 if !self.items.structs.is_empty() => {
                    let si = self.rng.below(self.items.structs.len());
                    (Param::StructRef(si), Kind::Struct(si), format!("&{}", self.items.structs[si].name), false)
                }
                4 if aggregates && !self.items.structs.is_empty() => {
                    let si = self.rng.below(self.items.structs.len());
                    (Param::StructVal(si), Kind::Struct(si), self.items.structs[si].name.clone(), true)
                }
                _ => (Param::Value(t), Kind::Scalar(t), t.name().to_string(), true),
            };
            // References are used through `(*q)`; by-value parameters are `mut` bindings.
            let (var, decl) = match p {
                Param::Ref(_) | Param::MutRef(_) | Param::StructRef(_) => (format!("(*{q})"), format!("{q}: {ty}")),
                Param::Value(_) | Param::Array(..) | Param::StructVal(_) => (q.clone(), format!("mut {q}: {ty}")),
                _ => (q.clone(), format!("{q}: {ty}")),
            };
            sig.push(p);
            params.push((var, kind, m, decl));
        }
        let decls: Vec<String> = params.iter().map(|p| p.3.clone()).collect();
        let vars: Vec<(String, Kind, bool)> = params.into_iter().map(|p| (p.0, p.1, p.2)).collect();
        // `return e;` needs a scalar result; aggregate results come only at the end.
        let early = matches!(ret_kind, Ret::Scalar(_)).then_some(ret);
        let ret_kind2 = ret_kind.clone();
        let body = self.in_fn(&vars, early, true, |g| {
            g.line("let mut ck: u64 = 0;");
            g.budget = g.rng.range(1, 4) as i32;
            while g.budget > 0 {
                g.stmt();
            }
            let e = super::expr::atom(&g.expr(ret, 2));
            let scalar = match ret {
                Scalar::Int(i) => format!("{e} ^ (ck as {})", i.name()),
                Scalar::F32 | Scalar::F64 => format!("{e} + ((ck & 0xff) as {})", ret.name()),
                Scalar::Bool => format!("{e} ^ (ck & 1 == 1)"),
            };
            let tail = match ret_kind2 {
                Ret::Scalar(_) => scalar,
                Ret::Pair(_, b) => format!("({scalar}, {})", g.expr(b, 2)),
                Ret::Struct(si) => g.struct_literal(si),
            };
            g.line(&tail);
        });
        let ret_ty = match &ret_kind {
            Ret::Scalar(t) => t.name().to_string(),
            Ret::Pair(a, b) => format!("({}, {})", a.name(), b.name()),
            Ret::Struct(si) => self.items.structs[*si].name.clone(),
        };
        self.items.fns.push(FnSig { name: name.clone(), params: sig, ret: ret_kind });
        format!("fn {name}({}) -> {ret_ty} {{\n{body}}}\n\n", decls.join(", "))
    }
}

/// `text` indented by one level.
fn indent(text: &str) -> String {
    text.lines().map(|l| if l.is_empty() { "\n".to_string() } else { format!("    {l}\n") }).collect()
}
