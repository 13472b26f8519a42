//! The validated model of a tool, built from the parsed attributes and the function's
//! signature. Everything the expander needs, with spans for later errors.

use crate::attr::{ArgArgs, ToolArgs};
use crate::check;
use crate::doc::{self, Doc};
use darling::FromMeta;
use darling::error::Accumulator;
use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{FnArg, Ident, Pat, Signature, Type};

/// How a tool method receives its server value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Receiver {
    /// A free function, or an associated function without `self`.
    None,
    /// `&self`.
    Ref,
}

/// One parameter of the tool function.
pub struct Param {
    /// Where the type is written (errors about the type land there).
    pub ty_span: Span,
    /// The binding (`a` in `a: i64`).
    pub ident: Ident,
    /// The argument's key (the ident without `r#`).
    pub name: String,
    /// The declared type.
    pub ty: Type,
    /// `#[arg(description = "...")]`.
    pub description: Option<String>,
}

impl Param {
    /// The span of the parameter's type.
    pub fn ty_span(&self) -> Span {
        self.ty_span
    }
}

/// A resolved icon.
pub struct Icon {
    pub src: String,
    pub mime_type: Option<String>,
    pub sizes: Vec<String>,
    pub theme: Option<String>,
}

/// Resolved behaviour hints.
#[derive(Default)]
pub struct Annotations {
    pub title: Option<String>,
    pub read_only_hint: Option<bool>,
    pub destructive_hint: Option<bool>,
    pub idempotent_hint: Option<bool>,
    pub open_world_hint: Option<bool>,
}

/// Resolved caching hints.
pub struct Cache {
    pub ttl_ms: Option<u64>,
    pub private: Option<bool>,
}

/// A tool, validated.
pub struct ToolFn {
    pub ident: Ident,
    pub name: String,
    pub name_span: Span,
    pub title: Option<String>,
    pub description: Doc,
    pub annotations: Option<Annotations>,
    pub icons: Vec<Icon>,
    /// `_meta` entries: key and the value as JSON text.
    pub meta: Vec<(String, String)>,
    pub cache: Option<Cache>,
    pub receiver: Receiver,
    pub params: Vec<Param>,
    /// The declared return type (or the name, without one): errors about it land here.
    pub return_span: Span,
}

/// Where the function sits, which decides what receivers are allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Site {
    /// A free function (`#[tool]` alone).
    Free,
    /// A method inside `#[server] impl`.
    Method,
}

