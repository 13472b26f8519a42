//! Tools as tasks (the `io.modelcontextprotocol/tasks` extension) over real transports:
//! two instances sharing one task store (one on HTTP, one on the stdio transport over a
//! pipe) hand a task back and forth; a child process on stdio runs the conformance
//! fixtures; a listen stream reports task statuses; an expired task answers `-32602`.

mod common;

use common::*;
use mcp_runtime::config::Tasks;
use mcp_runtime::store::MemoryTaskStore;
use mcp_runtime::{Context, Error, Form, Input, Progress, Server, State, tool, tools};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

const EXT: &str = "io.modelcontextprotocol/tasks";

#[derive(serde::Deserialize, schemars::JsonSchema, Form)]
struct Approval {
    /// Approve?
    ok: bool,
}

/// Ships an order once someone approves it (asked from inside the task).
#[tool(task = "optional")]
async fn ship(order: String, input: Input, progress: Progress) -> Result<String, Error> {
    progress.report(1.0, Some(2.0), Some("waiting for approval"));
    let approval: Approval = input
        .elicit("approval", format!("Ship {order}?"))
        .await?
        .accepted()?;
    Ok(if approval.ok {
        format!("shipped {order}")
    } else {
        format!("held {order}")
    })
}

/// What the long job saw.
#[derive(Default)]
struct Seen {
    started: AtomicBool,
    cancelled: AtomicBool,
}

/// Runs until cancelled (a minute at most), noting that its token fired.
#[tool(task = "required")]
async fn long_job(cx: Context, seen: State<Arc<Seen>>) -> &'static str {
    seen.started.store(true, Ordering::SeqCst);
    let token = cx.cancellation();
    tokio::select! {
        () = token.cancelled() => {
            seen.cancelled.store(true, Ordering::SeqCst);
            "stopped"
        }
        () = tokio::time::sleep(Duration::from_secs(60)) => "finished",
    }
}

fn server(tasks: Tasks, seen: Arc<Seen>) -> Server {
    Server::builder("shipping", "1.0")
        .tools(tools![ship, long_job])
        .state(seen)
        .request_state(mcp_runtime::config::RequestState::single_instance())
        .tasks(tasks)
        .build()
        .unwrap()
}

fn caps() -> Value {
    json!({ "elicitation": {}, "extensions": { EXT: {} } })
}

/// A request declaring the extension (or not).
fn req(id: u64, method: &str, params: Value, tasks: bool) -> Value {
    let mut body = request(json!(id), method, params);
    if tasks {
        body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = caps();
    }
    body
}

/// The empty acknowledgement of `tasks/update` and `tasks/cancel`: a complete result with
/// no task fields.
fn assert_ack(msg: &Value) {
    let r = &msg["result"];
    assert_eq!(r["resultType"], "complete", "{msg}");
    let fields: Vec<&String> = r.as_object().unwrap().keys().collect();
    assert_eq!(fields, ["_meta", "resultType"], "{msg}");
}

/// POSTs over HTTP without blocking the runtime.
async fn http(addr: SocketAddr, body: Value) -> Response {
    tokio::task::spawn_blocking(move || post(addr, &body))
        .await
        .unwrap()
}

/// The stdio transport of an in-process instance, over a pipe.
struct Pipe {
    write: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    lines: tokio::io::Lines<BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
}

impl Pipe {
    fn serve(server: Server) -> Pipe {
        let (ours, theirs) = tokio::io::duplex(1 << 16);
        let (their_read, their_write) = tokio::io::split(theirs);
        tokio::spawn(server.serve_io(their_read, their_write, std::future::pending()));
        let (read, write) = tokio::io::split(ours);
        Pipe {
            write,
            lines: BufReader::new(read).lines(),
        }
    }

    async fn send(&mut self, body: &Value) {
        let line = format!("{body}\n");
        self.write.write_all(line.as_bytes()).await.unwrap();
    }

