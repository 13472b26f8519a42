//! The `mcp_runtime::testing` kit, used the way a user would: an in-process client,
//! scripted answers for multi round-trip tools, tampering, and list snapshots.

use mcp_runtime::config::RequestState;
use mcp_runtime::mrtr::KeyRing;
use mcp_runtime::testing::{Answers, TestClient, lists_json, tamper_state};
use mcp_runtime::{
    Error, Input, Progress, PromptMessage, Server, prompt, prompts, resource, resources, tool,
    tools,
};
use serde_json::json;

#[derive(serde::Deserialize, schemars::JsonSchema, mcp_runtime::Form)]
struct Login {
    /// Your GitHub login
    login: String,
}

/// Adds two numbers.
#[tool]
async fn add(a: i64, b: i64) -> String {
    (a + b).to_string()
}

/// Fails on purpose.
#[tool]
async fn fail() -> Result<String, Error> {
    Err(Error::new("nope"))
}

/// Counts to `n`, reporting progress.
#[tool]
async fn count(n: u32, progress: Progress) -> String {
    for i in 1..=n {
        progress.report(f64::from(i), Some(f64::from(n)), None);
    }
    format!("counted to {n}")
}

/// Greets whoever answers.
#[tool]
async fn greet(input: Input) -> Result<String, Error> {
    let who: Login = input.elicit("login", "Who are you?").await?.accepted()?;
    Ok(format!("hello @{}", who.login))
}

/// Asks two things in one round.
#[tool]
#[mcp_runtime::needs_input]
async fn pair(
    #[input(elicit = "First?")] first: Login,
    #[input(elicit = "Second?")] second: Login,
) -> String {
    format!("{} & {}", first.login, second.login)
}

/// Forgets things of a type, once someone agrees.
#[tool]
#[mcp_runtime::needs_input]
async fn forget(
    r#type: String,
    #[input(elicit = "Forget every {type}? ({type:?}, {{literal}})")] sure: Login,
) -> String {
    format!("{} forgot every {}", sure.login, r#type)
}

/// Connects a service, on a page of the service's own.
#[tool]
#[mcp_runtime::needs_input]
async fn connect(
    service: String,
    #[input(
        url = "https://example.com/connect/{service}?from={service:?}",
        message = "Connect {service}?"
    )]
    done: mcp_runtime::Elicited<()>,
) -> String {
    format!(
        "{service}: {}",
        matches!(done, mcp_runtime::Elicited::Accept(()))
    )
}

/// One note.
#[resource("notes://{id}", mime_type = "text/markdown")]
async fn note(id: u64) -> String {
    format!("# Note {id}")
}

/// Writes a haiku about a topic.
#[prompt]
async fn haiku(#[arg(complete = topics)] topic: String) -> Vec<PromptMessage> {
    vec![PromptMessage::user(format!("A haiku about {topic}"))]
}

async fn topics(partial: String) -> Vec<String> {
    ["rain", "rivers", "snow"]
        .into_iter()
        .filter(|t| t.starts_with(&partial))
        .map(String::from)
        .collect()
}

fn server() -> Server {
    Server::builder("kit", "1.0")
        .request_state(RequestState::keys(
            KeyRing::new([("k", [3u8; 32])]).unwrap(),
        ))
        .tools(tools![add, fail, count, greet, pair])
        .resources(resources![note])
        .prompts(prompts![haiku])
        .build()
        .unwrap()
}

#[tokio::test]
async fn calls_tools_resources_and_prompts() {
    let client = TestClient::new(server());
    let out = client
        .call_tool("add", json!({"a": 2, "b": 40}))
        .await
        .unwrap();
    assert_eq!(out.text(), "42");
    assert_eq!(out.rounds, 1);
    assert!(!out.is_error());

    let failed = client.call_tool("fail", json!({})).await.unwrap();
    assert!(failed.is_error());
    assert_eq!(failed.text(), "nope");

    // Bad arguments are a tool error, an unknown tool a JSON-RPC error.
    let bad = client.call_tool("add", json!({"a": "two"})).await.unwrap();
    assert!(bad.is_error(), "{:?}", bad.result);
    let err = client.call_tool("nope", json!({})).await.unwrap_err();
    assert_eq!(err.code, -32602);

    assert_eq!(
        client.read_resource("notes://7").await.unwrap().text(),
        "# Note 7"
    );
    let prompt = client
        .get_prompt("haiku", json!({"topic": "rust"}))
        .await
        .unwrap();
    assert_eq!(prompt.text(), "A haiku about rust");

    let values = client
        .complete(
            json!({"type": "ref/prompt", "name": "haiku"}),
            "topic",
            "ri",
        )
        .await
        .unwrap();
    assert_eq!(values, ["rivers"]);
}

