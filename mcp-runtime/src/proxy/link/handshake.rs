//! Settling an upstream's era: `server/discover` first, `initialize` when the upstream
//! does not know it, and the messages both need.

use serde_json::{Value, json};
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::{MODERN, Session, UpstreamError, outcome};

/// The handshake on the stdio session `on`, its request ids taken from `next`, each
/// request in `patience` (see [`Link::handshake`]): what a child started again does too,
/// away from the request that started it.
pub(in crate::proxy) async fn handshake_on(
    on: &Arc<Session>,
    next: &AtomicU64,
    patience: Duration,
) -> Result<(String, Value), UpstreamError> {
    let ask = |version: &'static str, method: &'static str, params: Value| async move {
        let id = next.fetch_add(1, Ordering::Relaxed);
        let msg = compose(version == MODERN, id, method, params, None);
        let asked = on.exchange(id, &msg, method != "initialize");
        tokio::time::timeout(patience, asked)
            .await
            .map_err(|_| UpstreamError::Timeout)?
            .and_then(|a| outcome(a, &on.told))
    };
    let (version, hello, legacy) = era(ask).await?;
    if legacy {
        on.send(initialized().to_string()).await?;
    }
    Ok((version, hello))
}

/// The era, asked with `ask` (revision, method, params: the request's result):
/// `server/discover` first; `initialize` when it is not known. The revision, what the
/// upstream said, and whether it was `initialize` (then `notifications/initialized` is
/// due).
pub(super) async fn era<A, F>(ask: A) -> Result<(String, Value, bool), UpstreamError>
where
    A: Fn(&'static str, &'static str, Value) -> F,
    F: Future<Output = Result<Value, UpstreamError>>,
{
    match ask(MODERN, "server/discover", json!({})).await {
        Ok(d)
            if d["supportedVersions"]
                .as_array()
                .is_some_and(|v| v.iter().any(|x| x == MODERN)) =>
        {
            return Ok((MODERN.to_owned(), d, false));
        }
        Ok(_) | Err(UpstreamError::Rpc { .. }) => {}
        Err(e) => return Err(e),
    }
    let hello = ask("2025-11-25", "initialize", initialize_params()).await?;
    let version = match hello.get("protocolVersion") {
        None => "2025-11-25",
        Some(v) => v
            .as_str()
            .filter(|v| *v == OLDEST || crate::protocol::legacy::LEGACY_VERSIONS.contains(v))
            .ok_or_else(|| {
                tracing::warn!(
                    "the upstream server answered `initialize` with the protocol version {}, which is no revision of that era",
                    super::excerpt(v.to_string().as_bytes())
                );
                super::gone("an unknown protocol version")
            })?,
    };
    Ok((version.to_owned(), hello, true))
}

/// The oldest revision an upstream may answer `initialize` with (its stdio wire is
/// the later legacy revisions').
const OLDEST: &str = "2024-11-05";

pub(super) fn initialized() -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
}

/// One request's message, its params with the `_meta` of a 2026-07-28 request when
/// `modern`.
pub(super) fn compose(
    modern: bool,
    id: u64,
    method: &str,
    params: Value,
    caps: Option<&Value>,
) -> Value {
    let mut params = params;
    if modern && let Value::Object(p) = &mut params {
        p.insert(
            "_meta".into(),
            json!({
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": caps.cloned().unwrap_or_else(|| json!({})),
                "io.modelcontextprotocol/clientInfo":
                    {"name": "mcp-runtime-proxy", "version": env!("CARGO_PKG_VERSION")},
            }),
        );
    }
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// The params of our `initialize` (a 2025-11-25 upstream's, and again when it lost our
/// session: see `Peer::reopen`). What it may ask during a call passes to our client (who
/// is asked only if it can answer: see `Input::ask`).
pub(in crate::proxy) fn initialize_params() -> Value {
    json!({
        "protocolVersion": "2025-11-25",
        "capabilities": {"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {}},
        "clientInfo": {"name": "mcp-runtime-proxy", "version": env!("CARGO_PKG_VERSION")},
    })
}
