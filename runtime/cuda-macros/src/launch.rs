//! The launch methods `#[cuda_module]` generates for each kernel: `<k>` (on a stream), `<k>_async`
//! (a lazy operation borrowing the buffers) and `<k>_async_owned` (taking and yielding them).
//! All three share one [`LaunchSig`]: the generic parameters, the instance the method names, the
//! function lookup, the launch-bounds and cluster checks, and the argument packet.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};

use crate::attrs::cluster_tokens;
use crate::kernel::{Param, ParamKind, instance_params, type_params};
use crate::module::{KernelDef, lookup, rt};

/// Which launch method is being generated.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// `fn k(&self, stream, config, args..) -> Result<(), DriverError>`.
    Sync,
    /// `fn k_async(&self, config, &bufs.., values..) -> Result<DeviceOperation<'op, ()>, _>`.
    Async,
    /// `fn k_async_owned(&self, config, bufs.., values..) -> Result<DeviceOperation<'static, bufs>, _>`.
    AsyncOwned,
}

/// What every launch method of one kernel shares.
pub struct LaunchSig<'k> {
    k: &'k KernelDef,
    flavor: Flavor,
    tparams: Vec<syn::Ident>,
    /// Type and const parameters: the turbofish naming the instance.
    iparams: Vec<syn::Ident>,
    /// The lifetime of the borrowed buffers of `_async`.
    op_lifetime: syn::Lifetime,
}

/// The method parameters and packet pushes of a launch method.
fn args_and_pushes(sig: &LaunchSig<'_>) -> (Vec<TokenStream>, Vec<TokenStream>) {
    (sig.k.params.iter().map(|p| sig.arg(p)).collect(), sig.k.params.iter().map(|p| sig.push(p)).collect())
}

/// `__<kernel>_CudaKernel`: the type `PreparedLaunch` is branded with (one per kernel; a generic
/// kernel's launch methods still look up their own instance).
fn marker_name(k: &KernelDef) -> syn::Ident {
    format_ident!("__{}_CudaKernel", k.ident)
}

fn config_type(domain: u8) -> TokenStream {
    match domain {
        1 => quote!(LaunchConfig1D),
        2 => quote!(LaunchConfig2D),
        _ => quote!(LaunchConfig3D),
    }
}

