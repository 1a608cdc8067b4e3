//! Functions and blocks: a `define` with typed parameters and the blocks of its body.

use std::collections::{HashMap, HashSet};

use super::inst::{Inst, Op};
use super::lex::{self, Kind};
use super::parse::Cursor;
use super::types::{Type, prefixed};

/// A parameter of a definition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    pub ty: Type,
    /// Without `%`; `None` for an unnamed parameter (numbered implicitly).
    pub name: Option<String>,
}

/// A basic block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    /// Without `%` (quotes kept); `None` for an entry block without a label.
    pub label: Option<String>,
    /// The label line as read (`bb2:    ; preds = %start`), printed while the label is unchanged.
    label_line: Option<String>,
    /// Blank lines and comments before the label.
    pub lead: Vec<String>,
    pub insts: Vec<Inst>,
}

impl Block {
    pub fn new(label: &str) -> Block {
        Block { label: Some(label.to_string()), label_line: None, lead: vec![String::new()], insts: Vec::new() }
    }

    /// The index of the terminator (the last instruction, if it is one).
    pub fn terminator_index(&self) -> Option<usize> {
        let last = self.insts.iter().rposition(|i| !matches!(i.op(), Op::Blank))?;
        self.insts[last].is_terminator().then_some(last)
    }

    pub fn terminator(&self) -> Option<&Inst> {
        self.terminator_index().map(|i| &self.insts[i])
    }

    /// The labels the block branches to.
    pub fn successors(&self) -> Vec<&str> {
        self.terminator().map(Inst::successors).unwrap_or_default()
    }

    /// Where code can go after the block's phis (and the debug records among them).
    pub fn after_phis(&self) -> usize {
        self.insts.iter().take_while(|i| matches!(i.op(), Op::Phi { .. } | Op::DebugRecord)).count()
    }

    /// The block with its label changed (its line is then printed anew).
    pub fn relabel(&mut self, label: Option<String>) {
        if self.label != label {
            self.label = label;
            self.label_line = None;
        }
    }

    fn print(&self, out: &mut String) {
        for l in &self.lead {
            out.push_str(l);
            out.push('\n');
        }
        match (&self.label_line, &self.label) {
            (Some(line), _) => {
                out.push_str(line);
                out.push('\n');
            }
            (None, Some(label)) => {
                out.push_str(label);
                out.push_str(":\n");
            }
            (None, None) => {}
        }
        for i in &self.insts {
            out.push_str(i.text());
            out.push('\n');
        }
    }
}

/// A function definition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Function {
    /// The `define … {` line.
    header: String,
    /// Without `@` (quotes kept).
    pub name: String,
    pub ret: Type,
    pub params: Vec<Param>,
    /// `define ptx_kernel`.
    pub is_kernel: bool,
    /// The attribute groups (`#0`) of the definition.
    pub attr_groups: Vec<u32>,
    /// The `!dbg` subprogram.
    pub subprogram: Option<u64>,
    pub blocks: Vec<Block>,
    /// Blank lines and comments before the closing `}`.
    pub tail: Vec<String>,
}

impl Function {
    /// Reads a definition from its `define … {` line and the lines of its body.
    pub fn parse(header: &str, body: &[&str]) -> Option<Function> {
        let toks = lex::tokens(header);
        let name_at = toks.iter().position(|t| t.kind == Kind::Global)?;
        let name = toks[name_at].text.to_string();
        let is_kernel = toks[..name_at].iter().any(|t| t.is_word("ptx_kernel"));
        let ret = (1..name_at).find_map(|p| {
            let mut c = Cursor::new(&toks, header);
            c.at = p;
            let ty = c.ty()?;
            (c.at == name_at).then_some(ty)
        })?;
        let mut c = Cursor::new(&toks, header);
        c.at = name_at + 1;
        c.punct('(')?;
        let mut params = Vec::new();
        let mut depth = 1;
        let mut current: Vec<usize> = Vec::new();
        while depth > 0 {
            let t = *c.peek()?;
            c.at += 1;
            match t.text {
                "(" if t.kind == Kind::Punct => depth += 1,
                ")" if t.kind == Kind::Punct => depth -= 1,
                _ => {}
            }
            let split = (t.is_punct(',') && depth == 1) || depth == 0;
            if split {
                if !current.is_empty() {
                    params.push(param(&toks[current[0]..=*current.last()?], header)?);
                }
                current.clear();
            } else {
                current.push(c.at - 1);
            }
        }
        let rest = &toks[c.at..];
        let attr_groups = rest.iter().filter_map(|t| t.text.strip_prefix('#')?.parse().ok()).collect();
        let subprogram = rest
            .windows(2)
            .find(|w| w[0].is(Kind::Meta, "!dbg"))
            .and_then(|w| w[1].text.strip_prefix('!')?.parse().ok());
        let mut f = Function {
            header: header.to_string(),
            name,
            ret,
            params,
            is_kernel,
            attr_groups,
            subprogram,
            blocks: Vec::new(),
            tail: Vec::new(),
        };
        f.read_body(body);
        Some(f)
    }

