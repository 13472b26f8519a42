//! Testing without a network: an in-process client that drives a
//! [`Server`](crate::Server) through the real JSON serialization and request rules,
//! scripted answers for multi round-trip requests and for tasks
//! ([`TestClient::run_task`]), tampering helpers, and snapshots of the lists a server
//! serves ([`assert_lists_snapshot!`](crate::assert_lists_snapshot), on insta).
//!
//! ```
//! use mcp_runtime::testing::TestClient;
//! use mcp_runtime::{tool, tools, Server};
//!
//! /// Adds two numbers.
//! #[tool]
//! async fn add(a: i64, b: i64) -> String {
//!     (a + b).to_string()
//! }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let server = Server::builder("calc", "1.0").tools(tools![add]).build().unwrap();
//! let client = TestClient::new(server);
//! let out = client.call_tool("add", serde_json::json!({"a": 2, "b": 3})).await.unwrap();
//! assert_eq!(out.text(), "5");
//! # });
//! ```

mod client;
mod outcome;
mod snapshot;

pub use client::TestClient;
pub use outcome::{Answers, ErrorReply, Outcome, TaskOutcome};
#[doc(hidden)]
pub use snapshot::__insta;
pub use snapshot::lists_json;

use serde_json::Value;

/// Changes a `requestState` so it no longer verifies: one character of its sealed part is
/// replaced (away from the end, where base64 may carry unused bits).
pub fn tamper_state(state: &str) -> String {
    let mut bytes = state.as_bytes().to_vec();
    let at = bytes.len().saturating_sub(bytes.len() / 4 + 1);
    if let Some(b) = bytes.get_mut(at) {
        *b = if *b == b'A' { b'g' } else { b'A' };
    }
    String::from_utf8(bytes).unwrap_or_default()
}

/// The `Mcp-Param-*` headers a conforming client sends for a call of `tool` (as listed)
/// with `arguments`. See [`crate::protocol::headers::client_headers`].
pub fn param_headers(tool: &Value, arguments: &Value) -> Vec<(String, String)> {
    crate::protocol::headers::client_headers(tool, arguments)
}
