//! A stdio child started again, against fake upstreams (`fake.rs`): what belonged to the
//! run that ended stays with it; and one that is not started again.

use super::super::fake;
use super::super::ongoing::Next;
use super::UpstreamError;
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// An answer to a request the child sent during a call goes to the run that asked: once
/// that run ended, nowhere (an error says it is gone), even when the new run numbers its
/// own requests the same way. Before, it went to the run now, which took it for the
/// answer to its own request 0.
#[tokio::test]
async fn an_answer_to_a_run_that_ended_goes_nowhere() {
    let (link, mut starts) = fake::restartable(Arc::new(AtomicBool::new(false))).await;
    let mut up = starts.recv().await.unwrap();
    let mut call = link
        .start("tools/call", json!({"name": "ask"}), None)
        .await
        .unwrap();
    up.next().await;
    up.send(
        &json!({"jsonrpc": "2.0", "id": 0, "method": "elicitation/create",
        "params": {"message": "sure?", "requestedSchema": {"type": "object"}}}),
    );
    let asked = match tokio::time::timeout(Duration::from_secs(5), call.next()).await {
        Ok(Next::Asked(a)) => a,
        other => panic!("{other:?}"),
    };
    up.exit();
    let ended = tokio::time::timeout(Duration::from_secs(5), call.next()).await;
    assert!(matches!(&ended, Ok(Next::Answer(Err(_)))), "{ended:?}");
    // A new run, started by the next request.
    let asking = link.request("fine", json!({}));
    let answering = async {
        let mut up = starts.recv().await.unwrap();
        let sent = up.next().await;
        up.send(&json!({"jsonrpc": "2.0", "id": sent["id"], "result": {}}));
        up
    };
    let (answer, mut up) = tokio::join!(asking, answering);
    answer.unwrap();
    let answered = link.respond(asked, Ok(json!({"action": "accept"}))).await;
    assert!(
        matches!(&answered, Err(UpstreamError::Unavailable(why)) if why.contains("exited")),
        "{answered:?}"
    );
    // The new run sees the next request, not the answer.
    let asking = link.request("after", json!({}));
    let seeing = async {
        let sent = up.next().await;
        up.send(&json!({"jsonrpc": "2.0", "id": sent["id"], "result": {}}));
        sent
    };
    let (answer, sent) = tokio::join!(asking, seeing);
    answer.unwrap();
    assert_eq!(sent["method"], "after", "{sent}");
}

/// A start given up by the request that began it (its caller went) goes on, and the next
/// request takes the run it started: one start, not one per request. Before, the new
/// child was killed with the request, and its end was not counted, so each request
/// started another, with no wait.
#[tokio::test]
async fn a_start_outlives_the_request_that_began_it() {
    let (link, up, mut starts) = fake::held_starts(Duration::from_secs(60)).await;
    up.exit();
    tokio::time::sleep(Duration::from_millis(50)).await;
    let given_up =
        tokio::time::timeout(Duration::from_millis(100), link.request("first", json!({}))).await;
    assert!(given_up.is_err());
    // The child started is slow: it answers its handshake only now.
    let theirs = tokio::time::timeout(Duration::from_secs(5), starts.recv())
        .await
        .unwrap()
        .unwrap();
    let mut up = fake::serve(theirs);
    super::tests::reads_on(&link, &mut up).await;
    assert!(starts.try_recv().is_err(), "started once");
}

/// Waiting for a child started again counts toward a request's time limit: a start that
/// hangs fails the request at its limit, saying so. Before, each request of the new
/// run's handshake had the whole limit, and the request another one after them.
#[tokio::test(start_paused = true)]
async fn a_request_waits_for_a_start_no_longer_than_its_limit() {
    let patience = Duration::from_secs(10);
    let (link, up, mut starts) = fake::held_starts(patience).await;
    up.exit();
    tokio::time::sleep(Duration::from_millis(50)).await;
    let began = tokio::time::Instant::now();
    let answer = link.request("x", json!({})).await;
    assert_eq!(began.elapsed(), patience);
    assert!(
        matches!(&answer, Err(UpstreamError::Unavailable(why)) if why.contains("being started again")),
        "{answer:?}"
    );
    drop(starts.recv().await);
}

/// Only an answer (`result` or `error`) under an id never sent is told at warn, and at
/// most once in 10 s (the next warning counts the others); a late answer to a request
/// given up, and JSON that is no message (`1`, `[]`, a JSON log line), at debug. Before,
/// each of these was a warning.
#[tokio::test]
async fn only_answers_to_no_request_are_warned_of_and_seldom() {
    let (logs, _guard) = super::tests::capture_logs();
    let (link, mut up) = fake::stdio().await;
    let (sent, _) = super::tests::given_up(&link, &mut up).await;
    up.send(&json!({"jsonrpc": "2.0", "id": sent["id"], "result": {"late": 1}}));
    for line in [
        json!(1),
        json!([]),
        json!({"level": "info", "msg": "hi", "id": 3}),
    ] {
        up.send(&line);
    }
    super::tests::reads_on(&link, &mut up).await;
    let told = String::from_utf8(logs.lock().unwrap().clone()).unwrap();
    assert!(!told.contains("WARN"), "{told}");
    assert!(told.contains("given up already: dropped"), "{told}");
    up.send(&json!({"jsonrpc": "2.0", "id": 9000, "result": {}}));
    up.send(&json!({"jsonrpc": "2.0", "id": 9001, "result": {}}));
    super::tests::reads_on(&link, &mut up).await;
    let told = String::from_utf8(logs.lock().unwrap().clone()).unwrap();
    let warned: Vec<_> = told.lines().filter(|l| l.contains("WARN")).collect();
    assert_eq!(warned.len(), 1, "{told}");
    assert!(warned[0].contains("answered id 9000"), "{told}");
}