    /// The next message (within 10 s).
    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(10), self.lines.next_line())
            .await
            .expect("a message within 10 s")
            .unwrap()
            .expect("the stream stays open");
        serde_json::from_str(&line).unwrap()
    }

    /// Sends a request and returns its response (skipping other messages).
    async fn call(&mut self, body: Value) -> Value {
        self.send(&body).await;
        loop {
            let msg = self.next().await;
            if msg["id"] == body["id"] && msg.get("method").is_none() {
                return msg;
            }
        }
    }

    /// Polls `tasks/get` every 10 ms (ids from `first_id`) until the task's status is
    /// `status`, `tries` times at most; the last result, whichever it is.
    async fn poll(&mut self, task_id: &str, status: &str, first_id: u64, tries: u64) -> Value {
        let mut last = Value::Null;
        for i in 0..tries {
            let get = req(
                first_id + i,
                "tasks/get",
                json!({ "taskId": task_id }),
                true,
            );
            last = self.call(get).await["result"].take();
            if last["status"] == status {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        last
    }
}

/// Polls `tasks/get` over HTTP until `done` holds (10 s at most).
async fn poll_http(addr: SocketAddr, task_id: &str, done: impl Fn(&Value) -> bool) -> Value {
    for i in 0..1000u64 {
        let r = http(
            addr,
            req(9000 + i, "tasks/get", json!({ "taskId": task_id }), true),
        )
        .await;
        let task = r.json()["result"].clone();
        if done(&task) {
            return task;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("task {task_id} did not get there in 10 s");
}

/// Serves `server` over HTTP, starts its tool `name` as a task and polls it until it is
/// no longer working; the task as `tasks/get` then shows it.
async fn run_to_its_end(server: Server, name: &str) -> Value {
    let a = serve_in_background(server.http());
    let created = http(a, req(1, "tools/call", json!({ "name": name }), true)).await;
    let id = created.json()["result"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    poll_http(a, &id, |t| t["status"] != "working").await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_made_on_one_instance_is_answered_and_cancelled_through_another() {
    let store = Arc::new(MemoryTaskStore::new());
    let shared = Tasks::default().store(Arc::clone(&store));
    let seen = Arc::new(Seen::default());
    let a = serve_in_background(server(shared.clone(), Arc::clone(&seen)).http());
    let mut b = Pipe::serve(server(shared, Arc::clone(&seen)));

    // Created on A (HTTP): the handle comes at once, and B (stdio) finds the task.
    let created = http(
        a,
        req(
            1,
            "tools/call",
            json!({"name": "ship", "arguments": {"order": "#42"}}),
            true,
        ),
    )
    .await;
    assert_eq!(created.status, 200);
    let handle = created.json()["result"].clone();
    assert_eq!(handle["resultType"], "task", "{handle}");
    for absent in [
        "result",
        "error",
        "inputRequests",
        "requestState",
        "content",
    ] {
        assert!(handle.get(absent).is_none(), "{absent} in {handle}");
    }
    let id = handle["taskId"].as_str().unwrap().to_owned();
    assert_eq!(id.len(), 36, "a UUID: {id}");
    let on_b = b
        .call(req(2, "tasks/get", json!({ "taskId": id }), true))
        .await;
    assert_eq!(on_b["result"]["taskId"], id.as_str());
    assert_eq!(on_b["result"]["resultType"], "complete");

    // A listen stream on B watches the task.
    b.send(&req(
        3,
        "subscriptions/listen",
        json!({"notifications": {"taskIds": [id, "no-such-task"]}}),
        true,
    ))
    .await;
    let ack = b.next().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["notifications"]["taskIds"], json!([id]));

    // The question the handler asks shows on B; B answers it.
    let asked = loop {
        let r = b
            .call(req(4, "tasks/get", json!({ "taskId": id }), true))
            .await;
        if r["result"]["status"] == "input_required" {
            break r["result"].clone();
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    let request = &asked["inputRequests"]["approval"];
    assert_eq!(request["method"], "elicitation/create");
    assert_eq!(request["params"]["message"], "Ship #42?");
    assert_eq!(asked["statusMessage"], "waiting for approval");
    let ack = b
        .call(req(
            5,
            "tasks/update",
            json!({"taskId": id, "inputResponses": {
                "approval": {"action": "accept", "content": {"ok": true}},
                "unknown": {"ignored": true},
            }}),
            true,
        ))
        .await;
    assert_ack(&ack);

    // A reports the result; B's listen stream saw the statuses on the way.
    let done = poll_http(a, &id, |t| t["status"] == "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "shipped #42");
    assert!(done.get("inputRequests").is_none());
    let mut statuses = Vec::new();
    while statuses.last().map(String::as_str) != Some("completed") {
        let n = b.next().await;
        if n["method"] == "notifications/tasks" {
            assert_eq!(n["params"]["taskId"], id.as_str());
            assert_eq!(
                n["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
                3
            );
            statuses.push(n["params"]["status"].as_str().unwrap().to_owned());
        }
    }
    // Changes close together may arrive as one (the latest state); none is invented.
    assert!(
        statuses
            .iter()
            .all(|s| ["working", "input_required", "completed"].contains(&s.as_str())),
        "{statuses:?}"
    );

    // A long job started on A, cancelled through B: its token fires, the task is cancelled
    // for everyone, and cancelling again is acknowledged the same way.
    let created = http(a, req(6, "tools/call", json!({"name": "long_job"}), true)).await;
    let long = created.json()["result"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    while !seen.started.load(Ordering::SeqCst) {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    for i in 0..2 {
        let ack = b
            .call(req(7 + i, "tasks/cancel", json!({ "taskId": long }), true))
            .await;
        assert_ack(&ack);
    }
    let cancelled = poll_http(a, &long, |t| t["status"] == "cancelled").await;
    assert!(cancelled.get("result").is_none());
    for _ in 0..200 {
        if seen.cancelled.load(Ordering::SeqCst) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        seen.cancelled.load(Ordering::SeqCst),
        "the handler's token fired"
    );
    // Terminal: the handler's late "stopped" is not recorded.
    tokio::time::sleep(Duration::from_millis(50)).await;
    let still = b
        .call(req(9, "tasks/get", json!({ "taskId": long }), true))
        .await;
    assert_eq!(still["result"]["status"], "cancelled");
}

/// A task store whose first updates ending a task fail, as a backend briefly away does.
#[derive(Default)]
struct Flaky {
    inner: MemoryTaskStore,
    failing_ends: std::sync::atomic::AtomicUsize,
    /// Fails every status message while set.
    failing_messages: AtomicBool,
    /// Fails this many recordings of questions, and of answers taken.
    failing_asks: std::sync::atomic::AtomicUsize,
    /// Fails this many reads of a task, once a question is recorded.
    failing_gets: std::sync::atomic::AtomicUsize,
    asked: AtomicBool,
}

impl Flaky {
    /// Whether the next of `count`'s operations fails (taking one off it).
    fn fails(count: &std::sync::atomic::AtomicUsize) -> bool {
        count
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok()
    }
}

impl mcp_runtime::store::TaskStore for Flaky {
    fn create(
        &self,
        task: mcp_runtime::store::TaskRecord,
    ) -> futures_util::future::BoxFuture<'_, Result<(), mcp_runtime::store::StoreError>> {
        self.inner.create(task)
    }
    fn get<'a>(
        &'a self,
        id: &'a str,
    ) -> futures_util::future::BoxFuture<
        'a,
        Result<Option<mcp_runtime::store::TaskRecord>, mcp_runtime::store::StoreError>,
    > {
        if self.asked.load(Ordering::SeqCst) && Flaky::fails(&self.failing_gets) {
            let away = mcp_runtime::store::StoreError::Backend("reads away".into());
            return Box::pin(async move { Err(away) });
        }
        self.inner.get(id)
    }
    fn update<'a>(
        &'a self,
        id: &'a str,
        change: mcp_runtime::store::TaskChange,
    ) -> futures_util::future::BoxFuture<
        'a,
        Result<Option<mcp_runtime::store::TaskRecord>, mcp_runtime::store::StoreError>,
    > {
        use mcp_runtime::store::TaskChange::{Ask, Complete, Fail, Message, Take};
        if matches!(change, Ask(_) | Take(_)) && Flaky::fails(&self.failing_asks) {
            let away = mcp_runtime::store::StoreError::Backend("questions away".into());
            return Box::pin(async move { Err(away) });
        }
        if matches!(change, Ask(_)) {
            self.asked.store(true, Ordering::SeqCst);
        }
        if matches!(change, Message(_)) && self.failing_messages.load(Ordering::SeqCst) {
            let away = mcp_runtime::store::StoreError::Backend("messages away".into());
            return Box::pin(async move { Err(away) });
        }
        let ends = matches!(change, Complete(_) | Fail(_));
        let left = self.failing_ends.load(Ordering::SeqCst);
        if ends && left > 0 {
            self.failing_ends.store(left - 1, Ordering::SeqCst);
            let away = mcp_runtime::store::StoreError::Backend("away".into());
            return Box::pin(async move { Err(away) });
        }
        self.inner.update(id, change)
    }
    fn watch(&self, id: &str) -> futures_util::stream::BoxStream<'static, ()> {
        self.inner.watch(id)
    }
    fn expire(
        &self,
    ) -> futures_util::future::BoxFuture<'_, Result<usize, mcp_runtime::store::StoreError>> {
        self.inner.expire()
    }
}

/// Answers at once.
#[tool(task = "required")]
async fn quick() -> &'static str {
    "done"
}

/// A task whose end the store fails to record at first is recorded once it can be: its
/// result is not lost, and it does not stay `working` until it expires.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tasks_end_is_recorded_once_the_store_takes_it() {
    let store = Arc::new(Flaky {
        failing_ends: 3.into(),
        ..Flaky::default()
    });
    let server = Server::builder("flaky", "1.0")
        .tools(tools![quick])
        .tasks(Tasks::default().store(Arc::clone(&store)))
        .build()
        .unwrap();
    let done = run_to_its_end(server, "quick").await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "done", "{done}");
    assert_eq!(store.failing_ends.load(Ordering::SeqCst), 0);
}

/// A store that fails while a task asks for input (its questions recorded, the task read
/// for the answers, the answers taken) is tried again: the question still shows, the
/// answer still reaches the handler, and the task completes. Before, the task showed
/// `working` with no question until it expired.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_asking_for_input_rides_out_store_failures() {
    let store = Arc::new(Flaky {
        failing_asks: 2.into(),
        failing_gets: 2.into(),
        ..Flaky::default()
    });
    let server = Server::builder("flaky", "1.0")
        .tools(tools![ship])
        .tasks(Tasks::default().store(Arc::clone(&store)))
        .request_state(mcp_runtime::config::RequestState::single_instance())
        .build()
        .unwrap();
    let mut pipe = Pipe::serve(server);
    let created = pipe
        .call(req(
            1,
            "tools/call",
            json!({"name": "ship", "arguments": {"order": "#7"}}),
            true,
        ))
        .await;
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    let asked = pipe.poll(&id, "input_required", 2, 300).await;
    assert_eq!(asked["status"], "input_required", "{asked}");
    let ack = pipe
        .call(req(
            400,
            "tasks/update",
            json!({"taskId": id, "inputResponses": {
                "approval": {"action": "accept", "content": {"ok": true}},
            }}),
            true,
        ))
        .await;
    assert_ack(&ack);
    let done = pipe.poll(&id, "completed", 401, 300).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "shipped #7");
    assert_eq!(store.failing_asks.load(Ordering::SeqCst), 0);
    assert_eq!(store.failing_gets.load(Ordering::SeqCst), 0);
}

