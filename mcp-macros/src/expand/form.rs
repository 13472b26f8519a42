//! `#[derive(Form)]`: an elicitation form (flat struct) or a string enum field.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields};

pub fn expand(item: TokenStream) -> TokenStream {
    let input: DeriveInput = match syn::parse2(item) {
        Ok(i) => i,
        Err(e) => return e.to_compile_error(),
    };
    let ident = &input.ident;
    let p = quote!(::mcp_runtime::__private);
    if !input.generics.params.is_empty() {
        return syn::Error::new_spanned(&input.generics.params, "a form cannot be generic")
            .to_compile_error();
    }
    match &input.data {
        Data::Struct(s) => {
            let Fields::Named(fields) = &s.fields else {
                return syn::Error::new(
                    s.fields.span(),
                    "a form is a struct with named fields\n\n= help: each field is one entry of the form",
                )
                .to_compile_error();
            };
            // One check per field, at its type: forms are flat.
            let checks = fields.named.iter().map(|f| {
                let ty = &f.ty;
                quote_spanned!(ty.span()=> #p::assert_form_field::<#ty>();)
            });
            quote! {
                const _: () = {
                    #[automatically_derived]
                    impl #p::ElicitForm for #ident {}
                    #[allow(dead_code)]
                    fn __mcp_form_fields() {
                        #(#checks)*
                    }
                };
            }
        }
        Data::Enum(e) => {
            if let Some(v) = e
                .variants
                .iter()
                .find(|v| !matches!(v.fields, Fields::Unit))
            {
                return syn::Error::new_spanned(
                    &v.fields,
                    "a form field enum has unit variants only (it is a choice of strings)",
                )
                .to_compile_error();
            }
            quote! {
                #[automatically_derived]
                impl #p::FormField for #ident {}
            }
        }
        Data::Union(u) => {
            syn::Error::new(u.union_token.span, "a form is a struct").to_compile_error()
        }
    }
}
