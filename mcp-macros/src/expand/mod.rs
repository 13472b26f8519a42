//! Stage 4, expand: model → tokens, one entry ([`definition`]) for the three kinds.
//! Generated code reaches the runtime through one alias, `__mcp`, of
//! `::mcp_runtime::__private` (or the `crate = "..."` path), and calls runtime traits
//! rather than inlining protocol logic.

pub mod form;
mod input;
pub mod server;
#[cfg(test)]
mod snapshots;

use crate::attr::{self, Function, Kind};
use crate::check;
use crate::doc::Doc;
use crate::errors::Errors;
use crate::model::{Item, Receiver, Role, Site, Spec};
use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};

/// `::mcp_runtime`, or the path given with `crate = "..."`.
pub fn krate(path: Option<&syn::Path>) -> TokenStream {
    match path {
        Some(p) => quote!(#p),
        None => quote!(::mcp_runtime),
    }
}

/// The companion's method and the definition type, per kind.
fn names(kind: Kind) -> (&'static str, TokenStream) {
    match kind {
        Kind::Tool => ("__mcp_tool", quote!(ToolDef)),
        Kind::Resource => ("__mcp_resource", quote!(ResourceDef)),
        Kind::Prompt => ("__mcp_prompt", quote!(PromptDef)),
    }
}

/// `#[tool]`, `#[resource]` or `#[prompt]` on a free function: the function as written,
/// plus a hidden companion struct of the same name (type namespace) whose associated
/// function builds the definition. On errors, a stub companion, so that `tools![f]` still
/// resolves and only our errors show.
pub fn free(kind: Kind, args: TokenStream, item: TokenStream) -> TokenStream {
    let mut func: Function = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(e) => return not_a_function(item, e, kind),
    };
    let mut errors = Errors::new();
    let options = attr::options(kind, args, &mut errors);
    let krate_path = options
        .as_ref()
        .and_then(|o| o.common().krate.as_ref())
        .map(|k| (**k).clone());
    let needs_input = attr::take_needs_input(&mut func.attrs, krate_path.as_ref());
    let also = attr::take_other_items(&mut func.attrs, krate_path.as_ref());
    let params = attr::take_params(&mut func.sig, krate_path.as_ref(), &mut errors);
    let model = options.map(|o| {
        let mut item = Item::build(
            kind,
            o,
            &func.attrs,
            &func.sig,
            params,
            needs_input,
            Site::Free,
        );
        item.also = also;
        item
    });
    if let Some(m) = &model {
        check::item(m, &mut errors);
    }
    let krate_path = model
        .as_ref()
        .and_then(|m| m.krate.as_ref())
        .map(|k| k.value.clone());
    let krate = krate(krate_path.as_ref());
    let body = match (errors.finish(), &model) {
        (None, Some(m)) => Ok(definition(m)),
        (errors, _) => Err(errors.unwrap_or_default()),
    };
    let (method, ty) = names(kind);
    // The name (or URI) `tools![..]` checks for duplicates at compile time.
    let key = model.as_ref().map(|m| match &m.spec {
        Spec::Resource(r) => r.uri.value(),
        _ => m.name.value.clone(),
    });
    match body {
        Ok(def) => {
            let companion = companion(&func, method, &krate, &ty, key, def);
            quote!(#func #companion)
        }
        Err(errors) => {
            // A method without `#[server]` has no companion: it is not an item of its own.
            let stub = func.sig.receiver().is_none().then(|| {
                companion(
                    &func,
                    method,
                    &krate,
                    &ty,
                    key,
                    quote!(::core::unreachable!()),
                )
            });
            quote!(#func #stub #errors)
        }
    }
}

/// The hidden companion of a free function. Only the struct allows dead code: a function that no `tools![..]` registers gets the
/// "never used" warning a plain unused function gets.
fn companion(
    func: &Function,
    method: &str,
    krate: &TokenStream,
    ty: &TokenStream,
    key: Option<String>,
    body: TokenStream,
) -> TokenStream {
    let vis = &func.vis;
    let ident = &func.sig.ident;
    let method = syn::Ident::new(method, Span::call_site());
    let key = key.unwrap_or_else(|| ident.to_string());
    quote! {
        #[doc(hidden)]
        #[allow(non_camel_case_types, dead_code)]
        #vis struct #ident {}

        #[automatically_derived]
        impl #ident {
            #[doc(hidden)]
            #[allow(dead_code)]
            pub const __MCP_KEY: &'static str = #key;

            #[doc(hidden)]
            #[allow(deprecated)]
            pub fn #method() -> #krate::__private::#ty {
                use #krate::__private as __mcp;
                #body
            }
        }
    }
}

