//! Exploded, empty and mistyped template values, in process.

use mcp_runtime::testing::TestClient;
use mcp_runtime::{Json, Server, resource, resources};
use serde_json::{Value, json};

/// Path segments, each one item.
#[resource("c://x{/segs*}")]
async fn segments(segs: Vec<String>) -> Json<Value> {
    Json(json!(segs))
}

/// Labels, each one item.
#[resource("l://f{.exts*}")]
async fn labels(exts: Vec<String>) -> Json<Value> {
    Json(json!(exts))
}

/// Comma-separated numbers.
#[resource("n://{ids*}")]
async fn numbers(ids: Vec<u64>) -> Json<Value> {
    Json(json!(ids))
}

/// A path as one string.
#[resource("p://x{/path*}")]
async fn joined(path: String) -> String {
    path
}

/// Files of a repository.
#[resource("repo://{owner}/{repo}/files{/path*}{?q,limit}{#frag}")]
async fn repo_files(
    owner: String,
    repo: String,
    path: Vec<String>,
    q: Option<String>,
    limit: Option<u32>,
    frag: Option<String>,
) -> Json<Value> {
    Json(json!({"owner": owner, "repo": repo, "path": path, "q": q, "limit": limit, "frag": frag}))
}

/// An optional id.
#[resource("b://{id}")]
async fn maybe(id: Option<u32>) -> Json<Value> {
    Json(json!(id))
}

/// A required id.
#[resource("r://{id}")]
async fn required(id: u32) -> Json<Value> {
    Json(json!(id))
}

/// A list that is not exploded, in the path and in the query.
#[resource("k://{keys}{?tags}")]
async fn keys(keys: Vec<String>, tags: Vec<String>) -> Json<Value> {
    Json(json!({"keys": keys, "tags": tags}))
}

/// An exploded list of strings.
#[resource("w://{words*}")]
async fn words(words: Vec<String>) -> Json<Value> {
    Json(json!(words))
}

/// Items tagged with every one of `tag`.
#[resource("s://items{?tag*}")]
async fn tagged(tag: Vec<String>) -> Json<Value> {
    Json(json!(tag))
}

/// A matrix of path parameters.
#[resource("m://x{;m*}{?q}")]
async fn matrix(m: Vec<u32>, q: Option<String>) -> Json<Value> {
    Json(json!({"m": m, "q": q}))
}

/// A document and an optional fragment.
#[resource("x://doc{#f}")]
async fn doc(f: Option<String>) -> Json<Value> {
    Json(json!(f))
}

/// A list that is not exploded, as one path segment.
#[resource("v://seg{/ids}")]
async fn segment_list(ids: Vec<String>) -> Json<Value> {
    Json(json!(ids))
}

/// A list that is not exploded, as one query parameter.
#[resource("v://query{?ids}")]
async fn query_list(ids: Vec<String>) -> Json<Value> {
    Json(json!(ids))
}

/// A path segment as one string.
#[resource("v://text{/id}")]
async fn segment_text(id: String) -> String {
    id
}

fn client() -> TestClient {
    let server = Server::builder("values", "1")
        .resources(resources![
            segments,
            labels,
            numbers,
            joined,
            repo_files,
            maybe,
            required,
            keys,
            words,
            doc,
            tagged,
            matrix,
            segment_list,
            query_list,
            segment_text
        ])
        .build()
        .unwrap();
    TestClient::new(server)
}

async fn json(c: &TestClient, uri: &str) -> Value {
    let out = c.read_resource(uri).await.unwrap_or_else(|e| {
        panic!("{uri}: {} {}", e.code, e.message);
    });
    serde_json::from_str(&out.text()).unwrap()
}

#[tokio::test]
async fn exploded_lists_split_at_their_separator() {
    let c = client();
    assert_eq!(json(&c, "c://x/a/b").await, json!(["a", "b"]));
    assert_eq!(json(&c, "c://x/a%20b/c").await, json!(["a b", "c"]));
    assert_eq!(json(&c, "l://f.tar.gz").await, json!(["tar", "gz"]));
    assert_eq!(json(&c, "n://3,1,2").await, json!([3, 1, 2]));
    // As one string, the items joined by the separator (what `SafePath` reads).
    assert_eq!(c.read_resource("p://x/a/b").await.unwrap().text(), "a/b");
    let v = json(&c, "repo://a/b/files/src/lib.rs?limit=5#top").await;
    assert_eq!(
        v,
        json!({"owner": "a", "repo": "b", "path": ["src", "lib.rs"], "q": null, "limit": 5, "frag": "top"})
    );
}

#[tokio::test]
async fn undefined_values_are_absent() {
    let c = client();
    assert_eq!(json(&c, "c://x").await, json!([]));
    assert_eq!(json(&c, "l://f").await, json!([]));
    // Only `Option` and `Vec` parameters take an undefined value.
    let e = c.read_resource("p://x").await.unwrap_err();
    assert_eq!(e.code, -32602);
    assert!(
        e.message.contains("`path`") && e.message.contains("String"),
        "{}",
        e.message
    );
    assert_eq!(
        json(&c, "repo://a/b/files").await,
        json!({"owner": "a", "repo": "b", "path": [], "q": null, "limit": null, "frag": null})
    );
    assert_eq!(json(&c, "repo://a/b/files#top").await["frag"], "top");
    assert_eq!(
        json(&c, "repo://a/b/files/x#top").await["path"],
        json!(["x"])
    );
    assert_eq!(json(&c, "b://").await, Value::Null);
    assert_eq!(json(&c, "b://7").await, json!(7));
    // A required variable the URI leaves out: invalid params naming it.
    let e = c.read_resource("r://").await.unwrap_err();
    assert_eq!(e.code, -32602);
    assert!(
        e.message.contains("`id`") && e.message.contains("u32"),
        "{}",
        e.message
    );
    assert_eq!(e.data.unwrap()["uri"], "r://");
    let e = c.read_resource("repo://a//files").await.unwrap_err();
    assert_eq!(e.code, -32602);
    assert!(e.message.contains("`repo`"), "{}", e.message);
}

