//! Reading types, values and instructions from tokens (`lex.rs`).

use super::inst::{BinOp, Call, Callee, CastOp, Flags, Op, Pred};
use super::lex::{Kind, Token, tokens};
use super::types::{Type, Value};

/// A cursor over the tokens of one instruction.
pub(super) struct Cursor<'t, 'a> {
    pub toks: &'t [Token<'a>],
    pub text: &'a str,
    pub at: usize,
}

impl<'t, 'a> Cursor<'t, 'a> {
    pub fn new(toks: &'t [Token<'a>], text: &'a str) -> Self {
        Cursor { toks, text, at: 0 }
    }

    pub fn peek(&self) -> Option<&Token<'a>> {
        self.toks.get(self.at)
    }

    pub fn peek_at(&self, k: usize) -> Option<&Token<'a>> {
        self.toks.get(self.at + k)
    }

    pub fn done(&self) -> bool {
        self.at >= self.toks.len()
    }

    fn next(&mut self) -> Option<Token<'a>> {
        let t = *self.toks.get(self.at)?;
        self.at += 1;
        Some(t)
    }

    /// Consumes the word `w` if it is next.
    pub fn eat(&mut self, w: &str) -> bool {
        if self.peek().is_some_and(|t| t.is_word(w)) {
            self.at += 1;
            return true;
        }
        false
    }

    pub fn punct(&mut self, c: char) -> Option<()> {
        self.peek().filter(|t| t.is_punct(c))?;
        self.at += 1;
        Some(())
    }

    pub fn word(&mut self) -> Option<&'a str> {
        let t = self.peek().filter(|t| t.kind == Kind::Word)?;
        let text = t.text;
        self.at += 1;
        Some(text)
    }

    /// The source text from token `from` up to (not including) the current token.
    fn slice_from(&self, from: usize) -> &'a str {
        let start = self.toks[from].start;
        let end = self.toks[self.at - 1].end();
        &self.text[start..end]
    }

    /// Skips one balanced group starting at an opening bracket.
    fn skip_group(&mut self) -> Option<()> {
        let mut depth = 0i32;
        loop {
            let t = self.next()?;
            if t.kind == Kind::Punct {
                match t.text {
                    "(" | "[" | "{" | "<" => depth += 1,
                    ")" | "]" | "}" | ">" => depth -= 1,
                    _ => {}
                }
            }
            if depth == 0 {
                return Some(());
            }
        }
    }

    pub fn ty(&mut self) -> Option<Type> {
        let start = self.at;
        let t = *self.peek()?;
        let ty = match t.kind {
            Kind::Word => {
                self.at += 1;
                match t.text {
                    "ptr" => {
                        if self.eat("addrspace") {
                            self.punct('(')?;
                            let n = self.word()?.parse().ok()?;
                            self.punct(')')?;
                            Type::Ptr(n)
                        } else {
                            Type::Ptr(0)
                        }
                    }
                    "half" => Type::Half,
                    "bfloat" => Type::BFloat,
                    "float" => Type::Float,
                    "double" => Type::Double,
                    "void" => Type::Void,
                    "label" => Type::Label,
                    "metadata" => Type::Metadata,
                    w => match w.strip_prefix('i').and_then(|b| b.parse::<u32>().ok()) {
                        Some(bits) => Type::Int(bits),
                        None if matches!(w, "token" | "fp128" | "x86_fp80" | "ppc_fp128" | "x86_amx") => {
                            Type::Other(w.to_string())
                        }
                        None => {
                            self.at = start;
                            return None;
                        }
                    },
                }
            }
            Kind::Local => {
                self.at += 1;
                Type::Other(format!("%{}", t.text))
            }
            Kind::Punct if t.text == "<" => {
                self.at += 1;
                if self.peek()?.is_punct('{') {
                    self.at = start;
                    self.skip_group()?;
                    Type::Other(self.slice_from(start).to_string())
                } else {
                    let (n, elem) = self.sequence('>')?;
                    Type::Vector(n.try_into().ok()?, Box::new(elem))
                }
            }
            Kind::Punct if t.text == "[" => {
                self.at += 1;
                let (n, elem) = self.sequence(']')?;
                Type::Array(n, Box::new(elem))
            }
            Kind::Punct if t.text == "{" => {
                self.at += 1;
                let mut fields = Vec::new();
                if self.punct('}').is_none() {
                    loop {
                        fields.push(self.ty()?);
                        if self.punct(',').is_none() {
                            break;
                        }
                    }
                    self.punct('}')?;
                }
                Type::Struct(fields)
            }
            _ => return None,
        };
        Some(ty)
    }

    /// `N x T` and the closing bracket of a vector or array type.
    fn sequence(&mut self, close: char) -> Option<(u64, Type)> {
        let n = self.word()?.parse().ok()?;
        self.eat("x").then_some(())?;
        let elem = self.ty()?;
        self.punct(close)?;
        Some((n, elem))
    }

    /// A value: a name, a constant word, or a compound constant kept as its text.
    pub fn value(&mut self) -> Option<Value> {
        let start = self.at;
        let t = *self.peek()?;
        match t.kind {
            Kind::Local => {
                self.at += 1;
                Some(Value::Local(t.text.to_string()))
            }
            Kind::Global => {
                self.at += 1;
                Some(Value::Global(t.text.to_string()))
            }
            Kind::Word => {
                self.at += 1;
                // A constant expression (`getelementptr inbounds (…)`, `splat (…)`) or `c"…"`.
                if CONSTANT_EXPRESSIONS.contains(&t.text) {
                    while self.peek().is_some_and(|n| n.kind == Kind::Word) {
                        self.at += 1;
                    }
                }
                if self.peek().is_some_and(|n| n.is_punct('(') || n.kind == Kind::Str) {
                    let n = *self.peek()?;
                    if n.kind == Kind::Str {
                        self.at += 1;
                    } else {
                        self.skip_group()?;
                    }
                    return Some(Value::Const(self.slice_from(start).to_string()));
                }
                Some(Value::Const(t.text.to_string()))
            }
            Kind::Punct if matches!(t.text, "<" | "[" | "{") => {
                self.skip_group()?;
                Some(Value::Const(self.slice_from(start).to_string()))
            }
            Kind::Meta => {
                self.at += 1;
                if t.text == "!" && self.peek().is_some_and(|n| n.is_punct('{')) {
                    self.skip_group()?;
                }
                Some(Value::Const(self.slice_from(start).to_string()))
            }
            _ => None,
        }
    }

    /// `ty value`.
    pub fn typed_value(&mut self) -> Option<(Type, Value)> {
        let ty = self.ty()?;
        Some((ty, self.value()?))
    }

    /// `label %name`.
    pub fn label(&mut self) -> Option<String> {
        self.eat("label").then_some(())?;
        let t = self.next().filter(|t| t.kind == Kind::Local)?;
        Some(t.text.to_string())
    }
}

