//! Forwarding a `tools/call` to a 2025-11-25 upstream that asks for input during it
//! (elicitation, sampling, roots): the upstream waits for its answer on one connection,
//! while our client may answer in a later, separate request (`input_required` rounds).
//! The upstream call is parked here between our rounds, under a random token that our
//! sealed `requestState` carries; the next round finds it, answers its question with the
//! client's answer and goes on. A parked call lives in this process (a fleet routes a
//! request's rounds to the instance that holds it, or the round gets a clear error) and
//! is given up, and cancelled upstream, [`PARK_LIMIT`] after its last round ended (at
//! once when its first round goes before a question: no later round could find it).
//! Where there are no rounds (a task of ours, a legacy client's session: a question waits
//! for its answer) nothing is parked: the call is the request's, and goes with it.

use super::link::Link;
use super::ongoing::{Next, Ongoing};
use super::task::CancelUpstream;
use super::{UpstreamError, failed};
use crate::Error;
use crate::protocol::CallToolResult;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

/// How long a parked upstream call waits for its next round.
pub(crate) const PARK_LIMIT: Duration = Duration::from_secs(600);

/// Most calls parked for one upstream at once (those waiting for their next round and
/// those being driven): past it, a new call is refused before it starts upstream.
pub(crate) const MAX_PARKED: usize = 4096;

/// Most questions one forwarded call may ask.
const MAX_QUESTIONS: u32 = 64;

/// Where the step that names the parked call is recorded.
const TOKEN_STEP: &str = "upstream.call";

/// An upstream call between our rounds.
pub(crate) struct Call {
    ongoing: Ongoing,
    /// The question asked and not answered yet (it is asked again in the next round).
    held: Option<(u32, super::routing::Asked)>,
    /// Questions seen so far.
    asked: u32,
    /// The upstream task the call reads the result of (`tasks/result`), cancelled upstream
    /// when the call is given up before that result came.
    task: Option<CancelUpstream>,
}

/// A started upstream request whose answer a call waits for: the request, and the task it
/// reads the result of, if any.
pub(crate) type Started = (Ongoing, Option<CancelUpstream>);

impl Call {
    fn new((ongoing, task): Started) -> Self {
        Call {
            ongoing,
            held: None,
            asked: 0,
            task,
        }
    }
}

/// A parked call, locked by the round that drives it.
type Shared = Arc<tokio::sync::Mutex<Call>>;

/// One parked value.
struct Entry<T> {
    value: T,
    /// When its last round ended (or it was parked).
    since: Instant,
    /// Rounds driving it now: it does not expire while one does.
    busy: usize,
    /// The timer that gives it up; stopped when it is answered.
    timer: Option<tokio::task::AbortHandle>,
}

impl<T> Entry<T> {
    fn expired(&self) -> bool {
        self.busy == 0 && self.since.elapsed() >= PARK_LIMIT
    }
}

impl<T> Drop for Entry<T> {
    fn drop(&mut self) {
        if let Some(t) = self.timer.take() {
            t.abort();
        }
    }
}

/// Parked values by token.
type Lot<T> = Mutex<HashMap<String, Entry<T>>>;

/// The parked calls of one upstream. Each is given up [`PARK_LIMIT`] after its last round
/// ended (a timer of its own, so nothing waits for the next park; never while a round
/// drives it), and then dropped, which cancels it upstream. A call answered is removed
/// at once, its timer with it.
pub(crate) struct Parked<T = Shared> {
    calls: Arc<Lot<T>>,
    next: std::sync::atomic::AtomicU64,
}

impl<T> Default for Parked<T> {
    fn default() -> Self {
        Parked {
            calls: Arc::default(),
            next: std::sync::atomic::AtomicU64::new(0),
        }
    }
}

fn lock<T>(lot: &Lot<T>) -> std::sync::MutexGuard<'_, HashMap<String, Entry<T>>> {
    lot.lock().unwrap_or_else(|e| e.into_inner())
}

/// A round's hold on a parked value: while it lives the value does not expire, and its
/// wait starts again when it ends (a round may end dropped, at a question).
pub(crate) struct Lease<'p, T: Clone + Send + 'static> {
    parked: &'p Parked<T>,
    token: String,
}

