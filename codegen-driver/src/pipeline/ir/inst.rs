//! Instructions: the text as `opt` printed it, and the operation read from it.
//!
//! An [`Inst`] keeps its line(s) exactly, so an untouched instruction prints back byte for byte;
//! its [`Op`] is always what that text says (parsed from it, or the text rendered from it). The
//! operations the passes reason about are modelled with typed operands; any other keeps its
//! text only (`Op::Other`), and its uses are read from its tokens.

use std::fmt::Write;

use super::lex::{self, Kind};
use super::parse;
use super::types::{I1, Type, Value};

/// Wrap and exactness flags of integer operations and casts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flags {
    pub nuw: bool,
    pub nsw: bool,
    pub exact: bool,
    pub disjoint: bool,
    pub nneg: bool,
}

impl Flags {
    pub const NONE: Flags = Flags { nuw: false, nsw: false, exact: false, disjoint: false, nneg: false };
    pub const NUW: Flags = Flags { nuw: true, ..Flags::NONE };
    pub const NUW_NSW: Flags = Flags { nuw: true, nsw: true, ..Flags::NONE };
    pub const NNEG: Flags = Flags { nneg: true, ..Flags::NONE };

    fn render(self, out: &mut String) {
        for (on, word) in [
            (self.disjoint, "disjoint"),
            (self.nneg, "nneg"),
            (self.exact, "exact"),
            (self.nuw, "nuw"),
            (self.nsw, "nsw"),
        ] {
            if on {
                out.push(' ');
                out.push_str(word);
            }
        }
    }
}

macro_rules! named {
    ($(#[$doc:meta])* $name:ident { $($variant:ident = $text:literal),* $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $name { $($variant),* }
        impl $name {
            pub fn from_name(name: &str) -> Option<Self> {
                match name { $($text => Some(Self::$variant),)* _ => None }
            }
            pub fn name(self) -> &'static str {
                match self { $(Self::$variant => $text),* }
            }
        }
    };
}

named!(
    /// Integer binary operations.
    BinOp { Add = "add", Sub = "sub", Mul = "mul", UDiv = "udiv", SDiv = "sdiv", URem = "urem", SRem = "srem",
        Shl = "shl", LShr = "lshr", AShr = "ashr", And = "and", Or = "or", Xor = "xor" }
);

named!(
    /// Casts.
    CastOp { ZExt = "zext", SExt = "sext", Trunc = "trunc", BitCast = "bitcast", PtrToInt = "ptrtoint",
        IntToPtr = "inttoptr", AddrSpaceCast = "addrspacecast", UIToFP = "uitofp", SIToFP = "sitofp",
        FPToUI = "fptoui", FPToSI = "fptosi", FPExt = "fpext", FPTrunc = "fptrunc" }
);

named!(
    /// `icmp` predicates.
    Pred { Eq = "eq", Ne = "ne", Ult = "ult", Ule = "ule", Ugt = "ugt", Uge = "uge", Slt = "slt", Sle = "sle",
        Sgt = "sgt", Sge = "sge" }
);

impl Pred {
    pub fn is_signed(self) -> bool {
        matches!(self, Pred::Slt | Pred::Sle | Pred::Sgt | Pred::Sge)
    }

    /// The predicate with its operands swapped (`a < b` is `b > a`).
    pub fn swapped(self) -> Pred {
        match self {
            Pred::Ult => Pred::Ugt,
            Pred::Ule => Pred::Uge,
            Pred::Ugt => Pred::Ult,
            Pred::Uge => Pred::Ule,
            Pred::Slt => Pred::Sgt,
            Pred::Sle => Pred::Sge,
            Pred::Sgt => Pred::Slt,
            Pred::Sge => Pred::Sle,
            p => p,
        }
    }
}

/// What a call calls.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Callee {
    /// `@name` (without `@`).
    Global(String),
    /// `asm [sideeffect …] "code", "constraints"`, as written.
    Asm(String),
    /// A function pointer.
    Local(String),
}

/// A call: `[tail] call <head><ret> <callee>(<args>)<fn_attrs>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    /// `tail`, `musttail`, `notail`.
    pub tail: Option<String>,
    /// Fast-math flags, calling convention and return attributes, as written (each followed by a
    /// space): `fastcc `, `noundef range(i32 0, 1024) `.
    pub head: String,
    pub ret: Type,
    pub callee: Callee,
    pub args: Vec<(Type, Value)>,
    /// Function attributes after the arguments, with their leading space: ` #8`.
    pub fn_attrs: String,
}

