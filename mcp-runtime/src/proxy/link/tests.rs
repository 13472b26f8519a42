//! The link against fake upstreams (`fake.rs`): given-up calls, broken and over-long
//! lines, event streams, answers that are not answers, forgotten sessions.

use super::super::fake;
use super::super::ongoing::Next;
use super::UpstreamError;
use serde_json::json;
use std::time::Duration;

/// The link still reads its upstream: a request gets its answer.
pub(super) async fn reads_on(link: &super::Link, up: &mut fake::FakeStdio) {
    let asking = link.request("fine", json!({}));
    let answering = async {
        let sent = up.next().await;
        up.send(&json!({"jsonrpc": "2.0", "id": sent["id"], "result": {"ok": 1}}));
    };
    let (answer, ()) = tokio::join!(asking, answering);
    assert_eq!(answer.unwrap(), json!({"ok": 1}));
}

/// A plain request that `link` gives up after 100 ms, with what the upstream read: the
/// request, then its cancellation.
pub(super) async fn given_up(
    link: &super::Link,
    up: &mut fake::FakeStdio,
) -> (serde_json::Value, serde_json::Value) {
    let gave_up =
        tokio::time::timeout(Duration::from_millis(100), link.request("slow", json!({}))).await;
    assert!(gave_up.is_err());
    let sent = up.next().await;
    let cancel = up.next().await;
    assert_eq!(cancel["method"], "notifications/cancelled", "{cancel}");
    (sent, cancel)
}

/// A call given up (its `Ongoing` dropped, as when its client goes or its time runs
/// out) leaves nothing in flight and is cancelled upstream, so a later call still
/// gets the upstream's questions and log messages (passed on only while one call is
/// in flight) once the given-up one is known to have ended (its late answer came).
/// Before, the call stayed in flight for good, and every later question was answered
/// "came while 2 calls were in flight".
#[tokio::test]
async fn a_call_given_up_leaves_nothing_in_flight() {
    // Its late answer is logged at debug: with a subscriber here, that log's callsite is
    // not cached as unwanted for the tests that capture it (tracing's interest cache is
    // global).
    let (_logs, _guard) = capture_logs();
    let (link, mut up) = fake::stdio().await;
    let first = link
        .start("tools/call", json!({"name": "hang"}), None)
        .await;
    let sent = up.next().await;
    assert_eq!(sent["params"]["name"], "hang", "{sent}");
    drop(first);
    let cancel = up.next().await;
    assert_eq!(cancel["method"], "notifications/cancelled", "{cancel}");
    assert_eq!(cancel["params"]["requestId"], sent["id"], "{cancel}");
    fake::settled(&link).await;
    up.send(&json!({"jsonrpc": "2.0", "id": sent["id"], "error": {"code": -32800, "message": "cancelled"}}));

    let mut second = link
        .start("tools/call", json!({"name": "ask"}), None)
        .await
        .unwrap();
    let sent = up.next().await;
    up.send(
        &json!({"jsonrpc": "2.0", "id": "q1", "method": "elicitation/create",
        "params": {"message": "sure?", "requestedSchema": {"type": "object"}}}),
    );
    up.send(&json!({"jsonrpc": "2.0", "method": "notifications/message",
        "params": {"level": "info", "data": "working"}}));
    let asked = tokio::time::timeout(Duration::from_secs(5), second.next()).await;
    assert!(
        matches!(&asked, Ok(Next::Asked(a)) if a.id == "q1"),
        "{asked:?}"
    );
    let log = tokio::time::timeout(Duration::from_secs(5), second.next()).await;
    assert!(matches!(&log, Ok(Next::Log(_))), "{log:?}");
    up.send(&json!({"jsonrpc": "2.0", "id": sent["id"], "result": {"content": []}}));
    let answer = tokio::time::timeout(Duration::from_secs(5), second.next()).await;
    assert!(matches!(&answer, Ok(Next::Answer(Ok(_)))), "{answer:?}");
    drop(second);
    fake::settled(&link).await;
}

/// A plain request given up (its time ran out, or its caller went) is forgotten and
/// cancelled upstream; one answered is neither.
#[tokio::test]
async fn a_request_given_up_is_forgotten_and_cancelled_upstream() {
    let (link, mut up) = fake::stdio().await;
    let (sent, cancel) = given_up(&link, &mut up).await;
    assert_eq!(cancel["params"]["requestId"], sent["id"], "{cancel}");
    assert_eq!(fake::in_flight(&link), (0, 0));

    let asking = link.request("quick", json!({}));
    let answering = async {
        let sent = up.next().await;
        up.send(&json!({"jsonrpc": "2.0", "id": sent["id"], "result": {"ok": true}}));
    };
    let (answer, ()) = tokio::join!(asking, answering);
    assert_eq!(answer.unwrap(), json!({"ok": true}));
    assert_eq!(fake::in_flight(&link), (0, 0));
    let nothing = tokio::time::timeout(Duration::from_millis(100), up.seen.recv()).await;
    assert!(
        nothing.is_err(),
        "no cancel of an answered request: {nothing:?}"
    );
}

/// A line that is not UTF-8 is skipped, and the link reads on; when it is an answer
/// whose id can be read, its request fails at once. Before, the reader stopped at
/// the first such line and the link was taken for closed while the upstream ran.
#[tokio::test]
async fn a_line_that_is_not_utf8_is_skipped() {
    let (link, mut up) = fake::stdio().await;
    let asking = link.request("broken", json!({}));
    let answering = async {
        let sent = up.next().await;
        let mut bad = format!(
            r#"{{"jsonrpc":"2.0","id":{},"result":{{"text":""#,
            sent["id"]
        )
        .into_bytes();
        bad.extend_from_slice(b"caf\xe9\"}}\n");
        up.say.send(b"\xff\xfe not even JSON\n".to_vec()).unwrap();
        up.say.send(bad).unwrap();
    };
    let (answer, ()) = tokio::time::timeout(Duration::from_secs(5), async {
        tokio::join!(asking, answering)
    })
    .await
    .expect("the broken answer fails its request at once");
    assert!(
        matches!(&answer, Err(UpstreamError::Unavailable(why)) if why.contains("UTF-8")),
        "{answer:?}"
    );
    reads_on(&link, &mut up).await;
}

