//! The request headers of the 2026-07-28 HTTP binding: media types (`Content-Type`,
//! `Accept`) and the headers mirrored from the body (`MCP-Protocol-Version`, `Mcp-Method`,
//! `Mcp-Name`, `Mcp-Param-*`), checked through the core's `TransportGuard`.

use crate::protocol::RpcError;
use crate::protocol::headers::{self, HeaderParam, decode_header_value};
use crate::server::parts::TransportGuard;
use axum::http::{HeaderMap, HeaderName, header};
use serde_json::Value;
use std::sync::Arc;

/// `application/json`, parameters allowed, compared on the parsed media type.
pub(super) fn is_json_content_type(headers: &HeaderMap) -> bool {
    let mut values = headers.get_all(header::CONTENT_TYPE).iter();
    let (Some(v), None) = (values.next(), values.next()) else {
        return false;
    };
    let Ok(v) = v.to_str() else { return false };
    v.split(';')
        .next()
        .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
}

/// Which response media types the client accepts: (json, sse). No `Accept` means JSON.
pub(super) fn accepted(headers: &HeaderMap) -> (bool, bool) {
    // What every Streamable HTTP client sends, answered without parsing.
    let mut values = headers.get_all(header::ACCEPT).iter();
    if let (Some(v), None) = (values.next(), values.next())
        && v.as_bytes() == b"application/json, text/event-stream"
    {
        return (true, true);
    }
    let mut any = false;
    // For each of the two types, the most specific range naming it decides (RFC 9110
    // 12.5.1: `text/event-stream;q=0, */*` refuses the stream): how specific that range
    // is (0: none yet, 1: `*/*`, 2: `type/*`, 3: the type itself), and whether it accepts.
    let (mut json, mut sse) = ((0u8, false), (0u8, false));
    let take = |(at, ok): &mut (u8, bool), specific: u8, accepts: bool| {
        if specific > *at {
            (*at, *ok) = (specific, accepts);
        } else if specific == *at && specific > 0 {
            *ok |= accepts;
        }
    };
    for v in headers.get_all(header::ACCEPT) {
        let Ok(v) = v.to_str() else { continue };
        for item in v.split(',') {
            any = true;
            let mut parts = item.split(';');
            let ty = parts.next().unwrap_or("").trim();
            let refused = parts.any(|p| {
                let p = p.trim();
                p.strip_prefix("q=")
                    .or_else(|| p.strip_prefix("Q="))
                    .and_then(|q| q.trim().parse::<f32>().ok())
                    .is_some_and(|q| q == 0.0)
            });
            let is = |t: &str| ty.eq_ignore_ascii_case(t);
            let (for_json, for_sse) = if is("*/*") {
                (1, 1)
            } else if is("application/*") {
                (2, 0)
            } else if is("application/json") {
                (3, 0)
            } else if is("text/*") {
                (0, 2)
            } else if is("text/event-stream") {
                (0, 3)
            } else {
                (0, 0)
            };
            take(&mut json, for_json, !refused);
            take(&mut sse, for_sse, !refused);
        }
    }
    if !any { (true, false) } else { (json.1, sse.1) }
}

/// The request headers the 2026-07-28 HTTP binding mirrors from the body.
pub(crate) struct HeaderGuard<'a> {
    headers: &'a HeaderMap,
    caller: Option<Arc<crate::auth::Principal>>,
    /// `MCP-Protocol-Version`, read once: both `check_method` and `check_version` need it.
    version: Single<'a>,
}

/// What a header that must appear at most once holds.
#[derive(Clone, Copy)]
pub(super) enum Single<'a> {
    Absent,
    /// Its value, OWS-trimmed.
    One(&'a str),
    Repeated,
    /// Characters outside visible ASCII, space and tab.
    Invalid,
}

impl<'a> Single<'a> {
    pub(super) fn read(headers: &'a HeaderMap, name: &HeaderName) -> Self {
        let mut values = headers.get_all(name).iter();
        match (values.next(), values.next()) {
            (None, _) => Single::Absent,
            (Some(_), Some(_)) => Single::Repeated,
            // `to_str` takes exactly visible ASCII, space and tab; with no other control
            // characters left, ASCII whitespace at the ends is spaces and tabs.
            (Some(v), None) => match v.to_str() {
                Ok(s) => Single::One(s.trim_ascii()),
                Err(_) => Single::Invalid,
            },
        }
    }

    /// The value; nothing for a header that is absent, repeated or invalid (where the
    /// legacy era reads a header, it has no error of its own for those).
    pub(super) fn lenient(self) -> Option<&'a str> {
        match self {
            Single::One(s) => Some(s),
            Single::Absent | Single::Repeated | Single::Invalid => None,
        }
    }

    /// The value, or the error that names the header as `display`.
    fn value(self, display: &str) -> Result<Option<&'a str>, RpcError> {
        match self {
            Single::Absent => Ok(None),
            Single::One(s) => Ok(Some(s)),
            Single::Repeated => Err(RpcError::header_mismatch(format!(
                "repeated {display} header"
            ))),
            Single::Invalid => Err(RpcError::header_mismatch(format!(
                "{display} header has invalid characters"
            ))),
        }
    }
}

