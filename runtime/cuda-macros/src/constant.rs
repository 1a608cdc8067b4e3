//! `#[constant]` (NVIDIA cuda-oxide's marker of a constant-memory static) and the
//! `set_<name>` / `set_<name>_blocking` methods `#[cuda_module]` generates for each one.
//!
//! What makes a static constant memory is its type, `cuda_device::ConstantMemory<T>` (the
//! compiler places it in `.const` by that alone); the attribute only checks the type and asks
//! for the host setters, so there is one owner of the fact.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Attribute, Item, ItemStatic, StaticMutability};

use crate::module::rt;

/// A `#[constant]` static of a `#[cuda_module]`.
pub struct ConstantDef {
    ident: syn::Ident,
    ty: syn::Type,
}

/// `true` for `#[constant]` (by the last segment of its path, as our other markers).
pub fn is_constant_attr(attr: &Attribute) -> bool {
    attr.path().segments.last().is_some_and(|s| s.ident == "constant")
}

/// The attribute itself: checks the static and leaves it as written.
pub fn expand(attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    if !attr.is_empty() {
        return Err(syn::Error::new(attr.span(), "#[constant] takes no arguments"));
    }
    let s: ItemStatic = match syn::parse2::<Item>(item)? {
        Item::Static(s) => s,
        other => {
            return Err(syn::Error::new(
                other.span(),
                "#[constant] applies to a `static NAME: ConstantMemory<T> = ConstantMemory::UNINIT;`",
            ));
        }
    };
    let def = check(&s)?;
    let ty = &def.ty;
    // The type must be `ConstantMemory<T>` (an alias of it is fine); the error points at it.
    let type_check = quote_spanned! {ty.span()=>
        const _: () = {
            fn __oxide_constant_memory<S: ::cuda_device::constant::ConstantStatic>() {}
            let _ = __oxide_constant_memory::<#ty>;
        };
    };
    Ok(quote!(#s #type_check))
}

/// Checks a `#[constant]` static and describes it.
pub fn check(s: &ItemStatic) -> syn::Result<ConstantDef> {
    if let StaticMutability::Mut(m) = &s.mutability {
        return Err(syn::Error::new(
            m.span(),
            "a #[constant] static is written by the host between launches and only read by kernels: \
             declare it without `mut` (`ConstantMemory` gives it interior mutability)",
        ));
    }
    Ok(ConstantDef { ident: s.ident.clone(), ty: (*s.ty).clone() })
}

/// `impl Module { fn set_<name>(..); fn set_<name>_blocking(..) }` for the module's constants.
pub fn setters(constants: &[ConstantDef]) -> TokenStream {
    if constants.is_empty() {
        return TokenStream::new();
    }
    let rt = rt();
    let methods = constants.iter().map(|c| {
        let name = c.ident.to_string();
        let ty = &c.ty;
        let set = format_ident!("set_{}", name.to_lowercase());
        let blocking = format_ident!("set_{}_blocking", name.to_lowercase());
        let doc = format!(
            " Writes `value` into the constant-memory static `{name}`, queued on `stream`: launches \
             queued after it on `stream` read it (`value` may be dropped at once)."
        );
        let doc_blocking =
            format!(" Writes `value` into the constant-memory static `{name}` and waits until it is there.");
        quote! {
            #[doc = #doc]
            pub fn #set(
                &self,
                stream: &#rt::CudaStream,
                value: &<#ty as ::cuda_device::constant::ConstantStatic>::Value,
            ) -> ::core::result::Result<(), #rt::DriverError> {
                self.__oxide_kernels.write_constant(stream, #name, value)
            }

            #[doc = #doc_blocking]
            pub fn #blocking(
                &self,
                value: &<#ty as ::cuda_device::constant::ConstantStatic>::Value,
            ) -> ::core::result::Result<(), #rt::DriverError> {
                let __stream = self.__oxide_kernels.context().default_stream();
                self.__oxide_kernels.write_constant(&__stream, #name, value)?;
                __stream.synchronize()
            }
        }
    });
    quote! {
        /// Host writes of this module's `#[constant]` statics.
        impl Module {
            #(#methods)*
        }
    }
}
