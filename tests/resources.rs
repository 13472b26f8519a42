//! Resources, templates, prompts and completion over real HTTP.

mod common;

use common::*;
use mcp_runtime::{
    Content, Error, Json, KnownArguments, PromptMessage, Resource, SafePath, Server, prompt,
    prompts, resource, resources,
};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::OnceLock;

/// The app configuration.
#[resource(
    "config://app",
    mime_type = "application/json",
    annotations(audience(user), priority = 0.8)
)]
async fn config() -> Json<Value> {
    Json(json!({"theme": "dark"}))
}

/// All notes (a fixed URI that the `notes://{id}` template would also match).
#[resource("notes://all")]
async fn all_notes() -> &'static str {
    "1,2"
}

/// One note.
#[resource(
    "notes://{id}",
    mime_type = "text/markdown",
    ttl_ms = 5000,
    cache_scope = "public"
)]
async fn note(#[arg(complete = note_ids)] id: u64) -> Result<String, Error> {
    match id {
        1 | 2 => Ok(format!("# Note {id}")),
        _ => Err(Error::resource_not_found(format!("notes://{id}"))),
    }
}

async fn note_ids(partial: String) -> Vec<String> {
    (0..250)
        .map(|i| i.to_string())
        .filter(|i| i.starts_with(&partial))
        .collect()
}

async fn list_files() -> Vec<Resource> {
    vec![
        Resource::new("file:///docs/a.md", "a.md"),
        Resource::new("file:///docs/b.md", "b.md"),
        // No resource serves it: left out of the list (listed is readable).
        Resource::new("elsewhere://stray", "stray"),
    ]
}

/// A file, by relative path.
#[resource("file:///docs/{+path}", list = list_files)]
async fn file(path: SafePath) -> String {
    format!("file {}", path.as_path().display())
}

/// A file named by a query parameter.
#[resource("file:///open{?path}")]
async fn open(path: SafePath) -> String {
    format!("open {}", path.as_path().display())
}

/// Search results.
#[resource("search://notes{?q,limit}")]
async fn search(q: Option<String>, limit: Option<u8>) -> Json<Value> {
    Json(json!({"q": q, "limit": limit}))
}

/// Raw bytes.
#[resource("blob://{name}", mime_type = "application/octet-stream")]
async fn blob(name: String) -> Vec<u8> {
    name.into_bytes()
}

/// Fails.
#[resource("broken://x")]
async fn broken() -> Result<String, Error> {
    Err(Error::new("disk on fire"))
}

/// Reviews code in a language.
#[prompt(title = "Review")]
async fn review(
    #[arg(description = "The language", complete = languages)] language: String,
    #[arg(name = "filePath", complete = files)] file_path: Option<String>,
    lines: Option<u32>,
) -> Vec<PromptMessage> {
    vec![
        PromptMessage::user(format!(
            "Review this {language} file: {file_path:?}, {lines:?} lines"
        )),
        PromptMessage::assistant(Content::text("On it.")),
    ]
}

async fn languages(partial: String) -> Vec<String> {
    ["python", "perl", "rust"]
        .into_iter()
        .filter(|l| l.starts_with(&partial))
        .map(String::from)
        .collect()
}

async fn files(partial: String, known: KnownArguments) -> Vec<String> {
    vec![format!(
        "{}/{partial}",
        known.get("language").unwrap_or("?")
    )]
}

fn addr() -> SocketAddr {
    static ADDR: OnceLock<SocketAddr> = OnceLock::new();
    *ADDR.get_or_init(|| {
        let server = Server::builder("resources-test", "1.0")
            .limits(mcp_runtime::config::Limits::default().page_size(3))
            .resources(resources![
                config, all_notes, note, file, open, search, blob, broken
            ])
            .prompts(prompts![review])
            .build()
            .unwrap();
        serve_in_background(server.http())
    })
}

fn read(uri: &str) -> Value {
    post(
        addr(),
        &request(json!(1), "resources/read", json!({"uri": uri})),
    )
    .json()
}

