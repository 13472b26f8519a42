//! The legacy era's front to the core (2025-11-25, 2025-06-18, 2025-03-26): `initialize`
//! makes a [`Session`]; each later message of the session reads its version and
//! capabilities from it, goes through the same method families and pipeline as a modern
//! request, and is answered in the negotiated revision's shape. The methods only the
//! legacy revisions have (`ping`, `logging/setLevel`, `resources/subscribe`) are served
//! here; the ones only 2026-07-28 has (`server/discover`, `subscriptions/listen`, the
//! tasks extension) are not.

use super::methods::listen::MAX_RESOURCE_SUBSCRIPTIONS;
use super::parts::{Message, Parts, Streams, is_legacy_initialize, read_envelope};
use super::reply::{ErrorClass, Rejection, Reply};
use super::route::Prepared;
use super::session::Session;
use super::{Server, methods};
use crate::protocol::envelope::ResultType;
use crate::protocol::legacy::{LegacyVersion, Shape};
use crate::protocol::{LogLevel, RpcError, methods as m, reflect};
use serde::Serialize;
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// The body of the `initialize` result.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Initialized<'a> {
    protocol_version: &'static str,
    capabilities: Map<String, Value>,
    server_info: &'a super::ServerInfo,
    #[serde(skip_serializing_if = "Option::is_none")]
    instructions: Option<&'a str>,
}

impl Server {
    /// Whether `msg` opens a legacy session: an `initialize` without per-request `_meta`,
    /// on a server that serves the legacy era.
    pub(crate) fn opens_session(&self, msg: &Value) -> bool {
        self.inner.legacy.enabled
            && msg.get("method").and_then(Value::as_str) == Some("initialize")
            && is_legacy_initialize("initialize", msg.get("params"))
    }

    /// `initialize`: negotiates the revision (the one asked for when it is served, else
    /// the newest) and makes the session named `session_id`. The reply is the
    /// `initialize` result, or an error (then there is no session).
    pub(crate) fn initialize(
        &self,
        msg: Value,
        session_id: String,
    ) -> (Option<Arc<Session>>, Reply) {
        let (id, params) = match read_envelope(msg) {
            Ok(Message::Request { id, params, .. }) => (id, params),
            Ok(Message::Notification { .. }) => {
                return (
                    None,
                    Reply::rejection(None, Rejection::malformed("`initialize` needs an `id`")),
                );
            }
            Err((id, r)) => return (None, Reply::rejection(id.as_ref(), r)),
        };
        let params = match params {
            Some(Value::Object(p)) => p,
            _ => Map::new(),
        };
        let Some(requested) = params.get("protocolVersion").and_then(Value::as_str) else {
            let r = Rejection::params("`initialize` needs `params.protocolVersion` (a string)");
            return (None, Reply::rejection(Some(&id), r));
        };
        let version = LegacyVersion::negotiate(requested);
        let session = Arc::new(Session::new(session_id, version, &params));
        let inner = &self.inner;
        let catalog = inner.catalog();
        let mut capabilities = Map::new();
        if catalog.has_tools() {
            capabilities.insert("tools".into(), json!({ "listChanged": true }));
        }
        if catalog.has_prompts() {
            capabilities.insert("prompts".into(), json!({ "listChanged": true }));
        }
        if catalog.has_resources() {
            capabilities.insert(
                "resources".into(),
                json!({ "subscribe": true, "listChanged": true }),
            );
        }
        if catalog.has_completions {
            capabilities.insert("completions".into(), json!({}));
        }
        // `logging/setLevel` is served whatever the tools do.
        capabilities.insert("logging".into(), json!({}));
        // Extensions: the declared ones, and MCP Apps when used (tasks are a 2026-07-28
        // extension).
        let extensions =
            super::catalog::extensions(&inner.settings.extensions, false, catalog.uses_apps);
        if !extensions.is_empty() {
            capabilities.insert("extensions".into(), Value::Object(extensions));
        }
        let body = Initialized {
            protocol_version: version.as_str(),
            capabilities,
            server_info: &inner.info,
            instructions: inner.settings.instructions.as_deref(),
        };
        let envelope = inner.envelope(ResultType::Complete, body, None, None);
        let reply = Reply::result(&id, envelope.legacy(version, Shape::Initialize));
        (Some(session), reply)
    }

