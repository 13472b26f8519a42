//! The first stage of every request: the JSON-RPC envelope and the request `_meta`, read
//! once into [`Parts`] before the request is routed. The rules and their order live here:
//! envelope (`-32600`) → `Mcp-Method` header (`-32020`) → required `_meta` (`-32602`) →
//! version header equals `_meta` (`-32020`) → version supported (`-32022`) → optional
//! `_meta` fields (`-32602`). Routing (`-32601`) and the method's own params follow.

use super::ServerInner;
use super::context::{NotificationSink, Request};
use super::reply::{ErrorClass, Rejection};
use super::session::Session;
use super::trace::TraceContext;
use crate::protocol::headers::HeaderParam;
use crate::protocol::legacy::LegacyVersion;
use crate::protocol::{
    ClientCapabilities, LogLevel, MODERN_VERSIONS, RequestId, RpcError, keys, methods as m, reflect,
};
use serde_json::{Map, Value};
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tracing::Span;

/// Checks a transport adds at fixed points of the request rules (HTTP headers). The core
/// decides *when* each runs; the transport decides *what* it checks.
pub(crate) trait TransportGuard {
    /// The caller the transport authenticated (HTTP with [`Auth`](crate::auth::Auth)).
    fn principal(&self) -> Option<Arc<crate::auth::Principal>> {
        None
    }
    /// `MCP-Protocol-Version` and `Mcp-Method` present; `Mcp-Method` equals `method`.
    fn check_method(&self, method: &str) -> Result<(), RpcError> {
        let _ = method;
        Ok(())
    }
    /// A notification's `Mcp-Method`, when sent, equals `method` (not required there: the
    /// requirements' Ambiguity 7).
    fn check_notification(&self, method: &str) -> Result<(), RpcError> {
        let _ = method;
        Ok(())
    }
    /// `MCP-Protocol-Version` equals the `_meta` protocol version.
    fn check_version(&self, version: &str) -> Result<(), RpcError> {
        let _ = version;
        Ok(())
    }
    /// `Mcp-Name` equals `expected` (the tool or prompt name, or the resource URI).
    fn check_name(&self, expected: &str) -> Result<(), RpcError> {
        let _ = expected;
        Ok(())
    }
    /// The `Mcp-Param-{name}` header of an `x-mcp-header` parameter agrees with `value`
    /// (the argument, when the call has one).
    fn check_param(&self, param: &HeaderParam, value: Option<&Value>) -> Result<(), RpcError> {
        let _ = (param, value);
        Ok(())
    }
}

/// A transport without header rules (stdio, in-process).
pub(crate) struct NoGuard;
impl TransportGuard for NoGuard {}

/// How a transport takes request-scoped notifications (progress, log messages).
#[derive(Clone)]
pub(crate) enum Streams {
    /// It cannot stream them: they are dropped.
    None,
    /// Into one shared channel (stdio: everything goes to stdout).
    #[cfg_attr(not(feature = "stdio"), allow(dead_code))]
    Shared(mpsc::Sender<String>),
    /// Into a channel of the request's own, made only when the request asked for
    /// notifications (a `progressToken` or a log level).
    OnDemand,
    /// Into a channel of the request's own, always (legacy requests: log messages and
    /// server→client requests may come any time).
    Always,
}

/// A message, as its envelope says.
#[derive(Debug, PartialEq)]
pub(crate) enum Message {
    /// A request: it gets an answer.
    Request {
        id: RequestId,
        method: String,
        params: Option<Value>,
    },
    /// A notification: never answered.
    Notification {
        method: String,
        params: Option<Value>,
    },
}

