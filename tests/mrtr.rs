//! Multi round-trip requests over real HTTP: rounds, recorded steps, sealed state,
//! capabilities, validation, and two instances sharing a key.

mod common;

use common::*;
use mcp_runtime::config::RequestState;
use mcp_runtime::mrtr::KeyRing;
use mcp_runtime::{Error, Input, Server, tool, tools};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Login {
    /// GitHub login
    login: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Repo {
    /// Which repository
    repo: String,
}

/// Looks things up, asks, works, asks again.
#[tool]
async fn pick_repo(team: String, input: Input) -> Result<String, Error> {
    let members = input
        .step("members", async {
            vec!["ada".to_owned(), "alan".to_owned()]
        })
        .await?;
    let who: Login = input
        .elicit("login", format!("Which of {members:?} in {team} are you?"))
        .await?
        .accepted()?;
    let repos = input
        .step("repos", async { vec![format!("{}/engine", who.login)] })
        .await?;
    let pick: Repo = input
        .elicit("repo", format!("Pick one of {repos:?}"))
        .await?
        .accepted()?;
    Ok(format!(
        "{} picked {} (round {})",
        who.login,
        pick.repo,
        input.round()
    ))
}

/// Needs URL-mode elicitation.
#[tool]
async fn needs_url(input: Input) -> Result<String, Error> {
    input
        .elicit_url("auth", "Sign in", "https://example.com/auth")
        .await?
        .accepted()?;
    Ok("signed in".into())
}

fn server() -> Server {
    Server::builder("mrtr-test", "1.0")
        .request_state(RequestState::keys(
            KeyRing::new([("k1", [9u8; 32])]).unwrap(),
        ))
        .tools(tools![pick_repo, needs_url])
        .build()
        .unwrap()
}

fn addr() -> SocketAddr {
    static ADDR: OnceLock<SocketAddr> = OnceLock::new();
    *ADDR.get_or_init(|| serve_in_background(server().http()))
}

fn elicitation_caps() -> Value {
    json!({"elicitation": {}})
}

fn call(args: Value, state: Option<&str>, responses: Option<Value>, caps: Value) -> (u16, Value) {
    let mut params = json!({"name": "pick_repo", "arguments": args});
    if let Some(s) = state {
        params["requestState"] = json!(s);
    }
    if let Some(r) = responses {
        params["inputResponses"] = r;
    }
    let mut body = request(json!(1), "tools/call", params);
    body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = caps;
    let r = post(addr(), &body);
    (r.status, r.json())
}

fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

#[test]
fn three_rounds_and_each_step_runs_once() {
    let args = json!({"team": "core"});
    let (status, r1) = call(args.clone(), None, None, elicitation_caps());
    assert_eq!(status, 200);
    let res = &r1["result"];
    assert_eq!(res["resultType"], "input_required");
    assert!(
        res.get("ttlMs").is_none(),
        "no caching hints on input_required"
    );
    let req = &res["inputRequests"]["login"];
    assert_eq!(req["method"], "elicitation/create");
    assert_eq!(
        req["params"]["requestedSchema"]["properties"]["login"]["type"],
        "string"
    );
    assert!(req.get("id").is_none() && req.get("jsonrpc").is_none());
    let s1 = res["requestState"].as_str().unwrap().to_owned();
    assert!(s1.starts_with("v1.k1."));
    assert!(!s1.contains("ada"), "the state is encrypted");

    // Round 2: the answer, with keys in another order (the digest is canonical).
    let (_, r2) = call(
        json!({"team": "core"}),
        Some(&s1),
        Some(json!({"login": accept(json!({"login": "ada"})), "unknown": 1})),
        elicitation_caps(),
    );
    let res = &r2["result"];
    assert_eq!(res["resultType"], "input_required");
    assert!(
        res["inputRequests"]["repo"]["params"]["message"]
            .as_str()
            .unwrap()
            .contains("ada/engine")
    );
    let s2 = res["requestState"].as_str().unwrap().to_owned();
    assert_ne!(s1, s2);

    let (_, r3) = call(
        args,
        Some(&s2),
        Some(json!({"repo": accept(json!({"repo": "ada/engine"}))})),
        elicitation_caps(),
    );
    assert_eq!(r3["result"]["resultType"], "complete", "{r3}");
    assert_eq!(
        r3["result"]["content"][0]["text"],
        "ada picked ada/engine (round 3)"
    );
}

/// Used by one test only, so the counts are its own.
static BEFORE_FIRST: AtomicUsize = AtomicUsize::new(0);
static BEFORE_SECOND: AtomicUsize = AtomicUsize::new(0);

/// The same flow, counting its side effects.
#[tool]
async fn counted(input: Input) -> Result<String, Error> {
    input
        .step("a", async { BEFORE_FIRST.fetch_add(1, Ordering::SeqCst) })
        .await?;
    let who: Login = input.elicit("login", "Who are you?").await?.accepted()?;
    input
        .step("b", async { BEFORE_SECOND.fetch_add(1, Ordering::SeqCst) })
        .await?;
    let pick: Repo = input
        .elicit("repo", "Which repository?")
        .await?
        .accepted()?;
    Ok(format!("{} {}", who.login, pick.repo))
}

#[test]
fn the_side_effect_before_the_second_question_runs_exactly_once() {
    let server = Server::builder("counted", "1.0")
        .request_state(RequestState::keys(
            KeyRing::new([("k", [4u8; 32])]).unwrap(),
        ))
        .tools(tools![counted])
        .build()
        .unwrap();
    let a = serve_in_background(server.http());
    let run = |state: Option<&str>, responses: Option<Value>| {
        let mut params = json!({"name": "counted"});
        if let Some(s) = state {
            params["requestState"] = json!(s);
        }
        if let Some(r) = responses {
            params["inputResponses"] = r;
        }
        let mut body = request(json!(1), "tools/call", params);
        body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = elicitation_caps();
        post(a, &body).json()["result"].clone()
    };
    let r1 = run(None, None);
    let r2 = run(
        r1["requestState"].as_str(),
        Some(json!({"login": accept(json!({"login": "alan"}))})),
    );
    let r3 = run(
        r2["requestState"].as_str(),
        Some(json!({"repo": accept(json!({"repo": "x"}))})),
    );
    assert_eq!(r3["content"][0]["text"], "alan x", "{r3}");
    // Three rounds; the work before each question ran exactly once.
    assert_eq!(BEFORE_FIRST.load(Ordering::SeqCst), 1);
    assert_eq!(BEFORE_SECOND.load(Ordering::SeqCst), 1);
}

#[test]
fn a_bad_state_is_one_generic_error() {
    let args = json!({"team": "core"});
    let (_, r1) = call(args.clone(), None, None, elicitation_caps());
    let s1 = r1["result"]["requestState"].as_str().unwrap().to_owned();
    let answer = || Some(json!({"login": accept(json!({"login": "ada"}))}));
    let mut messages = Vec::new();
    // One bit flipped in the middle of the sealed part.
    let mut bytes = s1.clone().into_bytes();
    let mid = bytes.len() - 20;
    bytes[mid] = if bytes[mid] == b'A' { b'B' } else { b'A' };
    let flipped = String::from_utf8(bytes).unwrap();
    for (state, args) in [
        (format!("{s1}-TAMPERED"), args.clone()),
        (flipped, args.clone()),
        (s1[..s1.len() - 10].to_owned(), args.clone()),
        (format!("v1.k1.{}", "A".repeat(70 * 1024)), args.clone()),
        (s1.replace("v1.k1.", "v1.k9."), args.clone()),
        (s1.clone(), json!({"team": "other"})),
        ("not-a-state".to_owned(), args.clone()),
    ] {
        let (_, v) = call(args, Some(&state), answer(), elicitation_caps());
        assert_eq!(v["error"]["code"], -32602, "{v}");
        messages.push(v["error"]["message"].as_str().unwrap().to_owned());
    }
    assert!(messages.windows(2).all(|w| w[0] == w[1]), "{messages:?}");

    // Replayed on another tool of the same server.
    let mut body = request(
        json!(1),
        "tools/call",
        json!({"name": "needs_url", "requestState": s1, "inputResponses": {"auth": {"action": "accept"}}}),
    );
    body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
        json!({"elicitation": {"url": {}}});
    let v = post(addr(), &body).json();
    assert_eq!(v["error"]["code"], -32602, "{v}");
    assert_eq!(v["error"]["message"], messages[0]);

    // Another server's key.
    let other = Server::builder("x", "1")
        .request_state(RequestState::keys(
            KeyRing::new([("k1", [1u8; 32])]).unwrap(),
        ))
        .tools(tools![pick_repo])
        .build()
        .unwrap();
    let b = serve_in_background(other.http());
    let mut body = request(
        json!(1),
        "tools/call",
        json!({"name": "pick_repo", "arguments": args, "requestState": s1, "inputResponses": answer()}),
    );
    body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = elicitation_caps();
    assert_eq!(post(b, &body).json()["error"]["code"], -32602);
}

#[test]
fn answers_without_state_start_over_and_never_complete() {
    let (_, v) = call(
        json!({"team": "core"}),
        None,
        Some(json!({"login": accept(json!({"login": "ada"}))})),
        elicitation_caps(),
    );
    assert_eq!(v["result"]["resultType"], "input_required");
    assert!(v["result"]["inputRequests"].get("login").is_some());
}

#[test]
fn bad_answers_are_asked_again_and_bad_shapes_are_errors() {
    let args = json!({"team": "core"});
    let (_, r1) = call(args.clone(), None, None, elicitation_caps());
    let s1 = r1["result"]["requestState"].as_str().unwrap().to_owned();
    for bad in [
        json!(12345),
        json!({"action": "accept", "content": {"login": 5}}),
        json!({"action": "maybe"}),
    ] {
        let (_, v) = call(
            args.clone(),
            Some(&s1),
            Some(json!({"login": bad})),
            elicitation_caps(),
        );
        assert_eq!(v["result"]["resultType"], "input_required", "{v}");
        assert!(
            v["result"]["inputRequests"]["login"]["params"]["message"]
                .as_str()
                .unwrap()
                .contains("not valid")
        );
    }
    let (_, v) = call(
        args.clone(),
        Some(&s1),
        Some(Value::Null),
        elicitation_caps(),
    );
    assert_eq!(v["error"]["code"], -32602);
    // Decline is an answer: the handler sees it (here: an isError result).
    let (_, v) = call(
        args,
        Some(&s1),
        Some(json!({"login": {"action": "decline"}})),
        elicitation_caps(),
    );
    assert_eq!(v["result"]["isError"], true);
    assert!(
        v["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("declined")
    );
}

#[test]
fn undeclared_capabilities_are_minus_32021() {
    let (status, v) = call(json!({"team": "core"}), None, None, json!({}));
    assert_eq!(status, 400);
    assert_eq!(v["error"]["code"], -32021);
    assert_eq!(
        v["error"]["data"]["requiredCapabilities"],
        json!({"elicitation": {"form": {}}})
    );
    // Form-only elicitation does not cover URL mode.
    let mut body = request(json!(1), "tools/call", json!({"name": "needs_url"}));
    body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = elicitation_caps();
    let r = post(addr(), &body);
    assert_eq!(
        r.json()["error"]["data"]["requiredCapabilities"],
        json!({"elicitation": {"url": {}}})
    );
    // A client that takes only an event stream, with a progress token (so the answer is a
    // stream): the check comes before the stream opens, so the status is still 400.
    let mut body = request(
        json!(2),
        "tools/call",
        json!({"name": "pick_repo", "arguments": {"team": "core"}}),
    );
    body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({});
    body["params"]["_meta"]["progressToken"] = json!("p");
    let r = post_with(
        addr(),
        &body,
        &["Accept"],
        &[("Accept", "text/event-stream")],
    );
    assert_eq!(r.status, 400, "{}", r.text());
    let events = r.sse_events();
    assert_eq!(events.len(), 1, "{}", r.text());
    assert_eq!(events[0]["id"], 2, "{}", r.text());
    assert_eq!(events[0]["error"]["code"], -32021, "{}", r.text());
}

#[test]
fn expired_states_are_refused() {
    let server = Server::builder("x", "1")
        .request_state(
            RequestState::keys(KeyRing::new([("k1", [3u8; 32])]).unwrap())
                .ttl(Duration::from_millis(200))
                .leeway(Duration::from_millis(100)),
        )
        .tools(tools![pick_repo])
        .build()
        .unwrap();
    let a = serve_in_background(server.http());
    let mut body = request(
        json!(1),
        "tools/call",
        json!({"name": "pick_repo", "arguments": {"team": "t"}}),
    );
    body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = elicitation_caps();
    let s = post(a, &body).json()["result"]["requestState"]
        .as_str()
        .unwrap()
        .to_owned();
    // Millisecond precision: still valid within the TTL plus the leeway, refused after.
    body["params"]["requestState"] = json!(s);
    body["params"]["inputResponses"] = json!({"login": accept(json!({"login": "ada"}))});
    std::thread::sleep(Duration::from_millis(150));
    let valid = post(a, &body).json();
    assert!(valid.get("result").is_some(), "{valid}");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(post(a, &body).json()["error"]["code"], -32602);
}

#[tokio::test]
async fn http_refuses_an_ephemeral_key_unless_single_instance() {
    let server = Server::builder("x", "1")
        .tools(tools![pick_repo])
        .build()
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let err = server
        .http()
        .serve(listener, std::future::pending())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("MCP_REQUEST_STATE_KEYS"), "{err}");
}

/// A malformed key variable is refused when the server is built (the keys themselves are
/// derived on the first round), whatever is wrong with it.
#[test]
fn a_malformed_key_variable_fails_the_build() {
    for (value, says) in [
        ("k1=c2hvcnQ", "key `k1` has 5 bytes; use at least 32"),
        ("k1=!!!", "key `k1` is not base64url"),
        ("k1", "expected kid=base64url, got `k1`"),
        (" , ", "a key ring needs at least one key"),
        // Every key is read before any is checked.
        ("k1=c2hvcnQ,k2", "expected kid=base64url, got `k2`"),
        (
            "k 1=AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIj",
            "key id `k 1` must be made of letters, digits, `_` and `-`",
        ),
    ] {
        let out = std::process::Command::new(example("conformance"))
            .arg("--stdio")
            .env("MCP_REQUEST_STATE_KEYS", value)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{value:?}: {stderr}");
        assert!(
            stderr.contains(&format!("MCP_REQUEST_STATE_KEYS: {says}")),
            "{value:?}: {stderr}"
        );
    }
}

#[test]
fn two_instances_sharing_a_key_complete_a_flow_together() {
    let key = "shared=AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIj";
    let spawn = || {
        let mut child = std::process::Command::new(example("conformance"))
            .env("PORT", "0")
            .env("MCP_REQUEST_STATE_KEYS", key)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::BufRead;
        let stderr = child.stderr.take().unwrap();
        let mut lines = std::io::BufReader::new(stderr).lines();
        let addr: SocketAddr = loop {
            let line = lines.next().expect("listening").unwrap();
            if let Some(rest) = line.split("http://").nth(1) {
                break rest.split('/').next().unwrap().parse().unwrap();
            }
        };
        std::thread::spawn(move || for _ in lines {});
        (ChildGuard(child), addr)
    };
    let ((_a, a), (_b, b)) = (spawn(), spawn());
    let mut body = request(
        json!(1),
        "tools/call",
        json!({"name": "test_input_required_result_multi_round"}),
    );
    body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = elicitation_caps();
    let r1 = post(a, &body).json();
    assert!(
        r1["result"]["requestState"]
            .as_str()
            .unwrap()
            .starts_with("v1.shared.")
    );
    body["params"]["requestState"] = r1["result"]["requestState"].clone();
    body["params"]["inputResponses"] = json!({"step1": accept(json!({"name": "Ada"}))});
    let r2 = post(b, &body).json();
    assert_eq!(r2["result"]["resultType"], "input_required", "{r2}");
    body["params"]["requestState"] = r2["result"]["requestState"].clone();
    body["params"]["inputResponses"] = json!({"step2": accept(json!({"color": "green"}))});
    let r3 = post(a, &body).json();
    assert_eq!(r3["result"]["content"][0]["text"], "Ada likes green");
}

#[derive(serde::Deserialize, schemars::JsonSchema, mcp_runtime::Form)]
#[serde(rename_all = "lowercase")]
enum Env {
    Staging,
    Production,
}

#[derive(serde::Deserialize, schemars::JsonSchema, mcp_runtime::Form)]
struct Target {
    /// Where to deploy
    env: Env,
    #[allow(dead_code)]
    note: Option<String>,
}

#[derive(serde::Deserialize, schemars::JsonSchema, mcp_runtime::Form)]
struct Sure {
    ok: bool,
}

static DEPLOY_BODY_RUNS: AtomicUsize = AtomicUsize::new(0);

/// Deploys a service after asking where, and whether, in one round.
#[tool]
#[mcp_runtime::needs_input]
async fn deploy(
    service: String,
    #[input(elicit = "Deploy {service}: where to?")] target: Target,
    #[input(elicit = "Really deploy {service}?")] sure: mcp_runtime::Elicited<Sure>,
) -> Result<String, Error> {
    DEPLOY_BODY_RUNS.fetch_add(1, Ordering::SeqCst);
    let env = match target.env {
        Env::Staging => "staging",
        Env::Production => "production",
    };
    Ok(match sure {
        mcp_runtime::Elicited::Accept(Sure { ok: true }) => format!("deployed {service} to {env}"),
        _ => format!("{service} stays where it is"),
    })
}

#[test]
fn declared_inputs_are_asked_together_and_the_body_runs_once() {
    let server = Server::builder("deploy", "1.0")
        .request_state(RequestState::keys(
            KeyRing::new([("k", [5u8; 32])]).unwrap(),
        ))
        .tools(tools![deploy])
        .build()
        .unwrap();
    let a = serve_in_background(server.http());
    let list = post(a, &request(json!(1), "tools/list", json!({}))).json();
    let schema = &list["result"]["tools"][0]["inputSchema"];
    assert_eq!(
        schema["required"],
        json!(["service"]),
        "inputs are not arguments: {schema}"
    );
    assert!(schema["properties"].get("target").is_none());

    let run = |state: Option<&str>, responses: Option<Value>| {
        let mut params = json!({"name": "deploy", "arguments": {"service": "api"}});
        if let Some(s) = state {
            params["requestState"] = json!(s);
        }
        if let Some(r) = responses {
            params["inputResponses"] = r;
        }
        let mut body = request(json!(1), "tools/call", params);
        body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = elicitation_caps();
        post(a, &body).json()["result"].clone()
    };
    let r1 = run(None, None);
    let asks = r1["inputRequests"].as_object().unwrap();
    assert_eq!(
        asks.keys().collect::<Vec<_>>(),
        ["sure", "target"],
        "both in one round"
    );
    assert_eq!(asks["target"]["params"]["message"], "Deploy api: where to?");
    assert_eq!(
        asks["target"]["params"]["requestedSchema"]["properties"]["env"]["enum"],
        json!(["staging", "production"])
    );
    assert_eq!(
        DEPLOY_BODY_RUNS.load(Ordering::SeqCst),
        0,
        "the body waits for every input"
    );
    let s = r1["requestState"].as_str().unwrap().to_owned();

    // Only one answer: asked again for the other, body still not run.
    let r2 = run(
        Some(&s),
        Some(json!({"target": accept(json!({"env": "staging"}))})),
    );
    assert_eq!(
        r2["inputRequests"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["sure"]
    );
    assert_eq!(DEPLOY_BODY_RUNS.load(Ordering::SeqCst), 0);
    let r3 = run(
        r2["requestState"].as_str(),
        Some(json!({"sure": accept(json!({"ok": true}))})),
    );
    assert_eq!(r3["content"][0]["text"], "deployed api to staging");
    assert_eq!(DEPLOY_BODY_RUNS.load(Ordering::SeqCst), 1);

    // A typed decline reaches the body; a plain `T` declined is an error result.
    let r = run(
        Some(&s),
        Some(
            json!({"target": accept(json!({"env": "production"})), "sure": {"action": "decline"}}),
        ),
    );
    assert_eq!(r["content"][0]["text"], "api stays where it is");
    let r = run(
        Some(&s),
        Some(json!({"target": {"action": "cancel"}, "sure": accept(json!({"ok": true}))})),
    );
    assert_eq!(r["isError"], true);
}

/// Asks for a form and an approval at a URL, in one round.
#[tool]
#[mcp_runtime::needs_input]
async fn approve_deploy(
    service: String,
    #[input(elicit = "Where should {service} go?")] target: Target,
    #[input(
        url = "https://example.com/approve/{service}",
        message = "Approve {service}"
    )]
    approval: mcp_runtime::Elicited<()>,
    #[input(sample = "Summarise the change to {service}.", max_tokens = 64)] summary: Value,
) -> String {
    let _ = (target.env, approval, summary);
    format!("{service} deployed")
}

