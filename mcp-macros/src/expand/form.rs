//! `#[derive(Form)]`: an elicitation form (flat struct) or a string enum field.
//! `#[form(crate = "...")]` names the path of `mcp_runtime` for re-exporting crates.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields};

/// The path given with `#[form(crate = "...")]`.
fn crate_path(input: &DeriveInput) -> syn::Result<Option<syn::Path>> {
    let mut path = None;
    for attr in input.attrs.iter().filter(|a| a.path().is_ident("form")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("crate") {
                let s: syn::LitStr = meta.value()?.parse()?;
                path = Some(s.parse()?);
                Ok(())
            } else {
                Err(meta.error("unknown `#[form]` option; the only option is `crate = \"...\"`"))
            }
        })?;
    }
    Ok(path)
}

pub fn expand(item: TokenStream) -> TokenStream {
    let input: DeriveInput = match syn::parse2(item) {
        Ok(i) => i,
        Err(e) => return e.to_compile_error(),
    };
    let krate = match crate_path(&input) {
        Ok(p) => super::krate(p.as_ref()),
        Err(e) => return e.to_compile_error(),
    };
    let ident = &input.ident;
    if !input.generics.params.is_empty() {
        return syn::Error::new_spanned(&input.generics.params, "a form cannot be generic")
            .to_compile_error();
    }
    let body = match &input.data {
        Data::Struct(s) => {
            let Fields::Named(fields) = &s.fields else {
                return syn::Error::new(
                    s.fields.span(),
                    "a form is a struct with named fields; each field is one entry of the form",
                )
                .to_compile_error();
            };
            // One check per field, at its type: forms are flat.
            let checks = fields.named.iter().map(|f| {
                let ty = &f.ty;
                quote_spanned!(ty.span()=> __mcp::assert_form_field::<#ty>();)
            });
            quote! {
                #[automatically_derived]
                impl __mcp::ElicitForm for #ident {}
                #[allow(dead_code)]
                fn __mcp_form_fields() {
                    #(#checks)*
                }
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
            // serde's other enum representations make each variant an object, which no
            // form field is.
            if let Some(attr) = enum_representation(&input.attrs) {
                return syn::Error::new_spanned(
                    attr,
                    "a form field enum is a choice of strings: serde's `tag`, `content` and `untagged` make its values objects or nothing; remove it (rename values with `#[serde(rename = \"...\")]` or `rename_all`)",
                )
                .to_compile_error();
            }
            quote! {
                #[automatically_derived]
                impl __mcp::FormField for #ident {}
            }
        }
        Data::Union(u) => {
            return syn::Error::new(u.union_token.span, "a form is a struct").to_compile_error();
        }
    };
    quote! {
        const _: () = {
            use #krate::__private as __mcp;
            #body
        };
    }
}

/// The `#[serde(tag = ..)]`, `#[serde(content = ..)]` or `#[serde(untagged)]` among an
/// enum's attributes, if any.
fn enum_representation(attrs: &[syn::Attribute]) -> Option<&syn::Attribute> {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("serde"))
        .find(|a| {
            let mut found = false;
            let _ = a.parse_nested_meta(|m| {
                if m.path.is_ident("tag")
                    || m.path.is_ident("content")
                    || m.path.is_ident("untagged")
                {
                    found = true;
                }
                // Skip the value of `key = value` options; nested lists are not read.
                if m.input.peek(syn::Token![=]) {
                    let _: syn::Expr = m.value()?.parse()?;
                }
                Ok(())
            });
            found
        })
}
