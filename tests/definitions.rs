//! What definitions can say, end to end through the request rules (in process, with the
//! testing kit): completers with state and as methods, exploded URI templates, `io`
//! errors from resources, caching hints on prompts.

use mcp_runtime::testing::TestClient;
use mcp_runtime::{
    Error, KnownArguments, PromptMessage, SafePath, Server, State, prompt, prompts, resource,
    resources, server,
};
use serde_json::json;
use std::sync::atomic::{AtomicU64, Ordering};

struct Catalogue(Vec<&'static str>);

async fn titles(
    partial: String,
    catalogue: State<Catalogue>,
    known: KnownArguments,
) -> Vec<String> {
    let prefix = known.get("shelf").unwrap_or_default().to_owned();
    catalogue
        .0
        .iter()
        .filter(|t| t.starts_with(&partial))
        .map(|t| format!("{prefix}{t}"))
        .collect()
}

/// A book, by title.
#[resource("books://{shelf}/{title}")]
async fn book(shelf: String, #[arg(complete = titles)] title: String) -> String {
    format!("{title} on {shelf}")
}

/// A file of the source tree: `{/path*}` matches any depth.
#[resource("src://tree{/path*}")]
async fn source(path: SafePath) -> Result<String, Error> {
    // A missing file is the resource-not-found error, not an internal error.
    let bytes = path.read_under(env!("CARGO_MANIFEST_DIR")).await?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Several notes at once: `{ids*}` binds a list.
#[resource("notes://{ids*}")]
async fn notes(ids: Vec<u64>) -> String {
    format!("{ids:?}")
}

/// Reviews code; its list may be cached for a minute.
#[prompt(ttl_ms = 60000, cache_scope = "public")]
async fn review(language: String) -> PromptMessage {
    PromptMessage::user(format!("Review this {language}."))
}

#[derive(Default)]
struct Counter(AtomicU64);

#[server]
impl Counter {
    /// One count, by number.
    #[resource("count://{n}")]
    async fn count(&self, #[arg(complete = known)] n: u64) -> String {
        format!("{n}/{}", self.0.load(Ordering::Relaxed))
    }

    async fn known(&self, partial: String) -> Vec<String> {
        (0..=self.0.load(Ordering::Relaxed))
            .map(|i| i.to_string())
            .filter(|i| i.starts_with(&partial))
            .collect()
    }
}

fn client() -> TestClient {
    let counter = Counter::default();
    counter.0.store(12, Ordering::Relaxed);
    let server = Server::builder("defs", "1")
        .state(Catalogue(vec!["Dune", "Dracula", "Emma"]))
        .resources(resources![book, source, notes])
        .prompts(prompts![review])
        .provider(counter)
        .build()
        .unwrap();
    TestClient::new(server)
}

#[tokio::test]
async fn completers_see_state_known_arguments_and_their_server() {
    let c = client();
    let book = json!({"type": "ref/resource", "uri": "books://{shelf}/{title}"});
    assert_eq!(
        c.complete(book.clone(), "title", "D").await.unwrap(),
        ["Dune", "Dracula"]
    );
    let (r, _) = c
        .request(
            "completion/complete",
            json!({"ref": book, "argument": {"name": "title", "value": "E"}, "context": {"arguments": {"shelf": "top:"}}}),
        )
        .await
        .unwrap();
    assert_eq!(r["completion"]["values"], json!(["top:Emma"]));
    let count = json!({"type": "ref/resource", "uri": "count://{n}"});
    assert_eq!(
        c.complete(count, "n", "1").await.unwrap(),
        ["1", "10", "11", "12"]
    );
}

#[tokio::test]
async fn a_completer_needing_missing_state_refuses_to_build() {
    let err = Server::builder("x", "1")
        .resources(resources![book])
        .build()
        .unwrap_err();
    assert!(
        err.to_string().contains("State<definitions::Catalogue>"),
        "{err}"
    );
}

#[tokio::test]
async fn exploded_templates_bind_paths_and_lists() {
    let c = client();
    let out = c
        .read_resource("src://tree/tests/definitions.rs")
        .await
        .unwrap();
    assert!(
        out.text()
            .contains("exploded_templates_bind_paths_and_lists")
    );
    assert_eq!(
        c.read_resource("notes://3,1,2").await.unwrap().text(),
        "[3, 1, 2]"
    );
    // Each item of an exploded path is a safe segment: no `..` gets through.
    let e = c
        .read_resource("src://tree/../Cargo.toml")
        .await
        .unwrap_err();
    assert_eq!(e.code, -32602);
}

#[tokio::test]
async fn a_missing_file_is_resource_not_found() {
    let e = client()
        .read_resource("src://tree/tests/no-such-file.rs")
        .await
        .unwrap_err();
    assert_eq!(e.code, -32602);
    assert_eq!(e.data.unwrap()["uri"], "src://tree/tests/no-such-file.rs");
    assert!(e.message.starts_with("Resource not found"), "{}", e.message);
}

#[tokio::test]
async fn prompts_take_caching_hints() {
    let (r, _) = client().request("prompts/list", json!({})).await.unwrap();
    assert_eq!(r["ttlMs"], 60000);
    assert_eq!(r["cacheScope"], "public");
}

/// Waits `millis` ms (at most a few) for each of `rounds`; its arguments are typed integers.
#[mcp_runtime::tool]
async fn pause(millis: u32, rounds: Option<i8>, sizes: Vec<u16>) -> String {
    format!("{millis}|{rounds:?}|{sizes:?}")
}

/// JSON Schema counts `3.0` as an integer, and clients (models among them) send such
/// numbers: a typed integer argument takes them. One out of the type's range, or with a
/// fraction, is still the tool's error.
#[tokio::test]
async fn integral_floats_are_integers_for_typed_arguments() {
    let c = TestClient::new(
        Server::builder("ints", "1")
            .tools(mcp_runtime::tools![pause])
            .build()
            .unwrap(),
    );
    let out = c
        .call_tool(
            "pause",
            json!({"millis": 3.0, "rounds": 2.0, "sizes": [1.0, 2, 3e2]}),
        )
        .await
        .unwrap();
    assert!(!out.is_error(), "{}", out.result);
    assert_eq!(out.text(), "3|Some(2)|[1, 2, 300]");
    for bad in [
        json!({"millis": 3.5, "sizes": []}),
        json!({"millis": 1e23, "sizes": []}),
        json!({"millis": 1, "rounds": 300.0, "sizes": []}),
    ] {
        let out = c.call_tool("pause", bad.clone()).await.unwrap();
        assert!(out.is_error(), "{bad}: {}", out.result);
    }
}

/// Written lines,
#[doc = include_str!("../ui-tests/ui/tool/pass/doc_include.md")]
///   and a last line, indented.
#[mcp_runtime::tool]
async fn mixed_doc() -> &'static str {
    "ok"
}

/// A description made of `///` lines and an included file: the lines lose their shared
/// margin, the file's text is kept, and the whole is trimmed.
#[tokio::test]
async fn a_doc_comment_mixed_with_an_included_file_reads_as_written() {
    let server = Server::builder("docs", "1")
        .tools(mcp_runtime::tools![mixed_doc])
        .build()
        .unwrap();
    let (list, _) = TestClient::new(server)
        .request("tools/list", json!({}))
        .await
        .unwrap();
    assert_eq!(
        list["tools"][0]["description"],
        "Written lines,\nDocumented from a Markdown file.\n\nWith a second paragraph.\n\n  and a last line, indented."
    );
}

/// Forecast for a city.
#[mcp_runtime::tool]
async fn forecast(
    /// City name, as the user wrote it
    city: String,
    /// How many days ahead
    #[arg(description = "Days ahead (1-7)")]
    days: Option<u8>,
    /// The request (an extractor: nothing clients see)
    cx: mcp_runtime::Context,
) -> String {
    let _ = cx.request_id();
    format!("{city} {days:?}")
}

/// Greets.
#[mcp_runtime::prompt]
async fn welcome(
    /// Who to greet
    name: String,
) -> String {
    format!("hi {name}")
}

/// A parameter's `///` comment is its argument's description (rustc allows none there:
/// the macro takes it); `#[arg(description)]` wins over it.
#[tokio::test]
async fn a_parameters_doc_comment_describes_its_argument() {
    let server = Server::builder("docs", "1")
        .tools(mcp_runtime::tools![forecast])
        .prompts(mcp_runtime::prompts![welcome])
        .build()
        .unwrap();
    let client = TestClient::new(server);
    let (tools, _) = client.request("tools/list", json!({})).await.unwrap();
    let props = &tools["tools"][0]["inputSchema"]["properties"];
    assert_eq!(
        props["city"]["description"],
        "City name, as the user wrote it"
    );
    assert_eq!(props["days"]["description"], "Days ahead (1-7)");
    assert_eq!(props.as_object().map(|p| p.len()), Some(2), "{props}");
    let (prompts, _) = client.request("prompts/list", json!({})).await.unwrap();
    assert_eq!(
        prompts["prompts"][0]["arguments"][0]["description"],
        "Who to greet"
    );
    // An argument the prompt does not declare is refused, naming those it has: dropped
    // unseen, a misspelt one would leave the prompt without it.
    let e = client
        .request(
            "prompts/get",
            json!({"name": "welcome", "arguments": {"name": "Ada", "nmae": "Ada"}}),
        )
        .await
        .unwrap_err();
    assert_eq!(e.code, -32602);
    assert_eq!(
        e.message,
        "unknown argument `nmae` for prompt `welcome` (its arguments: name)"
    );
}

/// The code of a city; an unknown one is the tool's error, given as a `String`.
#[mcp_runtime::tool]
async fn city_code(city: String) -> Result<&'static str, String> {
    match city.as_str() {
        "Oslo" => Ok("OSL"),
        other => Err(format!("no code for {other}")),
    }
}