/// Asks for approval but waits for it only 300 ms, then works on for a while.
#[tool(task = "required")]
async fn impatient(input: Input) -> Result<String, Error> {
    let asked = input.elicit::<Approval>("approval", "Quick, ship?");
    if let Ok(answer) = tokio::time::timeout(Duration::from_millis(300), asked).await {
        return Ok(format!("answered {}", answer?.accepted()?.ok));
    }
    tokio::time::sleep(Duration::from_millis(700)).await;
    Ok("shipped without asking".into())
}

/// A question the handler stops waiting for is withdrawn: the task is `working` again,
/// with no `inputRequests`, while the handler works on. It showed the stale question
/// (and `input_required`) until the task ended.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_the_handler_stops_waiting_for_is_withdrawn() {
    let server = Server::builder("impatient", "1.0")
        .tools(tools![impatient])
        .tasks(Tasks::default())
        .request_state(mcp_runtime::config::RequestState::single_instance())
        .build()
        .unwrap();
    let mut pipe = Pipe::serve(server);
    let created = pipe
        .call(req(1, "tools/call", json!({"name": "impatient"}), true))
        .await;
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    let mut seen = Vec::new();
    for i in 0..300 {
        let t = pipe
            .call(req(2 + i, "tasks/get", json!({ "taskId": id }), true))
            .await["result"]
            .clone();
        let status = t["status"].as_str().unwrap_or_default().to_owned();
        if status == "working" && seen.last().map(String::as_str) == Some("input_required") {
            assert!(t.get("inputRequests").is_none(), "{t}");
        }
        if seen.last() != Some(&status) {
            seen.push(status.clone());
        }
        if status == "completed" {
            assert_eq!(t["result"]["content"][0]["text"], "shipped without asking");
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        seen.iter()
            .skip_while(|s| *s == "working")
            .collect::<Vec<_>>(),
        ["input_required", "working", "completed"],
        "{seen:?}"
    );
}

