//! Model → tokens. Generated code calls `::mcp_runtime::__private` and nothing else.

pub mod form;
pub mod prompt;
pub mod resource;
pub mod server;
#[cfg(test)]
mod snapshots;
pub mod tool;

use crate::doc::Doc;
use crate::model::{Cache, Common, Receiver};
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

/// `::mcp_runtime::__private`.
fn private() -> TokenStream {
    quote!(::mcp_runtime::__private)
}

/// How the generated handler calls the user's function: directly (free function), through
/// `Self::` (associated function) or through `__this`, an `Arc` of the server value.
struct Call {
    capture_outer: TokenStream,
    capture_inner: TokenStream,
    call: TokenStream,
}

fn call(common: &Common, in_impl: bool) -> Call {
    let p = private();
    let ident = &common.ident;
    let args = common.params.iter().map(|param| &param.ident);
    match (in_impl, common.receiver) {
        // Called through `__mcp_fn`, bound before the parameters are (see `boxed_body`), so
        // a parameter named like the function cannot shadow it.
        (false, _) => Call {
            capture_outer: quote!(),
            capture_inner: quote!(),
            call: quote!(__mcp_fn(#(#args),*).await),
        },
        (true, Receiver::None) => Call {
            capture_outer: quote!(),
            capture_inner: quote!(),
            call: quote!(Self::#ident(#(#args),*).await),
        },
        (true, Receiver::Ref) => Call {
            capture_outer: quote!(let __this = #p::Arc::clone(this);),
            capture_inner: quote!(let __this = #p::Arc::clone(&__this);),
            call: quote!(__this.#ident(#(#args),*).await),
        },
    }
}

/// `boxed(async move { <extract>; Ok(<call>) })`, spanned at the function's name so a
/// non-`Send` future is reported there.
fn boxed_body(
    common: &Common,
    extracts: &[TokenStream],
    call: &TokenStream,
    free: bool,
) -> TokenStream {
    let ident = &common.ident;
    let bind_fn = free.then(|| quote!(let __mcp_fn = #ident;));
    quote_spanned! {common.ident.span()=>
        ::mcp_runtime::__private::boxed(async move {
            #bind_fn
            #(#extracts)*
            ::mcp_runtime::__private::Result::<_, ::mcp_runtime::__private::ToolError>::Ok(#call)
        })
    }
}

/// The statements that fill `#[input]` parameters: all inputs are asked together (one
/// round), then each is unwrapped. Empty when there are none.
fn input_stmts(common: &Common) -> TokenStream {
    use crate::model::InputKind;
    let p = private();
    let inputs: Vec<&crate::model::Param> =
        common.params.iter().filter(|p| p.input.is_some()).collect();
    if inputs.is_empty() {
        return quote!();
    }
    // `format!` only when the text inserts arguments (`{name}`); clippy would flag the rest.
    let text = |s: &str| {
        if s.contains('{') {
            quote!(::std::format!(#s))
        } else {
            quote!(::std::string::String::from(#s))
        }
    };
    let futs: Vec<TokenStream> = inputs
        .iter()
        .map(|param| {
            let spec = param.input.as_ref().expect("filtered");
            let key = &spec.key;
            let ty = &param.ty;
            match &spec.kind {
                InputKind::Elicit { message } => {
                    let message = text(message);
                    quote_spanned! {param.ty_span=>
                        <#ty as #p::ElicitParam>::elicit(&__input, #key, #message)
                    }
                }
                InputKind::Url { url, message } => {
                    let message = text(message);
                    quote!(__input.elicit_url(#key, #message, #url))
                }
                InputKind::Sample {
                    text: prompt,
                    max_tokens,
                } => {
                    let prompt = text(prompt);
                    quote!(__input.sample(#key, #p::sampling_request(&#prompt, #max_tokens)))
                }
                InputKind::Roots => quote!(__input.roots(#key)),
            }
        })
        .collect();
    let idents: Vec<&syn::Ident> = inputs.iter().map(|p| &p.ident).collect();
    let tys: Vec<&syn::Type> = inputs.iter().map(|p| &p.ty).collect();
    if let ([ident], [ty], [fut]) = (&idents[..], &tys[..], &futs[..]) {
        return quote! {
            let __input = __call.input()?;
            let #ident: #ty = #fut.await?;
        };
    }
    quote! {
        let __input = __call.input()?;
        let (#(#idents,)*) = #p::join!(#(#futs),*);
        #(let #idents: #tys = #idents?;)*
    }
}

/// The `Param` constants of the parameters.
fn param_consts(common: &Common) -> TokenStream {
    let p = private();
    let params = common.params.iter().map(|param| {
        let n = &param.name;
        let d = match &param.description {
            Some(d) => quote!(#p::Some(#d)),
            None => quote!(#p::None),
        };
        let h = match &param.header {
            Some((h, _)) => quote!(#p::Some(#h)),
            None => quote!(#p::None),
        };
        quote!(#p::Param { name: #n, description: #d, header: #h })
    });
    quote!(const __PARAMS: &[#p::Param] = &[#(#params),*];)
}

/// The builder calls shared by every kind: description, title, icons, `_meta`.
fn common_builder(common: &Common) -> Vec<TokenStream> {
    let p = private();
    let mut builder = Vec::new();
    if let Some(description) = &common.description {
        let d = match description {
            Doc::Text(t) => quote!(#t),
            Doc::Expr(e) => e.clone(),
        };
        builder.push(quote!(.description(#d)));
    }
    if let Some(t) = &common.title {
        builder.push(quote!(.title(#t)));
    }
    for icon in &common.icons {
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
    for (k, v) in &common.meta {
        builder.push(quote!(.meta(#k, #p::json(#v))));
    }
    builder
}

fn cache_builder(cache: &Option<Cache>) -> Option<TokenStream> {
    let p = private();
    cache.as_ref().map(|c| {
        let ttl = match c.ttl_ms {
            Some(t) => quote!(#p::Some(#t)),
            None => quote!(#p::None),
        };
        let private = match c.private {
            Some(b) => quote!(#p::Some(#b)),
            None => quote!(#p::None),
        };
        quote!(.cache(#p::cache_hints(#ttl, #private)))
    })
}

/// `.completer("arg", path)` for each completed parameter, spanned at the path so a
/// completer with the wrong signature is reported there.
fn completers(common: &Common) -> Vec<TokenStream> {
    common
        .params
        .iter()
        .filter_map(|param| {
            let path = param.complete.as_ref()?;
            let n = &param.name;
            Some(quote_spanned!(syn::spanned::Spanned::span(path)=> .completer(#n, #path)))
        })
        .collect()
}

/// The expression building one `ToolDef`.
pub fn tool_def(tool: &crate::model::ToolFn, in_impl: bool) -> TokenStream {
    let p = private();
    let common = &tool.common;
    let name = &common.name;
    let consts = param_consts(common);
    let describes = common
        .params
        .iter()
        .enumerate()
        .filter(|(_, p)| p.input.is_none())
        .map(|(i, param)| {
            let ty = &param.ty;
            // A mirrored parameter must have a type a header can carry; checked at the type.
            let header_check = param
                .header
                .as_ref()
                .map(|_| quote_spanned!(param.ty_span=> #p::assert_header_value::<#ty>();));
            quote_spanned! {param.ty_span=>
                #header_check
                <#ty as #p::FromToolCall>::describe(&__PARAMS[#i], &mut __signature);
            }
        });
    let inline_refs = tool.inline_refs.then(|| quote!(__signature.inline_refs();));
    let mut extracts: Vec<TokenStream> = common
        .params
        .iter()
        .enumerate()
        .filter(|(_, p)| p.input.is_none())
        .map(|(i, param)| {
            let ty = &param.ty;
            let id = &param.ident;
            quote!(let #id = <#ty as #p::FromToolCall>::from_tool_call(&mut __call, &__PARAMS[#i])?;)
        })
        .collect();
    extracts.push(input_stmts(common));
    let uses_input = common
        .params
        .iter()
        .any(|p| p.input.is_some())
        .then(|| quote!(__signature.requirements().uses_input();));
    let Call {
        capture_outer,
        capture_inner,
        call,
    } = call(common, in_impl);
    let call_arg = if common.params.is_empty() {
        quote!(_)
    } else {
        quote!(mut __call)
    };
    let body = boxed_body(common, &extracts, &call, !in_impl);
    let handler = quote! {
        move |#call_arg: #p::ToolCall| {
            #capture_inner
            #body
        }
    };

    let mut builder = common_builder(common);
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
    builder.extend(cache_builder(&tool.cache));
    if let Some(schema) = &tool.input_schema {
        builder.push(quote!(.input_schema_json(#schema)));
    }

    // `ToolDef::new` requires the return type to convert into a result; spanned at the
    // return type, that is where a wrong one is reported.
    let new = quote_spanned! {common.return_span=>
        ::mcp_runtime::__private::ToolDef::new(#name, __signature, #handler)
    };
    quote! {{
        #consts
        let mut __signature = #p::Signature::new();
        #inline_refs
        #uses_input
        #(#describes)*
        #capture_outer
        #new
            #(#builder)*
    }}
}

/// The hidden companion of a free function: a struct of the same name (type namespace)
/// whose associated function builds the definition.
pub fn companion(
    func: &syn::ItemFn,
    method: &str,
    ret: TokenStream,
    body: TokenStream,
) -> TokenStream {
    let vis = &func.vis;
    let ident = &func.sig.ident;
    let method = syn::Ident::new(method, proc_macro2::Span::call_site());
    quote! {
        #[doc(hidden)]
        #[allow(non_camel_case_types, dead_code)]
        #vis struct #ident {}

        #[automatically_derived]
        #[allow(dead_code)]
        impl #ident {
            #[doc(hidden)]
            pub fn #method() -> #ret {
                #body
            }
        }
    }
}

/// The item was not a function (or does not parse): give the tokens back with one error.
fn not_a_function(item: TokenStream, e: syn::Error, kind: &str) -> TokenStream {
    let e = syn::Error::new(
        e.span(),
        format!("{e}\n\n= note: `#[{kind}]` goes on an `async fn`"),
    )
    .to_compile_error();
    quote!(#item #e)
}

/// The function plus its companion; on errors, the function, a stub companion (so only our
/// errors show) and the errors.
fn finish(
    func: syn::ItemFn,
    errors: darling::error::Accumulator,
    def: Option<TokenStream>,
    method: &str,
    ret: TokenStream,
) -> TokenStream {
    let is_method = func.sig.receiver().is_some();
    match (errors.finish(), def) {
        (Ok(()), Some(def)) => {
            let companion = companion(&func, method, ret, def);
            quote!(#func #companion)
        }
        (result, _) => {
            let errors = result.err().map(darling::Error::write_errors);
            let stub =
                (!is_method).then(|| companion(&func, method, ret, quote!(::core::unreachable!())));
            quote!(#func #stub #errors)
        }
    }
}

/// `#[needs_input]` that no `#[tool]`, `#[prompt]` or `#[resource]` above it consumed.
pub fn needs_input_alone(item: TokenStream) -> TokenStream {
    let e = syn::Error::new(
        proc_macro2::Span::call_site(),
        "`#[needs_input]` goes below `#[tool]`, `#[prompt]` or `#[resource]`\n\n= help: only `tools/call`, `prompts/get` and `resources/read` can ask the client for input; write the attribute after the `#[tool]` (or `#[prompt]`, `#[resource]`) line",
    )
    .to_compile_error();
    quote!(#item #e)
}
