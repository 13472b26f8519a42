//! Many instances, one service: three processes of `examples/fleet` sharing a key ring and
//! a real `redis-server`, behind a real `nginx` balancing round-robin (no stickiness), so
//! consecutive requests, and the rounds of one multi-round request, land on different
//! instances.
//!
//! - multi-round flows, single-use states and handles work whichever instance serves each
//!   request; a runtime catalog change made on one instance reaches every instance and
//!   every listener exactly once; an instance started later catches up;
//! - rolling restarts (SIGTERM: lame duck, drain) under a request loop fail no request, and
//!   a staged key rotation (three rolling restarts) under load fails no flow and logs no
//!   key warning; an instance with another key ring logs one.
//!
//! Needs `redis-server` and `nginx` (Debian packages `redis-server`, `nginx-light`, which
//! `.ci/run` installs); skipped when they are missing, unless `MCP_FLEET=required`.

mod common;
#[path = "common/fleet.rs"]
mod fleet;

use common::{Sse, post, post_bytes, request, standard_headers};
use fleet::{Nginx, Redis, free_port};
use serde_json::{Value, json};
use std::fs::File;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The services this test needs, or `None` (skipped) when they are not installed.
fn services() -> Option<()> {
    let missing: Vec<&str> = ["redis-server", "nginx"]
        .into_iter()
        .filter(|p| !fleet::have(p))
        .collect();
    if missing.is_empty() {
        return Some(());
    }
    assert!(
        std::env::var("MCP_FLEET").as_deref() != Ok("required"),
        "MCP_FLEET=required but {missing:?} not installed (apt-get install redis-server nginx-light)"
    );
    eprintln!("skipped: {missing:?} not installed");
    None
}

/// A base64url key of 32 random bytes.
fn key(seed: u8) -> String {
    use base64::Engine;
    let mut k = [seed; 32];
    for (i, b) in k.iter_mut().enumerate() {
        *b = b
            .wrapping_mul(31)
            .wrapping_add(i as u8)
            .wrapping_add(std::process::id() as u8);
    }
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(k)
}

struct Instance {
    port: u16,
    name: String,
    child: Option<Child>,
    log: PathBuf,
    /// Logs of earlier runs of this instance (restarts).
    history: String,
}

struct Fleet {
    redis: Redis,
    nginx: Nginx,
    instances: Vec<Instance>,
    dir: PathBuf,
}

const LAME_DUCK_MS: &str = "1500";

/// The instances' task lease (MCP_TASK_LEASE_MS).
const TASK_LEASE_MS: u64 = 1500;

impl Fleet {
    fn start(keys: &str) -> Fleet {
        let redis = Redis::start();
        let dir = std::env::temp_dir().join(format!(
            "mcp-fleet-test-{}-{}",
            std::process::id(),
            free_port()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let mut instances: Vec<Instance> = (1..=3)
            .map(|i| Instance {
                port: free_port(),
                name: format!("i{i}"),
                child: None,
                log: dir.join(format!("i{i}.log")),
                history: String::new(),
            })
            .collect();
        let url = redis.url();
        for inst in &mut instances {
            spawn(inst, keys, &url);
        }
        for inst in &instances {
            wait_ready(inst);
        }
        let ports: Vec<u16> = instances.iter().map(|i| i.port).collect();
        let nginx = Nginx::start(&ports);
        Fleet {
            redis,
            nginx,
            instances,
            dir,
        }
    }

    fn lb(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.nginx.port))
    }

