//! The validated models of tools, resources and prompts, built from the parsed attributes
//! and the function's signature: everything the expanders need, with spans for errors.

mod prompt;
mod resource;

pub use prompt::PromptFn;
pub use resource::{ParamKind, ResourceFn};

use crate::attr::{ArgArgs, IconArgs, InputArgs, ToolArgs};
use crate::check;
use crate::doc::{self, Doc};
use crate::errors::spanned;
use darling::FromMeta;
use darling::error::Accumulator;
use darling::util::SpannedValue;
use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{FnArg, Ident, Pat, Signature, Type};

/// How a method receives its server value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Receiver {
    /// A free function, or an associated function without `self`.
    None,
    /// `&self`.
    Ref,
}

/// Where the function sits, which decides what receivers are allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Site {
    /// A free function (`#[tool]` alone).
    Free,
    /// A method inside `#[server] impl`.
    Method,
}

/// One parameter of the function.
pub struct Param {
    /// The binding (`a` in `a: i64`).
    pub ident: Ident,
    /// The argument's key (the ident without `r#`).
    pub name: String,
    /// The declared type.
    pub ty: Type,
    /// Where the type is written (errors about the type land there).
    pub ty_span: Span,
    /// `#[arg(description = "...")]`.
    pub description: Option<String>,
    /// `#[arg(complete = path)]`, with the span of the path.
    pub complete: Option<syn::Path>,
    /// `#[arg(header = "Region")]`, with the span of the value.
    pub header: Option<(String, Span)>,
    /// `#[input(...)]`: filled by asking the client, not from the arguments.
    pub input: Option<InputSpec>,
}

/// What a declared input asks.
#[derive(Debug, Clone, PartialEq)]
pub enum InputKind {
    Elicit { message: String },
    Url { url: String, message: String },
    Sample { text: String, max_tokens: u32 },
    Roots,
}

/// A declared input: its key in `inputRequests` and what it asks.
#[derive(Debug, Clone)]
pub struct InputSpec {
    pub key: String,
    pub key_span: Span,
    pub kind: InputKind,
}

/// A resolved icon.
pub struct Icon {
    pub src: String,
    pub mime_type: Option<String>,
    pub sizes: Vec<String>,
    pub theme: Option<String>,
}

/// Resolved tool behaviour hints.
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

/// What every kind of item has: name, description, icons, `_meta`.
pub struct Common {
    pub ident: Ident,
    pub name: String,
    pub name_span: Span,
    pub title: Option<String>,
    pub description: Option<Doc>,
    pub icons: Vec<Icon>,
    /// `_meta` entries: key and the value as JSON text.
    pub meta: Vec<(String, String)>,
    pub receiver: Receiver,
    pub params: Vec<Param>,
    /// The declared return type (or the name, without one): errors about it land here.
    pub return_span: Span,
}

/// A tool, validated.
pub struct ToolFn {
    pub common: Common,
    pub annotations: Option<Annotations>,
    pub cache: Option<Cache>,
    /// A hand-written `inputSchema` (JSON text).
    pub input_schema: Option<String>,
    pub inline_refs: bool,
}

/// Collects errors and remembers whether any occurred.
pub struct Errors<'a> {
    pub acc: &'a mut Accumulator,
    pub ok: bool,
}

impl Errors<'_> {
    pub fn push(&mut self, e: darling::Error) {
        self.acc.push(e);
        self.ok = false;
    }
}

/// The raw options shared by `#[tool]`, `#[resource]` and `#[prompt]`.
pub struct CommonArgs<'a> {
    pub kind: &'static str,
    pub name: Option<&'a SpannedValue<String>>,
    pub title: Option<String>,
    pub description: Option<&'a SpannedValue<String>>,
    pub description_required: bool,
    pub icons: &'a [SpannedValue<IconArgs>],
    pub meta: Option<&'a SpannedValue<String>>,
    /// `#[needs_input]` was on the function.
    pub needs_input: bool,
}