/// Reads the JSON-RPC envelope of one message. The error carries the id when it could be
/// read.
pub(crate) fn read_envelope(msg: Value) -> Result<Message, (Option<RequestId>, Rejection)> {
    let obj = match msg {
        Value::Object(o) => o,
        Value::Array(_) => {
            return Err((
                None,
                Rejection::malformed(
                    "batch requests are not supported; send one message per request",
                ),
            ));
        }
        _ => {
            return Err((
                None,
                Rejection::malformed("a message must be a JSON object"),
            ));
        }
    };
    // One pass over the members (removing them one by one searched the map each time).
    let (mut id, mut jsonrpc, mut method, mut params, mut answer) = (None, None, None, None, false);
    for (key, value) in obj {
        match key.as_str() {
            "id" => id = Some(value),
            "jsonrpc" => jsonrpc = Some(value),
            "method" => method = Some(value),
            "params" => params = Some(value),
            "result" | "error" => answer = true,
            _ => {}
        }
    }
    let id = match id {
        None => None,
        Some(v) => match RequestId::from_value(&v) {
            Some(id) => Some(id),
            None => {
                return Err((
                    None,
                    Rejection::malformed("`id` must be a string or an integer"),
                ));
            }
        },
    };
    let fail = |id: Option<RequestId>, why: &str| Err((id, Rejection::malformed(why)));
    // A response (well-formed or not) is no request: its id names one of the client's own
    // requests, so the error carries none (a client would settle that request with it).
    if answer && method.is_none() {
        return fail(
            None,
            "this server sends no requests, so it accepts no responses",
        );
    }
    if jsonrpc.as_ref().and_then(Value::as_str) != Some("2.0") {
        return fail(id, "`jsonrpc` must be \"2.0\"");
    }
    let method = match method {
        Some(Value::String(m)) => m,
        Some(_) => return fail(id, "`method` must be a string"),
        None => return fail(id, "`method` is missing"),
    };
    if answer {
        return fail(id, "a message has `method` or `result`/`error`, not both");
    }
    Ok(match id {
        Some(id) => Message::Request { id, method, params },
        None => Message::Notification { method, params },
    })
}

/// The request `_meta`, read and checked.
pub(crate) struct RequestMeta {
    pub(crate) version: String,
    pub(crate) capabilities: ClientCapabilities,
    pub(crate) log_level: Option<LogLevel>,
    pub(crate) progress_token: Option<Value>,
    pub(crate) trace: Option<TraceContext>,
    /// The rest of `_meta` (everything but the capabilities), as sent.
    pub(crate) rest: Map<String, Value>,
}

/// What was read from a request before it is routed.
pub(crate) struct Parts {
    pub(crate) id: RequestId,
    pub(crate) method: String,
    pub(crate) meta: RequestMeta,
    /// One span per request, continuing the client's W3C trace when it sent one.
    pub(crate) span: Span,
    pub(crate) sink: NotificationSink,
    /// The request's own notification channel ([`Streams::OnDemand`]).
    pub(crate) notifications: Option<mpsc::Receiver<String>>,
    /// The legacy session the request belongs to (none in the modern era).
    pub(crate) session: Option<Arc<Session>>,
    /// Fires when the request is over (answered, cancelled or dropped).
    pub(crate) cancel: CancellationToken,
    /// Who is calling, when the transport authenticated the request.
    pub(crate) principal: Option<Arc<crate::auth::Principal>>,
}

/// Which era a request is served in, and so the shape of its result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Era {
    /// 2026-07-28: stateless, `_meta` per request.
    Modern,
    /// A revision negotiated by `initialize`.
    Legacy(LegacyVersion),
}

fn required_meta() -> String {
    format!(
        "`params._meta` is required, with `{}` and `{}`",
        keys::PROTOCOL_VERSION,
        keys::CLIENT_CAPABILITIES
    )
}

