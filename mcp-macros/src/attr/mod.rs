//! Stage 1, parse: the raw syntax of our attributes and of the item they sit on. darling
//! reads the options; helper attributes (`#[arg]`, `#[input]`, `#[needs_input]`) are
//! read and removed from the signature, so the item can be emitted as written otherwise.
//! Nothing here is validated beyond its shape: `model` resolves, `check` judges.

mod function;
mod options;
mod param;

pub use function::Function;
pub use options::{
    AppArgs, ArgArgs, CommonArgs, InputArgs, PromptArgs, ResourceArgs, ServerArgs, ToolArgs,
};
pub use param::{RawParam, take_needs_input, take_other_items, take_params};

use crate::errors::Errors;
use darling::FromMeta;
use darling::ast::NestedMeta;
use proc_macro2::TokenStream;
use syn::LitStr;
use syn::parse::Parser;

/// The three kinds of item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Tool,
    Resource,
    Prompt,
}

impl Kind {
    /// The attribute's name: `tool`, `resource`, `prompt`.
    pub fn attr(self) -> &'static str {
        match self {
            Kind::Tool => "tool",
            Kind::Resource => "resource",
            Kind::Prompt => "prompt",
        }
    }
}

/// The options of one item's attribute.
pub enum Options {
    Tool(ToolArgs),
    Resource(LitStr, ResourceArgs),
    Prompt(PromptArgs),
}

impl Options {
    /// What all kinds share.
    pub fn common(&self) -> &CommonArgs {
        match self {
            Options::Tool(t) => &t.common,
            Options::Resource(_, r) => &r.common,
            Options::Prompt(p) => &p.common,
        }
    }
}

/// Parses `#[kind(args)]`; on errors, `None` (they are recorded).
pub fn options(kind: Kind, args: TokenStream, errors: &mut Errors) -> Option<Options> {
    fn list<T: FromMeta>(args: TokenStream, errors: &mut Errors) -> Option<T> {
        match NestedMeta::parse_meta_list(args) {
            Ok(list) => errors.handle(T::from_list(&list)),
            Err(e) => {
                errors.push(e);
                None
            }
        }
    }
    match kind {
        Kind::Tool => list(args, errors).map(Options::Tool),
        Kind::Prompt => list(args, errors).map(Options::Prompt),
        Kind::Resource => {
            let (uri, rest) = match split_uri(args) {
                Ok(v) => v,
                Err(e) => {
                    errors.push(e);
                    return None;
                }
            };
            list(rest, errors).map(|r| Options::Resource(uri, r))
        }
    }
}

/// Splits `"uri", options...` into the URI literal and the options.
fn split_uri(args: TokenStream) -> syn::Result<(LitStr, TokenStream)> {
    let parser = |input: syn::parse::ParseStream<'_>| {
        let uri: LitStr = input.parse().map_err(|e| {
            syn::Error::new(
                e.span(),
                "`#[resource]` needs the URI first; write `#[resource(\"config://app\")]` or `#[resource(\"notes://{id}\", mime_type = \"text/plain\")]`",
            )
        })?;
        let rest = if input.is_empty() {
            TokenStream::new()
        } else {
            input.parse::<syn::Token![,]>()?;
            input.parse::<TokenStream>()?
        };
        Ok((uri, rest))
    };
    parser.parse2(args)
}

/// Whether `path` names our attribute `name`: `name`, `mcp_runtime::name`, or
/// `<krate>::name` when the crate path was overridden.
pub fn is_ours(path: &syn::Path, name: &str, krate: Option<&syn::Path>) -> bool {
    let segs: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    let Some((last, prefix)) = segs.split_last() else {
        return false;
    };
    if last != name {
        return false;
    }
    let krate: Vec<String> = krate
        .map(|k| k.segments.iter().map(|s| s.ident.to_string()).collect())
        .unwrap_or_default();
    prefix.is_empty() || prefix == ["mcp_runtime"] || (!krate.is_empty() && prefix == krate)
}

/// Which of our attributes an attribute of an `impl` method is (`#[tool]`,
/// `#[mcp_runtime::tool]`, or through the overridden crate path).
pub fn kind_of(attr: &syn::Attribute, krate: Option<&syn::Path>) -> Option<Kind> {
    [Kind::Tool, Kind::Resource, Kind::Prompt]
        .into_iter()
        .find(|k| is_ours(attr.path(), k.attr(), krate))
}

/// The tokens inside `#[kind(...)]` (nothing for `#[kind]`).
pub fn attr_args(attr: &syn::Attribute, errors: &mut Errors) -> Option<TokenStream> {
    match &attr.meta {
        syn::Meta::Path(_) => Some(TokenStream::new()),
        syn::Meta::List(list) => Some(list.tokens.clone()),
        syn::Meta::NameValue(nv) => {
            let name = nv
                .path
                .segments
                .last()
                .map(|s| s.ident.to_string())
                .unwrap_or_default();
            errors.spanned(nv, format!("expected `#[{name}]` or `#[{name}(...)]`"));
            None
        }
    }
}

/// `#[server(...)]` options: only `crate = "..."`.
pub fn server_options(args: TokenStream, errors: &mut Errors) -> ServerArgs {
    let first = args.clone().into_iter().next().map(|t| t.span());
    match NestedMeta::parse_meta_list(args).map(|list| ServerArgs::from_list(&list)) {
        Ok(Ok(a)) => a,
        _ => {
            errors.at(
                first.unwrap_or_else(proc_macro2::Span::call_site),
                "`#[server]` takes no options but `crate = \"...\"`; put options on each method's `#[tool(...)]`, `#[resource(...)]` or `#[prompt(...)]`",
            );
            ServerArgs::default()
        }
    }
}
