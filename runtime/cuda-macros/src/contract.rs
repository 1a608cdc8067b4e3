//! `#[launch_contract(..)]`: parsing its arguments, the tool attribute it leaves for `#[kernel]`
//! and the backend, and the host-side pieces `#[cuda_module]` generates from it (the contract
//! marker type, `prepare_<kernel>`, the `requires` checks).

use oxide_contract::attrs;
use oxide_contract::launch_contract::LaunchContract;
use proc_macro2::{Literal, Span, TokenStream, TokenTree};
use quote::quote;
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{BinOp, Expr, Lit, Token};

/// A parsed `#[launch_contract(..)]`.
pub struct ContractArgs {
    pub contract: LaunchContract,
    /// `requires = (a.len() >= n * k, ..)`: checked by the generated launch methods.
    pub requires: Vec<Relation>,
}

/// One `requires` relation.
pub struct Relation {
    pub lhs: Expr,
    pub op: BinOp,
    pub rhs: Expr,
    /// The relation as written, for the error (`input.len() >= n * stride`).
    pub text: String,
}

const USAGE: &str = "#[launch_contract(domain = 1|2|3, coordinates = u32, block = (x, y, z), \
                     dynamic_shared = N | dynamic_shared_range = (min, max), dynamic_shared_alignment = N, \
                     min_compute_capability = (major, minor), requires = (a.len() >= n, ..))]";

impl ContractArgs {
    pub fn parse(tokens: TokenStream, span: Span) -> syn::Result<ContractArgs> {
        let pairs = Punctuated::<syn::MetaNameValue, Token![,]>::parse_terminated.parse2(tokens)?;
        let mut contract = LaunchContract {
            domain: 0,
            u32_coordinates: false,
            block: None,
            dynamic_shared: [0, 0],
            dynamic_shared_alignment: 1,
            min_compute_capability: None,
        };
        let mut requires = Vec::new();
        let mut seen: Vec<String> = Vec::new();
        for pair in pairs {
            let key = pair.path.get_ident().map(|i| i.to_string()).unwrap_or_default();
            if seen.contains(&key) {
                return Err(syn::Error::new(pair.path.span(), format!("`{key}` is given more than once")));
            }
            seen.push(key.clone());
            let value = &pair.value;
            match key.as_str() {
                "domain" => {
                    let d = int(value)?;
                    if !(1..=3).contains(&d) {
                        return Err(syn::Error::new(value.span(), "domain must be 1, 2 or 3"));
                    }
                    contract.domain = d as u8;
                }
                "coordinates" => match value {
                    Expr::Path(p) if p.path.is_ident("u32") => contract.u32_coordinates = true,
                    Expr::Path(p) if p.path.is_ident("usize") || p.path.is_ident("native") => {}
                    _ => return Err(syn::Error::new(value.span(), "coordinates must be `u32` (or `usize`)")),
                },
                "block" => {
                    let dims = ints(value, 1..=3)?;
                    if dims.contains(&0) {
                        return Err(syn::Error::new(value.span(), "block dimensions must be at least 1"));
                    }
                    contract.block = Some([0, 1, 2].map(|i| dims.get(i).copied().unwrap_or(1)));
                }
                "dynamic_shared" => {
                    let n = int(value)?;
                    contract.dynamic_shared = [n, n];
                }
                "dynamic_shared_range" => {
                    let v = ints(value, 2..=2)?;
                    if v[0] > v[1] {
                        return Err(syn::Error::new(
                            value.span(),
                            "dynamic_shared_range is (min, max) with min <= max",
                        ));
                    }
                    contract.dynamic_shared = [v[0], v[1]];
                }
                "dynamic_shared_alignment" => {
                    let a = int(value)?;
                    if !a.is_power_of_two() {
                        return Err(syn::Error::new(value.span(), "dynamic_shared_alignment must be a power of two"));
                    }
                    contract.dynamic_shared_alignment = a;
                }
                "min_compute_capability" => {
                    let v = ints(value, 2..=2)?;
                    contract.min_compute_capability = Some([v[0], v[1]]);
                }
                "requires" => {
                    let items: Vec<&Expr> = match value {
                        Expr::Tuple(t) => t.elems.iter().collect(),
                        Expr::Paren(p) => vec![&*p.expr],
                        other => vec![other],
                    };
                    for item in items {
                        requires.push(Relation::parse(item)?);
                    }
                }
                _ => {
                    return Err(syn::Error::new(
                        pair.path.span(),
                        format!("unknown launch contract argument `{key}`: {USAGE}"),
                    ));
                }
            }
        }
        if contract.domain == 0 {
            return Err(syn::Error::new(span, format!("a launch contract needs `domain = 1|2|3`: {USAGE}")));
        }
        if let Some(block) = contract.block
            && let Some(axis) = (usize::from(contract.domain)..3).find(|&a| block[a] != 1)
        {
            return Err(syn::Error::new(
                span,
                format!("block = {block:?} extends along axis {axis}, outside domain = {}", contract.domain),
            ));
        }
        Ok(ContractArgs { contract, requires })
    }

