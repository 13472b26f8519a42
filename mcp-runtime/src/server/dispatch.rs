//! One place for the request rules: envelope, `_meta`, versions, method dispatch, and the
//! order in which they are checked.

use super::completion::{KnownArguments, MAX_COMPLETIONS};
use super::context::{Context, NotificationSink, RequestState, TraceContext};
use super::prompt::PromptCall;
use super::resource::ResourceCall;
use super::result::{ToolError, ToolErrorKind};
use super::tool::ToolCall;
use super::{Server, ServerInner};
use crate::protocol::headers::HeaderParam;
use crate::protocol::{
    CallToolResult, ClientCapabilities, ErrorCode, LogLevel, RequestId, RpcError,
    SUPPORTED_VERSIONS, keys, methods, reflect,
};
use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde::Serialize;
use serde::ser::SerializeMap;
use serde_json::json;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
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
    /// A request to run.
    Call(Job),
    /// A `subscriptions/listen` stream to serve until the client leaves.
    Listen(super::listen::Listen),
}

/// The request's target (`params.name` or `params.uri`), which the transport's `Mcp-Name`
/// header must agree with.
fn named_target(
    params: &mut Map<String, Value>,
    key: &str,
    guard: &dyn TransportGuard,
) -> Result<String, RpcError> {
    let Some(Value::String(target)) = params.remove(key) else {
        return Err(RpcError::invalid_params(format!(
            "`params.{key}` must be a string"
        )));
    };
    guard.check_name(&target)?;
    Ok(target)
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
        streams: Streams,
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
            (Some(Value::String(p)), state) => {
                TraceContext::parse(p, state.and_then(Value::as_str))
            }
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

        // A notification channel only when this request can produce notifications.
        let (sink, notifications) = match streams {
            Streams::None => (NotificationSink::disabled(), None),
            Streams::Shared(tx) => (NotificationSink::new(tx), None),
            Streams::OnDemand if progress_token.is_some() || log_level.is_some() => {
                let (tx, rx) = tokio::sync::mpsc::channel(64);
                (NotificationSink::new(tx), Some(rx))
            }
            Streams::OnDemand => (NotificationSink::disabled(), None),
        };
        let parts = RequestParts {
            input: None,
            notifications,
            id,
            version,
            capabilities,
            meta,
            progress_token,
            log_level,
            trace,
            sink,
            span: span.clone(),
        };
        let inner = &self.inner;
        let catalog = inner.catalog();
        let id = &parts.id;
        match method.as_str() {
            methods::DISCOVER => Prepared::Reply(result_reply(id, &catalog.discover)),
            methods::TOOLS_LIST if !catalog.tools.is_empty() => {
                list_page(id, &params, &catalog.tool_list)
            }
            methods::TOOLS_CALL if !catalog.tools.is_empty() => {
                self.prepare_tool_call(parts, params, guard)
            }
            methods::PROMPTS_LIST if !catalog.prompts.is_empty() => {
                list_page(id, &params, &catalog.prompt_list)
            }
            methods::PROMPTS_GET if !catalog.prompts.is_empty() => {
                self.prepare_prompt(parts, params, guard)
            }
            methods::RESOURCES_LIST if catalog.has_resources() => {
                if catalog.listers.is_empty() {
                    list_page(id, &params, &catalog.resource_list)
                } else {
                    self.prepare_dynamic_list(parts, params)
                }
            }
            methods::RESOURCES_TEMPLATES_LIST if catalog.has_resources() => {
                list_page(id, &params, &catalog.template_list)
            }
            methods::RESOURCES_READ if catalog.has_resources() => {
                self.prepare_read(parts, params, guard)
            }
            methods::COMPLETE if catalog.has_completions => self.prepare_complete(parts, params),
            methods::LISTEN => self.prepare_listen(parts, params, &catalog),
            _ => {
                tracing::debug!("method not found");
                rule_error(Some(id), RpcError::method_not_found(&method))
            }
        }
    }

    fn prepare_tool_call(
        &self,
        mut parts: RequestParts,
        mut params: Map<String, Value>,
        guard: &dyn TransportGuard,
    ) -> Prepared {
        let id = parts.id.clone();
        let name = match named_target(&mut params, "name", guard) {
            Ok(n) => n,
            Err(e) => return rule_error(Some(&id), e),
        };
        let mut arguments = match params.remove("arguments") {
            None => Map::new(),
            Some(Value::Object(a)) => a,
            Some(_) => {
                return rule_error(
                    Some(&id),
                    RpcError::invalid_params("`params.arguments` must be an object"),
                );
            }
        };
        let catalog = self.inner.catalog();
        let Some(tool) = catalog.tools.get(&name) else {
            return rule_error(
                Some(&id),
                RpcError::invalid_params(format!("Unknown tool: {}", reflect(&name))),
            );
        };
        if !tool.headers.is_empty() {
            let args = Value::Object(arguments);
            for param in &tool.headers {
                let value = param.value(&args).filter(|v| !v.is_null());
                if let Err(e) = guard.check_param(param, value) {
                    return rule_error(Some(&id), e);
                }
            }
            arguments = match args {
                Value::Object(a) => a,
                _ => Map::new(),
            };
        }
        let tool = Arc::clone(tool);
        let binding = Binding {
            method: methods::TOOLS_CALL,
            target: name.clone(),
            digest: if tool.def.requirements.uses_input {
                crate::mrtr::state::digest(&Value::Object(arguments.clone()))
            } else {
                String::new()
            },
        };
        if tool.def.requirements.uses_input
            && let Err(e) = self.input_for(&mut parts, &mut params, &binding)
        {
            return rule_error(Some(&id), e);
        }
        let server = Arc::clone(&self.inner);
        let span = parts.span.clone();
        let notifications = parts.notifications.take();
        let request = parts.into_state(methods::TOOLS_CALL, Some(name), &self.inner);
        let cancel = request.cancel.clone();
        let fut = async move {
            let id = request.id.clone();
            let arguments = Value::Object(arguments);
            if let Err(msg) = tool.validator.validate(&arguments) {
                tracing::debug!(%msg, "invalid arguments");
                let r = CallToolResult::error(format!(
                    "Invalid arguments for tool `{}`: {msg}",
                    tool.def.name
                ));
                tool_result_reply(&id, &r, server.result_meta.as_deref())
            } else {
                let handler = Arc::clone(&tool.def.handler);
                let arguments = match arguments {
                    Value::Object(a) => a,
                    _ => Map::new(),
                };
                let call = ToolCall {
                    arguments,
                    request: Arc::clone(&request),
                };
                match guarded(server.request_timeout, move || handler(call)).await {
                    Ok(Ok(r)) => tool_result_reply(&id, &r, server.result_meta.as_deref()),
                    Ok(Err(ToolError(ToolErrorKind::InputRequired))) => {
                        input_required_reply(&server, &id, &request, &binding)
                    }
                    Ok(Err(ToolError(ToolErrorKind::Execution(content)))) => {
                        tracing::debug!("tool returned an error");
                        let r = CallToolResult {
                            content,
                            is_error: Some(true),
                            ..Default::default()
                        };
                        tool_result_reply(&id, &r, server.result_meta.as_deref())
                    }
                    Ok(Err(ToolError(ToolErrorKind::Protocol(e)))) | Err(e) => {
                        error_with_status(&id, &e)
                    }
                }
            }
        };
        Job::prepared(id, cancel, span, notifications, fut)
    }

    fn prepare_prompt(
        &self,
        mut parts: RequestParts,
        mut params: Map<String, Value>,
        guard: &dyn TransportGuard,
    ) -> Prepared {
        let id = parts.id.clone();
        let name = match named_target(&mut params, "name", guard) {
            Ok(n) => n,
            Err(e) => return rule_error(Some(&id), e),
        };
        let arguments = match string_map(params.remove("arguments")) {
            Ok(a) => a,
            Err(e) => {
                return rule_error(
                    Some(&id),
                    RpcError::invalid_params(format!("`params.arguments` {e}")),
                );
            }
        };
        let catalog = self.inner.catalog();
        let Some(prompt) = catalog.prompts.get(&name) else {
            return rule_error(
                Some(&id),
                RpcError::invalid_params(format!("Unknown prompt: {}", reflect(&name))),
            );
        };
        if let Some((missing, _, _)) = prompt
            .arguments
            .iter()
            .find(|(n, _, required)| *required && !arguments.contains_key(n))
        {
            return rule_error(
                Some(&id),
                RpcError::invalid_params(format!(
                    "missing required argument `{missing}` for prompt `{name}`"
                )),
            );
        }
        let handler = Arc::clone(&prompt.handler);
        let uses_input = prompt.requirements.uses_input;
        let binding = Binding {
            method: methods::PROMPTS_GET,
            target: name.clone(),
            digest: if uses_input {
                crate::mrtr::state::digest(&serde_json::to_value(&arguments).unwrap_or(Value::Null))
            } else {
                String::new()
            },
        };
        if uses_input && let Err(e) = self.input_for(&mut parts, &mut params, &binding) {
            return rule_error(Some(&id), e);
        }
        let server = Arc::clone(&self.inner);
        let span = parts.span.clone();
        let notifications = parts.notifications.take();
        let request = parts.into_state(methods::PROMPTS_GET, Some(name), &self.inner);
        let cancel = request.cancel.clone();
        let fut = async move {
            let id = request.id.clone();
            let call = PromptCall {
                arguments,
                request: Arc::clone(&request),
            };
            match guarded(server.request_timeout, move || handler(call)).await {
                Ok(Err(ToolError(ToolErrorKind::InputRequired))) => {
                    input_required_reply(&server, &id, &request, &binding)
                }
                Ok(Ok(r)) => {
                    let mut map = Map::new();
                    if let Some(d) = r.description {
                        map.insert("description".into(), Value::String(d));
                    }
                    map.insert(
                        "messages".into(),
                        serde_json::to_value(&r.messages).unwrap_or(Value::Null),
                    );
                    result_reply(&id, &server.complete_result(map))
                }
                Ok(Err(e)) => error_with_status(&id, &handler_error(e)),
                Err(e) => error_with_status(&id, &e),
            }
        };
        Job::prepared(id, cancel, span, notifications, fut)
    }

    fn prepare_read(
        &self,
        mut parts: RequestParts,
        mut params: Map<String, Value>,
        guard: &dyn TransportGuard,
    ) -> Prepared {
        let id = parts.id.clone();
        let uri = match named_target(&mut params, "uri", guard) {
            Ok(n) => n,
            Err(e) => return rule_error(Some(&id), e),
        };
        let Some((entry, variables)) = self.inner.catalog().find_resource(&uri) else {
            tracing::debug!("resource not found");
            return rule_error(Some(&id), not_found(&uri));
        };
        let binding = Binding {
            method: methods::RESOURCES_READ,
            target: uri.clone(),
            digest: String::new(),
        };
        if entry.def.requirements.uses_input
            && let Err(e) = self.input_for(&mut parts, &mut params, &binding)
        {
            return rule_error(Some(&id), e);
        }
        let server = Arc::clone(&self.inner);
        let span = parts.span.clone();
        let notifications = parts.notifications.take();
        let request = parts.into_state(methods::RESOURCES_READ, Some(uri.clone()), &self.inner);
        let cancel = request.cancel.clone();
        let fut = async move {
            let id = request.id.clone();
            let handler = Arc::clone(&entry.def.handler);
            let call = ResourceCall {
                uri,
                mime_type: entry.def.mime_type.as_deref().map(Arc::from),
                variables,
                request: Arc::clone(&request),
            };
            match guarded(server.request_timeout, move || handler(call)).await {
                Ok(Err(ToolError(ToolErrorKind::InputRequired))) => {
                    input_required_reply(&server, &id, &request, &binding)
                }
                Ok(Ok(contents)) => {
                    let hints = entry.def.cache.unwrap_or(server.settings.read_cache);
                    let mut map = Map::new();
                    map.insert(
                        "contents".into(),
                        serde_json::to_value(&contents).unwrap_or(Value::Null),
                    );
                    map.insert("ttlMs".into(), json!(hints.ttl_ms));
                    map.insert("cacheScope".into(), json!(hints.scope.as_str()));
                    result_reply(&id, &server.complete_result(map))
                }
                Ok(Err(e)) => error_with_status(&id, &handler_error(e)),
                Err(e) => error_with_status(&id, &e),
            }
        };
        Job::prepared(id, cancel, span, notifications, fut)
    }

    /// `resources/list` when templates have list functions: the static part is fixed, the
    /// rest is asked for on every request, then sorted and paged by URI.
    fn prepare_dynamic_list(
        &self,
        mut parts: RequestParts,
        params: Map<String, Value>,
    ) -> Prepared {
        let id = parts.id.clone();
        let cursor = match params.get("cursor") {
            None | Some(Value::Null) => None,
            Some(Value::String(c)) => match super::catalog::decode_cursor(c) {
                Some(after) => Some(after),
                None => return rule_error(Some(&id), RpcError::invalid_params("invalid cursor")),
            },
            Some(_) => {
                return rule_error(
                    Some(&id),
                    RpcError::invalid_params("`cursor` must be a string"),
                );
            }
        };
        let server = Arc::clone(&self.inner);
        let catalog = server.catalog();
        let span = parts.span.clone();
        let notifications = parts.notifications.take();
        let request = parts.into_state(methods::RESOURCES_LIST, None, &self.inner);
        let cancel = request.cancel.clone();
        let fut = async move {
            let id = request.id.clone();
            let listers: Vec<_> = catalog
                .listers
                .iter()
                .map(|l| {
                    let l = Arc::clone(l);
                    let cx = Context(Arc::clone(&request));
                    guarded(server.request_timeout, move || l(cx))
                })
                .collect();
            let mut entries: BTreeMap<String, Value> = catalog.static_resources.clone();
            for r in futures_util::future::join_all(listers).await {
                match r {
                    Ok(Ok(list)) => {
                        for res in list {
                            if let Ok(v) = serde_json::to_value(&res) {
                                entries.entry(res.uri.clone()).or_insert(v);
                            }
                        }
                    }
                    Ok(Err(e)) => return error_with_status(&id, &handler_error(e)),
                    Err(e) => return error_with_status(&id, &e),
                }
            }
            let start = cursor
                .as_deref()
                .map_or(std::ops::Bound::Unbounded, std::ops::Bound::Excluded);
            let mut page: Vec<(String, Value)> = entries
                .range::<str, _>((start, std::ops::Bound::Unbounded))
                .take(server.settings.page_size + 1)
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            let more = page.len() > server.settings.page_size;
            page.truncate(server.settings.page_size);
            let mut map = Map::new();
            if more && let Some((last, _)) = page.last() {
                map.insert(
                    "nextCursor".into(),
                    json!(super::catalog::encode_cursor(last)),
                );
            }
            map.insert(
                "resources".into(),
                Value::Array(page.into_iter().map(|(_, v)| v).collect()),
            );
            map.insert("ttlMs".into(), json!(catalog.resource_list.hints.ttl_ms));
            map.insert(
                "cacheScope".into(),
                json!(catalog.resource_list.hints.scope.as_str()),
            );
            result_reply(&id, &server.complete_result(map))
        };
        Job::prepared(id, cancel, span, notifications, fut)
    }

    /// `subscriptions/listen`: agrees to the subset of the filter this server can honour
    /// (list changes of kinds it has, updates of URIs that resolve now).
    fn prepare_listen(
        &self,
        parts: RequestParts,
        params: Map<String, Value>,
        catalog: &super::catalog::Catalog,
    ) -> Prepared {
        let id = parts.id;
        let asked = match super::listen::Filter::parse(params.get("notifications")) {
            Ok(f) => f,
            Err(e) => return rule_error(Some(&id), RpcError::invalid_params(e)),
        };
        let filter = super::listen::Filter {
            tools: asked.tools && !catalog.tools.is_empty(),
            prompts: asked.prompts && !catalog.prompts.is_empty(),
            resources: asked.resources && catalog.has_resources(),
            uris: asked
                .uris
                .into_iter()
                .filter(|u| catalog.find_resource(u).is_some())
                .collect(),
        };
        let Some(live) =
            super::listen::LiveGuard::acquire(&self.inner.live, self.inner.max_subscriptions)
        else {
            tracing::warn!("too many open subscriptions");
            return Prepared::Reply(error_reply(
                Some(&id),
                &RpcError::internal("Too many open subscriptions; try again later"),
                503,
            ));
        };
        let sub_meta = json!({ keys::SUBSCRIPTION_ID: id.to_value() });
        let ack = json!({
            "jsonrpc": "2.0",
            "method": "notifications/subscriptions/acknowledged",
            "params": { "notifications": filter.to_json(), "_meta": sub_meta },
        })
        .to_string();
        let mut close = Map::new();
        close.insert("_meta".into(), sub_meta);
        let close = result_reply(&id, &self.inner.complete_result(close)).body;
        tracing::debug!("subscription opened");
        Prepared::Listen(super::listen::Listen {
            id,
            ack: Some(ack),
            filter,
            changes: self.inner.bus.subscribe(),
            stop: self.inner.shutdown.child_token(),
            transport_stop: None,
            close: Some(close),
            _live: live,
        })
    }

    fn prepare_complete(&self, parts: RequestParts, params: Map<String, Value>) -> Prepared {
        let id = parts.id.clone();
        let bad = |m: &str| rule_error(Some(&id), RpcError::invalid_params(m.to_owned()));
        let Some(reference) = params.get("ref").and_then(Value::as_object) else {
            return bad("`params.ref` must be an object");
        };
        let (Some(arg_name), Some(value)) = (
            params
                .get("argument")
                .and_then(|a| a.get("name"))
                .and_then(Value::as_str),
            params
                .get("argument")
                .and_then(|a| a.get("value"))
                .and_then(Value::as_str),
        ) else {
            return bad("`params.argument` must have string `name` and `value`");
        };
        let known = match string_map(
            params
                .get("context")
                .and_then(|c| c.get("arguments"))
                .cloned(),
        ) {
            Ok(k) => k,
            Err(e) => return bad(&format!("`context.arguments` {e}")),
        };
        let catalog = self.inner.catalog();
        let completer = match reference.get("type").and_then(Value::as_str) {
            Some("ref/prompt") => {
                let name = reference
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let Some(p) = catalog.prompts.get(name) else {
                    return bad(&format!("Unknown prompt: {}", reflect(name)));
                };
                if !p.arguments.iter().any(|(n, _, _)| n == arg_name) {
                    return bad(&format!(
                        "prompt `{name}` has no argument `{}`",
                        reflect(arg_name)
                    ));
                }
                p.completers.get(arg_name).cloned()
            }
            Some("ref/resource") => {
                let uri = reference
                    .get("uri")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let Some(t) = catalog.resource_by_uri(uri) else {
                    return bad(&format!("Unknown resource template: {}", reflect(uri)));
                };
                if !t.variables.iter().any(|v| v == arg_name) {
                    return bad(&format!(
                        "template `{uri}` has no variable `{}`",
                        reflect(arg_name)
                    ));
                }
                t.def.completers.get(arg_name).cloned()
            }
            _ => return bad("`ref.type` must be \"ref/prompt\" or \"ref/resource\""),
        };
        let server = Arc::clone(&self.inner);
        let span = parts.span.clone();
        let value = value.to_owned();
        let fut = async move {
            let values = match completer {
                None => Vec::new(),
                Some(c) => match guarded(server.request_timeout, move || {
                    let f = c(value, KnownArguments(known));
                    Box::pin(async move { Ok::<_, ToolError>(f.await) }) as BoxFuture<'static, _>
                })
                .await
                {
                    Ok(Ok(v)) => v,
                    Ok(Err(e)) => return error_with_status(&id, &handler_error(e)),
                    Err(e) => return error_with_status(&id, &e),
                },
            };
            let total = values.len();
            let mut values = values;
            values.truncate(MAX_COMPLETIONS);
            let mut map = Map::new();
            map.insert(
                "completion".into(),
                json!({ "values": values, "total": total, "hasMore": total > MAX_COMPLETIONS }),
            );
            result_reply(&id, &server.complete_result(map))
        };
        Prepared::Call(Job {
            id: parts.id,
            fut: Box::pin(fut.instrument(span)),
            notifications: None,
        })
    }
}

