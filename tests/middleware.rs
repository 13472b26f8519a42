//! Middleware over real HTTP: a rate limit that trips and recovers, a middleware that
//! short-circuits, typed values handed to handlers, every round of a multi round-trip
//! request, the legacy era, per-item layers inside the server's, size limits and a cache
//! of read-only results.

mod common;

use common::{post, post_bytes, raw, request};
use mcp_runtime::config::RequestState;
use mcp_runtime::middleware::{
    Cache, Layered, Next, RateLimit, Request, Response, SizeLimit, Timing, from_fn,
};
use mcp_runtime::{Error, Input, Server, prompt, prompts, tool, tools};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

static ECHOED: AtomicUsize = AtomicUsize::new(0);
static LOOKED_UP: AtomicUsize = AtomicUsize::new(0);

#[derive(Clone, Debug)]
struct Tenant {
    name: String,
}

/// Echoes, and says for which tenant.
#[tool]
async fn echo(text: String, tenant: Layered<Tenant>) -> String {
    ECHOED.fetch_add(1, Ordering::SeqCst);
    format!("{text} for {}", tenant.name)
}

/// Says hi.
#[tool]
async fn hi() -> &'static str {
    "hi"
}

/// Looks a word up (read-only: its results may be cached).
#[tool(annotations(read_only_hint = true))]
async fn lookup(word: String, lang: Option<String>) -> String {
    LOOKED_UP.fetch_add(1, Ordering::SeqCst);
    format!("{word}/{}", lang.unwrap_or_default())
}

/// Makes a big answer.
#[tool]
async fn big(bytes: usize) -> String {
    "x".repeat(bytes)
}

#[derive(serde::Deserialize, schemars::JsonSchema, mcp_runtime::Form)]
struct Go {
    /// Go on
    ok: bool,
}

/// Asks before answering (two rounds).
#[tool]
async fn ask(input: Input) -> Result<String, Error> {
    let go: Go = input.elicit("go", "Go on?").await?.accepted()?;
    Ok(format!("go={}", go.ok))
}

/// Greets (a prompt).
#[prompt]
async fn greeting(name: String) -> String {
    format!("Hello {name}")
}

/// What the outermost middleware saw, in order.
#[derive(Default)]
struct Seen(Mutex<Vec<String>>);

fn server(seen: Arc<Seen>) -> Server {
    let outer = Arc::clone(&seen);
    let inner_seen = Arc::clone(&seen);
    let lookup_def = lookup::__mcp_tool().layer(from_fn(move |req: Request, next: Next| {
        let seen = Arc::clone(&inner_seen);
        async move {
            seen.0.lock().unwrap().push(format!("item {}", req.target));
            next.run(req).await
        }
    }));
    // Two calls per 3 s for `echo` (a token back every 1.5 s).
    let echo_def = echo::__mcp_tool().layer(RateLimit::new(2, Duration::from_secs(3)));
    Server::builder("mw", "1.0")
        .tool(echo_def)
        .tools(tools![hi, big, ask])
        .tool(lookup_def)
        .prompts(prompts![greeting])
        .request_state(RequestState::single_instance())
        .layer(from_fn(move |mut req: Request, next: Next| {
            let seen = Arc::clone(&outer);
            async move {
                seen.0
                    .lock()
                    .unwrap()
                    .push(format!("outer {} round {}", req.target, req.round()));
                if req.arguments.get("text") == Some(&json!("forbidden")) {
                    return Response::tool_error("forbidden here");
                }
                if req.arguments.get("name") == Some(&json!("mallory")) {
                    return Response::error(mcp_runtime::protocol::RpcError::invalid_params(
                        "not for mallory",
                    ));
                }
                req.insert(Tenant {
                    name: "acme".into(),
                });
                next.run(req).await
            }
        }))
        .layer(Timing)
        .layer(RateLimit::new(1000, Duration::from_secs(1)).per_item())
        .layer(SizeLimit::new(4096))
        .layer(Cache::new(Duration::from_secs(60)))
        .build()
        .unwrap()
}

fn call(addr: SocketAddr, name: &str, args: Value) -> Value {
    let mut body = request(
        json!(1),
        "tools/call",
        json!({"name": name, "arguments": args}),
    );
    body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
        json!({"elicitation": {"form": {}}});
    post(addr, &body).json()
}

