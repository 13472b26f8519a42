//! Error helpers.

use quote::ToTokens;

/// An error covering all of `node` (first to last token), with `msg` as its text.
///
/// Unlike `darling::Error::with_span`, which on stable Rust keeps only the first token,
/// this underlines the whole node.
pub fn spanned<T: ToTokens>(node: &T, msg: impl std::fmt::Display) -> darling::Error {
    darling::Error::from(syn::Error::new_spanned(node, msg))
}
