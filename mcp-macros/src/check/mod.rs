//! Stage 3, check: every rule, once, over the model. Naming rules come from `mcp_rules`,
//! the crate `Server::build()` checks hand-built definitions with. Errors accumulate: one
//! build reports every mistake, each at the offending token with a help line.

mod input;
mod resource;
mod server;

pub(crate) use input::unraw;
pub use server::server;

use crate::attr::Kind;
use crate::errors::Errors;
use crate::model::{Item, Param, Receiver, Role, Site, Spec};
use input::inputs;
use resource::resource;
use syn::Type;

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
    if let Some(v) = s.variadic {
        errors.at(v, format!("a {kind} cannot be variadic"));
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
    for (span, other) in &item.also {
        errors.at(*span, format!(
            "this function is already a {kind}; one function is one tool, resource or prompt; to serve the same code as a {} too, write a second function that calls this one",
            other.attr()
        ));
    }
    match (&s.receiver, item.site) {
        (Receiver::Ref(span) | Receiver::Other(span), Site::Free) => errors.at(*span, format!(
            "`#[{kind}]` on a method needs `#[mcp_runtime::server]` on its `impl` block; put `#[mcp_runtime::server]` above `impl ...`"
        )),
        (Receiver::Other(span), Site::Method) => errors.at(*span, format!(
            "a {kind} method must take `&self`; requests run concurrently, so they share the server by reference; use interior mutability (a `Mutex`, an atomic) for state that changes"
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
    if let Err(v) = rule(&item.name.value) {
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

/// One parameter: a plain name, an owned type, options that fit its role.
fn param(item: &Item, p: &Param, errors: &mut Errors) {
    let kind = item.kind.attr();
    if p.ident.is_none() {
        errors.spanned(&p.pat, "unsupported parameter pattern; bind the parameter to a name, such as `city: String`; the name is the argument's key");
        return;
    }
    match &p.ty {
        Type::ImplTrait(t) => errors.spanned(t, format!(
            "a {kind} parameter cannot be `impl Trait`; name a concrete type; it decides the input schema"
        )),
        ty => {
            if let Some(r) = borrowed(ty) {
                errors.spanned(r, format!(
                    "a {kind} parameter must be an owned type; arguments are decoded from JSON for every call; use `String` instead of `&str`, `Vec<T>` instead of `&[T]` (also inside `Option<..>`, `Vec<..>` and tuples)"
                ));
            }
        }
    }
    if let Some(span) = p.cfg {
        errors.at(span, format!(
            "`#[cfg]` on a {kind} parameter is not supported: the schema and the call are generated from every parameter; put the `#[cfg]` on the whole function, or make the parameter an `Option<T>`"
        ));
    }
    if let Some(ident) = &p.ident
        && ident.to_string().starts_with("__")
    {
        errors.spanned(ident, "parameter names starting with `__` are reserved for the code the macro generates; rename the parameter (`#[arg(name = \"...\")]` sets the argument's name clients see)");
    }
    if p.name.value.is_empty() {
        errors.at(p.name.span, "an argument name cannot be empty");
    }
    if let (Some(_), Some(span)) = (p.arg_span, p.input_span) {
        errors.at(
            span,
            "a parameter filled by `#[input]` is not an argument, so it takes no `#[arg]`",
        );
    }
    if let (Some(span), None) = (p.input_span, item.needs_input) {
        errors.at(span, "`#[input]` needs `#[needs_input]` on the function; add `#[needs_input]` below the `#[tool]`, `#[prompt]` or `#[resource]` attribute");
    }
    if let Some(path) = &p.complete {
        match (item.kind, p.role) {
            (Kind::Tool, _) => errors.spanned(path, "tool arguments have no completion; `complete` applies to prompt arguments and resource template variables"),
            (Kind::Resource, Role::Extractor) => errors.spanned(path, format!(
                "`{}` is not a variable of the template, so it cannot be completed",
                p.name.value
            )),
            _ => {}
        }
    }
    if let (Kind::Resource, Role::Variable, Some(d)) = (item.kind, p.role, &p.description) {
        errors.at(d.span, format!(
            "MCP has no description for a template variable, so this one would be lost; describe `{{{}}}` in the resource's doc comment instead",
            p.name.value
        ));
    }
    if let (Kind::Resource, Role::Extractor, Some(_)) = (item.kind, p.role, &p.description) {
        errors.spanned(
            &p.ident,
            format!(
                "`{}` is not a variable of the template, so it has no description",
                p.name.value
            ),
        );
    }
}

/// The first reference in `ty`, itself or inside the type arguments, tuples, arrays and
/// slices it is made of (`Option<&str>`, `Vec<&str>`, `(u8, &str)`): none decodes from
/// the JSON of a call.
fn borrowed(ty: &Type) -> Option<&syn::TypeReference> {
    match ty {
        Type::Reference(r) => Some(r),
        Type::Paren(p) => borrowed(&p.elem),
        Type::Group(g) => borrowed(&g.elem),
        Type::Array(a) => borrowed(&a.elem),
        Type::Slice(s) => borrowed(&s.elem),
        Type::Tuple(t) => t.elems.iter().find_map(borrowed),
        Type::Path(p) => p.path.segments.iter().find_map(|seg| match &seg.arguments {
            syn::PathArguments::AngleBracketed(a) => a.args.iter().find_map(|arg| match arg {
                syn::GenericArgument::Type(t) => borrowed(t),
                _ => None,
            }),
            _ => None,
        }),
        _ => None,
    }
}

/// Two parameters give their argument the same name (`#[arg(name = "x")] a, x`): the
/// schema would list it twice, and no call could fill both. Inputs are not arguments.
fn distinct_names(item: &Item, errors: &mut Errors) {
    let named: Vec<&Param> = item
        .params
        .iter()
        .filter(|p| p.role != Role::Input && p.ident.is_some() && !p.name.value.is_empty())
        .collect();
    for (i, p) in named.iter().enumerate() {
        if let Some(first) = named[..i].iter().find(|o| o.name.value == p.name.value) {
            // At the one that was renamed, if either was.
            let at = if p.arg_span.is_some() || first.arg_span.is_none() {
                p.name.span
            } else {
                first.name.span
            };
            errors.at(at, format!(
                "two parameters are named `{}`; each argument needs a name of its own; rename one with `#[arg(name = \"...\")]`",
                p.name.value
            ));
        }
    }
}

/// `#[arg(header = "...")]`: tool arguments only, HTTP tokens, unique regardless of case.
fn headers(item: &Item, errors: &mut Errors) {
    let mut seen: Vec<&str> = Vec::new();
    for p in &item.params {
        let Some(h) = &p.header else { continue };
        if item.kind != Kind::Tool {
            errors.at(
                h.span,
                format!(
                    "`header` applies to tool arguments, not to {} parameters",
                    item.kind.attr()
                ),
            );
            continue;
        }
        if let Err(v) = mcp_rules::header_name(&h.value) {
            errors.violation(h.span, v);
        } else if let Some(Err(v)) = seen
            .iter()
            .map(|s| mcp_rules::distinct_headers(s, &h.value))
            .find(Result::is_err)
        {
            errors.violation(h.span, v);
        }
        seen.push(&h.value);
    }
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