/// Reports its progress many times, fast.
#[tool(task = "required")]
async fn chatty(progress: Progress) -> &'static str {
    for i in 0..200 {
        progress.report(f64::from(i), None, Some(&format!("step {i}")));
        tokio::task::yield_now().await;
    }
    "said it all"
}

/// A store failing every status message of a task that reports fast: logged once (with
/// the count of those left out later), not once per message; the task still ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_tasks_store_failures_are_logged_without_flooding() {
    capture_logs();
    let store = Arc::new(Flaky {
        failing_messages: true.into(),
        ..Flaky::default()
    });
    let server = Server::builder("chatty", "1.0")
        .tools(tools![chatty])
        .tasks(Tasks::default().store(Arc::clone(&store)))
        .build()
        .unwrap();
    let mut pipe = Pipe::serve(server);
    let created = pipe
        .call(req(1, "tools/call", json!({"name": "chatty"}), true))
        .await;
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    let done = pipe.poll(&id, "completed", 2, 500).await;
    assert_eq!(done["status"], "completed", "{done}");
    let logs = logs();
    let warned = logs.matches("messages away").count();
    assert!((1..=2).contains(&warned), "{warned} warnings:\n{logs}");
}

/// A task whose instance dies (its runtime is dropped: the worker neither finishes nor
/// records anything) shows `working` while its lease runs, renewed as long as the instance
/// lives; once the lease runs out, the other instance records it as failed and tells the
/// stream listening for it there, with no poll.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_whose_instance_dies_fails_when_its_lease_runs_out() {
    use mcp_runtime::store::TaskStore;
    const LEASE: Duration = Duration::from_millis(400);
    let store = Arc::new(MemoryTaskStore::new());
    let tasks = Tasks::default().store(Arc::clone(&store)).lease(LEASE);
    let seen = Arc::new(Seen::default());
    let doomed = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let mut a = {
        let _in = doomed.enter();
        Pipe::serve(server(tasks.clone(), Arc::clone(&seen)))
    };
    let mut b = Pipe::serve(server(tasks, Arc::new(Seen::default())));
    let created = a
        .call(req(1, "tools/call", json!({"name": "long_job"}), true))
        .await;
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    b.send(&req(
        2,
        "subscriptions/listen",
        json!({"notifications": {"taskIds": [id]}}),
        true,
    ))
    .await;
    let ack = b.next().await;
    assert_eq!(
        ack["params"]["notifications"]["taskIds"],
        json!([id]),
        "{ack}"
    );

    // Alive: renewed past three leases, still working, and the listener heard nothing.
    tokio::time::sleep(LEASE * 3).await;
    assert!(seen.started.load(Ordering::SeqCst));
    let r = b
        .call(req(3, "tasks/get", json!({ "taskId": id }), true))
        .await;
    assert_eq!(r["result"]["status"], "working", "{r}");
    let lease = store.get(&id).await.unwrap().unwrap().lease_ms().unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    assert!(u128::from(lease) > now, "the lease was renewed");

    // The instance dies.
    doomed.shutdown_background();
    let died = std::time::Instant::now();
    let told = loop {
        let msg = b.next().await;
        if msg["method"] == "notifications/tasks" {
            break msg;
        }
    };
    assert_eq!(told["params"]["taskId"], json!(id), "{told}");
    assert_eq!(told["params"]["status"], "failed", "{told}");
    assert_eq!(told["params"]["error"]["code"], -32603, "{told}");
    assert!(
        died.elapsed() < LEASE * 4,
        "told after {:?}",
        died.elapsed()
    );
    let r = b
        .call(req(4, "tasks/get", json!({ "taskId": id }), true))
        .await;
    assert_eq!(r["result"]["status"], "failed", "{r}");
    let message = r["result"]["statusMessage"].as_str().unwrap_or_default();
    assert!(message.contains("instance running the task stopped"), "{r}");
    assert!(
        !seen.cancelled.load(Ordering::SeqCst),
        "it died, it was not cancelled"
    );
}

