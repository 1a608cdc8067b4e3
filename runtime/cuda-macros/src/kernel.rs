//! `#[kernel]` / `#[device]` / `#[launch_bounds]` / `#[cluster_launch]`: checks and tool-attribute output.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, format_ident, quote};
use syn::spanned::Spanned;
use syn::{FnArg, GenericParam, Item, ItemFn, Pat, ReturnType, Type};

use oxide_contract::abi::{DISJOINT_SLICE_TYPE, LaunchArg, ROW_WIDTH_SPACES};

use crate::attrs::{LaunchBounds, Marker, cluster_tokens, parse_cluster, tool_attr};

/// How a kernel parameter is passed (contract §4), as far as its syntax tells.
pub enum ParamKind {
    /// `&[T]`
    Slice(Type),
    /// `&mut [T]`
    SliceMut(Type),
    /// `DisjointSlice<T>` (of an index space without run-time data)
    Disjoint(Type),
    /// `DisjointSlice<T, Runtime2DIndex>` and other index spaces with a row width
    /// (`oxide_contract::abi::ROW_WIDTH_SPACES`): the host passes `cuda_host::RowWidth`.
    RowWidth(Type),
    /// Anything else: scalars, raw pointers, closures, structs (zero-sized ones are dropped at run time).
    Value,
}

impl ParamKind {
    /// The buffer's element type, for the slice kinds.
    pub fn elem(&self) -> Option<&Type> {
        match self {
            ParamKind::Slice(e) | ParamKind::SliceMut(e) | ParamKind::Disjoint(e) | ParamKind::RowWidth(e) => Some(e),
            ParamKind::Value => None,
        }
    }

