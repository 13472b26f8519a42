//! Characters: RFC 3986 classes, percent-decoding, and the checks every bound value
//! passes.

pub(crate) fn is_pct_at(b: &[u8], i: usize) -> bool {
    b.get(i + 1..i + 3)
        .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit))
}

pub(crate) fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

/// gen-delims and sub-delims (RFC 3986 §2.2).
pub(crate) fn is_reserved(b: u8) -> bool {
    b":/?#[]@!$&'()*+,;=".contains(&b)
}

/// Raw characters accepted inside a query (`&` separates pairs; `#` ends it).
pub(crate) fn is_query_char(b: u8) -> bool {
    is_unreserved(b) || (is_reserved(b) && b != b'#')
}

/// Whether `s` consists of bytes accepted by `allowed` and valid `%XX` triplets.
pub(crate) fn valid_chars(s: &str, allowed: fn(u8) -> bool) -> bool {
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

/// A non-empty item of an exploded list that decodes to exactly one safe path segment.
pub(crate) fn segment_value(raw: &str) -> Option<String> {
    checked_segment(raw, is_unreserved)
}

/// A non-empty `{var}`, `{/var}`, `{.var}` or `{;var}` value (not exploded): a segment
/// value, in which a raw `,` may separate the items of a list (RFC 6570 joins them with
/// it for every operator; a `,` within an item comes encoded).
pub(crate) fn list_value(raw: &str) -> Option<String> {
    checked_segment(raw, |b| is_unreserved(b) || b == b',')
}

fn checked_segment(raw: &str, allowed: fn(u8) -> bool) -> Option<String> {
    if raw.is_empty() || !valid_chars(raw, allowed) {
        return None;
    }
    let v = percent_decode(raw)?;
    (!is_dot_segment(&v) && !v.contains(['/', '\\', '\0'])).then_some(v)
}

/// `.` or `..`: a value that would climb or stay put as a path segment.
pub(crate) fn is_dot_segment(v: &str) -> bool {
    v == "." || v == ".."
}

/// A non-empty reserved value; may contain `/` but not NUL.
pub(crate) fn reserved_value(raw: &str) -> Option<String> {
    if raw.is_empty() || !valid_chars(raw, |b| is_unreserved(b) || is_reserved(b)) {
        return None;
    }
    percent_decode(raw).filter(|v| !v.contains('\0'))
}
