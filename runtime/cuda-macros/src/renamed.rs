//! Device API forms that changed meaning or safety and cannot keep a `#[deprecated]` alias: in
//! `#[kernel]` and `#[device]` bodies they become an error at the user's code that says what
//! changed and what to write (CHANGELOG.md lists every change).
//!
//! - `thread::index_2d()` returned the (x, y) position (`ThreadIndex2D`); the name now belongs to
//!   NVIDIA's row-major index `index_2d::<ROW_STRIDE>()` (an `Option<ThreadIndex<..>>`), so old
//!   code fails with "no method `x` on `Option`". The position is `thread::index_2d_xy()`.
//! - `ThreadIndex2D::to_linear` / `ThreadIndex3D::to_linear` are `unsafe` (threads passing
//!   different widths could get one element twice through `DisjointSlice::get_mut`); rustc's
//!   E0133 says an `unsafe` block is needed but not why, nor the safe alternatives.
//!
//! Only forms that cannot compile are reported, so correct code never gets an error: a call is
//! recognised by its path (`thread::…` or `cuda_device::thread::…`). The reported expression is
//! rewritten into the new form as well, so that rustc's own, less helpful error on it does not
//! follow ours (the build fails on ours anyway).

use std::collections::HashMap;

use proc_macro2::Span;
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::visit_mut::VisitMut;
use syn::{Expr, ExprCall, ExprMethodCall, ItemFn, Pat, Stmt};

use crate::kernel::Errors;

/// What a call of the thread module returns, for the calls that matter here.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Origin {
    /// `thread::index_2d()` written without `::<ROW_STRIDE>`: the old (x, y) position.
    Old2D,
    /// `thread::index_2d_xy()`: `ThreadIndex2D`.
    Xy,
    /// `thread::index_3d()`: `ThreadIndex3D`.
    ThreeD,
}

/// The methods of the old `index_2d()` value, which `Option` has not.
const POSITION_METHODS: [&str; 3] = ["x", "y", "to_linear"];

const INDEX_2D_MESSAGE: &str = "`thread::index_2d()` is now NVIDIA's row-major index `thread::index_2d::<ROW_STRIDE>()` \
     (an `Option<ThreadIndex>`); the (x, y) position it returned before is `thread::index_2d_xy()`: write \
     `thread::index_2d_xy().x()` (its `to_linear` is `unsafe` now: see `ThreadIndex2D::to_linear`)";

const TO_LINEAR_MESSAGE: &str = "`to_linear` is `unsafe` now: threads that pass different widths could get the same \
     element from `DisjointSlice::get_mut`. Write `unsafe { idx.to_linear(width) }` with a `// SAFETY:` comment saying \
     that every thread passes the same width, or use the safe `thread::index_2d::<WIDTH>()` (width known at compile \
     time) or `thread::index_2d_runtime(&out)` (width at run time)";

/// Reports (and rewrites) the changed forms in `f`'s body.
pub fn check(f: &mut ItemFn) -> syn::Result<()> {
    let mut v = Renamed { unsafe_depth: usize::from(f.sig.unsafety.is_some()), ..Renamed::default() };
    v.visit_block_mut(&mut f.block);
    v.errors.finish()
}

/// The origin of `expr` when it is a call `thread::index_2d()` / `index_2d_xy()` / `index_3d()`
/// (also spelled `cuda_device::thread::…`), with the span of its path.
fn origin_of_call(expr: &Expr) -> Option<(Origin, Span)> {
    let Expr::Call(ExprCall { func, args, .. }) = expr else { return None };
    let Expr::Path(path) = &**func else { return None };
    if !args.is_empty() || path.qself.is_some() {
        return None;
    }
    let segments: Vec<&syn::PathSegment> = path.path.segments.iter().collect();
    let names: Vec<String> = segments.iter().map(|s| s.ident.to_string()).collect();
    let module_ok = match names.as_slice() {
        [m, _] => m == "thread",
        [c, m, _] => c == "cuda_device" && m == "thread",
        _ => false,
    };
    let last = segments.last()?;
    if !module_ok || !last.arguments.is_none() {
        return None;
    }
    let origin = match last.ident.to_string().as_str() {
        "index_2d" => Origin::Old2D,
        "index_2d_xy" => Origin::Xy,
        "index_3d" => Origin::ThreeD,
        _ => return None,
    };
    Some((origin, path.span()))
}

/// Renames the called function of `thread::index_2d()` to `index_2d_xy`.
fn to_xy(expr: &mut Expr) {
    if let Expr::Call(call) = expr
        && let Expr::Path(path) = &mut *call.func
        && let Some(last) = path.path.segments.last_mut()
    {
        last.ident = syn::Ident::new("index_2d_xy", last.ident.span());
    }
}

