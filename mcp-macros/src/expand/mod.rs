//! Model → tokens. Generated code calls `::mcp_runtime::__private` and nothing else.

pub mod server;
pub mod tool;

use crate::doc::Doc;
use crate::model::{Receiver, ToolFn};
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

/// The expression building one `ToolDef`.
///
/// For a free function the call is `name(args)`; for a method it goes through `__this`, an
/// `Arc` of the server value captured by the handler.
pub fn tool_def(tool: &ToolFn, in_impl: bool) -> TokenStream {
    let p = quote!(::mcp_runtime::__private);
    let name = &tool.name;
    let ident = &tool.ident;

    let params = tool.params.iter().map(|param| {
        let n = &param.name;
        let d = match &param.description {
            Some(d) => quote!(#p::Some(#d)),
            None => quote!(#p::None),
        };
        quote!(#p::Param { name: #n, description: #d })
    });
    let describes = tool.params.iter().enumerate().map(|(i, param)| {
        let ty = &param.ty;
        quote_spanned!(param.ty_span()=> <#ty as #p::FromToolCall>::describe(&__PARAMS[#i], &mut __signature);)
    });
    let extracts = tool.params.iter().enumerate().map(|(i, param)| {
        let ty = &param.ty;
        let id = &param.ident;
        quote!(let #id = <#ty as #p::FromToolCall>::from_tool_call(&mut __call, &__PARAMS[#i])?;)
    });
    let args = tool.params.iter().map(|param| &param.ident);
    let call_arg = if tool.params.is_empty() {
        quote!(_)
    } else {
        quote!(mut __call)
    };

    let (capture_outer, capture_inner, call) = match (in_impl, tool.receiver) {
        (false, _) => (quote!(), quote!(), quote!(#ident(#(#args),*).await)),
        (true, Receiver::None) => (quote!(), quote!(), quote!(Self::#ident(#(#args),*).await)),
        (true, Receiver::Ref) => (
            quote!(let __this = #p::Arc::clone(this);),
            quote!(let __this = #p::Arc::clone(&__this);),
            quote!(__this.#ident(#(#args),*).await),
        ),
    };
    // `boxed` requires the future to be `Send`; spanned at the function's name, that is
    // where a non-`Send` future is reported.
    let boxed = quote_spanned! {ident.span()=>
        ::mcp_runtime::__private::boxed(async move {
            #(#extracts)*
            ::mcp_runtime::__private::Result::<_, ::mcp_runtime::__private::ToolError>::Ok(#call)
        })
    };
    let handler = quote! {
        move |#call_arg: #p::ToolCall| {
            #capture_inner
            #boxed
        }
    };

    let description = match &tool.description {
        Doc::Text(t) => quote!(#t),
        Doc::Expr(e) => e.clone(),
    };
    let mut builder = vec![quote!(.description(#description))];
    if let Some(t) = &tool.title {
        builder.push(quote!(.title(#t)));
    }
    if let Some(a) = &tool.annotations {
        let opt_str = |v: &Option<String>| match v {
            Some(s) => quote!(#p::Some(::std::string::String::from(#s))),
            None => quote!(#p::None),
        };
        let opt_bool = |v: &Option<bool>| match v {
            Some(b) => quote!(#p::Some(#b)),
            None => quote!(#p::None),
        };
        let (title, ro, de, id, ow) = (
            opt_str(&a.title),
            opt_bool(&a.read_only_hint),
            opt_bool(&a.destructive_hint),
            opt_bool(&a.idempotent_hint),
            opt_bool(&a.open_world_hint),
        );
        builder.push(quote!(.annotations(#p::ToolAnnotations {
            title: #title,
            read_only_hint: #ro,
            destructive_hint: #de,
            idempotent_hint: #id,
            open_world_hint: #ow,
        })));
    }
    for icon in &tool.icons {
        let src = &icon.src;
        let mut b = quote!(#p::Icon::new(#src));
        if let Some(m) = &icon.mime_type {
            b = quote!(#b.mime_type(#m));
        }
        for s in &icon.sizes {
            b = quote!(#b.size(#s));
        }
        if let Some(t) = &icon.theme {
            b = quote!(#b.theme(#t));
        }
        builder.push(quote!(.icon(#b)));
    }
    for (k, v) in &tool.meta {
        builder.push(quote!(.meta(#k, #p::json(#v))));
    }
    if let Some(c) = &tool.cache {
        let ttl = match c.ttl_ms {
            Some(t) => quote!(#p::Some(#t)),
            None => quote!(#p::None),
        };
        let private = match c.private {
            Some(b) => quote!(#p::Some(#b)),
            None => quote!(#p::None),
        };
        builder.push(quote!(.cache(#p::cache_hints(#ttl, #private))));
    }

    // `ToolDef::new` requires the return type to convert into a result; spanned at the
    // return type, that is where a wrong one is reported.
    let new = quote_spanned! {tool.return_span=>
        ::mcp_runtime::__private::ToolDef::new(#name, __signature, #handler)
    };
    quote! {{
        const __PARAMS: &[#p::Param] = &[#(#params),*];
        let mut __signature = #p::Signature::new();
        #(#describes)*
        #capture_outer
        #new
            #(#builder)*
    }}
}