fn text(v: &Value) -> String {
    v["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn middleware_wraps_every_call() {
    let seen = Arc::new(Seen::default());
    let addr = common::serve_in_background(server(Arc::clone(&seen)).http());

    // Typed values reach the handler.
    assert_eq!(
        text(&call(addr, "echo", json!({"text": "a"}))),
        "a for acme"
    );

    // The rate limit of `echo` trips, and recovers once a token is back.
    assert_eq!(
        text(&call(addr, "echo", json!({"text": "b"}))),
        "b for acme"
    );
    let limited = call(addr, "echo", json!({"text": "c"}));
    assert_eq!(limited["result"]["isError"], true, "{limited}");
    assert!(
        text(&limited).starts_with("Rate limit exceeded: retry in"),
        "{limited}"
    );
    assert_eq!(
        text(&call(addr, "hi", json!({}))),
        "hi",
        "another item is not limited"
    );
    std::thread::sleep(Duration::from_millis(1600));
    assert_eq!(
        text(&call(addr, "echo", json!({"text": "d"}))),
        "d for acme"
    );
    assert_eq!(
        ECHOED.load(Ordering::SeqCst),
        3,
        "the limited call never ran"
    );

    // Short-circuits: a tool error, and a JSON-RPC error from a prompt.
    let before = ECHOED.load(Ordering::SeqCst);
    let refused = call(addr, "echo", json!({"text": "forbidden"}));
    assert_eq!(refused["result"]["isError"], true);
    assert_eq!(text(&refused), "forbidden here");
    assert_eq!(ECHOED.load(Ordering::SeqCst), before);
    let get = |name: &str| {
        post(
            addr,
            &request(
                json!(2),
                "prompts/get",
                json!({"name": "greeting", "arguments": {"name": name}}),
            ),
        )
        .json()
    };
    let ok = get("ann");
    assert_eq!(
        ok["result"]["messages"][0]["content"]["text"], "Hello ann",
        "{ok}"
    );
    let e = get("mallory");
    assert_eq!(e["error"]["code"], -32602, "{e}");
    assert_eq!(e["error"]["message"], "not for mallory");

    // A multi round-trip request passes the middleware on every round.
    seen.0.lock().unwrap().clear();
    let r1 = call(addr, "ask", json!({}));
    assert_eq!(r1["result"]["resultType"], "input_required", "{r1}");
    let mut body = request(
        json!(3),
        "tools/call",
        json!({"name": "ask", "arguments": {}, "requestState": r1["result"]["requestState"],
               "inputResponses": {"go": {"action": "accept", "content": {"ok": true}}}}),
    );
    body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
        json!({"elicitation": {"form": {}}});
    assert_eq!(text(&post(addr, &body).json()), "go=true");
    assert_eq!(
        *seen.0.lock().unwrap(),
        ["outer ask round 1", "outer ask round 2"]
    );

    // Size limits.
    assert_eq!(text(&call(addr, "big", json!({"bytes": 100}))).len(), 100);
    let huge = call(addr, "big", json!({"bytes": 10_000}));
    assert_eq!(huge["result"]["isError"], true);
    assert!(text(&huge).contains("over the limit of 4096"), "{huge}");

    // The cache: read-only results by canonical arguments; the item's own layer runs
    // inside the server's (so after the cache, only on a miss).
    seen.0.lock().unwrap().clear();
    let a = call(addr, "lookup", json!({"word": "w", "lang": "en"}));
    let b = call(addr, "lookup", json!({"lang": "en", "word": "w"}));
    assert_eq!(text(&a), "w/en");
    assert_eq!(a["result"], b["result"]);
    assert_eq!(LOOKED_UP.load(Ordering::SeqCst), 1, "the second was a hit");
    call(addr, "lookup", json!({"word": "v"}));
    assert_eq!(LOOKED_UP.load(Ordering::SeqCst), 2);
    assert_eq!(
        *seen.0.lock().unwrap(),
        [
            "outer lookup round 1",
            "item lookup",
            "outer lookup round 1",
            "outer lookup round 1",
            "item lookup"
        ]
    );
    // Not read-only: never cached.
    call(addr, "hi", json!({}));
    let before = seen.0.lock().unwrap().len();
    call(addr, "hi", json!({}));
    assert_eq!(seen.0.lock().unwrap().len(), before + 1);

    // The legacy era runs through the same middleware.
    std::thread::sleep(Duration::from_millis(1600)); // a token back for `echo`
    let post_legacy = |body: &Value, headers: &[(&str, &str)]| {
        let mut h = vec![
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ];
        h.extend_from_slice(headers);
        raw(addr, &post_bytes(addr, body.to_string().as_bytes(), &h))
    };
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "legacy", "version": "1"}}});
    let r = post_legacy(&init, &[]);
    let session = r.header("mcp-session-id").expect("a session").to_owned();
    let h = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    post_legacy(
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        &h,
    );
    let r = post_legacy(
        &json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": "old"}}}),
        &h,
    );
    assert_eq!(text(&r.json()), "old for acme", "{}", r.text());
    let r = post_legacy(
        &json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": "forbidden"}}}),
        &h,
    );
    assert_eq!(text(&r.json()), "forbidden here");
}