fn list_all(method: &str, key: &str) -> Vec<Value> {
    let mut out = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let v = post(addr(), &request(json!(1), method, params)).json();
        let r = &v["result"];
        assert!(r["ttlMs"].is_u64() && r["cacheScope"].is_string(), "{v}");
        out.extend(r[key].as_array().unwrap().iter().cloned());
        match r.get("nextCursor") {
            Some(c) => cursor = Some(c.as_str().unwrap().to_owned()),
            None => return out,
        }
    }
}

#[test]
fn capabilities_follow_what_exists() {
    let v = post(addr(), &request(json!(1), "server/discover", json!({}))).json();
    assert_eq!(
        v["result"]["capabilities"],
        json!({"resources": {"subscribe": true, "listChanged": true}, "prompts": {"listChanged": true}, "completions": {}})
    );
    // No tools here: tools/list is not a method of this server.
    assert_eq!(
        post(addr(), &request(json!(2), "tools/list", json!({}))).status,
        404
    );
}

#[test]
fn resources_and_templates_are_listed_sorted_and_paged() {
    let resources = list_all("resources/list", "resources");
    let uris: Vec<&str> = resources
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert_eq!(
        uris,
        [
            "broken://x",
            "config://app",
            "file:///docs/a.md",
            "file:///docs/b.md",
            "notes://all"
        ]
    );
    let config = &resources[1];
    assert_eq!(config["mimeType"], "application/json");
    assert_eq!(config["description"], "The app configuration.");
    assert_eq!(
        config["annotations"],
        json!({"audience": ["user"], "priority": 0.8})
    );

    let templates = list_all("resources/templates/list", "resourceTemplates");
    let t: Vec<&str> = templates
        .iter()
        .map(|r| r["uriTemplate"].as_str().unwrap())
        .collect();
    assert_eq!(
        t,
        [
            "blob://{name}",
            "file:///docs/{+path}",
            "file:///open{?path}",
            "notes://{id}",
            "search://notes{?q,limit}"
        ]
    );
}

/// A cursor belongs to the list that made it: sent to another list it is an invalid
/// cursor (-32602), not a place to start (PAGE-03).
#[test]
fn a_cursor_is_refused_by_another_list() {
    let first_page = |method: &str| {
        let v = post(addr(), &request(json!(1), method, json!({}))).json();
        v["result"]["nextCursor"].as_str().unwrap().to_owned()
    };
    // resources/list here runs list functions (its own paging), templates are precomputed.
    let resources = first_page("resources/list");
    let templates = first_page("resources/templates/list");
    for (cursor, method) in [
        (&resources, "resources/templates/list"),
        (&resources, "prompts/list"),
        (&templates, "resources/list"),
        (&templates, "prompts/list"),
    ] {
        let v = post(
            addr(),
            &request(json!(1), method, json!({"cursor": cursor})),
        )
        .json();
        assert_eq!(v["error"]["code"], -32602, "{method}: {v}");
    }
    // Each list still takes its own.
    for (cursor, method) in [
        (&resources, "resources/list"),
        (&templates, "resources/templates/list"),
    ] {
        let v = post(
            addr(),
            &request(json!(1), method, json!({"cursor": cursor})),
        )
        .json();
        assert!(v["result"].is_object(), "{method}: {v}");
    }
}