/// A numbered setting; a bad key is an `anyhow::Error` with context.
#[mcp_runtime::tool]
async fn setting(key: String) -> anyhow::Result<String> {
    use anyhow::Context;
    let n: u32 = key
        .parse()
        .with_context(|| format!("reading setting {key:?}"))?;
    anyhow::ensure!(n < 10, "setting {n} does not exist");
    Ok(format!("setting {n}"))
}

/// Always fails, with a boxed error.
#[mcp_runtime::tool]
async fn boxed_failure() -> Result<String, Box<dyn std::error::Error + Send + Sync>> {
    Err("the boxed reason".into())
}

/// A file under a directory that does not exist, read into an `anyhow::Result`.
#[resource("gone://{name}")]
async fn gone(name: String) -> anyhow::Result<String> {
    Ok(std::fs::read_to_string(format!(
        "/nonexistent-mcp-dir/{name}"
    ))?)
}

/// A note, by number: only note 1 exists; the others are `Error::not_found`.
#[resource("memo://{id}")]
async fn memo(id: u64) -> Result<String, Error> {
    match id {
        1 => Ok("the first".to_owned()),
        _ => Err(Error::not_found(format!("no memo {id}"))),
    }
}

/// Looks a memo up by number, as a tool: a missing one is its error.
#[mcp_runtime::tool]
async fn find_memo(id: u64) -> Result<String, Error> {
    Err(Error::not_found(format!("no memo {id}")))
}