impl ToolFn {
    /// Builds the model. Helper attributes (`#[arg]`) are removed from `sig` so the
    /// function can be emitted unchanged otherwise. Errors go to `errors`; `None` when the
    /// tool cannot be expanded.
    pub fn build(
        args: ToolArgs,
        attrs: &[syn::Attribute],
        sig: &mut Signature,
        site: Site,
        errors: &mut Accumulator,
    ) -> Option<ToolFn> {
        let mut ok = true;
        let mut fail = |errors: &mut Accumulator, e: darling::Error| {
            errors.push(e);
            ok = false;
        };

        if sig.asyncness.is_none() {
            fail(
                errors,
                crate::errors::spanned(
                    &sig.fn_token,
                    "`#[tool]` functions must be `async`\n\n= help: write `async fn` here",
                ),
            );
        }
        if !sig.generics.params.is_empty() {
            fail(
                errors,
                crate::errors::spanned(
                    &sig.generics.params,
                    "a tool cannot be generic\n\n= help: its parameter types decide its input schema, so they must be concrete",
                ),
            );
        }
        if let Some(v) = &sig.variadic {
            fail(
                errors,
                crate::errors::spanned(v, "a tool cannot be variadic"),
            );
        }

        let ident = sig.ident.clone();
        let (name, name_span) = match &args.name {
            Some(n) => ((**n).clone(), n.span()),
            None => (
                ident.to_string().trim_start_matches("r#").to_owned(),
                ident.span(),
            ),
        };
        if let Err(msg) = check::tool_name(&name) {
            fail(errors, darling::Error::custom(msg).with_span(&name_span));
        }

        let description = match &args.description {
            Some(d) if d.trim().is_empty() => {
                fail(
                    errors,
                    darling::Error::custom("the description is empty").with_span(&d.span()),
                );
                None
            }
            Some(d) => Some(Doc::Text((**d).clone())),
            None => doc::extract(attrs),
        };
        if description.is_none() && args.description.is_none() {
            fail(errors, darling::Error::custom(format!(
                "tool `{name}` has no description\n\n= help: add a doc comment (`/// What it does.`) or `#[tool(description = \"...\")]`; clients and models rely on it"
            )).with_span(&ident));
        }

        let mut receiver = Receiver::None;
        let mut params = Vec::new();
        for input in sig.inputs.iter_mut() {
            match input {
                FnArg::Receiver(r) => {
                    if site == Site::Free {
                        fail(
                            errors,
                            crate::errors::spanned(
                                &r.self_token,
                                "`#[tool]` on a method needs `#[mcp_runtime::server]` on its `impl` block\n\n= help: put `#[mcp_runtime::server]` above `impl ...`",
                            ),
                        );
                    } else if !matches!(r.kind, syn::ReceiverKind::Reference(_, _, None)) {
                        fail(
                            errors,
                            crate::errors::spanned(
                                &r.self_token,
                                "a tool method must take `&self`\n\n= help: tools run concurrently, so they share the server by reference; use interior mutability (a `Mutex`, an atomic) for state that changes",
                            ),
                        );
                    } else {
                        receiver = Receiver::Ref;
                    }
                }
                FnArg::Typed(pt) => {
                    let description = take_arg_attr(&mut pt.attrs, errors);
                    let ident = match &*pt.pat {
                        Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                            pi.ident.clone()
                        }
                        other => {
                            fail(
                                errors,
                                crate::errors::spanned(
                                    other,
                                    "unsupported parameter pattern\n\n= help: bind the parameter to a name, such as `city: String`; the name is the argument's key in the input schema",
                                ),
                            );
                            continue;
                        }
                    };
                    if let Some(e) = check::param_type(&pt.ty) {
                        fail(errors, e);
                        continue;
                    }
                    let name = ident.to_string().trim_start_matches("r#").to_owned();
                    params.push(Param {
                        ty_span: pt.ty.span(),
                        ident,
                        name,
                        ty: (*pt.ty).clone(),
                        description: description.flatten(),
                    });
                }
            }
        }

        let mut meta = Vec::new();
        if let Some(m) = &args.meta {
            match check::meta_object(m) {
                Ok(entries) => meta = entries,
                Err(msg) => fail(errors, darling::Error::custom(msg).with_span(&m.span())),
            }
        }

        let mut icons = Vec::new();
        for icon in &args.icon {
            if let Err(msg) = check::icon_src(&icon.src) {
                fail(
                    errors,
                    darling::Error::custom(msg).with_span(&icon.src.span()),
                );
            }
            if let Some(theme) = &icon.theme
                && !matches!(theme.as_str(), "light" | "dark")
            {
                fail(
                    errors,
                    darling::Error::custom(format!(
                        "unknown icon theme `{}`\n\n= help: use \"light\" or \"dark\"",
                        theme.as_str()
                    ))
                    .with_span(&theme.span()),
                );
            }
            icons.push(Icon {
                src: (*icon.src).clone(),
                mime_type: icon.mime_type.clone(),
                sizes: icon
                    .sizes
                    .as_deref()
                    .unwrap_or("")
                    .split_whitespace()
                    .map(str::to_owned)
                    .collect(),
                theme: icon.theme.as_ref().map(|t| (**t).clone()),
            });
        }