/// An answer over the limit is skipped as it comes (never buffered whole), and when
/// its id shows at either end, its request fails at once, naming its size; the link
/// reads on. Before, the line was buffered whole and skipped silently, so its request
/// waited for its time limit.
#[tokio::test]
async fn an_answer_over_the_limit_fails_its_request_at_once() {
    let (link, mut up) = fake::stdio().await;
    let filler = "x".repeat(super::MAX_MESSAGE);
    for result_first in [false, true] {
        let asking = link.request("huge", json!({}));
        let answering = async {
            let sent = up.next().await;
            let id = &sent["id"];
            let line = if result_first {
                format!(r#"{{"result":{{"t":"{filler}"}},"jsonrpc":"2.0","id":{id}}}"#)
            } else {
                format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"t":"{filler}"}}}}"#)
            };
            up.say.send(format!("{line}\n").into_bytes()).unwrap();
        };
        let (answer, ()) = tokio::time::timeout(Duration::from_secs(10), async {
            tokio::join!(asking, answering)
        })
        .await
        .expect("the request fails at once");
        assert!(
            matches!(&answer, Err(UpstreamError::Unavailable(why)) if why.contains("bytes, over the limit")),
            "{answer:?}"
        );
    }
    reads_on(&link, &mut up).await;
}

/// An HTTP upstream that answers on an event stream and keeps it open: the request
/// has its answer at the event carrying its id (what comes before it, another id
/// included, is passed over). Before, the whole body was read first, so
/// `prompts/get`, `resources/read`, the lists and the handshake waited for the time
/// limit.
#[tokio::test]
async fn an_answer_on_an_event_stream_left_open_is_taken_at_once() {
    let (link, _) = fake::http(|req| {
        (req.body["method"] == "prompts/get").then(|| {
            fake::Reply::events(&[
                json!({"jsonrpc": "2.0", "method": "notifications/message",
                    "params": {"level": "info", "data": "x"}}),
                json!({"jsonrpc": "2.0", "id": 999, "result": {}}),
                json!({"jsonrpc": "2.0", "id": req.body["id"], "result": {"messages": []}}),
            ])
        })
    })
    .await;
    let asked = link.request("prompts/get", json!({"name": "p"}));
    let answer = tokio::time::timeout(Duration::from_secs(5), asked)
        .await
        .expect("answered at once");
    assert_eq!(answer.unwrap(), json!({"messages": []}));
}

/// What an HTTP upstream answers that is not the JSON-RPC answer to the request is
/// an error naming the status, and the body is shown in the log (at warn, naming the
/// upstream), not in the error, which may reach a client; a JSON-RPC error with a
/// failure status keeps its code. Before, a `401` with `{"error": "invalid_token"}` was
/// an error with an empty message, and an answer to another id was taken; later, the
/// error showed the body.
#[tokio::test]
async fn an_http_answer_that_is_not_the_answer_is_a_clear_error() {
    let (logs, _guard) = capture_logs();
    let (link, addr) = fake::http(|req| {
        let id = &req.body["id"];
        Some(match req.body["method"].as_str()? {
            "prompts/get" => {
                fake::Reply::status(401, "application/json", br#"{"error":"invalid_token"}"#)
            }
            "resources/read" => {
                fake::Reply::json(&json!({"jsonrpc": "2.0", "id": 999, "result": {}}))
            }
            "tools/list" => {
                fake::Reply::json(&json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32000}}))
            }
            "completion/complete" => fake::Reply::status(
                400,
                "application/json",
                br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"bad"}}"#,
            ),
            "tools/call" => fake::Reply::status(502, "text/html", b"<h1>Bad Gateway</h1>"),
            _ => return None,
        })
    })
    .await;
    let e = link.request("prompts/get", json!({})).await.unwrap_err();
    assert_eq!(
        e,
        UpstreamError::Unavailable("HTTP 401 Unauthorized".into())
    );
    let told = String::from_utf8(logs.lock().unwrap().clone()).unwrap();
    let page = told.lines().find(|l| l.contains("invalid_token"));
    assert!(
        page.is_some_and(|l| l.contains("WARN")
            && l.contains(&format!("upstream=http://{addr}/mcp"))
            && l.contains("answered HTTP 401 Unauthorized")),
        "{told}"
    );
    let e = link.request("resources/read", json!({})).await.unwrap_err();
    assert!(
        matches!(&e, UpstreamError::Unavailable(m) if m.contains("another request") && !m.contains("999")),
        "{e:?}"
    );
    let e = link.request("tools/list", json!({})).await.unwrap_err();
    assert!(
        matches!(&e, UpstreamError::Rpc { code: -32000, message, .. } if message.contains("no message")),
        "{e:?}"
    );
    let e = link
        .request("completion/complete", json!({}))
        .await
        .unwrap_err();
    assert!(
        matches!(&e, UpstreamError::Rpc { code: -32600, message, .. } if message == "bad (HTTP 400 Bad Request)"),
        "{e:?}"
    );
    let mut call = link.start("tools/call", json!({}), None).await.unwrap();
    let answer = call.next().await;
    assert!(
        matches!(&answer, Next::Answer(Err(UpstreamError::Unavailable(m))) if m == "HTTP 502 Bad Gateway"),
        "{answer:?}"
    );
}

