//! Composition over real HTTP: two servers mounted under namespaces in a third, with
//! namespaced lists, calls, prompts, reads (URIs rewritten in lists, templates, list
//! functions and contents), the children's state and middleware, notifications made by a
//! child's handler reaching the parent's listeners, and clashes refused at build time
//! naming both sources.

mod common;

use common::{Sse, post, post_bytes, request, standard_headers};
use mcp_runtime::Resource;
use mcp_runtime::middleware::{Next, Request, from_fn};
use mcp_runtime::{Context, Server, State, prompt, prompts, resource, resources, tool, tools};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

#[derive(Default)]
struct Hits(AtomicUsize);

/// Searches the docs.
#[tool]
async fn search(q: String, hits: State<Hits>) -> String {
    let n = hits.0.fetch_add(1, Ordering::SeqCst) + 1;
    format!("docs about {q} (search {n})")
}

/// Tells listeners that a note changed, naming it as the docs server does, and links to
/// it.
#[tool]
async fn touch(cx: Context) -> String {
    cx.notify_resource_updated("notes://1");
    cx.served_uri("notes://1")
}

/// Exports the docs (on standby until `enable_export`).
#[tool]
async fn export() -> &'static str {
    "exported"
}

/// Serves `export`, named as the docs server names it.
#[tool]
async fn enable_export(cx: Context) -> String {
    let server = cx.server().expect("serving");
    match server.enable_tool(&cx.served_name("export")) {
        Ok(true) => "enabled".into(),
        Ok(false) => "already served".into(),
        Err(e) => e.to_string(),
    }
}

/// A brief on a topic.
#[prompt]
async fn brief(#[arg(complete = topics)] topic: String) -> String {
    format!("Brief me on {topic}")
}

/// Topics: the prompt's own name as served, for the test to see.
async fn topics(partial: String, cx: Context) -> Vec<String> {
    vec![format!("{partial} ({})", cx.served_name("brief"))]
}

/// Lists the notes.
async fn list_notes() -> Vec<Resource> {
    vec![
        Resource::new("notes://1", "one"),
        Resource::new("notes://2", "two"),
    ]
}

/// One note.
#[resource("notes://{id}", mime_type = "text/markdown", list = list_notes)]
async fn note(id: u32, cx: mcp_runtime::Context) -> Result<String, mcp_runtime::Error> {
    if id > 100 {
        // Named as this module serves it; mounted, the client is told the served URI.
        return Err(mcp_runtime::Error::resource_not_found(format!(
            "notes://{id}"
        )));
    }
    if id == 99 {
        // Named as it was read (the served URI already): kept as it is.
        let read = cx.target().unwrap_or_default();
        return Err(mcp_runtime::Error::resource_not_found(read));
    }
    Ok(format!("# Note {id}"))
}

/// The index.
#[resource("notes://index")]
async fn index() -> &'static str {
    "1,2"
}

/// Searches the tickets.
#[tool(name = "search")]
async fn search_tickets(q: String) -> String {
    format!("tickets about {q}")
}

/// Says hello.
#[tool]
async fn hello() -> &'static str {
    "hello"
}

/// A tool named as a mounted one would be.
#[tool]
async fn docs_search() -> &'static str {
    "clash"
}

/// Raw notes: their scheme starts as if mounted under `docs` already.
#[resource("docs+raw://{id}")]
async fn raw_note(id: u32) -> String {
    format!("raw {id}")
}

/// Tells listeners that a raw note changed.
#[tool]
async fn touch_raw(cx: Context) -> String {
    cx.notify_resource_updated("docs+raw://1");
    cx.served_uri("docs+raw://1")
}

/// Every note at once: contents naming other URIs than the one read.
#[resource("notes://all")]
async fn all_notes() -> Vec<mcp_runtime::ResourceContents> {
    (1..=2)
        .map(|i| {
            let uri = format!("notes://{i}");
            mcp_runtime::ResourceContents::text(uri, "text/markdown", format!("# Note {i}"))
        })
        .collect()
}

/// A tool named as one mounted two deep would be.
#[tool]
async fn eu_docs_search() -> &'static str {
    "clash"
}

fn docs() -> mcp_runtime::ServerBuilder {
    Server::builder("docs", "1.0")
        .instructions("Search the docs before answering.")
        .tools(tools![search, touch, enable_export])
        .standby_tools(tools![export])
        .prompts(prompts![brief])
        .resources(resources![note, index, all_notes])
        .state(Hits::default())
        .layer(from_fn(|req: Request, next: Next| async move {
            let mut r = next.run(req).await;
            if let mcp_runtime::middleware::Response::Result(v) = &mut r
                && let Some(t) = v.pointer_mut("/content/0/text")
            {
                *t = json!(format!("{} [docs]", t.as_str().unwrap_or_default()));
            }
            r
        }))
}

