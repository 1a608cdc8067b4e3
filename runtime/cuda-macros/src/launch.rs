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
                let ty = &p.ty;
                quote!(#name: #ty)
            }
            (ParamKind::Slice(e) | ParamKind::SliceMut(e) | ParamKind::Disjoint(e), Flavor::AsyncOwned) => {
                quote!(#name: #rt::DeviceBuffer<#e>)
            }
            (ParamKind::Slice(e), Flavor::Sync) => quote!(#name: &#rt::DeviceBuffer<#e>),
            (ParamKind::Slice(e), Flavor::Async) => quote!(#name: &#lifetime #rt::DeviceBuffer<#e>),
            (ParamKind::SliceMut(e) | ParamKind::Disjoint(e), Flavor::Sync) => {
                quote!(#name: &mut #rt::DeviceBuffer<#e>)
            }
            (ParamKind::SliceMut(e) | ParamKind::Disjoint(e), Flavor::Async) => {
                quote!(#name: &#lifetime mut #rt::DeviceBuffer<#e>)
            }
        }
    }

    /// The statement that adds `p` to the packet `__params` (contract §4).
    fn push(&self, p: &Param) -> TokenStream {
        let name = &p.name;
        let mutable = matches!(p.kind, ParamKind::SliceMut(_) | ParamKind::Disjoint(_));
        match (&p.kind, self.flavor) {
            (ParamKind::Value, Flavor::Sync) => quote!(__params.push_value(&#name);),
            (ParamKind::Value, _) => quote!(__params.push_value(#name.get());),
            (_, Flavor::Sync) if mutable => quote!(__params.push_slice_mut(#name);),
            (_, Flavor::Sync) => quote!(__params.push_slice(#name);),
            (_, Flavor::Async) if mutable => quote!(__params.push_slice_mut(&mut *#name);),
            (_, Flavor::Async) => quote!(__params.push_slice(#name);),
            (_, Flavor::AsyncOwned) if mutable => quote!(__params.push_slice_mut(&mut #name);),
            (_, Flavor::AsyncOwned) => quote!(__params.push_slice(&#name);),
        }
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

    /// The `#[cluster_launch]` dimensions as an `Option<(u32, u32, u32)>` expression.
    fn cluster(&self) -> TokenStream {
        match self.k.cluster {
            Some(c) => {
                let c = cluster_tokens(c);
                quote!(::core::option::Option::Some((#c)))
            }
            None => quote!(::core::option::Option::None),
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
        let ident = &k.ident;
        let method = self.method_name();
        let generics_decl = self.generics_decl();
        let where_clause = self.where_clause();
        let turbofish = self.turbofish();
        let unsafety = &k.unsafety;
        let args = k.params.iter().map(|p| self.arg(p));
        let pushes: Vec<TokenStream> = k.params.iter().map(|p| self.push(p)).collect();
        let function = self.function();
        let bounds_check = self.bounds_check();
        let cluster = self.cluster();
        let doc = self.doc();
        let safety = unsafety.map(
            |_| quote!(#[doc = ""] #[doc = " # Safety"] #[doc = " The kernel is `unsafe fn`: the caller upholds its contract."]),
        );
        // Naming the kernel instance puts it among this crate's mono items, so it is compiled.
        let name_instance = quote!(let _ = ::core::hint::black_box(#ident #turbofish as *const ()););
        let rt = rt();
        if self.flavor == Flavor::Sync {
            return quote! {
                #[doc = #doc]
                #safety
                #[allow(clippy::too_many_arguments, clippy::multiple_bound_locations, unused_mut)]
                pub #unsafety fn #method #generics_decl(
                    &self,
                    stream: &#rt::CudaStream,
                    config: #rt::LaunchConfig,
                    #(#args),*
                ) -> ::core::result::Result<(), #rt::DriverError> #where_clause {
                    #name_instance
                    #function
                    #bounds_check
                    let mut __params = #rt::KernelParams::new();
                    #(#pushes)*
                    // SAFETY: the packet follows the kernel's signature by construction (contract §4),
                    // and is checked against the manifest entry of the kernel as well.
                    unsafe { #rt::launch_with(__function, stream, &config, #cluster, &mut __params) }
                }
            };
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
        let rebind_mut =
            k.params.iter().filter(|p| owned && matches!(p.kind, ParamKind::SliceMut(_) | ParamKind::Disjoint(_))).map(
                |p| {
                    let name = &p.name;
                    quote!(let mut #name = #name;)
                },
            );
        let (output_ty, output) = self.async_output();
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

    /// What an async operation yields: `()` when borrowing; when owning, the buffers back (one
    /// alone, several as a tuple in parameter order).
    fn async_output(&self) -> (TokenStream, TokenStream) {
        let rt = rt();
        if self.flavor != Flavor::AsyncOwned {
            return (quote!(()), quote!(()));
        }
        let elems = self.buffer_elems();
        let names: Vec<&syn::Ident> =
            self.k.params.iter().filter(|p| !matches!(p.kind, ParamKind::Value)).map(|p| &p.name).collect();
        match elems.as_slice() {
            [] => (quote!(()), quote!(())),
            [e] => {
                let name = names[0];
                (quote!(#rt::DeviceBuffer<#e>), quote!(#name))
            }
            _ => (quote!((#(#rt::DeviceBuffer<#elems>),*)), quote!((#(#names),*))),
        }
    }
}
