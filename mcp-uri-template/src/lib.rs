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
//! variables are each optional. What a variable that the URI left undefined means is
//! up to the caller: mcp-runtime gives `None` to an `Option` parameter, an empty list
//! to a `Vec`, and refuses the read for any other type.
//!
//! An exploded variable (`{/ids*}`, `{ids*}`, `{.ext*}`, `{+path*}`) matches zero or more
//! items; it binds them, each decoded and checked like a single value, joined by the
//! expression's separator ([`UriTemplate::list_separator`]): `{/ids*}` binds `a/b/c` for
//! `/a/b/c` (a path), `{.ext*}` binds `tar.gz`, `{ids*}` binds `1,2,3`. An item may not be
//! empty or decode to the separator, so splitting at it gives the items back. It must be
//! the only variable of its expression; `?`, `&` and `;` expressions cannot explode, and
//! the prefix modifier `:N` is not supported.
//!
//! Security: `{var}`, `{.var}`, `{/var}` and `{;var}` values must stay one
//! path segment after decoding (no `/`, `\`, NUL, and not `.` or `..`); no
//! value may contain NUL. `{+path}` values may contain `/` and `..`: traversal
//! checks for them belong to the framework's safe-path type.

use std::collections::BTreeMap;
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

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Expr(Expr),
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Expr {
    op: Operator,
    vars: Vec<String>,
    /// The (only) variable is exploded: `{/ids*}`.
    explode: bool,
}

