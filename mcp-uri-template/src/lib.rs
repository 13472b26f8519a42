//! RFC 6570 URI templates (levels 1–3, and the level-4 explode modifier `*`): parsing,
//! matching, overlap detection.
//!
//! MCP servers list resource templates such as `file:///{+path}`; on
//! `resources/read` the server finds the template a concrete URI matches and
//! binds its variables. Matching is the inverse of RFC 6570 expansion, made
//! deterministic and linear-time (no regex, no backtracking):
//!
//! * the URI is scanned once, left to right; literals compare byte-for-byte;
//! * an expression ends where the template's next part begins: at the leading
//!   character (`?`, `#`, `/`, …) of one of the expressions right after it, else at
//!   the next literal (its first occurrence, or, when that literal ends the
//!   template, the URI's suffix), or at the end of the URI;
//! * the delimited text must be something the expression could expand to;
//!   values are then percent-decoded exactly once (`+` stays `+`).
//!
//! Any expression may match nothing: RFC 6570 expands undefined variables (and
//! empty lists) to nothing, so `c://x` matches `c://x{/segs*}` and `b://` matches
//! `b://{id}`, and the variables of such an expression are absent from the bindings
//! (undefined). Within an expression that matches some text, every variable must be
//! present (`{/a,b}` does not match `/x`), except in `?`/`&` expressions, whose
//! variables are each optional. A value may be empty where the expansion still shows it:
//! `x://doc#` binds f = "" for `x://doc{#f}` (and `x://doc` leaves it undefined), `;a`
//! binds a = "" for `{;a}`, `?q=` or `?q` binds q = "". An empty `{/a}` or `{.e}` value
//! (`x://d/`, `x://d.`, which RFC 6570 would expand from a = "") matches nothing: a path
//! segment that is empty names its parent, as `.` does, so it is refused like one (and a
//! resource `x://d/` does not overlap a template `x://d{/a}`). What a variable that the URI
//! left undefined means is up to the caller: mcp-runtime gives `None` to an `Option`
//! parameter, an empty list to a `Vec`, and refuses the read for any other type.
//!
//! An exploded variable (`{/ids*}`, `{ids*}`, `{.ext*}`, `{+path*}`) matches zero or more
//! items; it binds them, each decoded and checked like a single value, joined by the
//! expression's separator ([`UriTemplate::list_separator`]): `{/ids*}` binds `a/b/c` for
//! `/a/b/c` (a path), `{.ext*}` binds `tar.gz`, `{ids*}` binds `1,2,3`. An item may not be
//! empty. It must be the only variable of its expression; the prefix modifier `:N` is not
//! supported.
//!
//! In `?`, `&` and `;` expressions an exploded variable is a list given as repeated
//! pairs (RFC 6570 §3.2.7–3.2.9): `{?tag*}` reads `?tag=a&tag=b` as the items `a` and `b`
//! (bound as `a,b`), among the query's other parameters in any order; `{;m*}` reads
//! `;m=1;m=2`. Exploded associative arrays (`?k1=v1&k2=v2`, the keys being the names)
//! are not supported: pairs with other names are left alone, as in any query.
//!
//! A value read as a list ([`UriTemplate::captures`], [`Capture::items`]) is split into
//! items before it is decoded, so an item may hold its separator percent-encoded:
//! `{ids*}` reads `1%2C2,3` as `["1,2", "3"]`, `{ids}` reads `a%2Cb,c` as `["a,b", "c"]`.
//!
//! A variable that is not exploded splits at its raw `,` into list items, whatever its
//! operator: RFC 6570 expands a list that is not exploded with its items joined by `,`
//! (`{/list}` is `/red,green,blue`, `{.list}` `.red,green,blue`, `{;list}`
//! `;list=red,green,blue`, `{?list}` `?list=red,green,blue`) and encodes a `,` within an
//! item. So `{/ids}` reads `/a,b%2Cc` as `["a", "b,c"]`, as do `{.ids}` for `.a,b%2Cc`,
//! `{;ids}` for `;ids=a,b%2Cc` and `{?ids}` or `{&ids}` for `ids=a,b%2Cc`. An item may be
//! empty (`a,,b` is `["a", "", "b"]`). The value stays the whole text, decoded
//! (`a,b,c`): what a variable read as one string gets. `{+var}` and `{#var}` split the
//! same way (a reserved expansion leaves a list's commas raw too), but there RFC 6570
//! also leaves a string's own commas raw: `a,b` is the expansion of the string `a,b` as
//! much as of the list `["a", "b"]`, and the caller reads it as the variable means. The
//! items of an exploded `{/var*}`, `{.var*}` or `{;var*}` split at its separator only, and
//! may not hold a raw `,` (RFC 6570 encodes it there).
//!
//! Security: `{var}`, `{.var}`, `{/var}` and `{;var}` values, and each of their list
//! items (exploded or not), must stay one path segment after decoding (no `/`, `\`, NUL,
//! and not `.` or `..`), so `{/segs*}` refuses `a%2Fb` and `{/ids}` refuses `/a,..`; no
//! value may contain NUL. `{+path}` values may contain `/` and `..`: traversal
//! checks for them belong to the framework's safe-path type.

