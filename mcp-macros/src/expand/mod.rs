//! Stage 4, expand: model → tokens, one entry ([`definition`]) for the three kinds.
//! Generated code reaches the runtime through one alias, `__mcp`, of
//! `::mcp_runtime::__private` (or the `crate = "..."` path), and calls runtime traits
//! rather than inlining protocol logic.

mod builder;
pub mod form;
mod input;
pub mod server;
#[cfg(test)]
mod snapshots;

use crate::attr::{self, Function, Kind};
use crate::check;
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

/// The kinds, in the order the companions list them.
pub(crate) const KINDS: [Kind; 3] = [Kind::Tool, Kind::Resource, Kind::Prompt];

/// Per kind: the companion's constructor, its key constant (what `tools![..]` and the
/// like read), the definition type and the list macro.
pub(crate) fn names(kind: Kind) -> (&'static str, &'static str, TokenStream, &'static str) {
    match kind {
        Kind::Tool => ("__mcp_tool", "__MCP_TOOL", quote!(ToolDef), "tools"),
        Kind::Resource => (
            "__mcp_resource",
            "__MCP_RESOURCE",
            quote!(ResourceDef),
            "resources",
        ),
        Kind::Prompt => ("__mcp_prompt", "__MCP_PROMPT", quote!(PromptDef), "prompts"),
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
    let needs_input = attr::take_needs_input(&mut func.attrs, krate_path.as_ref(), &mut errors);
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
        // Reported (a variadic item is an error); rustc need not report it again.
        func.sig.variadic = None;
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
    // The name (or URI) `tools![..]` checks for duplicates at compile time.
    let key = model.as_ref().map(|m| match &m.spec {
        Spec::Resource(r) => r.uri.value(),
        _ => m.name.value.clone(),
    });
    match body {
        Ok(def) => {
            let companion = companion(&func, kind, &krate, key, def);
            quote!(#func #companion)
        }
        Err(errors) => {
            // A method without `#[server]` has no companion: it is not an item of its own.
            let stub = func
                .sig
                .receiver()
                .is_none()
                .then(|| companion(&func, kind, &krate, key, quote!(::core::unreachable!())));
            quote!(#func #stub #errors)
        }
    }
}

/// The hidden companion of a free function: per kind, a key constant and a constructor,
/// which `tools![..]`, `resources![..]` and `prompts![..]` read. Its own kind's are the
/// item's; the other kinds' key panics when evaluated, saying which list the item goes
/// in (a compile error at the item, noted where it was listed), and their constructors
/// are never called. Only the struct and those allow dead code: a function that no list
/// registers gets the "never used" warning a plain unused function gets.
fn companion(
    func: &Function,
    kind: Kind,
    krate: &TokenStream,
    key: Option<String>,
    body: TokenStream,
) -> TokenStream {
    let vis = &func.vis;
    let ident = &func.sig.ident;
    let key = key.unwrap_or_else(|| ident.to_string());
    let items = KINDS.map(|k| {
        let (method, constant, ty, list) = names(k);
        let method = syn::Ident::new(method, Span::call_site());
        let constant = syn::Ident::new(constant, Span::call_site());
        if k == kind {
            return quote! {
                #[doc(hidden)]
                #[allow(dead_code)]
                pub const #constant: &'static str = #key;

                #[doc(hidden)]
                #[allow(deprecated)]
                pub fn #method() -> #krate::__private::#ty {
                    use #krate::__private as __mcp;
                    #body
                }
            };
        }
        let wrong = format!(
            "`{ident}` is a `#[{}]`, not a `#[{}]`: list it in `{}![..]`, not in `{list}![..]`",
            kind.attr(),
            k.attr(),
            names(kind).3,
        );
        // The whole call at the item's name (where the compiler puts the panic), the
        // runtime's path too: a call's span joins its first and last tokens'.
        let at_name = respan(krate, ident.span());
        let fail = quote_spanned!(ident.span()=> #at_name::__private::wrong_list(#wrong));
        refusal(&constant, &method, &quote!(#krate::__private), &ty, &fail)
    });
    quote! {
        #[doc(hidden)]
        #[allow(non_camel_case_types, dead_code)]
        #vis struct #ident {}

        #[automatically_derived]
        impl #ident {
            #(#items)*
        }
    }
}

/// `#[cfg(..)]` for each condition the item's function is compiled under: what is
/// generated for it goes with it.
pub(crate) fn cfgs(item: &Item) -> TokenStream {
    let conditions = &item.cfg;
    quote!(#(#[cfg(#conditions)])*)
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
    // Spanned at the user's tokens below, the expansion's own bindings keep its hygiene.
    let signature = binding("__signature");
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
        // The argument is no longer required, and a tool's schema shows the value (a
        // prompt argument has nowhere to show it, so its type need not be `Serialize`).
        let default = p.default.as_ref().map(|(value, span)| match item.kind {
            Kind::Prompt => quote_spanned! {*span=>
                #signature.not_required(&__PARAMS[#i]);
            },
            _ => quote_spanned! {*span=>
                let __default: #ty = #value;
                #signature.default_value(&__PARAMS[#i], &__default);
            },
        });
        quote_spanned! {p.ty_span=>
            #header_check
            #argument_check
            <#ty as __mcp::FromRequest<#kind>>::describe(&__PARAMS[#i], &mut #signature);
            #default
        }
    });
    let inline_refs = matches!(&item.spec, Spec::Tool(t) if t.inline_refs)
        .then(|| quote!(__signature.inline_refs();));
    // The capabilities the inputs need, checked before the arguments (R-1's order).
    let needs = input::needs(item);
    let uses_input = item.params.iter().any(|p| p.role == Role::Input).then(|| {
        quote! {
            __signature.requirements().asks_upfront();
            #(__signature.requirements().needs_capability(#needs);)*
        }
    });

    let mut index = 0usize;
    let mut extracts: Vec<TokenStream> = Vec::new();
    // Each default as a closure made before any parameter is bound, so the expression
    // sees what it saw in the schema, not the other parameters.
    for (i, p) in item.params.iter().enumerate() {
        if let Some((value, span)) = &p.default {
            let ty = &p.ty;
            let made = default_ident(i);
            extracts.push(quote_spanned!(*span=> let #made = || -> #ty { #value };));
        }
    }
    for (i, p) in item.params.iter().enumerate() {
        let ty = &p.ty;
        let id = &p.ident;
        match p.role {
            Role::Parameter | Role::Extractor => {
                let index_lit = proc_macro2::Literal::usize_unsuffixed(index);
                let take = quote!(<#ty as __mcp::FromRequest<#kind>>::from_request(&mut __call, &__PARAMS[#index_lit])?);
                extracts.push(match &p.default {
                    None => quote!(let #id = #take;),
                    Some(_) => {
                        let made = default_ident(i);
                        quote! {
                            let #id: #ty = match __call.has_argument(__PARAMS[#index_lit].name) {
                                true => #take,
                                false => #made(),
                            };
                        }
                    }
                });
                index += 1;
            }
            Role::Variable => {
                let n = &p.name.value;
                let call = binding("__call");
                extracts.push(quote_spanned!(p.ty_span=> let #id = #call.variable::<#ty>(#n)?;));
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
        // The bindings in parentheses: the call's first token is then at the name too, and
        // the call with it.
        let (mcp_fn, this) = (binding("__mcp_fn"), binding("__this"));
        let call = match (free, method) {
            (true, _) => quote_spanned!(span=> (#mcp_fn)(#(#args),*)),
            (false, true) => quote_spanned!(span=> (#this).#ident(#(#args),*)),
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
        // The future's output, a `Result<_, Error>`. A plain `fn` runs on the blocking pool,
        // so it never holds up the runtime; its result is the output as it is (not
        // `Ok(..?)`, which clippy's `needless_question_mark` flags). `Ok` by its full path,
        // as the expansion's own tokens: spanned at the user's name, a path resolving to
        // the prelude's `Ok` trips `unused_qualifications` there.
        let output = if item.shape.is_async {
            quote!(__mcp::Result::<_, __mcp::Error>::Ok(#invoke.await))
        } else {
            quote!(__mcp::blocking(move || #invoke).await)
        };
        // Spanned at the function's name, so a non-`Send` future is reported there.
        let body = quote_spanned! {span=>
            __mcp::boxed(async move {
                #bind_fn
                #(#extracts)*
                #output
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
            __mcp::ToolDef::new(#name, #signature, #handler)
        },
        Spec::Prompt => quote_spanned! {item.shape.return_span=>
            __mcp::PromptDef::new(#name, #signature, #handler)
        },
        Spec::Resource(r) => {
            let uri = r.uri.value();
            quote_spanned! {item.shape.return_span=>
                __mcp::ResourceDef::new(#uri, #name, #signature, #handler)
            }
        }
    };
    let mut builder = builder::builder(item);
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

/// A key that fails compilation with `fail` when a list reads it, and the constructor
/// beside it (returning `private::ty`, `private` the path to `__private`) that no list
/// then gets to call: how an item, or a `#[server]` type, refuses a list it does not
/// belong in.
fn refusal(
    constant: &syn::Ident,
    method: &syn::Ident,
    private: &TokenStream,
    ty: &TokenStream,
    fail: &TokenStream,
) -> TokenStream {
    quote! {
        #[doc(hidden)]
        #[allow(dead_code)]
        pub const #constant: &'static str = #fail;

        #[doc(hidden)]
        #[allow(dead_code)]
        #[inline] // Never called: not compiled unless used.
        pub fn #method() -> #private::#ty {
            #private::unlisted()
        }
    }
}

/// One of the expansion's own bindings (`__signature`, `__call`, `__mcp_fn`, ...), for code
/// spanned at a user's token: with the expansion's hygiene, it is found also when that
/// token comes from a `macro_rules!` caller, whose hygiene would hide it.
pub(crate) fn binding(name: &str) -> syn::Ident {
    syn::Ident::new(name, Span::call_site())
}

/// The closure that makes parameter `i`'s default in a handler.
fn default_ident(i: usize) -> syn::Ident {
    quote::format_ident!("__mcp_default_{}", i)
}

/// `tokens` with every token (inside groups too) at `span`.
fn respan(tokens: &TokenStream, span: Span) -> TokenStream {
    tokens
        .clone()
        .into_iter()
        .map(|mut tt| {
            if let proc_macro2::TokenTree::Group(g) = &tt {
                let mut ng = proc_macro2::Group::new(g.delimiter(), respan(&g.stream(), span));
                ng.set_span(span);
                tt = proc_macro2::TokenTree::Group(ng);
            } else {
                tt.set_span(span);
            }
            tt
        })
        .collect()
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
    fn generated_code_spells_the_private_path_once_per_constructor() {
        let out = free(
            Kind::Tool,
            quote!(),
            quote! {
                /// Adds.
                async fn add(a: i64, b: i64) -> String { (a + b).to_string() }
            },
        )
        .to_string();
        // The three constructors' return types (the tool's, and the two that only make
        // listing it as a resource or a prompt fail), the alias the tool's body uses, and
        // the two other kinds' keys and constructors.
        assert_eq!(
            out.matches(":: mcp_runtime :: __private").count(),
            8,
            "{out}"
        );
    }
}