/// `Upstream::follow` of a stdio upstream that is not started again stops once its run
/// ended: the next read of its lists fails, one warning says it is no longer followed,
/// and no read is tried again. Were it not to stop, it would try again after 1 s,
/// doubling up to 30 s, warning each time, for as long as the server runs.
#[tokio::test(start_paused = true)]
async fn following_an_upstream_not_started_again_stops_with_one_warning() {
    let (logs, _guard) = super::tests::capture_logs();
    let (link, mut up) = fake::stdio().await;
    let upstream = super::super::Upstream::new(link);
    // Its lists are read again in 1 s (their `ttlMs`).
    let answering = async {
        let sent = up.next().await;
        up.send(&json!({"jsonrpc": "2.0", "id": sent["id"],
            "result": {"tools": [], "ttlMs": 1000}}));
    };
    let (items, ()) = tokio::join!(upstream.items(), answering);
    let server = crate::Server::builder("gateway", "1.0")
        .mount("up", items.unwrap())
        .build()
        .unwrap();
    let following = upstream.follow(&server, "up");
    up.exit();
    tokio::time::sleep(Duration::from_secs(300)).await;
    assert!(following.is_finished(), "still following");
    let told = String::from_utf8(logs.lock().unwrap().clone()).unwrap();
    let warned: Vec<_> = told
        .lines()
        .filter(|l| l.contains("WARN") && l.contains("reading the upstream's lists"))
        .collect();
    assert_eq!(warned.len(), 1, "{told}");
    assert!(warned[0].contains("it is no longer followed"), "{told}");
}

/// A link whose child exits and is started again answering `initialize` with `version`:
/// what a request then gets, and the log meanwhile.
async fn started_again_in(
    version: &'static str,
) -> (Result<serde_json::Value, UpstreamError>, String) {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let (logs, _guard) = super::tests::capture_logs();
    let (link, up, mut starts) = fake::held_starts(Duration::from_secs(5)).await;
    up.exit();
    tokio::time::sleep(Duration::from_millis(50)).await;
    let serving = tokio::spawn(async move {
        let theirs = starts.recv().await.unwrap();
        let (read, mut write) = tokio::io::split(theirs);
        let mut lines = BufReader::new(read).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let msg: serde_json::Value = serde_json::from_str(&line).unwrap();
            let reply = match msg["method"].as_str() {
                Some("server/discover") => json!({"jsonrpc": "2.0", "id": msg["id"],
                    "error": {"code": -32601, "message": "Method not found"}}),
                Some("initialize") => json!({"jsonrpc": "2.0", "id": msg["id"], "result": {
                    "protocolVersion": version,
                    "capabilities": {}, "serverInfo": {"name": "fake", "version": "2"}}}),
                _ => continue,
            };
            let mut bytes = reply.to_string().into_bytes();
            bytes.push(b'\n');
            if write.write_all(&bytes).await.is_err() {
                return;
            }
        }
    });
    let answer = link.request("x", json!({})).await;
    serving.abort();
    let told = String::from_utf8(logs.lock().unwrap().clone()).unwrap();
    (answer, told)
}

/// A child started again that names no revision in its handshake: the request is refused
/// saying so, never with what the child named (the log has it, at most 200 characters of
/// it). Before, the client read the child's `protocolVersion` whatever it held.
#[tokio::test]
async fn a_child_started_again_in_another_revision_is_refused_without_its_words() {
    let (answer, told) = started_again_in("1999-01-01 via db-8.internal marker-44c2").await;
    assert_eq!(
        answer,
        Err(UpstreamError::Unavailable(
            "started again, its handshake failed: an unknown protocol version".into()
        ))
    );
    assert!(
        told.contains("with the protocol version \"1999-01-01 via db-8.internal marker-44c2\""),
        "{told}"
    );
}

/// A child started again in another revision than the one the link speaks (a known one:
/// 2025-06-18 where it spoke 2025-11-25) is refused, naming the link's revision.
#[tokio::test]
async fn a_child_started_again_in_another_known_revision_is_refused_naming_the_links() {
    let (answer, told) = started_again_in("2025-06-18").await;
    assert_eq!(
        answer,
        Err(UpstreamError::Unavailable(
            "started again, it speaks a revision other than 2025-11-25, which it spoke when \
             it was connected"
                .into()
        ))
    );
    assert!(told.contains("it speaks revision 2025-06-18"), "{told}");
}