#[tokio::test]
async fn collects_the_notifications_of_a_request() {
    let client = TestClient::new(server());
    let (result, notes) = client
        .request(
            "tools/call",
            json!({"name": "count", "arguments": {"n": 3}, "_meta": {"progressToken": "t"}}),
        )
        .await
        .unwrap();
    assert_eq!(result["content"][0]["text"], "counted to 3");
    let progress: Vec<_> = notes
        .iter()
        .map(|n| n["params"]["progress"].clone())
        .collect();
    assert_eq!(progress, [json!(1.0), json!(2.0), json!(3.0)]);
    assert!(
        notes
            .iter()
            .all(|n| n["method"] == "notifications/progress")
    );
}

#[tokio::test]
async fn answers_input_required_rounds_from_a_script() {
    let client = TestClient::new(server());
    let answers = Answers::new().accept("login", json!({"login": "ada"}));
    let out = client
        .call_tool_answering("greet", json!({}), &answers)
        .await
        .unwrap();
    assert_eq!(out.text(), "hello @ada");
    assert_eq!(out.rounds, 2);

    // A raw identifier inserted into a question's text.
    let forgetful = Server::builder("kit", "1.0")
        .request_state(RequestState::keys(
            KeyRing::new([("k", [3u8; 32])]).unwrap(),
        ))
        .tools(tools![forget, connect])
        .build()
        .unwrap();
    let forgetful = TestClient::new(forgetful)
        .with_capabilities(json!({"elicitation": {"form": {}, "url": {}}}));
    // Inserted into a URL, a value is percent-encoded: it fills its place and no more.
    let asked = forgetful
        .call_tool("connect", json!({"service": "a b/c?d#e"}))
        .await
        .unwrap();
    let params = &asked.result["inputRequests"]["done"]["params"];
    assert_eq!(
        params["url"], "https://example.com/connect/a%20b%2Fc%3Fd%23e?from=%22a%20b%2Fc%3Fd%23e%22",
        "{}",
        asked.result
    );
    assert_eq!(params["message"], "Connect a b/c?d#e?");
    // A value that would be a whole `..` segment cannot climb out of its place.
    let refused = forgetful
        .call_tool("connect", json!({"service": ".."}))
        .await
        .unwrap();
    assert!(refused.is_error(), "{}", refused.result);
    assert!(
        refused.text().contains("`..` path segment"),
        "{}",
        refused.text()
    );
    let asked = forgetful
        .call_tool("forget", json!({"type": "note"}))
        .await
        .unwrap();
    assert_eq!(
        asked.result["inputRequests"]["sure"]["params"]["message"],
        "Forget every note? (\"note\", {literal})"
    );

    // A missing answer stops at the question, which the test can inspect.
    let asked = client.call_tool("greet", json!({})).await.unwrap();
    assert_eq!(asked.result["resultType"], "input_required");
    assert_eq!(
        asked.result["inputRequests"]["login"]["params"]["message"],
        "Who are you?"
    );

    // Declining is the tool's business: `accepted()` turns it into a tool error.
    let declined = client
        .call_tool_answering("greet", json!({}), &Answers::new().decline("login"))
        .await
        .unwrap();
    assert!(declined.is_error());
    let cancelled = client
        .call_tool_answering("greet", json!({}), &Answers::new().cancel("login"))
        .await
        .unwrap();
    assert!(cancelled.is_error());
    assert_eq!(cancelled.rounds, 2);

    // Both declared inputs in one round.
    let both = Answers::new()
        .accept("first", json!({"login": "a"}))
        .accept("second", json!({"login": "b"}));
    let out = client
        .call_tool_answering("pair", json!({}), &both)
        .await
        .unwrap();
    assert_eq!((out.text().as_str(), out.rounds), ("a & b", 2));
}

