//! The shrinker's edits on a program's syntax tree: delete an item, delete a statement, replace
//! an expression by one of its sub-expressions, replace a literal by 0 or 1. Edits are numbered in
//! tree order, so "edit k of kind K" names one candidate; most candidates do not type-check and
//! are thrown away cheaply before the expensive check.
use proc_macro2::Span;
use syn::visit::Visit;
use syn::visit_mut::VisitMut;
use syn::{Block, Expr, File, ImplItem, Item, Lit, LitInt, Stmt};

/// Items every program needs, never deleted (`run` is the entry; the fold helpers are cheap).
const KEEP: [&str; 1] = ["run"];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Edit {
    /// Delete the k-th item (top-level or inside an `impl`).
    Item,
    /// Delete the k-th statement of some block.
    Stmt,
    /// Replace the k-th expression with its j-th direct sub-expression.
    Hoist,
    /// Replace the k-th integer or float literal with 0 (j = 0) or 1 (j = 1).
    Literal,
}

/// Counts the sites of one edit kind, or applies the edit at site `target`.
struct Sites {
    kind: Edit,
    count: usize,
    target: usize,
    /// The j of `Hoist`/`Literal`.
    choice: usize,
    applied: bool,
}

impl Sites {
    fn hit(&mut self) -> bool {
        let hit = self.count == self.target && !self.applied;
        self.count += 1;
        hit
    }
}

fn item_name(item: &Item) -> Option<String> {
    match item {
        Item::Fn(f) => Some(f.sig.ident.to_string()),
        _ => None,
    }
}

impl VisitMut for Sites {
    fn visit_file_mut(&mut self, f: &mut File) {
        if self.kind == Edit::Item {
            let mut i = 0;
            while i < f.items.len() {
                let keep = item_name(&f.items[i]).is_some_and(|n| KEEP.contains(&n.as_str()));
                if !keep && self.hit() {
                    f.items.remove(i);
                    self.applied = true;
                    continue;
                }
                i += 1;
            }
        }
        syn::visit_mut::visit_file_mut(self, f);
    }

    fn visit_item_impl_mut(&mut self, imp: &mut syn::ItemImpl) {
        if self.kind == Edit::Item {
            let mut i = 0;
            while i < imp.items.len() {
                if matches!(imp.items[i], ImplItem::Fn(_)) && self.hit() {
                    imp.items.remove(i);
                    self.applied = true;
                    continue;
                }
                i += 1;
            }
        }
        syn::visit_mut::visit_item_impl_mut(self, imp);
    }

    fn visit_block_mut(&mut self, b: &mut Block) {
        if self.kind == Edit::Stmt {
            let mut i = 0;
            while i < b.stmts.len() {
                // The block's value (a tail expression without `;`) stays: removing it changes the type.
                let tail = i + 1 == b.stmts.len() && matches!(b.stmts[i], Stmt::Expr(_, None));
                if !tail && self.hit() {
                    b.stmts.remove(i);
                    self.applied = true;
                    continue;
                }
                i += 1;
            }
        }
        syn::visit_mut::visit_block_mut(self, b);
    }

    fn visit_expr_mut(&mut self, e: &mut Expr) {
        match self.kind {
            Edit::Hoist => {
                let children = direct_children(e);
                if !children.is_empty()
                    && self.hit()
                    && let Some(c) = children.get(self.choice)
                {
                    *e = c.clone();
                    self.applied = true;
                    return;
                }
            }
            Edit::Literal => {
                if let Expr::Lit(l) = e {
                    let replacement = match &l.lit {
                        Lit::Int(i) if !["0", "1"].contains(&i.base10_digits()) => {
                            Some(Lit::Int(LitInt::new(&format!("{}{}", self.choice, i.suffix()), Span::call_site())))
                        }
                        Lit::Float(f) if !["0.0", "1.0"].contains(&f.base10_digits()) && !f.suffix().is_empty() => {
                            Some(Lit::Float(syn::LitFloat::new(
                                &format!("{}.0{}", self.choice, f.suffix()),
                                Span::call_site(),
                            )))
                        }
                        _ => None,
                    };
                    if let Some(r) = replacement
                        && self.hit()
                    {
                        l.lit = r;
                        self.applied = true;
                        return;
                    }
                }
            }
            _ => {}
        }
        syn::visit_mut::visit_expr_mut(self, e);
    }
}