impl<T: Clone + Send + 'static> Drop for Lease<'_, T> {
    fn drop(&mut self) {
        if let Some(e) = lock(&self.parked.calls).get_mut(&self.token) {
            e.busy = e.busy.saturating_sub(1);
            e.since = Instant::now();
        }
    }
}

impl<T: Clone + Send + 'static> Parked<T> {
    /// Parks `value` under a new token, held by the round that parks it. Called from a
    /// handler, on the runtime.
    fn park(&self, value: T) -> Lease<'_, T> {
        let mut bytes = [0u8; 16];
        // No randomness at all is not a reason to fail a call: the token is also sealed
        // in our requestState, so only this server ever reads it back.
        let _ = getrandom::fill(&mut bytes);
        let n = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let token: String = std::iter::once(format!("{n}-"))
            .chain(bytes.iter().map(|b| format!("{b:02x}")))
            .collect();
        let timer = give_up_later(Arc::downgrade(&self.calls), token.clone());
        let entry = Entry {
            value,
            since: Instant::now(),
            busy: 1,
            timer,
        };
        lock(&self.calls).insert(token.clone(), entry);
        Lease {
            parked: self,
            token,
        }
    }

    /// Whether [`MAX_PARKED`] values are parked already.
    fn full(&self) -> bool {
        lock(&self.calls).len() >= MAX_PARKED
    }

    /// The value parked under `token`, held by this round, unless it waited too long.
    fn find(&self, token: &str) -> Option<(T, Lease<'_, T>)> {
        let mut calls = lock(&self.calls);
        let e = calls.get_mut(token)?;
        if e.expired() {
            let gone = calls.remove(token);
            drop(calls);
            drop(gone);
            return None;
        }
        e.busy += 1;
        let value = e.value.clone();
        drop(calls);
        let lease = Lease {
            parked: self,
            token: token.to_owned(),
        };
        Some((value, lease))
    }

    /// Removes an answered call, and stops its timer.
    fn forget(&self, token: &str) {
        let gone = lock(&self.calls).remove(token);
        drop(gone);
    }
}

/// Gives `token` up once it has waited [`PARK_LIMIT`] since its last round ended; ends
/// when it is gone, or when the upstream (and so the lot) is. `None` off the runtime.
fn give_up_later<T: Send + 'static>(
    calls: std::sync::Weak<Lot<T>>,
    token: String,
) -> Option<tokio::task::AbortHandle> {
    let rt = tokio::runtime::Handle::try_current().ok()?;
    let task = rt.spawn(async move {
        let mut until = Instant::now() + PARK_LIMIT;
        loop {
            tokio::time::sleep_until(until).await;
            let Some(calls) = calls.upgrade() else {
                return;
            };
            let mut parked = lock(&calls);
            match parked.get_mut(&token) {
                Some(e) if e.expired() => {
                    // Not aborting itself: this task ends here anyway.
                    e.timer = None;
                    let gone = parked.remove(&token);
                    drop(parked);
                    // Dropped outside the lock: a call is cancelled upstream as it goes.
                    drop(gone);
                    return;
                }
                // Driven now: looked at again a whole limit later.
                Some(e) if e.busy > 0 => until = Instant::now() + PARK_LIMIT,
                Some(e) => until = e.since + PARK_LIMIT,
                None => return,
            }
        }
    });
    Some(task.abort_handle())
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
    let start = async {
        let params = json!({ "name": name, "arguments": arguments });
        let ongoing = link.start("tools/call", params, None).await;
        Ok((ongoing.map_err(failed)?, None))
    };
    forward_with(link, cx, parked, input, start).await
}