/// Blocks its thread for a while (CPU work, a blocking call), then answers.
#[tool(task = "required")]
async fn blocks() -> &'static str {
    std::thread::sleep(Duration::from_millis(1200));
    "unblocked"
}

/// A handler that blocks its thread for longer than the lease does not lose its task: the
/// lease is renewed beside it, and its result is recorded.
#[tokio::test(flavor = "multi_thread", worker_threads = 3)]
async fn a_handler_blocking_its_thread_keeps_its_lease() {
    let store = Arc::new(MemoryTaskStore::new());
    let tasks = Tasks::default()
        .store(Arc::clone(&store))
        .lease(Duration::from_millis(300));
    let server = Server::builder("blocking", "1.0")
        .tools(tools![blocks])
        .tasks(tasks)
        .build()
        .unwrap();
    let done = run_to_its_end(server, "blocks").await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "unblocked", "{done}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_task_is_unknown() {
    let tasks = Tasks::default().ttl(Duration::from_millis(300));
    let seen = Arc::new(Seen::default());
    let a = serve_in_background(server(tasks, Arc::clone(&seen)).http());
    let created = http(a, req(1, "tools/call", json!({"name": "long_job"}), true)).await;
    let handle = created.json()["result"].clone();
    assert_eq!(handle["ttlMs"], 300);
    let id = handle["taskId"].as_str().unwrap().to_owned();
    let r = http(a, req(2, "tasks/get", json!({ "taskId": id }), true)).await;
    assert_eq!(r.json()["result"]["status"], "working");
    tokio::time::sleep(Duration::from_millis(500)).await;
    for (i, method) in ["tasks/get", "tasks/cancel"].into_iter().enumerate() {
        let r = http(a, req(3 + i as u64, method, json!({ "taskId": id }), true)).await;
        let error = &r.json()["error"];
        assert_eq!(error["code"], -32602, "{method}: {error}");
        assert!(
            error["message"]
                .as_str()
                .unwrap()
                .contains("Unknown or expired task")
        );
    }
    // The job stopped with its task.
    for _ in 0..200 {
        if seen.cancelled.load(Ordering::SeqCst) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        seen.cancelled.load(Ordering::SeqCst),
        "an expired task is cancelled"
    );
}

