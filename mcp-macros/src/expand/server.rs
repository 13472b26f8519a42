//! `#[server]` on an inherent `impl`: the impl, with `#[tool]` attributes removed, plus an
//! `impl Provider` listing one `ToolDef` per tool method.

use crate::attr::ToolArgs;
use crate::check;
use crate::model::{Site, ToolFn};
use darling::FromMeta;
use darling::ast::NestedMeta;
use proc_macro2::TokenStream;
use quote::quote;
use syn::{ImplItem, Meta};

/// `#[tool]`, `#[mcp_runtime::tool]` and `#[::mcp_runtime::tool]` mark tool methods.
fn is_tool_attr(attr: &syn::Attribute) -> bool {
    let segs: Vec<String> = attr
        .path()
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    matches!(
        segs.iter().map(String::as_str).collect::<Vec<_>>()[..],
        ["tool"] | ["mcp_runtime", "tool"]
    )
}

pub fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut imp: syn::ItemImpl = match syn::parse2(item.clone()) {
        Ok(i) => i,
        Err(e) => {
            let e = syn::Error::new(
                e.span(),
                format!("{e}\n\n= note: `#[server]` goes on an `impl` block"),
            );
            let e = e.to_compile_error();
            return quote!(#item #e);
        }
    };
    let mut errors = darling::Error::accumulator();
    if let Some(first) = args.clone().into_iter().next() {
        errors.push(darling::Error::from(syn::Error::new(
            first.span(),
            "`#[server]` takes no options\n\n= help: put options on each method's `#[tool(...)]`",
        )));
    }
    if let Some((path, _)) = &imp.trait_ {
        errors.push(crate::errors::spanned(
            path,
            "`#[server]` goes on an inherent `impl` block, not a trait impl\n\n= help: write `impl MyServer { ... }`",
        ));
    }
    if !imp.generics.params.is_empty() {
        errors.push(crate::errors::spanned(
            &imp.generics.params,
            "a `#[server]` type cannot be generic\n\n= help: wrap the generic value in a concrete type",
        ));
    }

    let mut tools = Vec::new();
    let mut saw_tool = false;
    for item in &mut imp.items {
        let ImplItem::Fn(method) = item else { continue };
        let Some(pos) = method.attrs.iter().position(is_tool_attr) else {
            continue;
        };
        saw_tool = true;
        let attr = method.attrs.remove(pos);
        let args = match &attr.meta {
            Meta::Path(_) => Some(ToolArgs::default()),
            Meta::List(list) => match NestedMeta::parse_meta_list(list.tokens.clone()) {
                Ok(l) => errors.handle(ToolArgs::from_list(&l)),
                Err(e) => {
                    errors.push(e.into());
                    None
                }
            },
            Meta::NameValue(nv) => {
                errors.push(
                    darling::Error::custom("expected `#[tool]` or `#[tool(...)]`").with_span(nv),
                );
                None
            }
        };
        let attrs = method.attrs.clone();
        if let Some(t) = ToolFn::build(
            args.unwrap_or_default(),
            &attrs,
            &mut method.sig,
            Site::Method,
            &mut errors,
        ) {
            tools.push(t);
        }
    }
    if !saw_tool {
        errors.push(crate::errors::spanned(
            &imp.self_ty,
            "this `#[server]` impl has no `#[tool]` methods\n\n= help: mark the methods to serve with `#[tool]`",
        ));
    }
    check::unique_names(&tools, &mut errors);

    let self_ty = &imp.self_ty;
    let p = quote!(::mcp_runtime::__private);
    match errors.finish() {
        Ok(()) => {
            let defs = tools.iter().map(|t| super::tool_def(t, true));
            quote! {
                #imp

                const _: () = {
                    #[automatically_derived]
                    impl #p::Provider for #self_ty {
                        fn tools(this: &#p::Arc<Self>) -> #p::Vec<#p::ToolDef> {
                            ::std::vec![#(#defs),*]
                        }
                    }
                };
            }
        }
        Err(e) => {
            let e = e.write_errors();
            let stub = imp.trait_.is_none().then(|| {
                quote! {
                    const _: () = {
                        impl #p::Provider for #self_ty {
                            fn tools(_: &#p::Arc<Self>) -> #p::Vec<#p::ToolDef> {
                                ::core::unreachable!()
                            }
                        }
                    };
                }
            });
            quote!(#imp #stub #e)
        }
    }
}