/// Drives the upstream request `start` makes to its answer, a tool result. `start` runs
/// in the first round only (it is not polled when a later round finds the call parked);
/// a call that has no rounds (in a task of ours, in a legacy session) is not parked.
pub(crate) async fn forward_with(
    link: &Link,
    cx: &crate::Context,
    parked: &Parked,
    input: Option<crate::Input>,
    start: impl Future<Output = Result<Started, Error>>,
) -> Result<CallToolResult, Error> {
    let token = input
        .as_ref()
        .and_then(|i| i.recorded_step(TOKEN_STEP))
        .and_then(|t| t.as_str().map(str::to_owned));
    if token.is_none() && input.as_ref().is_none_or(crate::Input::is_live) {
        // No rounds to park the call between: a question waits for its answer here (in a
        // task of ours, in a legacy session), or cannot be asked at all. The call is this
        // request's own: given up (its future dropped, or its cancellation fired, as a
        // legacy client's `notifications/cancelled` does), it is given up upstream at once.
        let mut call = Call::new(start.await?);
        let cancelled = cx.cancellation();
        return tokio::select! {
            r = drive(link, cx, &mut call, input.as_ref()) => tool_result(link, &r?),
            () = cancelled.cancelled() => Err(Error::new("the call was cancelled")),
        };
    }
    let (token, call, _lease, _unclaimed) = match token {
        Some(t) => match parked.find(&t) {
            Some((c, lease)) => {
                let unclaimed = Unclaimed {
                    parked,
                    token: t.clone(),
                    call: Arc::clone(&c),
                };
                (t, c, lease, unclaimed)
            }
            None => {
                return Err(Error::new(
                    "the upstream call these answers belong to is gone (it waited too long, or another instance of this server holds it): call the tool again",
                ));
            }
        },
        None => {
            if parked.full() {
                crate::telemetry::cap_reached("too many upstream calls wait for their next round");
                return Err(Error::new(
                    "too many calls of this upstream server wait for answers; try again later",
                ));
            }
            let c = Arc::new(tokio::sync::Mutex::new(Call::new(start.await?)));
            let lease = parked.park(Arc::clone(&c));
            let t = lease.token.clone();
            if let Some(i) = &input {
                i.record_step(TOKEN_STEP, json!(t));
            }
            let unclaimed = Unclaimed {
                parked,
                token: t.clone(),
                call: Arc::clone(&c),
            };
            (t, c, lease, unclaimed)
        }
    };
    // Another round of the same request (a retry) waits for this one.
    let mut call = call.lock().await;
    let result = drive(link, cx, &mut call, input.as_ref()).await;
    // Reached only when the upstream answered (or failed): a round that ends waiting for
    // the client's answer is dropped at the question, and the call stays parked.
    parked.forget(&token);
    tool_result(link, &result?)
}

/// A parked call, while a round of its request runs. Dropped before the round reached a
/// question (its client went, or cancelled), no later round can find the call: only a
/// round that ends at a question gives the client the state that names the next. It is
/// then given up at once (cancelled upstream as it drops), not left parked, and in
/// flight, for [`PARK_LIMIT`]. So in every round: the first, and each later one.
struct Unclaimed<'p> {
    parked: &'p Parked,
    token: String,
    call: Shared,
}

impl Drop for Unclaimed<'_> {
    fn drop(&mut self) {
        // The round's lock on the call was taken after this, so it is gone already.
        let at_question = self.call.try_lock().map_or(true, |c| c.held.is_some());
        if !at_question {
            self.parked.forget(&self.token);
        }
    }
}

