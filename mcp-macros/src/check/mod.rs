//! Stage 3, check: every rule, once, over the model. Naming rules come from `mcp_rules`,
//! the crate `Server::build()` checks hand-built definitions with. Errors accumulate: one
//! build reports every mistake, each at the offending token with a help line.

mod input;
mod param;
mod resource;
mod server;

pub(crate) use input::unraw;
pub use server::server;

use crate::attr::Kind;
use crate::errors::Errors;
use crate::model::{Item, Receiver, Site, Spec};
use input::inputs;
use param::{distinct_names, headers, param};
use resource::resource;

/// Every rule on one item.
pub fn item(item: &Item, errors: &mut Errors) {
    shape(item, errors);
    identity(item, errors);
    for p in &item.params {
        param(item, p, errors);
    }
    distinct_names(item, errors);
    inputs(item, errors);
    headers(item, errors);
    match &item.spec {
        Spec::Tool(t) => {
            if let Some(task) = &t.task
                && let Err(v) = mcp_rules::task_support(&task.value)
            {
                errors.violation(task.span, v);
            }
            if let Some(ui) = &t.ui
                && let Err(v) = mcp_rules::view_uri(&ui.value)
            {
                errors.violation(ui.span, v);
            }
            if let Some(schema) = &t.input_schema {
                match serde_json::from_str::<serde_json::Value>(&schema.value) {
                    Err(e) => errors.at(
                        schema.span,
                        format!("`input_schema` is not valid JSON: {e}"),
                    ),
                    Ok(v) => {
                        if let Err(v) =
                            mcp_rules::input_schema_root(v.get("type").and_then(|t| t.as_str()))
                        {
                            errors.violation(schema.span, v);
                        }
                    }
                }
            }
        }
        Spec::Resource(_) => resource(item, errors),
        Spec::Prompt => {}
    }
}

/// `async`, not generic, not variadic, the right receiver for where it sits.
fn shape(item: &Item, errors: &mut Errors) {
    let kind = item.kind.attr();
    let s = &item.shape;
    if let Some(g) = &s.generics {
        errors.spanned(g, format!("a {kind} cannot be generic; its parameter types decide its schema, so they must be concrete"));
    }
    if let Some(v) = &s.variadic {
        errors.spanned(v, format!("a {kind} cannot be variadic; clients send named arguments, one per parameter; take a list of values as a `Vec<T>` parameter"));
    }
    if let Some(u) = s.unsafety {
        errors.at(u, format!(
            "a {kind} cannot be an `unsafe fn`: any client may call it, with any arguments; make the function safe and keep the `unsafe` block inside it, where its invariants are checked"
        ));
    }
    if let Some(abi) = s.abi {
        errors.at(abi, format!(
            "a {kind} cannot have an ABI (`extern`): the runtime calls it as a Rust function; remove `extern`, and call the foreign function from its body"
        ));
    }
    if let Some(e) = &s.unshareable_error {
        errors.spanned(e, format!(
            "a {kind}'s error must be `Send` and `Sync` (the answer is made on any of the runtime's threads); write `Box<dyn std::error::Error + Send + Sync>`, or return `mcp_runtime::Error`, which `?` converts any error into"
        ));
    }
    for (place, other) in &item.also {
        errors.spanned(place, format!(
            "this function is already a {kind}; one function is one tool, resource or prompt; to serve the same code as a {} too, write a second function that calls this one",
            other.attr()
        ));
    }
    match (&s.receiver, item.site) {
        (Receiver::Ref(span) | Receiver::Other(span), Site::Free) => errors.at(*span, format!(
            "`#[{kind}]` on a method needs `#[mcp_runtime::server]` on its `impl` block; put `#[mcp_runtime::server]` above `impl ...`"
        )),
        (Receiver::Other(span), Site::Method) => errors.at(*span, format!(
            "a {kind} method must take `&self`; requests run concurrently, so they share the server by reference; use interior mutability (a `Mutex`, an atomic) for state that changes, and to move state into a spawned task keep it in an `Arc` field and clone that"
        )),
        _ => {}
    }
}