#[test]
fn reading_resources_and_templates() {
    let v = read("config://app");
    let c = &v["result"]["contents"][0];
    assert_eq!(c["uri"], "config://app");
    assert_eq!(c["mimeType"], "application/json");
    assert_eq!(
        serde_json::from_str::<Value>(c["text"].as_str().unwrap()).unwrap(),
        json!({"theme": "dark"})
    );
    assert_eq!(v["result"]["ttlMs"], 0, "reads default to 0/private");
    assert_eq!(v["result"]["cacheScope"], "private");
    assert!(v["result"]["_meta"]["io.modelcontextprotocol/serverInfo"].is_object());

    let v = read("notes://2");
    assert_eq!(v["result"]["contents"][0]["text"], "# Note 2");
    assert_eq!(v["result"]["contents"][0]["mimeType"], "text/markdown");
    assert_eq!(v["result"]["ttlMs"], 5000);
    assert_eq!(v["result"]["cacheScope"], "public");

    // The fixed URI wins over the template that also matches it.
    assert_eq!(read("notes://all")["result"]["contents"][0]["text"], "1,2");

    let v = read("blob://hi");
    assert_eq!(v["result"]["contents"][0]["blob"], "aGk=");
    assert_eq!(
        v["result"]["contents"][0]["mimeType"],
        "application/octet-stream"
    );
}

#[test]
fn template_matching_edge_cases() {
    // Percent-encoding is decoded once.
    let v = read("file:///docs/sub%20dir/a.md");
    assert_eq!(v["result"]["contents"][0]["text"], "file sub dir/a.md");
    // Reserved expansion keeps slashes.
    assert_eq!(
        read("file:///docs/a/b/c.md")["result"]["contents"][0]["text"],
        "file a/b/c.md"
    );
    // Optional query variables, in any order, may be missing.
    let text = |v: Value| {
        serde_json::from_str::<Value>(v["result"]["contents"][0]["text"].as_str().unwrap()).unwrap()
    };
    assert_eq!(
        text(read("search://notes")),
        json!({"q": null, "limit": null})
    );
    assert_eq!(
        text(read("search://notes?limit=5&q=a%26b")),
        json!({"q": "a&b", "limit": 5})
    );
    // A variable that does not parse into its type is invalid params with the URI.
    let v = read("notes://abc");
    assert_eq!(v["error"]["code"], -32602);
    assert_eq!(v["error"]["data"]["uri"], "notes://abc");
    let v = read("search://notes?limit=300");
    assert_eq!(v["error"]["code"], -32602);
    // A simple variable never spans segments, even encoded.
    assert_eq!(read("blob://a%2Fb")["error"]["code"], -32602);
    // A query parameter's value may: a `SafePath` reads it as a nested path.
    assert_eq!(
        read("file:///open?path=a/b%20c/d.md")["result"]["contents"][0]["text"],
        "open a/b c/d.md"
    );
}

#[test]
fn traversal_is_refused_before_the_handler_runs() {
    for uri in [
        "file:///docs/../secret",
        "file:///docs/%2e%2e/secret",
        "file:///docs/a/%2E%2E/%2e%2e/secret",
        "file:///docs//etc/passwd",
        "file:///docs/a%00b",
        "file:///docs/./a",
        "file:///docs/a%5Cb",
        "file:///open?path=../secret",
        "file:///open?path=a/%2E%2E/%2e%2e/secret",
        "file:///open?path=/etc/passwd",
    ] {
        let v = read(uri);
        assert_eq!(v["error"]["code"], -32602, "{uri}: {v}");
        assert!(v.get("result").is_none());
    }
}

#[test]
fn missing_resources_are_errors_with_the_uri() {
    for uri in ["nope://x", "notes://7"] {
        let r = post(
            addr(),
            &request(json!(9), "resources/read", json!({"uri": uri})),
        );
        assert_eq!(r.status, 200);
        let v = r.json();
        assert_eq!(v["error"]["code"], -32602);
        assert_eq!(v["error"]["data"]["uri"], uri);
        assert_eq!(v["id"], 9);
    }
    let v = read("broken://x");
    assert_eq!(v["error"]["code"], -32603);
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("disk on fire")
    );
    // Mcp-Name must carry the URI.
    let body = request(json!(1), "resources/read", json!({"uri": "config://app"}));
    let r = post_with(
        addr(),
        &body,
        &["Mcp-Name"],
        &[("Mcp-Name", "config://other")],
    );
    assert_eq!(
        (r.status, r.json()["error"]["code"].clone()),
        (400, json!(-32020))
    );
}