/// The identifier a `let` binds when its pattern is a plain name (`p`, `mut p`), without a
/// type (a type annotation decides the meaning of `index_2d()` itself).
fn plain_binding(pat: &Pat) -> Option<String> {
    match pat {
        Pat::Ident(p) if p.subpat.is_none() => Some(p.ident.to_string()),
        _ => None,
    }
}

/// Whether `stmts` call one of [`POSITION_METHODS`] on the variable `name`.
fn uses_as_position(stmts: &[Stmt], name: &str) -> bool {
    struct Finder<'a> {
        name: &'a str,
        found: bool,
    }
    impl<'ast> Visit<'ast> for Finder<'_> {
        fn visit_expr_method_call(&mut self, mc: &'ast ExprMethodCall) {
            if POSITION_METHODS.contains(&mc.method.to_string().as_str())
                && let Expr::Path(p) = &*mc.receiver
                && p.path.is_ident(self.name)
            {
                self.found = true;
            }
            syn::visit::visit_expr_method_call(self, mc);
        }
    }
    let mut finder = Finder { name, found: false };
    stmts.iter().for_each(|s| finder.visit_stmt(s));
    finder.found
}

#[derive(Default)]
struct Renamed {
    /// How many `unsafe` blocks (or an `unsafe fn`) the visit is inside.
    unsafe_depth: usize,
    /// Variables bound by `let name = thread::…();`, with what they hold.
    bound: HashMap<String, Origin>,
    errors: Errors,
}

impl Renamed {
    /// What the receiver of a method call holds: a call, or a variable bound to one.
    fn receiver_origin(&self, receiver: &Expr) -> Option<Origin> {
        if let Some((origin, _)) = origin_of_call(receiver) {
            return Some(origin);
        }
        match receiver {
            Expr::Path(p) => p.path.get_ident().and_then(|i| self.bound.get(&i.to_string()).copied()),
            _ => None,
        }
    }