/// A `params` member that must be a map of strings (prompt arguments, completion context).
fn string_map(v: Option<Value>) -> Result<BTreeMap<String, String>, &'static str> {
    match v {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(Value::Object(m)) => m
            .into_iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k, s)),
                _ => Err("must map names to strings"),
            })
            .collect(),
        Some(_) => Err("must be an object"),
    }
}

/// `-32602` with `data.uri`: never an empty `contents`.
fn not_found(uri: &str) -> RpcError {
    RpcError::invalid_params(format!("Resource not found: {}", reflect(uri)))
        .with_data(json!({ "uri": uri }))
}

/// A handler's error outside tools: execution errors become `-32603` with their message.
fn handler_error(e: ToolError) -> RpcError {
    match e.0 {
        ToolErrorKind::InputRequired => {
            RpcError::internal("Internal error: input asked for outside a multi-round request")
        }
        ToolErrorKind::Protocol(e) => e,
        exec @ ToolErrorKind::Execution(_) => RpcError::internal(ToolError(exec).to_string()),
    }
}

fn error_with_status(id: &RequestId, e: &RpcError) -> Reply {
    error_reply(Some(id), e, status_of(e))
}

/// The answer of a list method from its precomputed pages.
fn list_page(
    id: &RequestId,
    params: &Map<String, Value>,
    pages: &super::catalog::ListPages,
) -> Prepared {
    let cursor = match params.get("cursor") {
        None | Some(Value::Null) => None,
        Some(Value::String(c)) => Some(c.as_str()),
        Some(_) => {
            return rule_error(
                Some(id),
                RpcError::invalid_params("`cursor` must be a string"),
            );
        }
    };
    match pages.page(cursor) {
        Some(page) => Prepared::Reply(result_reply(id, &page)),
        None => rule_error(Some(id), RpcError::invalid_params("invalid cursor")),
    }
}

