//! `#[server]` on an inherent `impl`: the impl, with our attributes removed from its
//! methods, plus an `impl Provider` listing one definition per `#[tool]`, `#[resource]` and
//! `#[prompt]` method.

use crate::attr::ToolArgs;
use crate::check;
use crate::errors::spanned;
use crate::model::{Common, Site, ToolFn};
use darling::FromMeta;
use darling::ast::NestedMeta;
use proc_macro2::TokenStream;
use quote::quote;
use syn::{ImplItem, Meta};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Tool,
    Resource,
    Prompt,
}

/// `#[tool]`, `#[resource]`, `#[prompt]`, optionally as `mcp_runtime::...`.
fn kind_of(attr: &syn::Attribute) -> Option<Kind> {
    let segs: Vec<String> = attr
        .path()
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    let last = match segs.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        [k] | ["mcp_runtime", k] => k.to_owned(),
        _ => return None,
    };
    match last.as_str() {
        "tool" => Some(Kind::Tool),
        "resource" => Some(Kind::Resource),
        "prompt" => Some(Kind::Prompt),
        _ => None,
    }
}

fn attr_tokens(
    attr: &syn::Attribute,
    errors: &mut darling::error::Accumulator,
) -> Option<TokenStream> {
    match &attr.meta {
        Meta::Path(_) => Some(TokenStream::new()),
        Meta::List(list) => Some(list.tokens.clone()),
        Meta::NameValue(nv) => {
            let name = nv
                .path
                .segments
                .last()
                .map(|s| s.ident.to_string())
                .unwrap_or_default();
            errors.push(spanned(
                nv,
                format!("expected `#[{name}]` or `#[{name}(...)]`"),
            ));
            None
        }
    }
}

pub fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut imp: syn::ItemImpl = match syn::parse2(item.clone()) {
        Ok(i) => i,
        Err(e) => {
            let e = syn::Error::new(
                e.span(),
                format!("{e}\n\n= note: `#[server]` goes on an `impl` block"),
            )
            .to_compile_error();
            return quote!(#item #e);
        }
    };
    let mut errors = darling::Error::accumulator();
    if let Some(first) = args.clone().into_iter().next() {
        errors.push(darling::Error::from(syn::Error::new(
            first.span(),
            "`#[server]` takes no options\n\n= help: put options on each method's `#[tool(...)]`, `#[resource(...)]` or `#[prompt(...)]`",
        )));
    }
    if let Some((path, _)) = &imp.trait_ {
        errors.push(spanned(path, "`#[server]` goes on an inherent `impl` block, not a trait impl\n\n= help: write `impl MyServer { ... }`"));
    }
    if !imp.generics.params.is_empty() {
        errors.push(spanned(&imp.generics.params, "a `#[server]` type cannot be generic\n\n= help: wrap the generic value in a concrete type"));
    }

    let mut tools = Vec::new();
    let mut resources = Vec::new();
    let mut prompts = Vec::new();
    let mut saw_any = false;
    for item in &mut imp.items {
        let ImplItem::Fn(method) = item else { continue };
        let Some(pos) = method.attrs.iter().position(|a| kind_of(a).is_some()) else {
            continue;
        };
        saw_any = true;
        let attr = method.attrs.remove(pos);
        let kind = kind_of(&attr).expect("checked above");
        let Some(tokens) = attr_tokens(&attr, &mut errors) else {
            continue;
        };
        let needs_input = crate::model::take_needs_input(&mut method.attrs);
        let attrs = method.attrs.clone();
        match kind {
            Kind::Tool => {
                let args = match NestedMeta::parse_meta_list(tokens) {
                    Ok(l) => errors.handle(ToolArgs::from_list(&l)),
                    Err(e) => {
                        errors.push(e.into());
                        None
                    }
                };
                if let Some(t) = ToolFn::build(
                    args.unwrap_or_default(),
                    &attrs,
                    &mut method.sig,
                    Site::Method,
                    needs_input,
                    &mut errors,
                ) {
                    tools.push(t);
                }
            }
            Kind::Resource => {
                if let Some(r) = super::resource::model(
                    tokens,
                    &attrs,
                    &mut method.sig,
                    Site::Method,
                    needs_input,
                    &mut errors,
                ) {
                    resources.push(r);
                }
            }
            Kind::Prompt => {
                if let Some(p) = super::prompt::model(
                    tokens,
                    &attrs,
                    &mut method.sig,
                    Site::Method,
                    needs_input,
                    &mut errors,
                ) {
                    prompts.push(p);
                }
            }
        }
    }
    if !saw_any {
        errors.push(spanned(&imp.self_ty, "this `#[server]` impl has no `#[tool]`, `#[resource]` or `#[prompt]` methods\n\n= help: mark the methods to serve with `#[tool]`"));
    }
    check::unique_names(
        "tool",
        &tools.iter().map(|t| &t.common).collect::<Vec<&Common>>(),
        &mut errors,
    );
    check::unique_names(
        "prompt",
        &prompts.iter().map(|p| &p.common).collect::<Vec<&Common>>(),
        &mut errors,
    );
    check::distinct_resources(&resources.iter().collect::<Vec<_>>(), &mut errors);

    let self_ty = &imp.self_ty;
    let p = quote!(::mcp_runtime::__private);
    match errors.finish() {
        Ok(()) => {
            let tool_defs = tools.iter().map(|t| super::tool_def(t, true));
            let resource_defs = resources
                .iter()
                .map(|r| super::resource::resource_def(r, true));
            let prompt_defs = prompts.iter().map(|pr| super::prompt::prompt_def(pr, true));
            let tools_fn = (!tools.is_empty()).then(|| {
                quote! {
                    fn tools(this: &#p::Arc<Self>) -> #p::Vec<#p::ToolDef> {
                        let _ = this;
                        ::std::vec::Vec::from([#(#tool_defs),*])
                    }
                }
            });
            let resources_fn = (!resources.is_empty()).then(|| {
                quote! {
                    fn resources(this: &#p::Arc<Self>) -> #p::Vec<#p::ResourceDef> {
                        let _ = this;
                        ::std::vec::Vec::from([#(#resource_defs),*])
                    }
                }
            });
            let prompts_fn = (!prompts.is_empty()).then(|| {
                quote! {
                    fn prompts(this: &#p::Arc<Self>) -> #p::Vec<#p::PromptDef> {
                        let _ = this;
                        ::std::vec::Vec::from([#(#prompt_defs),*])
                    }
                }
            });
            quote! {
                #imp

                const _: () = {
                    #[automatically_derived]
                    impl #p::Provider for #self_ty {
                        #tools_fn
                        #resources_fn
                        #prompts_fn
                    }
                };
            }
        }
        Err(e) => {
            let e = e.write_errors();
            let stub = imp.trait_.is_none().then(|| {
                quote! {
                    const _: () = {
                        impl #p::Provider for #self_ty {}
                    };
                }
            });
            quote!(#imp #stub #e)
        }
    }
}