mod bind;
mod chars;
mod expr;
mod matching;
mod overlap;
mod parse;

pub use bind::Capture;
pub use chars::percent_decode;
pub use expr::Operator;

use expr::{Expr, Part, exprs};
use std::fmt;

/// URIs longer than this many bytes never match any template.
pub const MAX_URI_LEN: usize = 8 * 1024;

/// A parsed RFC 6570 URI template (levels 1–3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriTemplate {
    text: String,
    parts: Vec<Part>,
}

/// Why a template was refused by [`UriTemplate::parse`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateError {
    message: String,
}

impl UriTemplate {
    /// The template text, as given to [`UriTemplate::parse`].
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Variable names in order of appearance, with the operator of their expression.
    pub fn variables(&self) -> Vec<(&str, Operator)> {
        self.exprs()
            .flat_map(|e| e.vars.iter().map(move |v| (v.as_str(), e.op)))
            .collect()
    }

    /// Whether the variable `name` is exploded (`{/name*}`).
    pub fn is_exploded(&self, name: &str) -> bool {
        self.exprs()
            .any(|e| e.explode && e.vars.iter().any(|v| v == name))
    }

    /// True when the template has no expressions (a plain URI).
    pub fn is_static(&self) -> bool {
        self.exprs().next().is_none()
    }

    /// The character that joins the items of `name`'s value read as a list: the separator
    /// of its expression when it is exploded (`/` for `{/path*}`, `.` for `{.ext*}`, `,`
    /// for `{ids*}`, `{+p*}` and `{#f*}`), else `,` (RFC 6570 joins a list value's items
    /// with `,` unless the variable is exploded). `,` for a name that is not a variable of
    /// the template.
    ///
    /// An item may hold its separator percent-encoded (`{ids*}` reads `1%2C2,3` as `1,2`
    /// and `3`), so splitting a decoded value at it does not always give the items back:
    /// [`UriTemplate::captures`] gives them.
    ///
    /// ```
    /// let t = mcp_uri_template::UriTemplate::parse("f://x{/path*}{?tags}").unwrap();
    /// assert_eq!(t.list_separator("path"), '/');
    /// assert_eq!(t.list_separator("tags"), ',');
    /// ```
    pub fn list_separator(&self, name: &str) -> char {
        self.exprs()
            .find(|e| e.explode && e.vars.iter().any(|v| v == name))
            .map_or(',', |e| e.op.separator())
    }

    fn exprs(&self) -> impl Iterator<Item = &Expr> {
        exprs(&self.parts)
    }
}

impl TemplateError {
    pub(crate) fn new(message: String) -> Self {
        TemplateError { message }
    }

    pub(crate) fn at(what: &str, byte: usize) -> Self {
        Self::new(format!("{what} at byte {byte}"))
    }
}

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for TemplateError {}

impl fmt::Display for UriTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod testing {
    use super::UriTemplate;

    pub(crate) fn t(s: &str) -> UriTemplate {
        UriTemplate::parse(s).unwrap()
    }

    /// The bindings of a match, as sorted `(name, value)` pairs.
    pub(crate) fn m(tpl: &str, uri: &str) -> Option<Vec<(String, String)>> {
        t(tpl).matches(uri).map(|b| b.into_iter().collect())
    }

    pub(crate) fn one(name: &str, value: &str) -> Option<Vec<(String, String)>> {
        Some(vec![(name.into(), value.into())])
    }

    pub(crate) fn err(s: &str) -> String {
        UriTemplate::parse(s).unwrap_err().to_string()
    }
}