    fn read_body(&mut self, body: &[&str]) {
        let mut blocks = vec![Block { label: None, label_line: None, lead: Vec::new(), insts: Vec::new() }];
        let mut pending: Vec<String> = Vec::new();
        let mut lines = body.iter().peekable();
        while let Some(&line) = lines.next() {
            if line.trim().is_empty() || line.trim_start().starts_with(';') {
                pending.push(line.to_string());
                continue;
            }
            if let Some(label) = block_label(line) {
                let first = blocks.len() == 1 && blocks[0].insts.is_empty() && blocks[0].label.is_none();
                let block = Block {
                    label: Some(label),
                    label_line: Some(line.to_string()),
                    lead: pending.split_off(0),
                    insts: Vec::new(),
                };
                if first {
                    blocks[0] = block;
                } else {
                    blocks.push(block);
                }
                continue;
            }
            let current = blocks.last_mut().expect("a block");
            current.insts.extend(pending.drain(..).map(|l| Inst::parse(&l)));
            // A `switch` runs from `switch … [` to the line that closes it.
            let mut text = line.to_string();
            if line.trim_start().starts_with("switch ") && line.trim_end().ends_with('[') {
                for &more in lines.by_ref() {
                    text.push('\n');
                    text.push_str(more);
                    if more.trim_start().starts_with(']') {
                        break;
                    }
                }
            }
            current.insts.push(Inst::parse(&text));
        }
        self.tail = pending;
        self.blocks = blocks;
    }

    /// The `define … {` line.
    pub fn header(&self) -> &str {
        &self.header
    }

    /// The `define` line for a copy of this function named `name`, with its `!dbg` subprogram
    /// replaced by `subprogram` (dropped for `None`).
    pub fn header_for_copy(&self, name: &str, subprogram: Option<u64>) -> String {
        let renamed = lex::replace_tokens(&self.header, |t| {
            (t.kind == Kind::Global && t.text == self.name).then(|| format!("@{name}"))
        });
        let toks = lex::tokens(&renamed);
        let Some(i) = toks.iter().position(|t| t.is(Kind::Meta, "!dbg")) else { return renamed };
        let Some(id) = toks.get(i + 1) else { return renamed };
        let (start, end) = (toks[i].start, id.end());
        match subprogram {
            Some(s) => format!("{}!dbg !{s}{}", &renamed[..start], &renamed[end..]),
            None => format!("{}{}", renamed[..start].trim_end(), &renamed[end..]),
        }
    }

    /// A copy of this function under another `define` line (`header_for_copy`) and body.
    pub fn with_header(&self, header: String, blocks: Vec<Block>) -> Function {
        let mut f = Function::parse(&header, &[]).expect("a header made from a parsed one");
        f.blocks = blocks;
        f
    }

    /// The block labelled `label`.
    pub fn block_index(&self, label: &str) -> Option<usize> {
        self.blocks.iter().position(|b| b.label.as_deref() == Some(label))
    }

    /// Where each value is defined: name → (block, instruction).
    pub fn defs(&self) -> HashMap<&str, (usize, usize)> {
        let mut defs = HashMap::new();
        for (b, block) in self.blocks.iter().enumerate() {
            for (i, inst) in block.insts.iter().enumerate() {
                if let Some(r) = inst.result() {
                    defs.insert(r, (b, i));
                }
            }
        }
        defs
    }

    /// The parameter named `name`: its index and type.
    pub fn param(&self, name: &str) -> Option<(usize, &Type)> {
        self.params.iter().enumerate().find(|(_, p)| p.name.as_deref() == Some(name)).map(|(i, p)| (i, &p.ty))
    }

    /// The type of every named value: parameters and results.
    pub fn value_types(&self) -> HashMap<String, Type> {
        let mut types: HashMap<String, Type> =
            self.params.iter().filter_map(|p| Some((p.name.clone()?, p.ty.clone()))).collect();
        for inst in self.blocks.iter().flat_map(|b| &b.insts) {
            if let (Some(r), Some(ty)) = (inst.result(), inst.op().result_type()) {
                types.insert(r.to_string(), ty);
            }
        }
        types
    }

