//! A resource's own rules: its URI template and the variables' parameters, an MCP App
//! view, the list function and the annotations.

use crate::errors::{Errors, spanned};
use crate::model::{Item, Spec};
use syn::Type;

/// A resource: its template, the variables' parameters, list function, annotations.
pub(super) fn resource(item: &Item, errors: &mut Errors) {
    let Spec::Resource(r) = &item.spec else {
        return;
    };
    if let Some(b) = &r.app {
        let (span, app) = &**b;
        let uri = r.uri.value();
        if let Err(v) = mcp_rules::view_uri(&uri) {
            errors.violation(r.uri.span(), v);
        } else if r.template.as_ref().is_ok_and(|t| !t.variables().is_empty()) {
            errors.spanned(
                &r.uri,
                "an MCP App view has a fixed URI; remove the template variables (or `app`)",
            );
        }
        if r.mime_type.is_some() {
            errors.at(*span, "an MCP App view's MIME type is `text/html;profile=mcp-app`, set by `app`; remove `mime_type`");
        }
        for p in app.permissions.iter().flat_map(|l| l.iter()) {
            let name = p.get_ident().map(ToString::to_string).unwrap_or_default();
            if let Err(v) = mcp_rules::app_permission(&name) {
                errors.violation(syn::spanned::Spanned::span(p), v);
            }
        }
    }
    let template = match &r.template {
        Ok(t) => t,
        Err(e) => {
            errors.spanned(&r.uri, format!("invalid URI template: {e}; write a URI, or an RFC 6570 template such as \"notes://{{id}}\" or \"file:///{{+path}}\""));
            return;
        }
    };
    for (var, op) in template.variables() {
        let Some(p) = item.params.iter().find(|p| p.name.value == var) else {
            continue;
        };
        use mcp_uri_template::Operator;
        // Which expressions can hand the variable a `/`: reserved ones, an exploded path,
        // and a query parameter's value (`?path=a/b`).
        let nested = match op {
            Operator::Reserved
            | Operator::Fragment
            | Operator::Query
            | Operator::QueryContinuation => true,
            Operator::Path => template.is_exploded(var),
            _ => false,
        };
        if !nested && is_safe_path(&p.ty) {
            errors.spanned(&r.uri, format!(
                "this expression of `{var}` never holds a `/`, so the `SafePath` `{var}` can never be a nested path; write `{{+{var}}}` (or `{{/{var}*}}`) to match `a/b/c`"
            ));
        }
    }
    for var in item.variables() {
        if !item.params.iter().any(|p| p.name.value == var) {
            errors.spanned(
                &r.uri,
                format!(
                    "template variable `{{{var}}}` has no parameter; {}",
                    parameter_for(&var)
                ),
            );
        }
    }
    if template.is_static()
        && let Some(list) = &r.list
    {
        errors.spanned(list, "only a URI template can list the resources it produces; a fixed URI is listed by itself");
    }
    let Some(a) = &r.annotations else { return };
    for path in &a.audience {
        if !path
            .get_ident()
            .is_some_and(|i| i == "user" || i == "assistant")
        {
            errors.push(spanned(
                path,
                "unknown audience; use `user` and/or `assistant`",
            ));
        }
    }
    if let Some(p) = &a.priority
        && let Err(v) = mcp_rules::priority(p.value)
    {
        errors.violation(p.span, v);
    }
    if let Some(lm) = &a.last_modified
        && let Err(v) = mcp_rules::last_modified(&lm.value)
    {
        errors.violation(lm.span, v);
    }
}

/// Whether `ty` is spelled `SafePath` (or `path::to::SafePath`): a hint for the template
/// rule above, not a rule on types.
fn is_safe_path(ty: &Type) -> bool {
    matches!(ty, Type::Path(p) if p.qself.is_none() && p.path.segments.last().is_some_and(|s| s.ident == "SafePath"))
}

/// How to add the parameter a template variable needs: one of its name, or, when the name
/// is no Rust identifier (`a.b`, `2x`), one that names it with `#[arg(name)]`.
fn parameter_for(var: &str) -> String {
    if syn::parse_str::<syn::Ident>(var).is_ok() {
        return format!("add a parameter named `{var}`, such as `{var}: String`");
    }
    if syn::parse_str::<syn::Ident>(&format!("r#{var}")).is_ok() {
        return format!("add a parameter named `{var}`, such as `r#{var}: String`");
    }
    let mut ident: String = var
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    if !ident.starts_with(|c: char| c.is_ascii_alphabetic()) {
        ident.insert(0, 'v');
    }
    // `self`, `Self`, `super`, `crate`: keywords even as `r#` identifiers.
    if syn::parse_str::<syn::Ident>(&ident).is_err() {
        ident.push('_');
    }
    format!(
        "`{var}` is no Rust name: add a parameter that names it, such as `#[arg(name = \"{var}\")] {ident}: String`"
    )
}

#[cfg(test)]
mod tests {
    use crate::attr::Kind;
    use crate::check::tests::count;
    use quote::quote;

    #[test]
    fn resources() {
        assert_eq!(
            count(
                Kind::Resource,
                quote!("notes://{id}/{part}"),
                quote! {
                async fn note(id: u64) -> String { todo!() } }
            ),
            1
        );
        assert_eq!(
            count(
                Kind::Resource,
                quote!("notes://{id"),
                quote! {
                async fn note(id: u64) -> String { todo!() } }
            ),
            1
        );
        assert_eq!(
            count(
                Kind::Resource,
                quote!("notes://x", list = f),
                quote! {
                async fn note() -> String { todo!() } }
            ),
            1
        );
    }
}
