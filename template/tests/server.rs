//! Tests of the server through the MCP testing kit: no network, the real JSON and request
//! rules.

use mcp_runtime::testing::TestClient;
use serde_json::json;

fn client() -> TestClient {
    TestClient::new({{crate_name}}::server().expect("the server builds"))
}

#[tokio::test]
async fn add_adds_and_reports_overflow_as_a_tool_error() {
    let out = client()
        .call_tool("add", json!({"a": 2, "b": 40}))
        .await
        .unwrap();
    assert_eq!(out.result["structuredContent"], json!({"total": 42}));

    let overflow = client()
        .call_tool("add", json!({"a": i64::MAX, "b": 1}))
        .await
        .unwrap();
    assert!(overflow.is_error());
}

#[tokio::test]
async fn the_greeting_resource_reads() {
    let out = client().read_resource("greeting://Ada").await.unwrap();
    assert_eq!(out.text(), "Hello, Ada!");
}

#[tokio::test]
async fn the_explain_prompt_mentions_the_topic() {
    let out = client()
        .get_prompt("explain", json!({"topic": "tides"}))
        .await
        .unwrap();
    assert!(out.text().contains("tides"), "{}", out.text());
}

/// Any change to a name, description or schema shows up as a diff of the snapshot
/// (`tests/snapshots/server__lists.snap`); `cargo insta review` accepts it.
#[tokio::test]
async fn the_lists_match_the_snapshot() {
    mcp_runtime::assert_lists_snapshot!({{crate_name}}::server().unwrap());
}