/// The inputs of a handler are asked together, so what they need of the client is checked
/// before any is asked: a client that declared form elicitation only is refused at once,
/// with every capability it lacks, instead of being asked the form and refused after
/// answering it.
#[test]
fn declared_inputs_check_every_capability_before_asking() {
    let server = Server::builder("approve", "1.0")
        .request_state(RequestState::keys(
            KeyRing::new([("k", [6u8; 32])]).unwrap(),
        ))
        .tools(tools![approve_deploy])
        .build()
        .unwrap();
    let a = serve_in_background(server.http());
    let run = |caps: Value| {
        let params = json!({"name": "approve_deploy", "arguments": {"service": "api"}});
        let mut body = request(json!(1), "tools/call", params);
        body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = caps;
        let r = post(a, &body);
        (r.status, r.json())
    };
    let (status, v) = run(json!({"elicitation": {"form": {}}}));
    assert_eq!(status, 400, "{v}");
    assert_eq!(v["error"]["code"], -32021, "{v}");
    assert_eq!(
        v["error"]["data"]["requiredCapabilities"],
        json!({"elicitation": {"url": {}}, "sampling": {}}),
        "{v}"
    );
    let message = v["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("`elicitation.url` and `sampling`"),
        "{message}"
    );
    // Nothing declared: all three, the form's too.
    let (_, v) = run(json!({}));
    assert_eq!(
        v["error"]["data"]["requiredCapabilities"],
        json!({"elicitation": {"form": {}, "url": {}}, "sampling": {}}),
        "{v}"
    );
    // Arguments that are not valid too: the capabilities are checked first (security.md
    // R-1), so the answer is still -32021 (400), not the arguments' isError.
    let params = json!({"name": "approve_deploy", "arguments": {"service": 7}});
    let mut body = request(json!(2), "tools/call", params);
    body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({});
    let r = post(a, &body);
    assert_eq!(r.status, 400, "{}", r.text());
    assert_eq!(r.json()["error"]["code"], -32021, "{}", r.text());
    // Everything declared: all three asked in the first round.
    let (status, v) = run(json!({"elicitation": {"form": {}, "url": {}}, "sampling": {}}));
    assert_eq!(status, 200, "{v}");
    let asks = v["result"]["inputRequests"].as_object().unwrap();
    assert_eq!(
        asks.keys().collect::<Vec<_>>(),
        ["approval", "summary", "target"],
        "{v}"
    );
    // The form asked is in the spec's terms: the optional `note` has one type.
    assert_eq!(
        asks["target"]["params"]["requestedSchema"]["properties"]["note"],
        json!({"type": "string"}),
        "{v}"
    );
}