#[test]
fn prompts_list_and_get() {
    let v = post(addr(), &request(json!(1), "prompts/list", json!({}))).json();
    let p = &v["result"]["prompts"][0];
    assert_eq!(p["name"], "review");
    assert_eq!(p["title"], "Review");
    assert_eq!(
        p["arguments"],
        json!([
            {"name": "language", "description": "The language", "required": true},
            {"name": "filePath", "required": false},
            {"name": "lines", "required": false}
        ])
    );
    assert_eq!(v["result"]["cacheScope"], "public");

    let get = |args: Value| {
        post(
            addr(),
            &request(
                json!(3),
                "prompts/get",
                json!({"name": "review", "arguments": args}),
            ),
        )
        .json()
    };
    let v = get(json!({"language": "rust", "filePath": "src/lib.rs", "lines": "12"}));
    assert_eq!(v["result"]["resultType"], "complete");
    assert_eq!(
        v["result"]["messages"][0],
        json!({"role": "user", "content": {"type": "text", "text": "Review this rust file: Some(\"src/lib.rs\"), Some(12) lines"}})
    );
    assert_eq!(v["result"]["messages"][1]["role"], "assistant");
    assert!(
        v["result"].get("ttlMs").is_none(),
        "prompts/get carries no caching hints"
    );

    let v = get(json!({"filePath": "x"}));
    assert_eq!(v["error"]["code"], -32602);
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`language`")
    );
    assert_eq!(get(json!({"language": 5}))["error"]["code"], -32602);
    assert_eq!(
        get(json!({"language": "rust", "lines": "many"}))["error"]["code"],
        -32602
    );
    let v = post(
        addr(),
        &request(json!(4), "prompts/get", json!({"name": "nope"})),
    )
    .json();
    assert_eq!(v["error"]["code"], -32602);
}

#[test]
fn completion_for_prompt_arguments_and_template_variables() {
    let complete = |r: Value, arg: &str, value: &str, ctx: Option<Value>| {
        let mut params = json!({"ref": r, "argument": {"name": arg, "value": value}});
        if let Some(c) = ctx {
            params["context"] = json!({"arguments": c});
        }
        post(addr(), &request(json!(5), "completion/complete", params)).json()
    };
    let v = complete(
        json!({"type": "ref/prompt", "name": "review"}),
        "language",
        "p",
        None,
    );
    assert_eq!(
        v["result"]["completion"],
        json!({"values": ["python", "perl"], "total": 2, "hasMore": false})
    );
    assert!(v["result"].get("ttlMs").is_none());
    let v = complete(
        json!({"type": "ref/prompt", "name": "review"}),
        "filePath",
        "lib",
        Some(json!({"language": "rust"})),
    );
    assert_eq!(v["result"]["completion"]["values"], json!(["rust/lib"]));
    // No completer for that argument: an empty list.
    let v = complete(
        json!({"type": "ref/prompt", "name": "review"}),
        "lines",
        "1",
        None,
    );
    assert_eq!(v["result"]["completion"]["values"], json!([]));
    // Capped at 100.
    let v = complete(
        json!({"type": "ref/resource", "uri": "notes://{id}"}),
        "id",
        "",
        None,
    );
    let c = &v["result"]["completion"];
    assert_eq!(c["values"].as_array().unwrap().len(), 100);
    assert_eq!(c["total"], 250);
    assert_eq!(c["hasMore"], true);
    // Unknown references and arguments.
    assert_eq!(
        complete(json!({"type": "ref/prompt", "name": "nope"}), "x", "", None)["error"]["code"],
        -32602
    );
    assert_eq!(
        complete(
            json!({"type": "ref/prompt", "name": "review"}),
            "nope",
            "",
            None
        )["error"]["code"],
        -32602
    );
    assert_eq!(
        complete(
            json!({"type": "ref/resource", "uri": "x://{y}"}),
            "y",
            "",
            None
        )["error"]["code"],
        -32602
    );
    // A URI the template serves stands for the template (the schema allows either).
    let v = complete(
        json!({"type": "ref/resource", "uri": "notes://7"}),
        "id",
        "",
        None,
    );
    assert_eq!(v["result"]["completion"]["total"], 250, "{v}");
    // Fields of the wrong type are named, not taken as empty.
    let message = |v: Value| {
        v["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    let v = complete(json!({"type": "ref/prompt", "name": 5}), "x", "", None);
    assert!(message(v).contains("`ref.name` must be a string"));
    let v = complete(json!({"type": "ref/resource", "uri": null}), "x", "", None);
    assert!(message(v).contains("`ref.uri` must be a string"));
    let params = json!({"ref": {"type": "ref/prompt", "name": "review"}, "argument": {"name": "language", "value": "p"}, "context": "x"});
    let v = post(addr(), &request(json!(6), "completion/complete", params)).json();
    assert_eq!(v["error"]["code"], -32602, "{v}");
    assert!(message(v).contains("`params.context` must be an object"));
}

#[test]
fn overlapping_templates_refuse_to_start() {
    /// A.
    #[resource("dup://{a}")]
    async fn dup_a(a: String) -> String {
        a
    }
    /// B.
    #[resource("dup://{+b}")]
    async fn dup_b(b: String) -> String {
        b
    }
    let err = Server::builder("x", "1")
        .resources(resources![dup_a, dup_b])
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("can match the same URI"), "{err}");
}

#[path = "resources/template_values.rs"]
mod template_values;

/// Rows of the database, listed for a caller with `db:read`.
#[resource(
    "db://rows/{id}",
    list = list_rows,
    scopes("db:read"),
    ttl_ms = 60000,
    cache_scope = "public"
)]
async fn row(id: String) -> String {
    format!("row {id}")
}

