//! `#[cuda_module]`: kernels of an inline module plus a generated loader and typed launch methods.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::spanned::Spanned;
use syn::{Item, ItemFn, ItemMod};

use crate::attrs::{LaunchBounds, Marker, cluster_tokens, parse_cluster};
use crate::kernel::{Errors, Param, ParamKind, check_kernel_fn, type_params};

/// A kernel found in the module, with what its launch method needs.
struct KernelDef {
    ident: syn::Ident,
    generics: syn::Generics,
    unsafety: Option<syn::Token![unsafe]>,
    params: Vec<Param>,
    launch_bounds: Option<LaunchBounds>,
    cluster: Option<[u32; 3]>,
}

/// Path of the runtime items generated code uses (users depend only on `cuda_device`).
fn rt() -> TokenStream {
    quote!(::cuda_device::__private::cuda_host::__private)
}

/// The crate being compiled, as cargo tells the proc macro; it names the bundle symbol.
fn crate_name() -> Option<String> {
    std::env::var("CARGO_CRATE_NAME")
        .ok()
        .or_else(|| std::env::var("CARGO_PKG_NAME").ok().map(|n| n.replace('-', "_")))
}

pub fn expand(attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    if !attr.is_empty() {
        return Err(syn::Error::new(attr.span(), "#[cuda_module] takes no arguments"));
    }
    let mut module: ItemMod = match syn::parse2::<Item>(item)? {
        Item::Mod(m) => m,
        other => {
            return Err(syn::Error::new(
                other.span(),
                "#[cuda_module] applies to an inline module: `#[cuda_module] mod kernels { .. }`",
            ));
        }
    };
    let Some((_, items)) = module.content.as_mut() else {
        return Err(syn::Error::new(
            module.ident.span(),
            "#[cuda_module] needs an inline module (`mod kernels { .. }`), not `mod kernels;`",
        ));
    };
    let mut errors = Errors::default();
    let mut kernels = Vec::new();
    for item in items.iter() {
        match item {
            Item::Fn(f) => match process_fn(f) {
                Ok(Some(k)) => kernels.push(k),
                Ok(None) => {}
                Err(e) => errors.push(e),
            },
            other => {
                if let Some(attr) = marker_attrs(other).into_iter().next() {
                    errors.push(syn::Error::new(attr.span(), "this attribute applies only to functions"));
                }
            }
        }
    }
    errors.finish()?;
    let Some(crate_name) = crate_name() else {
        return Err(syn::Error::new(
            Span::call_site(),
            "#[cuda_module] needs CARGO_CRATE_NAME to name the device code bundle: build with cargo",
        ));
    };
    let generated = generate(&kernels, &crate_name);
    items.extend(generated);
    // The kernels' `cfg_attr(cuda_oxide, ..)` report unknown cfgs against this module.
    module.attrs.push(syn::parse_quote!(#[allow(unexpected_cfgs)]));
    Ok(quote!(#module))
}

fn marker_attrs(item: &Item) -> Vec<&syn::Attribute> {
    let attrs: &[syn::Attribute] = match item {
        Item::Struct(s) => &s.attrs,
        Item::Enum(e) => &e.attrs,
        Item::Mod(m) => &m.attrs,
        Item::Impl(i) => &i.attrs,
        Item::Const(c) => &c.attrs,
        Item::Static(s) => &s.attrs,
        Item::Trait(t) => &t.attrs,
        _ => &[],
    };
    attrs.iter().filter(|a| Marker::of(a).is_some()).collect()
}

/// Reads (and checks) our markers on `f` and describes the kernel, if it is one. The markers
/// stay in place: `#[kernel]` and the others expand themselves afterwards.
fn process_fn(f: &ItemFn) -> syn::Result<Option<KernelDef>> {
    let mut kernel = None;
    let mut device = None;
    let mut bounds: Option<(LaunchBounds, Span)> = None;
    let mut cluster: Option<([u32; 3], Span)> = None;
    let mut errors = Errors::default();
    for attr in &f.attrs {
        let Some(marker) = Marker::of(attr) else { continue };
        let span = attr.span();
        let args = match &attr.meta {
            syn::Meta::List(list) => list.tokens.clone(),
            syn::Meta::Path(_) => TokenStream::new(),
            syn::Meta::NameValue(nv) => {
                errors.push(syn::Error::new(nv.span(), "expected `#[name]` or `#[name(args)]`"));
                continue;
            }
        };
        let duplicate = || syn::Error::new(span, format!("#[{}] is given more than once", marker.tool_name()));
        match marker {
            Marker::Kernel | Marker::Device => {
                if !args.is_empty() {
                    errors.push(syn::Error::new(args.span(), format!("#[{}] takes no arguments", marker.tool_name())));
                }
                let slot = if marker == Marker::Kernel { &mut kernel } else { &mut device };
                if slot.replace(span).is_some() {
                    errors.push(duplicate());
                }
            }
            Marker::LaunchBounds => match LaunchBounds::parse(args, span) {
                Ok(b) if bounds.is_none() => bounds = Some((b, span)),
                Ok(_) => errors.push(duplicate()),
                Err(e) => errors.push(e),
            },
            Marker::ClusterLaunch => match parse_cluster(args, span) {
                Ok(c) if cluster.is_none() => cluster = Some((c, span)),
                Ok(_) => errors.push(duplicate()),
                Err(e) => errors.push(e),
            },
        }
    }
    if kernel.is_none() {
        for (what, span) in [("launch_bounds", bounds.map(|b| b.1)), ("cluster_launch", cluster.map(|c| c.1))] {
            if let Some(span) = span {
                errors.push(syn::Error::new(span, format!("#[{what}] applies only to a #[kernel] function")));
            }
        }
    }
    if let (Some(_), Some(span)) = (kernel, device) {
        errors.push(syn::Error::new(span, "a function cannot be both #[kernel] and #[device]"));
    }
    let params = if kernel.is_some() { check_kernel_fn(f).map_err(|e| errors.push(e)).ok() } else { None };
    errors.finish()?;
    Ok(params.map(|params| KernelDef {
        ident: f.sig.ident.clone(),
        generics: f.sig.generics.clone(),
        unsafety: f.sig.unsafety,
        params,
        launch_bounds: bounds.map(|b| b.0),
        cluster: cluster.map(|c| c.0),
    }))
}

fn field_name(k: &KernelDef) -> syn::Ident {
    format_ident!("__oxide_kernel_{}", k.ident)
}

/// `struct Module`, `fn load` and the launch methods.
fn generate(kernels: &[KernelDef], crate_name: &str) -> Vec<Item> {
    let rt = rt();
    let symbol = format!("__cuda_oxide_bundle_{crate_name}");
    let plain: Vec<&KernelDef> = kernels.iter().filter(|k| type_params(&k.generics).is_empty()).collect();
    let fields = plain.iter().map(|k| field_name(k));
    let field_inits = plain.iter().map(|k| {
        let field = field_name(k);
        let entry = k.ident.to_string();
        quote!(#field: __bundle.function(#entry)?)
    });
    let methods = kernels.iter().map(launch_method);
    let async_methods = kernels.iter().map(|k| {
        let borrowed = async_method(k, false);
        let owned = async_method(k, true);
        quote!(#borrowed #owned)
    });
    let if_async = if_async();
    let tokens = quote! {
        /// The device code of this module, loaded by [`load`]: one launch method per kernel.
        pub struct Module {
            __oxide_bundle: #rt::LoadedBundle,
            #(#fields: #rt::Function,)*
        }

        /// Loads this crate's embedded device code on `ctx`'s GPU, choosing the payload (cubin,
        /// fatbin or PTX) that fits it.
        #[allow(unexpected_cfgs, unreachable_code)]
        pub fn load(
            ctx: &::std::sync::Arc<#rt::CudaContext>,
        ) -> ::core::result::Result<Module, #rt::DriverError> {
            #[cfg(cuda_oxide)]
            {
                unsafe extern "C" {
                    #[link_name = #symbol]
                    static __CUDA_OXIDE_BUNDLE: u8;
                }
                // SAFETY: the symbol is the device code bundle oxide-rustc linked into this crate.
                let __bundle = unsafe { #rt::load_embedded(ctx, ::core::ptr::addr_of!(__CUDA_OXIDE_BUNDLE)) }?;
                return ::core::result::Result::Ok(Module { #(#field_inits,)* __oxide_bundle: __bundle });
            }
            let _ = ctx;
            ::core::result::Result::Err(#rt::DriverError::NotBuiltWithOxide)
        }

        #if_async! {
            /// Loads this crate's embedded device code on device `device_ordinal` of the async
            /// runtime (`cuda_async::device_context`), for the `_async` launch methods.
            pub fn load_async(device_ordinal: usize) -> ::core::result::Result<Module, #rt::DriverError> {
                let __device = #rt::cuda_async::device_context::device_context(device_ordinal)?;
                load(__device.context())
            }
        }

        impl Module {
            /// The loaded bundle: the module and the manifest of this crate's kernels.
            pub fn bundle(&self) -> &#rt::LoadedBundle {
                &self.__oxide_bundle
            }

            #(#methods)*

            #if_async! {
                #(#async_methods)*
            }
        }
    };
    match syn::parse2::<syn::File>(tokens) {
        Ok(file) => file.items,
        Err(e) => vec![Item::Verbatim(e.to_compile_error())],
    }
}

/// The macro that keeps generated async items only when cuda-host's `async` feature is on
/// (a proc macro cannot see features; cuda-host decides, see its `__if_async!`).
fn if_async() -> TokenStream {
    quote!(::cuda_device::__private::cuda_host::__if_async)
}

/// `<kernel>_async(&self, config, args..)` (borrows the buffers until the operation completes;
/// yields `()`) or, when `owned`, `<kernel>_async_owned(&self, config, args..)` (takes the
/// buffers and yields them back: one buffer alone, several as a tuple in parameter order).
/// Both return `Result<DeviceOperation<..>, DriverError>`: the config, launch bounds and the
/// kernel lookup are checked now, the launch happens when the operation runs.
fn async_method(k: &KernelDef, owned: bool) -> TokenStream {
    let rt = rt();
    let ops = quote!(#rt::cuda_async::device_operation);
    let ident = &k.ident;
    let method = if owned { format_ident!("{}_async_owned", ident) } else { format_ident!("{}_async", ident) };
    let entry = ident.to_string();
    let tparams = type_params(&k.generics);
    let elems: Vec<&syn::Type> = k
        .params
        .iter()
        .filter_map(|p| match &p.kind {
            ParamKind::Slice(e) | ParamKind::SliceMut(e) | ParamKind::Disjoint(e) => Some(e),
            ParamKind::Value => None,
        })
        .collect();
    let predicates = k.generics.where_clause.iter().flat_map(|w| w.predicates.iter());
    // Buffers move to the thread that runs the operation: their element types must allow it.
    let where_clause = quote!(where #(#predicates,)* #(#tparams: 'static,)* #(#elems: ::core::marker::Send + ::core::marker::Sync,)*);
    let generic_params = &k.generics.params;
    let lifetime = syn::Lifetime::new("'__oxide_op", Span::call_site());
    let generics_decl = match (owned, generic_params.is_empty()) {
        (true, true) => quote!(),
        (true, false) => quote!(<#generic_params>),
        (false, true) => quote!(<#lifetime>),
        (false, false) => quote!(<#lifetime, #generic_params>),
    };
    let op_lifetime = if owned { quote!('static) } else { quote!(#lifetime) };
    let turbofish = if tparams.is_empty() { quote!() } else { quote!(::<#(#tparams),*>) };
    let unsafety = &k.unsafety;

    let args = k.params.iter().map(|p| {
        let name = &p.name;
        match (&p.kind, owned) {
            (ParamKind::Slice(e) | ParamKind::SliceMut(e) | ParamKind::Disjoint(e), true) => {
                quote!(#name: #rt::DeviceBuffer<#e>)
            }
            (ParamKind::Slice(e), false) => quote!(#name: &#lifetime #rt::DeviceBuffer<#e>),
            (ParamKind::SliceMut(e) | ParamKind::Disjoint(e), false) => quote!(#name: &#lifetime mut #rt::DeviceBuffer<#e>),
            (ParamKind::Value, _) => {
                let ty = &p.ty;
                quote!(#name: #ty)
            }
        }
    });
    let wrap_values = k.params.iter().filter(|p| matches!(p.kind, ParamKind::Value)).map(|p| {
        let name = &p.name;
        quote!(let #name = #rt::cuda_async::__private::KernelValue::new(#name);)
    });
    let rebind_mut = k.params.iter().filter(|p| owned && matches!(p.kind, ParamKind::SliceMut(_) | ParamKind::Disjoint(_))).map(|p| {
        let name = &p.name;
        quote!(let mut #name = #name;)
    });
    let pushes = k.params.iter().map(|p| {
        let name = &p.name;
        match (&p.kind, owned) {
            (ParamKind::Slice(_), true) => quote!(__params.push_slice(&#name);),
            (ParamKind::SliceMut(_) | ParamKind::Disjoint(_), true) => quote!(__params.push_slice_mut(&mut #name);),
            (ParamKind::Slice(_), false) => quote!(__params.push_slice(#name);),
            (ParamKind::SliceMut(_) | ParamKind::Disjoint(_), false) => quote!(__params.push_slice_mut(&mut *#name);),
            (ParamKind::Value, _) => quote!(__params.push_value(#name.get());),
        }
    });
    let buffer_names: Vec<&syn::Ident> =
        k.params.iter().filter(|p| !matches!(p.kind, ParamKind::Value)).map(|p| &p.name).collect();
    let (output_ty, output) = if !owned {
        (quote!(()), quote!(()))
    } else {
        match elems.as_slice() {
            [] => (quote!(()), quote!(())),
            [e] => {
                let name = buffer_names[0];
                (quote!(#rt::DeviceBuffer<#e>), quote!(#name))
            }
            _ => (quote!((#(#rt::DeviceBuffer<#elems>),*)), quote!((#(#buffer_names),*))),
        }
    };
    let function = if tparams.is_empty() {
        let field = field_name(k);
        quote!(let __function: #rt::Function = ::core::clone::Clone::clone(&self.#field);)
    } else {
        quote! {
            let __entry = #rt::entry_name(#entry, &[#(#rt::type_key::<#tparams>()),*]);
            let __function: #rt::Function = self.__oxide_bundle.function(&__entry)?;
        }
    };
    let (bounds_check, cluster) = launch_checks(k);
    let doc = if owned {
        format!(
            " A lazy launch of kernel [`{entry}`] that owns its buffers and yields them back when it              has completed. Runs with `.sync()` or `.await` on a stream the scheduling policy picks."
        )
    } else {
        format!(
            " A lazy launch of kernel [`{entry}`]; the buffers stay borrowed until it has completed.              Runs with `.sync()` or `.await` on a stream the scheduling policy picks."
        )
    };
    let safety = unsafety.map(|_| quote!(#[doc = ""] #[doc = " # Safety"] #[doc = " The kernel is `unsafe fn`: the caller upholds its contract."]));
    quote! {
        #[doc = #doc]
        #safety
        #[allow(clippy::too_many_arguments, clippy::type_complexity, unused_mut)]
        pub #unsafety fn #method #generics_decl(
            &self,
            config: #rt::LaunchConfig,
            #(#args),*
        ) -> ::core::result::Result<#ops::DeviceOperation<#op_lifetime, #output_ty>, #rt::DriverError> #where_clause {
            // Name the kernel instance so rustc's mono collector includes it in this crate.
            let _ = ::core::hint::black_box(#ident #turbofish as *const ());
            #function
            config.validate()?;
            #bounds_check
            #(#wrap_values)*
            let __device = __function.context().ordinal();
            ::core::result::Result::Ok(#ops::DeviceOperation::new(__device, move |__exec: &#ops::ExecutionContext| {
                #(#rebind_mut)*
                {
                    let mut __params = #rt::KernelParams::new();
                    #(#pushes)*
                    // SAFETY: the packet follows the kernel's signature by construction (contract
                    // §4) and is checked against the kernel's manifest entry; the buffers are
                    // borrowed or owned by the operation until it has completed.
                    unsafe { #rt::launch_with(&__function, __exec.stream(), &config, #cluster, &mut __params) }?;
                }
                ::core::result::Result::Ok(#output)
            }))
        }
    }
}

/// What every launch method checks and passes besides the arguments: the `#[launch_bounds]` check
/// of the config, and the `#[cluster_launch]` dimensions (`Option<(u32, u32, u32)>`).
fn launch_checks(k: &KernelDef) -> (Option<TokenStream>, TokenStream) {
    let rt = rt();
    let entry = k.ident.to_string();
    let bounds_check = k.launch_bounds.map(|b| {
        let max = b.max_threads;
        let min = match b.min_blocks {
            Some(m) => quote!(::core::option::Option::Some(#m)),
            None => quote!(::core::option::Option::None),
        };
        quote!(config.check_launch_bounds(#entry, &#rt::LaunchBounds { max_threads: #max, min_blocks: #min })?;)
    });
    let cluster = match k.cluster {
        Some(c) => {
            let c = cluster_tokens(c);
            quote!(::core::option::Option::Some((#c)))
        }
        None => quote!(::core::option::Option::None),
    };
    (bounds_check, cluster)
}

/// `pub fn <kernel>(&self, stream, config, args..) -> Result<(), DriverError>`.
fn launch_method(k: &KernelDef) -> TokenStream {
    let rt = rt();
    let ident = &k.ident;
    let entry = ident.to_string();
    let tparams = type_params(&k.generics);
    // Entry names key on `TypeId`, which needs `'static` type arguments (docs/contracts.md §5).
    let predicates = k.generics.where_clause.iter().flat_map(|w| w.predicates.iter());
    let where_clause = if tparams.is_empty() && k.generics.where_clause.is_none() {
        quote!()
    } else {
        quote!(where #(#predicates,)* #(#tparams: 'static,)*)
    };
    let generic_params = &k.generics.params;
    let generics_decl = if generic_params.is_empty() { quote!() } else { quote!(<#generic_params>) };
    let turbofish = if tparams.is_empty() { quote!() } else { quote!(::<#(#tparams),*>) };
    let unsafety = &k.unsafety;

    let args = k.params.iter().map(|p| {
        let name = &p.name;
        match &p.kind {
            ParamKind::Slice(elem) => quote!(#name: &#rt::DeviceBuffer<#elem>),
            ParamKind::SliceMut(elem) | ParamKind::Disjoint(elem) => quote!(#name: &mut #rt::DeviceBuffer<#elem>),
            ParamKind::Value => {
                let ty = &p.ty;
                quote!(#name: #ty)
            }
        }
    });
    let pushes = k.params.iter().map(|p| {
        let name = &p.name;
        match &p.kind {
            ParamKind::Slice(_) => quote!(__params.push_slice(#name);),
            ParamKind::SliceMut(_) | ParamKind::Disjoint(_) => quote!(__params.push_slice_mut(#name);),
            ParamKind::Value => quote!(__params.push_value(&#name);),
        }
    });
    let function = if tparams.is_empty() {
        let field = field_name(k);
        quote!(let __function = &self.#field;)
    } else {
        quote! {
            let __entry = #rt::entry_name(#entry, &[#(#rt::type_key::<#tparams>()),*]);
            let __function = &self.__oxide_bundle.function(&__entry)?;
        }
    };
    let (bounds_check, cluster) = launch_checks(k);
    let doc = format!(
        " Launches kernel [`{entry}`] on `stream` with `config`. `Ok` means queued, not finished: \
         synchronize the stream to see errors raised while it runs."
    );
    let safety = unsafety.map(|_| quote!(#[doc = ""] #[doc = " # Safety"] #[doc = " The kernel is `unsafe fn`: the caller upholds its contract."]));
    quote! {
        #[doc = #doc]
        #safety
        #[allow(clippy::too_many_arguments, unused_mut)]
        pub #unsafety fn #ident #generics_decl(
            &self,
            stream: &#rt::CudaStream,
            config: #rt::LaunchConfig,
            #(#args),*
        ) -> ::core::result::Result<(), #rt::DriverError> #where_clause {
            // Name the kernel instance so rustc's mono collector includes it in this crate.
            let _ = ::core::hint::black_box(#ident #turbofish as *const ());
            #function
            #bounds_check
            let mut __params = #rt::KernelParams::new();
            #(#pushes)*
            // SAFETY: the packet follows the kernel's signature by construction (contract §4),
            // and is checked against the manifest entry of the kernel as well.
            unsafe { #rt::launch_with(__function, stream, &config, #cluster, &mut __params) }
        }
    }
}
