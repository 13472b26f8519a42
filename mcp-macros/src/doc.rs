//! Descriptions from doc comments.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Attribute, Expr, ExprLit, Lit, Meta};

/// The doc comment of an item: either plain text known now, or an expression to evaluate
/// (`#[doc = include_str!("...")]`).
pub enum Doc {
    Text(String),
    Expr(TokenStream),
}

/// Collects `///` lines (and `#[doc = ...]`) into one description: common leading space
/// removed, surrounding blank lines trimmed, paragraphs kept.
pub fn extract(attrs: &[Attribute]) -> Option<Doc> {
    let mut parts: Vec<Result<String, Expr>> = Vec::new();
    for attr in attrs {
        if !attr.path().is_ident("doc") {
            continue;
        }
        if let Meta::NameValue(nv) = &attr.meta {
            match &nv.value {
                Expr::Lit(ExprLit {
                    lit: Lit::Str(s), ..
                }) => parts.push(Ok(without_stars(&s.value()))),
                other => parts.push(Err(other.clone())),
            }
        }
    }
    if parts.is_empty() {
        return None;
    }
    if parts.iter().all(Result::is_ok) {
        let lines: Vec<String> = parts.into_iter().map(Result::unwrap_or_default).collect();
        let text = normalize(&lines);
        return (!text.is_empty()).then_some(Doc::Text(text));
    }
    // `///` lines mixed with `#[doc = include_str!(..)]`: the lines lose their shared
    // margin here, the included text is kept as it is, and the whole is trimmed when the
    // definition is built (the text is known only then).
    let written: Vec<String> = parts.iter().filter_map(|p| p.clone().ok()).collect();
    let indent = shared_margin(
        &written
            .iter()
            .flat_map(|l| l.split('\n'))
            .collect::<Vec<_>>(),
    );
    let pieces = parts.into_iter().map(|p| match p {
        Ok(s) => {
            let s: Vec<&str> = s.split('\n').map(|l| unindent(l, indent)).collect();
            let s = s.join("\n");
            quote!(#s)
        }
        Err(e) => quote!(#e),
    });
    Some(Doc::Expr(quote!(
        ::core::concat!(#(#pieces, "\n"),*).trim()
    )))
}

/// A block comment's text (`/** ... */`, the one doc string that spans lines) without the
/// column of `*` its lines share, as rustdoc shows it: the lines after the first (which
/// follows `/**`, unless it starts with `*` too) that are not blank all have a `*` at the
/// same column, after spaces and tabs only; that prefix is removed from every line having
/// it. Any other text is kept as it is.
fn without_stars(text: &str) -> String {
    let lines: Vec<&str> = text.split('\n').collect();
    let skip = usize::from(!lines[0].trim_start().starts_with('*'));
    let mut column = None;
    for line in lines.iter().skip(skip).filter(|l| !l.trim().is_empty()) {
        let at = margin(line);
        if !line[at..].starts_with('*') || column.is_some_and(|c| c != at) {
            return text.to_owned();
        }
        column = Some(at);
    }
    let Some(column) = column.filter(|_| lines.len() > 1) else {
        return text.to_owned();
    };
    let strip = |l: &str| match l.get(..=column) {
        Some(prefix) if margin(prefix) == column && prefix.ends_with('*') => {
            l[column + 1..].to_owned()
        }
        _ => l.to_owned(),
    };
    lines
        .iter()
        .map(|l| strip(l))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The leading ASCII spaces and tabs of `line`, in bytes.
fn margin(line: &str) -> usize {
    line.len() - line.trim_start_matches([' ', '\t']).len()
}

/// The margin the non-blank `lines` share. A line whose text starts with other white
/// space right after `///` (an ideographic or no-break space, which may be the text's
/// own) does not lower it.
fn shared_margin(lines: &[&str]) -> usize {
    lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .filter(|l| !l[margin(l)..].starts_with(char::is_whitespace))
        .map(|l| margin(l))
        .min()
        .unwrap_or(0)
}

/// `line` without its first `indent` bytes of margin (fewer, if it has fewer), and without
/// trailing white space. Never cuts inside a character: the margin is ASCII.
fn unindent(line: &str, indent: usize) -> &str {
    line[margin(line).min(indent)..].trim_end()
}

/// Removes the indentation the lines share ([`shared_margin`]), and the blank lines
/// around them.
fn normalize(lines: &[String]) -> String {
    let lines: Vec<&str> = lines.iter().flat_map(|l| l.split('\n')).collect();
    let indent = shared_margin(&lines);
    let body: Vec<&str> = lines.iter().map(|l| unindent(l, indent)).collect();
    body.join("\n").trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    #[test]
    fn doc_lines_are_joined() {
        let f: syn::ItemFn = parse_quote! {
            /// Adds two numbers.
            ///
            /// Second paragraph.
            fn f() {}
        };
        let Some(Doc::Text(t)) = extract(&f.attrs) else {
            panic!()
        };
        assert_eq!(t, "Adds two numbers.\n\nSecond paragraph.");
    }

    #[test]
    fn lines_starting_with_other_white_space_keep_it() {
        let f: syn::ItemFn = parse_quote! {
            /// First line.
            ///　全角で始まる行
            /// Last line.
            /// no-break
            fn f() {}
        };
        let Some(Doc::Text(t)) = extract(&f.attrs) else {
            panic!()
        };
        assert_eq!(
            t,
            "First line.\n\u{3000}全角で始まる行\nLast line.\n\u{a0}no-break"
        );
    }

    #[test]
    fn block_comments_lose_their_column_of_stars() {
        let f: syn::ItemFn = parse_quote! {
            /**
             * Adds two numbers.
             *
             * Returns the sum.
             */
            fn f() {}
        };
        let Some(Doc::Text(t)) = extract(&f.attrs) else {
            panic!()
        };
        assert_eq!(t, "Adds two numbers.\n\nReturns the sum.");
        // `///` lines are lines of their own: a list stays a list.
        let f: syn::ItemFn = parse_quote! {
            /// * a bullet
            /// * another
            fn f() {}
        };
        let Some(Doc::Text(t)) = extract(&f.attrs) else {
            panic!()
        };
        assert_eq!(t, "* a bullet\n* another");
        // Without a column of `*`, a block is kept as written.
        assert_eq!(without_stars(" a\n * b\n c "), " a\n * b\n c ");
        assert_eq!(without_stars("* one line"), "* one line");
    }

    #[test]
    fn include_str_becomes_an_expression() {
        let f: syn::ItemFn = parse_quote! {
            #[doc = include_str!("x.md")]
            fn f() {}
        };
        assert!(matches!(extract(&f.attrs), Some(Doc::Expr(_))));
        let f: syn::ItemFn = parse_quote! { fn f() {} };
        assert!(extract(&f.attrs).is_none());
    }
}
