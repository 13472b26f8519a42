//! The conformance example's four lists, against a committed snapshot: a change to a
//! fixture's name, description or schema shows up in review as a diff of
//! `tests/snapshots/conformance_lists.json` (`MCP_UPDATE_SNAPSHOTS=1` accepts it).

#[allow(dead_code)]
#[path = "../examples/conformance.rs"]
mod conformance;

#[tokio::test]
async fn the_conformance_lists_match_the_snapshot() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/snapshots/conformance_lists.json"
    );
    mcp_runtime::testing::assert_lists_snapshot(&conformance::server(), path).await;
}
