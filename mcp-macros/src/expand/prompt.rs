//! `#[prompt]`: the function plus a companion whose `__mcp_prompt()` builds the definition.

use crate::attr::PromptArgs;
use crate::model::{PromptFn, Site};
use darling::FromMeta;
use darling::ast::NestedMeta;
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

/// Parses the attribute and builds the model.
pub fn model(
    args: TokenStream,
    attrs: &[syn::Attribute],
    sig: &mut syn::Signature,
    site: Site,
    needs_input: bool,
    errors: &mut darling::error::Accumulator,
) -> Option<PromptFn> {
    let options = match NestedMeta::parse_meta_list(args) {
        Ok(list) => errors.handle(PromptArgs::from_list(&list)),
        Err(e) => {
            errors.push(e.into());
            None
        }
    };
    PromptFn::build(
        options.unwrap_or_default(),
        attrs,
        sig,
        site,
        needs_input,
        errors,
    )
}

pub fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut func: syn::ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(e) => return super::not_a_function(item, e, "prompt"),
    };
    let mut errors = darling::Error::accumulator();
    let needs_input = crate::model::take_needs_input(&mut func.attrs);
    let attrs = func.attrs.clone();
    let model = model(
        args,
        &attrs,
        &mut func.sig,
        Site::Free,
        needs_input,
        &mut errors,
    );
    let ret = quote!(::mcp_runtime::__private::PromptDef);
    super::finish(
        func,
        errors,
        model.map(|m| prompt_def(&m, false)),
        "__mcp_prompt",
        ret,
    )
}

/// The expression building one `PromptDef`.
pub fn prompt_def(prompt: &PromptFn, in_impl: bool) -> TokenStream {
    let p = super::private();
    let common = &prompt.common;
    let name = &common.name;
    let consts = super::param_consts(common);
    let describes = common.params.iter().enumerate().filter(|(_, p)| p.input.is_none()).map(|(i, param)| {
        let ty = &param.ty;
        quote_spanned!(param.ty_span=> <#ty as #p::FromPromptCall>::describe(&__PARAMS[#i], &mut __signature);)
    });
    let mut extracts: Vec<TokenStream> = common
        .params
        .iter()
        .enumerate()
        .filter(|(_, p)| p.input.is_none())
        .map(|(i, param)| {
            let ty = &param.ty;
            let id = &param.ident;
            quote!(let #id = <#ty as #p::FromPromptCall>::from_prompt_call(&mut __call, &__PARAMS[#i])?;)
        })
        .collect();
    extracts.push(super::input_stmts(common));
    let uses_input = common
        .params
        .iter()
        .any(|p| p.input.is_some())
        .then(|| quote!(__signature.requirements().uses_input();));
    let super::Call {
        capture_outer,
        capture_inner,
        call,
    } = super::call(common, in_impl);
    let call_arg = if common.params.is_empty() {
        quote!(_)
    } else {
        quote!(mut __call)
    };
    let body = super::boxed_body(common, &extracts, &call, !in_impl);
    let handler = quote! {
        move |#call_arg: #p::PromptCall| {
            #capture_inner
            #body
        }
    };
    let mut builder = super::common_builder(common);
    builder.extend(super::completers(common));
    let new = quote_spanned! {common.return_span=>
        ::mcp_runtime::__private::PromptDef::new(#name, __signature, #handler)
    };
    quote! {{
        #consts
        let mut __signature = #p::PromptSignature::new();
        #uses_input
        #(#describes)*
        #capture_outer
        #new
            #(#builder)*
    }}
}