impl Call {
    /// The called function's name, for a direct call.
    pub fn name(&self) -> Option<&str> {
        match &self.callee {
            Callee::Global(g) => Some(g),
            _ => None,
        }
    }

    /// A plain call of `name` returning `ret`.
    pub fn new(name: &str, ret: Type, args: Vec<(Type, Value)>) -> Call {
        Call {
            tail: None,
            head: String::new(),
            ret,
            callee: Callee::Global(name.to_string()),
            args,
            fn_attrs: String::new(),
        }
    }
}

/// An instruction's operation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    Bin {
        op: BinOp,
        flags: Flags,
        ty: Type,
        a: Value,
        b: Value,
    },
    Icmp {
        pred: Pred,
        samesign: bool,
        ty: Type,
        a: Value,
        b: Value,
    },
    Cast {
        op: CastOp,
        flags: Flags,
        from: Type,
        a: Value,
        to: Type,
    },
    Select {
        cond: Value,
        ty: Type,
        a: Value,
        b: Value,
    },
    /// `[ value, %label ]` arms.
    Phi {
        ty: Type,
        arms: Vec<(Value, String)>,
    },
    Call(Call),
    Load {
        ty: Type,
        ptr_ty: Type,
        ptr: Value,
        align: Option<u32>,
        volatile: bool,
        atomic: bool,
    },
    Store {
        ty: Type,
        value: Value,
        ptr_ty: Type,
        ptr: Value,
        align: Option<u32>,
        volatile: bool,
        atomic: bool,
    },
    /// `getelementptr <flags><source>, <base>, <indices>` (`flags` as written, each followed by a space).
    Gep {
        flags: String,
        source: Type,
        base_ty: Type,
        base: Value,
        indices: Vec<(Type, Value)>,
    },
    ExtractValue {
        agg_ty: Type,
        agg: Value,
        indices: Vec<u32>,
    },
    Alloca {
        ty: Type,
        align: Option<u32>,
    },
    Br {
        dest: String,
    },
    CondBr {
        cond: Value,
        then: String,
        els: String,
    },
    Switch {
        ty: Type,
        value: Value,
        default: String,
        cases: Vec<(Value, String)>,
    },
    Ret {
        value: Option<(Type, Value)>,
    },
    Unreachable,
    /// `#dbg_value(…)` and the other debug records: they name values without using them.
    DebugRecord,
    /// A blank line or a comment inside a block.
    Blank,
    /// Anything else, kept as its text.
    Other {
        opcode: String,
    },
}

impl Op {
    /// The type of the result.
    pub fn result_type(&self) -> Option<Type> {
        Some(match self {
            Op::Bin { ty, .. } | Op::Select { ty, .. } | Op::Phi { ty, .. } | Op::Load { ty, .. } => ty.clone(),
            Op::Icmp { ty, .. } => match ty {
                Type::Vector(n, _) => Type::Vector(*n, Box::new(I1)),
                _ => I1,
            },
            Op::Cast { to, .. } => to.clone(),
            Op::Call(c) => c.ret.clone(),
            Op::Gep { base_ty, .. } => base_ty.clone(),
            Op::ExtractValue { agg_ty, indices, .. } => {
                let mut ty = agg_ty;
                for &i in indices {
                    ty = match ty {
                        Type::Struct(fields) => fields.get(i as usize)?,
                        Type::Array(_, t) => t,
                        _ => return None,
                    };
                }
                ty.clone()
            }
            Op::Alloca { .. } => Type::Ptr(0),
            _ => return None,
        })
    }

    pub fn is_terminator(&self) -> bool {
        match self {
            Op::Br { .. } | Op::CondBr { .. } | Op::Switch { .. } | Op::Ret { .. } | Op::Unreachable => true,
            Op::Other { opcode } => matches!(opcode.as_str(), "indirectbr" | "callbr" | "invoke" | "resume"),
            _ => false,
        }
    }

    /// The address of a plain access: a `load` or `store` that is neither atomic nor volatile.
    pub fn plain_access_address(&self) -> Option<&Value> {
        match self {
            Op::Load { ptr, volatile: false, atomic: false, .. }
            | Op::Store { ptr, volatile: false, atomic: false, .. } => Some(ptr),
            _ => None,
        }
    }

