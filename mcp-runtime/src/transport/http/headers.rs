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
    let (mut json, mut sse) = (false, false);
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
            if refused {
                continue;
            }
            let is = |t: &str| ty.eq_ignore_ascii_case(t);
            if is("*/*") {
                json = true;
                sse = true;
            } else if is("application/*") || is("application/json") {
                json = true;
            } else if is("text/*") || is("text/event-stream") {
                sse = true;
            }
        }
    }
    if !any { (true, false) } else { (json, sse) }
}

/// The request headers the 2026-07-28 HTTP binding mirrors from the body.
pub(crate) struct HeaderGuard<'a>(&'a HeaderMap, Option<Arc<crate::auth::Principal>>);

// Header names, parsed once: looking a header up by `&str` parses the name every time.
pub(super) static VERSION_HEADER: HeaderName = HeaderName::from_static("mcp-protocol-version");
pub(super) static SESSION_HEADER: HeaderName = HeaderName::from_static("mcp-session-id");
static METHOD_HEADER: HeaderName = HeaderName::from_static("mcp-method");
static NAME_HEADER: HeaderName = HeaderName::from_static("mcp-name");

impl<'a> HeaderGuard<'a> {
    pub(crate) fn new(headers: &'a HeaderMap) -> Self {
        HeaderGuard(headers, None)
    }
    /// The same guard, for a request `caller` made (authorization).
    pub(crate) fn with_caller(mut self, caller: Option<Arc<crate::auth::Principal>>) -> Self {
        self.1 = caller;
        self
    }

    /// The single value of a header, OWS-trimmed. `Err` for a repeated header or one with
    /// characters outside visible ASCII, space and tab.
    fn single(&self, name: &HeaderName, display: &str) -> Result<Option<&'a str>, RpcError> {
        let mut values = self.0.get_all(name).iter();
        match (values.next(), values.next()) {
            (None, _) => Ok(None),
            (Some(_), Some(_)) => Err(RpcError::header_mismatch(format!(
                "repeated {display} header"
            ))),
            (Some(v), None) => {
                let bytes = v.as_bytes();
                if bytes.iter().any(|&b| (b < 0x20 && b != b'\t') || b >= 0x7f) {
                    return Err(RpcError::header_mismatch(format!(
                        "{display} header has invalid characters"
                    )));
                }
                // Visible ASCII only, so this cannot fail.
                let s = std::str::from_utf8(bytes).unwrap_or_default();
                Ok(Some(s.trim_matches([' ', '\t'])))
            }
        }
    }
}

impl TransportGuard for HeaderGuard<'_> {
    fn principal(&self) -> Option<Arc<crate::auth::Principal>> {
        self.1.clone()
    }

    fn check_method(&self, method: &str) -> Result<(), RpcError> {
        if self
            .single(&VERSION_HEADER, "MCP-Protocol-Version")?
            .is_none()
        {
            return Err(RpcError::header_mismatch(
                "missing MCP-Protocol-Version header",
            ));
        }
        match self.single(&METHOD_HEADER, "Mcp-Method")? {
            None => Err(RpcError::header_mismatch("missing Mcp-Method header")),
            Some(m) if m == method => Ok(()),
            Some(m) => Err(RpcError::header_mismatch(format!(
                "Mcp-Method header {} does not match the body method {}",
                crate::protocol::reflect(m),
                crate::protocol::reflect(method)
            ))),
        }
    }

    fn check_version(&self, version: &str) -> Result<(), RpcError> {
        match self.single(&VERSION_HEADER, "MCP-Protocol-Version")? {
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
    }
}
