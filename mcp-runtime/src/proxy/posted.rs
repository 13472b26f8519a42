//! The answer to one request POSTed to an HTTP upstream: its JSON body, or its event
//! stream read as it comes up to the answer, the upstream's requests, progress and log
//! messages about the request passed on (or answered at once) on the way.

use super::link::{
    MAX_MESSAGE, NO_MESSAGE, Told, UpstreamError, excerpt, gone, id_in_string, outcome, rpc_error,
    unreached,
};
use super::ongoing::Next;
use super::routing::Asked;
use super::streams::{Peer, is_event_stream};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

/// How long answering one of the upstream's requests may take.
const ANSWER_BACK_WITHIN: std::time::Duration = std::time::Duration::from_secs(5);

/// Sends `answer` to `peer`'s request in the revision `back`, if given, before reading
/// on: one at a time, each for at most [`ANSWER_BACK_WITHIN`], so an upstream sending
/// many can slow only the request it sends them about, never pile up connections or
/// tasks here.
async fn answer_back(peer: &Peer, back: Option<&str>, answer: Value) {
    if let Some(version) = back
        && tokio::time::timeout(ANSWER_BACK_WITHIN, peer.reply(version, &answer))
            .await
            .is_err()
    {
        tracing::debug!("the upstream took no answer to its request within {ANSWER_BACK_WITHIN:?}");
    }
}

/// Reads the response of `peer` to a POSTed request as it comes: JSON, or an SSE stream
/// on which the upstream's requests about it come before its answer (those not passed
/// on are answered in `version`).
pub(super) async fn read_events(
    peer: &Peer,
    version: &str,
    resp: hyper::Response<hyper::body::Incoming>,
    id: u64,
    asks: mpsc::Sender<Next>,
    answer: oneshot::Sender<Result<Value, UpstreamError>>,
) {
    let got = answer_in(peer, resp, Some(&json!(id)), Some(&asks), Some(version)).await;
    let got = got.and_then(|a| a.ok_or_else(|| gone("no answer")));
    let _ = answer.send(got.and_then(|a| outcome(a, &peer.told)));
}

/// The answer to the request `id` in `peer`'s response to its POST: the JSON body, or
/// the first event of its stream that carries `id` (the stream is read no further: an
/// upstream may keep it open). What comes on the stream before it about the request goes
/// to `asks`, if given; the upstream's requests that cannot go there (without `asks`, or
/// past what the call holds) are answered at once in the revision `back`, if given, so
/// the upstream does not wait on them. `None`: no answer (`202`, an empty body, a stream
/// in answer to a notification).
pub(super) async fn answer_in(
    peer: &Peer,
    resp: hyper::Response<hyper::body::Incoming>,
    id: Option<&Value>,
    asks: Option<&mpsc::Sender<Next>>,
    back: Option<&str>,
) -> Result<Option<Value>, UpstreamError> {
    let status = resp.status();
    if status == hyper::StatusCode::ACCEPTED {
        return Ok(None);
    }
    let sse = is_event_stream(&resp);
    let mut body = resp.into_body();
    if !sse || !status.is_success() {
        let body = http_body_util::Limited::new(body, MAX_MESSAGE)
            .collect()
            .await
            .map_err(|e| unreached("reading its answer failed", &*e, &peer.told))?
            .to_bytes();
        if body.is_empty() && status.is_success() {
            return Ok(None);
        }
        return json_answer(status, &body, id, &peer.told);
    }
    let Some(id) = id else {
        return Ok(None);
    };
    let mut events = Events::default();
    loop {
        let frame = match body.frame().await {
            Some(Ok(f)) => f,
            Some(Err(e)) => return Err(unreached("its event stream broke", &e, &peer.told)),
            None => return Err(gone("its event stream ended with no answer")),
        };
        let Ok(data) = frame.into_data() else {
            continue;
        };
        events.push(&data);
        if events.held() > MAX_MESSAGE {
            return Err(gone("an event larger than the limit"));
        }
        while let Some(event) = events.next_data() {
            let Ok(msg) = serde_json::from_str::<Value>(&event) else {
                continue;
            };
            match msg.get("method").and_then(Value::as_str) {
                // What comes on this stream is about this request.
                Some(method) => {
                    let next = match (method, msg.get("id")) {
                        (m, Some(rid)) => Next::Asked(Asked {
                            id: rid.clone(),
                            request: json!({"method": m, "params": msg["params"]}),
                            from: None,
                        }),
                        // Under the token it was given (its id): another's is not its.
                        ("notifications/progress", None)
                            if names(&msg["params"]["progressToken"], id) =>
                        {
                            Next::Progress(msg["params"].clone())
                        }
                        ("notifications/message", None) => Next::Log(msg["params"].clone()),
                        _ => continue,
                    };
                    // Past what the call holds, dropped (R-6), progress and logs first;
                    // a question past it (with all the room kept for questions taken)
                    // is refused.
                    match (asks, next) {
                        (Some(asks), Next::Asked(q)) => {
                            let rid = q.id.clone();
                            if let Err(e) = asks.try_send(Next::Asked(q)) {
                                tracing::debug!("a question about a call refused: {e}");
                                let refusal = super::routing::refused_by_call(&rid, method, &e);
                                answer_back(peer, back, refusal).await;
                            }
                        }
                        (Some(asks), note) => super::ongoing::tell(asks, note),
                        (None, Next::Asked(q)) => {
                            let refusal = super::routing::outside_a_call(&q.id, method);
                            answer_back(peer, back, refusal).await;
                        }
                        (None, _) => {}
                    }
                }
                None if msg.get("id").is_some_and(|m| names(m, id)) => return Ok(Some(msg)),
                None => {}
            }
        }
    }
}

