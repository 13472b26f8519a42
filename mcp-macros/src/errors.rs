//! Collecting errors across all stages, each spanned at the offending token.

use quote::ToTokens;

/// An error covering all of `node` (first to last token), with `msg` as its text.
///
/// Unlike `darling::Error::with_span`, which on stable Rust keeps only the first token,
/// this underlines the whole node.
pub fn spanned<T: ToTokens>(node: &T, msg: impl std::fmt::Display) -> darling::Error {
    darling::Error::from(syn::Error::new_spanned(node, msg))
}

/// The errors of one expansion: every stage adds to it, and expansion happens only when
/// it stays empty.
#[derive(Default)]
pub struct Errors(Vec<darling::Error>);

impl Errors {
    pub fn new() -> Self {
        Errors::default()
    }
    pub fn push(&mut self, e: darling::Error) {
        self.0.push(e);
    }
    /// An error at `span`.
    pub fn at(&mut self, span: proc_macro2::Span, msg: impl std::fmt::Display) {
        self.0.push(darling::Error::custom(msg).with_span(&span));
    }
    /// An error covering `node`.
    pub fn spanned<T: ToTokens>(&mut self, node: &T, msg: impl std::fmt::Display) {
        self.0.push(spanned(node, msg));
    }
    /// A rule's violation at `span`, with its help line.
    pub fn violation(&mut self, span: proc_macro2::Span, v: mcp_rules::Violation) {
        self.at(span, message(&v));
    }
    pub fn handle<T>(&mut self, r: darling::Result<T>) -> Option<T> {
        r.map_err(|e| self.0.push(e)).ok()
    }
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// How many errors there are (each darling error may hold several).
    #[cfg(test)]
    pub fn count(&self) -> usize {
        self.0.iter().map(darling::Error::len).sum()
    }
    /// The errors as `compile_error!`s, or `None` when there are none.
    pub fn finish(self) -> Option<proc_macro2::TokenStream> {
        (!self.0.is_empty()).then(|| darling::Error::multiple(self.0).write_errors())
    }
}

/// A rule's violation as a message: the line, then its help.
pub fn message(v: &mcp_rules::Violation) -> String {
    match &v.help {
        Some(help) => format!("{}; {help}", v.message),
        None => v.message.clone(),
    }
}
