//! `#[needs_input]` and its `#[input]` parameters: one thing asked each, distinct keys, and
//! texts and URLs whose `{name}` placeholders name the arguments.

use crate::errors::Errors;
use crate::model::{InputKind, Item, Role};

/// `#[needs_input]` and its `#[input]` parameters.
pub(super) fn inputs(item: &Item, errors: &mut Errors) {
    for p in &item.params {
        let Some(spec) = &p.input else { continue };
        if spec.asks.len() != 1 {
            errors.spanned(&spec.place, "`#[input]` asks exactly one thing; write one of `elicit = \"message\"`, `url = \"https://...\", message = \"...\"`, `sample = \"prompt\"` or `roots`");
        }
        if let Some(InputKind::Url { url, message: None }) = spec.asks.first() {
            errors.at(url.span, "a URL elicitation needs a `message` too; add `message = \"...\"` after the URL, the text the client shows with the link");
        }
        if let Some(InputKind::Url { url, .. }) = spec.asks.first() {
            if let Err(v) = mcp_rules::elicitation_url(&url.value) {
                errors.violation(url.span, v);
            } else {
                placeholders_name_arguments(item, url, errors);
            }
        }
        if let Some(text) = spec.asks.first().and_then(InputKind::text) {
            placeholders_name_arguments(item, text, errors);
        }
    }
    if item.needs_input.is_none() {
        return;
    }
    if item.params.iter().all(|p| p.input_span.is_none()) {
        errors.spanned(&item.ident, "`#[needs_input]` but no parameter is an input; mark the parameters to ask for with `#[input(elicit = \"...\")]` (or `url`, `sample`, `roots`)");
    }
    let keys: Vec<_> = item
        .params
        .iter()
        .filter_map(|p| p.input.as_ref())
        .collect();
    for (i, spec) in keys.iter().enumerate() {
        if keys[..i].iter().any(|o| o.key.value == spec.key.value) {
            let msg = format!(
                "duplicate input key `{}`; each input needs its own key in `inputRequests`; give one of them another with `key = \"...\"`",
                spec.key.value
            );
            match spec.key_given {
                true => errors.at(spec.key.span, msg),
                false => errors.spanned(&spec.place, msg),
            }
        }
    }
}

/// The `{name}` placeholders of an input's text name parameters that are known before the
/// round asks: the arguments (and extractors), not the other inputs.
fn placeholders_name_arguments(item: &Item, text: &crate::model::Sp<String>, errors: &mut Errors) {
    let known: Vec<String> = item
        .params
        .iter()
        .filter(|p| p.role != Role::Input)
        .filter_map(|p| p.ident.as_ref().map(unraw))
        .collect();
    let list = if known.is_empty() {
        "the function has no other parameters".to_owned()
    } else {
        format!(
            "the parameters are {}",
            known
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let names = match placeholders(&text.value) {
        Ok(n) => n,
        Err(e) => return errors.at(text.span, format!("{e}; {list}")),
    };
    for name in names {
        if known.contains(&name) {
            continue;
        }
        let why =
            if item.params.iter().any(|p| {
                p.role == Role::Input && p.ident.as_ref().is_some_and(|i| unraw(i) == name)
            }) {
                format!("`{{{name}}}` is asked in the same round, so the text cannot insert it")
            } else {
                format!("`{{{name}}}` names no parameter")
            };
        errors.at(text.span, format!("{why}; {list}"));
    }
}

/// A binding as a placeholder names it: `type` for `r#type`.
pub(crate) fn unraw(ident: &syn::Ident) -> String {
    let s = ident.to_string();
    s.strip_prefix("r#").map(str::to_owned).unwrap_or(s)
}

/// The names a `format!` string inserts: `{name}` and `{name:spec}`; `{{` and `}}` are
/// literal braces. Positional placeholders are refused.
fn placeholders(text: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
            }
            '{' => {
                let mut name = String::new();
                let mut closed = false;
                for c in chars.by_ref() {
                    if c == '}' {
                        closed = true;
                        break;
                    }
                    name.push(c);
                }
                if !closed {
                    return Err(
                        "the text has a `{` without its `}` (write `{{` for a brace)".into(),
                    );
                }
                let name = name.split(':').next().unwrap_or_default().trim().to_owned();
                if name.is_empty() || name.bytes().all(|b| b.is_ascii_digit()) {
                    return Err("a placeholder must name a parameter, as in `{path}`".into());
                }
                out.push(name);
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
            }
            '}' => {
                return Err("the text has a `}` without its `{` (write `}}` for a brace)".into());
            }
            _ => {}
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attr::Kind;
    use crate::check::tests::count;
    use quote::quote;

    #[test]
    fn placeholder_names() {
        assert_eq!(
            placeholders("Delete {path} ({size:?})? {{literal}}").unwrap(),
            ["path", "size"]
        );
        assert!(placeholders("{}").is_err());
        assert!(placeholders("{0}").is_err());
        assert!(placeholders("{open").is_err());
        assert!(placeholders("close}").is_err());
        assert_eq!(
            count(
                Kind::Tool,
                quote!(),
                quote! { /// D.
                #[needs_input] async fn t(path: String, #[input(elicit = "Delete {pth}?")] ok: Sure) {} }
            ),
            1
        );
        assert_eq!(
            count(
                Kind::Tool,
                quote!(),
                quote! { /// D.
                #[needs_input] async fn t(path: String, #[input(elicit = "Delete {path}?")] ok: Sure) {} }
            ),
            0
        );
        assert_eq!(
            count(
                Kind::Tool,
                quote!(),
                quote! { /// D.
                #[needs_input] async fn t(#[input(elicit = "Hi {who}")] who: Sure) {} }
            ),
            1
        );
    }

    #[test]
    fn inputs() {
        assert_eq!(
            count(
                Kind::Tool,
                quote!(),
                quote! { /// D.
                #[needs_input] async fn t(a: i64) {} }
            ),
            1
        );
        assert_eq!(
            count(
                Kind::Tool,
                quote!(),
                quote! { /// D.
                async fn t(#[input(roots)] r: Vec<Value>) {} }
            ),
            1
        );
        assert_eq!(
            count(
                Kind::Tool,
                quote!(),
                quote! { /// D.
                #[needs_input] async fn t(#[input(roots, elicit = "x")] r: Vec<Value>) {} }
            ),
            1
        );
        assert_eq!(
            count(
                Kind::Tool,
                quote!(),
                quote! { /// D.
                #[needs_input] async fn t(#[input(roots)] a: Vec<Value>, #[input(roots, key = "a")] b: Vec<Value>) {} }
            ),
            1
        );
    }
}
