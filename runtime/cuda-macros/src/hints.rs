//! Code generation hints: `#[fast_math]` on a function, and loop unrolling — `#[unroll]` /
//! `#[unroll(N)]` on loops inside `#[kernel]` and `#[device]` functions, or `unroll!(…)`.
//!
//! `#[fast_math]` becomes the tool attribute `oxide::fast_math`: the backend compiles that
//! function and everything it calls with approximate division, square root and transcendentals.
//! The loop hints put a call of
//! `cuda_device::intrinsics::loop_unroll::<N>()` (0: fully) first in the loop's body; the backend
//! turns it into `llvm.loop` unroll metadata (`codegen-driver/src/lower/loop_hints.rs`).
//! Attributes on expressions are not stable Rust, which is why the enclosing function's macro
//! removes them before the compiler sees them.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::parse::{Parse, ParseStream};
use syn::visit_mut::VisitMut;
use syn::{Attribute, Expr, ItemFn, LitInt, Token};

/// The unroll count an `#[unroll]` / `#[unroll(N)]` attribute asks for; `None` for other attributes.
fn hint(attr: &Attribute) -> Option<syn::Result<u32>> {
    if !attr.path().is_ident("unroll") {
        return None;
    }
    Some(match &attr.meta {
        syn::Meta::Path(_) => Ok(0),
        syn::Meta::List(list) => count(list.parse_args::<LitInt>()),
        syn::Meta::NameValue(nv) => Err(syn::Error::new_spanned(nv, "write #[unroll] or #[unroll(N)]")),
    })
}

fn count(lit: syn::Result<LitInt>) -> syn::Result<u32> {
    let lit = lit?;
    match lit.base10_parse::<u32>()? {
        0 => Err(syn::Error::new(lit.span(), "an unroll count is at least 1 (#[unroll] unrolls fully)")),
        n if n > 1024 => Err(syn::Error::new(lit.span(), "an unroll count is at most 1024")),
        n => Ok(n),
    }
}

fn marker(n: u32) -> syn::Stmt {
    let n = proc_macro2::Literal::u32_unsuffixed(n);
    syn::parse_quote!(::cuda_device::intrinsics::loop_unroll::<#n>();)
}

/// Puts the marker first in the body of `expr` when it is a loop; an error otherwise.
fn mark(expr: &mut Expr, n: u32, span: Span) -> syn::Result<()> {
    let body = match expr {
        Expr::ForLoop(l) => &mut l.body,
        Expr::While(l) => &mut l.body,
        Expr::Loop(l) => &mut l.body,
        _ => return Err(syn::Error::new(span, "#[unroll] applies to `for`, `while` and `loop`")),
    };
    body.stmts.insert(0, marker(n));
    Ok(())
}

/// Replaces `#[unroll]` attributes on loops in `f` by markers; the first error, if any.
pub fn rewrite_loops(f: &mut ItemFn) -> syn::Result<()> {
    struct Rewriter(Option<syn::Error>);
    impl VisitMut for Rewriter {
        fn visit_expr_mut(&mut self, expr: &mut Expr) {
            syn::visit_mut::visit_expr_mut(self, expr);
            let attrs = match expr {
                Expr::ForLoop(l) => &mut l.attrs,
                Expr::While(l) => &mut l.attrs,
                Expr::Loop(l) => &mut l.attrs,
                _ => return,
            };
            let Some(pos) = attrs.iter().position(|a| hint(a).is_some()) else { return };
            let attr = attrs.remove(pos);
            let span = syn::spanned::Spanned::span(&attr);
            let result = hint(&attr).expect("an unroll attribute").and_then(|n| mark(expr, n, span));
            if let Err(e) = result {
                self.0.get_or_insert(e);
            }
        }
    }
    let mut r = Rewriter(None);
    r.visit_block_mut(&mut f.block);
    r.0.map_or(Ok(()), Err)
}

/// `#[fast_math]` on a function (kernel or helper): takes no arguments.
pub fn expand_fast_math(attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    if !attr.is_empty() {
        return Err(syn::Error::new(syn::spanned::Spanned::span(&attr), "#[fast_math] takes no arguments"));
    }
    let f: ItemFn = syn::parse2(item)?;
    let tool = crate::attrs::tool_attr(oxide_contract::attrs::FAST_MATH, None);
    Ok(quote!(#tool #f))
}

/// `unroll!([N,] <loop>)`.
struct UnrollArgs {
    count: u32,
    body: Expr,
}

impl Parse for UnrollArgs {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let count = if input.peek(LitInt) {
            let n = count(input.parse::<LitInt>())?;
            input.parse::<Token![,]>()?;
            n
        } else {
            0
        };
        Ok(UnrollArgs { count, body: input.parse()? })
    }
}

/// `unroll!(for … { … })`, `unroll!(N, while … { … })`.
pub fn expand(tokens: TokenStream) -> syn::Result<TokenStream> {
    let UnrollArgs { count, mut body } = syn::parse2(tokens)?;
    let span = syn::spanned::Spanned::span(&body);
    mark(&mut body, count, span)?;
    Ok(quote!(#body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_become_markers() {
        let mut f: ItemFn = syn::parse_quote! {
            fn k() { #[unroll] for i in 0..8 { a(i); } #[unroll(4)] while x { b(); } }
        };
        rewrite_loops(&mut f).unwrap();
        let text = quote!(#f).to_string().replace(' ', "");
        assert!(text.contains("foriin0..8{::cuda_device::intrinsics::loop_unroll::<0>();a(i);}"), "{text}");
        assert!(text.contains("loop_unroll::<4>();b();"), "{text}");
        assert!(!text.contains("#[unroll"), "{text}");
    }

    #[test]
    fn misuse_is_an_error() {
        let mut f: ItemFn = syn::parse_quote! { fn k() { #[unroll(0)] for i in 0..8 {} } };
        assert!(rewrite_loops(&mut f).unwrap_err().to_string().contains("at least 1"));
        assert!(expand(quote!(3, x + 1)).unwrap_err().to_string().contains("applies to"));
        let out = expand(quote!(
            2,
            loop {
                break;
            }
        ))
        .unwrap()
        .to_string()
        .replace(' ', "");
        assert_eq!(out, "loop{::cuda_device::intrinsics::loop_unroll::<2>();break;}");
    }
}
