//! W3C trace context, as a client sends it in a request's `_meta`.

/// W3C trace context carried in the request's `_meta` (`traceparent`, `tracestate`).
///
/// ```
/// use mcp_runtime::handler::TraceContext;
/// use mcp_runtime::{Context, tool};
///
/// /// Tells the caller which trace it belongs to.
/// #[tool]
/// async fn whoami(cx: Context) -> String {
///     cx.trace_context().map_or("untraced".into(), |t| t.trace_id.clone())
/// }
///
/// let t = TraceContext::parse("00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01", None)
///     .unwrap();
/// assert_eq!(t.parent_id, "00f067aa0ba902b7");
/// assert_eq!(t.flags & 1, 1); // sampled
/// assert!(TraceContext::parse("garbage", None).is_none());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceContext {
    /// 32 lowercase hex digits.
    pub trace_id: String,
    /// 16 lowercase hex digits: the caller's span.
    pub parent_id: String,
    /// The trace flags byte (bit 0: sampled).
    pub flags: u8,
    /// `tracestate`, if it was sent.
    pub state: Option<String>,
}

impl TraceContext {
    /// Parses a `traceparent` value (`00-<trace-id>-<parent-id>-<flags>`), rejecting
    /// malformed or all-zero ids as the W3C Trace Context spec requires. A later version
    /// is read by its first four fields, what follows them ignored (the spec's rule for
    /// versions it does not know). A `tracestate` that is not one (over 32 members or 512
    /// characters, or a member that is not `key=value` in its characters) is dropped, the
    /// `traceparent` kept.
    pub fn parse(traceparent: &str, tracestate: Option<&str>) -> Option<TraceContext> {
        let traceparent = traceparent.trim();
        let known = traceparent.get(..55)?;
        let rest = &traceparent[55..];
        if traceparent.starts_with("00") && !rest.is_empty()
            || !rest.is_empty() && !rest.starts_with('-')
        {
            return None;
        }
        let parts: Vec<&str> = known.split('-').collect();
        let [version, trace_id, parent_id, flags] = parts[..] else {
            return None;
        };
        let hex = |s: &str, n: usize| {
            s.len() == n
                && s.bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        };
        if !hex(version, 2) || version == "ff" || !hex(trace_id, 32) || !hex(parent_id, 16) {
            return None;
        }
        if !hex(flags, 2)
            || trace_id.bytes().all(|b| b == b'0')
            || parent_id.bytes().all(|b| b == b'0')
        {
            return None;
        }
        Some(TraceContext {
            trace_id: trace_id.to_owned(),
            parent_id: parent_id.to_owned(),
            flags: u8::from_str_radix(flags, 16).ok()?,
            state: tracestate.filter(|s| valid_state(s)).map(str::to_owned),
        })
    }
}

/// Whether `s` is a `tracestate` (W3C Trace Context 3.3): at most 32 members of
/// `key=value`, comma-separated (empty members and spaces around them allowed), in at
/// most 512 characters; a key of lowercase letters, digits and `_-*/`, with at most one
/// `@` (a tenant); a value of printable ASCII but `,` and `=`, not ending in a space.
fn valid_state(s: &str) -> bool {
    if s.len() > 512 {
        return false;
    }
    let members: Vec<&str> = s
        .split(',')
        .map(|m| m.trim_matches([' ', '\t']))
        .filter(|m| !m.is_empty())
        .collect();
    members.len() <= 32
        && members.iter().all(|m| {
            let Some((key, value)) = m.split_once('=') else {
                return false;
            };
            let key_ok = !key.is_empty()
                && key.len() <= 256
                && key.bytes().filter(|b| *b == b'@').count() <= 1
                && key
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"_-*/@".contains(&b));
            let value_ok = !value.is_empty()
                && value.len() <= 256
                && !value.ends_with(' ')
                && value
                    .bytes()
                    .all(|b| (0x20..=0x7e).contains(&b) && b != b',' && b != b'=');
            key_ok && value_ok
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `tracestate` that is not one is dropped, and a long one (a client may send
    /// megabytes) never kept; a later `traceparent` version is read by its first four
    /// fields. Before, any `tracestate` was kept whole, and a later version with more
    /// fields was refused.
    #[test]
    fn tracestate_is_checked_and_later_versions_are_read() {
        let parent = "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01";
        let state = |s: &str| TraceContext::parse(parent, Some(s)).unwrap().state;
        assert_eq!(
            state("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE").as_deref(),
            Some("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE")
        );
        assert!(state("t@vendor=x , a=b").is_some());
        assert_eq!(state("no value"), None);
        assert_eq!(state("Upper=x"), None);
        assert_eq!(state("a=b\nc=d"), None);
        assert_eq!(state(&"a=b,".repeat(33)), None);
        assert_eq!(state(&format!("a={}", "x".repeat(600))), None);
        let later = "cc-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01-what-comes-next";
        assert_eq!(TraceContext::parse(later, None).unwrap().flags, 1);
        assert!(TraceContext::parse(&format!("{parent}-extra"), None).is_none());
        assert!(
            TraceContext::parse(
                "cc-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01x",
                None
            )
            .is_none()
        );
    }

    #[test]
    fn traceparent_is_validated() {
        let t = TraceContext::parse(
            "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01",
            Some("k=v"),
        )
        .unwrap();
        assert_eq!(t.trace_id, "0af7651916cd43dd8448eb211c80319c");
        assert_eq!(t.flags, 1);
        assert!(
            TraceContext::parse(
                "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
                None
            )
            .is_none()
        );
        assert!(
            TraceContext::parse(
                "00-0AF7651916CD43DD8448EB211C80319C-00f067aa0ba902b7-01",
                None
            )
            .is_none()
        );
        assert!(
            TraceContext::parse(
                "ff-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01",
                None
            )
            .is_none()
        );
        assert!(TraceContext::parse("garbage", None).is_none());
    }
}