/// The expressions directly inside `e` (not their sub-expressions): what `e` may be replaced by.
fn direct_children(e: &Expr) -> Vec<Expr> {
    struct Children {
        depth: usize,
        out: Vec<Expr>,
    }
    impl<'ast> Visit<'ast> for Children {
        fn visit_expr(&mut self, e: &'ast Expr) {
            if self.depth == 0 {
                self.depth = 1;
                syn::visit::visit_expr(self, e);
                self.depth = 0;
            } else {
                self.out.push(e.clone());
            }
        }
        // Closures' and blocks' statements are the statement edits' business.
        fn visit_block(&mut self, b: &'ast Block) {
            if let Some(Stmt::Expr(tail, None)) = b.stmts.last()
                && b.stmts.len() == 1
            {
                self.out.push(tail.clone());
            }
        }
    }
    let mut c = Children { depth: 0, out: Vec::new() };
    c.visit_expr(e);
    c.out
}

/// How many sites `kind` has in `file`.
pub fn count(file: &File, kind: Edit) -> usize {
    let mut s = Sites { kind, count: 0, target: usize::MAX, choice: 0, applied: false };
    let mut f = file.clone();
    s.visit_file_mut(&mut f);
    s.count
}

/// `file` with edit `kind` applied at site `target` (choice `choice`), or `None` when that site has
/// no such choice.
pub fn apply(file: &File, kind: Edit, target: usize, choice: usize) -> Option<File> {
    let mut s = Sites { kind, count: 0, target, choice, applied: false };
    let mut f = file.clone();
    s.visit_file_mut(&mut f);
    s.applied.then_some(f)
}

/// Source text of `file`, formatted by rustfmt when it is available.
pub fn print(file: &File, header: &str) -> String {
    let raw = format!("{header}{}\n", quote::quote!(#file));
    rustfmt(&raw).unwrap_or(raw)
}

fn rustfmt(text: &str) -> Option<String> {
    use std::io::Write;
    let mut child = std::process::Command::new("rustfmt")
        .args(["--edition", "2024", "--emit", "stdout", "--quiet"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()?;
    child.stdin.take()?.write_all(text.as_bytes()).ok()?;
    let out = child.wait_with_output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> File {
        syn::parse_file(s).unwrap()
    }

    #[test]
    fn statements_are_numbered_and_deleted() {
        let f = parse("pub fn run() -> u64 { let a = 1u64; let b = 2u64; a + b }");
        assert_eq!(count(&f, Edit::Stmt), 2);
        let g = apply(&f, Edit::Stmt, 1, 0).unwrap();
        let text = quote::quote!(#g).to_string();
        assert!(text.contains("let a") && !text.contains("let b"), "{text}");
    }

    #[test]
    fn run_is_never_deleted() {
        let f = parse("fn h() {} pub fn run() {}");
        assert_eq!(count(&f, Edit::Item), 1);
    }

    #[test]
    fn hoisting_replaces_by_a_child() {
        let f = parse("pub fn run() -> u64 { 3u64.wrapping_add(4u64) }");
        let g = apply(&f, Edit::Hoist, 0, 1).unwrap();
        assert_eq!(quote::quote!(#g).to_string().replace(' ', ""), "pubfnrun()->u64{4u64}");
    }

    #[test]
    fn literals_become_zero_or_one() {
        let f = parse("pub fn run() -> u64 { 37u64 }");
        let g = apply(&f, Edit::Literal, 0, 1).unwrap();
        assert!(quote::quote!(#g).to_string().contains("1u64"));
    }
}