    /// A method call on a changed form: reports it and rewrites it. `true` when it rewrote `expr`.
    fn method_call(&mut self, expr: &mut Expr) -> bool {
        let Expr::MethodCall(mc) = expr else { return false };
        let method = mc.method.to_string();
        if !POSITION_METHODS.contains(&method.as_str()) {
            return false;
        }
        let outside_unsafe = self.unsafe_depth == 0;
        match origin_of_call(&mc.receiver) {
            Some((Origin::Old2D, span)) => {
                self.errors.push(syn::Error::new(span, INDEX_2D_MESSAGE));
                to_xy(&mut mc.receiver);
            }
            _ => {
                let origin = self.receiver_origin(&mc.receiver);
                if method != "to_linear" || !outside_unsafe || !matches!(origin, Some(Origin::Xy | Origin::ThreeD)) {
                    return false;
                }
                self.errors.push(syn::Error::new(mc.method.span(), TO_LINEAR_MESSAGE));
            }
        }
        if method == "to_linear" && outside_unsafe {
            let inner = expr.to_token_stream();
            *expr = syn::parse_quote_spanned!(inner.span()=> unsafe { #inner });
        }
        true
    }
}

impl VisitMut for Renamed {
    fn visit_block_mut(&mut self, block: &mut syn::Block) {
        for i in 0..block.stmts.len() {
            // `let p = thread::index_2d();` used below as a position (`p.x()`): report it at the
            // call and bind `p` to `index_2d_xy()`, so the uses below type-check.
            if let Stmt::Local(local) = &block.stmts[i]
                && let Some(name) = plain_binding(&local.pat)
                && let Some(init) = &local.init
                && let Some((Origin::Old2D, span)) = origin_of_call(&init.expr)
                && uses_as_position(&block.stmts[i + 1..], &name)
            {
                self.errors.push(syn::Error::new(span, INDEX_2D_MESSAGE));
                if let Stmt::Local(local) = &mut block.stmts[i]
                    && let Some(init) = &mut local.init
                {
                    to_xy(&mut init.expr);
                }
            }
            self.visit_stmt_mut(&mut block.stmts[i]);
        }
    }

    fn visit_local_mut(&mut self, local: &mut syn::Local) {
        syn::visit_mut::visit_local_mut(self, local);
        let Some(name) = plain_binding(&local.pat) else { return };
        match local.init.as_ref().and_then(|init| origin_of_call(&init.expr)) {
            Some((origin, _)) => self.bound.insert(name, origin),
            // Shadowed by a binding of something else.
            None => self.bound.remove(&name),
        };
    }

    fn visit_expr_mut(&mut self, expr: &mut Expr) {
        if self.method_call(expr) {
            // Only the receiver's insides and the arguments are left to look at.
            if let Expr::Unsafe(u) = expr {
                self.unsafe_depth += 1;
                syn::visit_mut::visit_block_mut(self, &mut u.block);
                self.unsafe_depth -= 1;
                return;
            }
        }
        if let Expr::Unsafe(u) = expr {
            self.unsafe_depth += 1;
            syn::visit_mut::visit_expr_unsafe_mut(self, u);
            self.unsafe_depth -= 1;
            return;
        }
        syn::visit_mut::visit_expr_mut(self, expr);
    }

    fn visit_item_fn_mut(&mut self, f: &mut ItemFn) {
        // A function nested in the body: its own unsafety and bindings.
        let outer = std::mem::replace(
            self,
            Renamed { unsafe_depth: usize::from(f.sig.unsafety.is_some()), ..Renamed::default() },
        );
        syn::visit_mut::visit_item_fn_mut(self, f);
        let inner = std::mem::replace(self, outer);
        if let Err(e) = inner.errors.finish() {
            self.errors.push(e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The errors for a kernel with `body`, its body after the check, and before.
    fn errors_of(body: &str) -> (Vec<String>, String, String) {
        let source = format!("fn k(mut out: DisjointSlice<f32>, w: usize) {{ {body} }}");
        let mut f: ItemFn = syn::parse_str(&source).unwrap();
        let before = f.block.to_token_stream().to_string();
        let messages = match check(&mut f) {
            Ok(()) => Vec::new(),
            Err(e) => e.into_iter().map(|e| e.to_string()).collect(),
        };
        (messages, f.block.to_token_stream().to_string(), before)
    }

    #[test]
    fn the_old_index_2d_is_an_error_naming_index_2d_xy() {
        let (errors, code, _) = errors_of("let x = thread::index_2d().x();");
        assert_eq!(errors, [INDEX_2D_MESSAGE]);
        assert!(code.contains("thread :: index_2d_xy () . x ()"), "{code}");
        let (errors, code, _) = errors_of("let p = cuda_device::thread::index_2d(); let (x, y) = (p.x(), p.y());");
        assert_eq!(errors.len(), 1, "one error for the binding, not one per use: {errors:?}");
        assert!(code.contains("index_2d_xy ()"), "{code}");
        let (errors, code, _) = errors_of("if let Some(i) = thread::index_2d().to_linear(w) {}");
        assert_eq!(errors, [INDEX_2D_MESSAGE], "one error, covering to_linear's unsafety too");
        assert!(code.contains("unsafe { thread :: index_2d_xy () . to_linear (w) }"), "{code}");
    }

    #[test]
    fn a_safe_to_linear_is_an_error_naming_the_alternatives() {
        let (errors, code, _) = errors_of("let i = thread::index_2d_xy().to_linear(w);");
        assert_eq!(errors, [TO_LINEAR_MESSAGE]);
        assert!(code.contains("unsafe {"), "rewritten, so that E0133 does not follow: {code}");
        let (errors, _, _) = errors_of("let p = thread::index_3d(); let i = p.to_linear(w, 4);");
        assert_eq!(errors, [TO_LINEAR_MESSAGE]);
        // In a closure or a nested block outside `unsafe` as well.
        let (errors, _, _) = errors_of("let f = || { thread::index_2d_xy().to_linear(w) };");
        assert_eq!(errors.len(), 1);
    }

    #[test]
    fn code_that_compiles_is_left_alone() {
        for body in [
            // The new forms.
            "let i = unsafe { thread::index_2d_xy().to_linear(w) };",
            "let p = thread::index_3d(); let i = unsafe { p.to_linear(w, 4) };",
            "let x = thread::index_2d_xy().x();",
            // NVIDIA's index_2d, with the stride written or inferred from its use.
            "if let Some(i) = thread::index_2d::<64>() { let _ = out.get_mut(i); }",
            "let i = thread::index_2d(); if let Some(i) = i { let _ = out.get_mut(i); }",
            // Another `to_linear` or `x` of the user's own.
            "let i = grid.to_linear(w); let x = point.x();",
            // A variable shadowed by something else.
            "let p = thread::index_2d_xy(); let p = Mine; let i = p.to_linear(w);",
        ] {
            let (errors, code, before) = errors_of(body);
            assert!(errors.is_empty(), "{body}: {errors:?}");
            assert_eq!(code, before, "{body} was rewritten");
        }
        // Inside an `unsafe fn`, to_linear needs no block.
        let mut f: ItemFn =
            syn::parse_str("unsafe fn k(w: usize) { let i = thread::index_2d_xy().to_linear(w); }").unwrap();
        assert!(check(&mut f).is_ok());
    }
}
