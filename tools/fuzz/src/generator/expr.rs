//! Scalar expressions: integer arithmetic of every flavour (wrapping, checked, saturating,
//! overflowing, plain on narrowed operands, guarded division), shifts with masked amounts, float
//! arithmetic, casts between all scalars, comparisons, `if` and `match`. Every expression is pure
//! and cannot panic.
use super::scope::Place;
use super::ty::{Int, Scalar};
use super::{Gen, INPUT_LEN};

/// `e` as an operand of a method call or binary operator.
pub fn atom(e: &str) -> String {
    let simple = !e.is_empty()
        && !e.starts_with(['-', '('])
        && e.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        && !e.starts_with(|c: char| c.is_ascii_digit() && e.contains('e'));
    let parenthesised = e.starts_with('(') && e.ends_with(')') && balanced_outer(e);
    if simple || parenthesised { e.to_string() } else { format!("({e})") }
}

/// Whether the first `(` of `e` closes at its last character.
fn balanced_outer(e: &str) -> bool {
    let mut depth = 0i32;
    for (i, c) in e.char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => {
                depth -= 1;
                if depth == 0 && i + 1 != e.len() {
                    return false;
                }
            }
            _ => {}
        }
    }
    depth == 0
}

impl Gen<'_> {
    pub fn expr(&mut self, t: Scalar, depth: u32) -> String {
        match t {
            Scalar::Int(i) => self.int_expr(i, depth),
            Scalar::F32 | Scalar::F64 => self.float_expr(t, depth),
            Scalar::Bool => self.bool_expr(depth),
        }
    }

    /// A small expression: what conditions, indices and arguments are made of.
    pub fn small(&mut self, t: Scalar) -> String {
        let d = self.rng.range(0, 1) as u32;
        self.expr(t, d)
    }

    /// A small expression of some integer type.
    pub fn small_int(&mut self) -> String {
        let t = Scalar::Int(self.any_int());
        self.small(t)
    }

    /// A readable place, variable or literal of type `t`, or a cast from another type.
    pub fn leaf(&mut self, t: Scalar) -> String {
        let mut places = self.scopes.places(t, &self.items, false);
        if self.index_nest >= 2 {
            places.retain(|p| !matches!(p, Place::Index(..)));
        }
        let roll = self.rng.below(100);
        if !places.is_empty() && roll < 66 {
            let p = self.rng.pick(&places).clone();
            return self.place_text(&p);
        }
        if roll < 74
            && let Some(e) = self.compound_read(t)
        {
            return e;
        }
        if roll < 88 {
            let from = self.any_scalar();
            if from != t {
                let mut places = self.scopes.places(from, &self.items, false);
                if self.index_nest >= 2 {
                    places.retain(|p| !matches!(p, Place::Index(..)));
                }
                if !places.is_empty() {
                    let p = self.rng.pick(&places).clone();
                    let src = self.place_text(&p);
                    if let Some(c) = self.cast(&src, from, t) {
                        return c;
                    }
                }
            }
        }
        match t {
            Scalar::Int(i) if self.has_input && self.rng.chance(25) => {
                format!("(input[{}] as {})", self.index(Some(INPUT_LEN), "input"), i.name())
            }
            _ => t.literal(self.rng),
        }
    }

    /// `e` (of type `from`) converted with `as` to `to`, where Rust allows it.
    pub fn cast(&mut self, e: &str, from: Scalar, to: Scalar) -> Option<String> {
        let e = atom(e);
        match (from, to) {
            (a, b) if a == b => Some(e),
            (Scalar::Bool, Scalar::Bool) => Some(e),
            (_, Scalar::Bool) => None,
            (Scalar::Bool, Scalar::Int(i)) => Some(format!("({e} as {})", i.name())),
            (Scalar::Bool, f) => Some(format!("({e} as u8 as {})", f.name())),
            // Without float-to-int casts, a float still reaches an integer through a comparison.
            (f, Scalar::Int(i)) if f.is_float() && !self.feat.on("float-to-int") => {
                Some(format!("({e}.is_finite() as {})", i.name()))
            }
            (_, to) => Some(format!("({e} as {})", to.name())),
        }
    }

    /// The text of place `p`, with an in-bounds index where it has one.
    pub fn place_text(&mut self, p: &Place) -> String {
        match p {
            Place::Var(n) | Place::Field(n) => n.clone(),
            Place::Index(base, len) => {
                let i = self.index(*len, base);
                format!("{base}[{i}]")
            }
        }
    }

    /// An index into an array of `len` elements (masked or reduced), or into the slice `base`.
    pub fn index(&mut self, len: Option<usize>, base: &str) -> String {
        let from = Scalar::Int(self.any_int());
        self.index_nest += 1;
        let e = if self.rng.chance(70) || self.index_nest >= 2 { self.leaf(from) } else { self.expr(from, 1) };
        self.index_nest -= 1;
        let e = atom(&e);
        match len {
            Some(n) if n.is_power_of_two() && self.rng.chance(60) => {
                format!("({e} as usize) & {}", n - 1)
            }
            Some(n) => format!("({e} as usize) % {n}"),
            None => format!("({e} as usize) % {base}.len()"),
        }
    }

    pub fn int_expr(&mut self, t: Int, depth: u32) -> String {
        if depth == 0 || self.rng.chance(20) {
            return self.leaf(Scalar::Int(t));
        }
        let d = depth - 1;
        let n = t.name();
        let bits = t.bits();
        let half = bits / 2;
        let s = Scalar::Int(t);
        let a = atom(&self.int_expr(t, d));
        match self.rng.weighted(&[10, 6, 7, 4, 8, 7, 6, 5, 8, 5, 6, 4, 5, 4]) {
            0 => {
                let op = self.rng.pick(&["add", "sub", "mul"]);
                let b = self.int_expr(t, d);
                format!("{a}.wrapping_{op}({b})")
            }
            1 => {
                let op = self.rng.pick(&["add", "sub", "mul"]);
                let b = self.int_expr(t, d);
                if t.signed() && self.rng.chance(25) {
                    format!("{a}.saturating_{}()", self.rng.pick(&["neg", "abs"]))
                } else {
                    format!("{a}.saturating_{op}({b})")
                }
            }
            2 => {
                let b = self.int_expr(t, d);
                let c = self.leaf(s);
                let divs = if self.feat.on("div") { 6 } else { 3 };
                let op = ["add", "sub", "mul", "div", "rem", "div_euclid"][self.rng.below(divs)];
                match self.rng.below(3) {
                    0 => format!("{a}.checked_{op}({b}).unwrap_or({c})"),
                    1 => format!("(match {a}.checked_{op}({b}) {{ Some(x) => x, None => {c} }})"),
                    _ => {
                        let k = self.small(Scalar::Int(Int::U32));
                        let m = self.rng.pick(&["shl", "shr", "pow"]);
                        format!("{a}.checked_{m}({}).unwrap_or({c})", atom(&k))
                    }
                }
            }
            3 => {
                let op = self.rng.pick(&["add", "sub", "mul"]);
                let b = self.int_expr(t, d);
                let c = self.leaf(s);
                if self.rng.chance(50) {
                    format!(
                        "{{ let (ov_r, ov_f) = {a}.overflowing_{op}({b}); if ov_f {{ ov_r ^ {} }} else {{ ov_r }} }}",
                        atom(&c)
                    )
                } else {
                    format!("({a}.overflowing_{op}({b}).1 as {n})")
                }
            }
            4 => {
                let b = atom(&self.int_expr(t, d));
                match self.rng.below(4) {
                    0 => format!("({a} & {b})"),
                    1 => format!("({a} | {b})"),
                    2 => format!("({a} ^ {b})"),
                    _ => format!("!{a}"),
                }
            }
            5 => {
                let k = atom(&self.small_int());
                match self.rng.below(5) {
                    0 => format!("({a} << ({k} & {}))", bits - 1),
                    1 => format!("({a} >> ({k} & {}))", bits - 1),
                    2 => format!("{a}.wrapping_{}({k} as u32)", self.rng.pick(&["shl", "shr"])),
                    _ => format!("{a}.rotate_{}({k} as u32)", self.rng.pick(&["left", "right"])),
                }
            }
            6 if self.feat.on("div") => {
                let b = self.int_expr(t, d);
                let op = *self.rng.pick(&["/", "%", ".div_euclid", ".rem_euclid"]);
                let apply = |x: &str, y: &str| {
                    if op.starts_with('.') { format!("{x}{op}({y})") } else { format!("{x} {op} {y}") }
                };
                if t.signed() {
                    let body = apply("x", "y");
                    match self.rng.below(3) {
                        0 => format!("{{ let (x, y) = ({a}, {b}); if y == 0 || y == -1 {{ x }} else {{ {body} }} }}"),
                        1 => format!(
                            "{{ let (x, y) = ({a}, {b}); if y == 0 {{ x }} else {{ x.wrapping_{}(y) }} }}",
                            self.rng.pick(&["div", "rem", "div_euclid", "rem_euclid"])
                        ),
                        _ => format!(
                            "({a} {} {})",
                            if op.contains("rem") || op == "%" { "%" } else { "/" },
                            self.rng.range(2, 9)
                        ),
                    }
                } else {
                    match self.rng.below(3) {
                        0 => apply(&a, &format!("{}.max(1)", atom(&b))),
                        1 => apply(&a, &format!("({} | 1)", atom(&b))),
                        _ => format!("{a}.div_ceil({}.max(1))", atom(&b)),
                    }
                }
            }
            7 if self.feat.on("plain-arith") => {
                let b = atom(&self.int_expr(t, d));
                match (t.signed(), self.rng.below(4)) {
                    (_, 0) => format!("(({a} >> 1) + ({b} >> 1))"),
                    (true, 1) => format!("(({a} >> 1) - ({b} >> 1))"),
                    (false, 1) => format!("(({a} | (1{n} << {})) - ({b} >> 1))", bits - 1),
                    (_, 2) => format!("(({a} >> {half}) * ({b} >> {half}))"),
                    (true, _) => format!("(-({a} >> 1))"),
                    (false, _) => format!("(({a} >> 1) + 1)"),
                }
            }
            8 => {
                let k = self.rng.below(if t.signed() { 12 } else { 10 });
                let b = atom(&self.int_expr(t, d));
                match k {
                    0 => format!(
                        "({a}.{}() as {n})",
                        self.rng.pick(&[
                            "count_ones",
                            "count_zeros",
                            "leading_zeros",
                            "trailing_zeros",
                            "leading_ones",
                            "trailing_ones"
                        ])
                    ),
                    1 => format!("{a}.{}()", self.rng.pick(&["swap_bytes", "reverse_bits", "wrapping_neg"])),
                    2 => format!("({a}.abs_diff({b}) as {n})"),
                    3 => format!("{a}.{}({b})", self.rng.pick(&["min", "max"])),
                    4 => format!("{a}.wrapping_pow(({} as u32) & 15)", atom(&self.small_int())),
                    5 => format!("{a}.midpoint({b})"),
                    6 => format!("({a}.checked_ilog{}().unwrap_or(0) as {n})", self.rng.pick(&["2", "10"])),
                    7 => {
                        let lo = t.literal(self.rng);
                        format!("{a}.clamp({lo}.min({b}), {lo}.max({b}))")
                    }
                    8 if !t.signed() => format!("{a}.isqrt()"),
                    8 | 9 if !t.signed() => {
                        format!("{a}.checked_next_power_of_two().unwrap_or({b})")
                    }
                    9 => format!("({a}.unsigned_abs() as {n})"),
                    10 => format!("{a}.{}()", self.rng.pick(&["wrapping_abs", "signum"])),
                    _ => format!("{a}.checked_neg().unwrap_or({b})"),
                }
            }
            9 => {
                let from = self.any_scalar();
                let e = self.expr(from, d);
                self.cast(&e, from, s).unwrap_or(a)
            }
            10 => self.branch(s, d, &a),
            11 => self.compound_read(s).unwrap_or(a),
            12 => self.call_expr(s, d).unwrap_or(a),
            _ => self.library_int(t, d, &a),
        }
    }

    /// Integer code of the library that goes through traits and arrays: `TryFrom`, `Wrapping`,
    /// `Saturating`, byte arrays, `bool::then_some`.
    fn library_int(&mut self, t: Int, d: u32, a: &str) -> String {
        let n = t.name();
        let bytes = t.bits() / 8;
        match self.rng.below(6) {
            0 => {
                let from = self.any_int();
                let e = atom(&self.expr(Scalar::Int(from), d));
                let c = self.leaf(Scalar::Int(t));
                format!("{n}::try_from({e}).unwrap_or({c})")
            }
            1 => {
                let b = self.expr(Scalar::Int(t), d);
                let op = self.rng.pick(&["+", "-", "*", "^", "&", "|"]);
                format!("(core::num::Wrapping({a}) {op} core::num::Wrapping({b})).0")
            }
            2 => {
                let b = self.expr(Scalar::Int(t), d);
                let op = self.rng.pick(&["+", "-"]);
                format!("(core::num::Saturating({a}) {op} core::num::Saturating({b})).0")
            }
            3 => {
                let k = self.rng.below(bytes as usize);
                let end = self.rng.pick(&["le", "be", "ne"]);
                format!("({a}.to_{end}_bytes()[{k}] as {n})")
            }
            4 => format!(
                "{n}::from_{}_bytes({a}.to_{}_bytes())",
                self.rng.pick(&["le", "be"]),
                self.rng.pick(&["le", "be"])
            ),
            _ => {
                let c = self.bool_expr(d);
                let e = self.leaf(Scalar::Int(t));
                format!("({c}).then_some({a}).unwrap_or({e})")
            }
        }
    }

    /// `if` or `match` yielding a `t`; `a` is one of the arms.
    fn branch(&mut self, t: Scalar, d: u32, a: &str) -> String {
        let b = self.expr(t, d);
        if self.rng.chance(50) {
            let c = self.bool_expr(d);
            return format!("(if {c} {{ {a} }} else {{ {b} }})");
        }
        let sel_t = self.any_int();
        let sel = atom(&self.small(Scalar::Int(sel_t)));
        let c = self.expr(t, d);
        let e = self.leaf(t);
        if self.rng.chance(50) {
            format!("(match {sel} & 7 {{ 0 => {a}, 1 | 2 => {b}, 3..=5 => {c}, _ => {e} }})")
        } else if sel_t.signed() {
            format!("(match {sel} {{ ..=-1 => {a}, 0 => {b}, 1..=100 => {c}, _ => {e} }})")
        } else {
            format!("(match {sel} {{ 0 => {a}, 1..=9 => {b}, 10 | 20 | 30 => {c}, _ => {e} }})")
        }
    }

    pub fn float_expr(&mut self, t: Scalar, depth: u32) -> String {
        if depth == 0 || self.rng.chance(20) {
            return self.leaf(t);
        }
        let d = depth - 1;
        let n = t.name();
        let bits = if t == Scalar::F32 { "32" } else { "64" };
        let a = atom(&self.float_expr(t, d));
        match self.rng.weighted(&[16, 6, 8, 5, 7, 5, 4, 4]) {
            0 => {
                let b = atom(&self.float_expr(t, d));
                let op = self.rng.pick(&["+", "-", "*", "/", "+", "-", "*", "%"]);
                format!("({a} {op} {b})")
            }
            1 => {
                let b = self.float_expr(t, d);
                let c = self.float_expr(t, d);
                format!("{a}.mul_add({b}, {c})")
            }
            2 => match self.rng.below(11) {
                // Literal bounds in order: clamp cannot panic.
                9 => {
                    let lo = self.rng.range(0, 8) as f64 - 4.0;
                    let hi = lo + self.rng.range(0, 6) as f64 + 0.5;
                    format!("{a}.clamp({lo:?}, {hi:?})")
                }
                0 => format!("(-{a})"),
                1 => format!("{a}.abs()"),
                2 => format!("{a}.sqrt()"),
                3 => {
                    format!("{a}.{}()", self.rng.pick(&["floor", "ceil", "trunc", "round", "round_ties_even", "fract"]))
                }
                4 => format!("{a}.recip()"),
                5 => format!("{a}.signum()"),
                6 => {
                    // The sign of a NaN differs between CPU and GPU: never copy it.
                    let b = atom(&self.float_expr(t, d));
                    format!("{a}.copysign(if {b}.is_nan() {{ 1.0 }} else {{ {b} }})")
                }
                _ => {
                    let b = self.float_expr(t, d);
                    format!("f{}{bits}({a}, {b})", self.rng.pick(&["min", "max"]))
                }
            },
            3 => {
                let other = if t == Scalar::F32 { Scalar::F64 } else { Scalar::F32 };
                let e = self.float_expr(other, d);
                format!("({} as {n})", atom(&e))
            }
            4 => {
                let from = Scalar::Int(self.any_int());
                let e = self.expr(from, d);
                format!("({} as {n})", atom(&e))
            }
            5 => self.branch(t, d, &a),
            6 => self.compound_read(t).unwrap_or(a),
            _ => self.call_expr(t, d).unwrap_or(a),
        }
    }

    pub fn bool_expr(&mut self, depth: u32) -> String {
        if depth == 0 || self.rng.chance(15) {
            return self.leaf(Scalar::Bool);
        }
        let d = depth - 1;
        match self.rng.weighted(&[14, 6, 4, 3, 3, 3]) {
            0 => {
                let t = self.any_scalar();
                let t = if t == Scalar::Bool { Scalar::Int(self.any_int()) } else { t };
                let a = atom(&self.expr(t, d));
                let b = atom(&self.expr(t, d));
                let op = self.rng.pick(&["<", "<=", ">", ">=", "==", "!="]);
                format!("({a} {op} {b})")
            }
            1 => {
                let a = atom(&self.bool_expr(d));
                let b = atom(&self.bool_expr(d));
                let op = self.rng.pick(&["&&", "||", "^", "&", "|", "=="]);
                format!("({a} {op} {b})")
            }
            2 => format!("!{}", atom(&self.bool_expr(d))),
            3 => {
                let t = if self.feat.on("floats") && self.rng.chance(60) {
                    *self.rng.pick(&[Scalar::F32, Scalar::F64])
                } else {
                    Scalar::Int(self.any_int())
                };
                let a = atom(&self.expr(t, d));
                match t {
                    Scalar::Int(i) if !i.signed() => format!("{a}.is_power_of_two()"),
                    Scalar::Int(_) => {
                        format!("{a}.is_{}()", self.rng.pick(&["positive", "negative"]))
                    }
                    _ => format!("{a}.is_{}()", self.rng.pick(&["nan", "finite", "infinite", "normal", "subnormal"])),
                }
            }
            4 => {
                let i = self.any_int();
                let a = atom(&self.expr(Scalar::Int(i), d));
                let b = self.expr(Scalar::Int(i), d);
                format!("{a}.checked_{}({b}).is_none()", self.rng.pick(&["add", "sub", "mul"]))
            }
            _ => self.compound_read(Scalar::Bool).unwrap_or_else(|| "false".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::atom;

    #[test]
    fn atoms() {
        assert_eq!(atom("v1"), "v1");
        assert_eq!(atom("v1.f0"), "v1.f0");
        assert_eq!(atom("(a + b)"), "(a + b)");
        assert_eq!(atom("(a) + (b)"), "((a) + (b))");
        assert_eq!(atom("(-3i8)"), "(-3i8)");
        assert_eq!(atom("1e-40f32"), "(1e-40f32)");
        assert_eq!(atom("u8::MAX"), "(u8::MAX)");
        assert_eq!(atom("a[(x as usize) % 3]"), "(a[(x as usize) % 3])");
    }
}