fn tickets() -> mcp_runtime::ServerBuilder {
    Server::builder("tickets", "1.0").tools(tools![search_tickets])
}

fn names(addr: SocketAddr, method: &str, key: &str, field: &str) -> Vec<String> {
    let r = post(addr, &request(json!(1), method, json!({}))).json();
    r["result"][key]
        .as_array()
        .unwrap_or_else(|| panic!("{r}"))
        .iter()
        .map(|t| t[field].as_str().unwrap().to_owned())
        .collect()
}

fn call(addr: SocketAddr, name: &str, args: Value) -> Value {
    post(
        addr,
        &request(
            json!(2),
            "tools/call",
            json!({"name": name, "arguments": args}),
        ),
    )
    .json()
}

#[test]
fn mounted_servers_are_served_under_their_namespaces() {
    let server = Server::builder("support", "1.0")
        .instructions("Support desk.")
        .tools(tools![hello])
        .mount("docs", docs())
        .mount("tickets", tickets())
        .build()
        .unwrap();
    let addr = common::serve_in_background(server.http());

    assert_eq!(
        names(addr, "tools/list", "tools", "name"),
        [
            "docs_enable_export",
            "docs_search",
            "docs_touch",
            "hello",
            "tickets_search"
        ]
    );
    let r = call(addr, "docs_search", json!({"q": "x"}));
    assert_eq!(
        r["result"]["content"][0]["text"], "docs about x (search 1) [docs]",
        "{r}"
    );
    let r = call(addr, "tickets_search", json!({"q": "x"}));
    assert_eq!(
        r["result"]["content"][0]["text"], "tickets about x",
        "only docs' own middleware on docs"
    );
    let r = call(addr, "hello", json!({}));
    assert_eq!(r["result"]["content"][0]["text"], "hello");

    assert_eq!(
        names(addr, "prompts/list", "prompts", "name"),
        ["docs_brief"]
    );
    let r = post(
        addr,
        &request(
            json!(3),
            "prompts/get",
            json!({"name": "docs_brief", "arguments": {"topic": "t"}}),
        ),
    )
    .json();
    assert_eq!(
        r["result"]["messages"][0]["content"]["text"], "Brief me on t",
        "{r}"
    );

    assert_eq!(templates(addr), ["docs+notes://{id}"]);
    assert_eq!(
        names(addr, "resources/list", "resources", "uri"),
        [
            "docs+notes://1",
            "docs+notes://2",
            "docs+notes://all",
            "docs+notes://index"
        ]
    );
    let r = post(
        addr,
        &request(json!(4), "resources/read", json!({"uri": "docs+notes://2"})),
    )
    .json();
    assert_eq!(r["result"]["contents"][0]["uri"], "docs+notes://2", "{r}");
    assert_eq!(r["result"]["contents"][0]["text"], "# Note 2");
    let r = post(
        addr,
        &request(json!(5), "resources/read", json!({"uri": "notes://2"})),
    )
    .json();
    assert!(
        r.get("error").is_some(),
        "the unprefixed URI is not served: {r}"
    );
    let r = post(
        addr,
        &request(
            json!(5),
            "resources/read",
            json!({"uri": "docs+notes://999"}),
        ),
    )
    .json();
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(
        r["error"]["message"], "Resource not found: docs+notes://999",
        "{r}"
    );
    assert_eq!(r["error"]["data"]["uri"], "docs+notes://999", "{r}");
    let r = post(
        addr,
        &request(
            json!(5),
            "resources/read",
            json!({"uri": "docs+notes://99"}),
        ),
    )
    .json();
    assert_eq!(
        r["error"]["message"], "Resource not found: docs+notes://99",
        "{r}"
    );

    let discover = post(addr, &request(json!(6), "server/discover", json!({}))).json();
    let instructions = discover["result"]["instructions"]
        .as_str()
        .unwrap_or_default();
    assert!(instructions.starts_with("Support desk."), "{discover}");
    assert!(
        instructions.contains("prefixed `docs`: Search the docs"),
        "{instructions}"
    );

    // A notification made by the child's handler, in the child's terms, reaches the
    // parent's listeners under the mounted URI.
    assert_eq!(
        told(addr, "docs_touch", "docs+notes://1"),
        "docs+notes://1 [docs]"
    );
}

/// The URI templates the server at `addr` lists.
fn templates(addr: SocketAddr) -> Vec<String> {
    names(
        addr,
        "resources/templates/list",
        "resourceTemplates",
        "uriTemplate",
    )
}

/// Builds the server and serves it over HTTP in the background.
fn serve(server: mcp_runtime::ServerBuilder) -> SocketAddr {
    common::serve_in_background(server.build().unwrap().http())
}