/// A greeting; an empty name is refused with a `String`.
#[prompt]
async fn greet(name: String) -> Result<String, String> {
    if name.is_empty() {
        return Err("a name is needed".to_owned());
    }
    Ok(format!("Greet {name}."))
}

/// Handlers may fail with a `String`, a `Box<dyn Error + Send + Sync>` or an
/// `anyhow::Error`, not only `mcp_runtime::Error` and `std::error::Error` types: a tool's
/// failure is its result with `isError: true` and the message (with anyhow's context
/// chain); a prompt's or a resource's is `-32603` with the message.
#[tokio::test]
async fn handlers_fail_with_strings_boxes_and_anyhow() {
    let c = TestClient::new(
        Server::builder("errors", "1")
            .tools(mcp_runtime::tools![
                city_code,
                setting,
                boxed_failure,
                find_memo
            ])
            .resources(resources![gone, memo])
            .prompts(prompts![greet])
            .build()
            .unwrap(),
    );
    let out = c
        .call_tool("city_code", json!({"city": "Oslo"}))
        .await
        .unwrap();
    assert!(!out.is_error(), "{}", out.result);
    assert_eq!(out.text(), "OSL");
    let out = c
        .call_tool("city_code", json!({"city": "Rome"}))
        .await
        .unwrap();
    assert!(out.is_error(), "{}", out.result);
    assert_eq!(out.text(), "no code for Rome");

    assert_eq!(
        c.call_tool("setting", json!({"key": "3"}))
            .await
            .unwrap()
            .text(),
        "setting 3"
    );
    let out = c.call_tool("setting", json!({"key": "x"})).await.unwrap();
    assert!(out.is_error(), "{}", out.result);
    assert_eq!(
        out.text(),
        "reading setting \"x\": invalid digit found in string"
    );
    let out = c.call_tool("setting", json!({"key": "12"})).await.unwrap();
    assert!(out.is_error(), "{}", out.result);
    assert_eq!(out.text(), "setting 12 does not exist");

    let out = c.call_tool("boxed_failure", json!({})).await.unwrap();
    assert!(out.is_error(), "{}", out.result);
    assert_eq!(out.text(), "the boxed reason");

    // anyhow hides the `io::Error` it holds (its box is its own type): the message goes
    // through, as an internal error; `Result<_, mcp_runtime::Error>` keeps `NotFound`.
    let e = c.read_resource("gone://notes.txt").await.unwrap_err();
    assert_eq!(e.code, -32603, "{}", e.message);
    assert_eq!(e.message, "No such file or directory (os error 2)");

    // `Error::not_found`: from a resource, resource-not-found for the URI being read; from
    // a tool, its error with the message.
    assert_eq!(
        c.read_resource("memo://1").await.unwrap().text(),
        "the first"
    );
    let e = c.read_resource("memo://2").await.unwrap_err();
    assert_eq!(e.code, -32602, "{}", e.message);
    assert_eq!(e.data.unwrap()["uri"], "memo://2");
    let out = c.call_tool("find_memo", json!({"id": 2})).await.unwrap();
    assert!(out.is_error(), "{}", out.result);
    assert_eq!(out.text(), "no memo 2");

    let (r, _) = c
        .request(
            "prompts/get",
            json!({"name": "greet", "arguments": {"name": "Ada"}}),
        )
        .await
        .unwrap();
    assert_eq!(r["messages"][0]["content"]["text"], "Greet Ada.");
    let e = c
        .request(
            "prompts/get",
            json!({"name": "greet", "arguments": {"name": ""}}),
        )
        .await
        .unwrap_err();
    assert_eq!(e.code, -32603);
    assert_eq!(e.message, "a name is needed");
}