// Header names, parsed once: looking a header up by `&str` parses the name every time.
pub(super) static VERSION_HEADER: HeaderName = HeaderName::from_static("mcp-protocol-version");
pub(super) static SESSION_HEADER: HeaderName = HeaderName::from_static("mcp-session-id");
static METHOD_HEADER: HeaderName = HeaderName::from_static("mcp-method");
static NAME_HEADER: HeaderName = HeaderName::from_static("mcp-name");

impl<'a> HeaderGuard<'a> {
    /// The guard of `headers`, reading `MCP-Protocol-Version` itself (the test client's
    /// way in; the transport reads that header first, for the legacy classifier too).
    #[cfg(any(test, feature = "testing"))]
    pub(crate) fn new(headers: &'a HeaderMap) -> Self {
        Self::with_version(headers, Single::read(headers, &VERSION_HEADER))
    }

    /// The guard of `headers`, whose `MCP-Protocol-Version` the transport has read.
    pub(super) fn with_version(headers: &'a HeaderMap, version: Single<'a>) -> Self {
        HeaderGuard {
            headers,
            caller: None,
            version,
        }
    }
    /// The same guard, for a request `caller` made (authorization).
    pub(crate) fn with_caller(mut self, caller: Option<Arc<crate::auth::Principal>>) -> Self {
        self.caller = caller;
        self
    }

    /// The single value of a header, OWS-trimmed. `Err` for a repeated header or one with
    /// characters outside visible ASCII, space and tab.
    fn single(&self, name: &HeaderName, display: &str) -> Result<Option<&'a str>, RpcError> {
        Single::read(self.headers, name).value(display)
    }

    fn version(&self) -> Result<Option<&'a str>, RpcError> {
        self.version.value("MCP-Protocol-Version")
    }
}

impl TransportGuard for HeaderGuard<'_> {
    fn principal(&self) -> Option<Arc<crate::auth::Principal>> {
        self.caller.clone()
    }

    fn check_method(&self, method: &str) -> Result<(), RpcError> {
        if self.version()?.is_none() {
            return Err(RpcError::header_mismatch(
                "missing MCP-Protocol-Version header",
            ));
        }
        match self.single(&METHOD_HEADER, "Mcp-Method")? {
            None => Err(RpcError::header_mismatch("missing Mcp-Method header")),
            Some(m) if m == method => Ok(()),
            Some(m) => Err(method_mismatch(m, method)),
        }
    }

    fn check_notification(&self, method: &str) -> Result<(), RpcError> {
        match self.single(&METHOD_HEADER, "Mcp-Method")? {
            Some(m) if m != method => Err(method_mismatch(m, method)),
            _ => Ok(()),
        }
    }

    fn check_version(&self, version: &str) -> Result<(), RpcError> {
        match self.version()? {
            Some(v) if v == version => Ok(()),
            Some(v) => Err(RpcError::header_mismatch(format!(
                "MCP-Protocol-Version header {} does not match _meta protocolVersion {}",
                crate::protocol::reflect(v),
                crate::protocol::reflect(version)
            ))),
            None => Err(RpcError::header_mismatch(
                "missing MCP-Protocol-Version header",
            )),
        }
    }

    fn check_param(&self, param: &HeaderParam, value: Option<&Value>) -> Result<(), RpcError> {
        let display = format!("Mcp-Param-{}", param.name);
        let header = HeaderName::try_from(format!("mcp-param-{}", param.name.to_ascii_lowercase()))
            .map_err(|_| RpcError::header_mismatch(format!("{display} is not a header name")))?;
        match (self.single(&header, &display)?, value) {
            (None, None) => Ok(()),
            (None, Some(_)) => Err(RpcError::header_mismatch(format!(
                "missing {display} header: the tool mirrors this argument into it"
            ))),
            (Some(_), None) => Err(RpcError::header_mismatch(format!(
                "{display} header sent, but the argument it mirrors is absent or null"
            ))),
            (Some(raw), Some(v)) => headers::header_matches(raw, param.kind, v)
                .map_err(|why| RpcError::header_mismatch(format!("{display} header {why}"))),
        }
    }

    fn check_name(&self, expected: &str) -> Result<(), RpcError> {
        let Some(raw) = self.single(&NAME_HEADER, "Mcp-Name")? else {
            return Err(RpcError::header_mismatch("missing Mcp-Name header"));
        };
        let value = decode_header_value(raw)
            .ok_or_else(|| RpcError::header_mismatch("Mcp-Name header has invalid Base64"))?;
        if value == expected {
            Ok(())
        } else {
            Err(RpcError::header_mismatch(format!(
                "Mcp-Name header {} does not match the body {}",
                crate::protocol::reflect(&value),
                crate::protocol::reflect(expected)
            )))
        }
    }
}

