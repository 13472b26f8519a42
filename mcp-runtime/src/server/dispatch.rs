//! One place for the request rules: envelope, `_meta`, versions, method dispatch, and the
//! order in which they are checked.

use super::context::{NotificationSink, RequestState, TraceContext};
use super::result::ToolErrorKind;
use super::tool::ToolCall;
use super::{Server, ServerInner, ToolEntry};
use crate::protocol::{
    CallToolResult, ClientCapabilities, ErrorCode, LogLevel, RequestId, RpcError,
    SUPPORTED_VERSIONS, keys, methods, reflect,
};
use futures_util::FutureExt;
use serde::Serialize;
use serde::ser::SerializeMap;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;
use tracing::{Instrument, Span};

/// Checks a transport adds at fixed points of the request pipeline (HTTP headers). The
/// server decides *when* each runs; the transport decides *what* it checks.
pub(crate) trait TransportGuard {
    /// `MCP-Protocol-Version` and `Mcp-Method` present; `Mcp-Method` equals `method`.
    fn check_method(&self, method: &str) -> Result<(), RpcError> {
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
}

/// A transport without header rules (stdio, in-process).
pub(crate) struct NoGuard;
impl TransportGuard for NoGuard {}

/// A serialized JSON-RPC response, with the HTTP status the spec assigns to it (transports
/// without statuses ignore it).
#[derive(Debug)]
pub(crate) struct Reply {
    pub(crate) body: String,
    pub(crate) status: u16,
}

/// What the server made of one incoming message.
pub(crate) enum Prepared {
    /// The answer is known already (an error, or a precomputed result).
    Reply(Reply),
    /// A well-formed notification: never answered.
    Notification {
        method: String,
        params: Option<Value>,
    },
    /// A tool call to run.
    Call(ToolCallJob),
}

/// HTTP status for an error produced by the request rules.
fn status_of(e: &RpcError) -> u16 {
    match e.code() {
        ErrorCode::PARSE_ERROR
        | ErrorCode::INVALID_REQUEST
        | ErrorCode::HEADER_MISMATCH
        | ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
        | ErrorCode::UNSUPPORTED_PROTOCOL_VERSION => 400,
        ErrorCode::METHOD_NOT_FOUND => 404,
        _ => 200,
    }
}

fn id_json(id: Option<&RequestId>) -> String {
    match id {
        Some(id) => serde_json::to_string(id).expect("ids serialize"),
        None => String::new(),
    }
}

/// An error response; `id` is left out when it could not be read.
pub(crate) fn error_reply(id: Option<&RequestId>, err: &RpcError, status: u16) -> Reply {
    let err = serde_json::to_string(err).expect("errors serialize");
    let body = match id {
        Some(_) => format!(r#"{{"jsonrpc":"2.0","id":{},"error":{err}}}"#, id_json(id)),
        None => format!(r#"{{"jsonrpc":"2.0","error":{err}}}"#),
    };
    Reply { body, status }
}

fn rule_error(id: Option<&RequestId>, err: RpcError) -> Prepared {
    let status = status_of(&err);
    Prepared::Reply(error_reply(id, &err, status))
}

/// `-32602` about `_meta`: HTTP 400 by the spec.
fn meta_error(id: &RequestId, message: String) -> Prepared {
    Prepared::Reply(error_reply(
        Some(id),
        &RpcError::invalid_params(message),
        400,
    ))
}

fn result_reply(id: &RequestId, result: &str) -> Reply {
    Reply {
        body: format!(
            r#"{{"jsonrpc":"2.0","id":{},"result":{result}}}"#,
            id_json(Some(id))
        ),
        status: 200,
    }
}

impl Server {
    /// Applies the request rules to one parsed message, in this order:
    /// envelope (`-32600`) → `Mcp-Method` header (`-32020`) → required `_meta` (`-32602`,
    /// 400) → version header equals `_meta` (`-32020`) → version supported (`-32022`) →
    /// method known (`-32601`, 404) → `Mcp-Name` (`-32020`) → params (`-32602`) → handler.
    pub(crate) fn prepare(
        &self,
        msg: Value,
        guard: &dyn TransportGuard,
        sink: NotificationSink,
    ) -> Prepared {
        let mut obj = match msg {
            Value::Object(o) => o,
            Value::Array(_) => {
                return rule_error(
                    None,
                    RpcError::invalid_request(
                        "batch requests are not supported; send one message per request",
                    ),
                );
            }
            _ => {
                return rule_error(
                    None,
                    RpcError::invalid_request("a message must be a JSON object"),
                );
            }
        };
        let id = match obj.get("id") {
            None => None,
            Some(v) => match RequestId::from_value(v) {
                Some(id) => Some(id),
                None => {
                    return rule_error(
                        None,
                        RpcError::invalid_request("`id` must be a string or an integer"),
                    );
                }
            },
        };
        if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return rule_error(
                id.as_ref(),
                RpcError::invalid_request("`jsonrpc` must be \"2.0\""),
            );
        }
        let method = match obj.remove("method") {
            Some(Value::String(m)) => m,
            Some(_) => {
                return rule_error(
                    id.as_ref(),
                    RpcError::invalid_request("`method` must be a string"),
                );
            }
            None if obj.contains_key("result") || obj.contains_key("error") => {
                return rule_error(
                    id.as_ref(),
                    RpcError::invalid_request(
                        "this server sends no requests, so it accepts no responses",
                    ),
                );
            }
            None => {
                return rule_error(
                    id.as_ref(),
                    RpcError::invalid_request("`method` is missing"),
                );
            }
        };
        let params = obj.remove("params");
        let Some(id) = id else {
            return Prepared::Notification { method, params };
        };

        if let Err(e) = guard.check_method(&method) {
            return rule_error(Some(&id), e);
        }

        let mut params = match params {
            Some(Value::Object(p)) => p,
            Some(_) => return meta_error(&id, "`params` must be an object".into()),
            None => {
                return meta_error(
                    &id,
                    format!(
                        "`params._meta` is required, with `{}` and `{}`",
                        keys::PROTOCOL_VERSION,
                        keys::CLIENT_CAPABILITIES
                    ),
                );
            }
        };
        let mut meta = match params.remove("_meta") {
            Some(Value::Object(m)) => m,
            Some(_) => return meta_error(&id, "`params._meta` must be an object".into()),
            None => {
                return meta_error(
                    &id,
                    format!(
                        "`params._meta` is required, with `{}` and `{}`",
                        keys::PROTOCOL_VERSION,
                        keys::CLIENT_CAPABILITIES
                    ),
                );
            }
        };
        let version = match meta.get(keys::PROTOCOL_VERSION) {
            Some(Value::String(v)) => v.clone(),
            Some(_) => {
                return meta_error(
                    &id,
                    format!(
                        "`_meta` field `{}` must be a string",
                        keys::PROTOCOL_VERSION
                    ),
                );
            }
            None => {
                return meta_error(
                    &id,
                    format!("missing `_meta` field `{}`", keys::PROTOCOL_VERSION),
                );
            }
        };
        let capabilities = match meta.remove(keys::CLIENT_CAPABILITIES) {
            Some(Value::Object(c)) => ClientCapabilities::from_map(c),
            Some(_) => {
                return meta_error(
                    &id,
                    format!(
                        "`_meta` field `{}` must be an object",
                        keys::CLIENT_CAPABILITIES
                    ),
                );
            }
            None => {
                return meta_error(
                    &id,
                    format!("missing `_meta` field `{}`", keys::CLIENT_CAPABILITIES),
                );
            }
        };
        if let Err(e) = guard.check_version(&version) {
            return rule_error(Some(&id), e);
        }
        if !SUPPORTED_VERSIONS.contains(&version.as_str()) {
            return rule_error(Some(&id), RpcError::unsupported_version(&version));
        }
        let log_level = match meta.get(keys::LOG_LEVEL) {
            None => None,
            Some(Value::String(l)) => match LogLevel::parse(l) {
                Some(l) => Some(l),
                None => return meta_error(&id, format!("unknown log level {}", reflect(l))),
            },
            Some(_) => {
                return meta_error(
                    &id,
                    format!("`_meta` field `{}` must be a string", keys::LOG_LEVEL),
                );
            }
        };
        let progress_token = match meta.get(keys::PROGRESS_TOKEN) {
            None => None,
            Some(t @ Value::String(_)) => Some(t.clone()),
            Some(Value::Number(n)) if n.is_i64() || n.is_u64() => Some(Value::Number(n.clone())),
            Some(_) => {
                return meta_error(&id, "`progressToken` must be a string or an integer".into());
            }
        };

        let trace = match (meta.get(keys::TRACEPARENT), meta.get(keys::TRACESTATE)) {
            (Some(Value::String(p)), state) => TraceContext::parse(p, state.and_then(Value::as_str)),
            _ => None,
        };
        // One span per request, continuing the client's W3C trace when it sent one.
        let span = tracing::info_span!(
            "mcp.request",
            method = %reflect(&method),
            id = %id,
            name = tracing::field::Empty,
            trace_id = tracing::field::Empty,
            parent_span_id = tracing::field::Empty,
        );
        if let Some(t) = &trace {
            span.record("trace_id", t.trace_id.as_str());
            span.record("parent_span_id", t.parent_id.as_str());
        }
        let _entered = span.enter();

        let inner = &self.inner;
        let has_tools = !inner.tools.is_empty();
        match method.as_str() {
            methods::DISCOVER => Prepared::Reply(result_reply(&id, &inner.discover)),
            methods::TOOLS_LIST if has_tools => {
                let cursor = match params.get("cursor") {
                    None | Some(Value::Null) => None,
                    Some(Value::String(c)) => Some(c.as_str()),
                    Some(_) => {
                        return rule_error(
                            Some(&id),
                            RpcError::invalid_params("`cursor` must be a string"),
                        );
                    }
                };
                match inner.tool_list.page(cursor) {
                    Some(page) => Prepared::Reply(result_reply(&id, &page)),
                    None => rule_error(Some(&id), RpcError::invalid_params("invalid cursor")),
                }
            }
            methods::TOOLS_CALL if has_tools => {
                let name = match params.remove("name") {
                    Some(Value::String(n)) => n,
                    _ => {
                        return rule_error(
                            Some(&id),
                            RpcError::invalid_params("`params.name` must be a string"),
                        );
                    }
                };
                if let Err(e) = guard.check_name(&name) {
                    return rule_error(Some(&id), e);
                }
                let arguments = match params.remove("arguments") {
                    None => Map::new(),
                    Some(Value::Object(a)) => a,
                    Some(_) => {
                        return rule_error(
                            Some(&id),
                            RpcError::invalid_params("`params.arguments` must be an object"),
                        );
                    }
                };
                let Some(tool) = inner.tools.get(&name) else {
                    return rule_error(
                        Some(&id),
                        RpcError::invalid_params(format!("Unknown tool: {}", reflect(&name))),
                    );
                };
                let trace = match (meta.get(keys::TRACEPARENT), meta.get(keys::TRACESTATE)) {
                    (Some(Value::String(p)), state) => {
                        TraceContext::parse(p, state.and_then(Value::as_str))
                    }
                    _ => None,
                };
                let span = tracing::info_span!(
                    "mcp.request",
                    method = methods::TOOLS_CALL,
                    name = %name,
                    id = %id,
                    trace_id = tracing::field::Empty,
                    parent_span_id = tracing::field::Empty,
                );
                if let Some(t) = &trace {
                    span.record("trace_id", t.trace_id.as_str());
                    span.record("parent_span_id", t.parent_id.as_str());
                }
                let client_info = meta.get(keys::CLIENT_INFO).cloned();
                let request = Arc::new(RequestState {
                    id: id.clone(),
                    method: methods::TOOLS_CALL,
                    name: Some(name),
                    protocol_version: version,
                    capabilities,
                    client_info,
                    meta,
                    progress_token,
                    log_level,
                    trace,
                    cancel: CancellationToken::new(),
                    sink,
                    extensions: Arc::clone(&inner.extensions),
                    last_progress: Mutex::new(None),
                });
                Prepared::Call(ToolCallJob {
                    tool: Arc::clone(tool),
                    arguments,
                    request,
                    server: Arc::clone(inner),
                    span: span.clone(),
                })
            }
            _ => {
                tracing::debug!("method not found");
                rule_error(Some(&id), RpcError::method_not_found(&method))
            }
        }
    }
}

/// A validated `tools/call`, ready to run.
pub(crate) struct ToolCallJob {
    tool: Arc<ToolEntry>,
    arguments: Map<String, Value>,
    request: Arc<RequestState>,
    server: Arc<ServerInner>,
    span: Span,
}

impl ToolCallJob {
    /// The request id.
    pub(crate) fn id(&self) -> &RequestId {
        &self.request.id
    }

    /// Runs the tool: validates the arguments, calls the handler (catching panics and
    /// enforcing the request timeout) and serializes the response.
    pub(crate) async fn run(self) -> Reply {
        let ToolCallJob {
            tool,
            arguments,
            request,
            server,
            span,
        } = self;
        let id = request.id.clone();
        let cancel_on_drop = request.cancel.clone().drop_guard();
        let work = async {
            if let Err(msg) = tool.validator.validate(&arguments) {
                tracing::debug!(%msg, "invalid arguments");
                let r = CallToolResult::error(format!(
                    "Invalid arguments for tool `{}`: {msg}",
                    tool.def.name
                ));
                return Ok(r);
            }
            let call = ToolCall { arguments, request };
            let handler = Arc::clone(&tool.def.handler);
            let fut = match std::panic::catch_unwind(AssertUnwindSafe(move || handler(call))) {
                Ok(f) => f,
                Err(_) => return Err(RpcError::internal("Internal error: the tool panicked")),
            };
            match tokio::time::timeout(server.request_timeout, AssertUnwindSafe(fut).catch_unwind())
                .await
            {
                Err(_) => {
                    tracing::warn!("request timed out");
                    Err(RpcError::internal("Internal error: the request timed out"))
                }
                Ok(Err(_)) => {
                    tracing::error!("tool panicked");
                    Err(RpcError::internal("Internal error: the tool panicked"))
                }
                Ok(Ok(Ok(result))) => Ok(result),
                Ok(Ok(Err(e))) => match e.0 {
                    ToolErrorKind::Execution(content) => {
                        tracing::debug!("tool returned an error");
                        Ok(CallToolResult {
                            content,
                            is_error: Some(true),
                            ..Default::default()
                        })
                    }
                    ToolErrorKind::Protocol(e) => Err(e),
                },
            }
        };
        let outcome = work.instrument(span).await;
        cancel_on_drop.disarm();
        match outcome {
            Ok(result) => tool_result_reply(&id, &result, server.result_meta.as_deref()),
            Err(e) => {
                let status = status_of(&e);
                error_reply(Some(&id), &e, status)
            }
        }
    }
}

/// Serializes a tool result with `resultType` and the server's `_meta` added, without an
/// intermediate `Value`.
fn tool_result_reply(id: &RequestId, r: &CallToolResult, server_meta: Option<&RawValue>) -> Reply {
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Wire<'a> {
        result_type: &'static str,
        content: &'a [crate::protocol::Content],
        #[serde(skip_serializing_if = "Option::is_none")]
        structured_content: Option<&'a Value>,
        #[serde(skip_serializing_if = "Option::is_none")]
        is_error: Option<bool>,
        #[serde(rename = "_meta", skip_serializing_if = "MetaWire::is_empty")]
        meta: MetaWire<'a>,
    }
    struct MetaWire<'a> {
        user: Option<&'a Map<String, Value>>,
        server: Option<&'a RawValue>,
    }
    impl MetaWire<'_> {
        fn is_empty(&self) -> bool {
            self.user.is_none_or(Map::is_empty) && self.server.is_none()
        }
    }
    impl Serialize for MetaWire<'_> {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let mut m = s.serialize_map(None)?;
            for (k, v) in self.user.into_iter().flatten() {
                if k != keys::SERVER_INFO || self.server.is_none() {
                    m.serialize_entry(k, v)?;
                }
            }
            if let Some(server) = self.server {
                // `server` is the whole `{"io.modelcontextprotocol/serverInfo": {...}}`.
                let inner: Map<String, Value> =
                    serde_json::from_str(server.get()).map_err(serde::ser::Error::custom)?;
                for (k, v) in &inner {
                    m.serialize_entry(k, v)?;
                }
            }
            m.end()
        }
    }
    let wire = Wire {
        result_type: "complete",
        content: &r.content,
        structured_content: r.structured_content.as_ref(),
        is_error: r.is_error,
        meta: MetaWire {
            user: r.meta.as_ref(),
            server: server_meta,
        },
    };
    let result = serde_json::to_string(&wire).expect("tool results serialize");
    result_reply(id, &result)
}
