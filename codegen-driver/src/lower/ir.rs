//! The LLVM IR module we build as text: interned types, values, functions, globals, and the printer.
//!
//! Every `BuilderMethods` call appends one instruction line; nothing here knows about Rust. At the
//! end: LLVM's spellings of rustc_codegen_ssa's atomic orderings and comparison predicates.

use std::collections::HashMap;
use std::fmt::Write;

use rustc_codegen_ssa::common::{IntPredicate, RealPredicate};
use rustc_middle::ty::AtomicOrdering;

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Type(pub u32);

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Value(pub u32);

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct FnSig(pub u32);

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Block {
    pub func: u32,
    pub idx: u32,
}

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum TypeData {
    Void,
    Int(u32),
    Half,
    BFloat,
    Float,
    Double,
    Fp128,
    Ptr(u32),
    Array(Type, u64),
    Vector(Type, u64),
    Struct(Vec<Type>, bool),
}

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct SigData {
    pub params: Vec<Type>,
    pub ret: Type,
    pub variadic: bool,
}

#[derive(Clone, Debug)]
pub enum ValueKind {
    /// An instruction result or parameter (`%name`).
    Local,
    /// A constant; `int` holds its value when it is a plain integer.
    Const {
        int: Option<u128>,
    },
    Global,
    Func(u32),
}

#[derive(Clone, Debug)]
pub struct ValueData {
    pub ty: Type,
    /// The operand's spelling without its type: `%v3`, `@f`, `42`, `{ i32 1, ptr null }`.
    pub text: String,
    pub kind: ValueKind,
}

#[derive(Default, Debug)]
pub struct BlockData {
    pub label: String,
    pub instrs: Vec<String>,
}

#[derive(Debug)]
pub struct FuncData {
    pub name: String,
    pub sig: FnSig,
    pub value: Value,
    /// `internal`, `external`, …: empty means the default (external).
    pub linkage: &'static str,
    pub kernel: bool,
    pub fn_attrs: Vec<String>,
    pub param_attrs: Vec<String>,
    pub ret_attrs: String,
    pub params: Vec<Value>,
    pub allocas: Vec<String>,
    pub blocks: Vec<BlockData>,
}

#[derive(Debug)]
pub struct GlobalData {
    pub name: String,
    pub value: Value,
    /// The type of the initializer (the global's value type).
    pub ty: Type,
    pub init: Option<Value>,
    pub constant: bool,
    pub linkage: &'static str,
    pub align: u64,
    pub addrspace: u32,
    /// The host may change it before a launch (`ConstantMemory`): no folding of its initializer.
    pub externally_initialized: bool,
}

/// An `#[unroll]` marker seen in block `block` of function `func` (`count`: 0 full, 1 none, else
/// the factor); see `loop_hints.rs`.
#[derive(Clone, Copy, Debug)]
pub struct LoopHint {
    pub func: u32,
    pub block: u32,
    pub count: u32,
}

/// The whole module under construction.
#[derive(Default)]
pub struct Module {
    pub loop_hints: Vec<LoopHint>,
    types: Vec<TypeData>,
    type_ids: HashMap<TypeData, Type>,
    sigs: Vec<SigData>,
    sig_ids: HashMap<SigData, FnSig>,
    pub values: Vec<ValueData>,
    pub funcs: Vec<FuncData>,
    pub func_by_name: HashMap<String, u32>,
    pub globals: Vec<GlobalData>,
    pub global_by_name: HashMap<String, u32>,
    next_local: u32,
    next_private: u32,
}

impl Module {
    pub fn ty(&mut self, data: TypeData) -> Type {
        if let Some(&t) = self.type_ids.get(&data) {
            return t;
        }
        let t = Type(self.types.len() as u32);
        self.types.push(data.clone());
        self.type_ids.insert(data, t);
        t
    }

    pub fn type_data(&self, t: Type) -> &TypeData {
        &self.types[t.0 as usize]
    }

    pub fn sig(&mut self, data: SigData) -> FnSig {
        if let Some(&s) = self.sig_ids.get(&data) {
            return s;
        }
        let s = FnSig(self.sigs.len() as u32);
        self.sigs.push(data.clone());
        self.sig_ids.insert(data, s);
        s
    }

    pub fn sig_data(&self, s: FnSig) -> &SigData {
        &self.sigs[s.0 as usize]
    }

    pub fn value(&mut self, ty: Type, text: String, kind: ValueKind) -> Value {
        let v = Value(self.values.len() as u32);
        self.values.push(ValueData { ty, text, kind });
        v
    }

    pub fn value_data(&self, v: Value) -> &ValueData {
        &self.values[v.0 as usize]
    }

