//! Binding: turning the text an expression matched into its variables' values.

use crate::chars::{
    is_dot_segment, is_query_char, list_value, percent_decode, reserved_value, segment_value,
    valid_chars,
};
use crate::expr::{Expr, Operator, Part, exprs};
use std::collections::BTreeMap;

/// What a match binds to one variable: its value, and the items of that value read as a
/// list. See [`UriTemplate::captures`](crate::UriTemplate::captures).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capture {
    value: String,
    items: Vec<String>,
}

impl Capture {
    /// The value, percent-decoded once: what [`UriTemplate::matches`](crate::UriTemplate::matches)
    /// binds. An exploded variable's items are joined by
    /// [`UriTemplate::list_separator`](crate::UriTemplate::list_separator).
    pub fn value(&self) -> &str {
        &self.value
    }

    /// The items of the value read as a list, each percent-decoded on its own: the matched
    /// text is split before decoding, so an encoded separator stays inside its item
    /// (`{ids}` reads `a%2Cb,c` as `["a,b", "c"]`). A variable that is not exploded splits
    /// at its raw `,` (an empty value is one empty item); an exploded one has an item per
    /// item of the expansion (`/a/b` for `{/segs*}`, `?tag=a&tag=b` for `{?tag*}`).
    pub fn items(&self) -> &[String] {
        &self.items
    }

    /// The value and the items, taken apart.
    pub fn into_parts(self) -> (String, Vec<String>) {
        (self.value, self.items)
    }

    /// A variable that is not exploded: `value` (already checked) is the decoding of
    /// `raw`, and its items are `raw`'s pieces between commas, each decoded. `None` when a
    /// piece of a `{var}`, `{/var}`, `{.var}` or `{;var}` value is a dot segment (`.` or
    /// `..`), so each item of a path-safe value is path-safe too.
    fn single(op: Operator, raw: &str, value: String) -> Option<Capture> {
        let mut items = Vec::new();
        for piece in raw.split(',') {
            let item = percent_decode(piece)?;
            if op.is_segment() && is_dot_segment(&item) {
                return None;
            }
            items.push(item);
        }
        Some(Capture { value, items })
    }

    /// An exploded variable's items, its value their join by `sep`.
    fn list(items: Vec<String>, sep: char) -> Capture {
        let value = items.join(sep.encode_utf8(&mut [0; 4]));
        Capture { value, items }
    }
}

impl Expr {
    /// Binds the variables of a non-query expression from its matched text.
    pub(crate) fn bind(&self, text: &str, out: &mut BTreeMap<String, Capture>) -> Option<()> {
        let (prefix, sep) = match self.op {
            Operator::Simple | Operator::Reserved => ("", ','),
            Operator::Fragment => ("#", ','),
            Operator::Label => (".", '.'),
            Operator::Path => ("/", '/'),
            Operator::PathParam => (";", ';'),
            Operator::Query | Operator::QueryContinuation => return None, // see bind_query
        };
        let body = text.strip_prefix(prefix)?;
        if self.explode {
            return self.bind_exploded(body, sep, out);
        }
        // The last variable takes the remainder; validation rejects a
        // remainder holding a separator that its value may not contain.
        let pieces: Vec<&str> = body.splitn(self.vars.len(), sep).collect();
        if pieces.len() != self.vars.len() {
            return None;
        }
        for (name, raw) in self.vars.iter().zip(pieces) {
            let raw = match self.op {
                Operator::PathParam => param_raw(name, raw)?,
                _ => raw,
            };
            let value = match self.op {
                // `;a` and `#` (or `#,`) show empty values: `{;a}`, `{#f}` with a = f = "".
                Operator::PathParam | Operator::Fragment if raw.is_empty() => String::new(),
                Operator::Reserved | Operator::Fragment => reserved_value(raw)?,
                // A raw `,` separates the items of a list (RFC 6570 §3.2.2–3.2.9).
                _ => list_value(raw)?,
            };
            out.insert(name.clone(), Capture::single(self.op, raw, value)?);
        }
        Some(())
    }

    /// Binds an exploded variable: one or more items split at `sep`, each decoded and
    /// checked like a single value (an encoded separator stays in its item). A `{;x*}`
    /// item is a `x=value` (or `x`) parameter.
    fn bind_exploded(
        &self,
        text: &str,
        sep: char,
        out: &mut BTreeMap<String, Capture>,
    ) -> Option<()> {
        let name = self.vars.first()?;
        let mut items = Vec::new();
        for raw in text.split(sep) {
            let item = match self.op {
                Operator::Reserved | Operator::Fragment => reserved_value(raw)?,
                Operator::PathParam => match param_raw(name, raw)? {
                    "" => String::new(),
                    v => segment_value(v)?,
                },
                _ => segment_value(raw)?,
            };
            items.push(item);
        }
        out.insert(name.clone(), Capture::list(items, self.op.separator()));
        Some(())
    }
}

/// The raw value of a `name=value` path parameter (`""` for `name` or `name=`); `None`
/// when the parameter has another name.
fn param_raw<'a>(name: &str, raw: &'a str) -> Option<&'a str> {
    match raw.strip_prefix(name)? {
        "" | "=" => Some(""),
        rest => rest.strip_prefix('='),
    }
}

/// Binds the variables of a `?` expression and the `&` expressions following
/// it (or of a lone `&` expression), which share one query.
pub(crate) fn bind_query(
    group: &[Part],
    text: &str,
    out: &mut BTreeMap<String, Capture>,
) -> Option<()> {
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
    // The items of exploded variables (`{?tag*}`: `tag=a&tag=b`), in the query's order.
    let mut lists: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for pair in body.split('&').filter(|p| !p.is_empty()) {
        let (key, raw) = pair.split_once('=').unwrap_or((pair, ""));
        let Some(e) = exprs(group).find(|e| e.vars.iter().any(|v| v == key)) else {
            continue; // a parameter the template does not name
        };
        let value = percent_decode(raw).filter(|v| !v.contains('\0'))?;
        if e.explode {
            lists.entry(key).or_default().push(value);
            continue;
        }
        let capture = Capture::single(Operator::Query, raw, value)?;
        if out.insert(key.to_owned(), capture).is_some() {
            return None; // a repeated key is ambiguous
        }
    }
    for (name, items) in lists {
        out.insert(
            name.to_owned(),
            Capture::list(items, Operator::Query.separator()),
        );
    }
    Some(())
}
