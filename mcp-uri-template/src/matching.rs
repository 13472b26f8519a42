//! Matching: delimiting each expression's text in a URI, in one forward scan.

use crate::bind::bind_query;
use crate::expr::{Expr, Operator, Part};
use crate::{Capture, MAX_URI_LEN, UriTemplate};
use std::collections::BTreeMap;

impl UriTemplate {
    /// Matches a concrete URI; returns the variables it binds, percent-decoded exactly once.
    ///
    /// A variable is absent from the map when the URI leaves it undefined: an expression
    /// that matches no text at all (RFC 6570 expands undefined variables, and empty lists,
    /// to nothing), or a `?`/`&` variable the query does not name. An exploded variable
    /// binds its items joined by [`UriTemplate::list_separator`]; an item may hold that
    /// separator encoded (`{ids*}` binds `1,2,3` for `1%2C2,3`), so read lists with
    /// [`UriTemplate::captures`]. URIs longer than [`MAX_URI_LEN`] never match.
    ///
    /// ```
    /// let t = mcp_uri_template::UriTemplate::parse("c://x{/segs*}{?q}").unwrap();
    /// let m = t.matches("c://x/a/b?q=1").unwrap();
    /// assert_eq!((m["segs"].as_str(), m["q"].as_str()), ("a/b", "1"));
    /// assert!(t.matches("c://x").unwrap().is_empty()); // `segs` and `q` undefined
    /// ```
    pub fn matches(&self, uri: &str) -> Option<BTreeMap<String, String>> {
        let captures = self.captures(uri)?;
        Some(
            captures
                .into_iter()
                .map(|(k, c)| (k, c.into_parts().0))
                .collect(),
        )
    }

    /// Matches a concrete URI like [`UriTemplate::matches`], and gives each variable it
    /// binds as a [`Capture`]: its value, and its items read as a list, split before
    /// percent-decoding (an encoded separator stays inside its item).
    ///
    /// ```
    /// let t = mcp_uri_template::UriTemplate::parse("n://{ids}{/segs*}").unwrap();
    /// let m = t.captures("n://a%2Cb,c/x%20y/z").unwrap();
    /// assert_eq!(m["ids"].value(), "a,b,c");
    /// assert_eq!(m["ids"].items(), ["a,b", "c"]);
    /// assert_eq!(m["segs"].items(), ["x y", "z"]);
    /// ```
    pub fn captures(&self, uri: &str) -> Option<BTreeMap<String, Capture>> {
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
}

#[cfg(test)]
mod tests;