    /// Every name in the function (values and labels), to keep fresh names fresh.
    pub fn names(&self) -> HashSet<String> {
        let mut names: HashSet<String> = self.params.iter().filter_map(|p| p.name.clone()).collect();
        for block in &self.blocks {
            names.extend(block.label.clone());
            names.extend(block.insts.iter().filter_map(|i| i.result().map(str::to_string)));
        }
        names
    }

    /// Whether a value or block is numbered (`%7`, `7:`): a label put in front of an unnamed
    /// entry would shift their numbers.
    pub fn has_numbered_names(&self) -> bool {
        self.names().iter().any(|n| super::types::is_numbered(n))
            || self.blocks.iter().flat_map(|b| &b.insts).any(|i| i.uses().iter().any(|u| super::types::is_numbered(u)))
    }

    pub fn print(&self, out: &mut String) {
        out.push_str(&self.header);
        out.push('\n');
        for b in &self.blocks {
            b.print(out);
        }
        for l in &self.tail {
            out.push_str(l);
            out.push('\n');
        }
        out.push_str("}\n");
    }
}

/// One parameter's tokens: its type first, its name last.
fn param(toks: &[lex::Token<'_>], header: &str) -> Option<Param> {
    let mut c = Cursor::new(toks, header);
    let ty = c.ty()?;
    let name = toks.last().filter(|t| t.kind == Kind::Local && toks.len() > 1).map(|t| t.text.to_string());
    Some(Param { ty, name })
}

/// `name` of a `name:` line (quotes kept, as `label %name` spells it).
pub fn block_label(line: &str) -> Option<String> {
    if line.starts_with([' ', ';', '\t']) || line.is_empty() {
        return None;
    }
    let end = match line.strip_prefix('"') {
        Some(quoted) => quoted.find('"')? + 2,
        None => line.find(':')?,
    };
    (line[end..].starts_with(':')).then(|| line[..end].to_string())
}

/// A fresh-name source for one function: names with `prefix` and a counter, never one the
/// function already has.
pub struct Namer {
    taken: HashSet<String>,
    prefix: String,
    n: usize,
}

impl Namer {
    pub fn new(f: &Function, prefix: &str) -> Namer {
        Namer { taken: f.names(), prefix: prefix.to_string(), n: 0 }
    }

    /// A name `<prefix><n>` not yet used (without `%`).
    pub fn fresh(&mut self) -> String {
        loop {
            self.n += 1;
            let name = format!("{}{}", self.prefix, self.n);
            if self.taken.insert(name.clone()) {
                return name;
            }
        }
    }

    /// `<prefix><base>`, or with a counter where that is taken.
    pub fn named(&mut self, base: &str) -> String {
        let name = prefixed(&self.prefix, base);
        if self.taken.insert(name.clone()) {
            return name;
        }
        loop {
            self.n += 1;
            let name = prefixed(&self.prefix, &format!("{base}.{}", self.n));
            if self.taken.insert(name.clone()) {
                return name;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::ir::types::{I32, I64};

    #[test]
    fn headers_give_typed_parameters() {
        let header = "define ptx_kernel void @checked_double(ptr noalias nonnull readonly align 4 captures(none) %p0, i64 %p1, i32 %p4) #0 !dbg !4 {";
        let f = Function::parse(header, &["start:", "  ret void"]).expect("parses");
        assert_eq!(f.name, "checked_double");
        assert!(f.is_kernel);
        assert_eq!(f.ret, Type::Void);
        assert_eq!(
            f.params,
            vec![
                Param { ty: Type::Ptr(0), name: Some("p0".into()) },
                Param { ty: I64, name: Some("p1".into()) },
                Param { ty: I32, name: Some("p4".into()) },
            ]
        );
        assert_eq!((f.attr_groups.as_slice(), f.subprogram), (&[0][..], Some(4)));
        assert_eq!(f.header_for_copy("k2", Some(9)), header.replace("@checked_double", "@k2").replace("!4", "!9"));
        assert_eq!(f.header_for_copy("k2", None), header.replace("@checked_double", "@k2").replace(" !dbg !4", ""));
        let g = Function::parse("define internal noundef range(i32 0, 2) i32 @f(i32 %0) unnamed_addr {", &[])
            .expect("parses");
        assert_eq!((g.ret, g.params[0].name.as_deref()), (I32, Some("0")));
    }
}