#[tokio::test]
async fn mistyped_values_are_invalid_params() {
    let c = client();
    for (uri, var, ty) in [
        ("repo://a/b/files?limit=notnum", "limit", "u32"),
        ("repo://a/b/files/x?limit=-1", "limit", "u32"),
        ("n://1,x", "ids", "u64"),
        ("b://x", "id", "u32"),
    ] {
        let e = c.read_resource(uri).await.unwrap_err();
        assert_eq!(e.code, -32602, "{uri}");
        assert!(
            !e.message.starts_with("Resource not found"),
            "{uri}: {}",
            e.message
        );
        assert!(
            e.message.contains(&format!("`{var}`")) && e.message.contains(ty),
            "{uri}: {}",
            e.message
        );
        assert_eq!(e.data.unwrap()["uri"], uri);
    }
    // A URI no template matches is still not found.
    let e = c.read_resource("c://y/a").await.unwrap_err();
    assert!(e.message.starts_with("Resource not found"), "{}", e.message);
}

#[tokio::test]
async fn list_items_are_split_before_decoding() {
    let c = client();
    // An encoded comma is part of its item, not a separator.
    assert_eq!(
        json(&c, "k://a%2Cb,c?tags=x%2Cy,z").await,
        json!({"keys": ["a,b", "c"], "tags": ["x,y", "z"]})
    );
    assert_eq!(
        json(&c, "k://a,b?tags=").await,
        json!({"keys": ["a", "b"], "tags": []})
    );
    assert_eq!(json(&c, "w://a%2Cb,c").await, json!(["a,b", "c"]));
    assert_eq!(json(&c, "l://f.a%2Eb.gz").await, json!(["a.b", "gz"]));
    // A path segment still may not hold a `/`, even encoded: no template matches.
    let e = c.read_resource("c://x/a%2Fb/c").await.unwrap_err();
    assert!(e.message.starts_with("Resource not found"), "{}", e.message);
}

#[tokio::test]
async fn an_empty_fragment_is_an_empty_value() {
    let c = client();
    assert_eq!(json(&c, "x://doc#").await, json!(""));
    assert_eq!(json(&c, "x://doc#top").await, json!("top"));
    assert_eq!(json(&c, "x://doc").await, Value::Null);
}

#[tokio::test]
async fn exploded_query_and_path_parameter_lists() {
    let c = client();
    assert_eq!(json(&c, "s://items?tag=a&tag=b").await, json!(["a", "b"]));
    assert_eq!(
        json(&c, "s://items?tag=a%2Cb&tag=c").await,
        json!(["a,b", "c"])
    );
    assert_eq!(json(&c, "s://items").await, json!([]));
    assert_eq!(
        json(&c, "m://x;m=1;m=2?q=z").await,
        json!({"m": [1, 2], "q": "z"})
    );
    let e = c.read_resource("m://x;m=1;m=x").await.unwrap_err();
    assert_eq!(e.code, -32602);
    assert!(e.message.contains("`m`"), "{}", e.message);
}

#[tokio::test]
async fn lists_in_a_path_segment_and_a_query_parameter() {
    let c = client();
    // RFC 6570 joins a list's items with raw commas in `{/ids}` and `{?ids}` alike.
    assert_eq!(json(&c, "v://seg/a,b%2Cc").await, json!(["a", "b,c"]));
    assert_eq!(json(&c, "v://query?ids=a,b%2Cc").await, json!(["a", "b,c"]));
    assert_eq!(json(&c, "v://seg/a").await, json!(["a"]));
    assert_eq!(json(&c, "v://seg").await, json!([]));
    // A `String` takes the whole value, decoded, as for `{var}`.
    let text = c.read_resource("v://text/a,b%2Cc").await.unwrap().text();
    assert_eq!(text, "a,b,c");
    // An item is a path segment: no `..`.
    let e = c.read_resource("v://seg/a,..").await.unwrap_err();
    assert!(e.message.starts_with("Resource not found"), "{}", e.message);
}

/// An empty `{/x}` value would reach a `String` handler as `""`, which a path join takes
/// for the directory itself, as `.`: it is refused like a dot segment (and a fixed
/// resource `x://d/` does not overlap a template `x://d{/x}`).
#[tokio::test]
async fn an_empty_path_segment_is_refused_like_a_dot_segment() {
    let c = client();
    for uri in ["v://text/", "v://seg/"] {
        let e = c.read_resource(uri).await.unwrap_err();
        assert!(
            e.message.starts_with("Resource not found"),
            "{uri}: {}",
            e.message
        );
    }
    // Empty items of a list that is not exploded are left out.
    assert_eq!(json(&c, "v://seg/a,,b").await, json!(["a", "b"]));
    // An exploded list refuses an empty item too.
    let e = c.read_resource("c://x/").await.unwrap_err();
    assert!(e.message.starts_with("Resource not found"), "{}", e.message);
}