/// Needs a tenant.
#[tool]
async fn tenant_only(t: Layered<Tenant>) -> String {
    t.name.clone()
}

/// Without any middleware, nothing can provide a `Layered<T>`: building refuses it. With
/// one that does not insert it, the call fails naming the type.
#[test]
fn a_layered_value_nobody_provided_is_an_error_that_names_it() {
    let Err(refused) = Server::builder("x", "1.0")
        .tools(tools![tenant_only])
        .build()
    else {
        panic!("no middleware: refused");
    };
    let refused = refused.to_string();
    assert!(
        refused.contains("tenant_only")
            && refused.contains("Layered<")
            && refused.contains("Tenant"),
        "{refused}"
    );
    let server = Server::builder("x", "1.0")
        .tools(tools![tenant_only])
        .layer(Timing)
        .build()
        .unwrap();
    let addr = common::serve_in_background(server.http());
    let r = call(addr, "tenant_only", json!({}));
    assert_eq!(r["error"]["code"], -32603, "{r}");
    assert!(
        r["error"]["message"].as_str().unwrap().contains("Tenant"),
        "{r}"
    );
}

/// Says which tenant and which region the middleware gave it.
#[tool]
async fn where_am_i(t: Layered<Tenant>, r: Layered<Region>) -> String {
    format!("{} in {}", t.name, r.0.0)
}

struct Region(&'static str);

/// A mounted child with middleware of its own still gets what its parent's middleware
/// inserted, and its own middleware sees those values (`Request::get`) and adds to them.
#[test]
fn a_mounted_child_with_its_own_middleware_keeps_the_parents_values() {
    let child = Server::builder("child", "1.0")
        .tools(tools![where_am_i])
        .layer(from_fn(|mut req: Request, next: Next| async move {
            let tenant = req.get::<Tenant>().map(|t| t.name.clone());
            req.insert(Region(if tenant.as_deref() == Some("acme") {
                "eu"
            } else {
                "?"
            }));
            next.run(req).await
        }));
    let server = Server::builder("parent", "1.0")
        .mount("a", child)
        .layer(from_fn(|mut req: Request, next: Next| async move {
            req.insert(Tenant {
                name: "acme".into(),
            });
            next.run(req).await
        }))
        .build()
        .unwrap();
    let addr = common::serve_in_background(server.http());
    let r = call(addr, "a_where_am_i", json!({}));
    assert_eq!(text(&r), "acme in eu", "{r}");
}

/// Expensive: once a minute, by its own attribute.
#[tool(layer = RateLimit::new(1, Duration::from_secs(60)))]
async fn expensive() -> &'static str {
    "done"
}

static GROUPED: AtomicUsize = AtomicUsize::new(0);

/// One of a group with middleware of its own.
#[tool]
async fn grouped() -> &'static str {
    "grouped"
}

