use serde::Serialize;
use serde_json::{Value, json};
use std::borrow::Cow;
use std::fmt;

/// A JSON-RPC error code.
///
/// The codes `-32020..=-32099` are reserved by MCP: only the three with a defined meaning
/// (`-32020`, `-32021`, `-32022`) can be produced, and only through their constructors on
/// [`RpcError`]. Application codes must lie outside the JSON-RPC range `-32768..=-32000`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct ErrorCode(i32);

impl ErrorCode {
    /// `-32700`: the message is not valid JSON.
    pub const PARSE_ERROR: ErrorCode = ErrorCode(-32700);
    /// `-32600`: valid JSON, but not a valid JSON-RPC request.
    pub const INVALID_REQUEST: ErrorCode = ErrorCode(-32600);
    /// `-32601`: the method is unknown, removed or not advertised.
    pub const METHOD_NOT_FOUND: ErrorCode = ErrorCode(-32601);
    /// `-32602`: the params are invalid.
    pub const INVALID_PARAMS: ErrorCode = ErrorCode(-32602);
    /// `-32603`: the server failed internally.
    pub const INTERNAL_ERROR: ErrorCode = ErrorCode(-32603);
    /// `-32020`: an HTTP header disagrees with the body, is missing or is malformed.
    pub const HEADER_MISMATCH: ErrorCode = ErrorCode(-32020);
    /// `-32021`: the request needs a client capability the client did not declare.
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: ErrorCode = ErrorCode(-32021);
    /// `-32022`: the requested protocol version is not supported.
    pub const UNSUPPORTED_PROTOCOL_VERSION: ErrorCode = ErrorCode(-32022);

    /// Any code, as another server sent it (a proxy passes it on).
    #[cfg_attr(not(feature = "proxy"), allow(dead_code))]
    pub(crate) const fn from_wire(code: i32) -> ErrorCode {
        ErrorCode(code)
    }

    /// An application-defined code. Returns `None` for codes inside the range JSON-RPC
    /// reserves (`-32768..=-32000`), which applications must not use.
    pub const fn application(code: i32) -> Option<ErrorCode> {
        if code >= -32768 && code <= -32000 {
            None
        } else {
            Some(ErrorCode(code))
        }
    }

    /// `-32002`: resource not found, as the legacy revisions define it.
    pub(crate) const RESOURCE_NOT_FOUND_LEGACY: ErrorCode =
        ErrorCode(super::legacy::RESOURCE_NOT_FOUND);

    /// The numeric value.
    pub const fn get(self) -> i32 {
        self.0
    }
}

/// A JSON-RPC error object: `{code, message, data?}`.
///
/// `message` is kept to one sentence and at most 1 KiB; reflected input is truncated.
///
/// ```
/// use mcp_runtime::protocol::ErrorCode;
/// use mcp_runtime::Error;
/// use mcp_runtime::protocol::RpcError;
///
/// let e = RpcError::invalid_params("`id` must be positive").with_data(serde_json::json!({"id": -1}));
/// assert_eq!(e.code(), ErrorCode::INVALID_PARAMS);
/// assert_eq!(
///     serde_json::to_value(&e).unwrap(),
///     serde_json::json!({"code": -32602, "message": "`id` must be positive", "data": {"id": -1}})
/// );
///
/// // From a handler, an application error becomes a JSON-RPC error (not `isError`).
/// let quota = ErrorCode::application(-31001).unwrap();
/// let err = Error::protocol(RpcError::application(quota, "quota exceeded"));
/// assert!(!err.is_execution_error());
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RpcError {
    code: ErrorCode,
    message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    data: Option<Value>,
}

const MAX_MESSAGE: usize = 1024;
const MAX_REFLECTED: usize = 128;

/// Shortens text that came from the peer before it is reflected in an error message or
/// a log field: control characters escaped, at most `MAX_REFLECTED` characters. Text
/// that needs neither (printable ASCII, short: every method and tool name of a
/// well-behaved client) is borrowed as it is.
pub(crate) fn reflect(s: &str) -> Cow<'_, str> {
    if s.len() <= MAX_REFLECTED && s.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::new();
    for c in s.chars().take(MAX_REFLECTED) {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    if s.chars().count() > MAX_REFLECTED {
        out.push('…');
    }
    Cow::Owned(out)
}

