//! The builder calls of a definition, after its constructor: the description, title,
//! icons and other metadata every kind shares, then the kind's own.

use crate::check;
use crate::doc::Doc;
use crate::model::{Item, Spec};
use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};

/// The builder calls after the constructor: what every kind shares, then the kind's own.
pub(super) fn builder(item: &Item) -> Vec<TokenStream> {
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
                // `Annotations` has these three fields: with all three given, a struct
                // update would trip clippy's `needless_update` in the user's crate.
                let rest = (fields.len() < 3).then(|| quote!(..__mcp::Default::default()));
                b.push(quote!(.annotations(__mcp::Annotations {
                    #(#fields,)*
                    #rest
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
                let this = super::binding("this");
                b.push(quote_spanned! {span=>
                    .completer(#n, {
                        let __this = __mcp::Arc::clone(#this);
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
