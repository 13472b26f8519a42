//! The parameters' rules: each one's pattern, type and options for its role, argument names
//! distinct, and the headers that mirror tool arguments.

use crate::attr::Kind;
use crate::errors::Errors;
use crate::model::{Item, Param, Role};
use syn::Type;

/// One parameter: a plain name, an owned type, options that fit its role.
pub(super) fn param(item: &Item, p: &Param, errors: &mut Errors) {
    let kind = item.kind.attr();
    if p.ident.is_none() {
        errors.spanned(&p.pat, "unsupported parameter pattern; bind the parameter to a name, such as `city: String`; the name is the argument's key");
        return;
    }
    if let Some(t) = find(&p.ty, &|t| matches!(t, Type::ImplTrait(_))) {
        errors.spanned(t, format!(
            "a {kind} parameter cannot be `impl Trait`; name a concrete type; it decides the input schema"
        ));
    } else if let Some(r) = find(&p.ty, &|t| matches!(t, Type::Reference(_))) {
        errors.spanned(r, format!(
            "a {kind} parameter must be an owned type; arguments are decoded from JSON for every call; use `String` instead of `&str`, `Vec<T>` instead of `&[T]` (also inside `Option<..>`, `Vec<..>` and tuples)"
        ));
    }
    if let Some(place) = &p.cfg {
        errors.spanned(place, format!(
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
    if let (Some(_), Some(place)) = (&p.arg_span, &p.input_span) {
        errors.spanned(
            place,
            "a parameter filled by `#[input]` is not an argument, so it takes no `#[arg]`",
        );
    }
    if let (Some(place), None) = (&p.input_span, &item.needs_input) {
        errors.spanned(place, "`#[input]` needs `#[needs_input]` on the function; add `#[needs_input]` below the `#[tool]`, `#[prompt]` or `#[resource]` attribute");
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
    if let (Some(h), Some((_, span))) = (&p.header, &p.default) {
        errors.at(*span, format!(
            "a mirrored argument has no default: a call that leaves it out sends no `Mcp-Param-{}` header, so what routes on the header would not see the value used; let the call leave it out as an `Option<T>`, or require it",
            h.value
        ));
    }
    // `Option<T>` with a default: left out, the call gets the default, so the handler never
    // sees `None` (and `default = 3` would not even type-check): the type is `T`.
    if let (Some((_, span)), Some(inner)) = (&p.default, option_inner(&p.ty)) {
        errors.at(*span, format!(
            "an argument with a default is never missing: write its type as `{}`, not `Option<{}>` (a call that leaves it out gets the default)",
            quote::ToTokens::to_token_stream(inner),
            quote::ToTokens::to_token_stream(inner),
        ));
    }
    match (item.kind, p.role, &p.default) {
        (Kind::Resource, Role::Variable, Some((_, span))) => errors.at(*span, format!(
            "a template variable has no default: the URI gives `{{{}}}`; make it an `Option<T>` if the URI may leave it undefined",
            p.name.value
        )),
        (Kind::Resource, Role::Extractor, Some((_, span))) => errors.at(*span, format!(
            "`{}` is not a variable of the template, so it has no default",
            p.name.value
        )),
        _ => {}
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

/// The first type in `ty` that `is` picks, `ty` itself or inside the type arguments,
/// tuples, arrays and slices it is made of: a reference (`Option<&str>`, `Vec<&str>`,
/// `(u8, &str)`), which no call's JSON decodes into, or an `impl Trait`
/// (`Option<impl Into<String>>`), which names no type to decode.
fn find<'a>(ty: &'a Type, is: &dyn Fn(&Type) -> bool) -> Option<&'a Type> {
    if is(ty) {
        return Some(ty);
    }
    match ty {
        Type::Paren(p) => find(&p.elem, is),
        Type::Group(g) => find(&g.elem, is),
        Type::Array(a) => find(&a.elem, is),
        Type::Slice(s) => find(&s.elem, is),
        Type::Tuple(t) => t.elems.iter().find_map(|t| find(t, is)),
        Type::Path(p) => p.path.segments.iter().find_map(|seg| match &seg.arguments {
            syn::PathArguments::AngleBracketed(a) => a.args.iter().find_map(|arg| match arg {
                syn::GenericArgument::Type(t) => find(t, is),
                _ => None,
            }),
            _ => None,
        }),
        _ => None,
    }
}

/// Two parameters give their argument the same name (`#[arg(name = "x")] a, x`): the
/// schema would list it twice, and no call could fill both. Inputs are not arguments.
pub(super) fn distinct_names(item: &Item, errors: &mut Errors) {
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
pub(super) fn headers(item: &Item, errors: &mut Errors) {
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
        if let Err(mut v) = mcp_rules::header_name(&h.value) {
            if h.value.is_empty() && v.help.is_none() {
                v.help = Some(format!(
                    "name the header, such as `header = \"Region\"` (sent as `Mcp-Param-Region`), or leave `header` out so that `{}` is not mirrored",
                    p.name.value
                ));
            }
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

/// `T` of an `Option<T>` (written `Option`, `std::option::Option` or `core::option::Option`).
fn option_inner(ty: &Type) -> Option<&Type> {
    let Type::Path(tp) = ty else { return None };
    let last = tp.path.segments.last()?;
    if last.ident != "Option" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match args.args.first()? {
        syn::GenericArgument::Type(t) if args.args.len() == 1 => Some(t),
        _ => None,
    }
}
