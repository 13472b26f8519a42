//! The conformance example's four lists, against a committed insta snapshot: a change to a
//! fixture's name, description or schema shows up in review as a diff of
//! `tests/snapshots/conformance_lists__conformance.snap` (`cargo insta review` accepts it).

#[allow(dead_code)]
#[path = "../examples/conformance.rs"]
mod conformance;

#[tokio::test]
async fn the_conformance_lists_match_the_snapshot() {
    mcp_runtime::assert_lists_snapshot!("conformance", conformance::server());
}
