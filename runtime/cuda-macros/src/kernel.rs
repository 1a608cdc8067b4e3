//! `#[kernel]` / `#[device]` / `#[launch_bounds]` / `#[cluster_launch]`: checks and tool-attribute output.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, format_ident, quote};
use syn::spanned::Spanned;
use syn::{FnArg, GenericParam, Item, ItemFn, Pat, ReturnType, Type};

use oxide_contract::abi::{DISJOINT_SLICE_TYPE, LaunchArg};

use crate::attrs::{LaunchBounds, Marker, cluster_tokens, parse_cluster, tool_attr};

/// How a kernel parameter is passed (contract §4), as far as its syntax tells.
pub enum ParamKind {
    /// `&[T]`
    Slice(Type),
    /// `&mut [T]`
    SliceMut(Type),
    /// `DisjointSlice<T>`
    Disjoint(Type),
    /// Anything else: scalars, raw pointers, closures, structs (zero-sized ones are dropped at run time).
    Value,
}

impl ParamKind {
    /// The buffer's element type, for the slice kinds.
    pub fn elem(&self) -> Option<&Type> {
        match self {
            ParamKind::Slice(e) | ParamKind::SliceMut(e) | ParamKind::Disjoint(e) => Some(e),
            ParamKind::Value => None,
        }
    }

    /// What the host passes; the backend checks this against the parameter's type.
    pub fn launch_arg(&self) -> LaunchArg {
        match self {
            ParamKind::Slice(_) => LaunchArg::Buffer,
            ParamKind::SliceMut(_) | ParamKind::Disjoint(_) => LaunchArg::BufferMut,
            ParamKind::Value => LaunchArg::Value,
        }
    }
}

pub struct Param {
    /// The name the launch method gives this argument.
    pub name: syn::Ident,
    pub ty: Type,
    pub kind: ParamKind,
}

/// Combines errors so that one expansion reports all of them.
#[derive(Default)]
pub struct Errors(Option<syn::Error>);

impl Errors {
    pub fn push(&mut self, e: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(e),
            None => self.0 = Some(e),
        }
    }

    pub fn finish(self) -> syn::Result<()> {
        self.0.map_or(Ok(()), Err)
    }
}

/// Checks that `f` can be a kernel and classifies its parameters.
pub fn check_kernel_fn(f: &ItemFn) -> syn::Result<Vec<Param>> {
    let mut errors = Errors::default();
    let sig = &f.sig;
    if let Some(t) = &sig.asyncness {
        errors.push(syn::Error::new(t.span(), "a kernel cannot be `async`"));
    }
    if let Some(abi) = &sig.abi {
        errors.push(syn::Error::new(
            abi.span(),
            "a kernel cannot declare an ABI: write a plain `pub fn`; the backend generates the PTX entry point",
        ));
    }
    if let Some(v) = &sig.variadic {
        errors.push(syn::Error::new(v.span(), "a kernel cannot be variadic"));
    }
    if let ReturnType::Type(_, ty) = &sig.output {
        let unit = matches!(&**ty, Type::Tuple(t) if t.elems.is_empty());
        if !unit {
            errors.push(syn::Error::new(
                ty.span(),
                "a kernel cannot return a value: write results into a `DisjointSlice<T>` or `&mut [T]` parameter",
            ));
        }
    }
    let mut params = Vec::new();
    for (i, input) in sig.inputs.iter().enumerate() {
        let arg = match input {
            FnArg::Receiver(r) => {
                errors.push(syn::Error::new(r.span(), "a kernel cannot take `self`: make it a free function"));
                continue;
            }
            FnArg::Typed(arg) => arg,
        };
        let name = match &*arg.pat {
            Pat::Ident(p) if p.ident != "stream" && p.ident != "config" => p.ident.clone(),
            Pat::Ident(p) => quote::format_ident!("__arg_{}", p.ident),
            _ => quote::format_ident!("__arg{}", i),
        };
        match classify(&arg.ty) {
            Ok(kind) => params.push(Param { name, ty: (*arg.ty).clone(), kind }),
            Err(e) => errors.push(e),
        }
    }
    errors.finish()?;
    Ok(params)
}

fn classify(ty: &Type) -> syn::Result<ParamKind> {
    match ty {
        Type::Reference(r) => match &*r.elem {
            Type::Slice(s) if r.mutability.is_some() => Ok(ParamKind::SliceMut((*s.elem).clone())),
            Type::Slice(s) => Ok(ParamKind::Slice((*s.elem).clone())),
            _ => Err(syn::Error::new(
                ty.span(),
                "a kernel parameter cannot be a reference (host memory is not visible to the GPU): \
                 use `&[T]` / `&mut [T]` for device buffers, or pass the value itself",
            )),
        },
        Type::ImplTrait(_) => Err(syn::Error::new(
            ty.span(),
            "`impl Trait` is not supported in kernel parameters: use a named type parameter, \
             e.g. `fn map<F: Fn(f32) -> f32>(f: F, ..)`, so the launch method can name it",
        )),
        Type::Paren(p) => classify(&p.elem),
        Type::Group(g) => classify(&g.elem),
        Type::Path(p) if p.qself.is_none() => {
            let Some(last) = p.path.segments.last() else { return Ok(ParamKind::Value) };
            if last.ident != DISJOINT_SLICE_TYPE {
                return Ok(ParamKind::Value);
            }
            match &last.arguments {
                syn::PathArguments::AngleBracketed(args) if args.args.len() == 1 => match args.args.first() {
                    Some(syn::GenericArgument::Type(elem)) => Ok(ParamKind::Disjoint(elem.clone())),
                    _ => Err(syn::Error::new(last.span(), "expected `DisjointSlice<T>`")),
                },
                _ => Err(syn::Error::new(last.span(), "expected `DisjointSlice<T>`")),
            }
        }
        _ => Ok(ParamKind::Value),
    }
}

