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
    /// malformed or all-zero ids as the W3C Trace Context spec requires.
    pub fn parse(traceparent: &str, tracestate: Option<&str>) -> Option<TraceContext> {
        let parts: Vec<&str> = traceparent.trim().split('-').collect();
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
            state: tracestate.map(str::to_owned),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