/// Where an instruction's metadata attachments start: the first `, !name` at bracket depth 0
/// (an index into the tokens), or the end.
pub(super) fn attachments_start(toks: &[Token<'_>]) -> usize {
    let mut depth = 0i32;
    for (i, t) in toks.iter().enumerate() {
        if t.kind == Kind::Punct {
            match t.text {
                "(" | "[" | "{" | "<" => depth += 1,
                ")" | "]" | "}" | ">" => depth -= 1,
                "," if depth == 0 && toks.get(i + 1).is_some_and(|n| n.kind == Kind::Meta) => return i,
                _ => {}
            }
        }
    }
    toks.len()
}

/// Opcodes of constant expressions, which may stand as an argument (`ptr getelementptr (…)`).
const CONSTANT_EXPRESSIONS: [&str; 8] =
    ["getelementptr", "bitcast", "ptrtoint", "inttoptr", "addrspacecast", "trunc", "add", "sub"];

fn flags(c: &mut Cursor<'_, '_>) -> Flags {
    let mut f = Flags::default();
    while let Some(w) = c.peek().filter(|t| t.kind == Kind::Word).map(|t| t.text) {
        match w {
            "nuw" => f.nuw = true,
            "nsw" => f.nsw = true,
            "exact" => f.exact = true,
            "disjoint" => f.disjoint = true,
            "nneg" => f.nneg = true,
            _ => break,
        }
        c.at += 1;
    }
    f
}

/// Fast-math flags, which `select`, `phi` and `call` may carry.
fn skip_fast_math(c: &mut Cursor<'_, '_>) {
    while c.peek().is_some_and(|t| {
        t.kind == Kind::Word
            && matches!(t.text, "fast" | "nnan" | "ninf" | "nsz" | "arcp" | "contract" | "afn" | "reassoc")
    }) {
        c.at += 1;
    }
}

/// The operation of an instruction whose tokens (result and attachments removed) are `toks`;
/// `Op::Other` for anything not modelled.
pub(super) fn op(toks: &[Token<'_>], text: &str) -> Op {
    let mut c = Cursor::new(toks, text);
    parse_op(&mut c).filter(|_| c.done()).unwrap_or_else(|| other(toks))
}

fn other(toks: &[Token<'_>]) -> Op {
    let opcode = toks.first().map_or(String::new(), |t| t.text.to_string());
    if opcode.starts_with("#dbg_") {
        return Op::DebugRecord;
    }
    Op::Other { opcode }
}

fn parse_op(c: &mut Cursor<'_, '_>) -> Option<Op> {
    let opcode = c.word()?;
    if let Some(op) = BinOp::from_name(opcode) {
        let flags = flags(c);
        let (ty, a) = c.typed_value()?;
        c.punct(',')?;
        let b = c.value()?;
        return Some(Op::Bin { op, flags, ty, a, b });
    }
    if let Some(op) = CastOp::from_name(opcode) {
        let flags = flags(c);
        let (from, a) = c.typed_value()?;
        c.eat("to").then_some(())?;
        let to = c.ty()?;
        return Some(Op::Cast { op, flags, from, a, to });
    }
    Some(match opcode {
        "icmp" => {
            let samesign = c.eat("samesign");
            let pred = Pred::from_name(c.word()?)?;
            let (ty, a) = c.typed_value()?;
            c.punct(',')?;
            let b = c.value()?;
            Op::Icmp { pred, samesign, ty, a, b }
        }
        "select" => {
            skip_fast_math(c);
            let (cty, cond) = c.typed_value()?;
            (cty == super::types::I1).then_some(())?;
            c.punct(',')?;
            let (ty, a) = c.typed_value()?;
            c.punct(',')?;
            let (ty2, b) = c.typed_value()?;
            (ty == ty2).then_some(())?;
            Op::Select { cond, ty, a, b }
        }
        "phi" => {
            skip_fast_math(c);
            let ty = c.ty()?;
            let mut arms = Vec::new();
            loop {
                c.punct('[')?;
                let v = c.value()?;
                c.punct(',')?;
                let t = c.next()?;
                (t.kind == Kind::Local).then_some(())?;
                c.punct(']')?;
                arms.push((v, t.text.to_string()));
                if c.punct(',').is_none() {
                    break;
                }
            }
            Op::Phi { ty, arms }
        }
        "tail" | "musttail" | "notail" => {
            c.eat("call").then_some(())?;
            call(c, Some(opcode))?
        }
        "call" => call(c, None)?,
        "load" => {
            let atomic = c.eat("atomic");
            let volatile = c.eat("volatile");
            let ty = c.ty()?;
            c.punct(',')?;
            let (ptr_ty, ptr) = c.typed_value()?;
            let align = align_and_rest(c)?;
            Op::Load { ty, ptr_ty, ptr, align, volatile, atomic }
        }
        "store" => {
            let atomic = c.eat("atomic");
            let volatile = c.eat("volatile");
            let (ty, value) = c.typed_value()?;
            c.punct(',')?;
            let (ptr_ty, ptr) = c.typed_value()?;
            let align = align_and_rest(c)?;
            Op::Store { ty, value, ptr_ty, ptr, align, volatile, atomic }
        }
        "getelementptr" => {
            let mut flags = String::new();
            while let Some(w) = c.peek().filter(|t| t.kind == Kind::Word).map(|t| t.text) {
                if !matches!(w, "inbounds" | "nuw" | "nusw" | "inrange") {
                    break;
                }
                flags.push_str(w);
                flags.push(' ');
                c.at += 1;
            }
            let source = c.ty()?;
            c.punct(',')?;
            let (base_ty, base) = c.typed_value()?;
            let mut indices = Vec::new();
            while c.punct(',').is_some() {
                indices.push(c.typed_value()?);
            }
            Op::Gep { flags, source, base_ty, base, indices }
        }
        "extractvalue" => {
            let (agg_ty, agg) = c.typed_value()?;
            let mut indices = Vec::new();
            while c.punct(',').is_some() {
                indices.push(c.word()?.parse().ok()?);
            }
            Op::ExtractValue { agg_ty, agg, indices }
        }
        "alloca" => {
            let ty = c.ty()?;
            let mut align = None;
            while c.punct(',').is_some() {
                if c.eat("align") {
                    align = Some(c.word()?.parse().ok()?);
                } else {
                    return None;
                }
            }
            Op::Alloca { ty, align }
        }
        "br" => {
            if c.peek()?.is_word("label") {
                Op::Br { dest: c.label()? }
            } else {
                let (ty, cond) = c.typed_value()?;
                (ty == super::types::I1).then_some(())?;
                c.punct(',')?;
                let then = c.label()?;
                c.punct(',')?;
                let els = c.label()?;
                Op::CondBr { cond, then, els }
            }
        }
        "switch" => {
            let (ty, value) = c.typed_value()?;
            c.punct(',')?;
            let default = c.label()?;
            c.punct('[')?;
            let mut cases = Vec::new();
            while c.punct(']').is_none() {
                let (_, v) = c.typed_value()?;
                c.punct(',')?;
                cases.push((v, c.label()?));
            }
            Op::Switch { ty, value, default, cases }
        }
        "ret" => {
            if c.eat("void") {
                Op::Ret { value: None }
            } else {
                Op::Ret { value: Some(c.typed_value()?) }
            }
        }
        "unreachable" => Op::Unreachable,
        _ => return None,
    })
}

/// `, align N` (the only trailing part modelled on a plain load or store).
fn align_and_rest(c: &mut Cursor<'_, '_>) -> Option<Option<u32>> {
    let mut align = None;
    while c.punct(',').is_some() {
        if c.eat("align") {
            align = Some(c.word()?.parse().ok()?);
        } else {
            return None;
        }
    }
    Some(align)
}

/// `call` after the word `call`: `[fmf] [cc] [ret attrs] ty callee(args) [fn attrs]`.
fn call(c: &mut Cursor<'_, '_>, tail: Option<&str>) -> Option<Op> {
    let head_start = c.at;
    // The callee: a global, `asm …`, or a local directly followed by `(`.
    let mut depth = 0i32;
    let mut callee_at = None;
    for i in head_start..c.toks.len() {
        let t = &c.toks[i];
        match t.kind {
            Kind::Punct if matches!(t.text, "(" | "[" | "{" | "<") => depth += 1,
            Kind::Punct if matches!(t.text, ")" | "]" | "}" | ">") => depth -= 1,
            Kind::Global if depth == 0 => {
                callee_at = Some(i);
                break;
            }
            Kind::Word if depth == 0 && t.text == "asm" => {
                callee_at = Some(i);
                break;
            }
            Kind::Local if depth == 0 && c.toks.get(i + 1).is_some_and(|n| n.is_punct('(')) => {
                callee_at = Some(i);
                break;
            }
            _ => {}
        }
    }
    let callee_at = callee_at?;
    // The return type ends right before the callee.
    let ret = (head_start..callee_at).find_map(|p| {
        let mut probe = Cursor { toks: c.toks, text: c.text, at: p };
        let ty = probe.ty()?;
        (probe.at == callee_at).then_some((p, ty))
    });
    let (ret_at, ret) = ret?;
    let head = if head_start < ret_at {
        let start = c.toks[head_start].start;
        c.text[start..c.toks[ret_at].start].to_string()
    } else {
        String::new()
    };
    c.at = callee_at;
    let callee = if c.peek()?.is_word("asm") {
        let start = c.at;
        c.at += 1;
        while c.peek()?.kind == Kind::Word {
            c.at += 1;
        }
        (c.next()?.kind == Kind::Str).then_some(())?;
        c.punct(',')?;
        (c.next()?.kind == Kind::Str).then_some(())?;
        Callee::Asm(c.slice_from(start).to_string())
    } else {
        match c.value()? {
            Value::Global(g) => Callee::Global(g),
            Value::Local(l) => Callee::Local(l),
            Value::Const(_) => return None,
        }
    };
    c.punct('(')?;
    let mut args = Vec::new();
    if c.punct(')').is_none() {
        loop {
            let ty = c.ty()?;
            // Parameter attributes up to the value: words (`noundef`, `nonnull`) and attributes with
            // arguments (`align 4`, `dereferenceable(24)`, `byval(%T)`).
            let value = loop {
                let t = *c.peek()?;
                let starts_value = match t.kind {
                    Kind::Local | Kind::Global | Kind::Meta => true,
                    Kind::Punct => matches!(t.text, "<" | "[" | "{"),
                    Kind::Word => {
                        let next_ends = c.peek_at(1).is_none_or(|n| n.is_punct(',') || n.is_punct(')'));
                        next_ends || t.text == "c" || CONSTANT_EXPRESSIONS.contains(&t.text)
                    }
                    Kind::Str => false,
                };
                if starts_value {
                    break c.value()?;
                }
                c.at += 1;
                if c.peek().is_some_and(|n| n.is_punct('(')) {
                    c.skip_group()?;
                }
            };
            args.push((ty, value));
            if c.punct(',').is_some() {
                continue;
            }
            c.punct(')')?;
            break;
        }
    }
    // From the end of `)`, so the attributes keep their leading space.
    let fn_attrs = if c.done() {
        String::new()
    } else {
        let start = c.toks[c.at - 1].end();
        c.at = c.toks.len();
        c.text[start..c.toks[c.at - 1].end()].to_string()
    };
    Some(Op::Call(Call { tail: tail.map(str::to_string), head, ret, callee, args, fn_attrs }))
}

/// The tokens of `line`, for `Inst::parse`.
pub(super) fn lex(line: &str) -> Vec<Token<'_>> {
    tokens(line)
}
