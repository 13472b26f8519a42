//! Fake upstreams for the tests of the client side: a 2025-11-25 server on a pipe whose
//! every line after the handshake the test reads, and which writes whatever bytes the
//! test gives it.

use super::link::{Link, Wire};
use serde_json::{Value, json};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// The far end of a [`stdio`] link.
pub(super) struct FakeStdio {
    /// What the link sent after the handshake.
    pub(super) seen: mpsc::UnboundedReceiver<Value>,
    /// Bytes to write to the link, as they are.
    pub(super) say: mpsc::UnboundedSender<Vec<u8>>,
}

impl FakeStdio {
    /// Writes `msg` as one line.
    pub(super) fn send(&self, msg: &Value) {
        let mut line = msg.to_string().into_bytes();
        line.push(b'\n');
        self.say.send(line).unwrap();
    }

    /// The next message the link sent (within 5 s).
    pub(super) async fn next(&mut self) -> Value {
        tokio::time::timeout(Duration::from_secs(5), self.seen.recv())
            .await
            .expect("a message within 5 s")
            .expect("the link is still there")
    }
}

/// A link to a fake 2025-11-25 upstream on a pipe (it knows no `server/discover`, and
/// offers tools).
pub(super) async fn stdio() -> (Link, FakeStdio) {
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    let (their_read, mut their_write) = tokio::io::split(theirs);
    let (our_read, our_write) = tokio::io::split(ours);
    let (seen_tx, seen) = mpsc::unbounded_channel();
    let (say, mut said) = mpsc::unbounded_channel::<Vec<u8>>();
    tokio::spawn(async move {
        while let Some(bytes) = said.recv().await {
            if their_write.write_all(&bytes).await.is_err() {
                return;
            }
        }
    });
    let answers = say.clone();
    tokio::spawn(async move {
        let mut lines = BufReader::new(their_read).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let Ok(msg) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            let reply = match msg["method"].as_str() {
                Some("server/discover") => json!({"jsonrpc": "2.0", "id": msg["id"],
                    "error": {"code": -32601, "message": "Method not found"}}),
                Some("initialize") => json!({"jsonrpc": "2.0", "id": msg["id"], "result": {
                    "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                    "serverInfo": {"name": "fake", "version": "1"}}}),
                Some("notifications/initialized") => continue,
                _ => {
                    if seen_tx.send(msg).is_err() {
                        return;
                    }
                    continue;
                }
            };
            let mut line = reply.to_string().into_bytes();
            line.push(b'\n');
            let _ = answers.send(line);
        }
    });
    let link = Link::pipes(our_read, our_write, None, CancellationToken::new())
        .await
        .unwrap();
    (link, FakeStdio { seen, say })
}

/// How many requests of a stdio link wait for an answer, and how many calls take the
/// upstream's requests.
pub(super) fn in_flight(link: &Link) -> (usize, usize) {
    let Wire::Stdio {
        pending, askers, ..
    } = &link.wire
    else {
        panic!("not a stdio link")
    };
    let pending = pending.lock().unwrap().len();
    let askers = askers.lock().unwrap().len();
    (pending, askers)
}

/// Waits (up to 5 s) until `link` has nothing in flight.
pub(super) async fn settled(link: &Link) {
    for _ in 0..250 {
        if in_flight(link) == (0, 0) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("still in flight: {:?}", in_flight(link));
}