/// Whether `v` (a progress token, or the id of an answer) names the request `id` (ours, a
/// number): the number, or its decimal form as a string (some servers echo ids as
/// strings).
fn names(v: &Value, id: &Value) -> bool {
    v == id
        || v.as_str()
            .and_then(id_in_string)
            .is_some_and(|n| Some(n) == id.as_u64())
}

/// The answer to the request `id` in the JSON `body` of a response of `status`. A
/// failure status is an error naming it: the JSON-RPC error the body holds (whatever its
/// id: an error of the upstream's transport may have none), else the status alone. A
/// success carries the answer to `id`, or is an error saying what it carries instead; a
/// success to a notification or answer posted (`id`: `None`) carries nothing. A body that
/// is not the JSON-RPC answer or error (an error page) is told to `told` with an excerpt,
/// never put in the error: it may hold the upstream's internals, and the error may reach
/// a client.
fn json_answer(
    status: hyper::StatusCode,
    body: &[u8],
    id: Option<&Value>,
    told: &Told,
) -> Result<Option<Value>, UpstreamError> {
    let parsed = serde_json::from_slice::<Value>(body).ok();
    let unfit = |what: String| {
        told.tell(format_args!(
            "the upstream server answered {what}: {}",
            shown(body)
        ));
        Err(gone(what))
    };
    if !status.is_success() {
        let rpc = parsed
            .as_ref()
            .filter(|v| v.get("result").is_none())
            .and_then(|v| v.get("error"))
            .filter(|e| e.get("code").is_some_and(Value::is_i64));
        return match rpc.map(|e| rpc_error(e, NO_MESSAGE)) {
            Some(UpstreamError::Rpc {
                code,
                message,
                data,
            }) => Err(UpstreamError::Rpc {
                code,
                message: format!("{message} (HTTP {status})"),
                data,
            }),
            _ => unfit(format!("HTTP {status}")),
        };
    }
    let Some(id) = id else {
        return Ok(None);
    };
    match parsed {
        Some(v)
            if v.get("id").is_some_and(|m| names(m, id))
                && (v.get("result").is_some() || v.get("error").is_some()) =>
        {
            Ok(Some(v))
        }
        Some(v) if v.get("id").is_some() && v.get("method").is_none() => {
            unfit(format!("HTTP {status} with the answer to another request"))
        }
        _ => unfit(format!("HTTP {status} with an answer that is not JSON-RPC")),
    }
}