impl Operator {
    fn from_char(c: char) -> Option<Self> {
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

    /// The character a non-empty expansion starts with.
    fn lead(self) -> Option<u8> {
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

    /// The separator between the items of an exploded value (RFC 6570 appendix A).
    fn separator(self) -> char {
        match self {
            Self::Label => '.',
            Self::Path => '/',
            Self::PathParam => ';',
            Self::QueryContinuation | Self::Query => '&',
            Self::Simple | Self::Reserved | Self::Fragment => ',',
        }
    }

    /// Whether a match of this expression ends at byte `b` when `b` is the leading
    /// character of an expression after it: when it cannot contain `b`, and for `{+var}`
    /// at `?` and `#` (a reserved value stops at the query or fragment).
    fn stops_at(self, b: u8) -> bool {
        !self.can_emit(b) || (self == Self::Reserved && matches!(b, b'?' | b'#'))
    }

    /// Whether text matched by this expression may contain byte `b` raw.
    fn can_emit(self, b: u8) -> bool {
        b == b'%'
            || is_unreserved(b)
            || match self {
                Self::Simple => b == b',',
                Self::Label => false,
                Self::Path => b == b'/',
                Self::PathParam => b == b';' || b == b'=',
                Self::Reserved | Self::Fragment => is_reserved(b),
                Self::Query | Self::QueryContinuation => is_query_char(b),
            }
    }
}

impl Expr {
    /// A lower bound on the length of the text this expression (with the `&`
    /// expressions grouped after it) can match.
    fn min_len(&self) -> usize {
        let n = self.vars.len();
        match self.op {
            Operator::Simple | Operator::Reserved => 2 * n - 1,
            Operator::Fragment | Operator::Label | Operator::Path => 2 * n,
            Operator::PathParam => self.vars.iter().map(|v| 1 + v.len()).sum(),
            Operator::Query | Operator::QueryContinuation => 0,
        }
    }

    /// Binds the variables of a non-query expression from its matched text.
    fn bind(&self, text: &str, out: &mut BTreeMap<String, String>) -> Option<()> {
        let (prefix, sep) = match self.op {
            Operator::Simple | Operator::Reserved => ("", ','),
            Operator::Fragment => ("#", ','),
            Operator::Label => (".", '.'),
            Operator::Path => ("/", '/'),
            Operator::PathParam => (";", ';'),
            Operator::Query | Operator::QueryContinuation => unreachable!("bound by bind_query"),
        };
        if self.explode {
            return self.bind_exploded(text.strip_prefix(prefix)?, sep, out);
        }
        // The last variable takes the remainder; validation rejects a
        // remainder holding a separator that its value may not contain.
        let pieces: Vec<&str> = text
            .strip_prefix(prefix)?
            .splitn(self.vars.len(), sep)
            .collect();
        if pieces.len() != self.vars.len() {
            return None;
        }
        for (name, raw) in self.vars.iter().zip(pieces) {
            let value = match self.op {
                Operator::Reserved | Operator::Fragment => reserved_value(raw)?,
                Operator::PathParam => match raw.strip_prefix(name.as_str())? {
                    "" | "=" => String::new(), // `;a` is an empty value
                    rest => segment_value(rest.strip_prefix('=')?)?,
                },
                _ => segment_value(raw)?,
            };
            out.insert(name.clone(), value);
        }
        Some(())
    }
}

impl Expr {
    /// Binds an exploded variable: one or more items split at `sep`, each decoded and
    /// checked like a single value (an item may not decode to the separator), joined
    /// again by `sep`.
    fn bind_exploded(
        &self,
        text: &str,
        sep: char,
        out: &mut BTreeMap<String, String>,
    ) -> Option<()> {
        let mut items = Vec::new();
        for raw in text.split(sep) {
            let item = match self.op {
                Operator::Reserved | Operator::Fragment => reserved_value(raw)?,
                _ => segment_value(raw)?,
            };
            if item.is_empty() || item.contains(sep) {
                return None;
            }
            items.push(item);
        }
        out.insert(self.vars[0].clone(), items.join(&sep.to_string()));
        Some(())
    }
}

/// Binds the variables of a `?` expression and the `&` expressions following
/// it (or of a lone `&` expression), which share one query.
fn bind_query(group: &[Part], text: &str, out: &mut BTreeMap<String, String>) -> Option<()> {
    if text.is_empty() {
        return Some(()); // every query variable is optional
    }
    let first = exprs(group).next()?;
    let lead = if first.op == Operator::Query {
        '?'
    } else {
        '&'
    };
    let body = text.strip_prefix(lead)?;
    if !valid_chars(body, is_query_char) {
        return None;
    }
    for pair in body.split('&').filter(|p| !p.is_empty()) {
        let (key, raw) = pair.split_once('=').unwrap_or((pair, ""));
        if exprs(group).any(|e| e.vars.iter().any(|v| v == key)) {
            let value = percent_decode(raw).filter(|v| !v.contains('\0'))?;
            if out.insert(key.to_owned(), value).is_some() {
                return None; // a repeated key is ambiguous
            }
        }
    }
    Some(())
}

impl UriTemplate {
    /// Parses a level 1–3 template; see the module docs for what is refused.
    pub fn parse(template: &str) -> Result<UriTemplate, TemplateError> {
        if template.is_empty() {
            return Err(TemplateError::new("empty template".into()));
        }
        let mut parts: Vec<Part> = Vec::new();
        let mut open: Option<usize> = None; // byte offset of the current `{`
        let mut lit_start = 0;
        for (i, c) in template.char_indices() {
            match (open, c) {
                (None, '{') => {
                    if lit_start < i {
                        parts.push(Part::Literal(template[lit_start..i].to_owned()));
                    }
                    open = Some(i);
                }
                (None, '}') => return Err(TemplateError::at("unmatched `}`", i)),
                (None, ' ') => return Err(TemplateError::at("space in literal", i)),
                (None, c) if c.is_control() => {
                    return Err(TemplateError::at("control character in literal", i));
                }
                (None, '%') if !is_pct_at(template.as_bytes(), i) => {
                    return Err(TemplateError::at("invalid percent-encoding in literal", i));
                }
                (Some(_), '{') => return Err(TemplateError::at("nested `{`", i)),
                (Some(start), '}') => {
                    let expr = parse_expr(&template[start + 1..i], start)?;
                    check_expr(&parts, &expr, start)?;
                    parts.push(Part::Expr(expr));
                    open = None;
                    lit_start = i + 1;
                }
                _ => {}
            }
        }
        if let Some(start) = open {
            return Err(TemplateError::at("unclosed `{`", start));
        }
        if lit_start < template.len() {
            parts.push(Part::Literal(template[lit_start..].to_owned()));
        }
        Ok(UriTemplate {
            text: template.to_owned(),
            parts,
        })
    }

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

    /// Matches a concrete URI; returns the variables it binds, percent-decoded exactly once.
    ///
    /// A variable is absent from the map when the URI leaves it undefined: an expression
    /// that matches no text at all (RFC 6570 expands undefined variables, and empty lists,
    /// to nothing), or a `?`/`&` variable the query does not name. An exploded variable
    /// binds its items joined by the expression's separator (see
    /// [`UriTemplate::list_separator`]). URIs longer than [`MAX_URI_LEN`] never match.
    ///
    /// ```
    /// let t = mcp_uri_template::UriTemplate::parse("c://x{/segs*}{?q}").unwrap();
    /// let m = t.matches("c://x/a/b?q=1").unwrap();
    /// assert_eq!((m["segs"].as_str(), m["q"].as_str()), ("a/b", "1"));
    /// assert!(t.matches("c://x").unwrap().is_empty()); // `segs` and `q` undefined
    /// ```
    pub fn matches(&self, uri: &str) -> Option<BTreeMap<String, String>> {
        if uri.len() > MAX_URI_LEN {
            return None;
        }
        let mut out = BTreeMap::new();
        let (mut pos, mut i) = (0, 0);
        while let Some(part) = self.parts.get(i) {
            match part {
                Part::Literal(lit) => {
                    if !uri[pos..].starts_with(lit.as_str()) {
                        return None;
                    }
                    pos += lit.len();
                    i += 1;
                }
                Part::Expr(e) => {
                    let j = self.group_end(i);
                    let end = self.expr_end(uri, pos, e, j)?;
                    let text = &uri[pos..end];
                    match e.op {
                        Operator::Query | Operator::QueryContinuation => {
                            bind_query(&self.parts[i..j], text, &mut out)?
                        }
                        // Nothing: every variable of the expression is undefined.
                        _ if text.is_empty() => {}
                        _ => e.bind(text, &mut out)?,
                    }
                    pos = end;
                    i = j;
                }
            }
        }
        (pos == uri.len()).then_some(out)
    }

    /// The character that separates the items of `name`'s value read as a list: the
    /// separator of its expression when it is exploded (`/` for `{/path*}`, `.` for
    /// `{.ext*}`, `,` for `{ids*}`, `{+p*}` and `{#f*}`), else `,` (RFC 6570 joins a list
    /// value's items with `,` unless the variable is exploded). `,` for a name that is not
    /// a variable of the template.
    ///
    /// Items never contain their separator (a match refuses an item that decodes to
    /// it), so splitting a bound exploded value at it gives back the items.
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

    /// Whether some URI could match both templates (used to refuse ambiguous registrations).
    /// Conservative: may say true for a pair that can't actually collide, never false for a
    /// pair that can.
    pub fn overlaps(&self, other: &UriTemplate) -> bool {
        match (self.is_static(), other.is_static()) {
            (true, true) => return self.text == other.text,
            (true, false) => return other.matches(&self.text).is_some(),
            (false, true) => return self.matches(&other.text).is_some(),
            (false, false) => {}
        }
        // Every match starts with the literal prefix and ends with the literal suffix.
        let (p1, p2) = (self.prefix(), other.prefix());
        let (s1, s2) = (self.suffix(), other.suffix());
        if !(p1.starts_with(p2) || p2.starts_with(p1)) || !(s1.ends_with(s2) || s2.ends_with(s1)) {
            return false;
        }
        // Between the common prefix and suffix, each template's remaining
        // literal bytes must appear; the other template must be able to
        // produce them there (e.g. `{id}` never yields the `/` of `{id}/data`).
        let (k, m) = (p1.len().min(p2.len()), s1.len().min(s2.len()));
        self.fits_in(other, k, m) && other.fits_in(self, k, m)
    }

    fn exprs(&self) -> impl Iterator<Item = &Expr> {
        exprs(&self.parts)
    }

    /// The literal before the first expression.
    fn prefix(&self) -> &str {
        match self.parts.first() {
            Some(Part::Literal(l)) => l,
            _ => "",
        }
    }

    /// The literal after the last expression.
    fn suffix(&self) -> &str {
        match self.parts.last() {
            Some(Part::Literal(l)) if !self.is_static() => l,
            _ => "",
        }
    }

    /// The index of the part after the expression at `i`: a `?` (or lone
    /// `&`) expression absorbs the `&` expressions right after it.
    fn group_end(&self, i: usize) -> usize {
        let op = |p: &Part| match p {
            Part::Expr(e) => Some(e.op),
            Part::Literal(_) => None,
        };
        let mut j = i + 1;
        if matches!(
            op(&self.parts[i]),
            Some(Operator::Query | Operator::QueryContinuation)
        ) {
            while self.parts.get(j).and_then(op) == Some(Operator::QueryContinuation) {
                j += 1;
            }
        }
        j
    }

    /// The end of the expression group `e` starting at `pos` and followed by part `next`;
    /// `pos` itself when the group is left out (undefined). One forward scan per
    /// expression, no backtracking:
    ///
    /// * when expressions follow (up to the next literal), the group ends at the first
    ///   leading character of one of them that it cannot contain itself (so any of them
    ///   may be left out: `{/path*}{?q}{#f}` ends at `?` or `#`);
    /// * else (none of them is present) at the next literal: the template's final
    ///   literal is anchored at the end of the URI, a middle one is the first occurrence
    ///   at least `e.min_len()` bytes on (or, failing that, right at `pos`: `e` is left
    ///   out); or at the end of the URI.
    fn expr_end(&self, uri: &str, pos: usize, e: &Expr, next: usize) -> Option<usize> {
        let bytes = uri.as_bytes();
        // Every expansion of an expression with a leading character starts with it: when
        // the URI does not show it here, the expression matched nothing (its variables are
        // undefined), whatever literal comes later.
        if let Some(lead) = e.op.lead()
            && bytes.get(pos) != Some(&lead)
        {
            return Some(pos);
        }
        let mut leads = [false; 256];
        let mut k = next;
        while let Some(Part::Expr(n)) = self.parts.get(k) {
            if let Some(lead) = n.op.lead().filter(|&b| e.op.stops_at(b)) {
                leads[lead as usize] = true;
            }
            k += 1;
        }
        // Scan while the bytes could belong to `e`: a lead found there ends it.
        let stop = bytes[pos..]
            .iter()
            .position(|&b| leads[b as usize] || !e.op.can_emit(b))
            .map(|k| pos + k);
        if let Some(s) = stop.filter(|&s| leads[bytes[s] as usize]) {
            return Some(s);
        }
        match self.parts.get(k) {
            None => Some(uri.len()),
            // The template's final literal is anchored at the end of the URI.
            Some(Part::Literal(lit)) if k + 1 == self.parts.len() => {
                let end = uri.len().checked_sub(lit.len()).filter(|&end| end >= pos)?;
                uri.ends_with(lit.as_str()).then_some(end)
            }
            Some(Part::Literal(lit)) => {
                let mut from = pos + e.min_len();
                while from < uri.len() && !uri.is_char_boundary(from) {
                    from += 1;
                }
                let found = uri.get(from..).and_then(|rest| rest.find(lit.as_str()));
                match found {
                    Some(at) => Some(from + at),
                    None => uri[pos..].starts_with(lit.as_str()).then_some(pos),
                }
            }
            // (Not reached: the loop above went past every expression.)
            Some(Part::Expr(_)) => Some(uri.len()),
        }
    }

    /// Whether every byte `self` must place between byte `k` and `m` bytes
    /// before the end (literals, leading characters) could be produced there
    /// by `other`.
    fn fits_in(&self, other: &UriTemplate, k: usize, m: usize) -> bool {
        let mut alphabet = [false; 256];
        other.middle_literals(k, m, |b| alphabet[b as usize] = true);
        for e in other.exprs() {
            (0..=255u8)
                .filter(|&b| e.op.can_emit(b))
                .for_each(|b| alphabet[b as usize] = true);
        }
        let mut fits = true;
        self.middle_literals(k, m, |b| fits &= alphabet[b as usize]);
        // Expressions (and their leading characters) may be left out: only literals
        // are certain to appear.
        fits
    }

    /// Calls `f` on every literal byte except the first `k` and last `m`
    /// (only for templates with expressions, so prefix and suffix are distinct).
    fn middle_literals(&self, k: usize, m: usize, mut f: impl FnMut(u8)) {
        let last = self.parts.len() - 1;
        for (i, part) in self.parts.iter().enumerate() {
            if let Part::Literal(l) = part {
                let start = if i == 0 { k } else { 0 };
                let end = if i == last { l.len() - m } else { l.len() };
                l.as_bytes()[start..end].iter().for_each(|&b| f(b));
            }
        }
    }
}

fn exprs(parts: &[Part]) -> impl Iterator<Item = &Expr> {
    parts.iter().filter_map(|p| match p {
        Part::Expr(e) => Some(e),
        Part::Literal(_) => None,
    })
}

/// Parses the inside of `{…}` found at byte `at`.
fn parse_expr(body: &str, at: usize) -> Result<Expr, TemplateError> {
    let first = body
        .chars()
        .next()
        .ok_or_else(|| TemplateError::at("empty expression", at))?;
    if matches!(first, '=' | ',' | '!' | '@' | '|') {
        let msg = format!("operator `{first}` at byte {at} is reserved by RFC 6570, not supported");
        return Err(TemplateError::new(msg));
    }
    let op = Operator::from_char(first).unwrap_or(Operator::Simple);
    let list = if op == Operator::Simple {
        body
    } else {
        &body[1..]
    };
    let mut vars = Vec::new();
    let mut explode = false;
    let names: Vec<&str> = list.split(',').collect();
    for name in &names {
        let name = match name.strip_suffix('*') {
            Some(n) if names.len() == 1 => {
                if matches!(
                    op,
                    Operator::Query | Operator::QueryContinuation | Operator::PathParam
                ) {
                    return Err(TemplateError::new(format!(
                        "explode `*` at byte {at} is not supported on `?`, `&` or `;` expressions"
                    )));
                }
                explode = true;
                n
            }
            Some(_) => {
                return Err(TemplateError::new(format!(
                    "explode `*` at byte {at} needs an expression of one variable, such as `{{/ids*}}`"
                )));
            }
            None => name,
        };
        if let Some(k) = name.find([':', '*']) {
            let m = &name[k..k + 1];
            let msg = format!(
                "level-4 modifier `{m}` at byte {at} is not supported \
                 (no prefix `:N`; explode `*` ends a lone variable)"
            );
            return Err(TemplateError::new(msg));
        }
        if name.is_empty() {
            return Err(TemplateError::at("empty variable name", at));
        }
        if !is_varname(name) {
            return Err(TemplateError::at(
                &format!("invalid variable name `{name}`"),
                at,
            ));
        }
        vars.push(name.to_owned());
    }
    Ok(Expr { op, vars, explode })
}

/// Refuses duplicate names and adjacent expressions that can't be delimited.
fn check_expr(parts: &[Part], expr: &Expr, at: usize) -> Result<(), TemplateError> {
    for (i, name) in expr.vars.iter().enumerate() {
        let mut earlier = exprs(parts).flat_map(|e| &e.vars).chain(&expr.vars[..i]);
        if earlier.any(|v| v == name) {
            return Err(TemplateError::at(
                &format!("duplicate variable `{name}`"),
                at,
            ));
        }
    }
    let Some(Part::Expr(prev)) = parts.last() else {
        return Ok(());
    };
    let ok = match expr.op.lead() {
        None => false, // `{a}{b}`: nothing tells where `a` ends
        Some(lead) => {
            !prev.op.can_emit(lead)
                || (prev.op == Operator::Reserved && matches!(lead, b'?' | b'#'))
                || (matches!(prev.op, Operator::Query | Operator::QueryContinuation)
                    && expr.op == Operator::QueryContinuation)
        }
    };
    if ok {
        return Ok(());
    }
    Err(TemplateError::new(format!(
        "ambiguous expression at byte {at}: it directly follows another expression; \
         put a literal between them"
    )))
}

/// RFC 6570 varname: varchar *( ["."] varchar ), varchar = ALPHA / DIGIT / "_" / pct-encoded.
fn is_varname(name: &str) -> bool {
    let b = name.as_bytes();
    let (mut i, mut after_dot) = (0, true);
    while i < b.len() {
        match b[i] {
            b'.' if !after_dot => after_dot = true,
            b'%' if is_pct_at(b, i) => (after_dot, i) = (false, i + 2),
            c if c.is_ascii_alphanumeric() || c == b'_' => after_dot = false,
            _ => return false,
        }
        i += 1;
    }
    !after_dot
}

fn is_pct_at(b: &[u8], i: usize) -> bool {
    b.get(i + 1..i + 3)
        .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit))
}

fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

/// gen-delims and sub-delims (RFC 3986 §2.2).
fn is_reserved(b: u8) -> bool {
    b":/?#[]@!$&'()*+,;=".contains(&b)
}

/// Raw characters accepted inside a query (`&` separates pairs; `#` ends it).
fn is_query_char(b: u8) -> bool {
    is_unreserved(b) || (is_reserved(b) && b != b'#')
}

/// Whether `s` consists of bytes accepted by `allowed` and valid `%XX` triplets.
fn valid_chars(s: &str, allowed: fn(u8) -> bool) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' if is_pct_at(b, i) => i += 3,
            c if c != b'%' && allowed(c) => i += 1,
            _ => return false,
        }
    }
    true
}

/// Percent-decodes once (`%2F` to `/`); `None` on a bad triplet or invalid UTF-8.
///
/// ```
/// assert_eq!(mcp_uri_template::percent_decode("a%20b").as_deref(), Some("a b"));
/// assert_eq!(mcp_uri_template::percent_decode("a%2"), None);
/// ```
pub fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = |d: u8| (d as char).to_digit(16);
            let (hi, lo) = (hex(*b.get(i + 1)?)?, hex(*b.get(i + 2)?)?);
            out.push((hi * 16 + lo) as u8);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// A non-empty simple value that decodes to exactly one safe path segment.
