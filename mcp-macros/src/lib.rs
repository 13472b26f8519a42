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
///
/// Beside the function, the macro defines a hidden struct of the function's name (what
/// `tools![fmt]` reads). It lives in the type namespace, with modules, types and
/// imports: one of the same name in the same scope clashes with it (E0255 for an import,
/// E0428 for an item: "the name `fmt` is defined multiple times"). Rename the function
/// and keep the tool's name with `#[tool(name = "fmt")]`, or rename the other one
/// (`use std::fmt as format;`).
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::free(Kind::Tool, args.into(), item.into()).into()
}

/// (Expanded by `mcp-macros`; use it as `mcp_runtime::resource`.)
///
/// Beside the function, the macro defines a hidden struct of the function's name (what
/// `resources![fmt]` reads). It lives in the type namespace, with modules, types and
/// imports: one of the same name in the same scope clashes with it (E0255 for an import,
/// E0428 for an item: "the name `fmt` is defined multiple times"). Rename the function
/// and keep the resource's name with `#[resource(name = "fmt")]`, or rename the other one
/// (`use std::fmt as format;`).
#[proc_macro_attribute]
pub fn resource(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::free(Kind::Resource, args.into(), item.into()).into()
}

/// (Expanded by `mcp-macros`; use it as `mcp_runtime::prompt`.)
///
/// Beside the function, the macro defines a hidden struct of the function's name (what
/// `prompts![fmt]` reads). It lives in the type namespace, with modules, types and
/// imports: one of the same name in the same scope clashes with it (E0255 for an import,
/// E0428 for an item: "the name `fmt` is defined multiple times"). Rename the function
/// and keep the prompt's name with `#[prompt(name = "fmt")]`, or rename the other one
/// (`use std::fmt as format;`).
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
///
/// It defines no named item (the generated impls sit in a `const _: () = { .. }` block), so
/// nothing it adds can clash with a name of the user's scope.
#[proc_macro_attribute]
pub fn server(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::server::expand(args.into(), item.into()).into()
}