#[derive(Debug, Default, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Units {
    #[default]
    Metric,
    Imperial,
}

/// A forecast, with defaults for what the caller leaves out.
#[mcp_runtime::tool]
async fn outlook(
    city: String,
    #[arg(default = 3)] days: u8,
    #[arg(default = "en")] language: String,
    #[arg(default)] units: Units,
    #[arg(default = vec![6, 18])] hours: Vec<u8>,
) -> String {
    format!("{city} {days} {language} {units:?} {hours:?}")
}

/// A prompt whose tone has a default.
#[prompt]
async fn letter(to: String, #[arg(default = "warm")] tone: String) -> String {
    format!("A {tone} letter to {to}.")
}

#[tokio::test]
async fn defaults_fill_left_out_arguments_and_show_in_the_schema() {
    let c = TestClient::new(
        Server::builder("defaults", "1")
            .tools(mcp_runtime::tools![outlook])
            .prompts(prompts![letter])
            .build()
            .unwrap(),
    );
    let tools = c.list_all("tools/list", "tools").await.unwrap();
    let schema = &tools[0]["inputSchema"];
    assert_eq!(schema["required"], json!(["city"]), "{schema}");
    let p = &schema["properties"];
    assert_eq!(p["days"]["default"], 3, "{schema}");
    assert_eq!(p["language"]["default"], "en");
    assert_eq!(p["units"]["default"], "metric");
    assert_eq!(p["hours"]["default"], json!([6, 18]));
    assert!(p["city"].get("default").is_none());

    let out = c
        .call_tool("outlook", json!({"city": "Oslo"}))
        .await
        .unwrap();
    assert_eq!(out.text(), "Oslo 3 en Metric [6, 18]", "{}", out.result);
    let out = c
        .call_tool(
            "outlook",
            json!({"city": "Oslo", "days": 5, "language": "nb", "units": "imperial", "hours": []}),
        )
        .await
        .unwrap();
    assert_eq!(out.text(), "Oslo 5 nb Imperial []", "{}", out.result);
    // A value given is checked as ever: null is not a number, and not the default.
    let out = c
        .call_tool("outlook", json!({"city": "Oslo", "days": null}))
        .await
        .unwrap();
    assert!(out.is_error(), "{}", out.result);

    let prompts = c.list_all("prompts/list", "prompts").await.unwrap();
    assert_eq!(
        prompts[0]["arguments"],
        json!([{"name": "to", "required": true}, {"name": "tone", "required": false}])
    );
    let (r, _) = c
        .request(
            "prompts/get",
            json!({"name": "letter", "arguments": {"to": "Ada"}}),
        )
        .await
        .unwrap();
    assert_eq!(r["messages"][0]["content"]["text"], "A warm letter to Ada.");
    let (r, _) = c
        .request(
            "prompts/get",
            json!({"name": "letter", "arguments": {"to": "Ada", "tone": "dry"}}),
        )
        .await
        .unwrap();
    assert_eq!(r["messages"][0]["content"]["text"], "A dry letter to Ada.");
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Origin {
    x: f32,
}

/// Scales by a factor.
#[mcp_runtime::tool]
async fn scale(
    factor: f32,
    offsets: Option<Vec<f32>>,
    weight: f64,
    origin: Option<Origin>,
) -> String {
    format!("{factor} {offsets:?} {weight} {:?}", origin.map(|o| o.x))
}

#[tokio::test]
async fn an_f32_beyond_its_range_is_refused_not_made_infinite() {
    let c = TestClient::new(
        Server::builder("floats", "1")
            .tools(mcp_runtime::tools![scale])
            .build()
            .unwrap(),
    );
    let tools = c.list_all("tools/list", "tools").await.unwrap();
    let p = &tools[0]["inputSchema"]["properties"];
    // `f32::MAX` as written: what a client echoes back.
    let max: f64 = f32::MAX.to_string().parse().unwrap();
    assert_eq!(p["factor"]["maximum"], max, "{p}");
    assert_eq!(p["factor"]["minimum"], -max, "{p}");
    assert_eq!(p["offsets"]["items"]["maximum"], max, "{p}");
    assert!(p["weight"].get("maximum").is_none(), "{p}");
    let defs = &tools[0]["inputSchema"]["$defs"];
    assert_eq!(defs["Origin"]["properties"]["x"]["maximum"], max, "{defs}");

    let ok = c
        .call_tool(
            "scale",
            json!({"factor": 3.4028235e38, "offsets": [-3.4028235e38], "weight": 1e300}),
        )
        .await
        .unwrap();
    assert!(!ok.is_error(), "{}", ok.result);
    for args in [
        json!({"factor": 1e300, "weight": 1}),
        json!({"factor": -1e39, "weight": 1}),
        json!({"factor": 1, "offsets": [0, 1e39], "weight": 1}),
        json!({"factor": 1, "weight": 1, "origin": {"x": 1e39}}),
    ] {
        let out = c.call_tool("scale", args.clone()).await.unwrap();
        assert!(out.is_error(), "{args}: {}", out.result);
        assert!(!out.text().contains("inf"), "{args}: {}", out.text());
    }
}

fn greeting() -> String {
    "hello".into()
}

/// A default that calls a function another parameter's name would hide in the handler.
#[mcp_runtime::tool]
async fn salute(greeting: Option<String>, #[arg(default = greeting())] fallback: String) -> String {
    format!("{} {fallback}", greeting.unwrap_or_default())
}

#[derive(Debug, serde::Deserialize)]
enum Tone {
    Warm,
    Dry,
}

/// A prompt argument's default needs no `Serialize`: nothing shows it.
#[prompt]
async fn note_to(to: String, #[arg(default = Tone::Warm)] tone: Tone) -> String {
    format!("{tone:?} note to {to}")
}

#[tokio::test]
async fn a_default_sees_what_the_schema_saw_and_prompt_defaults_need_no_serialize() {
    let c = TestClient::new(
        Server::builder("defaults", "1")
            .tools(mcp_runtime::tools![salute])
            .prompts(prompts![note_to])
            .build()
            .unwrap(),
    );
    let tools = c.list_all("tools/list", "tools").await.unwrap();
    assert_eq!(
        tools[0]["inputSchema"]["properties"]["fallback"]["default"],
        "hello"
    );
    let out = c
        .call_tool("salute", json!({"greeting": "hi"}))
        .await
        .unwrap();
    assert_eq!(out.text(), "hi hello", "{}", out.result);
    let (r, _) = c
        .request(
            "prompts/get",
            json!({"name": "note_to", "arguments": {"to": "Ada"}}),
        )
        .await
        .unwrap();
    assert_eq!(r["messages"][0]["content"]["text"], "Warm note to Ada");
    let _ = Tone::Dry;
}

#[derive(Debug, serde::Deserialize)]
struct Depth {
    depth: u32,
}

/// A struct argument: its value is JSON text.
#[prompt]
async fn review_to(path: String, opts: Option<Depth>) -> String {
    format!("review {path} to depth {}", opts.map_or(1, |o| o.depth))
}

/// A struct variable: the URI's value is JSON text, percent-encoded.
#[resource("probe://{at}")]
async fn probe(at: Depth) -> String {
    format!("at {}", at.depth)
}

#[tokio::test]
async fn a_struct_argument_or_variable_reads_json_text() {
    let c = TestClient::new(
        Server::builder("structs", "1")
            .prompts(prompts![review_to])
            .resources(resources![probe])
            .build()
            .unwrap(),
    );
    let get = |arguments: serde_json::Value| {
        c.request(
            "prompts/get",
            json!({"name": "review_to", "arguments": arguments}),
        )
    };
    let (r, _) = get(json!({"path": "a.rs", "opts": "{\"depth\": 2}"}))
        .await
        .unwrap();
    assert_eq!(
        r["messages"][0]["content"]["text"],
        "review a.rs to depth 2"
    );
    let (r, _) = get(json!({"path": "a.rs"})).await.unwrap();
    assert_eq!(
        r["messages"][0]["content"]["text"],
        "review a.rs to depth 1"
    );
    // Not JSON, or a member of the wrong type: -32602 naming the argument.
    for opts in [
        "depth=2",
        "{\"depth\": \"2\"}",
        "{\"depth\": 1, \"depth\": 2}",
    ] {
        let e = get(json!({"path": "a.rs", "opts": opts}))
            .await
            .unwrap_err();
        assert_eq!(e.code, -32602, "{opts}: {e:?}");
        assert!(e.message.contains("opts"), "{opts}: {e:?}");
    }
    let text = c
        .read_resource("probe://%7B%22depth%22%3A5%7D")
        .await
        .unwrap()
        .text();
    assert_eq!(text, "at 5");
    let e = c.read_resource("probe://5").await.unwrap_err();
    assert_eq!(e.code, -32602, "{e:?}");
}

/// Whatever a shelf holds under `name`: nothing, whatever the name.
#[resource("shelf://{name}")]
async fn shelf(name: String) -> Vec<mcp_runtime::ResourceContents> {
    let _ = name;
    Vec::new()
}

/// A resource handler that returns no contents is answered as a missing resource (never
/// with an empty `contents`, RES-07), in each era's code; a URI too long to serve is
/// refused as too long.
#[tokio::test]
async fn no_contents_is_a_missing_resource() {
    let build = || {
        Server::builder("shelves", "1")
            .resources(resources![shelf])
            .build()
            .unwrap()
    };
    let e = TestClient::new(build())
        .read_resource("shelf://top")
        .await
        .unwrap_err();
    assert_eq!(e.code, -32602, "{}", e.message);
    assert_eq!(e.message, "Resource not found: shelf://top");
    assert_eq!(e.data.unwrap()["uri"], "shelf://top");
    let e = TestClient::legacy(build())
        .read_resource("shelf://top")
        .await
        .unwrap_err();
    assert_eq!(e.code, -32002, "{}", e.message);
    // A URI past 8 KiB is refused as such, not echoed back in `data.uri`.
    let long = format!("shelf://{}", "x".repeat(9000));
    let e = TestClient::new(build())
        .read_resource(&long)
        .await
        .unwrap_err();
    assert_eq!(e.code, -32602, "{}", e.message);
    assert_eq!(
        e.message,
        "the URI is 9008 bytes long; a resource URI may have at most 8192 (8 KiB)"
    );
    assert!(e.data.is_none());
}