    pub fn fresh_local(&mut self) -> String {
        self.next_local += 1;
        format!("%v{}", self.next_local)
    }

    pub fn fresh_private(&mut self, prefix: &str) -> String {
        self.next_private += 1;
        format!("{prefix}.{}", self.next_private)
    }

    pub fn type_str(&self, t: Type) -> String {
        match self.type_data(t) {
            TypeData::Void => "void".into(),
            TypeData::Int(w) => format!("i{w}"),
            TypeData::Half => "half".into(),
            TypeData::BFloat => "bfloat".into(),
            TypeData::Float => "float".into(),
            TypeData::Double => "double".into(),
            TypeData::Fp128 => "fp128".into(),
            TypeData::Ptr(0) => "ptr".into(),
            TypeData::Ptr(a) => format!("ptr addrspace({a})"),
            TypeData::Array(e, n) => format!("[{n} x {}]", self.type_str(*e)),
            TypeData::Vector(e, n) => format!("<{n} x {}>", self.type_str(*e)),
            TypeData::Struct(fields, packed) => {
                let inner: Vec<String> = fields.iter().map(|f| self.type_str(*f)).collect();
                if *packed { format!("<{{ {} }}>", inner.join(", ")) } else { format!("{{ {} }}", inner.join(", ")) }
            }
        }
    }

    /// Suffix of an overloaded intrinsic name for `t` (`i32`, `f64`, `v4f32`, `p0`).
    pub fn mangle_type(&self, t: Type) -> String {
        match self.type_data(t) {
            TypeData::Int(w) => format!("i{w}"),
            TypeData::Half => "f16".into(),
            TypeData::BFloat => "bf16".into(),
            TypeData::Float => "f32".into(),
            TypeData::Double => "f64".into(),
            TypeData::Fp128 => "f128".into(),
            TypeData::Ptr(a) => format!("p{a}"),
            TypeData::Vector(e, n) => format!("v{n}{}", self.mangle_type(*e)),
            other => format!("{other:?}"),
        }
    }

    /// `<type> <operand>` as it appears in an instruction.
    pub fn operand(&self, v: Value) -> String {
        let d = self.value_data(v);
        format!("{} {}", self.type_str(d.ty), d.text)
    }

    pub fn print(&self, triple: &str, datalayout: &str, trailer: &str) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "target datalayout = \"{datalayout}\"");
        let _ = writeln!(out, "target triple = \"{triple}\"\n");
        for g in &self.globals {
            let kind = if g.constant { "constant" } else { "global" };
            let mut space = if g.addrspace == 0 { String::new() } else { format!(" addrspace({})", g.addrspace) };
            if g.externally_initialized {
                space.push_str(" externally_initialized");
            }
            match g.init {
                Some(init) => {
                    let _ = writeln!(
                        out,
                        "@{} = {}{space} {kind} {}, align {}",
                        g.name,
                        linkage_prefix(g.linkage),
                        self.operand(init),
                        g.align
                    );
                }
                None => {
                    let _ = writeln!(
                        out,
                        "@{} = external{space} {kind} {}, align {}",
                        g.name,
                        self.type_str(g.ty),
                        g.align
                    );
                }
            }
        }
        out.push('\n');
        let mut metadata = String::new();
        for (i, f) in self.funcs.iter().enumerate() {
            let latches = self.loop_latches(i as u32, &mut metadata);
            self.print_func(&mut out, f, &latches);
        }
        out.push_str(trailer);
        out.push_str(&metadata);
        out
    }

    /// `(block, metadata id)` for the latches of the loops hinted in function `func`; the
    /// metadata nodes are appended to `metadata`.
    fn loop_latches(&self, func: u32, metadata: &mut String) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for hint in self.loop_hints.iter().filter(|h| h.func == func) {
            let blocks = &self.funcs[func as usize].blocks;
            let latches = super::loop_hints::latches(blocks, hint.block as usize);
            if latches.is_empty() || latches.iter().any(|l| out.iter().any(|(b, _)| b == l)) {
                continue;
            }
            let id = metadata.lines().count();
            let _ = writeln!(metadata, "!{id} = distinct !{{!{id}, !{}}}", id + 1);
            let _ = writeln!(metadata, "!{} = {}", id + 1, super::loop_hints::properties(hint.count));
            out.extend(latches.into_iter().map(|l| (l, id)));
        }
        out
    }

    fn print_func(&self, out: &mut String, f: &FuncData, latches: &[(usize, usize)]) {
        let sig = self.sig_data(f.sig);
        let defined = !f.blocks.is_empty();
        let mut params: Vec<String> = sig
            .params
            .iter()
            .enumerate()
            .map(|(i, &t)| {
                let attrs = f.param_attrs.get(i).map(String::as_str).unwrap_or("");
                let mut s = self.type_str(t);
                if !attrs.is_empty() {
                    s.push(' ');
                    s.push_str(attrs);
                }
                if defined {
                    s.push(' ');
                    s.push_str(&self.value_data(f.params[i]).text);
                }
                s
            })
            .collect();
        if sig.variadic {
            params.push("...".into());
        }
        let cc = if f.kernel { "ptx_kernel " } else { "" };
        let ret_attrs = if f.ret_attrs.is_empty() { String::new() } else { format!("{} ", f.ret_attrs) };
        let attrs = if f.fn_attrs.is_empty() { String::new() } else { format!(" {}", f.fn_attrs.join(" ")) };
        let head = format!("{cc}{ret_attrs}{} @{}({}){attrs}", self.type_str(sig.ret), f.name, params.join(", "));
        if !defined {
            let _ = writeln!(out, "declare {head}\n");
            return;
        }
        let _ = writeln!(out, "define {}{head} {{", linkage_prefix(f.linkage));
        for (i, b) in f.blocks.iter().enumerate() {
            let _ = writeln!(out, "{}:", b.label);
            if i == 0 {
                for a in &f.allocas {
                    let _ = writeln!(out, "  {a}");
                }
            }
            let hinted = latches.iter().find(|(l, _)| *l == i).map(|(_, id)| *id);
            for (k, inst) in b.instrs.iter().enumerate() {
                match hinted {
                    Some(id) if k + 1 == b.instrs.len() && inst.starts_with("br ") => {
                        let _ = writeln!(out, "  {inst}, !llvm.loop !{id}");
                    }
                    _ => {
                        let _ = writeln!(out, "  {inst}");
                    }
                }
            }
            if b.instrs.last().is_none_or(|l| !is_terminator(l)) {
                // codegen_ssa leaves blocks it never filled (e.g. unused cleanup blocks).
                let _ = writeln!(out, "  unreachable");
            }
        }
        let _ = writeln!(out, "}}\n");
    }
}