fn tool_result(link: &Link, r: &Value) -> Result<CallToolResult, Error> {
    link.read_as::<CallToolResult>("a tool result", r)
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
                Next::Answer(a) => {
                    // An answer, even an error, ends the task it read: nothing to cancel.
                    // A call that timed out or lost the upstream leaves it to be cancelled.
                    if matches!(a, Ok(_) | Err(UpstreamError::Rpc { .. }))
                        && let Some(mut task) = call.task.take()
                    {
                        task.disarm();
                    }
                    return a.map_err(failed);
                }
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
        link.respond(asked, answer).await.map_err(failed)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Counts its drops.
    #[derive(Clone)]
    struct Held(Arc<AtomicUsize>);
    impl Drop for Held {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// Parks a value and ends the round that parked it; its token.
    fn parked_and_left(parked: &Parked<Held>, drops: &Arc<AtomicUsize>) -> String {
        let lease = parked.park(Held(Arc::clone(drops)));
        lease.token.clone()
    }

    #[tokio::test(start_paused = true)]
    async fn the_lot_is_full_at_its_cap_and_has_room_once_one_goes() {
        let drops = Arc::new(AtomicUsize::new(0));
        let parked = Parked::<Held>::default();
        let tokens: Vec<String> = (0..MAX_PARKED)
            .map(|_| parked_and_left(&parked, &drops))
            .collect();
        assert!(parked.full());
        parked.forget(&tokens[0]);
        assert!(!parked.full());
        assert_eq!(drops.load(Ordering::SeqCst), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn a_parked_call_is_given_up_when_no_round_comes_not_at_the_next_park() {
        let drops = Arc::new(AtomicUsize::new(0));
        let parked = Parked::<Held>::default();
        let token = parked_and_left(&parked, &drops);
        // A round finds it (and its wait starts again when the round ends)...
        tokio::time::sleep(PARK_LIMIT - Duration::from_secs(1)).await;
        drop(parked.find(&token).expect("in time"));
        tokio::time::sleep(PARK_LIMIT - Duration::from_secs(1)).await;
        assert!(parked.find(&token).is_some(), "a round came in time");
        assert_eq!(
            drops.load(Ordering::SeqCst),
            2,
            "only the clones handed out"
        );
        // ...and with no round for the whole limit, its timer drops it, with no other park.
        tokio::time::sleep(PARK_LIMIT + Duration::from_secs(1)).await;
        assert_eq!(drops.load(Ordering::SeqCst), 3, "given up and dropped");
        assert!(parked.find(&token).is_none());
        assert!(lock(&parked.calls).is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn a_call_being_driven_does_not_expire_and_waits_anew_after_its_round() {
        let drops = Arc::new(AtomicUsize::new(0));
        let parked = Parked::<Held>::default();
        let token = parked_and_left(&parked, &drops);
        let (_value, round) = parked.find(&token).unwrap();
        // The round works for longer than the limit (the upstream takes its time).
        tokio::time::sleep(PARK_LIMIT * 3).await;
        assert_eq!(drops.load(Ordering::SeqCst), 0, "not given up while driven");
        drop(round);
        tokio::time::sleep(PARK_LIMIT - Duration::from_secs(1)).await;
        assert!(
            parked.find(&token).is_some(),
            "its wait started when the round ended"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_round_after_the_limit_does_not_find_it_even_before_its_timer_runs() {
        let drops = Arc::new(AtomicUsize::new(0));
        let parked = Parked::<Held>::default();
        let token = parked_and_left(&parked, &drops);
        // The clock moves on without the timer task getting to run.
        tokio::time::advance(PARK_LIMIT).await;
        assert!(parked.find(&token).is_none());
        assert_eq!(drops.load(Ordering::SeqCst), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn an_answered_call_stops_its_timer() {
        let drops = Arc::new(AtomicUsize::new(0));
        let parked = Parked::<Held>::default();
        let lease = parked.park(Held(Arc::clone(&drops)));
        let timer = lock(&parked.calls)[&lease.token].timer.clone().unwrap();
        parked.forget(&lease.token);
        drop(lease);
        assert_eq!(drops.load(Ordering::SeqCst), 1);
        tokio::task::yield_now().await;
        assert!(
            timer.is_finished(),
            "no timer left sleeping for an answered call"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn the_timers_end_with_the_upstream() {
        let drops = Arc::new(AtomicUsize::new(0));
        let parked = Parked::<Held>::default();
        let token = parked_and_left(&parked, &drops);
        let timer = lock(&parked.calls)[&token].timer.clone().unwrap();
        drop(parked);
        assert_eq!(drops.load(Ordering::SeqCst), 1, "dropped with the lot");
        tokio::task::yield_now().await;
        assert!(timer.is_finished());
    }

    /// A gateway mounting, under `up`, a fake stdio upstream with the one tool `tool`: the
    /// upstream, its fake's end, and a client of the gateway.
    #[cfg(feature = "testing")]
    async fn gateway_over(
        tool: &str,
    ) -> (
        super::super::Upstream,
        super::super::fake::FakeStdio,
        crate::testing::TestClient,
    ) {
        let (link, mut up) = super::super::fake::stdio().await;
        let upstream = super::super::Upstream::new(link);
        let answering = async {
            let list = up.next().await;
            up.send(
                &json!({"jsonrpc": "2.0", "id": list["id"], "result": {"tools": [
                {"name": tool, "inputSchema": {"type": "object"}}]}}),
            );
        };
        let (items, ()) = tokio::join!(upstream.items(), answering);
        let gateway = crate::Server::builder("gateway", "1")
            .request_state(crate::config::RequestState::single_instance())
            .mount("up", items.unwrap())
            .build()
            .unwrap();
        (upstream, up, crate::testing::TestClient::new(gateway))
    }

    /// A client that goes before the first round of its call reached a question (the
    /// upstream still working) leaves nothing parked: the upstream call is cancelled at
    /// once and no longer in flight, so the upstream's questions and log messages reach
    /// the next call. Before, it stayed parked, in flight, for `PARK_LIMIT`.
    #[cfg(feature = "testing")]
    #[tokio::test]
    async fn a_first_round_given_up_before_a_question_leaves_nothing_parked() {
        use super::super::fake;
        let (upstream, mut up, client) = gateway_over("hang").await;
        let call = client.call_tool("up_hang", json!({}));
        let gave_up = tokio::time::timeout(Duration::from_millis(300), call).await;
        assert!(gave_up.is_err(), "it hangs");
        let sent = up.next().await;
        assert_eq!(sent["params"]["name"], "hang", "{sent}");
        let cancel = up.next().await;
        assert_eq!(cancel["method"], "notifications/cancelled", "{cancel}");
        assert_eq!(cancel["params"]["requestId"], sent["id"], "{cancel}");
        fake::settled(&upstream.link).await;
        assert!(lock(&upstream.parked.calls).is_empty());
    }

    /// The same for a later round: a client that goes (or cancels) after answering, while
    /// the upstream works on, leaves nothing parked; the upstream call is cancelled at
    /// once. Before, only the first round did so: the call stayed parked, and in flight
    /// upstream, for `PARK_LIMIT` (10 minutes), holding the upstream's questions of
    /// every other client back meanwhile.
    #[cfg(feature = "testing")]
    #[tokio::test]
    async fn a_later_round_given_up_before_a_question_leaves_nothing_parked() {
        use super::super::fake;
        let (upstream, mut up, client) = gateway_over("ask").await;
        let client = client.with_capabilities(json!({"elicitation": {"form": {}}}));
        let params = json!({"name": "up_ask", "arguments": {}});
        // Round 1: the upstream asks.
        let first = client.request("tools/call", params.clone());
        let asking = async {
            let sent = up.next().await;
            up.send(
                &json!({"jsonrpc": "2.0", "id": "q1", "method": "elicitation/create",
                "params": {"message": "sure?", "requestedSchema": {"type": "object"}}}),
            );
            sent
        };
        let (first, sent) = tokio::join!(first, asking);
        let (first, _) = first.unwrap();
        assert_eq!(first["resultType"], "input_required", "{first}");
        let key = first["inputRequests"]
            .as_object()
            .unwrap()
            .keys()
            .next()
            .unwrap()
            .clone();
        // Round 2: the answer goes up, the upstream works on, the client gives up.
        let mut again = params;
        again["inputResponses"] = json!({ key: {"action": "accept", "content": {}} });
        again["requestState"] = first["requestState"].clone();
        let second = client.request("tools/call", again);
        let gave_up = tokio::time::timeout(Duration::from_millis(300), second).await;
        assert!(gave_up.is_err(), "it hangs");
        let answer = up.next().await;
        assert_eq!(answer["id"], "q1", "{answer}");
        let cancel = up.next().await;
        assert_eq!(cancel["method"], "notifications/cancelled", "{cancel}");
        assert_eq!(cancel["params"]["requestId"], sent["id"], "{cancel}");
        fake::settled(&upstream.link).await;
        assert!(lock(&upstream.parked.calls).is_empty());
    }
}