/// An excerpt of `body` for the log, or that it is empty.
fn shown(body: &[u8]) -> String {
    if body.trim_ascii().is_empty() {
        return "(an empty body)".to_owned();
    }
    excerpt(body)
}

/// An SSE stream's bytes as they come, cut into events. Each byte is looked at once: the
/// search for an event's end goes on where the last one stopped (before, the whole
/// buffer was searched again after every frame, so one large event took quadratic time).
#[derive(Default)]
pub(super) struct Events {
    buf: Vec<u8>,
    /// Where the bytes not taken yet start.
    start: usize,
    /// How far no event's end was found.
    scanned: usize,
}

impl Events {
    /// Adds the next bytes of the stream.
    pub(super) fn push(&mut self, data: &[u8]) {
        if self.start > 0 {
            self.buf.drain(..self.start);
            self.scanned -= self.start;
            self.start = 0;
        }
        self.buf.extend_from_slice(data);
    }

    /// How many bytes are held that no whole event took yet.
    pub(super) fn held(&self) -> usize {
        self.buf.len() - self.start
    }

    /// The data of the next whole event (one with `data:` lines), if there is one.
    pub(super) fn next_data(&mut self) -> Option<String> {
        loop {
            let end = self.end()?;
            let raw = &self.buf[self.start..end];
            self.start = end;
            self.scanned = end;
            let text = String::from_utf8_lossy(raw);
            let data: Vec<&str> = text
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(|d| d.strip_prefix(' ').unwrap_or(d))
                .collect();
            if !data.is_empty() {
                return Some(data.join("\n"));
            }
        }
    }

    /// Where the next event ends (after its blank line: `\n\n` or `\r\n\r\n`), if it
    /// came; the search starts where the last one stopped.
    fn end(&mut self) -> Option<usize> {
        let from = self.scanned.max(self.start);
        let unseen = &self.buf[from..];
        for (n, _) in unseen.iter().enumerate().filter(|(_, c)| **c == b'\n') {
            let at = from + n;
            let before = &self.buf[self.start..at];
            if before.ends_with(b"\n") || before.ends_with(b"\r\n\r") {
                return Some(at + 1);
            }
        }
        self.scanned = self.buf.len();
        None
    }
}
#[cfg(test)]
mod tests {
    use super::Events;
    use std::time::{Duration, Instant};

    #[test]
    fn events_are_cut_at_blank_lines_in_either_line_ending() {
        let mut events = Events::default();
        events.push(b"id: 1\ndata: {\"a\":1}\n\n: keep-alive\n\ndata: x\r\ndata: y\r\n\r");
        assert_eq!(events.next_data().as_deref(), Some("{\"a\":1}"));
        assert_eq!(events.next_data(), None);
        events.push(b"\ndata: par");
        assert_eq!(events.next_data().as_deref(), Some("x\ny"));
        assert_eq!(events.next_data(), None);
        assert_eq!(events.held(), b"data: par".len());
        events.push(b"t\n\n");
        assert_eq!(events.next_data().as_deref(), Some("part"));
        assert_eq!(events.held(), 0);
    }

    /// A large event that comes in small frames takes linear time. Before, every frame
    /// searched the whole buffer again (a 2 MB event in 1 KB frames: minutes).
    #[test]
    fn a_large_event_in_small_frames_is_cut_in_linear_time() {
        let payload = "y".repeat(2 << 20);
        let stream = format!("data: {payload}\n\ndata: next\n\n");
        let started = Instant::now();
        let mut events = Events::default();
        let mut got = Vec::new();
        for frame in stream.as_bytes().chunks(1024) {
            events.push(frame);
            while let Some(d) = events.next_data() {
                got.push(d.len());
            }
        }
        assert_eq!(got, [payload.len(), 4]);
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
    }
}
