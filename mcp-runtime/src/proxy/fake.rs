//! Fake upstreams for the tests of the client side: a 2025-11-25 server on a pipe whose
//! every line after the handshake the test reads, and which writes whatever bytes the
//! test gives it (one link to it, or a link that starts a new one each time the last
//! exited, as a stdio child is started again), and one over HTTP.

use super::link::{DEFAULT_UPSTREAM_TIMEOUT, Link, Pipes, Spawn};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
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
    /// Cancelled, it is gone: its pipe closes.
    gone: CancellationToken,
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

    /// Exits, as a child would: its end of the pipe closes.
    pub(super) fn exit(&self) {
        self.gone.cancel();
    }
}

/// A fake 2025-11-25 upstream on `theirs` (it knows no `server/discover`, and offers
/// tools).
pub(super) fn serve(theirs: tokio::io::DuplexStream) -> FakeStdio {
    let (their_read, mut their_write) = tokio::io::split(theirs);
    let (seen_tx, seen) = mpsc::unbounded_channel();
    let (say, mut said) = mpsc::unbounded_channel::<Vec<u8>>();
    let gone = CancellationToken::new();
    let ended = gone.clone();
    tokio::spawn(async move {
        while let Some(bytes) = tokio::select! {
            b = said.recv() => b,
            () = ended.cancelled() => None,
        } {
            if their_write.write_all(&bytes).await.is_err() {
                return;
            }
        }
    });
    let (answers, ended) = (say.clone(), gone.clone());
    tokio::spawn(async move {
        let mut lines = BufReader::new(their_read).lines();
        while let Some(Ok(Some(line))) = tokio::select! {
            l = lines.next_line() => Some(l),
            () = ended.cancelled() => None,
        } {
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
    FakeStdio { seen, say, gone }
}

/// A link to a fake 2025-11-25 upstream on a pipe ([`serve`]).
pub(super) async fn stdio() -> (Link, FakeStdio) {
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    let up = serve(theirs);
    let (our_read, our_write) = tokio::io::split(ours);
    let link = Link::pipes(our_read, our_write, CancellationToken::new())
        .await
        .unwrap();
    (link, up)
}

/// A link to fake upstreams started again as a child is when one exits: the far end of
/// each start comes on the receiver. While `dead` is set, a start exits at once.
pub(super) async fn restartable(
    dead: Arc<AtomicBool>,
) -> (Link, mpsc::UnboundedReceiver<FakeStdio>) {
    let (started, starts) = mpsc::unbounded_channel();
    let spawn: Spawn = Arc::new(move || {
        let (ours, theirs) = tokio::io::duplex(1 << 16);
        if dead.load(Ordering::SeqCst) {
            drop(theirs);
        } else {
            let _ = started.send(serve(theirs));
        }
        let (read, write) = tokio::io::split(ours);
        Ok(Pipes {
            read: Box::new(read),
            write: Box::new(write),
            child: None,
        })
    });
    let first = spawn().unwrap();
    let limit = DEFAULT_UPSTREAM_TIMEOUT;
    let link = Link::stdio(first, Some(spawn), "fake".into(), limit, limit)
        .await
        .unwrap();
    (link, starts)
}

/// A link to a fake upstream whose later starts are handed to the test as they are (the
/// far end of the pipe, served by nobody until the test does: [`serve`]); requests have
/// `patience`.
pub(super) async fn held_starts(
    patience: Duration,
) -> (
    Link,
    FakeStdio,
    mpsc::UnboundedReceiver<tokio::io::DuplexStream>,
) {
    let (started, starts) = mpsc::unbounded_channel();
    let spawn: Spawn = Arc::new(move || {
        let (ours, theirs) = tokio::io::duplex(1 << 16);
        let _ = started.send(theirs);
        let (read, write) = tokio::io::split(ours);
        Ok(Pipes {
            read: Box::new(read),
            write: Box::new(write),
            child: None,
        })
    });
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    let up = serve(theirs);
    let (read, write) = tokio::io::split(ours);
    let first = Pipes {
        read: Box::new(read),
        write: Box::new(write),
        child: None,
    };
    let link = Link::stdio(first, Some(spawn), "fake".into(), patience, patience)
        .await
        .unwrap();
    (link, up, starts)
}

/// How many requests of a stdio link wait for an answer, and how many calls take the
/// upstream's requests.
pub(super) fn in_flight(link: &Link) -> (usize, usize) {
    let session = link.live().expect("a stdio link");
    let pending = session.pending.lock().unwrap().len();
    let askers = session.askers.lock().unwrap().len();
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

/// A request to a [`http`] fake: its HTTP method, headers (names in lower case) and body.
#[derive(Debug, Clone)]
pub(super) struct Req {
    pub(super) verb: String,
    pub(super) headers: Vec<(String, String)>,
    pub(super) body: Value,
}

impl Req {
    /// The value of the header `name` (lower case), if it came.
    pub(super) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// What a [`http`] fake answers: a status, headers and a body, then (`hold`) the
/// connection kept open, the body never ending; or (`silent`: the connections held so,
/// counted while they are) nothing at all, the connection kept open until the client
/// goes.
pub(super) struct Reply {
    pub(super) status: u16,
    pub(super) headers: Vec<(&'static str, String)>,
    pub(super) body: Vec<u8>,
    pub(super) hold: bool,
    pub(super) silent: Option<Arc<std::sync::atomic::AtomicUsize>>,
}

impl Reply {
    /// `200` with `msg` as JSON.
    pub(super) fn json(msg: &Value) -> Reply {
        Reply::status(200, "application/json", msg.to_string().as_bytes())
    }

    /// `status` with `body` of the content type `ty`.
    pub(super) fn status(status: u16, ty: &str, body: &[u8]) -> Reply {
        Reply {
            status,
            headers: vec![("content-type", ty.to_owned())],
            body: body.to_vec(),
            hold: false,
            silent: None,
        }
    }

    /// `200` and an event stream with `msgs` as events, left open.
    pub(super) fn events(msgs: &[Value]) -> Reply {
        let body: String = msgs.iter().map(|m| format!("data: {m}\n\n")).collect();
        Reply {
            hold: true,
            ..Reply::status(200, "text/event-stream", body.as_bytes())
        }
    }
}

/// A fake 2025-11-25 HTTP upstream, and a link to it. `answer` answers what it will (its
/// `Some`); the rest gets what a plain server gives: the GET stream `405`,
/// `server/discover` an error, `initialize` a result, other notifications and answers
/// `202`, other requests `-32601`.
pub(super) async fn http<F>(answer: F) -> (Link, std::net::SocketAddr)
where
    F: Fn(&Req) -> Option<Reply> + Send + Sync + 'static,
{
    let (link, addr) = http_with(answer, &super::HttpOptions::new()).await;
    (link.unwrap(), addr)
}

/// Like [`http`], the link made with `options`, or why it could not be.
pub(super) async fn http_with<F>(
    answer: F,
    options: &super::HttpOptions,
) -> (Result<Link, super::UpstreamError>, std::net::SocketAddr)
where
    F: Fn(&Req) -> Option<Reply> + Send + Sync + 'static,
{
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let answer = std::sync::Arc::new(answer);
    tokio::spawn(async move {
        while let Ok((conn, _)) = listener.accept().await {
            let answer = std::sync::Arc::clone(&answer);
            tokio::spawn(async move { serve_one(conn, &*answer).await });
        }
    });
    let link = Link::http(&format!("http://{addr}/mcp"), options).await;
    (link, addr)
}

/// One request on `conn`, answered; the connection is closed after it (or held).
async fn serve_one(
    mut conn: tokio::net::TcpStream,
    answer: &(dyn Fn(&Req) -> Option<Reply> + Sync),
) {
    use tokio::io::AsyncReadExt;
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let mut b = [0u8; 1];
        if conn.read_exact(&mut b).await.is_err() {
            return;
        }
        head.push(b[0]);
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let mut lines = head.split("\r\n");
    let verb = lines
        .next()
        .and_then(|l| l.split(' ').next())
        .unwrap_or_default()
        .to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let len = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = vec![0u8; len];
    if conn.read_exact(&mut body).await.is_err() {
        return;
    }
    let req = Req {
        verb,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    };
    let reply = answer(&req).unwrap_or_else(|| plain(&req));
    if let Some(held) = &reply.silent {
        held.fetch_add(1, Ordering::SeqCst);
        let mut sink = [0u8; 64];
        while conn.read(&mut sink).await.is_ok_and(|n| n > 0) {}
        held.fetch_sub(1, Ordering::SeqCst);
        return;
    }
    let mut out = format!("HTTP/1.1 {} Fake\r\n", reply.status);
    for (k, v) in &reply.headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    if !reply.hold {
        out.push_str(&format!("content-length: {}\r\n", reply.body.len()));
    }
    out.push_str("connection: close\r\n\r\n");
    let mut out = out.into_bytes();
    out.extend_from_slice(&reply.body);
    if conn.write_all(&out).await.is_err() {
        return;
    }
    if reply.hold {
        // Open until the client goes.
        let mut sink = [0u8; 64];
        while conn.read(&mut sink).await.is_ok_and(|n| n > 0) {}
    }
}

/// What a plain 2025-11-25 server answers.
fn plain(req: &Req) -> Reply {
    let msg = &req.body;
    if req.verb != "POST" {
        return Reply::status(405, "text/plain", b"");
    }
    match (msg["method"].as_str(), msg.get("id")) {
        (Some("initialize"), Some(id)) => Reply::json(&json!({"jsonrpc": "2.0", "id": id,
            "result": {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                "serverInfo": {"name": "fake", "version": "1"}}})),
        (Some(_), Some(id)) => Reply::json(&json!({"jsonrpc": "2.0", "id": id,
            "error": {"code": -32601, "message": "Method not found"}})),
        _ => Reply::status(202, "text/plain", b""),
    }
}