    /// The text after `%name = ` (or the whole instruction when it has no result) for the
    /// modelled operations; `None` for `Other`, `DebugRecord` and `Blank`, which only exist as text.
    pub fn render(&self) -> Option<String> {
        let mut s = String::new();
        match self {
            Op::Bin { op, flags, ty, a, b } => {
                s.push_str(op.name());
                flags.render(&mut s);
                let _ = write!(s, " {ty} {a}, {b}");
            }
            Op::Icmp { pred, samesign, ty, a, b } => {
                let sign = if *samesign { "samesign " } else { "" };
                let _ = write!(s, "icmp {sign}{} {ty} {a}, {b}", pred.name());
            }
            Op::Cast { op, flags, from, a, to } => {
                s.push_str(op.name());
                flags.render(&mut s);
                let _ = write!(s, " {from} {a} to {to}");
            }
            Op::Select { cond, ty, a, b } => {
                let _ = write!(s, "select i1 {cond}, {ty} {a}, {ty} {b}");
            }
            Op::Phi { ty, arms } => {
                let _ = write!(s, "phi {ty} ");
                for (i, (v, l)) in arms.iter().enumerate() {
                    let sep = if i > 0 { ", " } else { "" };
                    let _ = write!(s, "{sep}[ {v}, %{l} ]");
                }
            }
            Op::Call(c) => {
                if let Some(t) = &c.tail {
                    let _ = write!(s, "{t} ");
                }
                let _ = write!(s, "call {}{} ", c.head, c.ret);
                match &c.callee {
                    Callee::Global(g) => {
                        let _ = write!(s, "@{g}");
                    }
                    Callee::Asm(a) => s.push_str(a),
                    Callee::Local(l) => {
                        let _ = write!(s, "%{l}");
                    }
                }
                s.push('(');
                for (i, (t, v)) in c.args.iter().enumerate() {
                    let sep = if i > 0 { ", " } else { "" };
                    let _ = write!(s, "{sep}{t} {v}");
                }
                s.push(')');
                s.push_str(&c.fn_attrs);
            }
            Op::Load { ty, ptr_ty, ptr, align, volatile, atomic } => {
                if *atomic {
                    return None;
                }
                let v = if *volatile { "volatile " } else { "" };
                let _ = write!(s, "load {v}{ty}, {ptr_ty} {ptr}");
                if let Some(a) = align {
                    let _ = write!(s, ", align {a}");
                }
            }
            Op::Store { ty, value, ptr_ty, ptr, align, volatile, atomic } => {
                if *atomic {
                    return None;
                }
                let v = if *volatile { "volatile " } else { "" };
                let _ = write!(s, "store {v}{ty} {value}, {ptr_ty} {ptr}");
                if let Some(a) = align {
                    let _ = write!(s, ", align {a}");
                }
            }
            Op::Gep { flags, source, base_ty, base, indices } => {
                let _ = write!(s, "getelementptr {flags}{source}, {base_ty} {base}");
                for (t, v) in indices {
                    let _ = write!(s, ", {t} {v}");
                }
            }
            Op::ExtractValue { agg_ty, agg, indices } => {
                let _ = write!(s, "extractvalue {agg_ty} {agg}");
                for i in indices {
                    let _ = write!(s, ", {i}");
                }
            }
            Op::Alloca { ty, align } => {
                let _ = write!(s, "alloca {ty}");
                if let Some(a) = align {
                    let _ = write!(s, ", align {a}");
                }
            }
            Op::Br { dest } => {
                let _ = write!(s, "br label %{dest}");
            }
            Op::CondBr { cond, then, els } => {
                let _ = write!(s, "br i1 {cond}, label %{then}, label %{els}");
            }
            Op::Switch { ty, value, default, cases } => {
                let _ = write!(s, "switch {ty} {value}, label %{default} [");
                for (v, l) in cases {
                    let _ = write!(s, "\n    {ty} {v}, label %{l}");
                }
                s.push_str("\n  ]");
            }
            Op::Ret { value: None } => s.push_str("ret void"),
            Op::Ret { value: Some((t, v)) } => {
                let _ = write!(s, "ret {t} {v}");
            }
            Op::Unreachable => s.push_str("unreachable"),
            Op::DebugRecord | Op::Blank | Op::Other { .. } => return None,
        }
        Some(s)
    }
}