/// Runs a handler: catches panics (`-32603`, and the server keeps serving) and enforces
/// the request timeout (`-32603`). The inner result is the handler's own.
async fn guarded<T, F>(
    timeout: std::time::Duration,
    make: F,
) -> Result<Result<T, ToolError>, RpcError>
where
    F: FnOnce() -> BoxFuture<'static, Result<T, ToolError>>,
{
    let fut = std::panic::catch_unwind(AssertUnwindSafe(make))
        .map_err(|_| RpcError::internal("Internal error: the handler panicked"))?;
    match tokio::time::timeout(timeout, AssertUnwindSafe(fut).catch_unwind()).await {
        Err(_) => {
            tracing::warn!("request timed out");
            Err(RpcError::internal("Internal error: the request timed out"))
        }
        Ok(Err(_)) => {
            tracing::error!("handler panicked");
            Err(RpcError::internal("Internal error: the handler panicked"))
        }
        Ok(Ok(r)) => Ok(r),
    }
}

/// What was read from a request before it is dispatched.
struct RequestParts {
    input: Option<Arc<Mutex<crate::mrtr::InputState>>>,
    notifications: Option<tokio::sync::mpsc::Receiver<String>>,
    id: RequestId,
    version: String,
    capabilities: ClientCapabilities,
    meta: Map<String, Value>,
    progress_token: Option<Value>,
    log_level: Option<LogLevel>,
    trace: Option<TraceContext>,
    sink: NotificationSink,
    span: Span,
}

