//! Authorization against a real authorization server: oidc-provider (OpenID certified,
//! from npm, pinned in tests/clients/package.json), started by each test, issuing signed
//! JWT access tokens and opaque ones with the client-credentials grant. The server under
//! test is a resource server over real HTTP on 127.0.0.1.
//!
//! Skipped (with a message) when Node or oidc-provider is missing, unless
//! `MCP_REAL_CLIENTS=required` (as on CI), where that is a failure.

mod common;

use common::*;
use mcp_runtime::auth::{Auth, Caller, Introspection, JwtValidator, Principal};
use mcp_runtime::config::RequestState;
use mcp_runtime::{Error, Input, Server, prompt, prompts, resource, resources, tool, tools};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

// ---------------------------------------------------------------------------------------
// The server under test.

/// Who is calling.
#[tool]
async fn whoami(caller: Principal) -> String {
    let scopes: Vec<&str> = caller.granted_scopes().collect();
    format!("{} {}", caller.subject(), scopes.join(" "))
}

/// Writes a note (needs `mcp:write`).
#[tool(scopes("mcp:write"))]
async fn write_note(text: String) -> String {
    format!("wrote {text}")
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Ok_ {
    ok: bool,
}

/// Asks before answering.
#[tool]
async fn confirm(input: Input, caller: Caller) -> Result<String, Error> {
    let a: Ok_ = input.elicit("ok", "Sure?").await?.accepted()?;
    Ok(format!("{} {}", caller.subject().unwrap_or("-"), a.ok))
}

/// Keeps a secret behind a handle.
#[tool]
async fn stash(
    handles: mcp_runtime::store::Handles,
    secret: String,
) -> Result<String, mcp_runtime::store::HandleError> {
    handles.mint(&secret).await
}

/// Reads a stashed secret back.
#[tool]
async fn unstash(
    handles: mcp_runtime::store::Handles,
    id: String,
) -> Result<String, mcp_runtime::store::HandleError> {
    handles.get(&id).await
}

/// A long job, as a task.
#[tool(task = "required")]
async fn long_job() -> &'static str {
    tokio::time::sleep(Duration::from_secs(30)).await;
    "done"
}

/// A review (needs `mcp:write`).
#[prompt(scopes("mcp:write"))]
async fn review(code: String) -> String {
    format!("review {code}")
}

/// Binds a port for a server that needs its own URL before it starts.
/// The plan, for writers only.
#[resource("secret://plan", scopes("mcp:write"))]
async fn plan() -> &'static str {
    "the plan"
}

/// What a `subscriptions/listen` for `uri` with `token` is acknowledged with.
fn listen_ack(addr: SocketAddr, uri: &str, token: &str) -> Value {
    let body = request(
        json!("sub"),
        "subscriptions/listen",
        json!({"notifications": {"resourceSubscriptions": [uri]}}),
    );
    let mut headers = standard_headers(&body);
    headers.push(("Authorization".into(), format!("Bearer {token}")));
    let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (&**k, &**v)).collect();
    let mut stream = Sse::send(
        addr,
        &post_bytes(addr, body.to_string().as_bytes(), &headers),
    );
    stream
        .next(Duration::from_secs(5))
        .expect("an acknowledgement")
}

fn reserve() -> (TcpListener, u16) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    (l, port)
}

fn serve(listener: TcpListener, auth: Auth) -> SocketAddr {
    let server = Server::builder("auth-test", "1.0")
        .tools(tools![
            whoami, write_note, confirm, long_job, stash, unstash
        ])
        .prompts(prompts![review])
        .resources(resources![plan])
        .request_state(RequestState::single_instance())
        .auth(auth)
        .build()
        .expect("a valid server");
    serve_on(listener, server.http())
}

// ---------------------------------------------------------------------------------------
// The authorization server.

struct AuthServer {
    child: Child,
    port: u16,
}

