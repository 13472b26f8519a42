//! Forwarding a `tools/call` to a 2025-11-25 upstream that asks for input during it
//! (elicitation, sampling, roots): the upstream waits for its answer on one connection,
//! while our client may answer in a later, separate request (`input_required` rounds).
//! The upstream call is parked here between our rounds, under a random token that our
//! sealed `requestState` carries; the next round finds it, answers its question with the
//! client's answer and goes on. A parked call lives in this process (a fleet routes a
//! request's rounds to the instance that holds it, or the round gets a clear error) and
//! is given up, and cancelled upstream, after [`PARK_LIMIT`] without a round.

use super::link::Link;
use super::ongoing::{Next, Ongoing};
use super::{UpstreamError, failed};
use crate::Error;
use crate::protocol::CallToolResult;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a parked upstream call waits for its next round.
pub(crate) const PARK_LIMIT: Duration = Duration::from_secs(600);

/// Most questions one forwarded call may ask.
const MAX_QUESTIONS: u32 = 64;

/// Where the step that names the parked call is recorded.
const TOKEN_STEP: &str = "upstream.call";

/// An upstream call between our rounds.
struct Call {
    ongoing: Ongoing,
    /// The question asked and not answered yet (it is asked again in the next round).
    held: Option<(u32, super::routing::Asked)>,
    /// Questions seen so far.
    asked: u32,
}

/// A parked call, locked by the round that drives it.
type Shared = Arc<tokio::sync::Mutex<Call>>;

/// The parked calls of one upstream.
#[derive(Default)]
pub(crate) struct Parked {
    calls: Mutex<HashMap<String, (Instant, Shared)>>,
    next: std::sync::atomic::AtomicU64,
}

impl Parked {
    fn park(&self, call: Call) -> (String, Shared) {
        let mut bytes = [0u8; 16];
        // No randomness at all is not a reason to fail a call: the token is also sealed
        // in our requestState, so only this server ever reads it back.
        let _ = getrandom::fill(&mut bytes);
        let n = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let token: String = std::iter::once(format!("{n}-"))
            .chain(bytes.iter().map(|b| format!("{b:02x}")))
            .collect();
        let call = Arc::new(tokio::sync::Mutex::new(call));
        let mut calls = self.calls.lock().unwrap_or_else(|e| e.into_inner());
        // Calls whose client never came back are given up (and cancelled upstream).
        calls.retain(|_, (since, _)| since.elapsed() < PARK_LIMIT);
        calls.insert(token.clone(), (Instant::now(), Arc::clone(&call)));
        (token, call)
    }

    fn find(&self, token: &str) -> Option<Shared> {
        let mut calls = self.calls.lock().unwrap_or_else(|e| e.into_inner());
        let (since, call) = calls.get_mut(token)?;
        *since = Instant::now();
        Some(Arc::clone(call))
    }

    fn forget(&self, token: &str) {
        self.calls
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(token);
    }
}

/// A `tools/call` to a 2025-11-25 upstream, its questions asked through `input` (for a
/// 2026-07-28 client, `input_required` rounds; for a legacy one, requests in its session).
pub(crate) async fn forward(
    link: &Link,
    cx: &crate::Context,
    parked: &Parked,
    input: Option<crate::Input>,
    name: &str,
    arguments: Map<String, Value>,
) -> Result<CallToolResult, Error> {
    let token = input
        .as_ref()
        .and_then(|i| i.recorded_step(TOKEN_STEP))
        .and_then(|t| t.as_str().map(str::to_owned));
    let (token, call) = match token {
        Some(t) => match parked.find(&t) {
            Some(c) => (t, c),
            None => {
                return Err(Error::new(
                    "the upstream call these answers belong to is gone (it waited too long, or another instance of this server holds it): call the tool again",
                ));
            }
        },
        None => {
            let ongoing = link
                .start(
                    "tools/call",
                    json!({ "name": name, "arguments": arguments }),
                    None,
                )
                .await
                .map_err(failed)?;
            let (t, c) = parked.park(Call {
                ongoing,
                held: None,
                asked: 0,
            });
            if let Some(i) = &input {
                i.record_step(TOKEN_STEP, json!(t));
            }
            (t, c)
        }
    };
    // Another round of the same request (a retry) waits for this one.
    let mut call = call.lock().await;
    let result = drive(link, cx, &mut call, input.as_ref()).await;
    // Reached only when the upstream answered (or failed): a round that ends waiting for
    // the client's answer is dropped at the question, and the call stays parked.
    parked.forget(&token);
    let r = result?;
    serde_json::from_value::<CallToolResult>(r).map_err(|e| {
        Error::new(format!(
            "the upstream server answered an invalid result: {e}"
        ))
    })
}

/// Runs the call on until its answer, asking its questions on the way.
async fn drive(
    link: &Link,
    cx: &crate::Context,
    call: &mut Call,
    input: Option<&crate::Input>,
) -> Result<Value, Error> {
    loop {
        let (seq, asked) = match call.held.take() {
            Some(h) => h,
            None => match call.ongoing.next().await {
                Next::Answer(a) => return a.map_err(failed),
                Next::Asked(a) => {
                    call.asked += 1;
                    (call.asked, a)
                }
                other => {
                    super::relay(cx, &other);
                    continue;
                }
            },
        };
        if seq > MAX_QUESTIONS {
            return Err(failed(UpstreamError::Unavailable(format!(
                "it asked more than {MAX_QUESTIONS} questions in one call"
            ))));
        }
        let method = asked.request["method"].as_str().unwrap_or_default();
        let answer = match (input, method) {
            (_, "ping") => Ok(json!({})),
            (Some(input), _) => {
                // Held until answered: a round that ends here asks it again next time.
                call.held = Some((seq, asked.clone()));
                let a = input
                    .ask(&format!("upstream.q{seq}"), asked.request.clone())
                    .await;
                call.held = None;
                a.map_err(|e| (-32603, e.to_string()))
            }
            (None, m) => Err((-32601, format!("this proxy cannot pass `{m}` on here"))),
        };
        link.respond(asked.id, answer).await.map_err(failed)?;
    }
}