    /// Applies the rules to one message of a legacy session and routes it. A response of
    /// the client (to a server→client request) goes to the request waiting for it.
    /// `caller`: who sent it, as the transport authenticated them (for its scopes).
    pub(crate) fn prepare_legacy(
        &self,
        msg: Value,
        session: &Arc<Session>,
        streams: Streams,
        caller: Option<&Arc<crate::auth::Principal>>,
    ) -> Prepared {
        session.touch();
        let is_response = msg.get("method").is_none()
            && (msg.get("result").is_some() || msg.get("error").is_some());
        if is_response {
            if let Value::Object(o) = &msg {
                session.resolve(o);
            }
            return Prepared::Answer;
        }
        // Refused before routing (its envelope, or its params or `_meta`): counted as the
        // modern route counts such refusals, under the method when it is one of MCP.
        #[cfg(feature = "metrics")]
        let label = super::metrics::label_of(&msg);
        let refused = |reply: Reply| {
            // Counted with the code the client gets.
            let reply = reply.into_legacy();
            #[cfg(feature = "metrics")]
            super::metrics::rejected(label, &reply);
            Prepared::Reply(reply)
        };
        match read_envelope(msg) {
            Ok(Message::Notification { method, params }) => {
                Prepared::Notification { method, params }
            }
            Ok(Message::Request { id, method, params }) => {
                match Parts::legacy(id, method, params, session, streams, caller.cloned()) {
                    Ok((parts, params)) => {
                        let _entered = parts.span.clone().entered();
                        #[cfg(feature = "metrics")]
                        let observed = super::metrics::begin(&parts.method, &params, &self.inner);
                        // In the revision's codes before it is measured: the metrics
                        // count the code the client gets.
                        let prepared = match self.route_legacy(parts, params) {
                            Prepared::Reply(r) => Prepared::Reply(r.into_legacy()),
                            Prepared::Call(job) => {
                                Prepared::Call(job.map_reply(Reply::into_legacy))
                            }
                            other => other,
                        };
                        #[cfg(feature = "metrics")]
                        let prepared = self.observed(observed, prepared);
                        prepared
                    }
                    Err((id, r)) => refused(Reply::rejection(Some(&id), r)),
                }
            }
            Err((id, r)) => refused(Reply::rejection(id.as_ref(), r)),
        }
    }

    /// Runs a JSON-RPC batch of a 2025-03-26 session: every message, concurrently; the
    /// answers as one array line (`Ok(None)` when the batch held only notifications and
    /// responses). A batch in a later revision is refused. A call the caller's scopes do
    /// not cover refuses the whole batch, before any of its calls runs: `Err` with that
    /// refusal (as for a batch that is not allowed: empty, or not 2025-03-26, which HTTP
    /// answers 400), which HTTP answers `403` with the challenge to widen the token, as for a
    /// call alone. Session messages before it (a subscription the caller may make, the log
    /// level, cancellations, answers) have taken effect, as each would alone.
    pub(crate) async fn run_batch(
        &self,
        batch: Vec<Value>,
        session: &Arc<Session>,
        streams: Streams,
        caller: Option<&Arc<crate::auth::Principal>>,
    ) -> Result<Option<String>, Reply> {
        if !session.version.allows_batches() || batch.is_empty() {
            let why = if batch.is_empty() {
                "an empty batch"
            } else {
                "batches are not part of this protocol revision"
            };
            let reply = Reply::rejection(None, Rejection::malformed(why));
            #[cfg(feature = "metrics")]
            super::metrics::rejected("unknown", &reply);
            return Err(reply);
        }
        let mut jobs = Vec::new();
        let mut replies = Vec::new();
        for msg in batch {
            if msg.get("method").and_then(Value::as_str) == Some("initialize") {
                let r = Rejection::malformed("`initialize` cannot be part of a batch");
                let id = msg
                    .get("id")
                    .and_then(crate::protocol::RequestId::from_value);
                let reply = Reply::rejection(id.as_ref(), r);
                #[cfg(feature = "metrics")]
                super::metrics::rejected("initialize", &reply);
                replies.push(reply.body);
                continue;
            }
            match self.prepare_legacy(msg, session, streams.clone(), caller) {
                // No call prepared so far has run: dropped, none does.
                Prepared::Reply(r) if r.error == Some(ErrorClass::Forbidden) => return Err(r),
                Prepared::Reply(r) => replies.push(r.body),
                Prepared::Call(job) => {
                    // Cancellable by `notifications/cancelled` like any request of the
                    // session: dropped, and left out of the answers. Each call takes a
                    // unit of the in-flight cap, as a request of its own would.
                    let id = job.id().clone();
                    let Some(slot) = self.inner.admit() else {
                        crate::telemetry::cap_reached("too many requests in flight");
                        replies.push(Reply::rejection(Some(&id), Rejection::busy()).body);
                        continue;
                    };
                    match session.track(id.clone(), job.cancellation()) {
                        Some(tracked) => jobs.push(async move {
                            let reply = tracked.run(job.run()).await;
                            drop(slot);
                            reply
                        }),
                        None => replies.push(super::session::in_flight_already(&id)),
                    }
                }
                Prepared::Notification { method, params } => {
                    if method == m::NOTIFICATION_CANCELLED {
                        session.cancel(params.as_ref());
                    }
                }
                Prepared::Answer | Prepared::Listen(_) => {}
            }
        }
        replies.extend(
            futures_util::future::join_all(jobs)
                .await
                .into_iter()
                .flatten()
                .map(|r| r.body),
        );
        Ok((!replies.is_empty()).then(|| format!("[{}]", replies.join(","))))
    }