/// The marker type of a `#[launch_contract]` kernel and its `KernelLaunchContract` impl.
pub fn contract_marker(k: &KernelDef) -> TokenStream {
    let rt = rt();
    let marker = marker_name(k);
    let c = &k.contract.as_ref().expect("contracted kernel").contract;
    let config_ty = config_type(c.domain);
    let name = k.ident.to_string();
    let block = match c.block {
        Some([x, y, z]) => quote!(#rt::BlockRequirement::Exact((#x, #y, #z))),
        None => {
            let max = k.launch_bounds.map_or(oxide_contract::limits::MAX_THREADS_PER_BLOCK, |b| b.max_threads);
            quote!(#rt::BlockRequirement::MaxThreads(#max))
        }
    };
    let [min, max] = c.dynamic_shared;
    let align = c.dynamic_shared_alignment;
    let shared = if min == max {
        quote!(#rt::DynamicSharedMemoryRequirement::Exact { bytes: #min, min_alignment: #align })
    } else {
        quote!(#rt::DynamicSharedMemoryRequirement::Range { min_bytes: #min, max_bytes: #max, min_alignment: #align })
    };
    let mut spec = quote!(#rt::LaunchContractSpec::new(#name, #block, #shared));
    if let Some([x, y, z]) = k.cluster {
        spec = quote!(#spec.with_cluster((#x, #y, #z)));
    }
    if k.cooperative {
        spec = quote!(#spec.with_cooperative());
    }
    if let Some([major, minor]) = c.min_compute_capability {
        spec = quote!(#spec.with_min_compute_capability(#major, #minor));
    }
    if c.u32_coordinates {
        spec = quote!(#spec.with_u32_coordinates());
    }
    let doc = format!(" The launch contract of kernel [`{name}`] (what `prepare_{name}` checks).");
    quote! {
        #[doc = #doc]
        #[allow(non_camel_case_types)]
        pub enum #marker {}

        impl #rt::KernelLaunchContract for #marker {
            type Config = #rt::#config_ty;
            const SPEC: #rt::LaunchContractSpec = #spec;
        }
    }
}

/// The name of the `Module` field holding a non-generic kernel's function.
pub fn field_name(k: &KernelDef) -> syn::Ident {
    format_ident!("__oxide_kernel_{}", k.ident)
}

impl<'k> LaunchSig<'k> {
    pub fn new(k: &'k KernelDef, flavor: Flavor) -> LaunchSig<'k> {
        LaunchSig {
            k,
            flavor,
            tparams: type_params(&k.generics),
            iparams: instance_params(&k.generics),
            op_lifetime: syn::Lifetime::new("'__oxide_op", Span::call_site()),
        }
    }

    fn method_name(&self) -> syn::Ident {
        let ident = &self.k.ident;
        match self.flavor {
            Flavor::Sync => ident.clone(),
            Flavor::Async => format_ident!("{}_async", ident),
            Flavor::AsyncOwned => format_ident!("{}_async_owned", ident),
        }
    }

    fn is_async(&self) -> bool {
        self.flavor != Flavor::Sync
    }

    /// `<T, F>` (plus the buffers' lifetime for `_async`).
    fn generics_decl(&self) -> TokenStream {
        let params = &self.k.generics.params;
        let lifetime = &self.op_lifetime;
        match (self.flavor == Flavor::Async, params.is_empty()) {
            (false, true) => quote!(),
            (false, false) => quote!(<#params>),
            (true, true) => quote!(<#lifetime>),
            (true, false) => quote!(<#lifetime, #params>),
        }
    }

    /// The kernel's own predicates; for the async methods, type parameters that outlive the
    /// operation and buffers whose elements may cross to the thread that runs it. (Kernel
    /// instances are found by a key that ignores lifetimes, so no `'static` is needed otherwise.)
    fn where_clause(&self) -> TokenStream {
        let predicates: Vec<_> = self.k.generics.where_clause.iter().flat_map(|w| w.predicates.iter()).collect();
        let tparams = &self.tparams;
        let outlives = match self.flavor {
            Flavor::Sync => {
                if self.k.generics.where_clause.is_none() {
                    return quote!();
                }
                return quote!(where #(#predicates,)*);
            }
            Flavor::Async => {
                let l = &self.op_lifetime;
                quote!(#l)
            }
            Flavor::AsyncOwned => quote!('static),
        };
        let elems = self.buffer_elems();
        quote!(where #(#predicates,)* #(#tparams: #outlives,)* #(#elems: ::core::marker::Send + ::core::marker::Sync,)*)
    }

    fn turbofish(&self) -> TokenStream {
        let iparams = &self.iparams;
        if iparams.is_empty() { quote!() } else { quote!(::<#(#iparams),*>) }
    }

    /// Element types of the buffer parameters, in order.
    fn buffer_elems(&self) -> Vec<&'k syn::Type> {
        self.k.params.iter().filter_map(|p| p.kind.elem()).collect()
    }

    /// The method parameter for kernel parameter `p`.
    fn arg(&self, p: &Param) -> TokenStream {
        let rt = rt();
        let name = &p.name;
        let lifetime = &self.op_lifetime;
        match (&p.kind, self.flavor) {
            (ParamKind::Value, _) => {
                // `Uniform<T>` (NVIDIA's spelling for a launch-wide value) is `repr(transparent)`
                // over `T`: the host passes the bare `T`, as NVIDIA's launchers take it.
                let ty = uniform_inner(&p.ty).unwrap_or(&p.ty);
                quote!(#name: #ty)
            }
            (ParamKind::RowWidth(e), Flavor::Sync) => quote!(#name: #rt::RowWidth<'_, #e>),
            (ParamKind::RowWidth(e), Flavor::Async) => quote!(#name: #rt::RowWidth<#lifetime, #e>),
            (ParamKind::RowWidth(e), Flavor::AsyncOwned) => quote!(#name: #rt::RowWidthOwned<#rt::DeviceBuffer<#e>>),
            (ParamKind::Slice(e) | ParamKind::SliceMut(e) | ParamKind::Disjoint(e), Flavor::AsyncOwned) => {
                quote!(#name: #rt::DeviceBuffer<#e>)
            }
            // Our `DeviceBuffer` or cudarc's slices and views (`cuda_core::KernelSlice`).
            (ParamKind::Slice(e), Flavor::Sync) => quote!(#name: &impl #rt::KernelSlice<#e>),
            (ParamKind::Slice(e), Flavor::Async) => quote!(#name: &#lifetime #rt::DeviceBuffer<#e>),
            (ParamKind::SliceMut(e) | ParamKind::Disjoint(e), Flavor::Sync) => {
                quote!(#name: &mut impl #rt::KernelSliceMut<#e>)
            }
            (ParamKind::SliceMut(e) | ParamKind::Disjoint(e), Flavor::Async) => {
                quote!(#name: &#lifetime mut #rt::DeviceBuffer<#e>)
            }
        }
    }

    /// The statement that adds `p` to the packet `__params` (contract §4).
    fn push(&self, p: &Param) -> TokenStream {
        let name = &p.name;
        let mutable = matches!(p.kind, ParamKind::SliceMut(_) | ParamKind::Disjoint(_) | ParamKind::RowWidth(_));
        match (&p.kind, self.flavor) {
            (ParamKind::RowWidth(_), Flavor::Sync) => quote! {
                let mut #name = #name;
                let (__buffer, __width) = #name.__parts();
                __params.push_slice_row_width(__buffer, __width);
            },
            (ParamKind::RowWidth(_), _) => quote! {
                let (__buffer, __width) = #name.__parts();
                __params.push_slice_row_width(__buffer, __width);
            },
            (ParamKind::Value, Flavor::Sync) => quote!(__params.push_value(&#name);),
            (ParamKind::Value, _) => quote!(__params.push_value(#name.get());),
            (_, Flavor::Sync) => {
                let param = slice_param_name(name);
                quote!(__params.push_slice_param(&#param);)
            }
            (_, Flavor::Async) if mutable => quote!(__params.push_slice_mut(&mut *#name);),
            (_, Flavor::Async) => quote!(__params.push_slice(#name);),
            (_, Flavor::AsyncOwned) if mutable => quote!(__params.push_slice_mut(&mut #name);),
            (_, Flavor::AsyncOwned) => quote!(__params.push_slice(&#name);),
        }
    }

    /// For the stream method: the statements that turn each slice argument into its
    /// `SliceParam` for the launch stream `__on`, which must outlive the packet.
    fn slice_params(&self) -> Vec<TokenStream> {
        let rt = rt();
        self.k
            .params
            .iter()
            .filter_map(|p| {
                let name = &p.name;
                let param = slice_param_name(name);
                match &p.kind {
                    ParamKind::Slice(e) => Some(quote!(let #param = #rt::KernelSlice::<#e>::slice_param(#name, __on);)),
                    ParamKind::SliceMut(e) | ParamKind::Disjoint(e) => {
                        Some(quote!(let #param = #rt::KernelSliceMut::<#e>::slice_param_mut(#name, __on);))
                    }
                    ParamKind::Value | ParamKind::RowWidth(_) => None,
                }
            })
            .collect()
    }

    /// Binds `__function`: a `Module` field for a plain kernel, a lookup by key for an instance of
    /// a generic one (owned by the async operation, borrowed by the sync method).
    fn function(&self) -> TokenStream {
        let rt = rt();
        let owned = self.is_async();
        if self.iparams.is_empty() {
            let field = field_name(self.k);
            return if owned {
                quote!(let __function: #rt::Function = ::core::clone::Clone::clone(&self.#field);)
            } else {
                quote!(let __function = &self.#field;)
            };
        }
        let lookup = lookup(self.k, quote!(self.__oxide_kernels), self.turbofish());
        if owned { quote!(let __function: #rt::Function = #lookup?;) } else { quote!(let __function = &#lookup?;) }
    }

    /// The `#[launch_bounds]` check of the config (none without the attribute).
    fn bounds_check(&self) -> Option<TokenStream> {
        let rt = rt();
        let entry = self.k.ident.to_string();
        self.k.launch_bounds.map(|b| {
            let max = b.max_threads;
            let min = match b.min_blocks {
                Some(m) => quote!(::core::option::Option::Some(#m)),
                None => quote!(::core::option::Option::None),
            };
            quote!(config.check_launch_bounds(#entry, &#rt::LaunchBounds { max_threads: #max, min_blocks: #min })?;)
        })
    }

    /// The `#[cluster_launch]` dimensions and `#[cooperative_launch]` as a `LaunchOptions` expression.
    fn launch_options(&self) -> TokenStream {
        let rt = rt();
        let cluster = match self.k.cluster {
            Some(c) => {
                let c = cluster_tokens(c);
                quote!(::core::option::Option::Some((#c)))
            }
            None => quote!(::core::option::Option::None),
        };
        let cooperative = self.k.cooperative;
        quote!(#rt::LaunchOptions { cluster: #cluster, cooperative: #cooperative })
    }

    /// A statement that names the kernel instance, which puts it among this crate's mono items,
    /// so it is compiled.
    fn name_instance(&self) -> TokenStream {
        let ident = &self.k.ident;
        let turbofish = self.turbofish();
        quote!(let _ = ::core::hint::black_box(#ident #turbofish as *const ());)
    }

    /// An expression that marshals the kernel's arguments (`pushes`) into a parameter packet and
    /// launches `function` on `stream` with `config` and the launch options (cluster, cooperative); its
    /// value is the launch's `Result<(), DriverError>`. Every launch method builds its packet here.
    fn launch_packet(&self, pushes: &[TokenStream], function: TokenStream, stream: TokenStream) -> TokenStream {
        let rt = rt();
        let options = self.launch_options();
        if self.flavor == Flavor::Sync {
            // On any `LaunchStream`; slices through `KernelSlice(Mut)`, their params declared
            // before the packet that points into them.
            let slice_params = self.slice_params();
            return quote! {{
                let __on = #rt::LaunchStream::cudarc_stream(#stream);
                let _ = __on;
                #(#slice_params)*
                let mut __params = #rt::KernelParams::new();
                #(#pushes)*
                // SAFETY: the packet follows the kernel's signature by construction (contract §4)
                // and is checked against the kernel's manifest entry (and its launch contract) as
                // well; the slices are borrowed until the launch is queued, and stream-ordered
                // frees (ours wait for the device; cudarc's record the use) keep them until it ran.
                unsafe { #rt::launch_on(#function, #stream, &config, #options, &mut __params) }
            }};
        }
        quote! {{
            let mut __params = #rt::KernelParams::new();
            #(#pushes)*
            // SAFETY: the packet follows the kernel's signature by construction (contract §4) and
            // is checked against the kernel's manifest entry (and its launch contract) as well; the
            // buffers are borrowed, or owned by the operation, until the launch has completed.
            unsafe { #rt::launch_with_options(#function, #stream, &config, #options, &mut __params) }
        }}
    }

    /// A launch method on a raw `LaunchConfig` (the plain one, or a contracted kernel's
    /// `_unchecked`): `attrs` (its docs), `unsafety`, `name`, then the same body.
    fn raw_config_method(
        &self,
        attrs: TokenStream,
        unsafety: TokenStream,
        name: &syn::Ident,
        args: &[TokenStream],
        pushes: &[TokenStream],
    ) -> TokenStream {
        let rt = rt();
        let generics_decl = self.generics_decl();
        let where_clause = self.where_clause();
        let name_instance = self.name_instance();
        let function = self.function();
        let bounds_check = self.bounds_check();
        let launch = self.launch_packet(pushes, quote!(__function), quote!(stream));
        quote! {
            #attrs
            #[allow(clippy::too_many_arguments, clippy::multiple_bound_locations, unused_mut)]
            pub #unsafety fn #name #generics_decl(
                &self,
                stream: &(impl #rt::LaunchStream + ?Sized),
                config: #rt::LaunchConfig,
                #(#args),*
            ) -> ::core::result::Result<(), #rt::DriverError> #where_clause {
                #name_instance
                #function
                #bounds_check
                #launch
            }
        }
    }

    fn doc(&self) -> String {
        let entry = self.k.ident.to_string();
        match self.flavor {
            Flavor::Sync => format!(
                " Launches kernel [`{entry}`] on `stream` with `config`. `Ok` means queued, not finished: \
                 synchronize the stream to see errors raised while it runs."
            ),
            Flavor::Async => format!(
                " A lazy launch of kernel [`{entry}`]; the buffers stay borrowed until it has completed. \
                 Runs with `.sync()` or `.await` on a stream the scheduling policy picks."
            ),
            Flavor::AsyncOwned => format!(
                " A lazy launch of kernel [`{entry}`] that owns its buffers and yields them back when it \
                 has completed. Runs with `.sync()` or `.await` on a stream the scheduling policy picks."
            ),
        }
    }

    /// The whole method.
    pub fn method(&self) -> TokenStream {
        let k = self.k;
        let method = self.method_name();
        let generics_decl = self.generics_decl();
        let where_clause = self.where_clause();
        let unsafety = &k.unsafety;
        let (args, pushes) = args_and_pushes(self);
        let function = self.function();
        let bounds_check = self.bounds_check();
        let doc = self.doc();
        let safety = unsafety.map(
            |_| quote!(#[doc = ""] #[doc = " # Safety"] #[doc = " The kernel is `unsafe fn`: the caller upholds its contract."]),
        );
        let name_instance = self.name_instance();
        let rt = rt();
        if self.flavor == Flavor::Sync && k.contract.is_some() {
            return self.contracted(&args, &pushes);
        }
        if self.flavor == Flavor::Sync {
            return self.raw_config_method(quote!(#[doc = #doc] #safety), quote!(#unsafety), &method, &args, &pushes);
        }
        let ops = quote!(#rt::cuda_async::device_operation);
        let owned = self.flavor == Flavor::AsyncOwned;
        let op_lifetime = if owned {
            quote!('static)
        } else {
            let l = &self.op_lifetime;
            quote!(#l)
        };
        let values = k.params.iter().filter(|p| matches!(p.kind, ParamKind::Value));
        let wrap_values = values.map(|p| {
            let name = &p.name;
            quote!(let #name = #rt::cuda_async::__private::KernelValue::new(#name);)
        });
        let rebind_mut = k
            .params
            .iter()
            .filter(|p| {
                matches!(p.kind, ParamKind::RowWidth(_))
                    || (owned && matches!(p.kind, ParamKind::SliceMut(_) | ParamKind::Disjoint(_)))
            })
            .map(|p| {
                let name = &p.name;
                quote!(let mut #name = #name;)
            });
        let (output_ty, output) = self.async_output();
        let async_launch = self.launch_packet(&pushes, quote!(&__function), quote!(__exec.stream()));
        quote! {
            #[doc = #doc]
            #safety
            #[allow(clippy::too_many_arguments, clippy::type_complexity, clippy::multiple_bound_locations, unused_mut)]
            pub #unsafety fn #method #generics_decl(
                &self,
                config: #rt::LaunchConfig,
                #(#args),*
            ) -> ::core::result::Result<#ops::DeviceOperation<#op_lifetime, #output_ty>, #rt::DriverError> #where_clause {
                #name_instance
                #function
                config.validate()?;
                #bounds_check
                #(#wrap_values)*
                let __device = __function.context().ordinal();
                ::core::result::Result::Ok(#ops::DeviceOperation::new(__device, move |__exec: &#ops::ExecutionContext| {
                    #(#rebind_mut)*
                    #async_launch?;
                    ::core::result::Result::Ok(#output)
                }))
            }
        }
    }

    /// For a `#[launch_contract]` kernel: `prepare_<k>[_for]`, the launch `<k>(&stream, &prepared,
    /// args..)` that checks the `requires` relations, and the raw `unsafe fn <k>_unchecked`.
    fn contracted(&self, args: &[TokenStream], pushes: &[TokenStream]) -> TokenStream {
        let rt = rt();
        let k = self.k;
        let ident = &k.ident;
        let contract = k.contract.as_ref().expect("contracted kernel");
        let marker = marker_name(k);
        let prepare = format_ident!("prepare_{}", ident);
        let prepare_for = format_ident!("prepare_{}_for", ident);
        let unchecked = format_ident!("{}_unchecked", ident);
        let config_ty = config_type(contract.contract.domain);
        let generics_decl = self.generics_decl();
        let where_clause = self.where_clause();
        let turbofish = self.turbofish();
        let unsafety = &k.unsafety;
        let name_instance = self.name_instance();
        let function = self.function();
        let launch = self.launch_packet(pushes, quote!(__function), quote!(stream));
        let owned_function = if self.iparams.is_empty() {
            let field = field_name(k);
            quote!(let __function: #rt::Function = ::core::clone::Clone::clone(&self.#field);)
        } else {
            let lookup = lookup(k, quote!(self.__oxide_kernels), self.turbofish());
            quote!(let __function: #rt::Function = #lookup?;)
        };
        let bounds_check = self.bounds_check();
        let entry = ident.to_string();
        let requires = contract.requires.iter().map(|r| r.check(&quote!(#rt), &entry));
        let witnesses: Vec<TokenStream> = self
            .tparams
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let w = format_ident!("__witness{}", i);
                quote!(#w: &#t)
            })
            .collect();
        let prepare_for_fn = (!self.tparams.is_empty()).then(|| {
            quote! {
                /// [`Self::#prepare`] for the instance whose type parameters are those of the given
                /// values (a closure, say), in order.
                #[allow(clippy::multiple_bound_locations)]
                pub fn #prepare_for #generics_decl(
                    &self,
                    #(#witnesses,)*
                    config: #rt::#config_ty,
                ) -> ::core::result::Result<#rt::PreparedLaunch<#marker>, #rt::LaunchContractError> #where_clause {
                    self.#prepare #turbofish(config)
                }
            }
        });
        let doc_prepare = format!(
            " Checks `config` against the launch contract of kernel [`{entry}`], the GPU and the compiled kernel, for `{ident}(&stream, &prepared, ..)`."
        );
        let doc_launch = format!(
            " Launches kernel [`{entry}`] with a config [`Self::{prepare}`] checked; checks the contract's `requires` relations first. `Ok` means queued."
        );
        let safety = match unsafety {
            Some(_) => {
                quote!(#[doc = ""] #[doc = " # Safety"] #[doc = " The kernel is `unsafe fn`: the caller upholds its contract."])
            }
            None => quote!(),
        };
        let unchecked_method = self.raw_config_method(
            quote! {
                /// Launches the kernel with a raw `LaunchConfig`, skipping `prepare` and the `requires`
                /// relations (the kernel's manifest entry still checks the launch shape).
                ///
                /// # Safety
                /// The contract's `requires` relations hold for these arguments, and the kernel's own
                /// safety contract (for an `unsafe fn` kernel) is upheld.
            },
            quote!(unsafe),
            &unchecked,
            args,
            pushes,
        );
        quote! {
            #[doc = #doc_prepare]
            #[allow(clippy::multiple_bound_locations)]
            pub fn #prepare #generics_decl(
                &self,
                config: #rt::#config_ty,
            ) -> ::core::result::Result<#rt::PreparedLaunch<#marker>, #rt::LaunchContractError> #where_clause {
                #name_instance
                #owned_function
                // SAFETY: `__function` is this kernel, whose contract `#marker` describes.
                unsafe { #rt::PreparedLaunch::<#marker>::__prepare(__function, config) }
            }

            #prepare_for_fn

            #[doc = #doc_launch]
            #safety
            #[allow(clippy::too_many_arguments, clippy::multiple_bound_locations, unused_mut)]
            pub #unsafety fn #ident #generics_decl(
                &self,
                stream: &(impl #rt::LaunchStream + ?Sized),
                prepared: &#rt::PreparedLaunch<#marker>,
                #(#args),*
            ) -> ::core::result::Result<(), #rt::LaunchContractError> #where_clause {
                #name_instance
                #function
                prepared.validate_stream(stream)?;
                #(#requires)*
                let config = prepared.config();
                #bounds_check
                #launch?;
                ::core::result::Result::Ok(())
            }

            #unchecked_method
        }
    }

    /// What an async operation yields: `()` when borrowing; when owning, the buffers back (one
    /// alone, several as a tuple in parameter order).
    fn async_output(&self) -> (TokenStream, TokenStream) {
        let rt = rt();
        if self.flavor != Flavor::AsyncOwned {
            return (quote!(()), quote!(()));
        }
        let buffers: Vec<&Param> = self.k.params.iter().filter(|p| !matches!(p.kind, ParamKind::Value)).collect();
        let names: Vec<&syn::Ident> = buffers.iter().map(|p| &p.name).collect();
        let tys: Vec<TokenStream> = buffers
            .iter()
            .map(|p| match &p.kind {
                ParamKind::RowWidth(e) => quote!(#rt::RowWidthOwned<#rt::DeviceBuffer<#e>>),
                kind => {
                    let e = kind.elem();
                    quote!(#rt::DeviceBuffer<#e>)
                }
            })
            .collect();
        match (tys.as_slice(), names.as_slice()) {
            ([], _) => (quote!(()), quote!(())),
            ([t], [name]) => (quote!(#t), quote!(#name)),
            _ => (quote!((#(#tys),*)), quote!((#(#names),*))),
        }
    }
}

/// The local holding slice argument `name`'s `SliceParam` in a stream method.
fn slice_param_name(name: &syn::Ident) -> syn::Ident {
    format_ident!("__oxide_slice_{}", name)
}

/// `T` of a parameter type spelled `Uniform<T>` (any path ending so, e.g. `cuda_device::Uniform<u32>`).
fn uniform_inner(ty: &syn::Type) -> Option<&syn::Type> {
    let syn::Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    if last.ident != "Uniform" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else { return None };
    match args.args.iter().collect::<Vec<_>>().as_slice() {
        [syn::GenericArgument::Type(t)] => Some(t),
        _ => None,
    }
}