    /// What the host passes; the backend checks this against the parameter's type.
    pub fn launch_arg(&self) -> LaunchArg {
        match self {
            ParamKind::Slice(_) => LaunchArg::Buffer,
            ParamKind::SliceMut(_) | ParamKind::Disjoint(_) => LaunchArg::BufferMut,
            ParamKind::RowWidth(_) => LaunchArg::RowWidth,
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
            // `DisjointSlice<'a, T, Space>`: the lifetime is optional, the space defaults to `Index1D`.
            let usage =
                || syn::Error::new(last.span(), "expected `DisjointSlice<T>` or `DisjointSlice<T, IndexSpace>`");
            let syn::PathArguments::AngleBracketed(args) = &last.arguments else { return Err(usage()) };
            let types: Vec<&Type> = args
                .args
                .iter()
                .filter_map(|a| match a {
                    syn::GenericArgument::Type(t) => Some(t),
                    _ => None,
                })
                .collect();
            let row_width = |space: &Type| match space {
                Type::Path(p) => p.path.segments.last().is_some_and(|s| ROW_WIDTH_SPACES.iter().any(|r| s.ident == r)),
                _ => false,
            };
            match types.as_slice() {
                [elem] => Ok(ParamKind::Disjoint((*elem).clone())),
                [elem, space] if row_width(space) => Ok(ParamKind::RowWidth((*elem).clone())),
                [elem, _] => Ok(ParamKind::Disjoint((*elem).clone())),
                _ => Err(usage()),
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
    let args = KernelArgs::parse(attr);
    let f = parse_fn(item, "#[kernel]")?;
    let args = args?;
    let params = check_kernel_fn(&f)?;
    let mut f = f;
    crate::hints::rewrite_loops(&mut f)?;
    // Reported next to the function, which stays (rewritten into the new forms), so that the
    // generated code that names it does not add errors of its own.
    let renamed = crate::renamed::check(&mut f).err().map(|e| e.to_compile_error());
    if let Some(name) = &args.launch_context {
        let contract = crate::contract::find(&f.attrs)?;
        bind_launch_context(&mut f, name, contract.as_ref().map(|c| &c.contract));
    }
    for attr in &mut f.attrs {
        if !matches!(
            Marker::of(attr),
            Some(Marker::LaunchBounds | Marker::ClusterLaunch | Marker::CooperativeLaunch | Marker::LaunchContract)
        ) {
            continue;
        }
        let flag = syn::Ident::new(AFTER_KERNEL, Span::call_site());
        match &mut attr.meta {
            syn::Meta::List(list) => list.tokens.extend(quote!(; #flag)),
            // `#[cooperative_launch]` takes no arguments: it gets a list to carry the flag.
            syn::Meta::Path(path) => {
                attr.meta = syn::Meta::List(syn::MetaList {
                    path: path.clone(),
                    delimiter: syn::MacroDelimiter::Paren(Default::default()),
                    tokens: quote!(; #flag),
                })
            }
            syn::Meta::NameValue(_) => {}
        }
    }
    if !args.instances.is_empty() {
        // The instances are the kernels; the generic function stays a device function they call
        // (a kernel cannot be called from device code), without the kernel options.
        let instances = args.instances.iter().map(|ty| instance_kernel(&f, ty)).collect::<syn::Result<Vec<_>>>()?;
        let mut generic = f;
        generic.attrs.retain(|a| !is_kernel_option(a));
        return Ok(quote!(#generic #(#instances)* #renamed));
    }
    // The backend checks this classification against the parameters' types (contract §4).
    let launch_args = params.iter().map(|p| format_ident!("{}", p.kind.launch_arg().name()));
    let kernel = with_tool_attr_last(f, tool_attr(Marker::Kernel.tool_name(), Some(quote!(#(#launch_args),*))));
    Ok(quote!(#kernel #renamed))
}

/// `#[launch_bounds]`, `#[cluster_launch]`, `#[launch_contract]`, or the tool attribute of one.
fn is_kernel_option(attr: &syn::Attribute) -> bool {
    let markers = [Marker::LaunchBounds, Marker::ClusterLaunch, Marker::CooperativeLaunch, Marker::LaunchContract];
    markers.iter().any(|&m| Marker::of(attr) == Some(m) || crate::attrs::is_tool_attr(attr, m.tool_name()))
}

/// For `#[kernel(f32)]` on `fn scale<T>(..)`: the kernel `scale_f32(..)`, with `T = f32` in its
/// parameters, calling `scale::<f32>` (NVIDIA's explicit instantiation; the entry is named so).
fn instance_kernel(f: &ItemFn, ty: &Type) -> syn::Result<TokenStream> {
    let generics = &f.sig.generics;
    let type_params: Vec<&syn::Ident> = generics.type_params().map(|t| &t.ident).collect();
    let [param] = type_params.as_slice() else {
        return Err(syn::Error::new(
            ty.span(),
            "#[kernel(T, ..)] instantiates a kernel with exactly one type parameter (and no const parameters)",
        ));
    };
    if generics.const_params().next().is_some() {
        return Err(syn::Error::new(ty.span(), "#[kernel(T, ..)] does not instantiate const parameters"));
    }
    let suffix: String = quote!(#ty)
        .to_string()
        .chars()
        .filter(|c| !c.is_whitespace())
        .map(|c| if c.is_alphanumeric() { c } else { '_' })
        .collect();
    let ident = format_ident!("{}_{}", f.sig.ident, suffix);
    let mut subst = SubstType { param: (*param).clone(), ty: ty.clone() };
    let mut inputs = Vec::new();
    let mut forwarded = Vec::new();
    for (i, input) in f.sig.inputs.iter().enumerate() {
        let FnArg::Typed(arg) = input else { continue };
        let mut arg_ty = (*arg.ty).clone();
        syn::visit_mut::VisitMut::visit_type_mut(&mut subst, &mut arg_ty);
        let name = match &*arg.pat {
            Pat::Ident(p) => p.ident.clone(),
            _ => format_ident!("__arg{}", i),
        };
        inputs.push(quote!(#name: #arg_ty));
        forwarded.push(name);
    }
    let callee = &f.sig.ident;
    let unsafety = &f.sig.unsafety;
    let vis = &f.vis;
    let attrs = &f.attrs;
    let call = quote!(#callee::<#ty>(#(#forwarded),*));
    let body = if unsafety.is_some() { quote!(unsafe { #call }) } else { call };
    let wrapper: ItemFn = syn::parse_quote! {
        #(#attrs)*
        #[allow(non_snake_case, clippy::too_many_arguments)]
        #vis #unsafety fn #ident(#(#inputs),*) { #body }
    };
    let params = check_kernel_fn(&wrapper)?;
    let launch_args = params.iter().map(|p| format_ident!("{}", p.kind.launch_arg().name()));
    Ok(with_tool_attr_last(wrapper, tool_attr(Marker::Kernel.tool_name(), Some(quote!(#(#launch_args),*)))))
}

/// Replaces the type parameter `param` by `ty`.
struct SubstType {
    param: syn::Ident,
    ty: Type,
}

impl syn::visit_mut::VisitMut for SubstType {
    fn visit_type_mut(&mut self, t: &mut Type) {
        if let Type::Path(p) = t
            && p.qself.is_none()
            && p.path.is_ident(&self.param)
        {
            *t = self.ty.clone();
            return;
        }
        syn::visit_mut::visit_type_mut(self, t);
    }
}

/// The arguments of `#[kernel(..)]`, in any order: `launch_context = NAME`, the flag
/// `unchecked_indexing` (accepted; bounds checks stay, which changes no correct program), and
/// types to instantiate a generic kernel with (`#[kernel(f32, f64)]`).
#[derive(Default)]
pub struct KernelArgs {
    pub launch_context: Option<syn::Ident>,
    /// `#[kernel(f32, f64)]`: one kernel per type, of a kernel with one type parameter.
    pub instances: Vec<Type>,
}

impl KernelArgs {
    pub fn parse(attr: TokenStream) -> syn::Result<KernelArgs> {
        use syn::parse::Parser;
        let metas = syn::punctuated::Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated.parse2(attr)?;
        let mut args = KernelArgs::default();
        for meta in metas {
            match &meta {
                syn::Meta::NameValue(nv) if nv.path.is_ident("launch_context") => match &nv.value {
                    syn::Expr::Path(p) if p.path.get_ident().is_some() && args.launch_context.is_none() => {
                        args.launch_context = p.path.get_ident().cloned();
                    }
                    other => {
                        return Err(syn::Error::new(other.span(), "expected `launch_context = NAME`, given once"));
                    }
                },
                syn::Meta::Path(p) if p.is_ident("unchecked_indexing") => {}
                syn::Meta::Path(p) => args.instances.push(Type::Path(syn::TypePath { qself: None, path: p.clone() })),
                other => {
                    return Err(syn::Error::new(
                        other.span(),
                        "#[kernel] takes `launch_context = NAME`, `unchecked_indexing` and types to instantiate it with",
                    ));
                }
            }
        }
        Ok(args)
    }
}

/// `let NAME: LaunchContext<'_, Domain, Coordinates> = ..;` at the top of the kernel body, typed
/// by the kernel's launch contract (`UnknownDomain`, `NativeCoordinates` without one).
fn bind_launch_context(
    f: &mut ItemFn,
    name: &syn::Ident,
    contract: Option<&oxide_contract::launch_contract::LaunchContract>,
) {
    let thread = quote!(::cuda_device::thread);
    let domain = match contract.map(|c| c.domain) {
        Some(1) => quote!(#thread::Domain1),
        Some(2) => quote!(#thread::Domain2),
        Some(3) => quote!(#thread::Domain3),
        _ => quote!(#thread::UnknownDomain),
    };
    let coordinates = if contract.is_some_and(|c| c.u32_coordinates) {
        quote!(#thread::U32Coordinates)
    } else {
        quote!(#thread::NativeCoordinates)
    };
    let stmt: syn::Stmt = syn::parse_quote! {
        #[allow(unused_variables)]
        let #name: #thread::LaunchContext<'_, #domain, #coordinates> = #thread::LaunchContext::__new();
    };
    f.block.stmts.insert(0, stmt);
}

/// `#[launch_contract(..)]` on a kernel.
pub fn expand_launch_contract(attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let (attr, after_kernel) = strip_after_kernel(attr);
    let span = if attr.is_empty() { Span::call_site() } else { attr.span() };
    let args = crate::contract::ContractArgs::parse(attr, span);
    let f = parse_fn(item, "#[launch_contract]")?;
    let args = args?;
    if !after_kernel && !Marker::Kernel.present_in(&f.attrs) {
        return Err(syn::Error::new(f.sig.ident.span(), "#[launch_contract] applies only to a #[kernel] function"));
    }
    if Marker::LaunchContract.present_in(&f.attrs) {
        return Err(syn::Error::new(f.sig.ident.span(), "#[launch_contract] is given more than once"));
    }
    Ok(with_tool_attr_last(f, args.tool_attr()))
}

/// `#[device]` on a function.
pub fn expand_device(attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let args = no_args(attr, "#[device]");
    if let Ok(Item::ForeignMod(block)) = syn::parse2::<Item>(item.clone()) {
        args?;
        return expand_device_imports(block);
    }
    let mut f = parse_fn(item, "#[device]")?;
    args?;
    crate::hints::rewrite_loops(&mut f)?;
    let renamed = crate::renamed::check(&mut f).err().map(|e| e.to_compile_error());
    if Marker::Kernel.present_in(&f.attrs) {
        return Err(syn::Error::new(f.sig.ident.span(), "a function cannot be both #[kernel] and #[device]"));
    }
    let device = with_tool_attr_last(f, tool_attr(Marker::Device.tool_name(), None));
    Ok(quote!(#device #renamed))
}

/// `#[device] extern "C" { fn f(..) -> ..; }`: CUDA C++ device functions that device code calls
/// (docs/interop.md). Each becomes an `unsafe extern "C-unwind" fn` marked for the device compiler,
/// which leaves a declaration under its C name for the device linker; on the host, where CUDA
/// C++ device code does not exist, its body panics (and the host binary needs no such symbol).
fn expand_device_imports(block: syn::ItemForeignMod) -> syn::Result<TokenStream> {
    if block.abi.name.as_ref().is_some_and(|n| n.value() != "C") {
        return Err(syn::Error::new(
            block.abi.span(),
            "#[device] extern blocks must be `extern \"C\"` (CUDA C++ declares them `extern \"C\" __device__`)",
        ));
    }
    let tool = tool_attr(oxide_contract::attrs::DEVICE_IMPORT, None);
    let mut out = TokenStream::new();
    for item in block.items {
        let syn::ForeignItem::Fn(f) = item else {
            return Err(syn::Error::new(
                item.span(),
                "a #[device] extern block declares only functions (CUDA C++ `extern \"C\" __device__` functions)",
            ));
        };
        let (attrs, vis, mut sig) = (f.attrs, f.vis, f.sig);
        if let Some(v) = &sig.variadic {
            return Err(syn::Error::new(v.span(), "CUDA C++ device functions with `...` cannot be called from Rust"));
        }
        sig.unsafety = Some(Default::default());
        // `C-unwind`: the host stand-in panics, and that panic must reach the caller.
        sig.abi = Some(syn::parse_quote!(extern "C-unwind"));
        let message = format!("`{}` is a CUDA C++ device function: it can only be called from device code", sig.ident);
        out.extend(quote! {
            #(#attrs)*
            #tool
            #[allow(unused_variables, clippy::missing_safety_doc)]
            #[inline(never)]
            #vis #sig {
                ::core::panic!(#message)
            }
        });
    }
    Ok(out)
}

/// `#[launch_bounds(..)]`, `#[cluster_launch(..)]` or `#[cooperative_launch]` on a kernel.
pub fn expand_kernel_option(marker: Marker, attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let (attr, after_kernel) = strip_after_kernel(attr);
    let span = if attr.is_empty() { Span::call_site() } else { attr.span() };
    let name = format!("#[{}]", marker.tool_name());
    let args = match marker {
        Marker::LaunchBounds => LaunchBounds::parse(attr, span).map(|b| Some(b.tokens())),
        Marker::CooperativeLaunch => no_args(attr, "#[cooperative_launch]").map(|()| None),
        _ => parse_cluster(attr, span).map(|c| Some(cluster_tokens(c))),
    };
    let f = parse_fn(item, &name)?;
    let args = args?;
    if !after_kernel && !Marker::Kernel.present_in(&f.attrs) {
        return Err(syn::Error::new(f.sig.ident.span(), format!("{name} applies only to a #[kernel] function")));
    }
    if marker.present_in(&f.attrs) {
        return Err(syn::Error::new(f.sig.ident.span(), format!("{name} is given more than once")));
    }
    Ok(with_tool_attr_last(f, tool_attr(marker.tool_name(), args)))
}

/// Flag `#[kernel]` appends (as `; __oxide_after_kernel`) to the `#[launch_bounds]` and
/// `#[cluster_launch]` attributes that follow it: its own tool attribute is a `cfg_attr`, which
/// is gone before they run, so this is how they learn that the function is a kernel.
const AFTER_KERNEL: &str = "__oxide_after_kernel";

pub fn strip_after_kernel(attr: TokenStream) -> (TokenStream, bool) {
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