/// Reads and checks the request `_meta` out of `params`.
fn read_meta(
    params: &mut Map<String, Value>,
    guard: &dyn TransportGuard,
    versions: &'static [&'static str],
) -> Result<RequestMeta, Rejection> {
    let mut meta = match params.remove("_meta") {
        Some(Value::Object(m)) => m,
        Some(_) => return Err(Rejection::meta("`params._meta` must be an object".into())),
        None => return Err(Rejection::meta(required_meta())),
    };
    let field = |name: &str, what: &str| format!("`_meta` field `{name}` must be {what}");
    let version = match meta.get(keys::PROTOCOL_VERSION) {
        Some(Value::String(v)) => v.clone(),
        Some(_) => return Err(Rejection::meta(field(keys::PROTOCOL_VERSION, "a string"))),
        None => {
            return Err(Rejection::meta(format!(
                "missing `_meta` field `{}`",
                keys::PROTOCOL_VERSION
            )));
        }
    };
    let capabilities = match meta.remove(keys::CLIENT_CAPABILITIES) {
        Some(Value::Object(c)) => ClientCapabilities::from_map(c),
        Some(_) => {
            return Err(Rejection::meta(field(
                keys::CLIENT_CAPABILITIES,
                "an object",
            )));
        }
        None => {
            return Err(Rejection::meta(format!(
                "missing `_meta` field `{}`",
                keys::CLIENT_CAPABILITIES
            )));
        }
    };
    guard.check_version(&version).map_err(Rejection::header)?;
    // Per-request `_meta` is the modern era; a legacy revision is spoken after
    // `initialize`, so it is not served this way.
    if !MODERN_VERSIONS.contains(&version.as_str()) {
        let error = match versions.contains(&version.as_str()) {
            true => RpcError::version_needs_initialize(&version, versions),
            false => RpcError::unsupported_version(&version, versions),
        };
        return Err(Rejection::new(ErrorClass::Version, error));
    }
    let (log_level, progress_token, trace) = read_optional(&meta)?;
    Ok(RequestMeta {
        version,
        capabilities,
        log_level,
        progress_token,
        trace,
        rest: meta,
    })
}

/// The optional `_meta` fields both eras read: log level, progress token, trace context.
#[allow(clippy::type_complexity)]
fn read_optional(
    meta: &Map<String, Value>,
) -> Result<(Option<LogLevel>, Option<Value>, Option<TraceContext>), Rejection> {
    let field = |name: &str, what: &str| format!("`_meta` field `{name}` must be {what}");
    let log_level = match meta.get(keys::LOG_LEVEL) {
        None => None,
        Some(Value::String(l)) => match LogLevel::parse(l) {
            Some(l) => Some(l),
            None => return Err(Rejection::meta(format!("unknown log level {}", reflect(l)))),
        },
        Some(_) => return Err(Rejection::meta(field(keys::LOG_LEVEL, "a string"))),
    };
    let progress_token = match meta.get(keys::PROGRESS_TOKEN) {
        None => None,
        Some(t @ Value::String(_)) => Some(t.clone()),
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => Some(Value::Number(n.clone())),
        Some(_) => {
            return Err(Rejection::meta(
                "`progressToken` must be a string or an integer".into(),
            ));
        }
    };
    let trace = match (meta.get(keys::TRACEPARENT), meta.get(keys::TRACESTATE)) {
        (Some(Value::String(p)), state) => TraceContext::parse(p, state.and_then(Value::as_str)),
        _ => None,
    };
    Ok((log_level, progress_token, trace))
}