fn linkage_prefix(linkage: &str) -> String {
    if linkage.is_empty() { String::new() } else { format!("{linkage} ") }
}

fn is_terminator(inst: &str) -> bool {
    let op = inst.split_whitespace().next().unwrap_or("");
    matches!(op, "ret" | "br" | "switch" | "unreachable" | "indirectbr" | "resume")
}

/// An integer literal of `width` bits holding `bits` (truncated), as LLVM parses it (signed
/// decimal; `true`/`false` for `i1`), and the truncated bits.
pub fn int_literal(bits: u128, width: u32) -> (String, u128) {
    let masked = if width >= 128 { bits } else { bits & ((1u128 << width) - 1) };
    let text = if width == 1 {
        (if masked == 1 { "true" } else { "false" }).to_string()
    } else if width >= 128 || masked >> (width - 1) == 0 {
        (masked as i128).to_string()
    } else {
        ((masked as i128) - (1i128 << width)).to_string()
    };
    (text, masked)
}

/// A float literal from IEEE bits in LLVM's hexadecimal spelling (`float` constants are written
/// as the `double` of the same value, which LLVM requires to be exact).
pub fn float_literal(ty: &TypeData, bits: u128) -> String {
    match ty {
        TypeData::Half => format!("0xH{:04X}", bits as u16),
        TypeData::BFloat => format!("0xR{:04X}", bits as u16),
        TypeData::Float => {
            let f = f32::from_bits(bits as u32);
            let wide = if f.is_nan() {
                // Widen by hand: a conversion could quieten a signalling NaN's payload.
                let b = bits as u32 as u64;
                ((b >> 31) << 63) | (0x7ff << 52) | ((b & 0x7f_ffff) << 29)
            } else {
                (f as f64).to_bits()
            };
            format!("0x{wide:016X}")
        }
        TypeData::Double => format!("0x{:016X}", bits as u64),
        _ => format!("0xL{:016X}{:016X}", bits as u64, (bits >> 64) as u64),
    }
}

/// LLVM's spelling of a string constant: `c"..."` with non-printables escaped.
pub fn c_string(bytes: &[u8]) -> String {
    let mut s = String::from("c\"");
    for &b in bytes {
        if b.is_ascii_graphic() && b != b'"' && b != b'\\' || b == b' ' {
            s.push(b as char);
        } else {
            let _ = write!(s, "\\{b:02X}");
        }
    }
    s.push('"');
    s
}