/// The name, description, icons, `_meta` and caching hints.
fn identity(item: &Item, errors: &mut Errors) {
    let rule = match item.kind {
        Kind::Tool => mcp_rules::tool_name,
        Kind::Prompt => mcp_rules::prompt_name,
        Kind::Resource => mcp_rules::resource_name,
    };
    if let Err(mut v) = rule(&item.name.value) {
        // A name taken from the function's identifier (Rust allows `météo`) is fixed by
        // naming the tool apart, without renaming the function.
        let from_ident = item.name.value == item.ident.to_string().trim_start_matches("r#");
        if item.name.value.is_empty() && v.help.is_none() {
            v.help = Some(format!(
                "write a name, or leave `name` out to use the function's, `{}`",
                item.ident.to_string().trim_start_matches("r#")
            ));
        }
        if item.kind == Kind::Tool && from_ident {
            let help = v.help.take().unwrap_or_default();
            v.help = Some(format!(
                "{help}, or keep the function's name and name the tool with `#[tool(name = \"...\")]`"
            ));
        }
        errors.violation(item.name.span, v);
    }
    match &item.description_option {
        Some(d) if d.value.trim().is_empty() => errors.at(d.span, "the description is empty"),
        _ => {}
    }
    if item.description.is_none()
        && item.description_option.is_none()
        && item.kind != Kind::Resource
    {
        let kind = item.kind.attr();
        errors.spanned(&item.ident, format!(
            "{kind} `{}` has no description; add a doc comment (`/// What it does.`) or `#[{kind}(description = \"...\")]`; clients and models rely on it",
            item.name.value
        ));
    }
    for icon in &item.icons {
        if let Err(v) = mcp_rules::icon_src(&icon.src.value) {
            errors.violation(icon.src.span, v);
        }
        if let Some(theme) = &icon.theme
            && let Err(v) = mcp_rules::icon_theme(&theme.value)
        {
            errors.violation(theme.span, v);
        }
    }
    if let Some(meta) = &item.meta
        && let Err(msg) = meta_entries(&meta.value)
    {
        errors.at(meta.span, msg);
    }
    if let Some(scope) = item.cache.as_ref().and_then(|c| c.scope.as_ref())
        && let Err(v) = mcp_rules::cache_scope(&scope.value)
    {
        errors.violation(scope.span, v);
    }
    for (i, scope) in item.scopes.iter().enumerate() {
        if let Err(v) = mcp_rules::scope(&scope.value) {
            errors.violation(scope.span, v);
        } else if item.scopes[..i].iter().any(|s| s.value == scope.value) {
            errors.at(
                scope.span,
                format!(
                    "scope `{}` is listed twice; list each scope once",
                    scope.value
                ),
            );
        }
    }
}

/// `meta = r#"{...}"#`: a JSON object whose keys follow the `_meta` naming rules. The
/// entries, as key and JSON text.
pub fn meta_entries(text: &str) -> Result<Vec<(String, String)>, String> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        format!("`meta` is not valid JSON: {e}; write a JSON object, such as meta = r#\"{{\"com.example/team\": \"search\"}}\"#")
    })?;
    let serde_json::Value::Object(map) = v else {
        return Err("`meta` must be a JSON object".into());
    };
    let mut out = Vec::new();
    for (k, v) in map {
        mcp_rules::meta_key(&k).map_err(|v| crate::errors::message(&v))?;
        out.push((k, v.to_string()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::tests::model;
    use quote::quote;

    pub(super) fn count(
        kind: Kind,
        args: proc_macro2::TokenStream,
        f: proc_macro2::TokenStream,
    ) -> usize {
        let (model, mut errors) = model(kind, args, f);
        super::item(&model.expect("parses"), &mut errors);
        errors.count()
    }

    #[test]
    fn every_mistake_is_reported_at_once() {
        // generic, no description, pattern, reference (a plain `fn` is fine)
        assert_eq!(
            count(
                Kind::Tool,
                quote!(),
                quote! { fn bad<T>(_: i64, x: &str) {} }
            ),
            4
        );
    }

    #[test]
    fn a_clean_tool_passes() {
        assert_eq!(
            count(
                Kind::Tool,
                quote!(annotations(read_only_hint = true)),
                quote! {
                    /// Adds.
                    async fn add(a: i64, #[arg(header = "B")] b: Option<i32>) -> i64 { a }
                }
            ),
            0
        );
    }

    #[test]
    fn rules_come_from_mcp_rules() {
        assert_eq!(
            count(
                Kind::Tool,
                quote!(name = "has space"),
                quote! { /// D.
                async fn t() {} }
            ),
            1
        );
        assert_eq!(
            count(
                Kind::Tool,
                quote!(meta = r#"{"io.modelcontextprotocol/x": 1}"#),
                quote! { /// D.
                async fn t() {} }
            ),
            1
        );
        assert_eq!(
            count(
                Kind::Tool,
                quote!(icon(src = "http://x", theme = "blue")),
                quote! { /// D.
                async fn t() {} }
            ),
            2
        );
        assert_eq!(
            count(
                Kind::Tool,
                quote!(),
                quote! { /// D.
                async fn t(#[arg(header = "A")] a: i32, #[arg(header = "a")] b: i32) {} }
            ),
            1
        );
    }

    #[test]
    fn receivers_follow_the_site() {
        assert_eq!(
            count(
                Kind::Tool,
                quote!(),
                quote! { /// D.
                async fn t(&self) {} }
            ),
            1
        );
    }
}
