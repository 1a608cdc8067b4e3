//! A module: its function definitions parsed, every other line (globals, declarations,
//! attributes, metadata) kept as it is.

use std::collections::{HashMap, HashSet};
use std::fmt;

use super::function::Function;
use super::lex::{self, Kind};

/// A top-level item.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    Line(String),
    Function(Function),
}

/// An LLVM module as `opt -S` prints it.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Module {
    pub items: Vec<Item>,
}

impl Module {
    /// Reads a module. A definition whose `define` line cannot be read stays lines (no pass
    /// touches it).
    pub fn parse(text: &str) -> Module {
        let mut items = Vec::new();
        let mut lines = text.lines();
        while let Some(line) = lines.next() {
            if !(line.starts_with("define ") && line.trim_end().ends_with('{')) {
                items.push(Item::Line(line.to_string()));
                continue;
            }
            let mut body = Vec::new();
            let mut closed = false;
            for l in lines.by_ref() {
                if l == "}" {
                    closed = true;
                    break;
                }
                body.push(l);
            }
            match Function::parse(line, &body).filter(|_| closed) {
                Some(f) => items.push(Item::Function(f)),
                None => {
                    items.push(Item::Line(line.to_string()));
                    items.extend(body.iter().map(|l| Item::Line(l.to_string())));
                    if closed {
                        items.push(Item::Line("}".to_string()));
                    }
                }
            }
        }
        Module { items }
    }

    pub fn functions(&self) -> impl Iterator<Item = &Function> {
        self.items.iter().filter_map(|i| match i {
            Item::Function(f) => Some(f),
            Item::Line(_) => None,
        })
    }

    pub fn functions_mut(&mut self) -> impl Iterator<Item = &mut Function> {
        self.items.iter_mut().filter_map(|i| match i {
            Item::Function(f) => Some(f),
            Item::Line(_) => None,
        })
    }

    #[cfg(test)]
    pub fn function(&self, name: &str) -> Option<&Function> {
        self.functions().find(|f| f.name == name)
    }

    pub fn lines(&self) -> impl Iterator<Item = &str> {
        self.items.iter().filter_map(|i| match i {
            Item::Line(l) => Some(l.as_str()),
            Item::Function(_) => None,
        })
    }

    /// Whether a function `name` is declared or defined.
    pub fn has_function(&self, name: &str) -> bool {
        self.functions().any(|f| f.name == name)
            || self.lines().filter(|l| l.starts_with("declare ")).any(|l| declared_name(l) == Some(name))
    }

    /// Adds the declaration `decl` (`declare i32 @f(i32)`) at the end unless `@f` exists.
    pub fn declare(&mut self, decl: &str) {
        if let Some(name) = declared_name(decl)
            && !self.has_function(name)
        {
            self.items.push(Item::Line(decl.to_string()));
        }
    }

    /// The metadata nodes `!N = …` by number (the text after ` = `).
    pub fn metadata(&self) -> HashMap<u64, &str> {
        self.lines()
            .filter_map(|l| {
                let (id, rest) = l.strip_prefix('!')?.split_once(" = ")?;
                Some((id.parse().ok()?, rest))
            })
            .collect()
    }

    /// The globals (functions and variables, without `@`) named anywhere outside declarations:
    /// in definitions (their own names included), their bodies, and global initialisers.
    pub fn globals_named<'a>(&'a self) -> HashSet<&'a str> {
        let mut out = HashSet::new();
        let mut add = |text: &'a str| {
            for t in lex::tokens(text) {
                if t.kind == Kind::Global {
                    out.insert(t.text);
                }
            }
        };
        for item in &self.items {
            match item {
                Item::Line(l) if !l.starts_with("declare ") => add(l),
                Item::Line(_) => {}
                Item::Function(f) => {
                    add(f.header());
                    for inst in f.blocks.iter().flat_map(|b| &b.insts) {
                        add(inst.text());
                    }
                }
            }
        }
        out
    }

    /// Replaces the declarations of `names` by definitions whose body traps (as a device panic
    /// does); whether there was one.
    pub fn define_as_trap(&mut self, names: &[&str]) -> bool {
        let mut changed = false;
        for item in &mut self.items {
            let Item::Line(line) = item else { continue };
            let Some(rest) = line.strip_prefix("declare ") else { continue };
            if !declared_name(line).is_some_and(|n| names.contains(&n)) {
                continue;
            }
            // The declaration up to its parameter list's `)`: linkage and attributes after it go.
            let toks = lex::tokens(rest);
            let Some(name_at) = toks.iter().position(|t| t.kind == Kind::Global) else { continue };
            let mut depth = 0;
            let close = toks[name_at + 1..].iter().find(|t| {
                match t.text {
                    "(" if t.kind == Kind::Punct => depth += 1,
                    ")" if t.kind == Kind::Punct => depth -= 1,
                    _ => {}
                }
                depth == 0
            });
            let Some(close) = close else { continue };
            let header = format!("define internal {} {{", &rest[..close.end()]);
            let Some(f) = Function::parse(&header, &["  call void @llvm.trap()", "  unreachable"]) else { continue };
            *item = Item::Function(f);
            changed = true;
        }
        if changed {
            self.declare("declare void @llvm.trap()");
        }
        changed
    }

    /// The number of function definitions.
    pub fn definitions(&self) -> usize {
        self.functions().count()
    }
}

/// The name a `declare … @name(…)` line declares.
pub fn declared_name(line: &str) -> Option<&str> {
    let toks = lex::tokens(line);
    let g = toks.iter().find(|t| t.kind == Kind::Global)?;
    Some(g.text)
}

impl fmt::Display for Module {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        for item in &self.items {
            match item {
                Item::Line(l) => {
                    out.push_str(l);
                    out.push('\n');
                }
                Item::Function(func) => func.print(&mut out),
            }
        }
        f.write_str(&out)
    }
}