/// An `error` that is not a JSON-RPC error object, or one without a string message,
/// says so; what the first held is shown in the log, not in the error. Before, either
/// was an error with an empty message.
#[tokio::test]
async fn an_error_without_a_message_says_so() {
    let (logs, _guard) = capture_logs();
    let (link, mut up) = fake::stdio().await;
    for (error, want) in [
        (json!("boom"), "not a JSON-RPC error object"),
        (json!({"code": 7, "message": 42}), "no message"),
    ] {
        let asking = link.request("x", json!({}));
        let answering = async {
            let sent = up.next().await;
            up.send(&json!({"jsonrpc": "2.0", "id": sent["id"], "error": error}));
        };
        let (answer, ()) = tokio::join!(asking, answering);
        let e = answer.unwrap_err();
        assert!(e.to_string().contains(want), "{e:?}");
        assert!(!e.to_string().contains("boom"), "{e:?}");
    }
    let told = String::from_utf8(logs.lock().unwrap().clone()).unwrap();
    assert!(
        told.contains("not a JSON-RPC error object: \"boom\""),
        "{told}"
    );
}

/// A 2025-11-25 upstream that forgot our session (it restarted) answers `404` to it:
/// a new session is opened once, and the request sent again in it, for a plain
/// request and a call alike. Before, every later request failed for good.
#[tokio::test]
async fn a_get_stream_that_is_404_is_not_a_forgotten_session_for_ever() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let opened = Arc::new(AtomicUsize::new(0));
    let o = Arc::clone(&opened);
    // A server whose only route is POST: its GET is 404 whatever the session.
    let (_link, _) = fake::http(move |req| {
        if req.verb != "POST" {
            return Some(fake::Reply::status(404, "text/plain", b"Cannot GET /mcp"));
        }
        if req.body["method"] == "initialize" {
            let id = &req.body["id"];
            let sid = format!("s{}", o.fetch_add(1, Ordering::SeqCst) + 1);
            let mut r = fake::Reply::json(&json!({"jsonrpc": "2.0", "id": id, "result": {
                "protocolVersion": "2025-11-25", "capabilities": {"tools": {"listChanged": true}},
                "serverInfo": {"name": "fake", "version": "1"}}}));
            r.headers.push(("mcp-session-id", sid));
            return Some(r);
        }
        None
    })
    .await;
    // The stream is tried, found 404, a session opened again once, found 404 again:
    // no stream. Not a new session every round of backoff.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(opened.load(Ordering::SeqCst), 2, "one reopen at most");
}