    fn addr(&self, i: usize) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.instances[i].port))
    }

    /// SIGTERM, wait for the drained exit, start again with `keys`, wait until ready.
    fn restart(&mut self, i: usize, keys: &str) {
        let url = self.redis.url();
        let inst = &mut self.instances[i];
        let mut child = inst.child.take().expect("running");
        let pid = child.id().to_string();
        let t = Instant::now();
        assert!(
            Command::new("kill")
                .args(["-TERM", &pid])
                .status()
                .unwrap()
                .success()
        );
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                assert!(status.success(), "{} exited with {status}", inst.name);
                break;
            }
            assert!(
                t.elapsed() < Duration::from_secs(45),
                "{} did not exit after SIGTERM:\n{}",
                inst.name,
                std::fs::read_to_string(&inst.log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let log = std::fs::read_to_string(&inst.log).unwrap_or_default();
        assert!(log.contains("lame duck for 1.5s"), "{log}");
        assert!(log.contains("stopped"), "{log}");
        inst.history.push_str(&log);
        spawn(inst, keys, &url);
        wait_ready(inst);
    }

    /// SIGKILL (the instance dies: nothing is drained or recorded), then start it again
    /// and wait until ready.
    fn crash_and_restart(&mut self, i: usize, keys: &str) {
        let url = self.redis.url();
        let inst = &mut self.instances[i];
        let mut child = inst.child.take().expect("running");
        child.kill().unwrap();
        child.wait().unwrap();
        inst.history
            .push_str(&std::fs::read_to_string(&inst.log).unwrap_or_default());
        spawn(inst, keys, &url);
        wait_ready(inst);
    }

    /// Everything every instance logged, so far.
    fn logs(&self) -> String {
        self.instances
            .iter()
            .map(|i| {
                format!(
                    "{}{}",
                    i.history,
                    std::fs::read_to_string(&i.log).unwrap_or_default()
                )
            })
            .collect()
    }
}

