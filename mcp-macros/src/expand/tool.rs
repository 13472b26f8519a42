//! `#[tool]` on a free function: the function, unchanged, plus a hidden companion struct of
//! the same name (type namespace) whose `__mcp_tool()` builds the definition. `tools![f]`
//! calls it.

use crate::attr::ToolArgs;
use crate::model::{Site, ToolFn};
use darling::FromMeta;
use darling::ast::NestedMeta;
use proc_macro2::TokenStream;
use quote::quote;

pub fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut func: syn::ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        // Not a function (or mid-edit code): give the tokens back with one error.
        Err(e) => {
            let e = syn::Error::new(
                e.span(),
                format!("{e}\n\n= note: `#[tool]` goes on an `async fn`"),
            );
            let e = e.to_compile_error();
            return quote!(#item #e);
        }
    };
    let mut errors = darling::Error::accumulator();
    let args = match NestedMeta::parse_meta_list(args) {
        Ok(list) => errors.handle(ToolArgs::from_list(&list)),
        Err(e) => {
            errors.push(e.into());
            None
        }
    };
    let attrs = func.attrs.clone();
    let model = ToolFn::build(
        args.unwrap_or_default(),
        &attrs,
        &mut func.sig,
        Site::Free,
        &mut errors,
    );
    let is_method = func.sig.receiver().is_some();

    match (errors.finish(), model) {
        (Ok(()), Some(tool)) => {
            let def = super::tool_def(&tool, false);
            let companion = companion(&func, quote!(#def));
            quote!(#func #companion)
        }
        (result, _) => {
            let errors = result.err().map(darling::Error::write_errors);
            // Emit the function and a stub companion so that only our errors show.
            let stub = (!is_method).then(|| companion(&func, quote!(::core::unreachable!())));
            quote!(#func #stub #errors)
        }
    }
}

fn companion(func: &syn::ItemFn, body: TokenStream) -> TokenStream {
    let vis = &func.vis;
    let ident = &func.sig.ident;
    quote! {
        #[doc(hidden)]
        #[allow(non_camel_case_types, dead_code)]
        #vis struct #ident {}

        #[automatically_derived]
        #[allow(dead_code)]
        impl #ident {
            #[doc(hidden)]
            pub fn __mcp_tool() -> ::mcp_runtime::__private::ToolDef {
                #body
            }
        }
    }
}