/// A prompt that asks.
#[mcp_runtime::prompt]
#[mcp_runtime::needs_input]
async fn release_notes(
    version: String,
    #[input(elicit = "Notes for {version}: which audience?")] target: Target,
) -> String {
    let _ = target.env;
    format!("notes for {version}")
}

/// A resource that asks.
#[mcp_runtime::resource("build://{id}")]
#[mcp_runtime::needs_input]
async fn build_log(
    id: u32,
    #[input(elicit = "Log of build {id}: where?")] target: Target,
) -> String {
    let _ = target.env;
    format!("build {id}")
}

/// What a prompt's or a resource's inputs need of the client is checked before its
/// arguments, as a tool's is (security.md R-1: capabilities, then arguments): a client
/// without elicitation that also leaves out a required prompt argument, or reads a
/// template URI whose variable is not of its type, is told it lacks the capability
/// (`-32021`), not what is wrong with its arguments.
#[test]
fn prompts_and_resources_check_input_capabilities_before_arguments() {
    let server = Server::builder("ask-more", "1.0")
        .request_state(RequestState::single_instance())
        .prompts(mcp_runtime::prompts![release_notes])
        .resources(mcp_runtime::resources![build_log])
        .build()
        .unwrap();
    let a = serve_in_background(server.http());
    let send = |method: &str, params: Value, caps: Value| {
        let mut body = request(json!(1), method, params);
        body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = caps;
        let r = post(a, &body);
        (r.status, r.json())
    };
    let prompt = json!({"name": "release_notes", "arguments": {}});
    let (status, v) = send("prompts/get", prompt.clone(), json!({}));
    assert_eq!((status, &v["error"]["code"]), (400, &json!(-32021)), "{v}");
    assert_eq!(
        v["error"]["data"]["requiredCapabilities"],
        json!({"elicitation": {"form": {}}}),
        "{v}"
    );
    // With the capability, the missing argument is what is wrong.
    let (_, v) = send("prompts/get", prompt, elicitation_caps());
    assert_eq!(v["error"]["code"], -32602, "{v}");

    let read = json!({"uri": "build://seven"});
    let (status, v) = send("resources/read", read.clone(), json!({}));
    assert_eq!((status, &v["error"]["code"]), (400, &json!(-32021)), "{v}");
    let (_, v) = send("resources/read", read, elicitation_caps());
    assert_eq!(v["error"]["code"], -32602, "{v}");
    // Both well formed, with the capability: asked.
    let read = json!({"uri": "build://7"});
    let (status, v) = send("resources/read", read, elicitation_caps());
    assert_eq!(status, 200, "{v}");
    assert!(v["result"]["inputRequests"]["target"].is_object(), "{v}");
}