// --- LLVM's spellings of rustc_codegen_ssa's orderings and predicates ---------------------------

pub fn ordering(o: AtomicOrdering) -> &'static str {
    match o {
        AtomicOrdering::Relaxed => "monotonic",
        AtomicOrdering::Release => "release",
        AtomicOrdering::Acquire => "acquire",
        AtomicOrdering::AcqRel => "acq_rel",
        AtomicOrdering::SeqCst => "seq_cst",
    }
}

pub fn int_predicate(p: IntPredicate) -> &'static str {
    use IntPredicate::*;
    match p {
        IntEQ => "eq",
        IntNE => "ne",
        IntUGT => "ugt",
        IntUGE => "uge",
        IntULT => "ult",
        IntULE => "ule",
        IntSGT => "sgt",
        IntSGE => "sge",
        IntSLT => "slt",
        IntSLE => "sle",
    }
}

pub fn real_predicate(p: RealPredicate) -> &'static str {
    use RealPredicate::*;
    match p {
        RealPredicateFalse => "false",
        RealOEQ => "oeq",
        RealOGT => "ogt",
        RealOGE => "oge",
        RealOLT => "olt",
        RealOLE => "ole",
        RealONE => "one",
        RealORD => "ord",
        RealUNO => "uno",
        RealUEQ => "ueq",
        RealUGT => "ugt",
        RealUGE => "uge",
        RealULT => "ult",
        RealULE => "ule",
        RealUNE => "une",
        RealPredicateTrue => "true",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_are_interned_and_spelled() {
        let mut m = Module::default();
        let i32t = m.ty(TypeData::Int(32));
        assert_eq!(m.ty(TypeData::Int(32)), i32t);
        let p = m.ty(TypeData::Ptr(0));
        let s = m.ty(TypeData::Struct(vec![i32t, p], false));
        assert_eq!(m.type_str(s), "{ i32, ptr }");
        let a = m.ty(TypeData::Array(i32t, 4));
        assert_eq!(m.type_str(a), "[4 x i32]");
        let v = m.ty(TypeData::Vector(m.type_ids[&TypeData::Int(32)], 4));
        assert_eq!(m.mangle_type(v), "v4i32");
        let shared = m.ty(TypeData::Ptr(3));
        assert_eq!(m.type_str(shared), "ptr addrspace(3)");
    }

    #[test]
    fn integer_literals_are_signed_decimal() {
        assert_eq!(int_literal(1, 1), ("true".into(), 1));
        assert_eq!(int_literal(0xff, 8), ("-1".into(), 0xff));
        assert_eq!(int_literal(0x17f, 8), ("127".into(), 0x7f));
        assert_eq!(int_literal(u64::MAX as u128, 64).0, "-1");
        assert_eq!(int_literal(1u128 << 127, 128).0, i128::MIN.to_string());
        assert_eq!(int_literal(42, 32).0, "42");
    }

    #[test]
    fn float_literals_are_exact_hex() {
        assert_eq!(float_literal(&TypeData::Double, 1.5f64.to_bits() as u128), "0x3FF8000000000000");
        // f32 0.1 is written as the double of the same value.
        assert_eq!(
            float_literal(&TypeData::Float, 0.1f32.to_bits() as u128),
            format!("0x{:016X}", (0.1f32 as f64).to_bits())
        );
        assert_eq!(float_literal(&TypeData::Half, 0x3C00), "0xH3C00");
        assert_eq!(float_literal(&TypeData::Float, 0x7f80_0001), "0x7FF0000020000000");
    }

    #[test]
    fn c_strings_escape() {
        assert_eq!(c_string(b"a\"b\n\0"), "c\"a\\22b\\0A\\00\"");
    }

    #[test]
    fn unterminated_blocks_get_unreachable() {
        let mut m = Module::default();
        let void = m.ty(TypeData::Void);
        let sig = m.sig(SigData { params: vec![], ret: void, variadic: false });
        let fv = m.value(void, "@f".into(), ValueKind::Func(0));
        m.funcs.push(FuncData {
            name: "f".into(),
            sig,
            value: fv,
            linkage: "internal",
            kernel: false,
            fn_attrs: vec![],
            param_attrs: vec![],
            ret_attrs: String::new(),
            params: vec![],
            allocas: vec![],
            blocks: vec![
                BlockData { label: "start".into(), instrs: vec!["ret void".into()] },
                BlockData { label: "cleanup".into(), instrs: vec![] },
            ],
        });
        let text = m.print("nvptx64-nvidia-cuda", "e", "");
        assert!(text.contains("define internal void @f() {\nstart:\n  ret void\ncleanup:\n  unreachable\n}"));
    }
}