async fn list_rows() -> Vec<Resource> {
    vec![Resource::new("db://rows/1", "row 1")]
}

/// A public page, for everyone.
#[resource("docs://public", ttl_ms = 60000, cache_scope = "public")]
async fn public_page() -> &'static str {
    "hello"
}

/// `resources/list` holds the entries of a template with scopes only for callers that
/// have them: the list is private then, whatever the template's own hints say (a shared
/// cache would hand the rows to callers without the scope). It was public when only
/// the static resources had no scopes.
#[test]
fn a_list_with_entries_of_a_scoped_template_is_private() {
    use mcp_runtime::auth::{Auth, AuthError, Principal};
    let validator = |token: &str| -> Result<Principal, AuthError> {
        match token {
            "reader" => Ok(Principal::new("r").scopes(["db:read"])),
            "nobody" => Ok(Principal::new("n")),
            _ => Err(AuthError::Invalid("unknown token".into())),
        }
    };
    let auth = Auth::new("https://mcp.example.com/mcp", validator)
        .authorization_server("https://auth.example.com");
    let server = Server::builder("rows", "1.0")
        .resources(resources![row, public_page])
        .auth(auth)
        .build()
        .unwrap();
    let addr = serve_in_background(server.http());
    let list = request(json!(1), "resources/list", json!({}));
    let as_ = |token: &str| {
        let bearer = format!("Bearer {token}");
        let r = post_with(addr, &list, &[], &[("Authorization", bearer.as_str())]);
        assert_eq!(r.status, 200, "{}", r.text());
        r.json()["result"].clone()
    };
    let reader = as_("reader");
    let uris: Vec<&str> = reader["resources"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["uri"].as_str())
        .collect();
    assert!(uris.contains(&"db://rows/1"), "{reader}");
    assert_eq!(reader["cacheScope"], "private", "{reader}");
    let nobody = as_("nobody");
    assert!(!nobody.to_string().contains("db://rows/1"), "{nobody}");
    assert_eq!(nobody["cacheScope"], "private", "{nobody}");
}
