//! `#[server]` on an inherent `impl`: the impl, with our attributes removed from its
//! methods, plus an `impl Provider` listing one definition per `#[tool]`, `#[resource]` and
//! `#[prompt]` method.

use crate::attr::{self, Kind};
use crate::check;
use crate::errors::Errors;
use crate::model::{Item, ServerImpl, Site};
use proc_macro2::TokenStream;
use quote::quote;
use syn::ImplItem;

pub fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::new();
    let options = if args.is_empty() {
        attr::ServerArgs::default()
    } else {
        attr::server_options(args, &mut errors)
    };
    let krate = super::krate(options.krate.as_ref());
    let mut imp: syn::ItemImpl = match syn::parse2(item.clone()) {
        Ok(i) => i,
        Err(e) => return unparsable(item, e, &krate, options.krate.as_ref()),
    };

    let self_ty_tokens = imp.self_ty.clone();
    // The `&self` methods a completer may name, with their parameter types.
    let methods: std::collections::BTreeMap<String, Vec<syn::Type>> = imp
        .items
        .iter()
        .filter_map(|i| match i {
            ImplItem::Fn(m) if m.sig.receiver().is_some() => Some((
                m.sig.ident.to_string(),
                m.sig
                    .inputs
                    .iter()
                    .filter_map(|a| match a {
                        syn::FnArg::Typed(t) => Some((*t.ty).clone()),
                        syn::FnArg::Receiver(_) => None,
                    })
                    .collect(),
            )),
            _ => None,
        })
        .collect();
    let mut items: Vec<Item> = Vec::new();
    let mut marked = false;
    for impl_item in &mut imp.items {
        let ImplItem::Fn(method) = impl_item else {
            continue;
        };
        let krate = options.krate.as_ref();
        let Some(pos) = method
            .attrs
            .iter()
            .position(|a| attr::kind_of(a, krate).is_some())
        else {
            continue;
        };
        marked = true;
        let a = method.attrs.remove(pos);
        let kind: Kind = attr::kind_of(&a, krate).expect("checked above");
        // The helper attributes come off first: whatever else fails, none is left behind
        // for rustc to report as unknown.
        let needs_input = attr::take_needs_input(&mut method.attrs, krate, &mut errors);
        let also = attr::take_other_items(&mut method.attrs, krate);
        let params = attr::take_params(&mut method.sig, krate, &mut errors);
        let Some(tokens) = attr::attr_args(&a, &mut errors) else {
            continue;
        };
        if let Some(o) = attr::options(kind, tokens, &mut errors) {
            let mut item = Item::build(
                kind,
                o,
                &method.attrs,
                &method.sig,
                params,
                needs_input,
                Site::Method,
            );
            item.owner = Some(quote!(#self_ty_tokens).to_string().replace(' ', ""));
            item.also = also;
            for p in &mut item.params {
                let method = p.complete.as_ref().and_then(|path| {
                    let segs: Vec<String> =
                        path.segments.iter().map(|s| s.ident.to_string()).collect();
                    match segs.iter().map(String::as_str).collect::<Vec<_>>()[..] {
                        [m] | ["Self", m] => Some(m.to_owned()),
                        _ => None,
                    }
                });
                p.complete_method = method.and_then(|m| methods.get(&m).cloned());
            }
            check::item(&item, &mut errors);
            // Reported (a variadic item is an error); rustc need not report it again.
            method.sig.variadic = None;
            items.push(item);
        }
    }
    let model = ServerImpl {
        self_ty: imp.self_ty.clone(),
        trait_path: imp.trait_.as_ref().map(|(p, _)| p.clone()),
        generics: (!imp.generics.params.is_empty()).then(|| imp.generics.params.clone()),
        items,
        marked,
    };
    check::server(&model, &mut errors);

    let self_ty = &imp.self_ty;
    if let Some(errors) = errors.finish() {
        let stub = imp
            .trait_
            .is_none()
            .then(|| provider(&krate, self_ty, quote!(), quote!()));
        return quote!(#imp #stub #errors);
    }
    // Each item is built by a hidden associated function of its own, listed in a constant
    // table that `Provider` hands to the runtime: the functions stay small however many
    // items the impl has, as with `tools![..]`.
    let mut helpers = Vec::new();
    let mut kind_fn = |kind: Kind, method: &str, ty: TokenStream| {
        let items: Vec<&Item> = model.items.iter().filter(|i| i.kind == kind).collect();
        if items.is_empty() {
            return None;
        }
        let names: Vec<syn::Ident> = (0..items.len())
            .map(|i| quote::format_ident!("__mcp_{}_{}", method, i))
            .collect();
        let table = quote::format_ident!("__MCP_{}", method.to_uppercase());
        // A method behind `#[cfg]` may be compiled out: its helper and its entry in the
        // table are compiled under the same conditions.
        let cfgs: Vec<TokenStream> = items.iter().map(|item| super::cfgs(item)).collect();
        for ((item, name), cfg) in items.iter().zip(&names).zip(&cfgs) {
            let def = super::definition(item);
            helpers.push(quote! {
                #cfg
                #[doc(hidden)]
                fn #name(this: &__mcp::Arc<Self>) -> __mcp::#ty {
                    let _ = this;
                    #def
                }
            });
        }
        helpers.push(quote! {
            #[doc(hidden)]
            const #table: &'static [fn(&__mcp::Arc<Self>) -> __mcp::#ty] = &[#(#cfgs Self::#names),*];
        });
        let method = syn::Ident::new(method, proc_macro2::Span::call_site());
        Some(quote! {
            fn #method(this: &__mcp::Arc<Self>) -> __mcp::Vec<__mcp::#ty> {
                __mcp::defs_with(this, Self::#table)
            }
        })
    };
    let tools = kind_fn(Kind::Tool, "tools", quote!(ToolDef));
    let resources = kind_fn(Kind::Resource, "resources", quote!(ResourceDef));
    let prompts = kind_fn(Kind::Prompt, "prompts", quote!(PromptDef));
    let provider = provider(
        &krate,
        self_ty,
        quote!(#(#helpers)*),
        quote!(#tools #resources #prompts),
    );
    quote!(#imp #provider)
}

/// `impl Provider for Type { body }`, after the hidden `impl Type { helpers }` that builds
/// the items (if any), fenced in a `const _` with the `__mcp` alias.
fn provider(
    krate: &TokenStream,
    self_ty: &syn::Type,
    helpers: TokenStream,
    body: TokenStream,
) -> TokenStream {
    let guards = list_guards(self_ty);
    quote! {
        const _: () = {
            use #krate::__private as __mcp;
            #[automatically_derived]
            impl #self_ty {
                #helpers
                #guards
            }
            #[automatically_derived]
            impl __mcp::Provider for #self_ty {
                #body
            }
        };
    }
}

/// What `tools![..]`, `resources![..]` and `prompts![..]` read of an item, for the type:
/// each key panics when evaluated, saying the type is registered with `.provider(..)` (a
/// compile error at the impl, noted where the type was listed), and the constructors are
/// never called.
fn list_guards(self_ty: &syn::Type) -> TokenStream {
    let name = quote!(#self_ty).to_string().replace(' ', "");
    let items = super::KINDS.map(|k| {
        let (method, constant, ty, list) = super::names(k);
        let method = syn::Ident::new(method, proc_macro2::Span::call_site());
        let constant = syn::Ident::new(constant, proc_macro2::Span::call_site());
        let why = format!(
            "`{name}` is a `#[server]` type: register its value with `.provider(value)`, not in `{list}![..]`"
        );
        let fail = quote::quote_spanned!(syn::spanned::Spanned::span(self_ty)=> __mcp::wrong_list(#why));
        super::refusal(&constant, &method, &quote!(__mcp), &ty, &fail)
    });
    quote!(#(#items)*)
}

/// An impl block that does not parse (a syntax error in a method body): the tokens back,
/// so rustc reports the real error, plus an empty `Provider` for the type when it can be
/// read, so `.provider(value)` does not error too. `krate_path` is the `crate = ...`
/// override, under which our attributes may also be written.
fn unparsable(
    item: TokenStream,
    e: syn::Error,
    krate: &TokenStream,
    krate_path: Option<&syn::Path>,
) -> TokenStream {
    use syn::parse::Parser;
    let shell = |input: syn::parse::ParseStream<'_>| {
        input.call(syn::Attribute::parse_outer)?;
        input.parse::<syn::Token![impl]>()?;
        let generics: syn::Generics = input.parse()?;
        let ty: syn::Type = input.parse()?;
        let rest: TokenStream = input.parse()?;
        let is_block = matches!(rest.into_iter().next(), Some(proc_macro2::TokenTree::Group(g)) if g.delimiter() == proc_macro2::Delimiter::Brace);
        Ok((generics.params.is_empty() && is_block).then_some(ty))
    };
    match shell.parse2(item.clone()) {
        Ok(Some(ty)) => {
            let stub = provider(krate, &ty, quote!(), quote!());
            let item = strip_ours(item, true, krate_path);
            quote!(#item #stub)
        }
        _ => {
            let e = syn::Error::new(
                e.span(),
                format!("{e}; `#[server]` goes on an `impl` block"),
            )
            .to_compile_error();
            quote!(#item #e)
        }
    }
}

/// The tokens of an impl block that does not parse, without our attributes on its items
/// and parameters (nothing would expand them, and rustc would report each one). Inside
/// `{ }` groups other than the impl body (method bodies) nothing is touched. An attribute
/// is ours by the rule the parse stage uses ([`attr::is_ours`]): `#[tool]`,
/// `#[mcp_runtime::tool]`, or through the `crate = ...` path (`#[rt::tool]`).
fn strip_ours(tokens: TokenStream, impl_level: bool, krate: Option<&syn::Path>) -> TokenStream {
    use proc_macro2::{Delimiter, Group, TokenTree};
    use syn::parse::Parser;
    const OURS: &[&str] = &["tool", "resource", "prompt", "needs_input", "arg", "input"];
    // The attribute's path (what follows it, its options, is not read).
    let path_of = |input: syn::parse::ParseStream<'_>| {
        let path = input.call(syn::Path::parse_mod_style)?;
        input.parse::<TokenStream>()?;
        Ok(path)
    };
    let is_ours = |g: &Group| {
        path_of
            .parse2(g.stream())
            .is_ok_and(|path| OURS.iter().any(|name| attr::is_ours(&path, name, krate)))
    };
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < trees.len() {
        match (&trees[i], trees.get(i + 1)) {
            (TokenTree::Punct(p), Some(TokenTree::Group(g)))
                if p.as_char() == '#' && g.delimiter() == Delimiter::Bracket && is_ours(g) =>
            {
                i += 2;
                continue;
            }
            (TokenTree::Group(g), _) => {
                let descend = match g.delimiter() {
                    Delimiter::Parenthesis => true,
                    // The first brace group at the top is the impl body.
                    Delimiter::Brace => impl_level,
                    _ => false,
                };
                if descend {
                    let mut ng = Group::new(g.delimiter(), strip_ours(g.stream(), false, krate));
                    ng.set_span(g.span());
                    out.push(TokenTree::Group(ng));
                } else {
                    out.push(trees[i].clone());
                }
            }
            (t, _) => out.push(t.clone()),
        }
        i += 1;
    }
    out.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An impl block with a syntax error in a method body, its attributes written through
    /// `path` (`rt`, `::my_reexport::mcp`).
    fn broken(path: TokenStream) -> TokenStream {
        quote! {
            impl Counter {
                /// Counts.
                #[#path::tool(name = "count")]
                #[#path::needs_input]
                async fn count(
                    &self,
                    #[#path::arg(description = "By how much")] by: u32,
                    #[#path::input(roots)] roots: Vec<String>,
                ) -> String {
                    let n = by + ;
                    n.to_string()
                }

                /// Not an item: its attributes are not ours.
                #[inline]
                fn other(&self) {}
            }
        }
    }

    #[test]
    fn an_unparsable_impl_loses_attributes_written_through_the_crate_path() {
        for (args, path) in [
            (quote!(crate = rt), quote!(rt)),
            (quote!(crate = "rt"), quote!(rt)),
            (
                quote!(crate = ::my_reexport::mcp),
                quote!(::my_reexport::mcp),
            ),
            (quote!(crate = rt), quote!(::mcp_runtime)),
            (quote!(), quote!(mcp_runtime)),
        ] {
            let out = expand(args.clone(), broken(path.clone())).to_string();
            for name in ["tool", "needs_input", "arg", "input"] {
                let attr = quote!(# [#path :: #name]).to_string();
                let attr = attr.trim_end_matches(" ]");
                assert!(
                    !out.contains(attr),
                    "{args} / {path}: `{attr}` left in {out}"
                );
            }
            // The rest is as written: the body with its error, the other attributes.
            assert!(out.contains("let n = by + ;"), "{out}");
            assert!(out.contains("# [inline]"), "{out}");
            assert!(out.contains("impl __mcp :: Provider for Counter"), "{out}");
        }
    }

    #[test]
    fn an_unparsable_impl_keeps_attributes_of_other_paths() {
        // Without `crate = rt`, `rt::tool` is not ours: left for rustc to resolve.
        let out = expand(quote!(), broken(quote!(rt))).to_string();
        assert!(out.contains("# [rt :: tool (name = \"count\")]"), "{out}");
        // Nor is an attribute that only starts like ours.
        let out = expand(
            quote!(),
            quote! {
                impl Counter {
                    #[tool::other]
                    #[mcp_runtime::tool::other]
                    fn f(&self) { let = ; }
                }
            },
        )
        .to_string();
        assert!(out.contains("# [tool :: other]"), "{out}");
        assert!(out.contains("# [mcp_runtime :: tool :: other]"), "{out}");
    }
}