impl Drop for Fleet {
    fn drop(&mut self) {
        for i in &mut self.instances {
            if let Some(mut c) = i.child.take() {
                let _ = c.kill();
                let _ = c.wait();
            }
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn spawn(inst: &mut Instance, keys: &str, redis: &str) {
    let log = File::create(&inst.log).unwrap();
    let child = Command::new(common::example("fleet"))
        .env("PORT", inst.port.to_string())
        .env("INSTANCE", &inst.name)
        .env("REDIS_URL", redis)
        .env("MCP_REQUEST_STATE_KEYS", keys)
        .env("MCP_LAME_DUCK_MS", LAME_DUCK_MS)
        .env("MCP_TASK_LEASE_MS", TASK_LEASE_MS.to_string())
        .env("MCP_METRICS", "1")
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("spawn examples/fleet");
    inst.child = Some(child);
}

/// Waits until the instance's readiness endpoint says ready.
fn wait_ready(inst: &Instance) {
    let addr = SocketAddr::from(([127, 0, 0, 1], inst.port));
    let t = Instant::now();
    loop {
        if std::net::TcpStream::connect(addr).is_ok() && get(addr, "/readyz").status == 200 {
            return;
        }
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "{} not ready:\n{}",
            inst.name,
            std::fs::read_to_string(&inst.log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn elicitation_meta() -> Value {
    json!({"io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}})
}

/// One `tools/call`: the result, or what went wrong.
fn call(addr: SocketAddr, name: &str, args: Value, extra: Value) -> Result<Value, String> {
    let mut params = json!({"name": name, "arguments": args, "_meta": elicitation_meta()});
    if let Value::Object(m) = extra {
        params.as_object_mut().unwrap().extend(m);
    }
    let r = post(addr, &request(json!(1), "tools/call", params));
    if r.status != 200 {
        return Err(format!("HTTP {} {}", r.status, r.text()));
    }
    let v = r.json();
    match v.get("result") {
        Some(res) if res["isError"] != json!(true) => Ok(res.clone()),
        _ => Err(v.to_string()),
    }
}

fn text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// A three-round `transfer`; returns the last state (already redeemed).
fn transfer(addr: SocketAddr) -> Result<String, String> {
    let r1 = call(addr, "transfer", json!({"to": "bob"}), json!({}))?;
    if r1["resultType"] != "input_required" {
        return Err(format!("round 1: {r1}"));
    }
    let r2 = call(
        addr,
        "transfer",
        json!({"to": "bob"}),
        json!({"requestState": r1["requestState"],
               "inputResponses": {"amount": {"action": "accept", "content": {"amount": 5}}}}),
    )?;
    if r2["resultType"] != "input_required" {
        return Err(format!("round 2: {r2}"));
    }
    let state = r2["requestState"].as_str().unwrap_or_default().to_owned();
    let r3 = call(
        addr,
        "transfer",
        json!({"to": "bob"}),
        json!({"requestState": state,
               "inputResponses": {"sure": {"action": "accept", "content": {"ok": true}}}}),
    )?;
    if !text(&r3).starts_with("sent 5 to bob") {
        return Err(format!("round 3: {r3}"));
    }
    Ok(state)
}

/// A cart made on one instance, changed on another and read on a third.
fn cart(addr: SocketAddr) -> Result<(), String> {
    let h = text(&call(addr, "cart_new", json!({"item": "a"}), json!({}))?);
    let added = text(&call(
        addr,
        "cart_add",
        json!({"cart": h, "item": "b"}),
        json!({}),
    )?);
    let shown = text(&call(addr, "cart_show", json!({"cart": h}), json!({}))?);
    if added != "a,b" || shown != "a,b" {
        return Err(format!("cart {h}: {added} / {shown}"));
    }
    Ok(())
}

/// Adds made to one cart at once, spread over the instances: none is lost.
fn concurrent_adds(addr: SocketAddr) -> Result<(), String> {
    let h = text(&call(addr, "cart_new", json!({"item": "a"}), json!({}))?);
    let adds: Vec<_> = (0..25)
        .map(|i| {
            let h = h.clone();
            std::thread::spawn(move || {
                call(
                    addr,
                    "cart_add",
                    json!({"cart": h, "item": format!("x{i}")}),
                    json!({}),
                )
            })
        })
        .collect();
    for a in adds {
        a.join().map_err(|_| "an add panicked".to_owned())??;
    }
    let shown = text(&call(addr, "cart_show", json!({"cart": h}), json!({}))?);
    let held = shown.split(',').count();
    if held != 26 {
        return Err(format!(
            "cart {h} holds {held} items after its first and 25 adds: {shown}"
        ));
    }
    Ok(())
}

fn listen(addr: SocketAddr, id: usize) -> Sse {
    let body = request(
        json!(format!("sub-{id}")),
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    );
    let headers = standard_headers(&body);
    let h: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let mut s = Sse::send(addr, &post_bytes(addr, body.to_string().as_bytes(), &h));
    let ack = s.next(Duration::from_secs(5)).expect("ack");
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    s
}

fn tool_names(addr: SocketAddr) -> Vec<String> {
    let r = post(addr, &request(json!(1), "tools/list", json!({}))).json();
    r["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn flows_handles_and_catalog_changes_work_across_instances() {
    if services().is_none() {
        return;
    }
    let keys = format!("k1={}", key(1));
    let mut fleet = Fleet::start(&keys);
    let lb = fleet.lb();

    // Multi-round flows and handles, every request on the next instance.
    let mut failures = Vec::new();
    let mut last_state = String::new();
    for _ in 0..30 {
        match transfer(lb) {
            Ok(s) => last_state = s,
            Err(e) => failures.push(e),
        }
        if let Err(e) = cart(lb) {
            failures.push(e);
        }
    }
    for _ in 0..3 {
        if let Err(e) = concurrent_adds(lb) {
            failures.push(e);
        }
    }
    assert!(
        failures.is_empty(),
        "{} of 63 flows failed: {failures:?}",
        failures.len()
    );
    let log = fleet.nginx.wait_access_log(30 * 6, Duration::from_secs(5));
    for inst in &fleet.instances {
        let served = log
            .lines()
            .filter(|l| l.contains(&format!("127.0.0.1:{}", inst.port)))
            .count();
        assert!(
            served >= 50,
            "{} served {served} of 180 requests:\n{log}",
            inst.name
        );
    }

    // A single-use state redeemed once does not redeem again, on any instance.
    for i in 0..3 {
        let again = call(
            fleet.addr(i),
            "transfer",
            json!({"to": "bob"}),
            json!({"requestState": last_state,
                   "inputResponses": {"sure": {"action": "accept", "content": {"ok": true}}}}),
        )
        .unwrap_err();
        assert!(again.contains("-32602"), "{again}");
    }
    // A handle that was never minted is a tool error that says so.
    let unknown = call(
        lb,
        "cart_show",
        json!({"cart": "h_AAAAAAAAAAAAAAAAAAAAAA"}),
        json!({}),
    )
    .unwrap_err();
    assert!(unknown.contains("unknown or expired handle"), "{unknown}");

    // A runtime catalog change: two listeners on each instance, the change made through
    // the balancer (on one of them).
    let mut listeners: Vec<Sse> = (0..6).map(|n| listen(fleet.addr(n % 3), n)).collect();
    assert!(tool_names(fleet.addr(0)).iter().all(|t| t != "report"));
    assert_eq!(
        text(&call(lb, "enable_reports", json!({}), json!({})).unwrap()),
        "enabled"
    );
    for (n, l) in listeners.iter_mut().enumerate() {
        let note = l
            .next(Duration::from_secs(5))
            .unwrap_or_else(|| panic!("listener {n} was not told: {}", l.buf));
        assert_eq!(note["method"], "notifications/tools/list_changed", "{note}");
    }
    // Exactly once: nothing more arrives.
    std::thread::sleep(Duration::from_millis(500));
    for (n, l) in listeners.iter_mut().enumerate() {
        assert!(
            l.next(Duration::from_millis(100)).is_none(),
            "listener {n}: {}",
            l.buf
        );
    }
    for i in 0..3 {
        assert!(
            tool_names(fleet.addr(i)).contains(&"report".to_owned()),
            "instance {i}"
        );
    }
    let mut by: Vec<String> = (0..3)
        .map(|_| text(&call(lb, "report", json!({}), json!({})).unwrap()))
        .collect();
    by.sort();
    assert_eq!(by, ["report from i1", "report from i2", "report from i3"]);

    // An instance started later catches up with the shared catalog before it is ready.
    drop(listeners);
    fleet.restart(1, &keys);
    assert!(tool_names(fleet.addr(1)).contains(&"report".to_owned()));
    assert!(fleet.logs().contains("caught up with the shared catalog"));

    // An instance with another key ring refuses the others' states and says why, once
    // per 10 s however many arrive.
    let other = format!("k1={}", key(9));
    fleet.restart(2, &other);
    let r1 = call(fleet.addr(0), "transfer", json!({"to": "eve"}), json!({})).unwrap();
    for _ in 0..3 {
        let e = call(
            fleet.addr(2),
            "transfer",
            json!({"to": "eve"}),
            json!({"requestState": r1["requestState"],
                   "inputResponses": {"amount": {"action": "accept", "content": {"amount": 1}}}}),
        )
        .unwrap_err();
        assert!(e.contains("Invalid or expired requestState"), "{e}");
    }
    let log = std::fs::read_to_string(&fleet.instances[2].log).unwrap();
    let warns: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("WARN") && l.contains("requestState refused"))
        .collect();
    assert_eq!(warns.len(), 1, "{log}");
    assert!(warns[0].contains("kid=\"k1\""), "{}", warns[0]);

    // Tasks: made on one instance, polled through the balancer (every poll on the next
    // instance), and one cancelled from another instance than the one running it.
    let task_caps = json!({"io.modelcontextprotocol/clientCapabilities":
        {"extensions": {"io.modelcontextprotocol/tasks": {}}}});
    let start = |items: u32| {
        let mut params = json!({"name": "export", "arguments": {"items": items}});
        params["_meta"] = task_caps.clone();
        let r = post(lb, &request(json!(1), "tools/call", params)).json();
        assert_eq!(r["result"]["resultType"], "task", "{r}");
        r["result"]["taskId"].as_str().unwrap().to_owned()
    };
    let task = |addr: SocketAddr, method: &str, id: &str| {
        let mut params = json!({"taskId": id});
        params["_meta"] = task_caps.clone();
        post(addr, &request(json!(2), method, params)).json()
    };
    let done = start(6);
    let long = start(1000);
    let t = Instant::now();
    let finished = loop {
        let r = task(lb, "tasks/get", &done);
        if r["result"]["status"] == "completed" {
            break r;
        }
        assert!(t.elapsed() < Duration::from_secs(20), "{r}");
        std::thread::sleep(Duration::from_millis(30));
    };
    let text = finished["result"]["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.starts_with("exported 6 items on i"), "{finished}");
    for i in 0..3 {
        let r = task(fleet.addr(i), "tasks/get", &long);
        assert_eq!(r["result"]["status"], "working", "instance {i}: {r}");
    }
    let c = task(fleet.addr(2), "tasks/cancel", &long);
    assert!(c.get("result").is_some(), "{c}");
    let t = Instant::now();
    loop {
        let r = task(fleet.addr(0), "tasks/get", &long);
        if r["result"]["status"] == "cancelled" {
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(10), "{r}");
        std::thread::sleep(Duration::from_millis(30));
    }

    // A task whose instance dies: working while the instance renews its lease, failed
    // on every instance once the lease runs out, not `working` until its TTL.
    let mut params = json!({"name": "export", "arguments": {"items": 1000}});
    params["_meta"] = task_caps.clone();
    let r = post(fleet.addr(1), &request(json!(1), "tools/call", params)).json();
    let orphan = r["result"]["taskId"].as_str().unwrap().to_owned();
    std::thread::sleep(Duration::from_millis(TASK_LEASE_MS * 2));
    let r = task(fleet.addr(0), "tasks/get", &orphan);
    assert_eq!(r["result"]["status"], "working", "renewed: {r}");
    fleet.crash_and_restart(1, &keys);
    let t = Instant::now();
    let failed = loop {
        let r = task(fleet.addr(2), "tasks/get", &orphan);
        if r["result"]["status"] != "working" {
            break r;
        }
        assert!(
            t.elapsed() < Duration::from_millis(TASK_LEASE_MS * 4),
            "still working {:?} after its instance died: {r}",
            t.elapsed()
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(failed["result"]["status"], "failed", "{failed}");
    assert_eq!(failed["result"]["error"]["code"], -32603, "{failed}");
    for i in [0, 1] {
        let r = task(fleet.addr(i), "tasks/get", &orphan);
        assert_eq!(r["result"]["status"], "failed", "instance {i}: {r}");
    }

    // The request metrics of one instance.
    let m = get(fleet.addr(0), "/metrics");
    assert_eq!(m.status, 200);
    let served: f64 = m
        .text()
        .lines()
        .filter(|l| l.starts_with("mcp_requests_total{") && l.contains("name=\"transfer\""))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum();
    assert!(served >= 20.0, "{}", m.text());

    // Redis goes away: readiness says so, and a handle call is a prompt tool error.
    let mut redis = std::net::TcpStream::connect(("127.0.0.1", fleet.redis.port)).unwrap();
    std::io::Write::write_all(&mut redis, b"SHUTDOWN NOSAVE\r\n").unwrap();
    let t = Instant::now();
    while get(fleet.addr(0), "/readyz").status != 503 {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "still ready without Redis"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(get(fleet.addr(0), "/readyz").text().contains("unavailable"));
    let t = Instant::now();
    let e = call(
        fleet.addr(0),
        "cart_show",
        json!({"cart": "h_AAAAAAAAAAAAAAAAAAAAAA"}),
        json!({}),
    )
    .unwrap_err();
    assert!(e.contains("the handle store is unavailable"), "{e}");
    assert!(
        t.elapsed() < Duration::from_secs(15),
        "took {:?}",
        t.elapsed()
    );
    assert_eq!(
        get(fleet.addr(0), "/healthz").status,
        200,
        "alive all the same"
    );
}

fn get(addr: SocketAddr, path: &str) -> common::Response {
    common::raw(
        addr,
        format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").as_bytes(),
    )
}

/// Runs flows through the balancer until told to stop; counts them and keeps failures.
struct Load {
    stop: Arc<AtomicBool>,
    done: Arc<AtomicUsize>,
    failures: Arc<Mutex<Vec<String>>>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Load {
    fn start(lb: SocketAddr, threads: usize) -> Load {
        let stop = Arc::new(AtomicBool::new(false));
        let done = Arc::new(AtomicUsize::new(0));
        let failures = Arc::new(Mutex::new(Vec::new()));
        let threads = (0..threads)
            .map(|n| {
                let (stop, done, failures) = (stop.clone(), done.clone(), failures.clone());
                std::thread::spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        let r = if n % 2 == 0 {
                            transfer(lb).map(drop)
                        } else {
                            cart(lb)
                        };
                        match r {
                            Ok(()) => done.fetch_add(1, Ordering::Relaxed),
                            Err(e) => {
                                failures.lock().unwrap().push(e);
                                0
                            }
                        };
                    }
                })
            })
            .collect();
        Load {
            stop,
            done,
            failures,
            threads,
        }
    }

    fn finish(self) -> (usize, Vec<String>) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads {
            t.join().unwrap();
        }
        let failures = self.failures.lock().unwrap().clone();
        (self.done.load(Ordering::Relaxed), failures)
    }
}

#[test]
fn rolling_restarts_and_a_staged_key_rotation_under_load_fail_nothing() {
    if services().is_none() {
        return;
    }
    let (k1, k2) = (key(1), key(2));
    let stage0 = format!("k1={k1}");
    let mut fleet = Fleet::start(&stage0);
    let lb = fleet.lb();

    // A rolling restart of all three under a request loop.
    let load = Load::start(lb, 4);
    std::thread::sleep(Duration::from_millis(500));
    for i in 0..3 {
        fleet.restart(i, &stage0);
    }
    std::thread::sleep(Duration::from_millis(500));
    let (done, failures) = load.finish();
    eprintln!(
        "rolling restart: {done} flows completed, {} failed",
        failures.len()
    );
    assert!(done > 20, "only {done} flows ran");
    assert!(
        failures.is_empty(),
        "{} flows failed: {failures:#?}",
        failures.len()
    );

    // A staged key rotation, each stage a rolling restart, under load: k2 accepted
    // everywhere, then active everywhere, then (once no k1 state can still be in use) k1
    // retired.
    let load = Load::start(lb, 4);
    for stage in [format!("k1={k1},k2={k2}"), format!("k2={k2},k1={k1}")] {
        for i in 0..3 {
            fleet.restart(i, &stage);
        }
    }
    // Every state sealed from now on uses k2; the flows in flight finish within this.
    std::thread::sleep(Duration::from_secs(2));
    let last = format!("k2={k2}");
    for i in 0..3 {
        fleet.restart(i, &last);
    }
    std::thread::sleep(Duration::from_millis(500));
    let (done, failures) = load.finish();
    eprintln!(
        "key rotation: {done} flows completed, {} failed",
        failures.len()
    );
    assert!(done > 20, "only {done} flows ran");
    assert!(
        failures.is_empty(),
        "{} flows failed: {failures:#?}",
        failures.len()
    );
    let logs = fleet.logs();
    assert!(!logs.contains("requestState refused"), "{logs}");
    let errors = fleet.nginx.error_log();
    assert!(
        !errors.contains("upstream prematurely closed"),
        "nginx saw a connection cut mid-request:\n{errors}"
    );
}
