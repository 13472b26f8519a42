//! The rules across the items of one `#[server]` impl block.

use crate::attr::Kind;
use crate::errors::Errors;
use crate::model::{Item, ServerImpl, Spec};

/// Every rule on the impl block and across its items (each item is checked on its own by
/// [`super::item`]).
pub fn server(s: &ServerImpl, errors: &mut Errors) {
    if let Some(path) = &s.trait_path {
        errors.spanned(path, "`#[server]` goes on an inherent `impl` block, not a trait impl; write `impl MyServer { ... }`");
    }
    if let Some(g) = &s.generics {
        errors.spanned(
            g,
            "a `#[server]` type cannot be generic; wrap the generic value in a concrete type",
        );
    }
    if !s.marked {
        errors.spanned(&s.self_ty, "this `#[server]` impl has no `#[tool]`, `#[resource]` or `#[prompt]` methods; mark the methods to serve with `#[tool]`");
    }
    for item in &s.items {
        if let Some(k) = &item.krate {
            errors.at(
                k.span,
                "`crate` goes on `#[server]`, for the whole impl block",
            );
        }
    }
    unique_names(Kind::Tool, &s.items, errors);
    unique_names(Kind::Prompt, &s.items, errors);
    distinct_resources(&s.items, errors);
}

/// Whether two items can both be compiled, as far as the macro can tell: yes unless either
/// has a `#[cfg]` (whose conditions only the compiler evaluates; two methods behind
/// `#[cfg(unix)]` and `#[cfg(not(unix))]` may share a name). A clash between items that
/// are compiled together anyway is still found when the server is built.
fn both_compiled(a: &Item, b: &Item) -> bool {
    a.cfg.is_empty() && b.cfg.is_empty()
}

/// Names are unique within one `impl` (per kind).
fn unique_names(kind: Kind, items: &[Item], errors: &mut Errors) {
    let items: Vec<&Item> = items.iter().filter(|i| i.kind == kind).collect();
    let kind = kind.attr();
    for (i, t) in items.iter().enumerate() {
        if let Some(first) = items[..i]
            .iter()
            .find(|o| o.name.value == t.name.value && both_compiled(o, t))
        {
            errors.at(t.name.span, format!(
                "duplicate {kind} name `{}`; `{}` already uses this name; give one of them `#[{kind}(name = \"...\")]`",
                t.name.value, first.ident
            ));
        }
    }
}

/// Resource URIs and templates of one `impl` cannot match the same URI. A fixed URI that
/// a template also matches is fine: the fixed one is served.
fn distinct_resources(items: &[Item], errors: &mut Errors) {
    let resources: Vec<(&Item, &crate::model::ResourceSpec)> = items
        .iter()
        .filter_map(|i| match &i.spec {
            Spec::Resource(r) => Some((i, r)),
            _ => None,
        })
        .collect();
    let collide = |a: &crate::model::ResourceSpec, b: &crate::model::ResourceSpec| {
        if a.uri.value() == b.uri.value() {
            return true;
        }
        match (&a.template, &b.template) {
            (Ok(x), Ok(y)) => !x.is_static() && !y.is_static() && x.overlaps(y),
            _ => false,
        }
    };
    for (i, (item, r)) in resources.iter().enumerate() {
        if let Some((first, f)) = resources[..i]
            .iter()
            .find(|(o_item, o)| both_compiled(o_item, item) && collide(o, r))
        {
            errors.spanned(&r.uri, format!(
                "resources `{}` and `{}` can match the same URI; `{}` declares the first one; make their fixed parts differ",
                f.uri.value(),
                r.uri.value(),
                first.ident
            ));
        }
    }
}