/// The item is not a function: its tokens back, with one error.
fn not_a_function(item: TokenStream, e: syn::Error, kind: Kind) -> TokenStream {
    let e = syn::Error::new(
        e.span(),
        format!("{e}; `#[{}]` goes on an `async fn`", kind.attr()),
    )
    .to_compile_error();
    quote!(#item #e)
}

/// `#[needs_input]` that no `#[tool]`, `#[prompt]` or `#[resource]` above it consumed.
pub fn needs_input_alone(item: TokenStream) -> TokenStream {
    let e = syn::Error::new(
        Span::call_site(),
        "`#[needs_input]` goes below `#[tool]`, `#[prompt]` or `#[resource]`; only `tools/call`, `prompts/get` and `resources/read` can ask the client for input; write the attribute after the `#[tool]` (or `#[prompt]`, `#[resource]`) line",
    )
    .to_compile_error();
    quote!(#item #e)
}

/// The expression building one definition, for any kind; `__mcp` is in scope. In an
/// `impl`, `this` is the `Arc` of the server value.
pub fn definition(item: &Item) -> TokenStream {
    let kind = match item.kind {
        Kind::Tool => quote!(__mcp::Tool),
        Kind::Resource => quote!(__mcp::Resource),
        Kind::Prompt => quote!(__mcp::Prompt),
    };
    // The parameters read from the call, in order, with their index in `__PARAMS`.
    let described: Vec<&crate::model::Param> = item
        .params
        .iter()
        .filter(|p| p.role == Role::Parameter || p.role == Role::Extractor)
        .collect();
    let consts = (!described.is_empty()).then(|| {
        let params = described.iter().map(|p| {
            let n = &p.name.value;
            let mut param = quote!(__mcp::Param::new(#n));
            if let Some(d) = &p.description {
                let d = &d.value;
                param = quote!(#param.description(#d));
            }
            if let Some(h) = &p.header {
                let h = &h.value;
                param = quote!(#param.header(#h));
            }
            param
        });
        quote!(const __PARAMS: &[__mcp::Param] = &[#(#params),*];)
    });
    let describes = described.iter().enumerate().map(|(i, p)| {
        let i = proc_macro2::Literal::usize_unsuffixed(i);
        let ty = &p.ty;
        // A mirrored parameter must have a type a header can carry; checked at the type.
        let header_check = p
            .header
            .as_ref()
            .map(|_| quote_spanned!(p.ty_span=> __mcp::assert_header_value::<#ty>();));
        // `#[arg(...)]` describes an argument; on an extractor it is an error, not ignored.
        let argument_check = (p.arg_span.is_some() && p.role == Role::Parameter)
            .then(|| quote_spanned!(p.ty_span=> __mcp::assert_argument::<#ty, #kind>();));
        quote_spanned! {p.ty_span=>
            #header_check
            #argument_check
            <#ty as __mcp::FromRequest<#kind>>::describe(&__PARAMS[#i], &mut __signature);
        }
    });
    let inline_refs = matches!(&item.spec, Spec::Tool(t) if t.inline_refs)
        .then(|| quote!(__signature.inline_refs();));
    let uses_input = item
        .params
        .iter()
        .any(|p| p.role == Role::Input)
        .then(|| quote!(__signature.requirements().asks_upfront();));

    let mut index = 0usize;
    let mut extracts: Vec<TokenStream> = Vec::new();
    for p in &item.params {
        let ty = &p.ty;
        let id = &p.ident;
        match p.role {
            Role::Parameter | Role::Extractor => {
                let index_lit = proc_macro2::Literal::usize_unsuffixed(index);
                extracts.push(quote!(
                    let #id = <#ty as __mcp::FromRequest<#kind>>::from_request(&mut __call, &__PARAMS[#index_lit])?;
                ));
                index += 1;
            }
            Role::Variable => {
                let n = &p.name.value;
                extracts.push(quote_spanned!(p.ty_span=> let #id = __call.variable::<#ty>(#n)?;));
            }
            Role::Input => {}
        }
    }
    extracts.push(input::input_stmts(item));

    let free = item.site == Site::Free;
    let ident = &item.ident;
    let args = item.params.iter().map(|p| &p.ident);
    let args: Vec<_> = args.collect();
    // A `&self` method's handler gets the server value from the runtime (`__this`); no
    // handler captures anything, so each goes in as a function pointer and the
    // constructor and its type-erased wrapper are compiled once per output type (and
    // server type), not once per item.
    let method = !free && matches!(item.shape.receiver, Receiver::Ref(_));
    let invoke = match (free, method) {
        // Called through `__mcp_fn`, bound before the parameters are, so a parameter named
        // like the function cannot shadow it.
        (true, _) => quote!(__mcp_fn(#(#args),*)),
        (false, true) => quote!(__this.#ident(#(#args),*)),
        (false, false) => quote!(Self::#ident(#(#args),*)),
    };
    let bind_fn = free.then(|| quote!(let __mcp_fn = #ident;));
    let call_arg = if item.params.is_empty() {
        quote!(_)
    } else {
        quote!(mut __call)
    };
    let span = item.ident.span();
    let asks = item.params.iter().any(|p| p.role == Role::Input);
    let handler = if item.shape.is_async && !asks {
        // An `async fn` that asks for no input needs no future of its own around the
        // function's: its parameters are read first, then the function's future is
        // boxed (a `&self` method's in an async block holding the value). Spanned at the
        // name, so a future that is not `Send` is reported there.
        let call = match (free, method) {
            (true, _) => quote_spanned!(span=> __mcp_fn(#(#args),*)),
            (false, true) => quote_spanned!(span=> __this.#ident(#(#args),*)),
            (false, false) => quote_spanned!(span=> Self::#ident(#(#args),*)),
        };
        if method {
            let boxed = quote_spanned! {span=>
                __mcp::boxed(async move { #call.await })
            };
            quote! {
                __mcp::direct_with(
                    __mcp::Arc::clone(this),
                    |__this: &__mcp::Arc<Self>, #call_arg: __mcp::Call<#kind>| {
                        #(#extracts)*
                        let __this = __mcp::Arc::clone(__this);
                        __mcp::Ok(#boxed)
                    },
                )
            }
        } else {
            let boxed = quote_spanned!(span=> __mcp::boxed(#call));
            quote! {
                __mcp::direct(|#call_arg: __mcp::Call<#kind>| {
                    #bind_fn
                    #(#extracts)*
                    __mcp::Ok(#boxed)
                })
            }
        }
    } else {
        // A plain `fn` runs on the blocking pool, so it never holds up the runtime.
        let call = if item.shape.is_async {
            quote!(#invoke.await)
        } else {
            quote!(__mcp::blocking(move || #invoke).await?)
        };
        // Spanned at the function's name, so a non-`Send` future is reported there.
        let body = quote_spanned! {span=>
            __mcp::boxed(async move {
                #bind_fn
                #(#extracts)*
                __mcp::Result::<_, __mcp::Error>::Ok(#call)
            })
        };
        if method {
            quote! {
                __mcp::handler_with(
                    __mcp::Arc::clone(this),
                    |__this: __mcp::Arc<Self>, #call_arg: __mcp::Call<#kind>| { #body },
                )
            }
        } else {
            quote!(__mcp::handler(|#call_arg: __mcp::Call<#kind>| { #body }))
        }
    };
    let name = &item.name.value;
    // The constructor requires the return type to convert into a result; spanned at the
    // return type, that is where a wrong one is reported.
    let new = match &item.spec {
        Spec::Tool(_) => quote_spanned! {item.shape.return_span=>
            __mcp::ToolDef::new(#name, __signature, #handler)
        },
        Spec::Prompt => quote_spanned! {item.shape.return_span=>
            __mcp::PromptDef::new(#name, __signature, #handler)
        },
        Spec::Resource(r) => {
            let uri = r.uri.value();
            quote_spanned! {item.shape.return_span=>
                __mcp::ResourceDef::new(#uri, #name, __signature, #handler)
            }
        }
    };
    let mut builder = builder(item);
    let origin = match &item.owner {
        Some(owner) => format!("{owner}::{}", item.ident),
        None => item.ident.to_string(),
    };
    builder.push(quote!(.origin(::core::concat!(::core::module_path!(), "::", #origin))));
    let mutable = (!described.is_empty() || inline_refs.is_some() || uses_input.is_some())
        .then(|| quote!(mut));
    quote! {{
        #consts
        let #mutable __signature = __mcp::Signature::new();
        #inline_refs
        #uses_input
        #(#describes)*
        #new
            #(#builder)*
    }}
}

/// The builder calls after the constructor: what every kind shares, then the kind's own.
fn builder(item: &Item) -> Vec<TokenStream> {
    let mut b = Vec::new();
    if let Some(description) = &item.description {
        let d = match description {
            Doc::Text(t) => quote!(#t),
            Doc::Expr(e) => e.clone(),
        };
        b.push(quote!(.description(#d)));
    }
    if let Some(t) = &item.title {
        b.push(quote!(.title(#t)));
    }
    for icon in &item.icons {
        let src = &icon.src.value;
        let mut i = quote!(__mcp::Icon::new(#src));
        if let Some(m) = &icon.mime_type {
            i = quote!(#i.mime_type(#m));
        }
        for s in &icon.sizes {
            i = quote!(#i.size(#s));
        }
        if let Some(t) = &icon.theme {
            let t = &t.value;
            i = quote!(#i.theme(#t));
        }
        b.push(quote!(.icon(#i)));
    }
    if let Some(meta) = &item.meta {
        for (k, v) in check::meta_entries(&meta.value).unwrap_or_default() {
            b.push(quote!(.meta(#k, __mcp::json(#v))));
        }
    }
    if !item.scopes.is_empty() {
        let scopes = item.scopes.iter().map(|s| &s.value);
        b.push(quote!(.scopes([#(#scopes),*])));
    }
    // Spanned at the expression, so a value that is not a middleware is reported there.
    for layer in &item.layers {
        let span = syn::spanned::Spanned::span(layer);
        b.push(quote_spanned!(span=> .layer(#layer)));
    }
    if let Some(c) = &item.cache {
        let some = |v: Option<TokenStream>| match v {
            Some(v) => quote!(__mcp::Some(#v)),
            None => quote!(__mcp::None),
        };
        let ttl = some(c.ttl_ms.map(|t| quote!(#t)));
        let private = some(c.scope.as_ref().map(|s| {
            let p = s.value == "private";
            quote!(#p)
        }));
        b.push(quote!(.cache(__mcp::cache_hints(#ttl, #private))));
    }
    match &item.spec {
        Spec::Tool(t) => {
            if let Some(a) = &t.annotations {
                let mut set = quote!(__mcp::ToolAnnotations::new());
                if let Some(v) = &a.title {
                    set = quote!(#set.title(#v));
                }
                for (hint, value) in [
                    ("read_only_hint", a.read_only_hint),
                    ("destructive_hint", a.destructive_hint),
                    ("idempotent_hint", a.idempotent_hint),
                    ("open_world_hint", a.open_world_hint),
                ] {
                    if let Some(v) = value {
                        let hint = syn::Ident::new(hint, Span::call_site());
                        set = quote!(#set.#hint(#v));
                    }
                }
                b.push(quote!(.annotations(#set)));
            }
            if let Some(schema) = &t.input_schema {
                let schema = &schema.value;
                b.push(quote!(.input_schema_json(#schema)));
            }
            match t.task.as_ref().map(|t| t.value.as_str()) {
                Some("optional") => b.push(quote!(.task(__mcp::TaskSupport::Optional))),
                Some("required") => b.push(quote!(.task(__mcp::TaskSupport::Required))),
                _ => {}
            }
            if let Some(ui) = &t.ui {
                let ui = &ui.value;
                b.push(quote!(.ui(#ui)));
            }
        }
        Spec::Resource(r) => {
            if let Some(m) = &r.mime_type {
                b.push(quote!(.mime_type(#m)));
            }
            if let Some(s) = r.size {
                b.push(quote!(.size(#s)));
            }
            if let Some(a) = &r.annotations {
                let mut fields = Vec::new();
                if !a.audience.is_empty() {
                    let roles = a.audience.iter().map(|r| {
                        if r.is_ident("user") {
                            quote!(__mcp::Role::User)
                        } else {
                            quote!(__mcp::Role::Assistant)
                        }
                    });
                    fields.push(quote!(audience: __mcp::Some(__mcp::Vec::from([#(#roles),*]))));
                }
                if let Some(p) = &a.priority {
                    let p = p.value;
                    fields.push(quote!(priority: __mcp::Some(#p)));
                }
                if let Some(lm) = &a.last_modified {
                    let lm = &lm.value;
                    fields.push(quote!(last_modified: __mcp::Some(__mcp::String::from(#lm))));
                }
                b.push(quote!(.annotations(__mcp::Annotations {
                    #(#fields,)*
                    ..__mcp::Default::default()
                })));
            }
            if let Some(list) = &r.list {
                b.push(quote_spanned!(syn::spanned::Spanned::span(list)=> .list_with(#list)));
            }
            if let Some(view) = &r.app {
                let app = &view.1;
                let mut ui = quote!(__mcp::UiResource::new());
                if let Some(v) = app.prefers_border {
                    ui = quote!(#ui.prefers_border(#v));
                }
                if let Some(d) = &app.domain {
                    ui = quote!(#ui.domain(#d));
                }
                let list = |l: &Option<Vec<syn::LitStr>>| {
                    let items = l.iter().flatten().map(|s| s.value());
                    quote!(__mcp::Vec::from([#(__mcp::String::from(#items)),*]))
                };
                let any_csp = [
                    &app.connect_domains,
                    &app.resource_domains,
                    &app.frame_domains,
                    &app.base_uri_domains,
                ]
                .iter()
                .any(|l| l.is_some());
                if any_csp {
                    let (c, r, f, bu) = (
                        list(&app.connect_domains),
                        list(&app.resource_domains),
                        list(&app.frame_domains),
                        list(&app.base_uri_domains),
                    );
                    ui = quote!(#ui.csp(__mcp::Csp {
                        connect_domains: #c,
                        resource_domains: #r,
                        frame_domains: #f,
                        base_uri_domains: #bu,
                    }));
                }
                for p in app.permissions.iter().flat_map(|l| l.iter()) {
                    let variant = match p.get_ident().map(ToString::to_string).as_deref() {
                        Some("camera") => quote!(Camera),
                        Some("microphone") => quote!(Microphone),
                        Some("geolocation") => quote!(Geolocation),
                        _ => quote!(ClipboardWrite),
                    };
                    ui = quote!(#ui.permission(__mcp::Permission::#variant));
                }
                b.push(quote!(.app(#ui)));
            }
        }
        Spec::Prompt => {}
    }
    // Spanned at the path, so a completer with the wrong signature is reported there.
    for p in &item.params {
        let Some(path) = &p.complete else { continue };
        let n = &p.name.value;
        let span = syn::spanned::Spanned::span(path);
        match &p.complete_method {
            // A `&self` method of the impl: a closure holding the server value.
            Some(types) => {
                let method = &path.segments.last().expect("a path has a segment").ident;
                let args: Vec<syn::Ident> = (0..types.len())
                    .map(|i| syn::Ident::new(&format!("__a{i}"), Span::call_site()))
                    .collect();
                b.push(quote_spanned! {span=>
                    .completer(#n, {
                        let __this = __mcp::Arc::clone(this);
                        move |#(#args: #types),*| {
                            let __this = __mcp::Arc::clone(&__this);
                            async move { __this.#method(#(#args),*).await }
                        }
                    })
                });
            }
            None => b.push(quote_spanned!(span=> .completer(#n, #path))),
        }
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_crate_path_can_be_overridden() {
        let out = free(
            Kind::Tool,
            quote!(crate = "rt"),
            quote! {
                /// Greets.
                #[rt::needs_input]
                async fn greet(#[input(roots)] r: Vec<Value>) -> String { String::new() }
            },
        )
        .to_string();
        assert!(out.contains("use rt :: __private as __mcp"), "{out}");
        assert!(!out.contains("mcp_runtime"), "{out}");
        assert!(!out.contains("compile_error"), "{out}");
    }

    #[test]
    fn generated_code_spells_the_private_path_once_per_item() {
        let out = free(
            Kind::Tool,
            quote!(),
            quote! {
                /// Adds.
                async fn add(a: i64, b: i64) -> String { (a + b).to_string() }
            },
        )
        .to_string();
        // The return type, and the alias.
        assert_eq!(
            out.matches(":: mcp_runtime :: __private").count(),
            2,
            "{out}"
        );
    }
}