/// A cancel that comes before the task's worker first ran (here: a one-thread runtime,
/// where the worker spawned by `tools/call` has not been polled when the handle comes
/// back) still reaches the handler: its token fires.
#[tokio::test]
async fn a_cancel_sent_at_once_reaches_the_handler() {
    use mcp_runtime::testing::TestClient;
    let seen = Arc::new(Seen::default());
    let client = TestClient::new(server(Tasks::default(), Arc::clone(&seen))).with_tasks();
    let handle = client.start_task("long_job", json!({})).await.unwrap();
    let id = handle["taskId"].as_str().unwrap();
    client.cancel_task(id).await.unwrap();
    for _ in 0..300 {
        if seen.cancelled.load(Ordering::SeqCst) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        seen.cancelled.load(Ordering::SeqCst),
        "the handler never saw its task cancelled (started: {})",
        seen.started.load(Ordering::SeqCst)
    );
    assert_eq!(client.task(id).await.unwrap()["status"], "cancelled");
}

/// Takes a moment, then answers.
#[tool(task = "required")]
async fn short_job() -> &'static str {
    tokio::time::sleep(Duration::from_millis(500)).await;
    "finished"
}

/// An HTTP server shutting down gives the tasks running on it its drain to end: one that
/// ends within it is recorded as completed, not failed as cut off by the shutdown.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_ending_within_the_drain_keeps_its_result() {
    use mcp_runtime::store::TaskStore;
    let store = Arc::new(MemoryTaskStore::new());
    let server = Server::builder("draining", "1.0")
        .tools(tools![short_job])
        .tasks(Tasks::default().store(Arc::clone(&store)))
        .build()
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let a = listener.local_addr().unwrap();
    let stop = Arc::new(tokio::sync::Notify::new());
    let stopping = Arc::clone(&stop);
    let served = tokio::spawn(
        server
            .http()
            .drain_timeout(Duration::from_secs(10))
            .serve(listener, async move { stopping.notified().await }),
    );
    let created = http(a, req(1, "tools/call", json!({"name": "short_job"}), true)).await;
    let id = created.json()["result"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    stop.notify_one();
    tokio::time::timeout(Duration::from_secs(10), served)
        .await
        .expect("the drain ends with the task")
        .unwrap()
        .unwrap();
    let task = store.get(&id).await.unwrap().unwrap();
    assert_eq!(
        task.status(),
        mcp_runtime::protocol::tasks::TaskStatus::Completed,
        "{:?}",
        task.status_message()
    );
}