#[test]
fn an_attribute_layer_and_a_merged_group_wrap_only_their_items() {
    let group = Server::builder("group", "1.0")
        .tools(tools![grouped])
        .layer(from_fn(|req: Request, next: Next| async move {
            GROUPED.fetch_add(1, Ordering::SeqCst);
            next.run(req).await
        }));
    let server = Server::builder("x", "1.0")
        .tools(tools![expensive, hi])
        .merge(group)
        .build()
        .unwrap();
    assert_eq!(server.tool_names(), ["expensive", "grouped", "hi"]);
    let addr = common::serve_in_background(server.http());
    assert_eq!(text(&call(addr, "expensive", json!({}))), "done");
    let again = call(addr, "expensive", json!({}));
    assert_eq!(again["result"]["isError"], true, "{again}");
    assert!(text(&again).starts_with("Rate limit exceeded"));
    assert_eq!(text(&call(addr, "hi", json!({}))), "hi");
    assert_eq!(text(&call(addr, "hi", json!({}))), "hi", "not limited");
    assert_eq!(text(&call(addr, "grouped", json!({}))), "grouped");
    assert_eq!(
        GROUPED.load(Ordering::SeqCst),
        1,
        "the group's middleware ran for its item only"
    );
}

/// A note, by number.
#[mcp_runtime::resource("notes://{n}")]
async fn note(n: u32) -> String {
    format!("note {n}")
}

/// Two resources of one name (as mounted servers and proxied file servers have).
mod same_name {
    /// A's readme.
    #[mcp_runtime::resource("a://readme")]
    pub async fn readme() -> &'static str {
        "a"
    }
    pub mod b {
        /// B's readme.
        #[mcp_runtime::resource("b://readme")]
        pub async fn readme() -> &'static str {
            "b"
        }
    }
}

/// Per item, a resource template is one item whatever URI is read: a client cannot get
/// round the limit by reading new URIs (nor grow its buckets with them). Resources of one
/// name are items of their own (resources are told apart by URI).
#[test]
fn a_per_item_rate_limit_counts_a_template_as_one_item() {
    let server = Server::builder("rl", "1.0")
        .tools(tools![hi])
        .resources(mcp_runtime::resources![
            note,
            same_name::readme,
            same_name::b::readme
        ])
        .layer(RateLimit::new(2, Duration::from_secs(60)).per_item())
        .build()
        .unwrap();
    let addr = common::serve_in_background(server.http());
    let read = |n: u32| {
        let body = request(
            json!(n),
            "resources/read",
            json!({"uri": format!("notes://{n}")}),
        );
        post(addr, &body).json()
    };
    assert_eq!(read(1)["result"]["contents"][0]["text"], "note 1");
    assert_eq!(read(2)["result"]["contents"][0]["text"], "note 2");
    let third = read(3);
    assert_eq!(third["error"]["code"], -32603, "{third}");
    assert!(
        third["error"]["message"]
            .as_str()
            .unwrap()
            .contains("retry"),
        "{third}"
    );
    // Another item has its own bucket.
    assert_eq!(text(&call(addr, "hi", json!({}))), "hi");
    let read_uri = |uri: &str| {
        post(
            addr,
            &request(json!(9), "resources/read", json!({ "uri": uri })),
        )
        .json()
    };
    for _ in 0..2 {
        assert_eq!(read_uri("a://readme")["result"]["contents"][0]["text"], "a");
    }
    // `a://readme` has used its two; `b://readme`, of the same name, has its own.
    assert_eq!(read_uri("a://readme")["error"]["code"], -32603);
    assert_eq!(read_uri("b://readme")["result"]["contents"][0]["text"], "b");
}

#[derive(serde::Deserialize, schemars::JsonSchema, mcp_runtime::Form)]
struct Who {
    /// Your login
    login: String,
}

/// Greets whoever answers (read-only, and asks).
#[tool(annotations(read_only_hint = true))]
#[mcp_runtime::needs_input]
async fn greet_asking(#[input(elicit = "Who are you?")] who: Who) -> String {
    format!("hello {}", who.login)
}

/// A note (a resource).
#[mcp_runtime::resource("note://{id}")]
async fn note_text(id: String) -> String {
    format!("note {id}")
}

