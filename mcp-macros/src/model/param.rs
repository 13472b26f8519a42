//! The model of a function's parameters: what each one is (its role), what it is called
//! and described as, its default, and what a declared input asks.

use super::Sp;
use crate::attr::{self, Kind, RawParam};
use crate::errors::Place;
use proc_macro2::Span;
use syn::spanned::Spanned as _;
use syn::{Ident, Type};

/// What a declared input asks.
#[derive(Debug, Clone)]
pub enum InputKind {
    Elicit {
        message: Sp<String>,
    },
    Url {
        url: Sp<String>,
        message: Option<Sp<String>>,
    },
    Sample {
        text: Sp<String>,
        max_tokens: u32,
    },
    Roots,
}

impl InputKind {
    /// The text sent to the client, which may insert arguments (`{name}`).
    pub fn text(&self) -> Option<&Sp<String>> {
        match self {
            InputKind::Elicit { message } => Some(message),
            InputKind::Url { message, .. } => message.as_ref(),
            InputKind::Sample { text, .. } => Some(text),
            InputKind::Roots => None,
        }
    }
}

/// A declared input (`#[input(...)]`): its key in `inputRequests` and what it asks.
#[derive(Debug, Clone)]
pub struct InputSpec {
    pub key: Sp<String>,
    /// Whether the key was given (`key = ".."`), rather than the parameter's name.
    pub key_given: bool,
    /// What it asks; `check` requires exactly one.
    pub asks: Vec<InputKind>,
    /// Where `#[input(..)]` was written.
    pub place: Place,
}

/// What a parameter is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A tool or prompt argument, or an extractor: `FromRequest` decides.
    Parameter,
    /// A resource parameter bound to the template variable of the same name.
    Variable,
    /// A resource parameter that is not a variable: an extractor.
    Extractor,
    /// Asked of the client (`#[input]`).
    Input,
}

/// One parameter of the function.
pub struct Param {
    /// The binding (`a` in `a: i64`), when the pattern is a plain name.
    pub ident: Option<Ident>,
    pub pat: syn::Pat,
    /// The argument's key: `#[arg(name)]`, else the binding without `r#`.
    pub name: Sp<String>,
    pub ty: Type,
    /// Where the type is written (errors about the type land there).
    pub ty_span: Span,
    pub role: Role,
    pub description: Option<Sp<String>>,
    pub complete: Option<syn::Path>,
    /// When `complete` names a `&self` method of the `#[server]` impl: its parameter types
    /// (after `&self`).
    pub complete_method: Option<Vec<Type>>,
    pub header: Option<Sp<String>>,
    /// `#[arg(default ..)]`: the value when the call leaves the argument out (a string
    /// literal converted with `Into`, `Default::default()` for `default` alone), and
    /// where it was written.
    pub default: Option<(syn::Expr, Span)>,
    /// Where `#[arg]` was written.
    pub arg_span: Option<Place>,
    pub input: Option<InputSpec>,
    /// Where `#[input]` was written (also when its options did not parse).
    pub input_span: Option<Place>,
    /// Where a `#[cfg]` or `#[cfg_attr]` on it was written.
    pub cfg: Option<Place>,
}

pub(super) fn param(raw: RawParam, kind: Kind, variables: &[String]) -> Param {
    let ident = match &raw.pat {
        syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => Some(pi.ident.clone()),
        _ => None,
    };
    let arg = raw.arg.unwrap_or_default();
    let name = match &arg.name {
        Some(n) => n.into(),
        None => Sp {
            value: ident
                .as_ref()
                .map(|i| i.to_string().trim_start_matches("r#").to_owned())
                .unwrap_or_default(),
            span: raw.pat.span(),
        },
    };
    let role = if raw.input_span.is_some() {
        Role::Input
    } else if kind != Kind::Resource {
        Role::Parameter
    } else if variables.contains(&name.value) {
        Role::Variable
    } else {
        Role::Extractor
    };
    let input_place = raw.input_span.unwrap_or_else(|| Place {
        first: Span::call_site(),
        last: Span::call_site(),
    });
    let input = raw.input.map(|i| input(i, &name.value, input_place));
    Param {
        ty_span: raw.ty.span(),
        ident,
        pat: raw.pat,
        name,
        ty: raw.ty,
        role,
        // `#[arg(description)]`, else the parameter's doc comment.
        description: arg
            .description
            .as_ref()
            .map(Into::into)
            .or_else(|| raw.doc.map(|(value, span)| Sp { value, span })),
        complete: arg.complete,
        complete_method: None,
        header: arg.header.as_ref().map(Into::into),
        default: arg
            .default
            .map(|d| (default_value(d.value, d.span), d.span)),
        arg_span: raw.arg_span,
        input,
        input_span: raw.input_span,
        cfg: raw.cfg,
    }
}

/// What `#[arg(default ..)]` evaluates to: the expression, a string literal made the
/// parameter's type with `Into` (`"Oslo"` for a `String`; through `__mcp`, the expansion's
/// name for the runtime's `__private`, which says what to write for a type not made from
/// a string), the type's `Default` when none is given.
fn default_value(value: Option<syn::Expr>, span: Span) -> syn::Expr {
    match value {
        Some(syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        })) => syn::parse_quote_spanned!(s.span()=> __mcp::str_default(#s)),
        Some(e) => e,
        // At `default`: a type without `Default` is told there.
        None => syn::parse_quote_spanned!(span=> ::core::default::Default::default()),
    }
}

fn input(args: attr::InputArgs, param_name: &str, place: Place) -> InputSpec {
    let mut asks = Vec::new();
    if let Some(m) = &args.elicit {
        asks.push(InputKind::Elicit { message: m.into() });
    }
    if let Some(u) = &args.url {
        asks.push(InputKind::Url {
            url: u.into(),
            message: args.message.as_ref().map(Into::into),
        });
    }
    if let Some(s) = &args.sample {
        asks.push(InputKind::Sample {
            text: s.into(),
            max_tokens: args.max_tokens.unwrap_or(256),
        });
    }
    if args.roots.is_present() {
        asks.push(InputKind::Roots);
    }
    let key = match &args.key {
        Some(k) => k.into(),
        None => Sp {
            value: param_name.to_owned(),
            span: place.first,
        },
    };
    InputSpec {
        key,
        key_given: args.key.is_some(),
        asks,
        place,
    }
}
