//! Binding: turning the text an expression matched into its variables' values.

use crate::chars::{is_query_char, percent_decode, reserved_value, segment_value, valid_chars};
use crate::expr::{Expr, Operator, Part, exprs};
use std::collections::BTreeMap;

impl Expr {
    /// Binds the variables of a non-query expression from its matched text.
    pub(crate) fn bind(&self, text: &str, out: &mut BTreeMap<String, String>) -> Option<()> {
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
pub(crate) fn bind_query(
    group: &[Part],
    text: &str,
    out: &mut BTreeMap<String, String>,
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