impl Drop for AuthServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl AuthServer {
    fn issuer(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

fn clients_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients")
}

/// Starts oidc-provider on `port` with `env`; `None` (test skipped) when unavailable here.
fn start_as(port: u16, env: &[(&str, String)]) -> Option<AuthServer> {
    let dir = clients_dir();
    let node = std::env::var("MCP_NODE").unwrap_or_else(|_| "node".into());
    if !dir.join("node_modules/oidc-provider").exists() {
        let why =
            "tests/clients/node_modules/oidc-provider is missing (run tests/clients/setup.sh)";
        if std::env::var("MCP_REAL_CLIENTS").as_deref() == Ok("required") {
            panic!("the authorization server is required: {why}");
        }
        eprintln!("skipping: {why}");
        return None;
    }
    let mut cmd = Command::new(node);
    cmd.arg(dir.join("auth_server.mjs"))
        .env("PORT", port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("start node");
    let out = child.stdout.take().unwrap();
    let mut lines = BufReader::new(out).lines();
    let ready = lines.next().and_then(Result::ok).unwrap_or_default();
    assert!(
        ready.starts_with("ready "),
        "oidc-provider did not start: {ready:?}"
    );
    std::thread::spawn(move || for _ in lines {});
    Some(AuthServer { child, port })
}

fn free_port() -> u16 {
    reserve().1
}

/// A client-credentials token from `as_`: `client` (`svc`, `svc2`), `scope`, for
/// `resource`.
fn token(as_: &AuthServer, client: &str, scope: &str, resource: &str) -> String {
    use base64::Engine;
    let enc = |s: &str| -> String {
        s.bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                    (b as char).to_string()
                }
                _ => format!("%{b:02X}"),
            })
            .collect()
    };
    let body = format!(
        "grant_type=client_credentials&scope={}&resource={}",
        enc(scope),
        enc(resource)
    );
    let basic =
        base64::engine::general_purpose::STANDARD.encode(format!("{client}:{client}-secret"));
    let req = format!(
        "POST /token HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\nAuthorization: Basic {basic}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\r\n{body}",
        as_.port,
        body.len()
    );
    let r = raw(SocketAddr::from(([127, 0, 0, 1], as_.port)), req.as_bytes());
    assert_eq!(r.status, 200, "token request: {}", r.text());
    r.json()["access_token"].as_str().unwrap().to_owned()
}

// ---------------------------------------------------------------------------------------
// Requests.

fn bearer(addr: SocketAddr, body: &Value, token: Option<&str>) -> Response {
    let auth = token.map(|t| format!("Bearer {t}"));
    let extra: Vec<(&str, &str)> = auth
        .as_deref()
        .map(|a| vec![("Authorization", a)])
        .unwrap_or_default();
    post_with(addr, body, &[], &extra)
}

fn get(addr: SocketAddr, path: &str) -> Response {
    let req = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    raw(addr, req.as_bytes())
}

fn call(name: &str, args: Value) -> Value {
    request(
        json!(1),
        "tools/call",
        json!({"name": name, "arguments": args}),
    )
}

fn list() -> Value {
    request(json!(2), "tools/list", json!({}))
}

fn challenge(r: &Response) -> String {
    r.header("www-authenticate")
        .unwrap_or_else(|| panic!("no WWW-Authenticate on {} {}", r.status, r.text()))
        .to_owned()
}