#[tokio::test]
async fn a_tampered_state_is_refused() {
    let client = TestClient::new(server());
    // Each state is sealed with a fresh nonce, so this tampers at many different bytes.
    for _ in 0..20 {
        let asked = client.call_tool("greet", json!({})).await.unwrap();
        let state = asked.result["requestState"].as_str().unwrap();
        let retry = |state: String| {
            json!({
                "name": "greet",
                "arguments": {},
                "requestState": state,
                "inputResponses": {"login": {"action": "accept", "content": {"login": "eve"}}},
            })
        };
        let err = client
            .request("tools/call", retry(tamper_state(state)))
            .await
            .unwrap_err();
        assert_eq!(err.code, -32602, "{err}");
        // The same retry with the state as sent completes.
        let (ok, _) = client
            .request("tools/call", retry(state.to_owned()))
            .await
            .unwrap();
        assert_eq!(ok["content"][0]["text"], "hello @eve");
    }
}

#[tokio::test]
async fn without_the_capability_the_client_is_refused() {
    let client = TestClient::new(server()).with_capabilities(json!({}));
    let err = client.call_tool("greet", json!({})).await.unwrap_err();
    assert_eq!(err.code, -32021, "{err}");
}

/// A legacy client of a server with the legacy era off is refused as the transports
/// refuse it (-32022, naming the versions served), not given a session.
#[tokio::test]
async fn a_legacy_client_of_a_modern_only_server_is_refused() {
    let modern_only = Server::builder("kit", "1.0")
        .modern_only()
        .tools(tools![add])
        .build()
        .unwrap();
    let client = TestClient::legacy(modern_only);
    let err = client
        .call_tool("add", json!({"a": 1, "b": 2}))
        .await
        .unwrap_err();
    assert_eq!(err.code, -32022, "{err}");
    assert_eq!(err.data.unwrap()["supported"], json!(["2026-07-28"]));
    let err = client.negotiated_version().unwrap_err();
    assert_eq!(err.code, -32022, "{err}");
}

#[tokio::test]
async fn the_lists_match_the_committed_snapshot() {
    mcp_runtime::assert_lists_snapshot!(server());
}

#[tokio::test]
async fn a_changed_or_missing_snapshot_fails_with_a_pending_one() {
    // insta's behaviour depends on the environment (on CI it writes no pending files;
    // INSTA_UPDATE=always accepts everything), so the check runs in a child process of
    // this test binary with the defaults a developer has.
    if std::env::var_os("MCP_KIT_SNAPSHOT_CHILD").is_none() {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "a_changed_or_missing_snapshot_fails_with_a_pending_one",
                "--nocapture",
            ])
            .env("MCP_KIT_SNAPSHOT_CHILD", "1")
            .env("INSTA_UPDATE", "new")
            .env_remove("CI")
            .env_remove("INSTA_FORCE_PASS")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        return;
    }
    let dir = std::env::temp_dir().join(format!("mcp-kit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let current = lists_json(&server()).await;
    let stale = current.replace("Adds two numbers.", "Adds numbers.");
    std::fs::write(
        dir.join("testing_kit__stale.snap"),
        format!("---\nsource: tests/testing_kit.rs\nexpression: lists\n---\n{stale}"),
    )
    .unwrap();
    // Each check on a thread of its own: a failed snapshot panics.
    let run = |name: &'static str, dir: std::path::PathBuf| {
        std::thread::spawn(move || {
            let mut settings = insta::Settings::clone_current();
            settings.set_snapshot_path(dir);
            let runtime = tokio::runtime::Runtime::new().unwrap();
            settings.bind(|| {
                runtime.block_on(async { mcp_runtime::assert_lists_snapshot!(name, server()) })
            })
        })
        .join()
    };
    assert!(
        run("stale", dir.clone()).is_err(),
        "a changed description must fail"
    );
    assert!(
        run("missing", dir.clone()).is_err(),
        "a missing snapshot must fail"
    );
    let pending = std::fs::read_to_string(dir.join("testing_kit__stale.snap.new")).unwrap();
    assert!(pending.contains("Adds two numbers."), "{pending}");
    let _ = std::fs::remove_dir_all(dir);
}