impl RpcError {
    pub(crate) fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        let mut message = message.into();
        if message.len() > MAX_MESSAGE {
            let mut cut = MAX_MESSAGE;
            while !message.is_char_boundary(cut) {
                cut -= 1;
            }
            message.truncate(cut);
        }
        RpcError {
            code,
            message,
            data: None,
        }
    }

    /// Attaches `data` to the error.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// `-32700`: the message is not valid JSON.
    #[cold]
    pub fn parse_error(detail: impl fmt::Display) -> Self {
        Self::new(ErrorCode::PARSE_ERROR, format!("Parse error: {detail}"))
    }
    /// `-32600`: valid JSON, but not a valid JSON-RPC request.
    #[cold]
    pub fn invalid_request(detail: impl fmt::Display) -> Self {
        Self::new(
            ErrorCode::INVALID_REQUEST,
            format!("Invalid request: {detail}"),
        )
    }
    /// `-32601`: unknown, removed or not advertised method; `supported` lists the protocol
    /// versions the server serves (as `server/discover` does), named in the message and in
    /// `data.supported`.
    #[cold]
    pub fn method_not_found(method: &str, supported: &[&str]) -> Self {
        Self::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!(
                "Method not found: {} (this server speaks MCP {})",
                reflect(method),
                supported.join(", ")
            ),
        )
        .with_data(json!({ "supported": supported }))
    }
    /// `-32602`: invalid params.
    #[cold]
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::INVALID_PARAMS, message)
    }
    /// `-32602` with `data.uri`: nothing serves the resource at `uri` (never an empty
    /// `contents`).
    #[cold]
    pub fn resource_not_found(uri: &str) -> Self {
        Self::invalid_params(format!("Resource not found: {}", reflect(uri)))
            .with_data(json!({ "uri": uri }))
    }
    /// `-32603`: the server failed; the message never carries internal detail.
    #[cold]
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::INTERNAL_ERROR, message)
    }
    /// `-32020`: an HTTP header disagrees with the body, is missing or is malformed.
    #[cold]
    pub fn header_mismatch(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::HEADER_MISMATCH, message)
    }
    /// `-32021`: the request needs a client capability it did not declare.
    ///
    /// `required` is a ClientCapabilities-shaped object, for example `{"sampling": {}}`.
    #[cold]
    pub fn missing_capability(message: impl Into<String>, required: Value) -> Self {
        Self::new(ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY, message)
            .with_data(json!({ "requiredCapabilities": required }))
    }
    /// `-32022`: the requested protocol version is not served here; `supported` lists the
    /// ones that are.
    #[cold]
    pub fn unsupported_version(requested: &str, supported: &[&str]) -> Self {
        Self::new(
            ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
            format!(
                "Unsupported protocol version {}; this server supports {}",
                reflect(requested),
                supported.join(", ")
            ),
        )
        .with_data(json!({ "supported": supported, "requested": requested }))
    }
    /// `-32022` for a served legacy revision named in a request's `_meta`: that revision
    /// is spoken in a session opened with `initialize`, not per request.
    #[cold]
    pub(crate) fn version_needs_initialize(requested: &str, supported: &[&str]) -> Self {
        Self::new(
            ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
            format!(
                "Protocol version {} is served in a session opened with `initialize`, not \
                 per request; per-request `_meta` speaks {}",
                reflect(requested),
                super::MODERN_VERSIONS.join(", ")
            ),
        )
        .with_data(json!({ "supported": supported, "requested": requested }))
    }
    /// An application-defined error (see [`ErrorCode::application`]).
    pub fn application(code: ErrorCode, message: impl Into<String>) -> Self {
        Self::new(code, message)
    }

    /// The error code.
    pub fn code(&self) -> ErrorCode {
        self.code
    }
    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }
    /// The `data` member.
    pub fn data(&self) -> Option<&Value> {
        self.data.as_ref()
    }
}

impl fmt::Display for RpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.code.0)
    }
}

impl std::error::Error for RpcError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserved_codes_cannot_be_made_by_hand() {
        assert!(ErrorCode::application(-32050).is_none());
        assert!(ErrorCode::application(-32000).is_none());
        assert!(ErrorCode::application(-32768).is_none());
        assert_eq!(
            ErrorCode::application(-31999).map(ErrorCode::get),
            Some(-31999)
        );
        assert_eq!(ErrorCode::application(1).map(ErrorCode::get), Some(1));
    }

    #[test]
    fn unsupported_version_has_required_data() {
        let e = RpcError::unsupported_version("v999", super::super::SUPPORTED_VERSIONS);
        let v = serde_json::to_value(&e).unwrap();
        assert_eq!(v["code"], -32022);
        assert_eq!(v["data"]["requested"], "v999");
        assert_eq!(v["data"]["supported"][0], "2026-07-28");
    }

    #[test]
    fn method_not_found_names_the_versions_served() {
        let dual = RpcError::method_not_found("foo/bar", super::super::SUPPORTED_VERSIONS);
        let v = serde_json::to_value(&dual).unwrap();
        assert_eq!(v["code"], -32601);
        assert_eq!(
            v["message"],
            "Method not found: foo/bar (this server speaks MCP 2026-07-28, 2025-11-25, \
             2025-06-18, 2025-03-26)"
        );
        assert_eq!(
            v["data"],
            json!({"supported": ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"]})
        );
        let modern = RpcError::method_not_found("foo/bar", super::super::MODERN_VERSIONS);
        let v = serde_json::to_value(&modern).unwrap();
        assert_eq!(
            v["message"],
            "Method not found: foo/bar (this server speaks MCP 2026-07-28)"
        );
        assert_eq!(v["data"], json!({"supported": ["2026-07-28"]}));
    }

    #[test]
    fn long_messages_are_capped_and_reflection_is_escaped() {
        let e = RpcError::invalid_params("x".repeat(5000));
        assert_eq!(e.message().len(), 1024);
        assert_eq!(reflect("a\nb"), "a\\nb");
        assert!(reflect(&"y".repeat(300)).ends_with('…'));
    }
}