fn parse_fn(item: TokenStream, what: &str) -> syn::Result<ItemFn> {
    match syn::parse2::<Item>(item)? {
        Item::Fn(f) => Ok(f),
        other => Err(syn::Error::new(item_span(&other), format!("{what} can only be applied to a function"))),
    }
}

/// The span of an item's introducing tokens (e.g. `struct Foo`), for errors.
fn item_span(item: &Item) -> Span {
    item.to_token_stream().into_iter().next().map(|t| t.span()).unwrap_or_else(Span::call_site)
}

fn no_args(attr: TokenStream, what: &str) -> syn::Result<()> {
    if attr.is_empty() { Ok(()) } else { Err(syn::Error::new(attr.span(), format!("{what} takes no arguments"))) }
}

/// `#[kernel]` on a function.
pub fn expand_kernel(attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let args = no_args(attr, "#[kernel]");
    let f = parse_fn(item, "#[kernel]")?;
    args?;
    let params = check_kernel_fn(&f)?;
    let mut f = f;
    crate::hints::rewrite_loops(&mut f)?;
    for attr in &mut f.attrs {
        if matches!(Marker::of(attr), Some(Marker::LaunchBounds | Marker::ClusterLaunch))
            && let syn::Meta::List(list) = &mut attr.meta
        {
            let flag = syn::Ident::new(AFTER_KERNEL, Span::call_site());
            list.tokens.extend(quote!(; #flag));
        }
    }
    // The backend checks this classification against the parameters' types (contract §4).
    let launch_args = params.iter().map(|p| format_ident!("{}", p.kind.launch_arg().name()));
    Ok(with_tool_attr_last(f, tool_attr(Marker::Kernel.tool_name(), Some(quote!(#(#launch_args),*)))))
}

/// `#[device]` on a function.
pub fn expand_device(attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let args = no_args(attr, "#[device]");
    let mut f = parse_fn(item, "#[device]")?;
    args?;
    crate::hints::rewrite_loops(&mut f)?;
    if Marker::Kernel.present_in(&f.attrs) {
        return Err(syn::Error::new(f.sig.ident.span(), "a function cannot be both #[kernel] and #[device]"));
    }
    Ok(with_tool_attr_last(f, tool_attr(Marker::Device.tool_name(), None)))
}

/// `#[launch_bounds(..)]` or `#[cluster_launch(..)]` on a kernel.
pub fn expand_kernel_option(marker: Marker, attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let (attr, after_kernel) = strip_after_kernel(attr);
    let span = if attr.is_empty() { Span::call_site() } else { attr.span() };
    let name = format!("#[{}]", marker.tool_name());
    let args = match marker {
        Marker::LaunchBounds => LaunchBounds::parse(attr, span).map(|b| b.tokens()),
        _ => parse_cluster(attr, span).map(cluster_tokens),
    };
    let f = parse_fn(item, &name)?;
    let args = args?;
    if !after_kernel && !Marker::Kernel.present_in(&f.attrs) {
        return Err(syn::Error::new(f.sig.ident.span(), format!("{name} applies only to a #[kernel] function")));
    }
    if marker.present_in(&f.attrs) {
        return Err(syn::Error::new(f.sig.ident.span(), format!("{name} is given more than once")));
    }
    Ok(with_tool_attr_last(f, tool_attr(marker.tool_name(), Some(args))))
}

/// Flag `#[kernel]` appends (as `; __oxide_after_kernel`) to the `#[launch_bounds]` and
/// `#[cluster_launch]` attributes that follow it: its own tool attribute is a `cfg_attr`, which
/// is gone before they run, so this is how they learn that the function is a kernel.
const AFTER_KERNEL: &str = "__oxide_after_kernel";

fn strip_after_kernel(attr: TokenStream) -> (TokenStream, bool) {
    let mut tokens: Vec<proc_macro2::TokenTree> = attr.clone().into_iter().collect();
    let n = tokens.len();
    let flagged = n >= 2
        && matches!(&tokens[n - 1], proc_macro2::TokenTree::Ident(i) if i == AFTER_KERNEL)
        && matches!(&tokens[n - 2], proc_macro2::TokenTree::Punct(p) if p.as_char() == ';');
    if flagged {
        tokens.truncate(n - 2);
        (tokens.into_iter().collect(), true)
    } else {
        (attr, false)
    }
}

/// `f` with `tool` after its remaining attributes. A `cfg_attr` is expanded only when the
/// attribute expansion reaches it, so attribute macros still to run on `f` (`#[launch_bounds]`
/// after `#[kernel]`) see the tool attributes of those that ran before them.
fn with_tool_attr_last(mut f: ItemFn, tool: TokenStream) -> TokenStream {
    let attrs = std::mem::take(&mut f.attrs);
    quote!(#(#attrs)* #tool #f)
}

/// The type parameters, in order (what async launches ask to outlive the operation).
pub fn type_params(generics: &syn::Generics) -> Vec<syn::Ident> {
    generics.type_params().map(|t| t.ident.clone()).collect()
}

/// Generic arguments for naming an instance: the type and const parameters in declaration order
/// (lifetimes are erased). A kernel with none is compiled once, by its own crate.
pub fn instance_params(generics: &syn::Generics) -> Vec<syn::Ident> {
    let ident = |p: &GenericParam| match p {
        GenericParam::Type(t) => Some(t.ident.clone()),
        GenericParam::Const(c) => Some(c.ident.clone()),
        GenericParam::Lifetime(_) => None,
    };
    generics.params.iter().filter_map(ident).collect()
}
