//! Collecting errors across all stages, each spanned at the offending token.

use quote::ToTokens;

/// One error: from darling (parsing options: at one token), or covering a node.
pub enum One {
    Darling(darling::Error),
    /// Keeps the node's first and last tokens, so the whole node is underlined.
    Node(syn::Error),
}

impl From<darling::Error> for One {
    fn from(e: darling::Error) -> Self {
        One::Darling(e)
    }
}

impl From<syn::Error> for One {
    fn from(e: syn::Error) -> Self {
        One::Node(e)
    }
}

/// An error covering all of `node` (first to last token), with `msg` as its text.
///
/// Unlike `darling::Error::with_span`, which keeps only the first token, this underlines
/// the whole node (on stable Rust too: the error is emitted from its first to its last
/// token).
pub fn spanned<T: ToTokens>(node: &T, msg: impl std::fmt::Display) -> One {
    One::Node(syn::Error::new_spanned(node, msg))
}

/// Where a node was written, from its first to its last token. One `Span` is only the
/// first token on stable Rust (`#` of an attribute); an error at a `Place` (through
/// [`Errors::spanned`]) underlines the whole node.
#[derive(Debug, Clone, Copy)]
pub struct Place {
    pub first: proc_macro2::Span,
    pub last: proc_macro2::Span,
}

impl Place {
    pub fn of<T: ToTokens>(node: &T) -> Place {
        let mut tokens = node.to_token_stream().into_iter();
        let first = tokens
            .next()
            .map_or_else(proc_macro2::Span::call_site, |t| t.span());
        let last = tokens.last().map_or(first, |t| t.span());
        Place { first, last }
    }
}

impl ToTokens for Place {
    /// Two tokens, at the first and the last: what `syn::Error::new_spanned` reads.
    fn to_tokens(&self, tokens: &mut proc_macro2::TokenStream) {
        for span in [self.first, self.last] {
            let mut p = proc_macro2::Punct::new('#', proc_macro2::Spacing::Alone);
            p.set_span(span);
            tokens.extend([proc_macro2::TokenTree::Punct(p)]);
        }
    }
}

/// The errors of one expansion: every stage adds to it, and expansion happens only when
/// it stays empty.
#[derive(Default)]
pub struct Errors(Vec<One>);

impl Errors {
    pub fn new() -> Self {
        Errors::default()
    }
    pub fn push(&mut self, e: impl Into<One>) {
        self.0.push(e.into());
    }
    /// An error at `span`.
    pub fn at(&mut self, span: proc_macro2::Span, msg: impl std::fmt::Display) {
        self.push(darling::Error::custom(msg).with_span(&span));
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
        r.map_err(|e| self.push(e)).ok()
    }
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// How many errors there are (each darling error may hold several).
    #[cfg(test)]
    pub fn count(&self) -> usize {
        self.0
            .iter()
            .map(|e| match e {
                One::Darling(e) => e.len(),
                One::Node(_) => 1,
            })
            .sum()
    }
    /// The errors as `compile_error!`s, in the order they came, or `None` when there are
    /// none.
    pub fn finish(self) -> Option<proc_macro2::TokenStream> {
        if self.0.is_empty() {
            return None;
        }
        let mut out = proc_macro2::TokenStream::new();
        for e in self.0 {
            out.extend(match e {
                One::Darling(e) => e.write_errors(),
                One::Node(e) => e.to_compile_error(),
            });
        }
        Some(out)
    }
}

/// A rule's violation as a message: the line, then its help.
pub fn message(v: &mcp_rules::Violation) -> String {
    match &v.help {
        Some(help) => format!("{}; {help}", v.message),
        None => v.message.clone(),
    }
}
