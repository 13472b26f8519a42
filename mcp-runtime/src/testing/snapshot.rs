//! Snapshots of the lists a server serves, on insta.

use super::TestClient;
use crate::server::Server;
use serde_json::{Map, Value};

#[doc(hidden)]
pub use insta as __insta;

/// Checks the server's `tools/list`, `prompts/list`, `resources/list` and
/// `resources/templates/list` ([`lists_json`]) against an [insta](https://insta.rs)
/// snapshot: `tests/snapshots/<test file>__lists.snap` by default, or the name given first.
/// A difference fails the test with a diff and leaves the new lists as a pending
/// `.snap.new`; `cargo insta review` (or `INSTA_UPDATE=always`) accepts it. Use it in an
/// async test; wrap it in `insta::with_settings!` for insta's other settings.
///
/// ```ignore
/// #[tokio::test]
/// async fn the_lists_match_the_snapshot() {
///     mcp_runtime::assert_lists_snapshot!(my_server::server());
/// }
/// ```
#[macro_export]
macro_rules! assert_lists_snapshot {
    ($server:expr $(,)?) => {
        $crate::assert_lists_snapshot!("lists", $server)
    };
    ($name:expr, $server:expr $(,)?) => {{
        let lists = $crate::testing::lists_json(&$server).await;
        $crate::testing::__insta::with_settings!({ omit_expression => true }, {
            $crate::testing::__insta::assert_snapshot!($name, lists)
        })
    }};
}

/// The four lists of a server as one pretty JSON document (what snapshots and
/// `cargo mcp schema` show).
pub async fn lists_json(server: &Server) -> String {
    let client = TestClient::new(server.clone());
    let mut doc = Map::new();
    for (method, key) in [
        ("tools/list", "tools"),
        ("prompts/list", "prompts"),
        ("resources/list", "resources"),
        ("resources/templates/list", "resourceTemplates"),
    ] {
        let items = client.list_all(method, key).await.unwrap_or_default();
        doc.insert(key.to_owned(), Value::Array(items));
    }
    let mut s = serde_json::to_string_pretty(&Value::Object(doc)).unwrap_or_default();
    s.push('\n');
    s
}