/// One instruction (or a blank line or comment between instructions).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inst {
    /// The line(s) as printed, indentation included (a `switch` spans several lines).
    text: String,
    /// The result's name without `%`.
    result: Option<String>,
    op: Op,
    /// Where the metadata attachments (`, !dbg !7`) start in `text`.
    attachments: usize,
}

impl Inst {
    /// Reads one instruction; anything not modelled is `Op::Other` with its text.
    pub fn parse(text: &str) -> Inst {
        let code = text.trim();
        if code.is_empty() || code.starts_with(';') {
            return Inst { text: text.to_string(), result: None, op: Op::Blank, attachments: text.len() };
        }
        let toks = parse::lex(text);
        let (result, body_start) = match toks.as_slice() {
            [name, eq, ..] if name.kind == Kind::Local && eq.is_punct('=') => (Some(name.text.to_string()), 2),
            _ => (None, 0),
        };
        let end = body_start + parse::attachments_start(&toks[body_start..]);
        let attachments = toks.get(end).map_or(text.trim_end().len(), |t| t.start);
        let op = parse::op(&toks[body_start..end], text);
        Inst { text: text.to_string(), result, op, attachments }
    }

    /// A new instruction with `op` (a modelled operation) and the attachments `meta` (`, !dbg !7`
    /// or empty), indented as `opt` prints.
    pub fn new(result: Option<&str>, op: Op, meta: &str) -> Inst {
        let body = op.render().expect("a modelled operation");
        let text = match result {
            Some(r) => format!("  %{r} = {body}"),
            None => format!("  {body}"),
        };
        let attachments = text.len();
        Inst { text: format!("{text}{meta}"), result: result.map(str::to_string), op, attachments }
    }

    /// `%result = op` without attachments.
    pub fn assign(result: &str, op: Op) -> Inst {
        Inst::new(Some(result), op, "")
    }

