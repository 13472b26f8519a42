//! Procedural macros of `mcp-runtime`. Use them through `mcp_runtime` (`#[mcp_runtime::tool]`,
//! `#[mcp_runtime::server]`); this crate's output only makes sense with it.
//!
//! Each macro runs the same four stages, one module each: parse (`attr`: darling reads the
//! options, helper attributes are taken off the signature) → model (`model`: one
//! description of the item, whatever its kind) → check (`check`: every rule, once, with
//! the naming rules of `mcp_rules`) → expand (`expand`: one entry for the three kinds).
//! Errors are accumulated and each is spanned at the offending token; the user's item is
//! always emitted, with a stub companion on errors, so that only our errors show.

mod attr;
mod check;
mod doc;
mod errors;
mod expand;
mod model;

use attr::Kind;
use proc_macro::TokenStream;

/// (Expanded by `mcp-macros`; use it as `mcp_runtime::tool`.)
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::free(Kind::Tool, args.into(), item.into()).into()
}

/// (Expanded by `mcp-macros`; use it as `mcp_runtime::resource`.)
#[proc_macro_attribute]
pub fn resource(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::free(Kind::Resource, args.into(), item.into()).into()
}

/// (Expanded by `mcp-macros`; use it as `mcp_runtime::prompt`.)
#[proc_macro_attribute]
pub fn prompt(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::free(Kind::Prompt, args.into(), item.into()).into()
}

/// (Expanded by `mcp-macros`; use it as `mcp_runtime::needs_input`.)
#[proc_macro_attribute]
pub fn needs_input(_args: TokenStream, item: TokenStream) -> TokenStream {
    expand::needs_input_alone(item.into()).into()
}

/// (Expanded by `mcp-macros`; use it as `mcp_runtime::Form`.)
#[proc_macro_derive(Form, attributes(form))]
pub fn derive_form(item: TokenStream) -> TokenStream {
    expand::form::expand(item.into()).into()
}

/// (Expanded by `mcp-macros`; use it as `mcp_runtime::server`.)
#[proc_macro_attribute]
pub fn server(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::server::expand(args.into(), item.into()).into()
}
