//! A `tools/call` forwarded to a 2026-07-28 upstream, with its rounds: its questions
//! (`input_required`) asked of our client through our own rounds, its progress and log
//! messages passed on.

use super::link::Link;
use super::{failed, ongoing, task};
use crate::Error;
use crate::protocol::CallToolResult;
use serde_json::{Value, json};
use std::sync::Arc;

/// Most rounds of one forwarded multi round-trip request.
const MAX_UPSTREAM_ROUNDS: usize = 16;

/// A `tools/call` forwarded, with its rounds: when the upstream asks for input, its
/// questions go to our client as ours (under the round's key), the upstream's answer and
/// `requestState` are recorded in our sealed state, and the next round gives the upstream
/// the client's answers. Each of our rounds runs this again from the start; recorded
/// upstream rounds are not sent again.
pub(super) async fn forward_call(
    link: &Arc<Link>,
    cx: &crate::Context,
    input: Option<crate::Input>,
    name: &str,
    arguments: serde_json::Map<String, Value>,
) -> Result<CallToolResult, Error> {
    let mut carry = serde_json::Map::new();
    for round in 0..MAX_UPSTREAM_ROUNDS {
        let key = format!("upstream.{round}");
        let recorded = input.as_ref().and_then(|i| i.recorded_step(&key));
        let r = match recorded {
            Some(r) => r,
            None => {
                let mut params = json!({ "name": name, "arguments": arguments });
                if let Value::Object(p) = &mut params {
                    p.extend(std::mem::take(&mut carry));
                }
                let r = answer(link, cx, params).await?;
                if asks(&r)
                    && let Some(i) = &input
                {
                    i.record_step(&key, r.clone());
                }
                r
            }
        };
        if r.get("resultType").and_then(Value::as_str) == Some("task") {
            return task::follow(link, cx, input.as_ref(), r).await;
        }
        if !asks(&r) {
            return link.read_as::<CallToolResult>("a tool result", &r);
        }
        let Some(input) = &input else {
            return Err(Error::new(
                "the upstream server asked for input, which this request cannot forward",
            ));
        };
        let requests: Vec<(String, Value)> = r["inputRequests"]
            .as_object()
            .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default();
        // All of a round's questions at once, so they go out in one round of ours.
        let keys: Vec<String> = requests.iter().map(|(k, _)| format!("{key}.{k}")).collect();
        let answers = futures_util::future::join_all(
            requests
                .iter()
                .zip(&keys)
                .map(|((_, req), k)| input.ask(k, req.clone())),
        )
        .await;
        let mut responses = serde_json::Map::new();
        for ((k, _), a) in requests.into_iter().zip(answers) {
            responses.insert(k, a?);
        }
        carry.insert("inputResponses".into(), Value::Object(responses));
        if let Some(s) = r.get("requestState") {
            carry.insert("requestState".into(), s.clone());
        }
    }
    Err(Error::new(format!(
        "the upstream server asked for input more than {MAX_UPSTREAM_ROUNDS} times"
    )))
}

/// One `tools/call` to a 2026-07-28 upstream, its progress and log messages passed to
/// our client on the way.
async fn answer(link: &Link, cx: &crate::Context, params: Value) -> Result<Value, Error> {
    // What our client can answer, the upstream may ask.
    let caps: serde_json::Map<String, Value> = cx
        .client_capabilities()
        .as_map()
        .iter()
        .filter(|(k, _)| matches!(k.as_str(), "elicitation" | "sampling" | "roots"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let mut caps = Value::Object(caps);
    // A call running as a task of ours lets the upstream answer with one (followed here).
    if task::wanted(cx, link) {
        caps["extensions"] = json!({ crate::protocol::tasks::EXTENSION: {} });
    }
    let mut call = link
        .start("tools/call", params, Some(&caps))
        .await
        .map_err(failed)?;
    loop {
        match call.next().await {
            ongoing::Next::Answer(a) => return a.map_err(failed),
            ongoing::Next::Asked(asked) => {
                // A 2026-07-28 server asks with `input_required`, not with requests.
                let m = asked.request["method"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                let reply = if m == "ping" {
                    Ok(json!({}))
                } else {
                    Err((-32601, format!("a 2026-07-28 server does not send `{m}`")))
                };
                link.respond(asked, reply).await.map_err(failed)?;
            }
            other => relay(cx, &other),
        }
    }
}

/// Passes an upstream's progress or log message about a call on to our client.
pub(crate) fn relay(cx: &crate::Context, next: &ongoing::Next) {
    match next {
        ongoing::Next::Progress(p) => {
            if let Some(progress) = p["progress"].as_f64() {
                cx.progress()
                    .report(progress, p["total"].as_f64(), p["message"].as_str());
            }
        }
        ongoing::Next::Log(p) => {
            let level = p["level"]
                .as_str()
                .and_then(crate::protocol::LogLevel::parse)
                .unwrap_or(crate::protocol::LogLevel::Info);
            cx.logger()
                .log(level, p["logger"].as_str(), p.get("data").cloned());
        }
        ongoing::Next::Asked(_) | ongoing::Next::Answer(_) => {}
    }
}

/// Whether an upstream result asks for input.
fn asks(r: &Value) -> bool {
    r.get("resultType").and_then(Value::as_str) == Some("input_required")
}