/// `-32020`: the `Mcp-Method` header names another method than the body.
fn method_mismatch(header: &str, method: &str) -> RpcError {
    RpcError::header_mismatch(format!(
        "Mcp-Method header {} does not match the body method {}",
        crate::protocol::reflect(header),
        crate::protocol::reflect(method)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_sentinel() {
        assert_eq!(
            decode_header_value("=?base64?WsO8cmljaA==?=").unwrap(),
            "Zürich"
        );
        assert!(decode_header_value("=?base64?SGVsbG8?=").is_none());
        assert!(decode_header_value("=?base64?SGVs!!!bG8=?=").is_none());
        assert_eq!(
            decode_header_value("=?base64?SGVsbG8=").unwrap(),
            "=?base64?SGVsbG8="
        );
        assert_eq!(
            decode_header_value("=?BASE64?SGVsbG8=?=").unwrap(),
            "=?BASE64?SGVsbG8=?="
        );
        assert_eq!(decode_header_value("plain").unwrap(), "plain");
    }

    #[test]
    fn accept_header() {
        let h = |v: &str| {
            let mut m = HeaderMap::new();
            m.insert(header::ACCEPT, v.parse().unwrap());
            accepted(&m)
        };
        assert_eq!(h("application/json, text/event-stream"), (true, true));
        assert_eq!(h("text/event-stream"), (false, true));
        assert_eq!(h("*/*"), (true, true));
        assert_eq!(h("text/html"), (false, false));
        assert_eq!(h("application/json;q=0, text/event-stream"), (false, true));
        assert_eq!(accepted(&HeaderMap::new()), (true, false));
        // The most specific range decides, whatever the order.
        assert_eq!(h("text/event-stream;q=0, */*"), (true, false));
        assert_eq!(h("*/*, text/event-stream;q=0"), (true, false));
        assert_eq!(h("text/*;q=0, text/event-stream"), (false, true));
        assert_eq!(h("application/*;q=0, */*"), (false, true));
        assert_eq!(h("*/*;q=0, application/json"), (true, false));
        assert_eq!(h("*/*;q=0"), (false, false));
        // Two ranges as specific as each other: either one accepting is enough.
        assert_eq!(h("application/json;q=0, application/json"), (true, false));
    }

    #[test]
    fn mirrored_headers_are_read_once_each_and_strictly() {
        use axum::http::HeaderValue;
        let guard = |values: &[&[u8]]| {
            let mut m = HeaderMap::new();
            for v in values {
                m.append(&VERSION_HEADER, HeaderValue::from_bytes(v).unwrap());
                m.append(&METHOD_HEADER, HeaderValue::from_bytes(v).unwrap());
            }
            m
        };
        let message = |r: Result<(), RpcError>| r.map_err(|e| e.message().to_owned());
        let v = "2026-07-28";

        // Spaces and tabs around the value are not part of it.
        let m = guard(&[b" \t2026-07-28\t "]);
        let g = HeaderGuard::new(&m);
        assert_eq!(message(g.check_version(v)), Ok(()));
        assert!(message(g.check_method(v)).is_ok());

        let m = guard(&[b"2026-07-28", b"2026-07-28"]);
        let g = HeaderGuard::new(&m);
        let repeated = Err("repeated MCP-Protocol-Version header".to_owned());
        assert_eq!(message(g.check_version(v)), repeated);
        assert_eq!(message(g.check_method(v)), repeated);

        // Bytes outside ASCII (`obs-text`, which a header value may carry but this one
        // may not; control characters do not get past the HTTP parser).
        for bad in ["2026-07-28\u{e9}".as_bytes(), b"\xff"] {
            let m = guard(&[bad]);
            let g = HeaderGuard::new(&m);
            let invalid = Err("MCP-Protocol-Version header has invalid characters".to_owned());
            assert_eq!(message(g.check_version(v)), invalid);
            assert_eq!(message(g.check_method(v)), invalid);
        }

        let m = HeaderMap::new();
        let g = HeaderGuard::new(&m);
        let missing = Err("missing MCP-Protocol-Version header".to_owned());
        assert_eq!(message(g.check_version(v)), missing);
        assert_eq!(message(g.check_method(v)), missing);

        // Mcp-Method is read the same way, after the version.
        let mut m = HeaderMap::new();
        m.insert(&VERSION_HEADER, HeaderValue::from_static("2026-07-28"));
        m.append(&METHOD_HEADER, HeaderValue::from_static("tools/list"));
        assert_eq!(
            message(HeaderGuard::new(&m).check_method("tools/list")),
            Ok(())
        );
        m.append(&METHOD_HEADER, HeaderValue::from_static("tools/list"));
        assert_eq!(
            message(HeaderGuard::new(&m).check_method("tools/list")),
            Err("repeated Mcp-Method header".to_owned())
        );
    }
}