/// Carts, kept in a store every instance shares (a database in production).
#[derive(Clone, Default)]
struct Carts(std::sync::Arc<std::sync::Mutex<std::collections::BTreeMap<String, Vec<String>>>>);

/// Opens a cart and returns its handle: pass it to the other cart tools.
#[tool]
async fn open_cart(carts: mcp_runtime::State<Carts>) -> String {
    let mut map = carts.0.lock().unwrap();
    let id = format!("cart-{}", map.len() + 1);
    map.insert(id.clone(), Vec::new());
    id
}

/// Adds an item to a cart.
#[tool]
async fn add_to_cart(
    carts: mcp_runtime::State<Carts>,
    cart: String,
    item: String,
) -> Result<String, Error> {
    let mut map = carts.0.lock().unwrap();
    let items = map
        .get_mut(&cart)
        .ok_or_else(|| Error::new(format!("no cart {cart}: open one with open_cart")))?;
    items.push(item);
    Ok(items.join(", "))
}

/// State that spans calls travels as a handle in the arguments, so any instance can serve
/// any call (no session, no sticky routing).
#[tokio::test]
async fn a_handle_argument_carries_state_across_instances() {
    let store = Carts::default();
    let instance = |store: Carts| {
        TestClient::new(
            Server::builder("shop", "1.0")
                .state(store)
                .tools(tools![open_cart, add_to_cart])
                .build()
                .unwrap(),
        )
    };
    let (a, b) = (instance(store.clone()), instance(store));
    let cart = a.call_tool("open_cart", json!({})).await.unwrap().text();
    let add = |item: &str| json!({"cart": cart, "item": item});
    let on_b = b.call_tool("add_to_cart", add("tea")).await.unwrap();
    assert_eq!(on_b.text(), "tea");
    let on_a = a.call_tool("add_to_cart", add("milk")).await.unwrap();
    assert_eq!(on_a.text(), "tea, milk");
    let unknown = a
        .call_tool("add_to_cart", json!({"cart": "cart-99", "item": "x"}))
        .await
        .unwrap();
    assert!(unknown.is_error());
    // The handle is an ordinary argument: it is in the schema.
    let tools = a.list_all("tools/list", "tools").await.unwrap();
    assert_eq!(tools[0]["name"], "add_to_cart");
    assert_eq!(tools[0]["inputSchema"]["required"], json!(["cart", "item"]));
}

/// Looks up the weather in a region.
#[tool]
async fn regional(#[arg(header = "Region")] region: String) -> String {
    format!("sunny in {region}")
}

#[tokio::test]
async fn header_rules_apply_to_headers_given_in_process() {
    let client = TestClient::new(
        Server::builder("hdr", "1.0")
            .tools(tools![regional])
            .build()
            .unwrap(),
    );
    let params = json!({"name": "regional", "arguments": {"region": "eu-west"}});
    let headers = client.standard_headers("tools/call", &params).await;
    let names: Vec<&str> = headers.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "MCP-Protocol-Version",
            "Mcp-Method",
            "Mcp-Name",
            "Mcp-Param-Region"
        ]
    );
    let (ok, _) = client
        .request_with_headers("tools/call", params.clone(), &headers)
        .await
        .unwrap();
    assert_eq!(ok["content"][0]["text"], "sunny in eu-west");

    // The mirrored argument disagrees with the body.
    let mut tampered = headers.clone();
    tampered[3].1 = "us-east".into();
    let err = client
        .request_with_headers("tools/call", params.clone(), &tampered)
        .await
        .unwrap_err();
    assert_eq!(err.code, -32020, "{err}");

    // A required header is missing.
    let without_method: Vec<_> = headers
        .iter()
        .filter(|(n, _)| n != "Mcp-Method")
        .cloned()
        .collect();
    let err = client
        .request_with_headers("tools/call", params, &without_method)
        .await
        .unwrap_err();
    assert_eq!(err.code, -32020, "{err}");
}
