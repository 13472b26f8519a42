//! The `#[input(...)]` parameters: the statements asking for them, and the `format!` of
//! their texts and URLs, which insert the other parameters by name (`{path}`).

use crate::check;
use crate::model::{InputKind, Item};
use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};

/// The statements that fill `#[input]` parameters: all inputs are asked together (one
/// round), then each is unwrapped. Empty when there are none.
pub(super) fn input_stmts(item: &Item) -> TokenStream {
    let inputs: Vec<&crate::model::Param> =
        item.params.iter().filter(|p| p.input.is_some()).collect();
    if inputs.is_empty() {
        return quote!();
    }
    // `format!` only when the text inserts arguments (`{name}`); clippy would flag the rest,
    // whose `{{` and `}}` are then unescaped here.
    // The format string keeps the span of the text as written, so that rustc's errors
    // about a placeholder (a value that is not `Display`) land on it, not on `#[tool]`.
    let text = |s: &str, span: Span| match plain(s) {
        Some(s) => quote!(__mcp::String::from(#s)),
        None => formatted(s, span, item),
    };
    // Spanned at the parameter's type, `__input` keeps the expansion's hygiene.
    let input = super::binding("__input");
    let futs: Vec<TokenStream> = inputs
        .iter()
        .map(|param| {
            let spec = param.input.as_ref().expect("filtered");
            let key = &spec.key.value;
            let ty = &param.ty;
            match spec.asks.first().expect("checked: one thing") {
                InputKind::Elicit { message } => {
                    let message = text(&message.value, message.span);
                    quote_spanned! {param.ty_span=>
                        <#ty as __mcp::ElicitParam>::elicit(&#input, #key, #message)
                    }
                }
                InputKind::Url { url, message } => {
                    let message = match message {
                        Some(m) => text(&m.value, m.span),
                        None => text("", Span::call_site()),
                    };
                    let url = match plain(&url.value) {
                        Some(url) => quote!(__mcp::String::from(#url)),
                        None => formatted_url(&url.value, url.span, item),
                    };
                    quote_spanned! {param.ty_span=>
                        <#ty as __mcp::UrlParam>::elicit_url(&#input, #key, #message, #url)
                    }
                }
                InputKind::Sample {
                    text: prompt,
                    max_tokens,
                } => {
                    let prompt = text(&prompt.value, prompt.span);
                    quote_spanned! {param.ty_span=>
                        <#ty as __mcp::SampleParam>::sample(&#input, #key, __mcp::sampling_request(&#prompt, #max_tokens))
                    }
                }
                InputKind::Roots => quote_spanned! {param.ty_span=>
                    <#ty as __mcp::RootsParam>::roots(&#input, #key)
                },
            }
        })
        .collect();
    let idents: Vec<_> = inputs.iter().map(|p| &p.ident).collect();
    let tys: Vec<&syn::Type> = inputs.iter().map(|p| &p.ty).collect();
    if let ([ident], [ty], [fut]) = (&idents[..], &tys[..], &futs[..]) {
        return quote! {
            let __input = __call.input()?;
            let #ident: #ty = #fut.await?;
            __input.begin_body().await;
        };
    }
    // What each input needs of the client, checked before any is asked (they are asked
    // in one round, so one that cannot be would leave the others answered for nothing).
    let needs = needs(item);
    quote! {
        let __input = __call.input()?;
        __input.require_all(&[#(#needs),*])?;
        let (#(#idents,)*) = __mcp::join!(#(#futs),*);
        #(let #idents: #tys = #idents?;)*
        __input.begin_body().await;
    }
}

/// The client capability each `#[input]` parameter needs, in order (`"elicitation.form"`,
/// `"elicitation.url"`, `"sampling"`, `"roots"`).
pub(super) fn needs(item: &Item) -> Vec<&'static str> {
    item.params
        .iter()
        .filter_map(|p| p.input.as_ref())
        .filter_map(|spec| spec.asks.first())
        .map(|ask| match ask {
            InputKind::Elicit { .. } => "elicitation.form",
            InputKind::Url { .. } => "elicitation.url",
            InputKind::Sample { .. } => "sampling",
            InputKind::Roots => "roots",
        })
        .collect()
}

/// A text (or URL) that inserts no argument, as sent: its `{{` and `}}` are the braces
/// they stand for in a `format!` string. `None` when it has a placeholder (`{name}`).
fn plain(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                out.push('{');
            }
            '{' => return None,
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                out.push('}');
            }
            c => out.push(c),
        }
    }
    Some(out)
}

/// `format!` of an input's text, which inserts parameters by name (`{path}`). A
/// placeholder naming a raw identifier (`{type}` for `r#type`), which `format!` cannot
/// spell, is renamed and passed as a named argument.
fn formatted(text: &str, span: Span, item: &Item) -> TokenStream {
    let raw: Vec<(String, &syn::Ident)> = item
        .params
        .iter()
        .filter_map(|p| p.ident.as_ref())
        .filter(|i| i.to_string().starts_with("r#"))
        .map(|i| (check::unraw(i), i))
        .collect();
    let mut named: Vec<(syn::Ident, &syn::Ident)> = Vec::new();
    let out = rewrite(text, |placeholder, out| {
        // `{name}` or `{name:spec}`.
        let inner = &placeholder[1..placeholder.len() - 1];
        let (name, spec) = match inner.split_once(':') {
            Some((n, s)) => (n, Some(s)),
            None => (inner, None),
        };
        let Some((unraw, ident)) = raw.iter().find(|(unraw, _)| unraw == name.trim()) else {
            out.push_str(placeholder);
            return;
        };
        let alias = syn::Ident::new(&format!("__mcp_raw_{unraw}"), Span::call_site());
        out.push('{');
        out.push_str(&alias.to_string());
        if let Some(spec) = spec {
            out.push(':');
            out.push_str(spec);
        }
        out.push('}');
        if !named.iter().any(|(a, _)| a == &alias) {
            named.push((alias, *ident));
        }
    });
    let names = named.iter().map(|(a, _)| a);
    let values = named.iter().map(|(_, i)| i);
    let out = syn::LitStr::new(&out, span);
    quote!(__mcp::format!(#out #(, #names = #values)*))
}

/// `format!` of a URL elicitation's URL: each inserted argument (`{service}`) formatted as
/// in a text, then percent-encoded, so a value fills its place and no more.
fn formatted_url(url: &str, span: Span, item: &Item) -> TokenStream {
    let mut values = Vec::new();
    let out = rewrite(url, |placeholder, out| {
        let value = formatted(placeholder, span, item);
        values.push(quote!(__mcp::url_component(&#value)));
        out.push_str("{}");
    });
    quote!(__mcp::format!(#out #(, #values)*))
}

/// `text` copied with `{{`, `}}` and a lone `}` as they are, and each `{...}` placeholder
/// (braces included; checked: every `{` closes) written by `each`.
fn rewrite(text: &str, mut each: impl FnMut(&str, &mut String)) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(['{', '}']) {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        let literal = match tail {
            t if t.starts_with("{{") || t.starts_with("}}") => 2,
            t if t.starts_with('}') => 1,
            _ => 0,
        };
        if literal > 0 {
            out.push_str(&tail[..literal]);
            rest = &tail[literal..];
            continue;
        }
        let Some(close) = tail.find('}') else {
            break;
        };
        each(&tail[..=close], &mut out);
        rest = &tail[close + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::plain;
    use crate::attr::Kind;
    use quote::quote;

    #[test]
    fn a_text_without_placeholders_is_unescaped() {
        assert_eq!(plain("Delete {{all}}?").as_deref(), Some("Delete {all}?"));
        assert_eq!(plain("a }} b").as_deref(), Some("a } b"));
        assert_eq!(plain("plain").as_deref(), Some("plain"));
        assert_eq!(plain("Delete {path}?"), None);
        assert_eq!(plain("{{ {path} }}"), None);
        // Through the macro: a closing brace alone is sent as one brace.
        let out = crate::expand::free(
            Kind::Tool,
            quote!(),
            quote! {
                /// Asks.
                #[needs_input]
                async fn t(#[input(elicit = "Ready? }}")] ok: Sure) {}
            },
        )
        .to_string();
        assert!(out.contains(r#"String :: from ("Ready? }")"#), "{out}");
        assert!(!out.contains("compile_error"), "{out}");
    }
}