impl RequestParts {
    fn into_state(
        self,
        method: &'static str,
        name: Option<String>,
        server: &ServerInner,
    ) -> Arc<RequestState> {
        if let Some(n) = &name {
            self.span.record("name", reflect(n).as_str());
        }
        Arc::new(RequestState {
            client_info: self.meta.get(keys::CLIENT_INFO).cloned(),
            id: self.id,
            method,
            name,
            protocol_version: self.version,
            capabilities: self.capabilities,
            meta: self.meta,
            progress_token: self.progress_token,
            log_level: self.log_level,
            trace: self.trace,
            cancel: CancellationToken::new(),
            sink: self.sink,
            extensions: Arc::clone(&server.extensions),
            server: server.weak_self(),
            input: self.input,
            last_progress: Mutex::new(None),
        })
    }
}

/// The binding of a multi-round request: method, target and a digest of its arguments.
struct Binding {
    method: &'static str,
    target: String,
    digest: String,
}

impl Server {
    /// For a handler that may ask for input: reads `inputResponses` and verifies
    /// `requestState`. A retry with answers but no state starts again at round one; a state
    /// that fails any check is one generic `-32602`.
    fn input_for(
        &self,
        parts: &mut RequestParts,
        params: &mut Map<String, Value>,
        binding: &Binding,
    ) -> Result<(), RpcError> {
        use crate::mrtr::state::now;
        let responses = match params.remove("inputResponses") {
            None => Map::new(),
            Some(Value::Object(m)) if m.len() <= MAX_INPUT_RESPONSES => m,
            Some(Value::Object(_)) => {
                return Err(RpcError::invalid_params(format!(
                    "`inputResponses` has more than {MAX_INPUT_RESPONSES} entries"
                )));
            }
            Some(_) => {
                return Err(RpcError::invalid_params(
                    "`inputResponses` must be an object",
                ));
            }
        };
        let mut state = crate::mrtr::InputState {
            answers: BTreeMap::new(),
            steps: BTreeMap::new(),
            responses: Map::new(),
            pending: BTreeMap::new(),
            capabilities: parts.capabilities.clone(),
            round: 1,
        };
        match params.remove("requestState") {
            None => {}
            Some(Value::String(s)) => {
                let sealed = self
                    .inner
                    .keys
                    .open(&s)
                    .filter(|p| {
                        p.exp >= now()
                            && p.m == binding.method
                            && p.t == binding.target
                            && p.a == binding.digest
                            && p.s == "local"
                    })
                    .ok_or_else(|| RpcError::invalid_params("Invalid or expired requestState"))?;
                state.responses = responses
                    .into_iter()
                    .filter(|(k, _)| sealed.p.contains(k))
                    .collect();
                state.answers = sealed.ans;
                state.steps = sealed.st;
                state.round = sealed.r + 1;
            }
            Some(_) => return Err(RpcError::invalid_params("`requestState` must be a string")),
        }
        parts.input = Some(Arc::new(Mutex::new(state)));
        Ok(())
    }
}