fn tool_names(r: &Response) -> Vec<String> {
    r.json()["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

/// Flips one character of the signature.
fn tamper(token: &str) -> String {
    let mut t = token.to_owned().into_bytes();
    let last = t.len() - 5;
    t[last] = if t[last] == b'A' { b'B' } else { b'A' };
    String::from_utf8(t).unwrap()
}

// ---------------------------------------------------------------------------------------

#[test]
fn jwt_access_tokens_are_checked_and_scopes_enforced() {
    capture_logs();
    let (listener, port) = reserve();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let as_port = free_port();
    let keys = std::env::temp_dir().join(format!("mcp-auth-keys-{as_port}.json"));
    let _ = std::fs::remove_file(&keys);
    let as_env = vec![
        ("RESOURCE", resource.clone()),
        ("KEYS_FILE", keys.display().to_string()),
    ];
    let Some(mut as_) = start_as(as_port, &as_env) else {
        return;
    };
    let issuer = as_.issuer();
    let validator = JwtValidator::new(&issuer, &resource)
        .key_refresh(Duration::from_secs(3600), Duration::ZERO);
    let auth = Auth::new(&resource, validator)
        .authorization_server(&issuer)
        .scopes_supported(["mcp:read"]);
    let addr = serve(listener, auth);
    let metadata_url = format!("http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp");

    // The metadata, at the path-suffixed and at the bare well-known URL.
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let m = get(addr, path);
        assert_eq!(m.status, 200, "{path}");
        assert_eq!(
            m.json(),
            json!({
                "resource": resource,
                "authorization_servers": [issuer],
                "scopes_supported": ["mcp:read"],
                "bearer_methods_supported": ["header"],
            })
        );
    }

    // GET without a legacy session can never be served: 405, before authentication.
    let r = get(addr, "/mcp");
    assert_eq!(r.status, 405, "{}", r.text());
    assert_eq!(r.header("allow"), Some("POST"));
    assert!(r.header("www-authenticate").is_none());

    // No token: 401 with the challenge, no `error`.
    let r = bearer(addr, &call("whoami", json!({})), None);
    assert_eq!(r.status, 401);
    assert_eq!(
        challenge(&r),
        format!(r#"Bearer scope="mcp:read", resource_metadata="{metadata_url}""#)
    );
    assert!(r.json()["error"]["message"].is_string());
    // Another scheme counts as none; a malformed bearer is invalid.
    let r = post_with(
        addr,
        &call("whoami", json!({})),
        &[],
        &[("Authorization", "Basic eDp5")],
    );
    assert_eq!(r.status, 401);
    assert!(!challenge(&r).contains("error="));
    let r = bearer(addr, &call("whoami", json!({})), Some("a b\"c"));
    assert_eq!(r.status, 401);
    assert!(challenge(&r).contains(r#"error="invalid_token""#));
    // Bytes beyond ASCII in a bearer credential: a malformed token too, not none.
    let r = bearer(addr, &call("whoami", json!({})), Some("t\u{f6}ken"));
    assert_eq!(r.status, 401);
    assert!(
        challenge(&r).contains(r#"error="invalid_token""#),
        "{}",
        challenge(&r)
    );

    // A valid token: the caller reaches the handler.
    let read = token(&as_, "svc", "mcp:read", &resource);
    let r = bearer(addr, &call("whoami", json!({})), Some(&read));
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["result"]["content"][0]["text"], "svc mcp:read");

    // Lists leave out what the caller cannot use, and are private then.
    let r = bearer(addr, &list(), Some(&read));
    assert_eq!(
        tool_names(&r),
        ["confirm", "long_job", "stash", "unstash", "whoami"]
    );
    assert_eq!(r.json()["result"]["cacheScope"], "private");
    let rw = token(&as_, "svc", "mcp:read mcp:write", &resource);
    let r = bearer(addr, &list(), Some(&rw));
    assert_eq!(
        tool_names(&r),
        [
            "confirm",
            "long_job",
            "stash",
            "unstash",
            "whoami",
            "write_note"
        ]
    );
    assert_eq!(r.json()["result"]["cacheScope"], "private");
    let prompts_list = request(json!(3), "prompts/list", json!({}));
    let r = bearer(addr, &prompts_list, Some(&read));
    assert_eq!(r.json()["result"]["prompts"], json!([]));

    // A call the token's scopes do not cover: 403 with the step-up challenge.
    let r = bearer(addr, &call("write_note", json!({"text": "x"})), Some(&read));
    assert_eq!(r.status, 403, "{}", r.text());
    let c = challenge(&r);
    assert!(c.starts_with(r#"Bearer error="insufficient_scope""#), "{c}");
    assert!(c.contains(r#"scope="mcp:write""#), "{c}");
    assert!(
        c.contains(&format!(r#"resource_metadata="{metadata_url}""#)),
        "{c}"
    );
    assert_eq!(
        r.json()["error"]["data"]["requiredScopes"],
        json!(["mcp:write"])
    );
    let get_review = request(
        json!(4),
        "prompts/get",
        json!({"name": "review", "arguments": {"code": "x"}}),
    );
    assert_eq!(bearer(addr, &get_review, Some(&read)).status, 403);
    // Nor may it hear of a resource it may not read: its subscription is left out.
    let subscribed = |ack: Value| ack["params"]["notifications"]["resourceSubscriptions"].clone();
    assert_eq!(
        subscribed(listen_ack(addr, "secret://plan", &read)),
        Value::Null
    );
    assert_eq!(
        subscribed(listen_ack(addr, "secret://plan", &rw)),
        json!(["secret://plan"])
    );
    let r = bearer(addr, &call("write_note", json!({"text": "x"})), Some(&rw));
    assert_eq!(r.json()["result"]["content"][0]["text"], "wrote x");

    // Tokens this server must refuse: 401 invalid_token.
    let foreign = token(&as_, "svc", "mcp:read", "https://other.example/api");
    let refused = [
        ("another audience", foreign),
        ("a bad signature", tamper(&read)),
        ("not a JWT", "opaque-garbage".to_owned()),
    ];
    for (what, bad) in refused.clone() {
        let r = bearer(addr, &call("whoami", json!({})), Some(&bad));
        assert_eq!(r.status, 401, "{what}: {}", r.text());
        assert!(challenge(&r).contains(r#"error="invalid_token""#), "{what}");
        assert!(!r.text().contains(&bad), "{what}: the token is echoed");
    }

    // Key rotation at the authorization server: a token signed by the new key (an
    // unknown `kid`) makes the server fetch the keys again, and passes.
    drop(as_);
    let mut rotated = as_env.clone();
    rotated.push(("ROTATE", "k2".to_owned()));
    as_ = start_as(as_port, &rotated).expect("restarted");
    let new = token(&as_, "svc", "mcp:read", &resource);
    assert!(header_kid(&new) == "k2");
    let r = bearer(addr, &call("whoami", json!({})), Some(&new));
    assert_eq!(r.status, 200, "after rotation: {}", r.text());
    // The old key is still published: its tokens still pass.
    assert_eq!(
        bearer(addr, &call("whoami", json!({})), Some(&read)).status,
        200
    );
    drop(as_);
    let _ = std::fs::remove_file(&keys);

    // The refusals were logged, with their reasons; no token ever was.
    let logged = logs();
    assert!(logged.contains("token refused"), "{logged}");
    assert!(
        logged.contains("subject=\"svc\""),
        "spans carry the subject: {logged}"
    );
    for t in [&read, &rw, &new]
        .into_iter()
        .chain(refused.iter().map(|(_, t)| t))
    {
        let signature = t.rsplit('.').next().unwrap();
        assert!(!logged.contains(signature), "a token reached the logs");
    }
}

fn header_kid(token: &str) -> String {
    use base64::Engine;
    let head = token.split('.').next().unwrap();
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(head)
        .unwrap();
    let v: Value = serde_json::from_slice(&bytes).unwrap();
    v["kid"].as_str().unwrap().to_owned()
}

#[test]
fn expired_and_foreign_issuer_tokens_are_refused() {
    let (listener, port) = reserve();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    // Two authorization servers: the server trusts the first; the second issues tokens
    // for the same resource that live one second.
    let Some(trusted) = start_as(
        free_port(),
        &[("RESOURCE", resource.clone()), ("AT_TTL", "1".into())],
    ) else {
        return;
    };
    let Some(other) = start_as(free_port(), &[("RESOURCE", resource.clone())]) else {
        return;
    };
    let validator = JwtValidator::new(trusted.issuer(), &resource).leeway(Duration::ZERO);
    let auth = Auth::new(&resource, validator).authorization_server(trusted.issuer());
    let addr = serve(listener, auth);

    let short = token(&trusted, "svc", "mcp:read", &resource);
    assert_eq!(
        bearer(addr, &call("whoami", json!({})), Some(&short)).status,
        200
    );
    std::thread::sleep(Duration::from_millis(2200));
    let r = bearer(addr, &call("whoami", json!({})), Some(&short));
    assert_eq!(r.status, 401);
    assert!(
        challenge(&r).contains(r#"error_description="token expired""#),
        "{}",
        challenge(&r)
    );

    let foreign = token(&other, "svc", "mcp:read", &resource);
    let r = bearer(addr, &call("whoami", json!({})), Some(&foreign));
    assert_eq!(r.status, 401, "{}", r.text());
    assert!(challenge(&r).contains(r#"error="invalid_token""#));
}

#[test]
fn request_state_and_legacy_sessions_belong_to_their_caller() {
    let (listener, port) = reserve();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let Some(as_) = start_as(free_port(), &[("RESOURCE", resource.clone())]) else {
        return;
    };
    let auth = Auth::new(&resource, JwtValidator::new(as_.issuer(), &resource))
        .authorization_server(as_.issuer());
    let addr = serve(listener, auth);
    let alice = token(&as_, "svc", "mcp:read", &resource);
    let bob = token(&as_, "svc2", "mcp:read", &resource);

    // Round one as `svc`.
    let mut first = call("confirm", json!({}));
    first["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
        json!({"elicitation": {"form": {}}});
    let r = bearer(addr, &first, Some(&alice));
    let state = r.json()["result"]["requestState"]
        .as_str()
        .unwrap_or_else(|| panic!("{}", r.text()))
        .to_owned();
    let mut second = first.clone();
    second["params"]["requestState"] = json!(state);
    second["params"]["inputResponses"] =
        json!({"ok": {"action": "accept", "content": {"ok": true}}});
    // Another caller cannot continue it...
    let r = bearer(addr, &second, Some(&bob));
    assert_eq!(r.json()["error"]["code"], -32602, "{}", r.text());
    // ...the one it was sealed for can.
    let r = bearer(addr, &second, Some(&alice));
    assert_eq!(
        r.json()["result"]["content"][0]["text"],
        "svc true",
        "{}",
        r.text()
    );

    // A task belongs to the caller that created it.
    let ext = json!({"io.modelcontextprotocol/tasks": {}});
    let mut create = call("long_job", json!({}));
    create["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
        json!({"extensions": ext});
    let r = bearer(addr, &create, Some(&alice));
    let task_id = r.json()["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("{}", r.text()))
        .to_owned();
    let mut poll = request(json!(9), "tasks/get", json!({"taskId": task_id}));
    poll["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
        json!({"extensions": ext});
    let r = bearer(addr, &poll, Some(&bob));
    assert_eq!(r.json()["error"]["code"], -32602, "{}", r.text());
    let r = bearer(addr, &poll, Some(&alice));
    assert_eq!(r.json()["result"]["status"], "working", "{}", r.text());
    // Its creator's listen stream watches it; another caller's leaves it out.
    let mut listen = request(
        json!(10),
        "subscriptions/listen",
        json!({"notifications": {"taskIds": [task_id]}}),
    );
    listen["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
        json!({"extensions": ext});
    let acked = |tok: &str| {
        let auth = format!("Bearer {tok}");
        let mut h = standard_headers(&listen);
        h.push(("Authorization".into(), auth));
        let h: Vec<(&str, &str)> = h.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let text = listen.to_string();
        let mut stream = Sse::send(addr, &post_bytes(addr, text.as_bytes(), &h));
        let ack = stream
            .next(Duration::from_secs(5))
            .expect("the acknowledgement");
        ack["params"]["notifications"]["taskIds"].clone()
    };
    assert_eq!(acked(&alice), json!([task_id]));
    let others = acked(&bob);
    assert!(others.as_array().is_none_or(Vec::is_empty), "{others}");

    // A handle minted by one caller is unknown to another.
    let r = bearer(addr, &call("stash", json!({"secret": "s3"})), Some(&alice));
    let handle = r.json()["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{}", r.text()))
        .to_owned();
    let read = call("unstash", json!({"id": handle}));
    let r = bearer(addr, &read, Some(&bob));
    assert_eq!(r.json()["result"]["isError"], true, "{}", r.text());
    assert!(
        r.text().contains("unknown or expired handle"),
        "{}",
        r.text()
    );
    let r = bearer(addr, &read, Some(&alice));
    assert_eq!(
        r.json()["result"]["content"][0]["text"],
        "s3",
        "{}",
        r.text()
    );

    // A legacy session opened by `svc` is unknown to `svc2`.
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let legacy = |body: &Value, session: Option<&str>, tok: &str| {
        let text = body.to_string();
        let auth = format!("Bearer {tok}");
        let mut h = vec![
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("Authorization", auth.as_str()),
        ];
        if let Some(s) = session {
            h.push(("Mcp-Session-Id", s));
            h.push(("MCP-Protocol-Version", "2025-11-25"));
        }
        raw(addr, &post_bytes(addr, text.as_bytes(), &h))
    };
    let r = legacy(&init, None, &alice);
    assert_eq!(r.status, 200, "{}", r.text());
    let session = r.header("mcp-session-id").unwrap().to_owned();
    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"});
    assert_eq!(legacy(&ping, Some(&session), &alice).status, 200);
    assert_eq!(legacy(&ping, Some(&session), &bob).status, 404);
    // Each request's own token counts, not the one the session was opened with: a
    // session opened with `mcp:write` does not lend it to a later read-only token.
    let writer = token(&as_, "svc", "mcp:read mcp:write", &resource);
    let r = legacy(&init, None, &writer);
    let rw_session = r.header("mcp-session-id").unwrap().to_owned();
    let write = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "write_note", "arguments": {"text": "x"}}});
    let r = legacy(&write, Some(&rw_session), &alice);
    assert_eq!(r.status, 403, "{}", r.text());
    assert!(
        challenge(&r).contains("insufficient_scope"),
        "{}",
        challenge(&r)
    );
    let r = legacy(&write, Some(&rw_session), &writer);
    assert_eq!(
        r.json()["result"]["content"][0]["text"],
        "wrote x",
        "{}",
        r.text()
    );
    // A 2025-03-26 batch holding a call the token's scopes do not cover is refused
    // whole, as that call alone is: 403 with the challenge to widen the token.
    let batch_session = |tok: &str| {
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-03-26", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}});
        let r = legacy(&init, None, tok);
        assert_eq!(r.status, 200, "{}", r.text());
        r.header("mcp-session-id").unwrap().to_owned()
    };
    let batch = json!([ping, write]);
    let batched = |session: &str, tok: &str| {
        let auth = format!("Bearer {tok}");
        let h = [
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("Authorization", auth.as_str()),
            ("Mcp-Session-Id", session),
        ];
        raw(addr, &post_bytes(addr, batch.to_string().as_bytes(), &h))
    };
    let r = batched(&batch_session(&alice), &alice);
    assert_eq!(r.status, 403, "{}", r.text());
    let c = challenge(&r);
    assert!(
        c.contains("insufficient_scope") && c.contains("mcp:write"),
        "{c}"
    );
    let r = batched(&batch_session(&writer), &writer);
    assert_eq!(r.status, 200, "{}", r.text());
    let answers = r.json();
    assert_eq!(answers.as_array().map(Vec::len), Some(2), "{answers}");
    // Without a token, nothing.
    let r = raw(
        addr,
        &post_bytes(
            addr,
            ping.to_string().as_bytes(),
            &[
                ("Content-Type", "application/json"),
                ("Mcp-Session-Id", &session),
            ],
        ),
    );
    assert_eq!(r.status, 401);
}

#[test]
fn opaque_tokens_are_checked_by_introspection() {
    let (listener, port) = reserve();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let Some(as_) = start_as(
        free_port(),
        &[
            ("RESOURCE", "http://127.0.0.1:1/unused".into()),
            ("OPAQUE_RESOURCE", resource.clone()),
        ],
    ) else {
        return;
    };
    let validator = Introspection::new(as_.issuer(), &resource, "mcp-rs", "mcp-rs-secret");
    let auth = Auth::new(&resource, validator).authorization_server(as_.issuer());
    let addr = serve(listener, auth);

    let opaque = token(&as_, "svc", "mcp:read mcp:write", &resource);
    assert_eq!(opaque.matches('.').count(), 0, "an opaque token, not a JWT");
    let r = bearer(
        addr,
        &call("write_note", json!({"text": "y"})),
        Some(&opaque),
    );
    assert_eq!(
        r.json()["result"]["content"][0]["text"],
        "wrote y",
        "{}",
        r.text()
    );
    // Cached: the same answer again.
    let r = bearer(addr, &call("whoami", json!({})), Some(&opaque));
    assert_eq!(
        r.json()["result"]["content"][0]["text"],
        "svc mcp:read mcp:write"
    );
    // A token the authorization server never issued is not active.
    let r = bearer(addr, &call("whoami", json!({})), Some("never-issued-token"));
    assert_eq!(r.status, 401);
    assert!(
        challenge(&r).contains(r#"error_description="token not active""#),
        "{}",
        challenge(&r)
    );
}

#[test]
fn stdio_and_in_process_calls_need_no_token() {
    // The spec takes stdio credentials from the environment: no challenge there. A
    // handler that needs a caller says so; scoped items are not enforced without one.
    let auth = Auth::new(
        "https://mcp.example.com/mcp",
        |_: &str| -> Result<Principal, mcp_runtime::auth::AuthError> { unreachable!() },
    )
    .authorization_server("https://auth.example.com");
    let server = Server::builder("t", "1")
        .tools(tools![whoami, write_note])
        .auth(auth)
        .build()
        .unwrap();
    let client = mcp_runtime::testing::TestClient::new(server);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let r = client
            .call_tool("write_note", json!({"text": "z"}))
            .await
            .unwrap();
        assert_eq!(r.text(), "wrote z");
        let e = client.call_tool("whoami", json!({})).await.unwrap_err();
        assert_eq!(e.code, -32603, "{e:?}");
        assert!(e.message.contains("authenticated caller"), "{e:?}");
    });
}

#[test]
fn bad_settings_are_refused_when_the_server_is_built() {
    let never = |_: &str| -> Result<Principal, mcp_runtime::auth::AuthError> { unreachable!() };
    let Err(err) = Server::builder("t", "1")
        .auth(Auth::new("/mcp", never).scopes_supported(["a b", "offline_access"]))
        .build()
    else {
        panic!("bad settings were accepted");
    };
    let text = err.to_string();
    assert!(text.contains("absolute"), "{text}");
    assert!(text.contains("at least one authorization server"), "{text}");
    assert!(text.contains("`a b`"), "{text}");
    assert!(text.contains("offline_access"), "{text}");
}

/// A call refused for its scopes carries the step-up challenge
/// (`WWW-Authenticate: Bearer error="insufficient_scope", scope=..`) whatever the media
/// type of the answer: it was missing from a 403 sent as an event stream (a client that
/// accepts only `text/event-stream`).
#[test]
fn the_scope_challenge_comes_with_an_event_stream_answer_too() {
    let (listener, port) = reserve();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let reader = |t: &str| match t {
        "reader" => Ok(Principal::new("u").scopes(["mcp:read"])),
        _ => Err(mcp_runtime::auth::AuthError::Invalid("unknown".into())),
    };
    let auth = Auth::new(&resource, reader)
        .authorization_server("https://auth.example.com")
        .scopes_supported(["mcp:read"]);
    let addr = serve(listener, auth);
    for accept in ["text/event-stream", "application/json, text/event-stream"] {
        let r = post_with(
            addr,
            &call("write_note", json!({"text": "x"})),
            &["Accept"],
            &[("Accept", accept), ("Authorization", "Bearer reader")],
        );
        assert_eq!(r.status, 403, "{accept}: {}", r.text());
        let c = challenge(&r);
        assert!(
            c.starts_with(r#"Bearer error="insufficient_scope""#),
            "{accept}: {c}"
        );
        assert!(c.contains(r#"scope="mcp:write""#), "{accept}: {c}");
    }
}

// ---------------------------------------------------------------------------------------
// Real clients: the official Python and TypeScript clients complete the whole flow against
// `examples/protected`: the first 401, the protected-resource metadata, the
// authorization server's metadata, a client-credentials token, authorized calls, and a
// step up to a wider scope when a call answers 403 insufficient_scope.

fn run_client(program: &str, script: &str, url: &str, issuer: &str) -> Option<Value> {
    let dir = clients_dir();
    let output = Command::new(program)
        .arg(dir.join(script))
        .args([url, issuer])
        .current_dir(&dir)
        .stdin(Stdio::null())
        .output()
        .expect("run the client");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{script} failed: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let line = stdout.lines().last().unwrap_or_default();
    Some(serde_json::from_str(line).unwrap_or_else(|e| panic!("{script}: {e}: {stdout}")))
}

fn check_flow(client: &str, seen: &Value) {
    let requests: Vec<&str> = seen["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    // 401 first, then discovery through our metadata, then the token.
    assert_eq!(
        &requests[..4],
        [
            "POST /mcp",
            "GET /.well-known/oauth-protected-resource/mcp",
            "GET /.well-known/oauth-authorization-server",
            "POST /token",
        ],
        "{client}: {seen}"
    );
    assert_eq!(
        requests.iter().filter(|r| **r == "POST /token").count(),
        2,
        "{client}: a second token for the wider scope: {seen}"
    );
    assert_eq!(seen["tools"], json!(["list_notes", "whoami"]), "{client}");
    assert_eq!(seen["whoami"], "svc (mcp:read)", "{client}");
    assert_eq!(seen["add_note"], "kept \"svc: hello\"", "{client}: {seen}");
    assert_eq!(seen["scope"], "mcp:read mcp:write", "{client}");
}

#[test]
fn real_clients_complete_the_oauth_flow() {
    let port = free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let Some(as_) = start_as(free_port(), &[("RESOURCE", resource.clone())]) else {
        return;
    };
    let mut server = Command::new(example("protected"))
        .env("MCP_AUTH_ISSUER", as_.issuer())
        .env("PORT", port.to_string())
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start examples/protected");
    let mut lines = BufReader::new(server.stderr.take().unwrap()).lines();
    loop {
        let line = lines.next().expect("the server exited").unwrap();
        if line.contains("serving MCP on") {
            break;
        }
    }
    std::thread::spawn(move || for _ in lines {});
    let server = ChildGuard(server);

    let python = std::env::var("MCP_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|_| clients_dir().join(".venv/bin/python"));
    let node = std::env::var("MCP_NODE").unwrap_or_else(|_| "node".into());
    let have_python = python.exists();
    let have_ts = clients_dir()
        .join("node_modules/@modelcontextprotocol/client")
        .exists();
    if !(have_python && have_ts) {
        assert_ne!(
            std::env::var("MCP_REAL_CLIENTS").as_deref(),
            Ok("required"),
            "the real clients are required (run tests/clients/setup.sh)"
        );
        eprintln!("skipping the real clients: run tests/clients/setup.sh");
        return;
    }
    let seen = run_client(
        python.to_str().unwrap(),
        "py_oauth.py",
        &resource,
        &as_.issuer(),
    );
    check_flow("python", &seen.unwrap());
    let seen = run_client(&node, "ts_oauth.mjs", &resource, &as_.issuer());
    check_flow("typescript", &seen.unwrap());
    drop(server);
}

#[test]
fn challenges_and_metadata_work_when_mounted_under_a_path() {
    let (listener, port) = reserve();
    let resource = format!("http://127.0.0.1:{port}/api/mcp");
    let Some(as_) = start_as(free_port(), &[("RESOURCE", resource.clone())]) else {
        return;
    };
    let auth = Auth::new(&resource, JwtValidator::new(as_.issuer(), &resource))
        .authorization_server(as_.issuer())
        .scopes_supported(["mcp:read"]);
    let server = Server::builder("mounted", "1.0")
        .tools(tools![whoami])
        .auth(auth)
        .build()
        .unwrap();
    // An existing app: the MCP router nested under /api, the metadata merged at the root.
    let app = axum::Router::new()
        .route("/health", axum::routing::get(|| async { "ok" }))
        .nest("/api", server.router())
        .merge(server.http().metadata_router());
    listener.set_nonblocking(true).unwrap();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(async move {
            let l = tokio::net::TcpListener::from_std(listener).unwrap();
            axum::serve(l, app).await.unwrap();
        });
    });
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let post = |tok: Option<&str>| {
        let body = call("whoami", json!({})).to_string();
        let auth = tok
            .map(|t| format!("Authorization: Bearer {t}\r\n"))
            .unwrap_or_default();
        let req = format!(
            "POST /api/mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: whoami\r\n{auth}Content-Length: {}\r\n\r\n{body}",
            body.len()
        );
        raw(addr, req.as_bytes())
    };
    let r = post(None);
    assert_eq!(r.status, 401);
    let metadata_path = "/.well-known/oauth-protected-resource/api/mcp";
    assert!(
        challenge(&r).contains(&format!(
            "resource_metadata=\"http://127.0.0.1:{port}{metadata_path}\""
        )),
        "{}",
        challenge(&r)
    );
    let m = get(addr, metadata_path);
    assert_eq!(m.status, 200);
    assert_eq!(m.json()["resource"], resource);
    let t = token(&as_, "svc", "mcp:read", &resource);
    let r = post(Some(&t));
    assert_eq!(
        r.json()["result"]["content"][0]["text"],
        "svc mcp:read",
        "{}",
        r.text()
    );
    assert_eq!(get(addr, "/health").text(), "ok");
}

/// Streams do not outlive the token they were opened with: once it expires (when a
/// request with it would get 401), a `subscriptions/listen` stream ends with the listen
/// result, as when the server stops it, and a legacy session's GET stream ends; the
/// client opens them again with a fresh token. Streams of a token still valid stay open.
#[test]
fn streams_end_when_their_token_expires() {
    let (listener, port) = reserve();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let validator = |t: &str| -> Result<Principal, mcp_runtime::auth::AuthError> {
        let left = match t {
            "short" => Duration::from_secs(2),
            "long" => Duration::from_secs(3600),
            _ => return Err(mcp_runtime::auth::AuthError::Invalid("unknown".into())),
        };
        Ok(Principal::new("u").expires_at(std::time::SystemTime::now() + left))
    };
    let auth = Auth::new(&resource, validator).authorization_server("https://as.example");
    let addr = serve(listener, auth);

    // subscriptions/listen
    let body = request(
        json!("sub"),
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    );
    let listen = |token: &str| {
        let mut headers = standard_headers(&body);
        headers.push(("Authorization".into(), format!("Bearer {token}")));
        let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (&**k, &**v)).collect();
        let mut stream = Sse::send(
            addr,
            &post_bytes(addr, body.to_string().as_bytes(), &headers),
        );
        let ack = stream
            .next(Duration::from_secs(5))
            .expect("an acknowledgement");
        assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
        stream
    };

    // A legacy session's GET stream.
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let get_stream = |token: &str| {
        let auth = format!("Bearer {token}");
        let h = [
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("Authorization", auth.as_str()),
        ];
        let r = raw(addr, &post_bytes(addr, init.to_string().as_bytes(), &h));
        assert_eq!(r.status, 200, "{}", r.text());
        let session = r.header("mcp-session-id").unwrap().to_owned();
        let req = format!(
            "GET /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n{}: {auth}\r\n\r\n",
            "Authorization"
        );
        let mut s = Sse::send(addr, req.as_bytes());
        // The head arrives at once: the stream is open.
        let start = std::time::Instant::now();
        while !s.buf.contains("\r\n\r\n") && start.elapsed() < Duration::from_secs(5) {
            assert!(s.pump(), "the GET stream closed at once");
        }
        assert!(s.buf.starts_with("HTTP/1.1 200"), "{}", s.buf);
        s
    };
    let opened = std::time::Instant::now();
    let (mut short, mut long) = (listen("short"), listen("long"));
    let (mut short_get, mut long_get) = (get_stream("short"), get_stream("long"));

    let end = short
        .next(Duration::from_secs(6))
        .expect("the listen stream ends when its token expires");
    assert_eq!(end["id"], "sub", "{end}");
    assert!(end.get("result").is_some(), "{end}");
    assert!(
        opened.elapsed() >= Duration::from_millis(1500),
        "it ended before the token expired: {:?}",
        opened.elapsed()
    );
    // The response ends: its last chunk, or the connection closes.
    let closed = |s: &mut Sse| {
        let start = std::time::Instant::now();
        while start.elapsed() < Duration::from_secs(6) {
            if !s.pump() || s.buf.ends_with("\r\n0\r\n\r\n") {
                return true;
            }
        }
        false
    };
    assert!(closed(&mut short_get), "the GET stream stayed open");
    // Those of the token still valid are open.
    assert_eq!(long.next(Duration::from_millis(300)), None);
    assert!(long.pump(), "the other listen stream closed");
    assert!(
        long_get.pump() && !long_get.buf.ends_with("\r\n0\r\n\r\n"),
        "the other GET stream ended"
    );
}
