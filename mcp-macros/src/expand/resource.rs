//! `#[resource("uri", ...)]`: the function plus a companion whose `__mcp_resource()` builds
//! the definition. Template variables bind to the parameters of the same name; the other
//! parameters are extractors.

use crate::attr::ResourceArgs;
use crate::model::{ParamKind, ResourceFn, Site};
use darling::FromMeta;
use darling::ast::NestedMeta;
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::LitStr;
use syn::parse::Parser;

/// Splits `"uri", options...` into the URI literal and the options.
pub fn split_args(args: TokenStream) -> syn::Result<(LitStr, TokenStream)> {
    let parser = |input: syn::parse::ParseStream<'_>| {
        let uri: LitStr = input.parse().map_err(|e| {
            syn::Error::new(
                e.span(),
                "`#[resource]` needs the URI first\n\n= help: write `#[resource(\"config://app\")]` or `#[resource(\"notes://{id}\", mime_type = \"text/plain\")]`",
            )
        })?;
        let rest = if input.is_empty() {
            TokenStream::new()
        } else {
            input.parse::<syn::Token![,]>()?;
            input.parse::<TokenStream>()?
        };
        Ok((uri, rest))
    };
    parser.parse2(args)
}

/// Parses the attribute and builds the model.
pub fn model(
    args: TokenStream,
    attrs: &[syn::Attribute],
    sig: &mut syn::Signature,
    site: Site,
    needs_input: bool,
    errors: &mut darling::error::Accumulator,
) -> Option<ResourceFn> {
    let (uri, rest) = match split_args(args) {
        Ok(v) => v,
        Err(e) => {
            errors.push(e.into());
            return None;
        }
    };
    let options = match NestedMeta::parse_meta_list(rest) {
        Ok(list) => errors.handle(ResourceArgs::from_list(&list)),
        Err(e) => {
            errors.push(e.into());
            None
        }
    };
    ResourceFn::build(
        &uri,
        options.unwrap_or_default(),
        attrs,
        sig,
        site,
        needs_input,
        errors,
    )
}

pub fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut func: syn::ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(e) => return super::not_a_function(item, e, "resource"),
    };
    let mut errors = darling::Error::accumulator();
    let needs_input = crate::model::take_needs_input(&mut func.attrs);
    let attrs = func.attrs.clone();
    let model = model(
        args,
        &attrs,
        &mut func.sig,
        Site::Free,
        needs_input,
        &mut errors,
    );
    let ret = quote!(::mcp_runtime::__private::ResourceDef);
    super::finish(
        func,
        errors,
        model.map(|m| resource_def(&m, false)),
        "__mcp_resource",
        ret,
    )
}

/// The expression building one `ResourceDef`.
pub fn resource_def(r: &ResourceFn, in_impl: bool) -> TokenStream {
    let p = super::private();
    let common = &r.common;
    let uri = &r.uri;
    let name = &common.name;
    let requirements = common.params.iter().zip(&r.kinds).filter(|(_, k)| **k == ParamKind::Extractor).map(|(param, _)| {
        let ty = &param.ty;
        quote_spanned!(param.ty_span=> <#ty as #p::FromRequest>::requirements(&mut __requirements);)
    });
    let extracts: Vec<TokenStream> = common
        .params
        .iter()
        .zip(&r.kinds)
        .map(|(param, kind)| {
            let ty = &param.ty;
            let id = &param.ident;
            let n = &param.name;
            match kind {
                ParamKind::Variable => {
                    quote_spanned!(param.ty_span=> let #id = __call.variable::<#ty>(#n)?;)
                }
                ParamKind::Extractor => {
                    quote_spanned!(param.ty_span=> let #id = __call.extract::<#ty>()?;)
                }
                ParamKind::Input => quote!(),
            }
        })
        .collect();
    let mut extracts = extracts;
    extracts.push(super::input_stmts(common));
    let uses_input = common
        .params
        .iter()
        .any(|p| p.input.is_some())
        .then(|| quote!(__requirements.uses_input();));
    let super::Call {
        capture_outer,
        capture_inner,
        call,
    } = super::call(common, in_impl);
    let call_arg = if common.params.is_empty() {
        quote!(_)
    } else {
        quote!(mut __call)
    };
    let body = super::boxed_body(common, &extracts, &call, !in_impl);
    let handler = quote! {
        move |#call_arg: #p::ResourceCall| {
            #capture_inner
            #body
        }
    };
    let mut builder = super::common_builder(common);
    if let Some(m) = &r.mime_type {
        builder.push(quote!(.mime_type(#m)));
    }
    if let Some(s) = r.size {
        builder.push(quote!(.size(#s)));
    }
    if let Some(a) = &r.annotations {
        let audience = if a.audience.is_empty() {
            quote!(#p::None)
        } else {
            let roles = a.audience.iter().map(|r| match r.as_str() {
                "user" => quote!(#p::Role::User),
                _ => quote!(#p::Role::Assistant),
            });
            quote!(#p::Some(::std::vec::Vec::from([#(#roles),*])))
        };
        let priority = match a.priority {
            Some(v) => quote!(#p::Some(#v)),
            None => quote!(#p::None),
        };
        let last_modified = match &a.last_modified {
            Some(v) => quote!(#p::Some(::std::string::String::from(#v))),
            None => quote!(#p::None),
        };
        builder.push(quote!(.annotations(#p::Annotations {
            audience: #audience,
            priority: #priority,
            last_modified: #last_modified,
        })));
    }
    builder.extend(super::cache_builder(&r.cache));
    builder.extend(super::completers(common));
    if let Some(list) = &r.list {
        builder.push(quote_spanned!(syn::spanned::Spanned::span(list)=> .list_with(#list)));
    }
    let new = quote_spanned! {common.return_span=>
        ::mcp_runtime::__private::ResourceDef::new(#uri, #name, __requirements, #handler)
    };
    quote! {{
        let mut __requirements = #p::Requirements::default();
        #uses_input
        #(#requirements)*
        #capture_outer
        #new
            #(#builder)*
    }}
}