fn segment_value(raw: &str) -> Option<String> {
    if raw.is_empty() || !valid_chars(raw, is_unreserved) {
        return None;
    }
    let v = percent_decode(raw)?;
    let unsafe_ = v == "." || v == ".." || v.contains(['/', '\\', '\0']);
    (!unsafe_).then_some(v)
}

/// A non-empty reserved value; may contain `/` but not NUL.
fn reserved_value(raw: &str) -> Option<String> {
    if raw.is_empty() || !valid_chars(raw, |b| is_unreserved(b) || is_reserved(b)) {
        return None;
    }
    percent_decode(raw).filter(|v| !v.contains('\0'))
}

impl TemplateError {
    fn new(message: String) -> Self {
        TemplateError { message }
    }

    fn at(what: &str, byte: usize) -> Self {
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
mod tests {
    use super::*;

    fn t(s: &str) -> UriTemplate {
        UriTemplate::parse(s).unwrap()
    }

    /// The bindings of a match, as sorted `(name, value)` pairs.
    fn m(tpl: &str, uri: &str) -> Option<Vec<(String, String)>> {
        t(tpl).matches(uri).map(|b| b.into_iter().collect())
    }

    fn one(name: &str, value: &str) -> Option<Vec<(String, String)>> {
        Some(vec![(name.into(), value.into())])
    }

    fn err(s: &str) -> String {
        UriTemplate::parse(s).unwrap_err().to_string()
    }

    #[test]
    fn accessors() {
        let tpl = t("a://x/{id}{?q,limit}");
        assert_eq!(tpl.as_str(), "a://x/{id}{?q,limit}");
        assert_eq!(tpl.to_string(), "a://x/{id}{?q,limit}");
        let vars = [
            ("id", Operator::Simple),
            ("q", Operator::Query),
            ("limit", Operator::Query),
        ];
        assert_eq!(tpl.variables(), vars);
        assert!(!tpl.is_static());
        assert!(t("a://x/y").is_static());
        assert!(t("a://x/y").variables().is_empty());
    }

    #[test]
    fn simple_is_one_safe_segment() {
        let tpl = "test://template/{id}/data";
        assert_eq!(m(tpl, "test://template/123/data"), one("id", "123"));
        assert_eq!(
            m(tpl, "test://template/abc%20def/data"),
            one("id", "abc def")
        );
        assert_eq!(m(tpl, "test://template/a+b~c/data"), None); // `+` is reserved
        assert_eq!(m(tpl, "test://template/a%2Bb/data"), one("id", "a+b")); // not a space
        assert_eq!(m(tpl, "test://template/%2541/data"), one("id", "%41")); // decoded exactly once
        for bad in [
            "a%2Fb", "%2e%2e", "%2E", "..", ".", "a/b", "a%5Cb", "%00", "a%zz", "a%2", "%ff",
            "a b", "é",
        ] {
            let uri = format!("test://template/{bad}/data");
            assert_eq!(m(tpl, &uri), None, "{uri}");
        }
        // Nothing between the literals: `id` is undefined (RFC 6570 expands it to nothing).
        assert_eq!(m(tpl, "test://template//data"), Some(vec![]));
        assert_eq!(m("b://{id}", "b://"), Some(vec![]));
        assert_eq!(m(tpl, "test://template/1/data/"), None); // anchored at the end
        assert_eq!(m(tpl, "Test://template/1/data"), None); // literals compare exactly
        assert_eq!(m("x://{a,b}", "x://1024,768").unwrap().len(), 2);
        assert_eq!(m("x://{a,b}", "x://1024"), None); // every variable is required
    }

    #[test]
    fn reserved_may_contain_slashes() {
        let tpl = "file:///{+path}";
        assert_eq!(m(tpl, "file:///a/b/c.txt"), one("path", "a/b/c.txt"));
        assert_eq!(m(tpl, "file:///%2e%2e/x"), one("path", "../x")); // checked elsewhere
        assert_eq!(m(tpl, "file:///a%00b"), None);
        assert_eq!(m(tpl, "file:///"), Some(vec![])); // `path` undefined
        assert_eq!(m(tpl, "file:///a b"), None);
        assert_eq!(m("x://{+a}/meta", "x://p/q/meta"), one("a", "p/q"));
        // Followed by a query: the reserved value stops at the first `?`.
        let got = m("file:///{+path}{?rev}", "file:///a/b?rev=3").unwrap();
        assert_eq!(
            got,
            [("path".into(), "a/b".into()), ("rev".into(), "3".into())]
        );
        assert_eq!(
            m("file:///{+path}{?rev}", "file:///a/b"),
            one("path", "a/b")
        );
        assert_eq!(m("x://{#f}", "x://#a/b?c"), one("f", "a/b?c"));
        assert_eq!(m("x://{#f}", "x://#"), None);
    }

    #[test]
    fn query_pairs() {
        let tpl = "search://q{?q,limit}";
        assert_eq!(m(tpl, "search://q"), Some(vec![]));
        assert_eq!(m(tpl, "search://q?q=rust"), one("q", "rust"));
        let got = m(tpl, "search://q?limit=5&q=a%26b").unwrap();
        assert_eq!(
            got,
            [("limit".into(), "5".into()), ("q".into(), "a&b".into())]
        );
        assert_eq!(m(tpl, "search://q?q=1&q=2"), None);
        assert_eq!(m(tpl, "search://q?other=1"), Some(vec![]));
        assert_eq!(m(tpl, "search://q?other=1&other=2&q=x"), one("q", "x"));
        assert_eq!(m(tpl, "search://q?q="), one("q", ""));
        assert_eq!(m(tpl, "search://q?q"), one("q", ""));
        assert_eq!(m(tpl, "search://q?q=a+b/c"), one("q", "a+b/c"));
        assert_eq!(m(tpl, "search://q?q=%00"), None);
        assert_eq!(m(tpl, "search://q?q=%zz"), None);
        assert_eq!(m(tpl, "search://q?q=a#frag"), None);
        assert_eq!(m(tpl, "search://qq=1"), None);
        // `?` and `&` expressions share one query, in any order.
        let got = m("s://q{?a}{&b}", "s://q?b=2&a=1").unwrap();
        assert_eq!(got, [("a".into(), "1".into()), ("b".into(), "2".into())]);
        assert_eq!(m("s://q?fixed=1{&x}", "s://q?fixed=1&x=2"), one("x", "2"));
        assert_eq!(m("s://q?fixed=1{&x}", "s://q?fixed=1"), Some(vec![]));
        assert_eq!(m("s://{id}{?q}{#f}", "s://1?q=2#3").unwrap().len(), 3);
    }

    #[test]
    fn path_label_and_params() {
        let got = m("x://r{/a,b}", "x://r/x/y").unwrap();
        assert_eq!(got, [("a".into(), "x".into()), ("b".into(), "y".into())]);
        for bad in [
            "x://r/x",
            "x://r/x/y/z",
            "x://r/x/",
            "x://r//y",
            "x://r/x/%2e%2e",
            "x://r/",
        ] {
            assert_eq!(m("x://r{/a,b}", bad), None, "{bad}");
        }
        assert_eq!(m("x://{id}{/sub}", "x://1/2").unwrap().len(), 2);

        // Left out as a whole: both undefined.
        assert_eq!(m("x://r{/a,b}", "x://r"), Some(vec![]));
        let got = m("x://r{;x,y}", "x://r;x=1;y=2").unwrap();
        assert_eq!(got, [("x".into(), "1".into()), ("y".into(), "2".into())]);
        let got = m("x://r{;x,y}", "x://r;x;y=2").unwrap();
        assert_eq!(got, [("x".into(), "".into()), ("y".into(), "2".into())]);
        for bad in [
            "x://r;y=2;x=1",
            "x://r;x=1",
            "x://r;xx=1;y=2",
            "x://r;x=1;y=%2F",
        ] {
            assert_eq!(m("x://r{;x,y}", bad), None, "{bad}");
        }

        assert_eq!(m("file://doc{.ext}", "file://doc.txt"), one("ext", "txt"));
        assert_eq!(
            m("file://doc{.ext}", "file://doc.tar.gz"),
            one("ext", "tar.gz")
        );
        assert_eq!(m("file://doc{.ext}", "file://doc.."), None); // value `.`
        assert_eq!(m("file://doc{.ext}", "file://doc"), Some(vec![]));
        assert_eq!(m("x://r{;x,y}", "x://r"), Some(vec![]));
    }

    #[test]
    fn literal_delimits_expressions() {
        // The final literal is anchored at the end; middle literals match leftmost.
        assert_eq!(
            m("file:///{name}.txt", "file:///a.b.txt"),
            one("name", "a.b")
        );
        let got = m("x://{a}-{b}", "x://1-2-3").unwrap();
        assert_eq!(got, [("a".into(), "1".into()), ("b".into(), "2-3".into())]);
        let got = m("x://{a}-{b}", "x://--x").unwrap();
        assert_eq!(got, [("a".into(), "-".into()), ("b".into(), "x".into())]);
        assert_eq!(m("x://é/{id}", "x://é/1"), one("id", "1"));
        assert_eq!(m("file:///{name}.txt", "file:///é.txt"), None);
        assert_eq!(m("x://{a}é{b}", "x://éé1"), None);
        assert_eq!(m("a://b", "a://b"), Some(vec![]));
        assert_eq!(m("a://b", "a://bc"), None);
    }

    #[test]
    fn explode_binds_every_item() {
        assert_eq!(
            m("file://{/path*}", "file:///a/b/c.txt"),
            one("path", "a/b/c.txt")
        );
        assert!(
            m("file://{/path*}", "file:///a/../c").is_none(),
            "each item is a safe segment"
        );
        assert!(
            m("file://{/path*}", "file:///a//c").is_none(),
            "no empty item"
        );
        assert!(
            m("file://{/path*}", "file:///a/%2F/c").is_none(),
            "an item may not hide a separator"
        );
        assert_eq!(m("ids://{ids*}", "ids://1,2,3"), one("ids", "1,2,3"));
        assert_eq!(m("x://f{.ext*}", "x://f.tar.gz"), one("ext", "tar.gz"));
        assert_eq!(
            m("file://{/path*}/raw", "file:///a/b/raw").unwrap(),
            vec![("path".into(), "a/b".into())]
        );
        assert!(t("file://{/path*}").is_exploded("path"));
        assert!(!t("file://{/path}").is_exploded("path"));
        assert!(t("a://{/x*}").overlaps(&t("a://{/y}")));
    }

    #[test]
    fn exploded_items_split_at_the_separator() {
        let tpl = t("c://x{/segs*}{?q}");
        for (name, sep) in [("segs", '/'), ("q", ',')] {
            assert_eq!(tpl.list_separator(name), sep);
        }
        assert_eq!(t("x://f{.e*}").list_separator("e"), '.');
        assert_eq!(t("x://{ids*}").list_separator("ids"), ',');
        assert_eq!(t("x://{+p*}").list_separator("p"), ',');
        assert_eq!(t("x://{#f*}").list_separator("f"), ',');
        assert_eq!(t("x://{/p}").list_separator("p"), ','); // not exploded
        assert_eq!(tpl.list_separator("nope"), ',');
        // Items never hold their separator, so splitting the binding gives them back.
        let got = tpl.matches("c://x/a/b%20c").unwrap();
        let items: Vec<&str> = got["segs"].split(tpl.list_separator("segs")).collect();
        assert_eq!(items, ["a", "b c"]);
        assert_eq!(m("x://f{.e*}", "x://f.a%2Eb"), None);
        assert_eq!(m("x://{ids*}", "x://1%2C2,3"), None);
    }

    #[test]
    fn left_out_expressions_are_undefined() {
        // An empty list is undefined: nothing to bind.
        assert_eq!(m("c://x{/segs*}", "c://x"), Some(vec![]));
        assert_eq!(m("c://x{/segs*}", "c://x/"), None); // one empty item: refused
        assert_eq!(m("x://f{.e*}", "x://f"), Some(vec![]));
        assert_eq!(m("x://n/{ids*}", "x://n/"), Some(vec![]));
        let tpl = "repo://{owner}/{repo}/files{/path*}{?q,limit}{#frag}";
        let got = |uri| {
            m(tpl, uri).map(|b| {
                b.into_iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
        };
        assert_eq!(got("repo://a/b/files").as_deref(), Some("owner=a repo=b"));
        assert_eq!(
            got("repo://a/b/files?limit=notnum").as_deref(),
            Some("limit=notnum owner=a repo=b")
        );
        // Each of the trailing expressions may be left out, whichever follow.
        assert_eq!(
            got("repo://a/b/files#top").as_deref(),
            Some("frag=top owner=a repo=b")
        );
        assert_eq!(
            got("repo://a/b/files/x/y#top").as_deref(),
            Some("frag=top owner=a path=x/y repo=b")
        );
        assert_eq!(
            got("repo://a/b/files/x?q=1#t").as_deref(),
            Some("frag=t owner=a path=x q=1 repo=b")
        );
        assert_eq!(got("repo://a//files").as_deref(), Some("owner=a"));
        assert_eq!(got("repo://a/b/files/x y").as_deref(), None);
        assert_eq!(got("repo://a/b/filesx"), None);
        // Left out before a literal: the literal follows at once.
        assert_eq!(m("x://{a}{/b}.json", "x://1.json"), one("a", "1"));
        let got = m("x://{a}{/b}.json", "x://1/2.json").unwrap();
        assert_eq!(got, [("a".into(), "1".into()), ("b".into(), "2".into())]);
        assert_eq!(
            m("x://{a}{/b}.json?v", "x://1.json?v"),
            one("a", "1"),
            "`?` cannot be in `a`: the literal comes next"
        );
        assert_eq!(m("x://{a}-{b}", "x://-x"), one("b", "x"));
        assert_eq!(m("x://{a}-{b}", "x://-"), Some(vec![]));
        // A reserved value stops at the query and the fragment.
        let got = m("f:///{+p}{?q}{#f}", "f:///a/b#c?d").unwrap();
        assert_eq!(
            got,
            [("f".into(), "c?d".into()), ("p".into(), "a/b".into())]
        );
    }

    #[test]
    fn parse_errors() {
        assert_eq!(err("a://{id"), "unclosed `{` at byte 4");
        assert_eq!(err("test://tmpl/{id"), "unclosed `{` at byte 12");
        assert_eq!(err("a://{a{b}}"), "nested `{` at byte 6");
        assert_eq!(err("a://}"), "unmatched `}` at byte 4");
        assert_eq!(err("a://{}"), "empty expression at byte 4");
        assert_eq!(err(""), "empty template");
        assert_eq!(err("a://{a,}"), "empty variable name at byte 4");
        assert_eq!(
            err("a://{a}{b}").split(':').next(),
            Some("ambiguous expression at byte 7")
        );
        assert!(err("a://{a:3}").starts_with("level-4 modifier `:` at byte 4 is not supported"));
        assert!(err("a://{?}").contains("empty variable name"));
        assert!(err("a://{,a}").contains("operator `,`"));
        assert!(err("a://{=a}").contains("reserved by RFC 6570"));
        for bad in ["{a-b}", "{.a.}", "{a..b}", "{.a}", "{a b}", "{%zz}"] {
            let tpl = format!("a://x/{bad}");
            if bad == "{.a}" {
                t(&tpl); // `.` here is the label operator: fine
                continue;
            }
            assert!(err(&tpl).contains("invalid variable name"), "{tpl}");
        }
        t("a://{a.b_c%20}");
        assert!(err("a://{a}/{a}").contains("duplicate variable `a`"));
        assert!(err("a://{a,a}").contains("duplicate"));
        assert!(err("a://{a:3}").contains("level-4"));
        assert!(err("a://{a,b*}").contains("one variable"));
        assert!(err("a://x{?a*}").contains("not supported"));
        assert!(err("a://x{;a*}").contains("not supported"));
        assert_eq!(err("a://x y"), "space in literal at byte 5");
        assert!(err("a://x\ty").contains("control character"));
        assert!(err("a://x%zz").contains("percent-encoding"));
    }

    #[test]
    fn a_left_out_expression_before_a_literal_seen_again_later() {
        let m = t("x://r{/a}.{b}").matches("x://r.1.2").expect("matches");
        assert_eq!(m.get("a"), None);
        assert_eq!(m.get("b").map(String::as_str), Some("1.2"));
        let m = t("api://items{/id}.{format}")
            .matches("api://items.v1.json")
            .expect("matches");
        assert_eq!(m.get("id"), None);
        assert_eq!(m.get("format").map(String::as_str), Some("v1.json"));
        let m = t("api://items{/id}.{format}")
            .matches("api://items/7.json")
            .expect("matches");
        assert_eq!(m.get("id").map(String::as_str), Some("7"));
    }

    #[test]
    fn adjacent_expressions() {
        for bad in [
            "{a}{b}", "{a}{+b}", "{+a}{b}", "{/a}{b}", "{a}{.b}", "{/a}{/b}", "{+a}{/b}",
            "{?a}{?b}", "{&a}{?b}", "{#a}{?b}", "{;a}{;b}", "{?a}{/b}",
        ] {
            assert!(err(&format!("x://{bad}")).contains("ambiguous"), "{bad}");
        }
        for ok in [
            "{a}{/b}",
            "{+a}{?q}",
            "{+a}{#f}",
            "{?a}{&b}{&c}",
            "{/a}{?q}",
            "{a}{;p}",
            "{?q}{#f}",
        ] {
            t(&format!("x://{ok}"));
        }
    }

    #[test]
    fn length_cap_and_pathological_inputs() {
        let long = format!("file:///{}", "a".repeat(MAX_URI_LEN));
        assert_eq!(t("file:///{+path}").matches(&long), None);
        let fits = format!("file:///{}", "a".repeat(MAX_URI_LEN - 8));
        assert!(t("file:///{+path}").matches(&fits).is_some());

        // Many expressions against a long run of one character: must just return.
        let uri = format!("t://{}", "x".repeat(MAX_URI_LEN - 4));
        let many = |sep: &str, op: &str| {
            let body: Vec<String> = (0..60).map(|i| format!("{{{op}v{i}}}")).collect();
            format!("t://{}", body.join(sep))
        };
        for tpl in [
            many("x", ""),
            many("x", "+"),
            many("xx", ""),
            many("/", ""),
            many("-", ""),
        ] {
            let _ = t(&tpl).matches(&uri);
        }
        let _ = t("t://{a}x{+b}{?c}").matches(&uri);
        let _ = t("t://{a}{/b}{;c}{?d}{&e}{#f}").matches(&uri);
        // Every expression may be left out: still one scan each.
        let optional: Vec<String> = (0..60).map(|i| format!("{{/v{i}}}x")).collect();
        let _ = t(&format!("t://{}", optional.join(""))).matches(&uri);
        let slashes = format!("t://{}", "/".repeat(MAX_URI_LEN - 4));
        let _ = t("t://{a}{/b}{;d}{?e}{#f}").matches(&slashes);
        let _ = t(&many("/", "/")).matches(&slashes);
    }

    #[test]
    fn overlaps() {
        let o = |a: &str, b: &str| {
            let (a, b) = (t(a), t(b));
            assert_eq!(a.overlaps(&b), b.overlaps(&a), "symmetric");
            a.overlaps(&b)
        };
        assert!(o("a://x", "a://x"));
        assert!(!o("a://x", "a://y"));
        assert!(o("a://x/1", "a://x/{id}"));
        assert!(!o("a://x/1/2", "a://x/{id}"));
        assert!(!o("a://x/{id}", "a://y/{id}"));
        assert!(o("a://x/{id}", "a://x/{+path}"));
        assert!(o("a://x/{id}", "a://x/{name}"));
        assert!(!o("a://x/{id}/data", "a://x/{id}/meta"));
        assert!(!o("a://x/{id}", "a://x/{id}/data"));
        assert!(o("a://x/{+p}", "a://x/{id}/data"));
        assert!(o("a://{host}/x", "a://y{+rest}"));
        assert!(!o("a://{host}/x", "a://y{rest}")); // `{rest}` never yields `/`
        assert!(!o("a://x/{id}.json", "a://x/{id}.xml"));
        assert!(o("file:///{+path}", "file:///{name}.txt"));
        assert!(o("s://q{?q}", "s://q{?limit}"));
        // `{/c}` may be left out: `s://1` matches both.
        assert!(o("s://{a}", "s://{b}{/c}"));
        assert!(o("a://x", "a://x{/p*}"));
        assert!(o("a://x{?q}", "a://x{/p*}"));
        assert!(!o("a://x/{id}.json", "a://x/{id}{/rev}.xml"));
    }
}