    /// `#[cfg_attr(cuda_oxide, oxide::launch_contract(..))]`: for the backend (manifest,
    /// `.reqntid`) and for a `#[kernel]` expanding after this attribute.
    pub fn tool_attr(&self) -> TokenStream {
        let args = self.contract.to_attr_args().map(Literal::u32_unsuffixed);
        crate::attrs::tool_attr(attrs::LAUNCH_CONTRACT, Some(quote!(#(#args),*)))
    }
}

impl Relation {
    fn parse(expr: &Expr) -> syn::Result<Relation> {
        let expr = match expr {
            Expr::Paren(p) => &*p.expr,
            e => e,
        };
        match expr {
            Expr::Binary(b)
                if matches!(
                    b.op,
                    BinOp::Ge(_) | BinOp::Gt(_) | BinOp::Le(_) | BinOp::Lt(_) | BinOp::Eq(_) | BinOp::Ne(_)
                ) =>
            {
                operand_ok(&b.left)?;
                operand_ok(&b.right)?;
                Ok(Relation { lhs: (*b.left).clone(), op: b.op, rhs: (*b.right).clone(), text: text(expr) })
            }
            other => Err(syn::Error::new(
                other.span(),
                "a `requires` relation compares two sizes: `a.len() >= n * k` (with >=, >, <=, <, == or !=)",
            )),
        }
    }

    /// The check in a launch method: operands widened to `u64`, arithmetic checked.
    pub fn check(&self, rt: &TokenStream, kernel: &str) -> TokenStream {
        let (lhs, rhs) = (eval(&self.lhs, rt), eval(&self.rhs, rt));
        let op = self.op;
        let text = &self.text;
        quote! {
            #rt::requires::check(#kernel, #text, #lhs, #rhs, |__l: u64, __r: u64| __l #op __r)?;
        }
    }
}

/// Operands: arithmetic (`+ - * /`) of integer literals, parameters and `param.len()`.
fn operand_ok(e: &Expr) -> syn::Result<()> {
    match e {
        Expr::Binary(b) if matches!(b.op, BinOp::Add(_) | BinOp::Sub(_) | BinOp::Mul(_) | BinOp::Div(_)) => {
            operand_ok(&b.left)?;
            operand_ok(&b.right)
        }
        Expr::Paren(p) => operand_ok(&p.expr),
        Expr::Lit(_) | Expr::Path(_) | Expr::MethodCall(_) | Expr::Field(_) => Ok(()),
        other => Err(syn::Error::new(
            other.span(),
            "a `requires` operand is an integer, a parameter, `param.len()`, or + - * / of those",
        )),
    }
}

/// `Option<u64>` of an operand (`None` on overflow or division by zero).
fn eval(e: &Expr, rt: &TokenStream) -> TokenStream {
    match e {
        Expr::Binary(b) => {
            let (l, r) = (eval(&b.left, rt), eval(&b.right, rt));
            let op = match b.op {
                BinOp::Add(_) => quote!(checked_add),
                BinOp::Sub(_) => quote!(checked_sub),
                BinOp::Mul(_) => quote!(checked_mul),
                _ => quote!(checked_div),
            };
            quote!((#l).and_then(|__l: u64| (#r).and_then(|__r: u64| __l.#op(__r))))
        }
        Expr::Paren(p) => eval(&p.expr, rt),
        // An unsuffixed literal would default to `i32`.
        Expr::Lit(l) => quote!(::core::option::Option::Some::<u64>(#l)),
        other => quote!(#rt::requires::widen(#other)),
    }
}

/// The relation's text, spaced the usual way (`input.len() >= n * stride`).
fn text(e: &Expr) -> String {
    match e {
        Expr::Binary(b) => {
            let op = b.op;
            format!("{} {} {}", text(&b.left), quote!(#op).to_string().replace(' ', ""), text(&b.right))
        }
        Expr::Paren(p) => format!("({})", text(&p.expr)),
        Expr::MethodCall(m) => {
            let args: Vec<String> = m.args.iter().map(text).collect();
            format!("{}.{}({})", text(&m.receiver), m.method, args.join(", "))
        }
        Expr::Field(f) => {
            let member = &f.member;
            format!("{}.{}", text(&f.base), quote!(#member))
        }
        other => quote!(#other).to_string().replace(' ', ""),
    }
}

fn int(e: &Expr) -> syn::Result<u32> {
    match e {
        Expr::Lit(l) => match &l.lit {
            Lit::Int(i) => i.base10_parse::<u32>(),
            other => Err(syn::Error::new(other.span(), "expected an integer literal")),
        },
        Expr::Paren(p) => int(&p.expr),
        other => Err(syn::Error::new(other.span(), "expected an integer literal")),
    }
}

fn ints(e: &Expr, count: std::ops::RangeInclusive<usize>) -> syn::Result<Vec<u32>> {
    let values: Vec<u32> = match e {
        Expr::Tuple(t) => t.elems.iter().map(int).collect::<syn::Result<_>>()?,
        other => vec![int(other)?],
    };
    if !count.contains(&values.len()) {
        return Err(syn::Error::new(
            e.span(),
            format!(
                "expected {} integers in parentheses",
                if count.start() == count.end() {
                    format!("{}", count.start())
                } else {
                    format!("{} to {}", count.start(), count.end())
                }
            ),
        ));
    }
    Ok(values)
}

/// The contract of a function from its attributes: an unexpanded `#[launch_contract(..)]`, or the
/// tool attribute an expanded one left.
pub fn find(attrs: &[syn::Attribute]) -> syn::Result<Option<ContractArgs>> {
    for attr in attrs {
        if crate::attrs::Marker::of(attr) == Some(crate::attrs::Marker::LaunchContract) {
            let tokens = match &attr.meta {
                syn::Meta::List(l) => crate::kernel::strip_after_kernel(l.tokens.clone()).0,
                _ => TokenStream::new(),
            };
            return ContractArgs::parse(tokens, attr.span()).map(Some);
        }
        if crate::attrs::is_tool_attr(attr, attrs::LAUNCH_CONTRACT)
            && let Some(args) = tool_args(attr, attrs::LAUNCH_CONTRACT)
            && let Some(contract) = LaunchContract::from_attr_args(&args)
        {
            return Ok(Some(ContractArgs { contract, requires: Vec::new() }));
        }
    }
    Ok(None)
}

/// The integers of `cfg_attr(.., oxide::<name>(a, b, ..))` or of `oxide::<name>(a, b, ..)`.
fn tool_args(attr: &syn::Attribute, name: &str) -> Option<Vec<u32>> {
    let syn::Meta::List(list) = &attr.meta else { return None };
    if !attr.path().is_ident("cfg_attr") {
        return parse_ints(list.tokens.clone());
    }
    let tokens: Vec<TokenTree> = list.tokens.clone().into_iter().collect();
    let at = tokens.iter().position(|t| matches!(t, TokenTree::Ident(i) if i == name))?;
    let Some(TokenTree::Group(g)) = tokens.get(at + 1) else { return None };
    parse_ints(g.stream())
}

/// `1, 2, 3` → `[1, 2, 3]`; `None` when something else is in the list.
fn parse_ints(tokens: TokenStream) -> Option<Vec<u32>> {
    tokens
        .into_iter()
        .filter_map(|t| match t {
            TokenTree::Literal(l) => Some(l.to_string().parse::<u32>().ok()),
            _ => None,
        })
        .collect()
}