/// Most entries accepted in `inputResponses`.
const MAX_INPUT_RESPONSES: usize = 64;

/// The `input_required` answer of a round: what to ask, and the sealed state to send back.
fn input_required_reply(
    server: &ServerInner,
    id: &RequestId,
    request: &RequestState,
    binding: &Binding,
) -> Reply {
    let Some(input) = &request.input else {
        return error_with_status(
            id,
            &RpcError::internal("Internal error: input asked for outside a multi-round request"),
        );
    };
    let st = input.lock().unwrap_or_else(|e| e.into_inner());
    if st.pending.is_empty() {
        return error_with_status(
            id,
            &RpcError::internal("Internal error: the handler ended the round without asking"),
        );
    }
    if st.round >= server.max_rounds {
        return error_with_status(
            id,
            &RpcError::internal(format!(
                "Internal error: the request did not complete within {} rounds",
                server.max_rounds
            )),
        );
    }
    let sealed = crate::mrtr::state::Sealed {
        exp: crate::mrtr::state::now() + server.state_ttl.as_secs(),
        m: binding.method.to_owned(),
        t: binding.target.clone(),
        a: binding.digest.clone(),
        s: "local".to_owned(),
        r: st.round,
        ans: st.answers.clone(),
        st: st.steps.clone(),
        p: st.pending.keys().cloned().collect(),
    };
    let state = match server.keys.seal(&sealed) {
        Ok(s) => s,
        Err(e) => {
            return error_with_status(id, &RpcError::internal(format!("Internal error: {e}")));
        }
    };
    let mut map = Map::new();
    map.insert(
        "inputRequests".into(),
        Value::Object(st.pending.clone().into_iter().collect()),
    );
    map.insert("requestState".into(), Value::String(state));
    let mut body = server.complete_result(map);
    // `complete_result` stamps "complete"; this is an interim result.
    body = body.replacen(
        "\"resultType\":\"complete\"",
        "\"resultType\":\"input_required\"",
        1,
    );
    tracing::debug!(round = st.round, "input required");
    result_reply(id, &body)
}

