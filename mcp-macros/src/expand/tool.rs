//! `#[tool]` on a free function: the function, unchanged, plus a hidden companion struct of
//! the same name whose `__mcp_tool()` builds the definition. `tools![f]` calls it.

use crate::attr::ToolArgs;
use crate::model::{Site, ToolFn};
use darling::FromMeta;
use darling::ast::NestedMeta;
use proc_macro2::TokenStream;
use quote::quote;

pub fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut func: syn::ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(e) => return super::not_a_function(item, e, "tool"),
    };
    let mut errors = darling::Error::accumulator();
    let args = match NestedMeta::parse_meta_list(args) {
        Ok(list) => errors.handle(ToolArgs::from_list(&list)),
        Err(e) => {
            errors.push(e.into());
            None
        }
    };
    let needs_input = crate::model::take_needs_input(&mut func.attrs);
    let attrs = func.attrs.clone();
    let model = ToolFn::build(
        args.unwrap_or_default(),
        &attrs,
        &mut func.sig,
        Site::Free,
        needs_input,
        &mut errors,
    );
    let ret = quote!(::mcp_runtime::__private::ToolDef);
    super::finish(
        func,
        errors,
        model.map(|m| super::tool_def(&m, false)),
        "__mcp_tool",
        ret,
    )
}
