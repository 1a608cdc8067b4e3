//! Raw pointers kept in bounds (element pointers, `add`/`wrapping_add`/`sub`, `read`/`write`,
//! `ptr::swap`, `copy_nonoverlapping`, byte views of arrays), closures (`move` with `Copy`
//! captures, `FnMut` accumulating into a local) and `fn` pointers.
use super::expr::atom;
use super::scope::{Kind, Scopes};
use super::ty::Scalar;
use super::{Gen, fold_call};

/// Bytes in one value of `t` (both targets are 64-bit little-endian).
fn size_of(t: Scalar) -> usize {
    match t {
        Scalar::Int(i) => i.bits() as usize / 8,
        Scalar::F32 => 4,
        Scalar::F64 => 8,
        Scalar::Bool => 1,
    }
}

impl Gen<'_> {
    pub fn raw_ptr_stmt(&mut self) {
        let arrays: Vec<_> = self.scopes.vars_of(|k| matches!(k, Kind::Array(..)));
        let writable: Vec<_> = arrays.iter().filter(|v| v.mutable && v.frozen == 0).cloned().collect();
        match self.rng.below(4) {
            0 | 1 if !writable.is_empty() => {
                let a = self.rng.pick(&writable).clone();
                let Kind::Array(e, n) = a.kind else { unreachable!() };
                let p = self.scopes.fresh("p");
                self.line("{");
                self.indent += 1;
                self.line(&format!("let {p}: *mut {} = {}.as_mut_ptr();", e.name(), a.name));
                // Through the pointer only, until the block ends.
                self.scopes.hide(&a.name);
                self.line("unsafe {");
                self.indent += 1;
                for _ in 0..self.rng.range(1, 4) {
                    let i = self.index(Some(n), &a.name);
                    let j = self.index(Some(n), &a.name);
                    let v = self.small(e);
                    let text = match self.rng.below(6) {
                        0 => format!("*{p}.add({i}) = {v};"),
                        1 => format!("{p}.add({i}).write({v});"),
                        2 => format!("core::ptr::swap({p}.add({i}), {p}.add({j}));"),
                        3 => format!("*{p}.wrapping_add({}).wrapping_sub({}).add({i}) = {v};", n + 3, n + 3),
                        4 => format!("*{p}.add({}).sub({i}) = {v};", n - 1),
                        _ if self.has_ck => format!("ck = {};", fold_call("ck", &format!("{p}.add({i}).read()"), e)),
                        _ => format!("*{p} = {v};"),
                    };
                    self.line(&text);
                }
                self.indent -= 1;
                self.line("}");
                self.scopes.unhide(&a.name);
                self.indent -= 1;
                self.line("}");
            }
            2 if arrays.len() >= 2 && !writable.is_empty() => {
                let dst = self.rng.pick(&writable).clone();
                let Kind::Array(e, n) = dst.kind else { unreachable!() };
                let srcs: Vec<_> = arrays
                    .iter()
                    .filter(|v| v.name != dst.name && matches!(v.kind, Kind::Array(t, _) if t == e))
                    .cloned()
                    .collect();
                let Some(src) = srcs.first() else {
                    return self.assign();
                };
                let Kind::Array(_, m) = src.kind else { unreachable!() };
                let k = self.rng.range(1, n.min(m));
                self.line(&format!(
                    "unsafe {{ core::ptr::copy_nonoverlapping({}.as_ptr(), {}.as_mut_ptr(), {k}); }}",
                    src.name, dst.name
                ));
            }
            // A byte of an array's memory, through a `*const u8`: integer and bool arrays only, as
            // the bytes of a NaN differ between CPU and GPU (found by oxide-fuzz 1:418 on the H200).
            _ if self.has_ck && arrays.iter().any(|v| matches!(v.kind, Kind::Array(e, _) if !e.is_float())) => {
                let ints: Vec<_> =
                    arrays.iter().filter(|v| matches!(v.kind, Kind::Array(e, _) if !e.is_float())).cloned().collect();
                let a = self.rng.pick(&ints).clone();
                let Kind::Array(e, n) = a.kind else { unreachable!() };
                let bytes = n * size_of(e);
                let k = atom(&self.small_int());
                self.line(&format!(
                    "ck = fold(ck, unsafe {{ *({}.as_ptr() as *const u8).add(({k} as usize) % {bytes}) }} as u64);",
                    a.name
                ));
            }
            _ => {
                // A pointer to a scalar variable, written and read back.
                let t = self.any_scalar();
                let vars: Vec<_> = self
                    .scopes
                    .vars_of(|k| *k == Kind::Scalar(t))
                    .into_iter()
                    .filter(|v| v.mutable && v.frozen == 0 && !v.name.starts_with('('))
                    .collect();
                let Some(v) = vars.first().cloned() else {
                    return self.assign();
                };
                let p = self.scopes.fresh("p");
                self.scopes.hide(&v.name);
                let e = self.small(t);
                self.scopes.unhide(&v.name);
                self.line(&format!("{{ let {p} = &raw mut {}; unsafe {{ {p}.write({e}); }} }}", v.name));
            }
        }
    }

    pub fn closure_stmt(&mut self) {
        if self.rng.chance(40) {
            return self.fnmut_block();
        }
        let a = self.any_scalar();
        let r = self.any_scalar();
        let p = self.scopes.fresh("p");
        let f = self.scopes.fresh("f");
        let body = self.in_move_closure(|g| {
            g.scopes.push();
            g.scopes.declare(&p, Kind::Scalar(a), false);
            let b = g.expr(r, 2);
            g.scopes.pop();
            b
        });
        self.line(&format!("let {f} = move |{p}: {}| -> {} {{ {body} }};", a.name(), r.name()));
        self.scopes.declare(&f, Kind::Closure(a, r), false);
    }

    /// Runs `f` with the variables a `move` closure must not capture hidden: `&mut` slices and
    /// `(*r)` reborrows (capturing them would move the reference out).
    pub fn in_move_closure<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> T {
        let moved: Vec<String> = self
            .scopes
            .visible()
            .filter(|v| matches!(v.kind, Kind::SliceMut(_)) || v.name.starts_with('('))
            .map(|v| v.name.clone())
            .collect();
        for n in &moved {
            self.scopes.hide(n);
        }
        let out = f(self);
        for n in &moved {
            self.scopes.unhide(n);
        }
        out
    }

    /// `{ let mut acc = …; let mut f = |p| { acc = …; }; f(..); f(..); ck = fold(ck, acc); }`
    fn fnmut_block(&mut self) {
        let t = self.any_scalar();
        let a = self.any_scalar();
        let acc = self.scopes.fresh("acc");
        let f = self.scopes.fresh("f");
        let p = self.scopes.fresh("p");
        let init = self.small(t);
        self.line("{");
        self.indent += 1;
        self.line(&format!("let mut {acc}: {} = {init};", t.name()));
        self.scopes.push();
        self.scopes.declare(&acc, Kind::Scalar(t), true);
        self.scopes.push();
        self.scopes.declare(&p, Kind::Scalar(a), false);
        let body = self.expr(t, 2);
        self.scopes.pop();
        self.line(&format!("let mut {f} = |{p}: {}| {{ {acc} = {body}; }};", a.name()));
        // While `f` lives it holds `acc` mutably and everything it reads shared.
        self.scopes.hide(&acc);
        let frozen = self.scopes.freeze_all();
        for _ in 0..self.rng.range(1, 3) {
            let arg = self.small(a);
            self.line(&format!("{f}({arg});"));
        }
        for n in &frozen {
            self.scopes.unfreeze(n);
        }
        self.scopes.unhide(&acc);
        if self.has_ck {
            self.fold_stmt(&acc, t);
        }
        self.scopes.pop();
        self.indent -= 1;
        self.line("}");
    }

    /// `let fp: fn(A) -> R = if c { |p| … } else { helper };` (non-capturing closures coerce).
    pub fn fn_ptr_let(&mut self) {
        let a = self.any_scalar();
        let r = self.any_scalar();
        let helpers: Vec<String> = self
            .items
            .fns
            .iter()
            .filter(|f| f.ret == super::scope::Ret::Scalar(r) && f.params == [super::scope::Param::Value(a)])
            .map(|f| f.name.clone())
            .collect();
        let mut arm = || {
            if !helpers.is_empty() && self.rng.chance(40) {
                return self.rng.pick(&helpers).clone();
            }
            // A non-capturing closure sees only its parameter.
            let p = self.scopes.fresh("p");
            let saved = std::mem::take(&mut self.scopes);
            let had_input = std::mem::replace(&mut self.has_input, false);
            self.scopes = Scopes::with_next(saved.next_id());
            self.scopes.push();
            self.scopes.declare(&p, Kind::Scalar(a), false);
            let body = self.expr(r, 2);
            let next = self.scopes.next_id();
            self.has_input = had_input;
            self.scopes = saved;
            self.scopes.set_next(next);
            format!("|{p}: {}| -> {} {{ {body} }}", a.name(), r.name())
        };
        let x = arm();
        let y = arm();
        let c = self.bool_expr(1);
        let fp = self.scopes.fresh("fp");
        self.line(&format!("let {fp}: fn({}) -> {} = if {c} {{ {x} }} else {{ {y} }};", a.name(), r.name()));
        self.scopes.declare(&fp, Kind::FnPtr(a, r), false);
    }
}