    /// An instruction without a result and without attachments.
    pub fn effect(op: Op) -> Inst {
        Inst::new(None, op, "")
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn op(&self) -> &Op {
        &self.op
    }

    pub fn result(&self) -> Option<&str> {
        self.result.as_deref()
    }

    /// The metadata attachments as written (`, !dbg !7, !noalias !3`), or empty.
    pub fn attachments(&self) -> &str {
        &self.text[self.attachments..]
    }

    /// This instruction with another operation; the result and the attachments stay.
    pub fn with_op(&self, op: Op) -> Inst {
        Inst::new(self.result(), op, self.attachments())
    }

    /// The attachments as (name, value) pairs: `, !dbg !7, !noalias !3` → `("!dbg", "!7")`, ….
    pub fn attachment_pairs(&self) -> Vec<(&str, &str)> {
        let meta = self.attachments();
        let toks = lex::tokens(meta);
        let mut pairs = Vec::new();
        let mut i = 0;
        while toks.get(i).is_some_and(|t| t.is_punct(',')) {
            let Some(key) = toks.get(i + 1).filter(|t| t.kind == Kind::Meta) else { break };
            // The value runs to the next comma at depth 0.
            let (start, mut j, mut depth) = (i + 2, i + 2, 0i32);
            while let Some(t) = toks.get(j) {
                match t.text {
                    "(" | "{" | "[" | "<" if t.kind == Kind::Punct => depth += 1,
                    ")" | "}" | "]" | ">" if t.kind == Kind::Punct => depth -= 1,
                    "," if t.kind == Kind::Punct && depth == 0 => break,
                    _ => {}
                }
                j += 1;
            }
            let Some(last) = j.checked_sub(1).filter(|&l| l >= start) else { break };
            pairs.push((key.text, &meta[toks[start].start..toks[last].end()]));
            i = j;
        }
        pairs
    }

    /// This instruction with each attachment replaced by what `map` makes of it: a new value
    /// (given the name and the value), or `None` to drop it.
    pub fn map_attachments(&self, mut map: impl FnMut(&str, &str) -> Option<String>) -> Inst {
        let mut meta = String::new();
        for (key, value) in self.attachment_pairs() {
            if let Some(v) = map(key, value) {
                meta.push_str(&format!(", {key} {v}"));
            }
        }
        self.with_attachments(&meta)
    }

    /// This instruction with the attachments `meta`.
    pub fn with_attachments(&self, meta: &str) -> Inst {
        Inst::parse(&format!("{}{meta}", &self.text[..self.attachments]))
    }

    /// This instruction with local names (values and labels) renamed where `rename` says.
    pub fn rename(&self, rename: impl FnMut(&str) -> Option<String>) -> Inst {
        Inst::parse(&lex::rename_locals(&self.text, rename))
    }

    /// This instruction with each use of the local `from` replaced by `to` (the result, labels
    /// and debug records are left alone).
    pub fn replace_use(&self, from: &str, to: &Value) -> Inst {
        if !self.uses().contains(&from) {
            return self.clone();
        }
        let toks = lex::tokens(&self.text);
        let skip_first = self.result.is_some();
        let mut replaced = self.text.clone();
        // From the back, so earlier positions stay valid.
        for (i, t) in toks.iter().enumerate().rev() {
            if t.kind != Kind::Local || t.text != from || (skip_first && i == 0) || t.start >= self.attachments {
                continue;
            }
            if i > 0 && toks[i - 1].is_word("label") {
                continue;
            }
            if matches!(self.op, Op::Phi { .. }) && toks.get(i + 1).is_some_and(|n| n.is_punct(']')) {
                continue;
            }
            replaced.replace_range(t.start..t.end(), &to.to_string());
        }
        Inst::parse(&replaced)
    }

    /// The local values this instruction reads (not the labels it names, and nothing for a debug
    /// record, which describes values without using them).
    pub fn uses(&self) -> Vec<&str> {
        let values: Vec<&Value> = match &self.op {
            Op::Blank | Op::DebugRecord | Op::Unreachable | Op::Br { .. } | Op::Alloca { .. } => Vec::new(),
            Op::Bin { a, b, .. } | Op::Icmp { a, b, .. } => vec![a, b],
            Op::Cast { a, .. } | Op::ExtractValue { agg: a, .. } => vec![a],
            Op::Select { cond, a, b, .. } => vec![cond, a, b],
            Op::Phi { arms, .. } => arms.iter().map(|(v, _)| v).collect(),
            Op::Call(c) => {
                let mut v: Vec<&Value> = c.args.iter().map(|(_, v)| v).collect();
                if let Callee::Local(name) = &c.callee {
                    return std::iter::once(name.as_str()).chain(v.drain(..).filter_map(Value::as_local)).collect();
                }
                v
            }
            Op::Load { ptr, .. } => vec![ptr],
            Op::Store { value, ptr, .. } => vec![value, ptr],
            Op::Gep { base, indices, .. } => std::iter::once(base).chain(indices.iter().map(|(_, v)| v)).collect(),
            Op::CondBr { cond, .. } => vec![cond],
            Op::Switch { value, .. } => vec![value],
            Op::Ret { value } => value.iter().map(|(_, v)| v).collect(),
            Op::Other { .. } => {
                // Every name but those after `label` (and the result's).
                let toks = lex::tokens(&self.text[..self.attachments]);
                let skip = usize::from(self.result.is_some());
                let mut out = Vec::new();
                for (i, t) in toks.iter().enumerate().skip(skip) {
                    if t.kind == Kind::Local && !(i > 0 && toks[i - 1].is_word("label")) {
                        out.push(&self.text[t.start + 1..t.start + 1 + t.text.len()]);
                    }
                }
                return out;
            }
        };
        values.into_iter().filter_map(Value::as_local).collect()
    }

    /// The labels this instruction may branch to.
    pub fn successors(&self) -> Vec<&str> {
        match &self.op {
            Op::Br { dest } => vec![dest],
            Op::CondBr { then, els, .. } => vec![then, els],
            Op::Switch { default, cases, .. } => {
                std::iter::once(default.as_str()).chain(cases.iter().map(|(_, l)| l.as_str())).collect()
            }
            Op::Other { .. } if self.op.is_terminator() => {
                let toks = lex::tokens(&self.text[..self.attachments]);
                let mut out = Vec::new();
                for w in toks.windows(2) {
                    if w[0].is_word("label") && w[1].kind == Kind::Local {
                        let start = w[1].start + 1;
                        out.push(&self.text[start..start + w[1].text.len()]);
                    }
                }
                out
            }
            _ => Vec::new(),
        }
    }

    pub fn is_terminator(&self) -> bool {
        self.op.is_terminator()
    }

    /// A direct call's callee name.
    pub fn callee(&self) -> Option<&str> {
        match &self.op {
            Op::Call(c) => c.name(),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::ir::types::{I32, I64};

    #[test]
    fn the_common_instructions_are_modelled() {
        let i = Inst::parse("  %v82.i = add nuw nsw i64 %v79.i, %v81.i, !dbg !14");
        assert_eq!(i.result(), Some("v82.i"));
        assert_eq!(
            *i.op(),
            Op::Bin {
                op: BinOp::Add,
                flags: Flags::NUW_NSW,
                ty: I64,
                a: Value::local("v79.i"),
                b: Value::local("v81.i")
            }
        );
        assert_eq!(i.attachments(), ", !dbg !14");
        assert_eq!(i.attachment_pairs(), vec![("!dbg", "!14")]);
        assert_eq!(i.uses(), vec!["v79.i", "v81.i"]);
        let call =
            Inst::parse("  %v = tail call noundef range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x(), !dbg !14");
        let Op::Call(c) = call.op() else { panic!("{call:?}") };
        assert_eq!(
            (c.name(), &c.ret, c.head.as_str(), c.tail.as_deref()),
            (Some("llvm.nvvm.read.ptx.sreg.tid.x"), &I32, "noundef range(i32 0, 1024) ", Some("tail"))
        );
        let asm = Inst::parse("  call void asm sideeffect \"@$0 trap;\", \"b\"(i1 %v38.i) #8");
        let Op::Call(c) = asm.op() else { panic!("{asm:?}") };
        assert_eq!(
            (&c.callee, &c.args[..], c.fn_attrs.as_str()),
            (&Callee::Asm("asm sideeffect \"@$0 trap;\", \"b\"".into()), &[(I1, Value::local("v38.i"))][..], " #8")
        );
        let phi = Inst::parse("  %o = phi i1 [ %v38.i, %bb4.15.i ], [ false, %start.0 ]");
        assert_eq!(
            *phi.op(),
            Op::Phi {
                ty: I1,
                arms: vec![
                    (Value::local("v38.i"), "bb4.15.i".into()),
                    (Value::Const("false".into()), "start.0".into())
                ]
            }
        );
        let gep = Inst::parse("  %a = getelementptr inbounds nuw i8, ptr %v2.i, i64 24, !dbg !21");
        assert!(matches!(gep.op(), Op::Gep { flags, source: Type::Int(8), .. } if flags == "inbounds nuw "));
        let store = Inst::parse("  store i32 %v73.i, ptr %v30.i, align 4, !dbg !25, !noalias !10");
        assert!(matches!(store.op(), Op::Store { align: Some(4), .. }));
        assert_eq!(store.uses(), vec!["v73.i", "v30.i"]);
        let br = Inst::parse("  br i1 %c, label %bb2.10.i, label %\"x y\", !dbg !18");
        assert_eq!(br.successors(), vec!["bb2.10.i", "\"x y\""]);
        assert!(matches!(Inst::parse("  #dbg_value(i64 %n, !10, !DIExpression(), !9)").op(), Op::DebugRecord));
        assert!(
            matches!(Inst::parse("  %f = fadd contract float %a, %b").op(), Op::Other { opcode } if opcode == "fadd")
        );
        let switch = Inst::parse("  switch i16 %v, label %d [\n    i16 0, label %a\n  ], !prof !3");
        assert_eq!(switch.successors(), vec!["d", "a"]);
        let pair = Inst::parse("  %m = call { i64, i1 } @llvm.umul.with.overflow.i64(i64 %a, i64 %b)");
        assert_eq!(pair.op().result_type(), Some(Type::Struct(vec![I64, I1])));
        let x = Inst::parse("  %v = extractvalue { i64, i1 } %m, 1");
        assert_eq!(x.op().result_type(), Some(I1));
    }

    #[test]
    fn plain_accesses_have_an_address() {
        let address = |line: &str| Inst::parse(line).op().plain_access_address().cloned();
        assert_eq!(address("  store float %v, ptr addrspace(1) %q, align 4"), Some(Value::local("q")));
        assert_eq!(address("  store ptr %a, ptr %b, align 8, !dbg !3"), Some(Value::local("b")));
        assert_eq!(address("  %x = load ptr, ptr %p.1, align 8"), Some(Value::local("p.1")));
        assert_eq!(address("  store i32 0, ptr @g, align 4"), Some(Value::Global("g".into())));
        assert_eq!(address("  %x = add i32 1, 2"), None);
        assert_eq!(address("  %x = load volatile i32, ptr %p, align 4"), None);
        assert_eq!(address("  store volatile i32 1, ptr %p, align 4"), None);
        assert_eq!(address("  store atomic i32 1, ptr %p release, align 4"), None);
        assert_eq!(address("  %x = load atomic i32, ptr %p acquire, align 4"), None);
    }

    #[test]
    fn built_instructions_render_and_read_back() {
        let ops = [
            Op::Bin {
                op: BinOp::Or,
                flags: Flags { disjoint: true, ..Flags::NONE },
                ty: I64,
                a: Value::local("a"),
                b: Value::int(256, &I64),
            },
            Op::Icmp { pred: Pred::Ult, samesign: true, ty: I64, a: Value::local("a"), b: Value::local("n") },
            Op::Cast { op: CastOp::ZExt, flags: Flags::NNEG, from: I32, a: Value::local("x"), to: I64 },
            Op::Select { cond: Value::local("c"), ty: I64, a: Value::int(u64::MAX, &I64), b: Value::local("v") },
            Op::Call(Call::new("llvm.umin.i64", I64, vec![(I64, Value::local("a")), (I64, Value::local("b"))])),
            Op::Load {
                ty: I32,
                ptr_ty: Type::Ptr(0),
                ptr: Value::local("s"),
                align: Some(4),
                volatile: false,
                atomic: false,
            },
            Op::CondBr { cond: Value::local("c"), then: "a".into(), els: "b".into() },
        ];
        for op in ops {
            let inst = Inst::new(Some("r"), op.clone(), ", !dbg !3");
            assert_eq!(Inst::parse(inst.text()).op(), &op, "{}", inst.text());
            assert_eq!(Inst::parse(inst.text()), inst);
        }
    }

    #[test]
    fn uses_are_replaced_but_not_results_labels_or_strings() {
        let i = Inst::parse("  %a = call i32 asm \"add %a;\", \"=r,r\"(i32 %a), !dbg !3");
        assert_eq!(
            i.replace_use("a", &Value::local("b")).text(),
            "  %a = call i32 asm \"add %a;\", \"=r,r\"(i32 %b), !dbg !3"
        );
        let phi = Inst::parse("  %p = phi i64 [ %x, %x ], [ 0, %y ]");
        assert_eq!(phi.replace_use("x", &Value::Const("7".into())).text(), "  %p = phi i64 [ 7, %x ], [ 0, %y ]");
        let asm =
            Inst::parse("  %b.1 = call i32 asm \"mov.u32 %a, 1;\", \"=r\"(i32 %a, ptr %p, i32 %\"q r\") ; uses %a");
        let defined = ["a", "b.1", "\"q r\""];
        let fast = asm.rename(|n| defined.contains(&n).then(|| crate::pipeline::ir::types::prefixed("oxide.fast.", n)));
        assert_eq!(
            fast.text(),
            "  %oxide.fast.b.1 = call i32 asm \"mov.u32 %a, 1;\", \"=r\"(i32 %oxide.fast.a, ptr %p, i32 %\"oxide.fast.q r\") ; uses %a"
        );
        let store = Inst::parse("  store i64 %n, ptr %a, align 8, !dbg !9, !noalias !{!3}, !llvm.loop !12");
        assert_eq!(store.attachment_pairs(), vec![("!dbg", "!9"), ("!noalias", "!{!3}"), ("!llvm.loop", "!12")]);
        let moved = store.map_attachments(|k, v| match k {
            "!dbg" => Some("!20".to_string()),
            "!llvm.loop" => None,
            _ => Some(v.to_string()),
        });
        assert_eq!(moved.text(), "  store i64 %n, ptr %a, align 8, !dbg !20, !noalias !{!3}");
        let br = Inst::parse("  br i1 %x, label %x, label %y");
        assert_eq!(br.replace_use("x", &Value::bool(false)).text(), "  br i1 false, label %x, label %y");
    }
}
