//! `#[derive(DeviceCopy)]`: implements the `DeviceCopy` marker for a struct whose every field is `DeviceCopy`.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, GenericParam};

/// Expands the derive with `trait_path` naming `DeviceCopy` as the deriving crate reaches it
/// (`::cuda_core::DeviceCopy`, or through `cuda_device` for crates that depend only on it).
pub fn expand(item: TokenStream, trait_path: TokenStream) -> syn::Result<TokenStream> {
    let input: DeriveInput = syn::parse2(item)?;
    let fields = match &input.data {
        Data::Struct(s) => &s.fields,
        Data::Enum(e) => {
            return Err(syn::Error::new(
                e.enum_token.span(),
                "#[derive(DeviceCopy)] applies to structs: not every bit pattern is a valid enum value",
            ));
        }
        Data::Union(u) => {
            return Err(syn::Error::new(u.union_token.span(), "#[derive(DeviceCopy)] applies to structs, not unions"));
        }
    };
    let ident = &input.ident;
    // The bounds go to the where clause, beside any the struct has there.
    let mut generics = input.generics.clone();
    let tparams: Vec<syn::Ident> = generics
        .params
        .iter()
        .filter_map(|p| if let GenericParam::Type(t) = p { Some(t.ident.clone()) } else { None })
        .collect();
    let where_clause = generics.make_where_clause();
    for t in tparams {
        where_clause.predicates.push(syn::parse_quote!(#t: #trait_path));
    }
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    // One check per field, spanned at the field's type so that a field that is not DeviceCopy
    // is reported there ("the trait bound `&str: DeviceCopy` is not satisfied").
    let checks = fields.iter().map(|f| {
        let ty = &f.ty;
        quote_spanned!(ty.span()=> __field_is_device_copy::<#ty>();)
    });
    Ok(quote! {
        // SAFETY: every field is `DeviceCopy` (checked below) and the struct is `Copy` (the
        // trait's supertrait), so its bytes may be copied to and from the device.
        unsafe impl #impl_generics #trait_path for #ident #ty_generics #where_clause {}

        const _: () = {
            fn __field_is_device_copy<T: ?::core::marker::Sized + #trait_path>() {}
            #[allow(dead_code, clippy::extra_unused_type_parameters)]
            fn __check #impl_generics () #where_clause {
                #(#checks)*
            }
        };
    })
}
