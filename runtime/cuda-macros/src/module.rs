//! `#[cuda_module]`: kernels of an inline module plus a generated loader and typed launch methods.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::spanned::Spanned;
use syn::{Item, ItemFn, ItemMod};

use crate::attrs::{LaunchBounds, Marker, parse_cluster};
use crate::contract::ContractArgs;
use crate::kernel::{Errors, Param, check_kernel_fn, instance_params};
use crate::launch::{Flavor, LaunchSig, field_name};

/// A kernel found in the module, with what its launch methods need.
pub struct KernelDef {
    pub ident: syn::Ident,
    pub generics: syn::Generics,
    pub unsafety: Option<syn::Token![unsafe]>,
    pub params: Vec<Param>,
    pub launch_bounds: Option<LaunchBounds>,
    pub cluster: Option<[u32; 3]>,
    /// `#[cooperative_launch]`: every launch method launches cooperatively.
    pub cooperative: bool,
    /// `#[launch_contract(..)]`: launched through `prepare_<kernel>`.
    pub contract: Option<ContractArgs>,
}

/// Path of the runtime items generated code uses (users depend only on `cuda_device`).
pub fn rt() -> TokenStream {
    quote!(::cuda_device::__private::cuda_host::__private)
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
    process_items(items, true)?;
    // The kernels' `cfg_attr(cuda_oxide, ..)` report unknown cfgs against this module.
    module.attrs.push(syn::parse_quote!(#[allow(unexpected_cfgs)]));
    Ok(quote!(#module))
}

/// Collects the kernels of one module's items and appends its generated items; inline child
/// modules get their own (`from_parent`), recursively.
fn process_items(items: &mut Vec<Item>, root: bool) -> syn::Result<()> {
    let mut errors = Errors::default();
    let mut kernels = Vec::new();
    let mut constants = Vec::new();
    for item in items.iter_mut() {
        match item {
            Item::Static(s) if s.attrs.iter().any(crate::constant::is_constant_attr) => match crate::constant::check(s)
            {
                Ok(c) => constants.push(c),
                Err(e) => errors.push(e),
            },
            Item::Fn(f) => match process_fn(f) {
                Ok(Some(k)) => kernels.push(k),
                Ok(None) => {}
                Err(e) => errors.push(e),
            },
            Item::Mod(m) if m.content.is_some() && marker_attrs(&Item::Mod(m.clone())).is_empty() => {
                let (_, child) = m.content.as_mut().expect("inline module");
                if let Err(e) = process_items(child, false) {
                    errors.push(e);
                }
            }
            other => {
                if let Some(attr) = marker_attrs(other).into_iter().next() {
                    errors.push(syn::Error::new(attr.span(), "this attribute applies only to functions"));
                }
            }
        }
    }
    errors.finish()?;
    items.extend(generate(&kernels, root));
    items.push(Item::Verbatim(crate::constant::setters(&constants)));
    Ok(())
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
    let mut cooperative: Option<Span> = None;
    let mut contract: Option<(ContractArgs, Span)> = None;
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
            Marker::Kernel => {
                if let Err(e) = crate::kernel::KernelArgs::parse(args) {
                    errors.push(e);
                }
                if kernel.replace(span).is_some() {
                    errors.push(duplicate());
                }
            }
            Marker::LaunchContract => match ContractArgs::parse(args, span) {
                Ok(c) if contract.is_none() => contract = Some((c, span)),
                Ok(_) => errors.push(duplicate()),
                Err(e) => errors.push(e),
            },
            Marker::Device => {
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
            Marker::CooperativeLaunch => {
                if !args.is_empty() {
                    errors.push(syn::Error::new(
                        args.span(),
                        "#[cooperative_launch] takes no arguments: write a bare #[cooperative_launch]",
                    ));
                }
                if cooperative.replace(span).is_some() {
                    errors.push(duplicate());
                }
            }
            Marker::ClusterLaunch => match parse_cluster(args, span) {
                Ok(c) if cluster.is_none() => cluster = Some((c, span)),
                Ok(_) => errors.push(duplicate()),
                Err(e) => errors.push(e),
            },
        }
    }
    if kernel.is_none() {
        let contract_span = contract.as_ref().map(|c| c.1);
        for (what, span) in [
            ("launch_bounds", bounds.map(|b| b.1)),
            ("cluster_launch", cluster.map(|c| c.1)),
            ("cooperative_launch", cooperative),
            ("launch_contract", contract_span),
        ] {
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
        cooperative: cooperative.is_some(),
        contract: contract.map(|c| c.0),
    }))
}

/// `struct Module`, `fn load` and the launch methods.
fn generate(kernels: &[KernelDef], root: bool) -> Vec<Item> {
    let rt = rt();
    let plain: Vec<&KernelDef> = kernels.iter().filter(|k| instance_params(&k.generics).is_empty()).collect();
    let ptx_names = kernels.iter().filter(|k| !instance_params(&k.generics).is_empty()).map(ptx_name_fn);
    let fields = plain.iter().map(|k| field_name(k));
    let field_inits = plain.iter().map(|k| {
        let field = field_name(k);
        let lookup = lookup(k, quote!(__kernels), quote!());
        quote!(#field: #lookup?)
    });
    let methods = kernels.iter().map(|k| LaunchSig::new(k, Flavor::Sync).method());
    let contract_items = kernels.iter().filter(|k| k.contract.is_some()).map(crate::launch::contract_marker);
    let async_methods = kernels.iter().map(|k| {
        let borrowed = LaunchSig::new(k, Flavor::Async).method();
        let owned = LaunchSig::new(k, Flavor::AsyncOwned).method();
        quote!(#borrowed #owned)
    });
    let if_async = if_async();
    let loaders = if root {
        quote! {
        /// Loads the device code of this module's kernels, embedded in this binary by
        /// `cargo oxide build`, on `ctx`'s GPU, choosing the payload (cubin, fatbin or PTX) that fits.
        pub fn load(
            ctx: &::std::sync::Arc<#rt::CudaContext>,
        ) -> ::core::result::Result<Module, #rt::DriverError> {
            __oxide_bind(#rt::EmbeddedKernels::new(ctx)?)
        }

        /// Binds this module's kernels in device code the program loaded itself, e.g. the
        /// `<crate>.ptx` that `cargo oxide build` writes beside the binaries:
        /// `kernels::from_module(ctx.load_module_from_file("app.ptx")?)?`. A kernel it lacks
        /// comes from this binary's embedded device code; one in neither is `CUDA_ERROR_NOT_FOUND`.
        pub fn from_module(
            module: impl ::core::convert::Into<::std::sync::Arc<#rt::Module>>,
        ) -> ::core::result::Result<Module, #rt::DriverError> {
            __oxide_bind(#rt::EmbeddedKernels::from_module(module.into()))
        }

        #if_async! {
            /// Loads this crate's embedded device code on device `device_ordinal` of the async
            /// runtime (`cuda_async::device_context`), for the `_async` launch methods.
            pub fn load_async(device_ordinal: usize) -> ::core::result::Result<Module, #rt::DriverError> {
                let __device = #rt::cuda_async::device_context::device_context(device_ordinal)?;
                load(__device.context())
            }
        }

        }
    } else {
        quote! {
            /// Binds this nested module's kernels in the device code its parent module loaded:
            /// `kernels::post::LoadedModule::from_parent(&module)?`.
            pub fn from_parent(parent: &super::Module) -> ::core::result::Result<Module, #rt::DriverError> {
                __oxide_bind(parent.kernels().share())
            }

            impl Module {
                /// [`from_parent`] as an associated function (`LoadedModule::from_parent(&parent)`).
                pub fn from_parent(parent: &super::Module) -> ::core::result::Result<Module, #rt::DriverError> {
                    from_parent(parent)
                }
            }
        }
    };
    let tokens = quote! {
        /// The device code of this module, loaded by [`load`]: one launch method per kernel.
        #[allow(non_snake_case)] // a field per kernel, named after it
        pub struct Module {
            __oxide_kernels: #rt::EmbeddedKernels,
            #(#fields: #rt::Function,)*
        }

        #loaders

        /// The loaded module under NVIDIA cuda-oxide's name for it.
        pub type LoadedModule = Module;

        #(#ptx_names)*

        #(#contract_items)*

        fn __oxide_bind(__kernels: #rt::EmbeddedKernels) -> ::core::result::Result<Module, #rt::DriverError> {
            ::core::result::Result::Ok(Module { #(#field_inits,)* __oxide_kernels: __kernels })
        }

        impl Module {
            /// The kernels of this module as loaded: the context and the bundles (manifests and
            /// payloads) they came from. (It replaced `bundle()`: a module's kernels may come from
            /// several bundles, e.g. a generic kernel's instance from its user's crate.)
            pub fn kernels(&self) -> &#rt::EmbeddedKernels {
                &self.__oxide_kernels
            }

            /// Writes `value` into the module-scope static `name` (a `ConstantMemory` static, by
            /// its item name), queued on `stream`, as `cuda_core::Module::write_global` does on a
            /// module loaded by hand; an error when no kernel of this module's device code reads
            /// it. A `#[constant]` static gets a typed `set_<name>` instead.
            pub fn write_global<T: #rt::DeviceCopy>(
                &self,
                stream: &#rt::CudaStream,
                name: &str,
                value: &T,
            ) -> ::core::result::Result<(), #rt::DriverError> {
                self.__oxide_kernels.write_global(stream, name, value)
            }

            /// The current value of the module-scope static `name`; waits for `stream`.
            pub fn read_global<T: #rt::DeviceCopy>(
                &self,
                stream: &#rt::CudaStream,
                name: &str,
            ) -> ::core::result::Result<T, #rt::DriverError> {
                self.__oxide_kernels.read_global(stream, name)
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

/// `kernels.function(key, name)` for kernel `k` instantiated with `turbofish`: the instance is
/// found by its key (`oxide_contract::naming::kernel_key` of its function item), so kernels of one
/// name in different modules or crates, and every instance of a generic kernel, are told apart.
pub fn lookup(k: &KernelDef, kernels: TokenStream, turbofish: TokenStream) -> TokenStream {
    let rt = rt();
    let ident = &k.ident;
    let name = ident.to_string();
    quote! {
        #kernels.function(
            #rt::kernel_key(&#ident #turbofish),
            ::core::concat!(::core::module_path!(), "::", #name),
        )
    }
}

/// `<kernel>_ptx_name::<..>()` for a generic kernel: the PTX entry name of one instance (NVIDIA
/// cuda-oxide's name for it). Naming the instance also makes the crate compile it.
fn ptx_name_fn(k: &KernelDef) -> TokenStream {
    let rt = rt();
    let ident = &k.ident;
    let name = format_ident!("{}_ptx_name", ident);
    let params = &k.generics.params;
    let where_clause = &k.generics.where_clause;
    let iparams = instance_params(&k.generics);
    let base = ident.to_string();
    let doc =
        format!(" The PTX entry name of the instance [`{base}`]`::<..>` (entries of generic kernels carry its key).");
    quote! {
        #[doc = #doc]
        #[allow(non_upper_case_globals)]
        pub fn #name<#params>() -> &'static str #where_clause {
            let __instance = #ident::<#(#iparams),*>;
            let _ = ::core::hint::black_box(__instance as *const ());
            #rt::generic_entry_name(#base, #rt::kernel_key(&__instance))
        }
    }
}

/// The macro that keeps generated async items only when cuda-host's `async` feature is on
/// (a proc macro cannot see features; cuda-host decides, see its `__if_async!`).
fn if_async() -> TokenStream {
    quote!(::cuda_device::__private::cuda_host::__if_async)
}