/// A request to run: its future produces the response.
pub(crate) struct Job {
    id: RequestId,
    fut: BoxFuture<'static, Reply>,
    notifications: Option<tokio::sync::mpsc::Receiver<String>>,
}

/// How a transport takes request-scoped notifications (progress, log messages).
pub(crate) enum Streams {
    /// It cannot stream them: they are dropped.
    None,
    /// Into one shared channel (stdio: everything goes to stdout).
    Shared(tokio::sync::mpsc::Sender<String>),
    /// Into a channel of the request's own, made only when the request asked for
    /// notifications (a `progressToken` or a log level); see [`Job::take_notifications`].
    OnDemand,
}

impl Job {
    /// A request's work as a [`Prepared::Call`]: `body` runs under `span`, and if the job is
    /// dropped before it finishes (client gone, cancelled, shutdown), `cancel` fires so the
    /// handler's `Context::cancellation()` sees it.
    fn prepared(
        id: RequestId,
        cancel: CancellationToken,
        span: tracing::Span,
        notifications: Option<tokio::sync::mpsc::Receiver<String>>,
        body: impl Future<Output = Reply> + Send + 'static,
    ) -> Prepared {
        let fut = async move {
            let cancel_on_drop = cancel.drop_guard();
            let reply = body.await;
            cancel_on_drop.disarm();
            reply
        };
        Prepared::Call(Job {
            id,
            fut: Box::pin(fut.instrument(span)),
            notifications,
        })
    }

    /// The request's own notification channel, for [`Streams::OnDemand`].
    pub(crate) fn take_notifications(&mut self) -> Option<tokio::sync::mpsc::Receiver<String>> {
        self.notifications.take()
    }

    /// The request id.
    pub(crate) fn id(&self) -> &RequestId {
        &self.id
    }

    /// Runs the request. Dropping the future cancels it.
    pub(crate) async fn run(self) -> Reply {
        self.fut.await
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
                // `server` is the serverInfo object, serialized once when the server was built.
                m.serialize_entry(keys::SERVER_INFO, server)?;
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