/// Listens for updates of `uri`, calls `tool`, and returns the tool's text once the
/// update came.
fn told(addr: SocketAddr, tool: &str, uri: &str) -> String {
    let body = request(
        json!("sub"),
        "subscriptions/listen",
        json!({"notifications": {"resourceSubscriptions": [uri]}}),
    );
    let h = standard_headers(&body);
    let h: Vec<(&str, &str)> = h.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let mut sub = Sse::send(addr, &post_bytes(addr, body.to_string().as_bytes(), &h));
    assert_eq!(
        sub.next(Duration::from_secs(5)).unwrap()["method"],
        "notifications/subscriptions/acknowledged"
    );
    let r = call(addr, tool, json!({}));
    let n = sub.next(Duration::from_secs(5)).expect("told");
    assert_eq!(n["method"], "notifications/resources/updated");
    assert_eq!(n["params"]["uri"], uri);
    r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{r}"))
        .to_owned()
}

#[test]
fn a_childs_handler_names_items_as_its_own_server_does_at_any_depth() {
    // Alone, its URIs and names are its own.
    let addr = serve(docs());
    assert_eq!(told(addr, "touch", "notes://1"), "notes://1 [docs]");
    let r = call(addr, "enable_export", json!({}));
    assert_eq!(r["result"]["content"][0]["text"], "enabled [docs]", "{r}");
    assert!(names(addr, "tools/list", "tools", "name").contains(&"export".to_owned()));
    // Mounted in a server that is itself mounted: both namespaces.
    let desk = Server::builder("desk", "1.0").mount("docs", docs());
    let addr = serve(Server::builder("hq", "1.0").mount("eu", desk));
    assert_eq!(templates(addr), ["eu+docs+notes://{id}"]);
    assert_eq!(
        names(addr, "resources/list", "resources", "uri"),
        [
            "eu+docs+notes://1",
            "eu+docs+notes://2",
            "eu+docs+notes://all",
            "eu+docs+notes://index"
        ]
    );
    assert_eq!(
        told(addr, "eu_docs_touch", "eu+docs+notes://1"),
        "eu+docs+notes://1 [docs]"
    );
    let body = request(
        json!(4),
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "eu_docs_brief"},
            "argument": {"name": "topic", "value": "ru"}}),
    );
    let r = post(addr, &body).json();
    assert_eq!(
        r["result"]["completion"]["values"],
        json!(["ru (eu_docs_brief)"]),
        "a completer sees the mounts too: {r}"
    );
    let r = call(addr, "eu_docs_enable_export", json!({}));
    assert_eq!(r["result"]["content"][0]["text"], "enabled [docs]", "{r}");
    let r = call(addr, "eu_docs_export", json!({}));
    assert_eq!(r["result"]["content"][0]["text"], "exported [docs]", "{r}");
    let r = post(
        addr,
        &request(
            json!(3),
            "resources/read",
            json!({"uri": "eu+docs+notes://1"}),
        ),
    )
    .json();
    assert_eq!(
        r["result"]["contents"][0]["uri"], "eu+docs+notes://1",
        "{r}"
    );
    // Contents naming other URIs than the one read get both namespaces, once.
    let r = post(
        addr,
        &request(
            json!(5),
            "resources/read",
            json!({"uri": "eu+docs+notes://all"}),
        ),
    )
    .json();
    let uris: Vec<&Value> = r["result"]["contents"]
        .as_array()
        .unwrap_or_else(|| panic!("{r}"))
        .iter()
        .map(|c| &c["uri"])
        .collect();
    assert_eq!(
        uris,
        [&json!("eu+docs+notes://1"), &json!("eu+docs+notes://2")]
    );

    // A child whose own URIs look mounted already: they still get the namespace.
    let raw = Server::builder("raw", "1.0")
        .tools(tools![touch_raw])
        .resources(resources![raw_note]);
    let addr = serve(Server::builder("hq", "1.0").mount("docs", raw));
    assert_eq!(
        told(addr, "docs_touch_raw", "docs+docs+raw://1"),
        "docs+docs+raw://1"
    );
}

#[test]
fn clashes_and_bad_namespaces_are_build_errors_naming_the_sources() {
    let e = Server::builder("x", "1.0")
        .tools(tools![docs_search])
        .mount("docs", docs())
        .build()
        .unwrap_err()
        .to_string();
    assert!(e.contains("two tools are named `docs_search`"), "{e}");
    assert!(e.contains("mounted under `docs`"), "{e}");
    assert!(e.contains("compose::docs_search"), "{e}");
    let e = Server::builder("x", "1.0")
        .tools(tools![eu_docs_search])
        .mount("eu", Server::builder("desk", "1.0").mount("docs", docs()))
        .build()
        .unwrap_err()
        .to_string();
    assert!(e.contains("mounted under `eu/docs`"), "{e}");

    let e = Server::builder("x", "1.0")
        .mount("2 bad", tickets())
        .build()
        .unwrap_err()
        .to_string();
    assert!(e.contains("mount namespace `2 bad`"), "{e}");
}