/// What a legacy `initialize` gets here, in the modern era's path. Where the legacy era
/// is not served: `-32022` naming the versions that are (legacy clients cannot fall
/// forward; this may be all they can show). Where it is, the request came this way only
/// because a transport marked it 2026-07-28 (HTTP's `MCP-Protocol-Version` header), which
/// has no `initialize`: `-32601` (so HTTP 404, the status that code has) saying how a
/// session is opened instead.
fn initialize_refused(params: Option<&Value>, versions: &'static [&'static str]) -> Rejection {
    let requested = params
        .and_then(|p| p.get("protocolVersion"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    if versions.iter().any(|v| !MODERN_VERSIONS.contains(v)) {
        let message = format!(
            "Method not found: initialize is no method of MCP {modern}, which this request was sent as (its MCP-Protocol-Version header); a session of {legacy} opens with an initialize sent without that header",
            modern = MODERN_VERSIONS.join(", "),
            legacy = versions
                .iter()
                .filter(|v| !MODERN_VERSIONS.contains(v))
                .copied()
                .collect::<Vec<_>>()
                .join(", "),
        );
        return Rejection::new(
            ErrorClass::UnknownMethod,
            RpcError::new(crate::protocol::ErrorCode::METHOD_NOT_FOUND, message)
                .with_data(serde_json::json!({ "supported": versions, "requested": requested })),
        );
    }
    Rejection::new(
        ErrorClass::Version,
        RpcError::unsupported_version(requested, versions),
    )
}

/// Whether `params` is an `initialize` of the legacy era: no per-request `_meta` version.
pub(crate) fn is_legacy_initialize(method: &str, params: Option<&Value>) -> bool {
    method == "initialize"
        && params
            .and_then(|p| p.get("_meta"))
            .and_then(|m| m.get(keys::PROTOCOL_VERSION))
            .is_none()
}

impl Parts {
    /// The key state is bound to for this caller (issuer and subject), if authenticated.
    pub(crate) fn caller_key(&self) -> Option<String> {
        self.principal.as_deref().map(crate::auth::Principal::key)
    }

    /// Applies the request rules that precede routing (see the module docs). Returns the
    /// parts and the method's own params (`_meta` taken out).
    pub(crate) fn read(
        id: RequestId,
        method: String,
        params: Option<Value>,
        guard: &dyn TransportGuard,
        streams: Streams,
        versions: &'static [&'static str],
    ) -> Result<(Parts, Map<String, Value>), (RequestId, Rejection)> {
        if is_legacy_initialize(&method, params.as_ref()) {
            return Err((id, initialize_refused(params.as_ref(), versions)));
        }
        if let Err(e) = guard.check_method(&method) {
            return Err((id, Rejection::header(e)));
        }
        let mut params = match params {
            Some(Value::Object(p)) => p,
            Some(_) => return Err((id, Rejection::meta("`params` must be an object".into()))),
            None => return Err((id, Rejection::meta(required_meta()))),
        };
        let meta = match read_meta(&mut params, guard, versions) {
            Ok(m) => m,
            Err(e) => return Err((id, e)),
        };
        let principal = guard.principal();
        Ok(Self::assemble(
            id, method, meta, params, streams, None, principal,
        ))
    }

    /// The parts of a request in a legacy session: version and capabilities are the
    /// session's, `_meta` is optional (a progress token, a trace context), and the
    /// request always gets a stream (server→client requests and log messages go there).
    /// `caller`: who sent this request (its own token's scopes count, not those the
    /// session was opened with); the session's owner when the transport has none.
    pub(crate) fn legacy(
        id: RequestId,
        method: String,
        params: Option<Value>,
        session: &Arc<Session>,
        streams: Streams,
        caller: Option<Arc<crate::auth::Principal>>,
    ) -> Result<(Parts, Map<String, Value>), (RequestId, Rejection)> {
        let mut params = match params {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(p)) => p,
            Some(_) => {
                return Err((id, Rejection::params("`params` must be an object")));
            }
        };
        let meta = match params.remove("_meta") {
            None => Map::new(),
            Some(Value::Object(m)) => m,
            Some(_) => return Err((id, Rejection::params("`params._meta` must be an object"))),
        };
        let (_, progress_token, trace) = match read_optional(&meta) {
            Ok(o) => o,
            Err(e) => return Err((id, e)),
        };
        let meta = RequestMeta {
            version: session.version.as_str().to_owned(),
            capabilities: session.capabilities.clone(),
            log_level: Some(session.log_level()),
            progress_token,
            trace,
            rest: meta,
        };
        let streams = match streams {
            Streams::OnDemand => Streams::Always,
            other => other,
        };
        Ok(Self::assemble(
            id,
            method,
            meta,
            params,
            streams,
            Some(Arc::clone(session)),
            caller.or_else(|| session.owner()),
        ))
    }

    fn assemble(
        id: RequestId,
        method: String,
        meta: RequestMeta,
        params: Map<String, Value>,
        streams: Streams,
        session: Option<Arc<Session>>,
        principal: Option<Arc<crate::auth::Principal>>,
    ) -> (Parts, Map<String, Value>) {
        // The target is read here, where the span is made, rather than recorded once the
        // method has checked it: recording later costs the formatting subscriber a second
        // pass over the span's fields. It is only a log field; the method still checks it.
        let target = || {
            let key = match method.as_str() {
                m::TOOLS_CALL | m::PROMPTS_GET => "name",
                m::RESOURCES_READ => "uri",
                _ => return None,
            };
            params.get(key).and_then(Value::as_str).map(reflect)
        };
        let span = tracing::info_span!(
            "mcp.request",
            method = %LoggedMethod(&method),
            id = %id,
            name = target().as_deref(),
            subject = tracing::field::Empty,
            trace_id = tracing::field::Empty,
            parent_span_id = tracing::field::Empty,
        );
        if let Some(p) = &principal {
            span.record("subject", &*reflect(p.subject()));
        }
        if let Some(t) = &meta.trace {
            span.record("trace_id", t.trace_id.as_str());
            span.record("parent_span_id", t.parent_id.as_str());
        }
        // A notification channel only when this request can produce notifications; it
        // closes when the request is over (its cancellation fires then).
        let cancel = CancellationToken::new();
        let over = || cancel.clone();
        let (sink, notifications) = match streams {
            Streams::None => (NotificationSink::disabled(), None),
            Streams::Shared(tx) => (NotificationSink::new(tx, over()), None),
            Streams::OnDemand if meta.progress_token.is_some() || meta.log_level.is_some() => {
                let (tx, rx) = mpsc::channel(64);
                (NotificationSink::new(tx, over()), Some(rx))
            }
            Streams::OnDemand => (NotificationSink::disabled(), None),
            Streams::Always => {
                let (tx, rx) = mpsc::channel(64);
                (NotificationSink::new(tx, over()), Some(rx))
            }
        };
        let parts = Parts {
            id,
            method,
            meta,
            span,
            sink,
            notifications,
            session,
            cancel,
            principal,
        };
        (parts, params)
    }

    /// How the result of this request is written: in the 2026-07-28 shape, or in the
    /// revision its legacy session negotiated.
    pub(crate) fn era(&self) -> Era {
        match &self.session {
            None => Era::Modern,
            Some(s) => Era::Legacy(s.version),
        }
    }

    /// The request's target (`params.name` or `params.uri`), which the transport's
    /// `Mcp-Name` header must agree with.
    pub(crate) fn target(
        params: &mut Map<String, Value>,
        key: &str,
        guard: &dyn TransportGuard,
    ) -> Result<String, Rejection> {
        let Some(Value::String(target)) = params.remove(key) else {
            return Err(Rejection::params(format!(
                "`params.{key}` must be a string"
            )));
        };
        guard.check_name(&target).map_err(Rejection::header)?;
        Ok(target)
    }

    /// The state handlers see, for `method` on `target`.
    pub(crate) fn into_request(
        self,
        server: &ServerInner,
        method: &'static str,
        target: Option<String>,
        mime_type: Option<Arc<str>>,
        mounts: Option<Arc<[String]>>,
        input: Option<crate::Input>,
    ) -> (Arc<Request>, Span, Option<mpsc::Receiver<String>>) {
        let meta = self.meta;
        let request = Arc::new(Request {
            client_info: meta.rest.get(keys::CLIENT_INFO).cloned(),
            id: self.id,
            method,
            target,
            mime_type,
            mounts,
            protocol_version: meta.version,
            capabilities: meta.capabilities,
            meta: meta.rest,
            progress_token: meta.progress_token,
            log_level: meta.log_level,
            trace: meta.trace,
            cancel: self.cancel,
            sink: self.sink,
            extensions: Arc::clone(&server.extensions),
            server: server.weak_self(),
            input,
            last_progress: Mutex::new(None),
            layered: Mutex::new(None),
            task: None,
            principal: self.principal,
        });
        (request, self.span, self.notifications)
    }
}