/// A result that depends on the client's answers is no result to reuse: with `Cache` in
/// place, a second call of a read-only tool that asks is asked again, never handed the
/// first caller's answer. A tool's error answered by middleware for a prompt or a
/// resource reaches the client as `-32603` with its text.
#[test]
fn a_cache_never_reuses_answers_and_tool_errors_reach_prompts_and_resources() {
    let server = Server::builder("mw-cache", "1.0")
        .tools(tools![greet_asking])
        .prompts(prompts![greeting])
        .resources(mcp_runtime::resources![note_text])
        .request_state(RequestState::single_instance())
        .layer(from_fn(|req: Request, next: Next| async move {
            if req.arguments.get("name") == Some(&json!("blocked"))
                || req.target == "note://blocked"
            {
                return Response::tool_error("blocked by policy");
            }
            next.run(req).await
        }))
        .layer(Cache::new(Duration::from_secs(60)))
        .build()
        .unwrap();
    let a = common::serve_in_background(server.http());
    let first = call(a, "greet_asking", json!({}));
    let state = first["result"]["requestState"].as_str().unwrap().to_owned();
    let mut body = request(
        json!(2),
        "tools/call",
        json!({"name": "greet_asking", "arguments": {}, "requestState": state,
               "inputResponses": {"who": {"action": "accept", "content": {"login": "alice"}}}}),
    );
    body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
        json!({"elicitation": {"form": {}}});
    assert_eq!(text(&post(a, &body).json()), "hello alice");
    // Another call, no answers: asked again, not "hello alice".
    let again = call(a, "greet_asking", json!({}));
    assert_eq!(again["result"]["resultType"], "input_required", "{again}");

    let prompt = post(
        a,
        &request(
            json!(3),
            "prompts/get",
            json!({"name": "greeting", "arguments": {"name": "blocked"}}),
        ),
    )
    .json();
    assert_eq!(prompt["error"]["code"], -32603, "{prompt}");
    assert_eq!(prompt["error"]["message"], "blocked by policy", "{prompt}");
    let read = post(
        a,
        &request(json!(4), "resources/read", json!({"uri": "note://blocked"})),
    )
    .json();
    assert_eq!(read["error"]["code"], -32603, "{read}");
    assert_eq!(read["error"]["message"], "blocked by policy", "{read}");
    // The others pass, and are cached as before.
    let ok = post(
        a,
        &request(json!(5), "resources/read", json!({"uri": "note://7"})),
    )
    .json();
    assert_eq!(ok["result"]["contents"][0]["text"], "note 7", "{ok}");
}

/// The text of the first contents of `resources/read` of `uri`.
fn read_text(addr: std::net::SocketAddr, uri: &str) -> Value {
    let body = request(json!(1), "resources/read", json!({ "uri": uri }));
    post(addr, &body).json()["result"]["contents"][0]["text"].clone()
}

static COUNTER: AtomicUsize = AtomicUsize::new(0);

/// A counter (a resource that changes).
#[mcp_runtime::resource("counter://value")]
async fn counter_value() -> String {
    COUNTER.load(Ordering::SeqCst).to_string()
}

/// Counts one up and says so to subscribers.
#[tool]
async fn bump(cx: mcp_runtime::Context) -> String {
    let n = COUNTER.fetch_add(1, Ordering::SeqCst) + 1;
    cx.notify_resource_updated("counter://value");
    n.to_string()
}

/// The server's own `notifications/resources/updated` makes a `Cache` among its
/// middleware forget that resource's reads: the next read is the new contents.
#[test]
fn a_cache_forgets_a_resource_the_server_says_changed() {
    let server = Server::builder("mw-updated", "1.0")
        .tools(tools![bump])
        .resources(mcp_runtime::resources![counter_value])
        .layer(Cache::new(Duration::from_secs(60)))
        .build()
        .unwrap();
    let a = common::serve_in_background(server.http());
    let read = || read_text(a, "counter://value");
    let before = read();
    assert_eq!(read(), before, "cached");
    assert_eq!(text(&call(a, "bump", json!({}))), "1");
    assert_eq!(read(), "1", "read after the update");
}

static SLOW_COUNTER: AtomicUsize = AtomicUsize::new(0);