        let mut cache = None;
        if args.ttl_ms.is_some() || args.cache_scope.is_some() {
            let private = match &args.cache_scope {
                None => None,
                Some(s) if s.as_str() == "public" => Some(false),
                Some(s) if s.as_str() == "private" => Some(true),
                Some(s) => {
                    fail(errors, darling::Error::custom(format!(
                        "unknown cache scope `{}`\n\n= help: use \"public\" (the same for every caller) or \"private\"",
                        s.as_str()
                    )).with_span(&s.span()));
                    None
                }
            };
            cache = Some(Cache {
                ttl_ms: args.ttl_ms,
                private,
            });
        }

        let annotations = args.annotations.map(|a| Annotations {
            title: a.title,
            read_only_hint: a.read_only_hint,
            destructive_hint: a.destructive_hint,
            idempotent_hint: a.idempotent_hint,
            open_world_hint: a.open_world_hint,
        });

        let return_span = match &sig.output {
            syn::ReturnType::Type(_, ty) => ty.span(),
            syn::ReturnType::Default => ident.span(),
        };

        if !ok {
            return None;
        }
        Some(ToolFn {
            ident,
            name,
            name_span,
            title: args.title,
            description: description?,
            annotations,
            icons,
            meta,
            cache,
            receiver,
            params,
            return_span,
        })
    }
}

/// Removes `#[arg(...)]` from a parameter and returns its description.
fn take_arg_attr(
    attrs: &mut Vec<syn::Attribute>,
    errors: &mut Accumulator,
) -> Option<Option<String>> {
    let mut out = None;
    let mut seen: Option<Span> = None;
    attrs.retain(|a| {
        if !a.path().is_ident("arg") {
            return true;
        }
        if seen.is_some() {
            errors.push(crate::errors::spanned(
                a,
                "duplicate `#[arg]` attribute\n\n= help: put all options in one `#[arg(...)]`",
            ));
            return false;
        }
        seen = Some(a.span());
        if let Some(v) = errors.handle(ArgArgs::from_meta(&a.meta)) {
            out = Some(v.description);
        }
        false
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    fn build(f: syn::ItemFn, args: ToolArgs, site: Site) -> (Option<ToolFn>, usize) {
        let mut f = f;
        let mut errors = darling::Error::accumulator();
        let m = ToolFn::build(args, &f.attrs.clone(), &mut f.sig, site, &mut errors);
        let n = errors.into_inner().len();
        (m, n)
    }

    #[test]
    fn plain_tool() {
        let (m, n) = build(
            parse_quote! {
                /// Adds.
                async fn add(a: i64, #[arg(description = "second")] b: Option<i64>) -> i64 { a }
            },
            ToolArgs::default(),
            Site::Free,
        );
        assert_eq!(n, 0);
        let m = m.unwrap();
        assert_eq!(m.name, "add");
        assert_eq!(m.params.len(), 2);
        assert_eq!(m.params[1].description.as_deref(), Some("second"));
        assert_eq!(m.receiver, Receiver::None);
    }

    #[test]
    fn every_mistake_is_reported_at_once() {
        let (m, n) = build(
            parse_quote! {
                fn bad<T>(_: i64, x: &str) {}
            },
            ToolArgs::default(),
            Site::Free,
        );
        assert!(m.is_none());
        // not async, generic, no description, pattern, reference
        assert_eq!(n, 5);
    }

    #[test]
    fn methods_take_ref_self() {
        let (m, n) = build(
            parse_quote! { /// D.
            async fn t(&self) {} },
            ToolArgs::default(),
            Site::Method,
        );
        assert_eq!(n, 0);
        assert_eq!(m.unwrap().receiver, Receiver::Ref);
        let (_, n) = build(
            parse_quote! { /// D.
            async fn t(&mut self) {} },
            ToolArgs::default(),
            Site::Method,
        );
        assert_eq!(n, 1);
        let (_, n) = build(
            parse_quote! { /// D.
            async fn t(&self) {} },
            ToolArgs::default(),
            Site::Free,
        );
        assert_eq!(n, 1);
    }
}