/// A request's method as its span shows it: a method name as it is (`tools/call`), and
/// anything else a client sent quoted and escaped (`reflect`), so that its spaces, `=` or
/// `"` cannot forge fields of the line.
struct LoggedMethod<'a>(&'a str);

impl std::fmt::Display for LoggedMethod<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let plain = !self.0.is_empty()
            && self.0.len() <= 64
            && self
                .0
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'_' | b'-' | b'.'));
        match plain {
            true => f.write_str(self.0),
            false => write!(f, "{:?}", reflect(self.0)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A method name is logged as it is; anything else quoted, so that a client cannot
    /// forge fields of the request's line with spaces and `=`.
    #[test]
    fn methods_are_logged_so_they_forge_no_fields() {
        assert_eq!(LoggedMethod("tools/call").to_string(), "tools/call");
        assert_eq!(
            LoggedMethod("x subject=alice").to_string(),
            "\"x subject=alice\""
        );
        assert_eq!(LoggedMethod("a\nb").to_string(), "\"a\\\\nb\"");
        assert_eq!(LoggedMethod("").to_string(), "\"\"");
    }
    use serde_json::json;

    fn meta() -> Value {
        json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"sampling": {}},
            "progressToken": 5,
            "traceparent": "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01",
        })
    }

    fn read(params: Value) -> Result<(Parts, Map<String, Value>), (RequestId, Rejection)> {
        let id = RequestId::from_value(&json!(1)).unwrap();
        Parts::read(
            id,
            "tools/list".into(),
            Some(params),
            &NoGuard,
            Streams::OnDemand,
            crate::protocol::SUPPORTED_VERSIONS,
        )
    }

    #[test]
    fn envelopes() {
        assert!(matches!(
            read_envelope(json!({"jsonrpc": "2.0", "id": 1, "method": "m"})),
            Ok(Message::Request { .. })
        ));
        assert!(matches!(
            read_envelope(json!({"jsonrpc": "2.0", "method": "m"})),
            Ok(Message::Notification { .. })
        ));
        for (bad, has_id) in [
            (json!([]), false),
            (json!("x"), false),
            (json!({"jsonrpc": "2.0", "id": 1.5, "method": "m"}), false),
            (json!({"jsonrpc": "1.0", "id": 1, "method": "m"}), true),
            (json!({"jsonrpc": "2.0", "id": 1, "method": 7}), true),
            // A response's id is the client's own request's: the error names none.
            (json!({"jsonrpc": "2.0", "id": 1, "result": {}}), false),
            (json!({"jsonrpc": "1.0", "id": 1, "error": {}}), false),
            (
                json!({"jsonrpc": "2.0", "id": 1, "method": "m", "result": {}}),
                true,
            ),
            (json!({"jsonrpc": "2.0", "id": 1}), true),
        ] {
            let (id, rejection) = read_envelope(bad.clone()).unwrap_err();
            assert_eq!(id.is_some(), has_id, "{bad}");
            assert_eq!(rejection.class, ErrorClass::Malformed, "{bad}");
        }
    }

    #[test]
    fn a_served_legacy_version_per_request_is_told_to_use_initialize() {
        let mut m = meta();
        m["io.modelcontextprotocol/protocolVersion"] = json!("2025-11-25");
        let (_, r) = read(json!({"_meta": m})).err().unwrap();
        assert_eq!(r.class, ErrorClass::Version);
        assert_eq!(r.error.code().get(), -32022);
        assert!(
            r.error.message().contains("`initialize`"),
            "{}",
            r.error.message()
        );
        assert!(
            !r.error.message().contains("Unsupported"),
            "{}",
            r.error.message()
        );
        m["io.modelcontextprotocol/protocolVersion"] = json!("2024-01-01");
        let (_, r) = read(json!({"_meta": m})).err().unwrap();
        assert!(
            r.error
                .message()
                .starts_with("Unsupported protocol version 2024-01-01")
        );
    }

    #[test]
    fn meta_is_read_once() {
        let (parts, params) = read(json!({"cursor": "c", "_meta": meta()})).unwrap();
        assert_eq!(params, *json!({"cursor": "c"}).as_object().unwrap());
        assert!(parts.meta.capabilities.has("sampling"));
        assert_eq!(parts.meta.progress_token, Some(json!(5)));
        assert_eq!(parts.meta.trace.unwrap().parent_id, "00f067aa0ba902b7");
        assert!(
            parts.notifications.is_some(),
            "a progress token asks for a stream"
        );
        assert!(!parts.meta.rest.contains_key(keys::CLIENT_CAPABILITIES));
    }

    #[test]
    fn meta_errors_are_classified() {
        let class = |params: Value| {
            read(params)
                .err()
                .map(|(_, r)| (r.class, r.error.code().get()))
        };
        assert_eq!(class(json!({})), Some((ErrorClass::Meta, -32602)));
        let mut m = meta();
        m["io.modelcontextprotocol/protocolVersion"] = json!("1900-01-01");
        assert_eq!(
            class(json!({"_meta": m})),
            Some((ErrorClass::Version, -32022))
        );
        let mut m = meta();
        m["io.modelcontextprotocol/logLevel"] = json!("loud");
        assert_eq!(class(json!({"_meta": m})), Some((ErrorClass::Meta, -32602)));
        let mut m = meta();
        m["progressToken"] = json!(1.5);
        assert_eq!(class(json!({"_meta": m})), Some((ErrorClass::Meta, -32602)));
    }
}
