//! A function whose body is kept as tokens, never parsed: its signature is all the macros
//! need, and a body that does not parse (mid-edit code) still expands, so rustc reports
//! the real syntax error and `tools![f]` still finds the companion.

use proc_macro2::{Delimiter, TokenStream, TokenTree};
use quote::ToTokens;
use syn::parse::{Parse, ParseStream};
use syn::{Attribute, Signature, Visibility};

/// `attrs vis sig { body }`.
pub struct Function {
    pub attrs: Vec<Attribute>,
    pub vis: Visibility,
    pub sig: Signature,
    pub body: TokenTree,
}

impl Parse for Function {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let attrs = input.call(Attribute::parse_outer)?;
        let vis = input.parse()?;
        let sig = input.parse()?;
        let body: TokenTree = input.parse()?;
        match &body {
            TokenTree::Group(g) if g.delimiter() == Delimiter::Brace => {}
            other => return Err(syn::Error::new_spanned(other, "expected the function body")),
        }
        Ok(Function {
            attrs,
            vis,
            sig,
            body,
        })
    }
}

impl ToTokens for Function {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        for attr in &self.attrs {
            attr.to_tokens(tokens);
        }
        self.vis.to_tokens(tokens);
        self.sig.to_tokens(tokens);
        self.body.to_tokens(tokens);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    #[test]
    fn a_broken_body_still_parses() {
        let f: Function = syn::parse2(quote! {
            /// Doc.
            pub async fn f(a: i64) -> String { let x = ; }
        })
        .unwrap();
        assert_eq!(f.sig.ident, "f");
        assert!(f.to_token_stream().to_string().contains("let x ="));
        assert!(
            syn::parse2::<Function>(quote!(
                struct S;
            ))
            .is_err()
        );
        // An attribute's item is one item; anything after the body is refused by
        // `parse2` itself, which requires all tokens to be read.
        assert!(
            syn::parse2::<Function>(quote!(
                fn f() {}
                fn g() {}
            ))
            .is_err()
        );
    }
}