/// Tasks outlive the tools that made them: with every task-capable tool removed at run
/// time, a finished task's result is still read, and a running one still cancelled
/// (not `-32601`, as if the server never had tasks).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_are_served_after_their_tools_are_removed() {
    use mcp_runtime::testing::{Answers, TestClient};
    let seen = Arc::new(Seen::default());
    let server = Server::builder("removing", "1.0")
        .tools(tools![quick, long_job])
        .state(Arc::clone(&seen))
        .build()
        .unwrap();
    let client = TestClient::new(server).with_tasks();
    let done = client
        .run_task("quick", json!({}), &Answers::new())
        .await
        .unwrap();
    let done = done.task["taskId"].as_str().unwrap().to_owned();
    let running = client.start_task("long_job", json!({})).await.unwrap();
    let running = running["taskId"].as_str().unwrap().to_owned();
    assert!(client.server().remove_tool("quick"));
    assert!(client.server().remove_tool("long_job"));
    let t = client.task(&done).await.unwrap();
    assert_eq!(t["status"], "completed", "{t}");
    assert_eq!(t["result"]["content"][0]["text"], "done", "{t}");
    client.cancel_task(&running).await.unwrap();
    let t = client
        .wait_task(&running, Duration::from_secs(5), |t| {
            t["status"] == "cancelled"
        })
        .await
        .unwrap();
    assert_eq!(t["status"], "cancelled");
    // An unknown task is still `-32602`.
    let e = client.task("nope").await.unwrap_err();
    assert_eq!(e.code, -32602, "{}", e.message);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_checks_the_extension_and_the_task_id_header() {
    let a = serve_in_background(server(Tasks::default(), Arc::default()).http());
    let discover = http(a, req(1, "server/discover", json!({}), false))
        .await
        .json();
    assert_eq!(
        discover["result"]["capabilities"]["extensions"],
        json!({ EXT: {} })
    );
    assert!(discover["result"]["capabilities"].get("tasks").is_none());

    // A task-only tool without the extension: 400 and -32021 naming it.
    let r = http(a, req(2, "tools/call", json!({"name": "long_job"}), false)).await;
    assert_eq!(r.status, 400);
    let e = &r.json()["error"];
    assert_eq!(e["code"], -32021);
    assert_eq!(
        e["data"]["requiredCapabilities"]["extensions"],
        json!({ EXT: {} })
    );
    // An optional one runs directly (here: asks through an input_required round).
    let mut body = req(
        3,
        "tools/call",
        json!({"name": "ship", "arguments": {"order": "x"}}),
        false,
    );
    body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
        json!({"elicitation": {}});
    let r = http(a, body).await;
    let body = r.json();
    assert_eq!(body["result"]["resultType"], "input_required", "{body}");

    // tasks/* without the extension: -32021 before any lookup.
    let r = http(
        a,
        req(4, "tasks/get", json!({"taskId": "gate-test"}), false),
    )
    .await;
    assert_eq!(
        (r.status, r.json()["error"]["code"].clone()),
        (400, json!(-32021))
    );

    let created = http(a, req(5, "tools/call", json!({"name": "long_job"}), true)).await;
    let id = created.json()["result"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let body = req(6, "tasks/get", json!({ "taskId": id }), true);
    let wrong = tokio::task::spawn_blocking(move || {
        post_with(a, &body, &["Mcp-Name"], &[("Mcp-Name", "another-task")])
    })
    .await
    .unwrap();
    assert_eq!(
        (wrong.status, wrong.json()["error"]["code"].clone()),
        (400, json!(-32020))
    );
    let body = req(7, "tasks/cancel", json!({ "taskId": id }), true);
    let missing = tokio::task::spawn_blocking(move || post_with(a, &body, &["Mcp-Name"], &[]))
        .await
        .unwrap();
    assert_eq!(missing.json()["error"]["code"], -32020);
    let r = http(
        a,
        req(8, "tasks/get", json!({"taskId": "no-such-task"}), true),
    )
    .await;
    assert_eq!(r.json()["error"]["code"], -32602);
    let r = http(
        a,
        req(
            9,
            "tasks/update",
            json!({"taskId": id, "inputResponses": []}),
            true,
        ),
    )
    .await;
    assert_eq!(r.json()["error"]["code"], -32602);
    let r = http(a, req(10, "tasks/cancel", json!({ "taskId": id }), true)).await;
    assert_eq!(r.json()["result"]["resultType"], "complete");
    // Watching tasks needs the extension too.
    let listen = json!({"notifications": {"taskIds": [id]}});
    let r = http(a, req(11, "subscriptions/listen", listen, false)).await;
    assert_eq!(
        (r.status, r.json()["error"]["code"].clone()),
        (400, json!(-32021))
    );
}

/// The conformance example's fixtures, run as tasks by a child process on stdio.
#[test]
fn the_fixtures_run_as_tasks_over_a_stdio_child_process() {
    use std::io::{BufRead, Write};
    let mut child = std::process::Command::new(example("conformance"))
        .arg("--stdio")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<Value>();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(serde_json::from_str(&line).unwrap()).is_err() {
                break;
            }
        }
    });
    let _guard = ChildGuard(child);
    let mut next_id = 100u64;
    let mut call = |method: &str, params: Value| -> Value {
        next_id += 1;
        let body = req(next_id, method, params, true);
        writeln!(stdin, "{body}").unwrap();
        loop {
            let msg = rx.recv_timeout(Duration::from_secs(10)).expect("an answer");
            if msg["id"] == json!(next_id) {
                return msg;
            }
        }
    };
    let wait = |call: &mut dyn FnMut(&str, Value) -> Value, id: &str, status: &str| -> Value {
        for _ in 0..500 {
            let t = call("tasks/get", json!({ "taskId": id }))["result"].clone();
            if t["status"] == status {
                return t;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("task {id} never became {status}");
    };

    // A tool error completes the task with isError; a JSON-RPC error fails it.
    let failing = call("tools/call", json!({"name": "failing_job"}))["result"]["taskId"].clone();
    let t = wait(&mut call, failing.as_str().unwrap(), "completed");
    assert_eq!(t["result"]["isError"], true);
    let broken =
        call("tools/call", json!({"name": "protocol_error_job"}))["result"]["taskId"].clone();
    let t = wait(&mut call, broken.as_str().unwrap(), "failed");
    assert_eq!(t["error"]["code"], -32603);
    assert!(t.get("result").is_none());

    // Two questions at once; answering one leaves the other outstanding.
    let multi = call("tools/call", json!({"name": "multi_input"}))["result"]["taskId"].clone();
    let multi = multi.as_str().unwrap();
    let asked = loop {
        let t = wait(&mut call, multi, "input_required");
        if t["inputRequests"].as_object().unwrap().len() == 2 {
            break t;
        }
    };
    let keys: Vec<String> = asked["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    let answer = json!({"action": "accept", "content": {"name": "partial-1", "confirm": true}});
    call(
        "tasks/update",
        json!({"taskId": multi, "inputResponses": { keys[0].clone(): answer }}),
    );
    let t = call("tasks/get", json!({ "taskId": multi }))["result"].clone();
    assert_eq!(t["status"], "input_required");
    assert!(
        t["inputRequests"].get(&keys[0]).is_none() && t["inputRequests"].get(&keys[1]).is_some()
    );
    call(
        "tasks/update",
        json!({"taskId": multi, "inputResponses": { keys[1].clone(): answer }}),
    );
    let t = wait(&mut call, multi, "completed");
    assert_eq!(
        t["result"]["content"][0]["text"],
        "Got partial-1 and partial-1 (confirmed: true)."
    );

    // Inputs before the task: a round first, then the task.
    let first = call("tools/call", json!({"name": "test_tool_with_task"}));
    assert_eq!(first["result"]["resultType"], "input_required");
    let second = call(
        "tools/call",
        json!({
            "name": "test_tool_with_task",
            "inputResponses": {"user_name": {"action": "accept", "content": {"name": "Alice"}}},
            "requestState": first["result"]["requestState"],
        }),
    );
    assert_eq!(second["result"]["resultType"], "task", "{second}");
    assert!(second["result"].get("requestState").is_none());
    let t = wait(
        &mut call,
        second["result"]["taskId"].as_str().unwrap(),
        "completed",
    );
    assert!(
        t["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Alice")
    );
}

#[tokio::test]
async fn the_testing_kit_drives_a_task() {
    use mcp_runtime::testing::{Answers, TestClient};
    let client = TestClient::new(server(Tasks::default(), Arc::default())).with_tasks();
    let answers = Answers::new().accept("approval", json!({"ok": true}));
    let out = client
        .run_task("ship", json!({"order": "#7"}), &answers)
        .await
        .unwrap();
    assert_eq!(
        (out.status(), out.text().as_str()),
        ("completed", "shipped #7")
    );
    assert_eq!(out.answered, ["approval"]);

    let handle = client.start_task("long_job", json!({})).await.unwrap();
    let id = handle["taskId"].as_str().unwrap();
    client.cancel_task(id).await.unwrap();
    let t = client
        .wait_task(id, Duration::from_secs(5), |t| t["status"] == "cancelled")
        .await
        .unwrap();
    assert_eq!(t["statusMessage"], "The task was cancelled.");
    // Without the extension, the same tool is refused.
    let plain = TestClient::new(server(Tasks::default(), Arc::default()));
    assert_eq!(
        plain
            .start_task("long_job", json!({}))
            .await
            .unwrap_err()
            .code,
        -32021
    );
}

/// The default store is made only when a task first needs it, yet it is still one store
/// for the servers given clones of one `Tasks`, and another for a server given another.
#[tokio::test]
async fn servers_given_one_default_tasks_share_its_store() {
    use mcp_runtime::testing::TestClient;
    let served = |tasks: Tasks| {
        let server = Server::builder("shared", "1.0")
            .tools(tools![quick])
            .tasks(tasks)
            .build()
            .unwrap();
        TestClient::new(server).with_tasks()
    };
    let tasks = Tasks::default();
    let (a, b, other) = (
        served(tasks.clone()),
        served(tasks),
        served(Tasks::default()),
    );
    let handle = a.start_task("quick", json!({})).await.unwrap();
    let id = handle["taskId"].as_str().unwrap();
    let t = b
        .wait_task(id, Duration::from_secs(5), |t| t["status"] == "completed")
        .await
        .unwrap();
    assert_eq!(t["result"]["content"][0]["text"], "done", "{t}");
    let unknown = other
        .wait_task(id, Duration::from_secs(5), |_| true)
        .await
        .unwrap_err();
    assert_eq!(unknown.code, -32602, "{unknown:?}");
}