/// Whether a read of the slow counter has taken its value.
static SLOW_TAKEN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// A counter read slowly: the first read takes its value, then answers it only once the
/// counter has moved on (or 10 s have passed).
#[mcp_runtime::resource("slow://value")]
async fn slow_value() -> String {
    let v = SLOW_COUNTER.load(Ordering::SeqCst);
    if !SLOW_TAKEN.swap(true, Ordering::SeqCst) {
        let start = std::time::Instant::now();
        while SLOW_COUNTER.load(Ordering::SeqCst) == v && start.elapsed().as_secs() < 10 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    v.to_string()
}

/// Counts the slow counter up and says so.
#[tool]
async fn bump_slow(cx: mcp_runtime::Context) -> String {
    let n = SLOW_COUNTER.fetch_add(1, Ordering::SeqCst) + 1;
    cx.notify_resource_updated("slow://value");
    n.to_string()
}

/// A read that began before an update and ends after it does not leave the old contents
/// in the cache: the next read reads again.
#[test]
fn a_read_overtaken_by_an_update_is_not_kept() {
    let server = Server::builder("mw-race", "1.0")
        .tools(tools![bump_slow])
        .resources(mcp_runtime::resources![slow_value])
        .layer(Cache::new(Duration::from_secs(60)))
        .build()
        .unwrap();
    let a = common::serve_in_background(server.http());
    let read = move || read_text(a, "slow://value");
    let slow = std::thread::spawn(read);
    while !SLOW_TAKEN.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(text(&call(a, "bump_slow", json!({}))), "1");
    assert_eq!(slow.join().unwrap(), "0", "the read that began first");
    assert_eq!(read(), "1", "read after the update");
}

static STEADY_RUNS: AtomicUsize = AtomicUsize::new(0);
static TICKS: AtomicUsize = AtomicUsize::new(0);

/// A resource that never changes; its first read lasts until another resource's update
/// has been announced (or 10 s).
#[mcp_runtime::resource("steady://a")]
async fn steady() -> String {
    if STEADY_RUNS.fetch_add(1, Ordering::SeqCst) == 0 {
        let start = std::time::Instant::now();
        while TICKS.load(Ordering::SeqCst) == 0 && start.elapsed().as_secs() < 10 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    "steady".into()
}

/// Announces an update of another resource.
#[tool]
async fn tick(cx: mcp_runtime::Context) -> String {
    cx.notify_resource_updated("clock://now");
    TICKS.fetch_add(1, Ordering::SeqCst).to_string()
}

/// An update of another resource while a read runs does not keep that read out of the
/// cache.
#[test]
fn another_resources_update_does_not_stop_caching() {
    let server = Server::builder("mw-other", "1.0")
        .tools(tools![tick])
        .resources(mcp_runtime::resources![steady])
        .layer(Cache::new(Duration::from_secs(60)))
        .build()
        .unwrap();
    let a = common::serve_in_background(server.http());
    let read = move || read_text(a, "steady://a");
    let first = std::thread::spawn(read);
    while STEADY_RUNS.load(Ordering::SeqCst) == 0 {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(text(&call(a, "tick", json!({}))), "0");
    assert_eq!(first.join().unwrap(), "steady");
    assert_eq!(read(), "steady");
    assert_eq!(
        STEADY_RUNS.load(Ordering::SeqCst),
        1,
        "read again, not cached"
    );
}

static KID_COUNTER: AtomicUsize = AtomicUsize::new(0);

/// Another counter, in a mounted child.
#[mcp_runtime::resource("tally://value")]
async fn tally() -> String {
    KID_COUNTER.load(Ordering::SeqCst).to_string()
}

/// Counts the child's counter up and says so.
#[tool]
async fn tally_up(cx: mcp_runtime::Context) -> String {
    let n = KID_COUNTER.fetch_add(1, Ordering::SeqCst) + 1;
    cx.notify_resource_updated("tally://value");
    n.to_string()
}

/// A `Cache` on a mounted child's builder is told of its resources' updates too (under
/// the URI the parent serves them at), as it is when the child is served alone.
#[test]
fn a_cache_in_a_mounted_child_forgets_what_changed() {
    let child = Server::builder("kid", "1.0")
        .tools(tools![tally_up])
        .resources(mcp_runtime::resources![tally])
        .layer(Cache::new(Duration::from_secs(60)));
    let server = Server::builder("parent", "1.0")
        .mount("kid", child)
        .build()
        .unwrap();
    let a = common::serve_in_background(server.http());
    let read = || read_text(a, "kid+tally://value");
    let before = read();
    assert_eq!(read(), before, "cached");
    assert_eq!(text(&call(a, "kid_tally_up", json!({}))), "1");
    assert_eq!(read(), "1", "read after the update");
}
