//! Procedural macros of `mcp-runtime`. Use them through `mcp_runtime` (`#[mcp_runtime::tool]`,
//! `#[mcp_runtime::server]`); this crate's output only makes sense with it.
//!
//! Each macro runs the same pipeline: parse (`attr`, darling) → model (`model`, the
//! validated description) → check (`check`, rules across items) → expand (`expand`).
//! Errors are accumulated and each is spanned at the offending token; the user's item is
//! always emitted so that only our errors show.

mod attr;
mod check;
mod doc;
mod errors;
mod expand;
mod model;

use proc_macro::TokenStream;

/// Turns an `async fn` into an MCP tool. See `mcp_runtime::tool` for the options.
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::tool::expand(args.into(), item.into()).into()
}

/// Turns an `async fn` into an MCP resource or resource template. See
/// `mcp_runtime::resource`.
#[proc_macro_attribute]
pub fn resource(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::resource::expand(args.into(), item.into()).into()
}

/// Turns an `async fn` into an MCP prompt. See `mcp_runtime::prompt`.
#[proc_macro_attribute]
pub fn prompt(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::prompt::expand(args.into(), item.into()).into()
}

/// Declares that a tool, prompt or resource asks the client for input: its `#[input(...)]`
/// parameters are filled by asking. Written below `#[tool]`, `#[prompt]` or `#[resource]`,
/// which read it; on its own it is an error.
#[proc_macro_attribute]
pub fn needs_input(_args: TokenStream, item: TokenStream) -> TokenStream {
    expand::needs_input_alone(item.into()).into()
}

/// Derives `mcp_runtime::ElicitForm` for a struct whose fields are text, numbers,
/// booleans or string enums (checked field by field at compile time), or
/// `mcp_runtime::FormField` for a unit-only enum.
#[proc_macro_derive(Form)]
pub fn derive_form(item: TokenStream) -> TokenStream {
    expand::form::expand(item.into()).into()
}

/// Serves the `#[tool]`, `#[resource]` and `#[prompt]` methods of an `impl` block. See
/// `mcp_runtime::server`.
#[proc_macro_attribute]
pub fn server(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::server::expand(args.into(), item.into()).into()
}