impl Common {
    /// Checks the signature and resolves what all kinds share. `check_name` validates the
    /// resolved name.
    pub fn build(
        args: CommonArgs<'_>,
        attrs: &[syn::Attribute],
        sig: &mut Signature,
        site: Site,
        check_name: fn(&str) -> Result<(), String>,
        errors: &mut Errors<'_>,
    ) -> Common {
        let kind = args.kind;
        if sig.asyncness.is_none() {
            errors.push(spanned(
                &sig.fn_token,
                format!("`#[{kind}]` functions must be `async`\n\n= help: write `async fn` here"),
            ));
        }
        if !sig.generics.params.is_empty() {
            errors.push(spanned(
                &sig.generics.params,
                format!("a {kind} cannot be generic\n\n= help: its parameter types decide its schema, so they must be concrete"),
            ));
        }
        if let Some(v) = &sig.variadic {
            errors.push(spanned(v, format!("a {kind} cannot be variadic")));
        }

        let ident = sig.ident.clone();
        let (name, name_span) = match args.name {
            Some(n) => ((**n).clone(), n.span()),
            None => (
                ident.to_string().trim_start_matches("r#").to_owned(),
                ident.span(),
            ),
        };
        if let Err(msg) = check_name(&name) {
            errors.push(darling::Error::custom(msg).with_span(&name_span));
        }

        let description = match args.description {
            Some(d) if d.trim().is_empty() => {
                errors
                    .push(darling::Error::custom("the description is empty").with_span(&d.span()));
                None
            }
            Some(d) => Some(Doc::Text((**d).clone())),
            None => doc::extract(attrs),
        };
        if description.is_none() && args.description.is_none() && args.description_required {
            errors.push(spanned(&ident, format!(
                "{kind} `{name}` has no description\n\n= help: add a doc comment (`/// What it does.`) or `#[{kind}(description = \"...\")]`; clients and models rely on it"
            )));
        }

        let mut receiver = Receiver::None;
        let mut params = Vec::new();
        let mut had_input_attr = false;
        for input in sig.inputs.iter_mut() {
            match input {
                FnArg::Receiver(r) => {
                    if site == Site::Free {
                        errors.push(spanned(&r.self_token, format!(
                            "`#[{kind}]` on a method needs `#[mcp_runtime::server]` on its `impl` block\n\n= help: put `#[mcp_runtime::server]` above `impl ...`"
                        )));
                    } else if !matches!(r.kind, syn::ReceiverKind::Reference(_, _, None)) {
                        errors.push(spanned(&r.self_token, format!(
                            "a {kind} method must take `&self`\n\n= help: requests run concurrently, so they share the server by reference; use interior mutability (a `Mutex`, an atomic) for state that changes"
                        )));
                    } else {
                        receiver = Receiver::Ref;
                    }
                }
                FnArg::Typed(pt) => {
                    let arg = take_arg_attr(&mut pt.attrs, errors);
                    had_input_attr |= pt.attrs.iter().any(|a| a.path().is_ident("input"));
                    let input = take_input_attr(&mut pt.attrs, errors);
                    if let (Some(_), Some((_, span))) = (&arg, &input) {
                        errors.push(darling::Error::custom("a parameter filled by `#[input]` is not an argument, so it takes no `#[arg]`").with_span(span));
                    }
                    if let (Some((_, span)), false) = (&input, args.needs_input) {
                        errors.push(darling::Error::custom(
                            "`#[input]` needs `#[needs_input]` on the function\n\n= help: add `#[needs_input]` below the `#[tool]`, `#[prompt]` or `#[resource]` attribute",
                        ).with_span(span));
                    }
                    let ident = match &*pt.pat {
                        Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                            pi.ident.clone()
                        }
                        other => {
                            errors.push(spanned(
                                other,
                                "unsupported parameter pattern\n\n= help: bind the parameter to a name, such as `city: String`; the name is the argument's key",
                            ));
                            continue;
                        }
                    };
                    if let Some(e) = check::param_type(&pt.ty) {
                        errors.push(e);
                        continue;
                    }
                    let (rename, description, complete, header) = arg
                        .map_or((None, None, None, None), |a| {
                            (a.name, a.description, a.complete, a.header)
                        });
                    let name = match rename {
                        Some(n) if n.is_empty() => {
                            errors.push(
                                darling::Error::custom("an argument name cannot be empty")
                                    .with_span(&n.span()),
                            );
                            continue;
                        }
                        Some(n) => (*n).clone(),
                        None => ident.to_string().trim_start_matches("r#").to_owned(),
                    };
                    params.push(Param {
                        ty_span: pt.ty.span(),
                        ident,
                        name,
                        ty: (*pt.ty).clone(),
                        description,
                        complete,
                        header: header.map(|h| ((*h).clone(), h.span())),
                        input: input.map(|(spec, _)| spec),
                    });
                }
            }
        }