#[tokio::test]
async fn a_forgotten_session_is_opened_again() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};
    let valid: Arc<Mutex<Option<String>>> = Arc::default();
    let opened = Arc::new(AtomicUsize::new(0));
    let (v, o) = (Arc::clone(&valid), Arc::clone(&opened));
    let (link, _) = fake::http(move |req| {
        let id = &req.body["id"];
        let method = req.body["method"].as_str().unwrap_or_default();
        if method == "initialize" {
            let sid = format!("s{}", o.fetch_add(1, Ordering::SeqCst) + 1);
            *v.lock().unwrap() = Some(sid.clone());
            let mut r = fake::Reply::json(&json!({"jsonrpc": "2.0", "id": id, "result": {
                "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                "serverInfo": {"name": "fake", "version": "1"}}}));
            r.headers.push(("mcp-session-id", sid));
            return Some(r);
        }
        if req.header("mcp-session-id") != v.lock().unwrap().as_deref() {
            return Some(fake::Reply::status(404, "text/plain", b"no such session"));
        }
        let result = match method {
            "tools/list" => json!({"tools": []}),
            "tools/call" => json!({"content": []}),
            _ => return None,
        };
        Some(fake::Reply::json(
            &json!({"jsonrpc": "2.0", "id": id, "result": result}),
        ))
    })
    .await;
    assert_eq!(opened.load(Ordering::SeqCst), 1);
    let restart = || *valid.lock().unwrap() = None;

    restart();
    let listed = link.request("tools/list", json!({})).await;
    assert_eq!(listed.unwrap(), json!({"tools": []}));
    assert_eq!(opened.load(Ordering::SeqCst), 2);

    restart();
    let mut call = link.start("tools/call", json!({}), None).await.unwrap();
    let answer = call.next().await;
    assert!(matches!(&answer, Next::Answer(Ok(_))), "{answer:?}");
    assert_eq!(opened.load(Ordering::SeqCst), 3);

    let listed = link.request("tools/list", json!({})).await;
    assert_eq!(listed.unwrap(), json!({"tools": []}));
    assert_eq!(
        opened.load(Ordering::SeqCst),
        3,
        "no new session without a 404"
    );
}

/// An upstream that forgot our session and answers the `initialize` that would open a
/// new one with a JSON-RPC error: the request is refused saying so, never with the
/// error's message (the log has it). Before, the request failed with the upstream's
/// error itself ("error -32603: cannot open /srv/secret.db on ...").
#[tokio::test]
async fn a_new_session_refused_with_an_error_does_not_pass_it_on() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let opened = Arc::new(AtomicUsize::new(0));
    let o = Arc::clone(&opened);
    let (link, _) = fake::http(move |req| {
        let id = &req.body["id"];
        let method = req.body["method"].as_str().unwrap_or_default();
        if method == "initialize" {
            if o.fetch_add(1, Ordering::SeqCst) > 0 {
                return Some(fake::Reply::json(
                    &json!({"jsonrpc": "2.0", "id": id, "error": {
                    "code": -32603, "message": "cannot open /srv/secret.db on db-4.internal"}}),
                ));
            }
            let mut r = fake::Reply::json(&json!({"jsonrpc": "2.0", "id": id, "result": {
                "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                "serverInfo": {"name": "fake", "version": "1"}}}));
            r.headers.push(("mcp-session-id", "s1".to_owned()));
            return Some(r);
        }
        if req.verb == "POST" && method == "tools/list" {
            return Some(fake::Reply::status(404, "text/plain", b"no such session"));
        }
        None
    })
    .await;
    let listed = link.request("tools/list", json!({})).await;
    eprintln!("the request got: {listed:?}");
    assert_eq!(
        listed,
        Err(UpstreamError::Unavailable(
            "it forgot our session, and opening a new one failed (it answered an error)".into()
        ))
    );
    assert!(opened.load(Ordering::SeqCst) >= 2);
}

/// The upstream's requests on the event stream of a request that cannot take them are
/// answered at once, so the upstream does not wait on them: about a list or `prompts/get`
/// (no client to ask), and past what a call holds. Before, they were dropped and both
/// sides waited for their time limits.
#[tokio::test]
async fn requests_on_an_event_stream_that_cannot_be_passed_on_are_answered() {
    let posted = std::sync::Arc::new(std::sync::Mutex::new(Vec::<serde_json::Value>::new()));
    let seen = std::sync::Arc::clone(&posted);
    let (link, _) = fake::http(move |req| {
        if req.verb == "POST" && req.body.get("method").is_none() {
            seen.lock().unwrap().push(req.body.clone());
        }
        let (questions, ping) = match req.body["method"].as_str()? {
            "prompts/get" => (1, true),
            "tools/call" => (super::super::ongoing::ASKS_HELD + 2, false),
            _ => return None,
        };
        let asked: Vec<_> = (0..questions)
            .map(|n| {
                json!({"jsonrpc": "2.0", "id": format!("q{n}"), "method": "elicitation/create",
                    "params": {"message": "?", "requestedSchema": {"type": "object"}}})
            })
            .chain(ping.then(|| json!({"jsonrpc": "2.0", "id": "p", "method": "ping"})))
            .collect();
        Some(fake::Reply::events(&asked))
    })
    .await;
    let answers = |n: usize| async move {
        for _ in 0..250 {
            if posted.lock().unwrap().len() >= n {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let mut got = posted.lock().unwrap().clone();
        got.sort_by_key(|a| a["id"].to_string());
        got
    };

    let link = std::sync::Arc::new(link);
    let asking = tokio::spawn({
        let link = std::sync::Arc::clone(&link);
        async move { link.request("prompts/get", json!({"name": "p"})).await }
    });
    let got = answers.clone()(2).await;
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(got[0]["id"], "p");
    assert_eq!(got[0]["result"], json!({}), "{got:?}");
    assert_eq!(got[1]["id"], "q0");
    assert_eq!(got[1]["error"]["code"], -32601, "{got:?}");
    asking.abort();

    let call = link.start("tools/call", json!({}), None).await.unwrap();
    let got = answers(4).await;
    let refused: Vec<_> = got[2..]
        .iter()
        .map(|a| a["error"]["code"].clone())
        .collect();
    assert_eq!(refused, [json!(-32603), json!(-32603)], "{got:?}");
    drop(call);
}

/// The runtime's logs on this thread while the guard lives (a `current_thread` test: its
/// tasks run here too).
pub(super) fn capture_logs() -> (
    std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
    tracing::subscriber::DefaultGuard,
) {
    use tracing_subscriber::layer::SubscriberExt;
    struct To(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);
    impl std::io::Write for To {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let logs = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let to = std::sync::Arc::clone(&logs);
    let subscriber = tracing_subscriber::registry().with(
        tracing_subscriber::fmt::layer()
            .with_ansi(false)
            .with_writer(move || To(std::sync::Arc::clone(&to))),
    );
    (logs, tracing::subscriber::set_default(subscriber))
}

/// An answer whose id names no request waiting (another number, a string that is not
/// one of ours, `null`) is told at warn, naming its id, and dropped; the request still
/// waits for its own, which may come with its id written as a string. A request that
/// only ever gets answers to no one ends at its time limit, and leaves nothing behind.
/// Before, such answers were dropped silently, and one with our id as a string too, so
/// its request waited for its time limit.
#[tokio::test]
async fn an_answer_to_no_request_is_told_and_one_naming_ours_as_a_string_is_taken() {
    let (logs, _guard) = capture_logs();
    let (link, mut up) = fake::stdio().await;
    let asking = link.request("odd", json!({}));
    let answering = async {
        let sent = up.next().await;
        let id = sent["id"].as_u64().unwrap();
        up.send(&json!({"jsonrpc": "2.0", "id": id + 1000, "result": {"wrong": 1}}));
        up.send(&json!({"jsonrpc": "2.0", "id": "x", "result": {"wrong": 2}}));
        up.send(&json!({"jsonrpc": "2.0", "id": null,
            "error": {"code": -32700, "message": "Parse error"}}));
        up.send(&json!({"jsonrpc": "2.0", "id": id.to_string(), "result": {"ok": 1}}));
        id
    };
    let (answer, id) = tokio::time::timeout(Duration::from_secs(5), async {
        tokio::join!(asking, answering)
    })
    .await
    .expect("answered under its id as a string");
    assert_eq!(answer.unwrap(), json!({"ok": 1}));
    assert_eq!(fake::in_flight(&link), (0, 0));
    let told = String::from_utf8(logs.lock().unwrap().clone()).unwrap();
    for id in [(id + 1000).to_string(), "\"x\"".into(), "null".into()] {
        assert!(
            told.contains(&format!("answered id {id}, which no request waits for")),
            "{id}: {told}"
        );
    }
    assert!(told.contains("Parse error"), "{told}");

    let given_up = tokio::time::timeout(Duration::from_millis(200), async {
        let asking = link.request("odd", json!({}));
        let answering = async {
            let sent = up.next().await;
            let wrong = sent["id"].as_u64().unwrap() + 1;
            up.send(&json!({"jsonrpc": "2.0", "id": wrong, "result": {}}));
            std::future::pending::<()>().await;
        };
        tokio::join!(asking, answering)
    })
    .await;
    assert!(given_up.is_err());
    assert_eq!(fake::in_flight(&link), (0, 0));
    let cancel = up.next().await;
    assert_eq!(cancel["method"], "notifications/cancelled", "{cancel}");
    reads_on(&link, &mut up).await;
}

/// A stdio child that exits fails the request in flight at once, and is started again on
/// the next request, its handshake done again (followers are told). One that exits soon
/// after it was started is started again only after a wait (1 s, then 2 s, ...: requests
/// meanwhile are refused, saying so, and start nothing), and at once again after a
/// healthy run. (Paused clock: the waits pass as the test says.)
#[tokio::test(start_paused = true)]
async fn a_child_that_exited_is_started_again_and_one_that_keeps_exiting_waits() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let dead = Arc::new(AtomicBool::new(false));
    let (link, mut starts) = fake::restartable(Arc::clone(&dead)).await;
    let mut restarts = link.restarts();
    let mut up = starts.recv().await.unwrap();
    // One run ends: the next request, answered by the next run.
    async fn exits_with_a_request_in_flight(link: &super::Link, up: &mut fake::FakeStdio) {
        let asking = link.request("slow", json!({}));
        let exiting = async {
            up.next().await;
            up.exit();
        };
        let (answer, ()) = tokio::join!(asking, exiting);
        assert!(
            matches!(&answer, Err(UpstreamError::Unavailable(why)) if why.contains("exited")),
            "{answer:?}"
        );
    }
    async fn answered_by_a_new_run(
        link: &super::Link,
        starts: &mut tokio::sync::mpsc::UnboundedReceiver<fake::FakeStdio>,
    ) -> fake::FakeStdio {
        let asking = link.request("fine", json!({}));
        let answering = async {
            let mut up = starts.recv().await.unwrap();
            let sent = up.next().await;
            up.send(&json!({"jsonrpc": "2.0", "id": sent["id"], "result": {"ok": 1}}));
            up
        };
        let (answer, up) = tokio::join!(asking, answering);
        assert_eq!(answer.unwrap(), json!({"ok": 1}));
        up
    }
    exits_with_a_request_in_flight(&link, &mut up).await;
    assert!(!restarts.has_changed().unwrap());
    let mut up = answered_by_a_new_run(&link, &mut starts).await;
    assert!(restarts.has_changed().unwrap());
    restarts.borrow_and_update();

    // It exits at once after that start: refused for 1 s.
    exits_with_a_request_in_flight(&link, &mut up).await;
    let refused = link.request("x", json!({})).await;
    assert!(
        matches!(&refused, Err(UpstreamError::Unavailable(why)) if why.contains("started again in 1.0 s at the earliest")),
        "{refused:?}"
    );
    tokio::time::advance(Duration::from_millis(999)).await;
    assert!(link.request("x", json!({})).await.is_err());
    assert!(starts.try_recv().is_err(), "nothing started while it waits");
    // Started after 1 s, it exits at once (no handshake): refused for 2 s.
    dead.store(true, Ordering::SeqCst);
    tokio::time::advance(Duration::from_millis(1)).await;
    let failed = link.request("x", json!({})).await;
    assert!(
        matches!(&failed, Err(UpstreamError::Unavailable(why)) if why.contains("handshake failed")),
        "{failed:?}"
    );
    let refused = link.request("x", json!({})).await;
    assert!(
        matches!(&refused, Err(UpstreamError::Unavailable(why)) if why.contains("in 2.0 s")),
        "{refused:?}"
    );
    dead.store(false, Ordering::SeqCst);
    tokio::time::advance(Duration::from_secs(2)).await;
    let mut up = answered_by_a_new_run(&link, &mut starts).await;
    assert!(restarts.has_changed().unwrap());

    // A healthy run (30 s): started again at once.
    tokio::time::advance(Duration::from_secs(30)).await;
    exits_with_a_request_in_flight(&link, &mut up).await;
    answered_by_a_new_run(&link, &mut starts).await;
}

/// An answer to the upstream's request (a `ping` during a call, an elicitation's answer)
/// POSTed to an HTTP upstream that keeps the response open (an event stream that never
/// ends) is given up at the upstream's time limit, failing its call. Before, it was
/// waited on for ever, and the call with it, past `HttpOptions::timeout`.
#[tokio::test]
async fn an_answer_posted_to_an_http_upstream_that_never_takes_it_is_given_up() {
    let options = super::super::HttpOptions::new().timeout(Duration::from_secs(1));
    let (link, _) = fake::http_with(
        |req| {
            req.body
                .get("result")
                .is_some()
                .then(|| fake::Reply::events(&[]))
        },
        &options,
    )
    .await;
    let link = link.unwrap();
    let asked = super::super::routing::Asked {
        id: json!("q1"),
        request: json!({"method": "ping"}),
        from: None,
    };
    let answered =
        tokio::time::timeout(Duration::from_secs(5), link.respond(asked, Ok(json!({})))).await;
    assert!(
        matches!(answered, Ok(Err(UpstreamError::Timeout))),
        "{answered:?}"
    );
}

/// Connecting to an HTTP upstream that never finishes its response to
/// `notifications/initialized` (a JSON body left open) ends at its time limit. Before,
/// `Upstream::http_with` waited for ever.
#[tokio::test]
async fn connecting_to_an_http_upstream_that_holds_initialized_ends_at_its_time_limit() {
    let options = super::super::HttpOptions::new().timeout(Duration::from_secs(1));
    let held = |req: &fake::Req| {
        (req.body["method"] == "notifications/initialized").then(|| fake::Reply {
            hold: true,
            ..fake::Reply::status(200, "application/json", b"")
        })
    };
    let connected =
        tokio::time::timeout(Duration::from_secs(5), fake::http_with(held, &options)).await;
    assert!(
        matches!(&connected, Ok((Err(UpstreamError::Timeout), _))),
        "{:?}",
        connected.as_ref().map(|(l, _)| l.as_ref().map(drop))
    );
}

/// The cancellation of a call given up, POSTed to an HTTP upstream that never answers
/// it, is given up at the upstream's time limit: its task and connection go. Before,
/// each call given up left a task and a connection waiting for ever.
#[tokio::test]
async fn a_cancellation_an_http_upstream_never_answers_leaves_nothing_behind() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let held = Arc::new(AtomicUsize::new(0));
    let holding = Arc::clone(&held);
    let options = super::super::HttpOptions::new().timeout(Duration::from_secs(1));
    let (link, _) = fake::http_with(
        move |req| match req.body["method"].as_str() {
            Some("tools/call") => Some(fake::Reply::events(&[])),
            Some("notifications/cancelled") => Some(fake::Reply {
                silent: Some(Arc::clone(&holding)),
                ..fake::Reply::status(202, "text/plain", b"")
            }),
            _ => None,
        },
        &options,
    )
    .await;
    let link = link.unwrap();
    let call = link
        .start("tools/call", json!({"name": "hang"}), None)
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    drop(call);
    let mut waited = Duration::ZERO;
    while held.load(Ordering::SeqCst) == 0 && waited < Duration::from_secs(5) {
        tokio::time::sleep(Duration::from_millis(20)).await;
        waited += Duration::from_millis(20);
    }
    assert_eq!(held.load(Ordering::SeqCst), 1, "the cancellation came");
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(
        held.load(Ordering::SeqCst),
        0,
        "the cancellation's connection is still open"
    );
}

/// On stdio, the upstream's question and log message that come while a call and another
/// request (a `resources/read` of another client, say) are in flight are not the call's:
/// the wire does not say which request they are about, so the question is refused (the
/// upstream is told) and the log message not passed on. Before, only calls were counted,
/// and both went to the call's client, which could read what was meant for the other
/// request's, and answer it.
#[tokio::test]
async fn a_question_during_a_call_and_another_request_is_not_the_calls() {
    let (link, mut up) = fake::stdio().await;
    let mut call = link
        .start("tools/call", json!({"name": "slow"}), None)
        .await
        .unwrap();
    let sent = up.next().await;
    let reading = link.request("resources/read", json!({"uri": "x://secret"}));
    let answering = async {
        let read = up.next().await;
        assert_eq!(read["method"], "resources/read", "{read}");
        up.send(
            &json!({"jsonrpc": "2.0", "id": "q1", "method": "elicitation/create",
            "params": {"message": "share x://secret?", "requestedSchema": {"type": "object"}}}),
        );
        up.send(&json!({"jsonrpc": "2.0", "method": "notifications/message",
            "params": {"level": "info", "data": "reading x://secret"}}));
        let refused = up.next().await;
        up.send(&json!({"jsonrpc": "2.0", "id": read["id"], "result": {"contents": []}}));
        refused
    };
    let (read, refused) = tokio::join!(reading, answering);
    assert!(read.is_ok(), "{read:?}");
    assert_eq!(refused["id"], "q1", "{refused}");
    assert_eq!(refused["error"]["code"], -32603, "{refused}");

    // A poll of a task (`tasks/get`, a legacy task's) is no other request: a question
    // that comes meanwhile is still the call's.
    let polling = link.request("tasks/get", json!({"taskId": "t"}));
    let answering = async {
        let poll = up.next().await;
        assert_eq!(poll["method"], "tasks/get", "{poll}");
        up.send(
            &json!({"jsonrpc": "2.0", "id": "q2", "method": "elicitation/create",
            "params": {"message": "sure?", "requestedSchema": {"type": "object"}}}),
        );
        let asked = tokio::time::timeout(Duration::from_secs(5), call.next()).await;
        up.send(&json!({"jsonrpc": "2.0", "id": poll["id"], "result": {"status": "working"}}));
        asked
    };
    let (poll, asked) = tokio::join!(polling, answering);
    assert!(poll.is_ok(), "{poll:?}");
    assert!(
        matches!(&asked, Ok(Next::Asked(a)) if a.id == "q2"),
        "{asked:?}"
    );
    up.send(&json!({"jsonrpc": "2.0", "id": sent["id"], "result": {"content": []}}));
    let next = tokio::time::timeout(Duration::from_secs(5), call.next()).await;
    assert!(matches!(&next, Ok(Next::Answer(Ok(_)))), "{next:?}");
}

/// A legacy HTTP upstream whose change stream finds our session forgotten, and which
/// then never answers the `initialize` opening a new one, holds requests back at most
/// its time limit: once it answers again, so do requests. Before, the new session was
/// waited for with no limit, holding the lock every request waits on while one is
/// opened, so every later request of the link timed out, for good.
#[tokio::test]
async fn a_new_session_never_opened_does_not_hold_requests_for_good() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let opened = Arc::new(AtomicUsize::new(0));
    let options = super::super::HttpOptions::new().timeout(Duration::from_secs(1));
    let silent = Arc::new(AtomicUsize::new(0));
    let (link, _) = fake::http_with(
        move |req| {
            if req.verb == "GET" {
                // The change stream: our session is forgotten.
                return Some(fake::Reply::status(404, "text/plain", b""));
            }
            match req.body["method"].as_str() {
                Some("initialize") if opened.fetch_add(1, Ordering::SeqCst) == 0 => {
                    let hello = json!({"jsonrpc": "2.0", "id": req.body["id"], "result": {
                        "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                        "serverInfo": {"name": "fake", "version": "1"}}});
                    let mut reply = fake::Reply::json(&hello);
                    reply.headers.push(("mcp-session-id", "s1".into()));
                    Some(reply)
                }
                // Opening a new one: never answered.
                Some("initialize") => Some(fake::Reply {
                    silent: Some(Arc::clone(&silent)),
                    ..fake::Reply::status(200, "text/plain", b"")
                }),
                Some("tools/list") => Some(fake::Reply::json(
                    &json!({"jsonrpc": "2.0", "id": req.body["id"], "result": {"tools": []}}),
                )),
                _ => None,
            }
        },
        &options,
    )
    .await;
    let link = link.unwrap();
    let mut last = None;
    for _ in 0..5 {
        tokio::time::sleep(Duration::from_millis(500)).await;
        last = Some(link.request("tools/list", json!({})).await);
        if matches!(last, Some(Ok(_))) {
            break;
        }
    }
    assert!(matches!(last, Some(Ok(_))), "{last:?}");
}

/// An answer on an event stream whose media type is written in capitals
/// (`Text/Event-Stream`; media types are case-insensitive) is read as one. Before, the
/// stream, left open, was read as a JSON body to its end, and the request timed out.
#[tokio::test]
async fn an_event_stream_in_capitals_is_read_as_one() {
    let options = super::super::HttpOptions::new().timeout(Duration::from_secs(1));
    let (link, _) = fake::http_with(
        |req| {
            (req.body["method"] == "tools/list").then(|| {
                let answer = json!({"jsonrpc": "2.0", "id": req.body["id"],
                    "result": {"tools": []}});
                fake::Reply {
                    headers: vec![("content-type", "Text/Event-Stream".into())],
                    ..fake::Reply::events(&[answer])
                }
            })
        },
        &options,
    )
    .await;
    let answer = link.unwrap().request("tools/list", json!({})).await;
    assert_eq!(answer, Ok(json!({"tools": []})));
}

/// A legacy HTTP upstream that never answers the opening of its change stream (the GET)
/// is asked again after its time limit, so its list changes are heard once it answers.
/// Before, the first GET was waited on for ever, and no list change came again.
#[tokio::test]
async fn a_change_stream_never_answered_is_opened_again() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let (gets, silent) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let options = super::super::HttpOptions::new().timeout(Duration::from_secs(1));
    let (link, _) = fake::http_with(
        move |req| {
            if req.verb != "GET" {
                return None;
            }
            if gets.fetch_add(1, Ordering::SeqCst) == 0 {
                return Some(fake::Reply {
                    silent: Some(Arc::clone(&silent)),
                    ..fake::Reply::status(200, "text/event-stream", b"")
                });
            }
            let changed = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"});
            Some(fake::Reply::events(&[changed]))
        },
        &options,
    )
    .await;
    let link = link.unwrap();
    let mut changes = link.changes();
    let heard = tokio::time::timeout(Duration::from_secs(5), changes.changed()).await;
    assert!(matches!(heard, Ok(Ok(()))), "{heard:?}");
}

/// Progress on a call's event stream under a token the call was not given (another
/// request's, or made up) is not the call's: dropped, not passed to its client. Before,
/// every progress notification on the stream was passed on, whatever its token.
#[tokio::test]
async fn progress_under_a_token_never_given_is_not_passed_on() {
    let (link, _) = fake::http(|req| {
        (req.body["method"] == "tools/call").then(|| {
            let ours = &req.body["params"]["_meta"]["progressToken"];
            let progress = |token: &serde_json::Value, n: u32| {
                json!({"jsonrpc": "2.0", "method": "notifications/progress",
                    "params": {"progressToken": token, "progress": n, "message": format!("p{n}")}})
            };
            fake::Reply::events(&[
                progress(&json!("someone-else"), 1),
                progress(&json!(987_654), 2),
                progress(ours, 3),
                json!({"jsonrpc": "2.0", "id": req.body["id"], "result": {"content": []}}),
            ])
        })
    })
    .await;
    let mut call = link
        .start("tools/call", json!({"name": "t"}), None)
        .await
        .unwrap();
    let mut passed = Vec::new();
    loop {
        match tokio::time::timeout(Duration::from_secs(5), call.next()).await {
            Ok(Next::Progress(p)) => passed.push(p["message"].clone()),
            Ok(Next::Answer(a)) => {
                assert!(a.is_ok(), "{a:?}");
                break;
            }
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(passed, [json!("p3")]);
}

/// A request given up may still be running upstream (cancellation is advisory, and a
/// cancelled request need not be answered): while it may, a question or log message the
/// upstream sends during another client's call is not taken as that call's, since it may
/// be about the abandoned one (a question meant for its client would go to another, and
/// that client's answer back for the wrong call). Once its late answer comes, the next
/// question is the call's again. Before, a request was forgotten once given up, so the
/// next call took its questions.
#[tokio::test]
async fn a_question_after_a_request_given_up_is_not_taken_as_another_calls() {
    // As in `a_call_given_up_leaves_nothing_in_flight`: a late answer is logged.
    let (_logs, _guard) = capture_logs();
    let (link, mut up) = fake::stdio().await;
    let (abandoned, _) = given_up(&link, &mut up).await;
    fake::settled(&link).await;
    let mut call = link
        .start("tools/call", json!({"name": "other"}), None)
        .await
        .unwrap();
    let sent = up.next().await;
    up.send(
        &json!({"jsonrpc": "2.0", "id": "q1", "method": "elicitation/create",
        "params": {"message": "delete the repo?", "requestedSchema": {"type": "object"}}}),
    );
    let refused = up.next().await;
    assert_eq!(refused["id"], "q1", "{refused}");
    assert_eq!(refused["error"]["code"], -32603, "{refused}");
    let nothing = tokio::time::timeout(Duration::from_millis(200), call.next()).await;
    assert!(nothing.is_err(), "the call was asked: {nothing:?}");

    // Its late answer: it runs no more, and the next question is the call's.
    up.send(&json!({"jsonrpc": "2.0", "id": abandoned["id"], "result": {}}));
    up.send(
        &json!({"jsonrpc": "2.0", "id": "q2", "method": "elicitation/create",
        "params": {"message": "sure?", "requestedSchema": {"type": "object"}}}),
    );
    let asked = tokio::time::timeout(Duration::from_secs(5), call.next()).await;
    assert!(
        matches!(&asked, Ok(Next::Asked(a)) if a.id == "q2"),
        "{asked:?}"
    );
    up.send(&json!({"jsonrpc": "2.0", "id": sent["id"], "result": {"content": []}}));
    let answer = tokio::time::timeout(Duration::from_secs(5), call.next()).await;
    assert!(matches!(&answer, Ok(Next::Answer(Ok(_)))), "{answer:?}");
}

/// An HTTP upstream that echoes our request id as a string (`"7"` for 7), in a JSON body
/// or on an event stream, is understood, as on stdio. Before, the event stream's answer
/// was passed over (the request waited until the stream ended or its time ran out) and
/// the JSON one was taken for "the answer to another request".
#[tokio::test]
async fn an_http_answer_naming_our_id_as_a_string_is_taken() {
    let (link, _) = fake::http(|req| {
        let id = req.body["id"].as_u64()?.to_string();
        Some(match req.body["method"].as_str()? {
            "prompts/get" => fake::Reply::events(&[
                json!({"jsonrpc": "2.0", "id": id, "result": {"messages": []}}),
            ]),
            "resources/read" => {
                fake::Reply::json(&json!({"jsonrpc": "2.0", "id": id, "result": {"contents": []}}))
            }
            _ => return None,
        })
    })
    .await;
    let asked = link.request("prompts/get", json!({"name": "p"}));
    let answer = tokio::time::timeout(Duration::from_secs(5), asked)
        .await
        .expect("answered at once");
    assert_eq!(answer.unwrap(), json!({"messages": []}));
    let read = link
        .request("resources/read", json!({"uri": "x://a"}))
        .await;
    assert_eq!(read.unwrap(), json!({"contents": []}));
}

/// The revision an upstream answers `initialize` with must be one of that era (or
/// 2024-11-05): one that says `2026-07-28` there, or anything else, is not connected to,
/// instead of being taken as modern on a session-based exchange or sent back as the
/// `MCP-Protocol-Version` of every request. An earlier legacy revision is fine.
#[tokio::test]
async fn an_upstream_answering_initialize_with_an_unknown_version_is_refused() {
    for (version, ok) in [
        ("2026-07-28", false),
        ("banana", false),
        ("2025-06-18", true),
        ("2024-11-05", true),
    ] {
        let (link, _) = fake::http_with(
            move |req| {
                let id = req.body.get("id")?;
                (req.body["method"] == "initialize").then(|| {
                    fake::Reply::json(&json!({"jsonrpc": "2.0", "id": id, "result": {
                        "protocolVersion": version, "capabilities": {"tools": {}},
                        "serverInfo": {"name": "fake", "version": "1"}}}))
                })
            },
            &super::super::HttpOptions::new(),
        )
        .await;
        match link {
            Ok(link) => {
                assert!(ok, "connected to an upstream that said {version}");
                assert_eq!(link.version(), version);
            }
            Err(e) => {
                assert!(!ok, "{version}: {e}");
                assert!(e.to_string().contains("unknown protocol version"), "{e}");
            }
        }
    }
}

/// A plain request to an HTTP upstream (not a call: `resources/read`, `prompts/get`,
/// `tasks/get`, ...) given up before its answer (its time ran out, or its caller went) is
/// cancelled upstream, as a call is: a connection closed is no cancellation to a
/// Streamable HTTP server, which would work on. Before, only `tools/call` was cancelled.
#[tokio::test]
async fn a_plain_request_given_up_is_cancelled_at_an_http_upstream() {
    use std::sync::{Arc, Mutex};
    let seen: Arc<Mutex<Vec<serde_json::Value>>> = Arc::default();
    let log = Arc::clone(&seen);
    let (link, _) = fake::http(move |req| {
        log.lock().unwrap().push(req.body.clone());
        (req.body["method"] == "resources/read").then(|| fake::Reply::events(&[]))
    })
    .await;
    let gave_up = tokio::time::timeout(
        Duration::from_millis(200),
        link.request("resources/read", json!({"uri": "x://slow"})),
    )
    .await;
    assert!(gave_up.is_err());
    let t = std::time::Instant::now();
    loop {
        let seen = seen.lock().unwrap().clone();
        let read = seen.iter().find(|m| m["method"] == "resources/read");
        let cancel = seen
            .iter()
            .find(|m| m["method"] == "notifications/cancelled");
        if let (Some(read), Some(cancel)) = (read, cancel) {
            assert_eq!(cancel["params"]["requestId"], read["id"], "{cancel}");
            break;
        }
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "no cancellation: {seen:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // One answered is not cancelled.
    let before = seen.lock().unwrap().len();
    let r = link.request("prompts/get", json!({"name": "p"})).await;
    assert!(r.is_err(), "the fake has no prompts: {r:?}");
    tokio::time::sleep(Duration::from_millis(200)).await;
    let after = seen.lock().unwrap()[before..].to_vec();
    assert!(
        !after
            .iter()
            .any(|m| m["method"] == "notifications/cancelled"),
        "{after:?}"
    );
}

/// An upstream that says its lists changed over and over (each time with other lists) is
/// read at most once a second, not once per notification: each read is up to four lists,
/// and each difference rebuilds the catalog and tells every client. Before, a read
/// followed every notification 50 ms later.
#[tokio::test]
async fn a_flood_of_list_changes_is_read_at_most_once_a_second() {
    let (link, mut up) = fake::stdio().await;
    let upstream = super::super::Upstream::new(link);
    let answering = async {
        let sent = up.next().await;
        up.send(&json!({"jsonrpc": "2.0", "id": sent["id"], "result": {"tools": []}}));
    };
    let (items, ()) = tokio::join!(upstream.items(), answering);
    let server = crate::Server::builder("gateway", "1.0")
        .mount("up", items.unwrap())
        .build()
        .unwrap();
    let _following = upstream.follow(&server, "up");
    let mut reads = 0;
    let until = tokio::time::Instant::now() + Duration::from_secs(3);
    let mut n = 0;
    while tokio::time::Instant::now() < until {
        n += 1;
        up.send(&json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}));
        if let Ok(sent) = tokio::time::timeout(Duration::from_millis(10), up.next()).await
            && sent["method"] == "tools/list"
        {
            reads += 1;
            let tool = json!({"name": format!("t{n}"), "inputSchema": {"type": "object"}});
            up.send(&json!({"jsonrpc": "2.0", "id": sent["id"], "result": {"tools": [tool]}}));
        }
    }
    assert!((1..=4).contains(&reads), "{reads} reads in 3 s");
}