    /// The method family serving a legacy request.
    fn route_legacy(&self, parts: Parts, params: Map<String, Value>) -> Prepared {
        let catalog = self.inner.catalog();
        self.route_items(
            parts,
            params,
            &super::parts::NoGuard,
            &catalog,
            |parts, params| self.route_legacy_only(parts, params, &catalog),
        )
    }

    /// The methods only the legacy revisions have.
    fn route_legacy_only(
        &self,
        parts: Parts,
        mut params: Map<String, Value>,
        catalog: &super::catalog::Catalog,
    ) -> Prepared {
        let empty = |parts: &Parts| {
            let envelope = self
                .inner
                .envelope(ResultType::Complete, Map::new(), None, None);
            Prepared::Reply(Reply::in_era(
                &parts.id,
                parts.era(),
                Shape::Plain,
                envelope,
            ))
        };
        let Some(session) = parts.session.clone() else {
            return methods::reject(&parts, Rejection::params("no session"));
        };
        match parts.method.as_str() {
            "initialize" => methods::reject(
                &parts,
                Rejection::new(
                    ErrorClass::Malformed,
                    RpcError::invalid_request("the session is initialized already"),
                ),
            ),
            "ping" => empty(&parts),
            "logging/setLevel" => match params.get("level").and_then(Value::as_str) {
                Some(l) => match LogLevel::parse(l) {
                    Some(level) => {
                        session.set_log_level(level);
                        empty(&parts)
                    }
                    None => methods::reject(
                        &parts,
                        Rejection::params(format!("unknown log level {}", reflect(l))),
                    ),
                },
                None => {
                    methods::reject(&parts, Rejection::params("`params.level` must be a string"))
                }
            },
            "resources/subscribe" | "resources/unsubscribe" if catalog.has_resources() => {
                let Some(Value::String(uri)) = params.remove("uri") else {
                    return methods::reject(
                        &parts,
                        Rejection::params("`params.uri` must be a string"),
                    );
                };
                if parts.method == "resources/subscribe" {
                    // Only what the server serves and the caller may read, and a bounded
                    // number of those.
                    let Some((resource, _)) = catalog.find_resource(&uri) else {
                        let e = RpcError::resource_not_found(&uri);
                        return methods::reject(&parts, Rejection::failed(e));
                    };
                    let item = &resource.def.item;
                    if let Err(r) = super::authz::permit(&self.inner.settings, &parts, item) {
                        return methods::reject(&parts, r);
                    }
                    if !session.subscribe(uri) {
                        return methods::reject(
                            &parts,
                            Rejection::params(format!(
                                "a session subscribes to at most {MAX_RESOURCE_SUBSCRIPTIONS} resources; unsubscribe from one first"
                            )),
                        );
                    }
                } else {
                    session.unsubscribe(&uri);
                }
                empty(&parts)
            }
            _ => {
                tracing::debug!("method not found");
                methods::reject(
                    &parts,
                    Rejection::unknown_method(
                        &parts.method,
                        parts.session.is_some(),
                        self.inner.versions(),
                    ),
                )
            }
        }
    }
}