        let mut meta = Vec::new();
        if let Some(m) = args.meta {
            match check::meta_object(m) {
                Ok(entries) => meta = entries,
                Err(msg) => errors.push(darling::Error::custom(msg).with_span(&m.span())),
            }
        }

        let mut icons = Vec::new();
        for icon in args.icons {
            if let Err(msg) = check::icon_src(&icon.src) {
                errors.push(darling::Error::custom(msg).with_span(&icon.src.span()));
            }
            if let Some(theme) = &icon.theme
                && !matches!(theme.as_str(), "light" | "dark")
            {
                errors.push(
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

        for p in &mut params {
            if let Some(spec) = &mut p.input
                && spec.key.is_empty()
            {
                spec.key = p.name.clone();
            }
        }
        if args.needs_input {
            let inputs: Vec<&InputSpec> = params.iter().filter_map(|p| p.input.as_ref()).collect();
            if inputs.is_empty() && !had_input_attr {
                errors.push(spanned(
                    &ident,
                    "`#[needs_input]` but no parameter is an input\n\n= help: mark the parameters to ask for with `#[input(elicit = \"...\")]` (or `url`, `sample`, `roots`)",
                ));
            }
            for (i, spec) in inputs.iter().enumerate() {
                if inputs[..i].iter().any(|o| o.key == spec.key) {
                    errors.push(darling::Error::custom(format!(
                        "duplicate input key `{}`\n\n= help: each input needs its own key in `inputRequests`",
                        spec.key
                    )).with_span(&spec.key_span));
                }
            }
        }

        let return_span = match &sig.output {
            syn::ReturnType::Type(_, ty) => ty.span(),
            syn::ReturnType::Default => ident.span(),
        };

        Common {
            ident,
            name,
            name_span,
            title: args.title,
            description,
            icons,
            meta,
            receiver,
            params,
            return_span,
        }
    }
}

/// Removes `#[needs_input]` (or `#[mcp_runtime::needs_input]`) from an item's attributes;
/// whether it was there.
pub fn take_needs_input(attrs: &mut Vec<syn::Attribute>) -> bool {
    let before = attrs.len();
    attrs.retain(|a| {
        let segs: Vec<String> = a
            .path()
            .segments
            .iter()
            .map(|s| s.ident.to_string())
            .collect();
        !matches!(
            segs.iter().map(String::as_str).collect::<Vec<_>>()[..],
            ["needs_input"] | ["mcp_runtime", "needs_input"]
        )
    });
    attrs.len() != before
}

/// `#[arg(header)]` is for tool arguments only.
pub fn no_headers(kind: &str, params: &[Param], errors: &mut Errors<'_>) {
    for p in params {
        if let Some((_, span)) = &p.header {
            errors.push(
                darling::Error::custom(format!(
                    "`header` applies to tool arguments, not to {kind} parameters"
                ))
                .with_span(span),
            );
        }
    }
}

/// `ttl_ms` and `cache_scope`.
pub fn cache(
    ttl_ms: Option<u64>,
    scope: Option<&SpannedValue<String>>,
    errors: &mut Errors<'_>,
) -> Option<Cache> {
    if ttl_ms.is_none() && scope.is_none() {
        return None;
    }
    let private = match scope {
        None => None,
        Some(s) if s.as_str() == "public" => Some(false),
        Some(s) if s.as_str() == "private" => Some(true),
        Some(s) => {
            errors.push(
                darling::Error::custom(format!(
                    "unknown cache scope `{}`\n\n= help: use \"public\" (the same for every caller) or \"private\"",
                    s.as_str()
                ))
                .with_span(&s.span()),
            );
            None
        }
    };
    Some(Cache { ttl_ms, private })
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
        needs_input: bool,
        acc: &mut Accumulator,
    ) -> Option<ToolFn> {
        let mut errors = Errors { acc, ok: true };
        let common = Common::build(
            CommonArgs {
                kind: "tool",
                name: args.name.as_ref(),
                title: args.title.clone(),
                description: args.description.as_ref(),
                description_required: true,
                icons: &args.icon,
                meta: args.meta.as_ref(),
                needs_input,
            },
            attrs,
            sig,
            site,
            check::tool_name,
            &mut errors,
        );
        for p in &common.params {
            if let Some(path) = &p.complete {
                errors.push(spanned(
                    path,
                    "tool arguments have no completion\n\n= help: `complete` applies to prompt arguments and resource template variables",
                ));
            }
        }
        check::headers(&common.params, &mut errors);
        let input_schema = args
            .input_schema
            .as_ref()
            .and_then(|s| match check::input_schema(s) {
                Ok(()) => Some((**s).clone()),
                Err(msg) => {
                    errors.push(darling::Error::custom(msg).with_span(&s.span()));
                    None
                }
            });
        let cache = cache(args.ttl_ms, args.cache_scope.as_ref(), &mut errors);
        let annotations = args.annotations.map(|a| Annotations {
            title: a.title,
            read_only_hint: a.read_only_hint,
            destructive_hint: a.destructive_hint,
            idempotent_hint: a.idempotent_hint,
            open_world_hint: a.open_world_hint,
        });
        if !errors.ok {
            return None;
        }
        Some(ToolFn {
            common,
            annotations,
            cache,
            input_schema,
            inline_refs: args.inline_refs.is_present(),
        })
    }
}

/// Removes `#[input(...)]` from a parameter and resolves it (key defaults later to the
/// parameter's name, so it is filled in by the caller when empty).
fn take_input_attr(
    attrs: &mut Vec<syn::Attribute>,
    errors: &mut Errors<'_>,
) -> Option<(InputSpec, Span)> {
    let pos = attrs.iter().position(|a| a.path().is_ident("input"))?;
    let attr = attrs.remove(pos);
    let span = attr.span();
    let args = match InputArgs::from_meta(&attr.meta) {
        Ok(a) => a,
        Err(e) => {
            errors.push(e);
            return None;
        }
    };
    let mut kinds = Vec::new();
    if let Some(m) = &args.elicit {
        kinds.push(InputKind::Elicit {
            message: (**m).clone(),
        });
    }
    if let Some(u) = &args.url {
        kinds.push(InputKind::Url {
            url: (**u).clone(),
            message: args.message.clone().unwrap_or_default(),
        });
    }
    if let Some(s) = &args.sample {
        kinds.push(InputKind::Sample {
            text: (**s).clone(),
            max_tokens: args.max_tokens.unwrap_or(256),
        });
    }
    if args.roots.is_present() {
        kinds.push(InputKind::Roots);
    }
    if kinds.len() != 1 {
        errors.push(spanned(
            &attr,
            "`#[input]` asks exactly one thing\n\n= help: write one of `elicit = \"message\"`, `url = \"https://...\", message = \"...\"`, `sample = \"prompt\"` or `roots`",
        ));
        return None;
    }
    if let Some(InputKind::Url { message, .. }) = kinds.first()
        && message.is_empty()
    {
        errors.push(spanned(&attr, "a URL elicitation needs a `message` too"));
    }
    let (key, key_span) = match &args.key {
        Some(k) => ((**k).clone(), k.span()),
        None => (String::new(), span),
    };
    Some((
        InputSpec {
            key,
            key_span,
            kind: kinds.remove(0),
        },
        span,
    ))
}

/// Removes `#[arg(...)]` from a parameter and returns its options.
fn take_arg_attr(attrs: &mut Vec<syn::Attribute>, errors: &mut Errors<'_>) -> Option<ArgArgs> {
    let mut out = None;
    let mut seen = false;
    let mut errs = Vec::new();
    attrs.retain(|a| {
        if !a.path().is_ident("arg") {
            return true;
        }
        if seen {
            errs.push(spanned(
                a,
                "duplicate `#[arg]` attribute\n\n= help: put all options in one `#[arg(...)]`",
            ));
            return false;
        }
        seen = true;
        match ArgArgs::from_meta(&a.meta) {
            Ok(v) => out = Some(v),
            Err(e) => errs.push(e),
        }
        false
    });
    for e in errs {
        errors.push(e);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    fn build(f: syn::ItemFn, args: ToolArgs, site: Site) -> (Option<ToolFn>, usize) {
        let mut f = f;
        let mut errors = darling::Error::accumulator();
        let m = ToolFn::build(args, &f.attrs.clone(), &mut f.sig, site, false, &mut errors);
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
        let m = m.unwrap().common;
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
        assert_eq!(m.unwrap().common.receiver, Receiver::Ref);
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

    #[test]
    fn tools_refuse_completers() {
        let (_, n) = build(
            parse_quote! { /// D.
            async fn t(#[arg(complete = f)] a: String) {} },
            ToolArgs::default(),
            Site::Free,
        );
        assert_eq!(n, 1);
    }
}
