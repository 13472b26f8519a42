//! The parts of a parsed template: literals and expressions, and what each operator
//! may match.

use crate::chars::{is_query_char, is_reserved, is_unreserved};

/// The operator of a template expression (RFC 6570 §2.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operator {
    /// `{var}`: a single path-safe value.
    Simple,
    /// `{+var}`: a value that may contain reserved characters such as `/`.
    Reserved,
    /// `{#var}`: `#` followed by a reserved value.
    Fragment,
    /// `{.var}`: `.`-prefixed values.
    Label,
    /// `{/var}`: `/`-prefixed path segments.
    Path,
    /// `{;var}`: `;name=value` path parameters.
    PathParam,
    /// `{?var}`: a query of optional `name=value` pairs.
    Query,
    /// `{&var}`: the continuation of a query.
    QueryContinuation,
}

/// A piece of a template: literal text, or a `{…}` expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Part {
    Literal(String),
    Expr(Expr),
}

/// A `{…}` expression: its operator and variable names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Expr {
    pub(crate) op: Operator,
    pub(crate) vars: Vec<String>,
    /// The (only) variable is exploded: `{/ids*}`.
    pub(crate) explode: bool,
}

impl Operator {
    pub(crate) fn from_char(c: char) -> Option<Self> {
        Some(match c {
            '+' => Self::Reserved,
            '#' => Self::Fragment,
            '.' => Self::Label,
            '/' => Self::Path,
            ';' => Self::PathParam,
            '?' => Self::Query,
            '&' => Self::QueryContinuation,
            _ => return None,
        })
    }

    /// Whether a value (and each list item) must stay one path segment: `{var}`, `{.var}`,
    /// `{/var}` and `{;var}`.
    pub(crate) fn is_segment(self) -> bool {
        matches!(
            self,
            Self::Simple | Self::Label | Self::Path | Self::PathParam
        )
    }

    /// The character a non-empty expansion starts with.
    pub(crate) fn lead(self) -> Option<u8> {
        match self {
            Self::Simple | Self::Reserved => None,
            Self::Fragment => Some(b'#'),
            Self::Label => Some(b'.'),
            Self::Path => Some(b'/'),
            Self::PathParam => Some(b';'),
            Self::Query => Some(b'?'),
            Self::QueryContinuation => Some(b'&'),
        }
    }

    /// The character an exploded value's items are joined by when bound as one value: the
    /// separator of their expansion (RFC 6570 appendix A), except for `;`, `?` and `&`,
    /// whose items come as repeated `name=value` pairs: `,`, as a list value's items.
    pub(crate) fn separator(self) -> char {
        match self {
            Self::Label => '.',
            Self::Path => '/',
            Self::Simple | Self::Reserved | Self::Fragment => ',',
            Self::PathParam | Self::QueryContinuation | Self::Query => ',',
        }
    }

    /// Whether a match of this expression ends at byte `b` when `b` is the leading
    /// character of an expression after it: when it cannot contain `b`, and for `{+var}`
    /// at `?` and `#` (a reserved value stops at the query or fragment).
    pub(crate) fn stops_at(self, b: u8) -> bool {
        !self.can_emit(b) || (self == Self::Reserved && matches!(b, b'?' | b'#'))
    }

    /// Whether text matched by this expression may contain byte `b` raw. Every operator
    /// may show a `,`: RFC 6570 joins the items of a list that is not exploded with it.
    pub(crate) fn can_emit(self, b: u8) -> bool {
        b == b'%'
            || is_unreserved(b)
            || match self {
                Self::Simple | Self::Label => b == b',',
                Self::Path => b == b'/' || b == b',',
                Self::PathParam => b == b';' || b == b'=' || b == b',',
                Self::Reserved | Self::Fragment => is_reserved(b),
                Self::Query | Self::QueryContinuation => is_query_char(b),
            }
    }
}

impl Expr {
    /// A lower bound on the length of the text this expression (with the `&`
    /// expressions grouped after it) can match.
    pub(crate) fn min_len(&self) -> usize {
        let n = self.vars.len();
        match self.op {
            Operator::Simple | Operator::Reserved => 2 * n - 1,
            // `#` and the commas: its values may be empty.
            Operator::Fragment => n,
            Operator::Label | Operator::Path => 2 * n,
            Operator::PathParam => self.vars.iter().map(|v| 1 + v.len()).sum(),
            Operator::Query | Operator::QueryContinuation => 0,
        }
    }
}

/// The expressions among `parts`.
pub(crate) fn exprs(parts: &[Part]) -> impl Iterator<Item = &Expr> {
    parts.iter().filter_map(|p| match p {
        Part::Expr(e) => Some(e),
        Part::Literal(_) => None,
    })
}
