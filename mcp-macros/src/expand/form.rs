//! `#[derive(Form)]`: an elicitation form (flat struct) or a string enum field.
//! `#[form(crate = "...")]` names the path of `mcp_runtime` for re-exporting crates.

use crate::errors::Errors;
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields};

/// The path given with `#[form(crate = "...")]`; a wrong option is recorded.
fn crate_path(input: &DeriveInput, errors: &mut Errors) -> Option<syn::Path> {
    let mut path = None;
    for attr in input.attrs.iter().filter(|a| a.path().is_ident("form")) {
        let parsed = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("crate") {
                let s: syn::LitStr = meta.value()?.parse()?;
                path = Some(s.parse()?);
                Ok(())
            } else {
                Err(meta.error("unknown `#[form]` option; the only option is `crate = \"...\"`"))
            }
        });
        if let Err(e) = parsed {
            errors.push(e);
        }
    }
    path
}

/// `#[form(...)]` on a field or a variant, where it would be ignored: its only option names
/// the crate path for the whole type.
fn misplaced_form_attrs(input: &DeriveInput, errors: &mut Errors) {
    let attrs: Vec<&syn::Attribute> = match &input.data {
        Data::Struct(s) => s.fields.iter().flat_map(|f| &f.attrs).collect(),
        Data::Enum(e) => e
            .variants
            .iter()
            .flat_map(|v| v.attrs.iter().chain(v.fields.iter().flat_map(|f| &f.attrs)))
            .collect(),
        Data::Union(u) => u.fields.named.iter().flat_map(|f| &f.attrs).collect(),
    };
    for attr in attrs.into_iter().filter(|a| a.path().is_ident("form")) {
        errors.spanned(
            attr,
            "`#[form]` goes on the struct or enum, not on a field or variant; its only option, `crate = \"...\"`, is for the whole type",
        );
    }
}

/// The marker impls (`ElicitForm` for a struct, `FormField` for an enum), also when the
/// derive reports errors: then the type's uses add none of their own, and only the
/// derive's errors show.
pub fn expand(item: TokenStream) -> TokenStream {
    let input: DeriveInput = match syn::parse2(item) {
        Ok(i) => i,
        Err(e) => return e.to_compile_error(),
    };
    let mut errors = Errors::new();
    let krate = super::krate(crate_path(&input, &mut errors).as_ref());
    misplaced_form_attrs(&input, &mut errors);
    let ident = &input.ident;
    let generic = !input.generics.params.is_empty();
    if generic {
        errors.spanned(
            &input.generics.params,
            "a form cannot be generic; its fields decide the form's schema, so their types must be concrete; remove the parameters, or write one form type per use",
        );
    }
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let body = match &input.data {
        Data::Struct(s) => {
            let checks: Vec<TokenStream> = match &s.fields {
                // One check per field, at its type: forms are flat. (A generic type's
                // fields are not checked: the check cannot name its parameters.)
                Fields::Named(fields) if !generic => fields
                    .named
                    .iter()
                    .map(|f| {
                        let ty = &f.ty;
                        quote_spanned!(ty.span()=> __mcp::assert_form_field::<#ty>();)
                    })
                    .collect(),
                Fields::Named(_) => Vec::new(),
                _ => {
                    errors.at(
                        s.fields.span(),
                        "a form is a struct with named fields; each field is one entry of the form; write `struct Name { field: Type, .. }`",
                    );
                    Vec::new()
                }
            };
            let checks = (!checks.is_empty()).then(|| {
                quote! {
                    #[allow(dead_code)]
                    fn __mcp_form_fields() {
                        #(#checks)*
                    }
                }
            });
            // A generic form (an error) still gets the impl, under the bounds the trait
            // needs, so that its uses add no error of their own.
            let bounds = generic.then(|| {
                let mut generics = input.generics.clone();
                generics.make_where_clause().predicates.push(syn::parse_quote!(
                    #ident #ty_generics: __mcp::DeserializeOwned + __mcp::JsonSchema + ::core::marker::Send
                ));
                generics.where_clause
            });
            let where_clause = match &bounds {
                Some(w) => quote!(#w),
                None => quote!(#where_clause),
            };
            quote! {
                #[automatically_derived]
                impl #impl_generics __mcp::ElicitForm for #ident #ty_generics #where_clause {}
                #checks
            }
        }
        Data::Enum(e) => {
            for v in e
                .variants
                .iter()
                .filter(|v| !matches!(v.fields, Fields::Unit))
            {
                errors.spanned(
                    &v.fields,
                    "a form field enum has unit variants only (it is a choice of strings); remove the fields, or make the enum a form of its own (a struct)",
                );
            }
            // serde's other enum representations make each variant an object, which no
            // form field is.
            if let Some(attr) = enum_representation(&input.attrs) {
                errors.spanned(
                    attr,
                    "a form field enum is a choice of strings: serde's `tag`, `content` and `untagged` make its values objects or nothing; remove it (rename values with `#[serde(rename = \"...\")]` or `rename_all`)",
                );
            }
            quote! {
                #[automatically_derived]
                impl #impl_generics __mcp::FormField for #ident #ty_generics #where_clause {}
            }
        }
        Data::Union(u) => {
            // No impl: a union derives neither `Deserialize` nor `JsonSchema`, which the
            // trait needs, so any impl would add errors of its own.
            errors.at(
                u.union_token.span,
                "a form is a struct with named fields, not a union; write `struct Name { field: Type, .. }`",
            );
            quote!()
        }
    };
    let errors = errors.finish();
    quote! {
        const _: () = {
            use #krate::__private as __mcp;
            #body
        };
        #errors
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
