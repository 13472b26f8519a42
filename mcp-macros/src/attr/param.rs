//! Helper attributes on the function and its parameters: `#[needs_input]`, `#[arg]`,
//! `#[input]`. Each is read and removed, so the function is emitted without them.

use super::{ArgArgs, InputArgs};
use crate::errors::{Errors, Place};
use darling::FromMeta;
use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{FnArg, Signature};

/// One typed parameter as written, with its helper attributes.
pub struct RawParam {
    pub pat: syn::Pat,
    pub ty: syn::Type,
    /// `#[arg(...)]`, when given (and parsed).
    pub arg: Option<ArgArgs>,
    /// Where `#[arg]` was written.
    pub arg_span: Option<Place>,
    /// `#[input(...)]`, when given (and parsed).
    pub input: Option<InputArgs>,
    /// Where `#[input]` was written (also when its options did not parse).
    pub input_span: Option<Place>,
    /// Where a `#[cfg]` or `#[cfg_attr]` on the parameter was written.
    pub cfg: Option<Place>,
    /// Its doc comment (`/// ...` on the parameter), and where: the argument's
    /// description unless `#[arg(description)]` gives one.
    pub doc: Option<(String, Span)>,
}

/// Removes every `#[needs_input]` (or `#[mcp_runtime::needs_input]`, or through the
/// overridden crate path) from an item's attributes; where the first was. A second one, or
/// options (it takes none), are errors.
pub fn take_needs_input(
    attrs: &mut Vec<syn::Attribute>,
    krate: Option<&syn::Path>,
    errors: &mut Errors,
) -> Option<Place> {
    let mut first = None;
    attrs.retain(|a| {
        if !super::is_ours(a.path(), "needs_input", krate) {
            return true;
        }
        if first.is_some() {
            errors.spanned(
                a,
                "duplicate `#[needs_input]` attribute; one marks the function, whatever its number of inputs; remove this one",
            );
        } else if !matches!(a.meta, syn::Meta::Path(_)) {
            errors.spanned(
                a,
                "`#[needs_input]` takes no options; write `#[needs_input]`, and put what to ask on each parameter with `#[input(...)]`",
            );
        }
        first.get_or_insert(Place::of(a));
        false
    });
    first
}

/// Removes every other `#[tool]`, `#[resource]` or `#[prompt]` (ours, by any path) from an
/// item's attributes: what each was, and where. One function is one item; left in place,
/// each would expand again.
pub fn take_other_items(
    attrs: &mut Vec<syn::Attribute>,
    krate: Option<&syn::Path>,
) -> Vec<(Place, super::Kind)> {
    let mut found = Vec::new();
    attrs.retain(|a| match super::kind_of(a, krate) {
        Some(kind) => {
            found.push((Place::of(a), kind));
            false
        }
        None => true,
    });
    found
}

/// Reads and removes `#[arg]` and `#[input]` (or `#[mcp_runtime::arg]`, ...) from every
/// typed parameter of `sig`.
pub fn take_params(
    sig: &mut Signature,
    krate: Option<&syn::Path>,
    errors: &mut Errors,
) -> Vec<RawParam> {
    let mut out = Vec::new();
    for input in sig.inputs.iter_mut() {
        let FnArg::Typed(pt) = input else { continue };
        let (arg, arg_span) = take_one(&mut pt.attrs, "arg", krate, errors);
        let (input, input_span) = take_one(&mut pt.attrs, "input", krate, errors);
        let doc = take_doc(&mut pt.attrs, errors);
        refuse_derive_attrs(&mut pt.attrs, errors);
        let cfg = pt
            .attrs
            .iter()
            .find(|a| a.path().is_ident("cfg") || a.path().is_ident("cfg_attr"))
            .map(Place::of);
        out.push(RawParam {
            pat: (*pt.pat).clone(),
            ty: (*pt.ty).clone(),
            arg,
            arg_span,
            input,
            input_span,
            cfg,
            doc,
        });
    }
    out
}

/// Removes a parameter's doc comment (`///` lines, which rustc allows on no parameter):
/// its text, and where it starts.
fn take_doc(attrs: &mut Vec<syn::Attribute>, errors: &mut Errors) -> Option<(String, Span)> {
    let docs: Vec<syn::Attribute> = attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .cloned()
        .collect();
    attrs.retain(|a| !a.path().is_ident("doc"));
    let span = docs.first()?.span();
    match crate::doc::extract(&docs)? {
        crate::doc::Doc::Text(text) => Some((text, span)),
        crate::doc::Doc::Expr(_) => {
            errors.push(crate::errors::spanned(
                &docs[0],
                "a parameter's description is plain `///` text; for another, use `#[arg(description = \"...\")]`",
            ));
            None
        }
    }
}

/// Removes `#[serde(...)]` and `#[schemars(...)]` from a parameter, each an error saying
/// what does apply: a parameter is no field of a struct those derives read.
fn refuse_derive_attrs(attrs: &mut Vec<syn::Attribute>, errors: &mut Errors) {
    attrs.retain(|a| {
        let why = if a.path().is_ident("serde") {
            "`#[serde(...)]` does not apply to a parameter; name the argument with `#[arg(name = \"...\")]` and give a default with `#[arg(default = ...)]`"
        } else if a.path().is_ident("schemars") {
            "`#[schemars(...)]` does not apply to a parameter; describe it with a `///` comment or `#[arg(description = \"...\")]`, and put bounds on a type of its own (a struct deriving `JsonSchema`)"
        } else {
            return true;
        };
        errors.push(crate::errors::spanned(a, why));
        false
    });
}

/// Removes every `#[name(...)]` from `attrs`; parses the first (a second one is an error).
fn take_one<T: FromMeta>(
    attrs: &mut Vec<syn::Attribute>,
    name: &str,
    krate: Option<&syn::Path>,
    errors: &mut Errors,
) -> (Option<T>, Option<Place>) {
    let mut parsed = None;
    let mut span = None;
    let mut problems = Vec::new();
    attrs.retain(|a| {
        if !super::is_ours(a.path(), name, krate) {
            return true;
        }
        if span.is_some() {
            problems.push(crate::errors::spanned(
                a,
                format!("duplicate `#[{name}]` attribute; put all options in one `#[{name}(...)]`"),
            ));
            return false;
        }
        span = Some(Place::of(a));
        if let syn::Meta::Path(_) = &a.meta {
            let example = if name == "arg" {
                "`#[arg(name = \"...\")]`, `#[arg(description = \"...\")]`"
            } else {
                "`#[input(elicit = \"...\")]`, `#[input(roots)]`"
            };
            problems.push(crate::errors::spanned(
                a,
                format!("`#[{name}]` needs options, such as {example}; without any, remove it"),
            ));
            return false;
        }
        match T::from_meta(&a.meta) {
            Ok(v) => parsed = Some(v),
            Err(e) => problems.push(e.into()),
        }
        false
    });
    for e in problems {
        errors.push(e);
    }
    (parsed, span)
}
