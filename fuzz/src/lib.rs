//! Fuzz targets: each parser of `mcp-runtime` that sees untrusted bytes, as a function of
//! a byte slice that must return without panicking. The driver (`src/main.rs`) feeds them
//! mutated inputs on stable Rust; `tests/regressions.rs` replays every input kept under
//! `regressions/<target>/`.

use mcp_runtime::fuzz;
use mcp_runtime::{Error, Input, Server, resource, resources, tool, tools};
use std::sync::OnceLock;

/// Adds two numbers.
#[tool]
async fn add(a: i64, b: Option<i64>) -> String {
    (a + b.unwrap_or(0)).to_string()
}

#[derive(serde::Deserialize, schemars::JsonSchema, mcp_runtime::Form)]
struct Name {
    name: String,
}

/// Asks a name.
#[tool]
async fn ask(input: Input) -> Result<String, Error> {
    let n: Name = input.elicit("n", "Name?").await?.accepted()?;
    Ok(n.name)
}

/// Routes by region.
#[tool]
async fn routed(#[arg(header = "Region")] region: String, n: Option<i32>) -> String {
    format!("{region}{n:?}")
}

/// A file by path.
#[resource("files:///{+path}")]
async fn file(path: mcp_runtime::SafePath) -> String {
    path.as_path().display().to_string()
}

/// The targets, by name.
pub const TARGETS: &[&str] = &[
    "message",
    "header_value",
    "uri_template",
    "request_state",
    "stdio_lines",
    "schema",
    "http_head",
];

struct World {
    server: Server,
    runtime: tokio::runtime::Runtime,
}

fn world() -> &'static World {
    static WORLD: OnceLock<World> = OnceLock::new();
    WORLD.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let server = Server::builder("fuzz", "1.0")
            .tools(tools![add, ask, routed])
            .resources(resources![file])
            .request_state(mcp_runtime::config::RequestState::single_instance())
            .build()
            .expect("a server");
        World { server, runtime }
    })
}

/// Runs target `name` on `data` and returns its outcome signal (inputs that took
/// different paths give different signals); `None` for an unknown target.
pub fn run(name: &str, data: &[u8]) -> Option<u64> {
    Some(match name {
        "message" => {
            let w = world();
            let _guard = w.runtime.enter();
            fuzz::message(&w.server, &w.runtime, data)
        }
        "header_value" => fuzz::header_value(data),
        "uri_template" => fuzz::uri_template(data),
        "request_state" => fuzz::request_state(data),
        "stdio_lines" => fuzz::stdio_lines(&world().runtime, data),
        "schema" => fuzz::schema(data),
        "http_head" => fuzz::http_head(data),
        _ => return None,
    })
}

/// Seed inputs for a target: valid and nearly valid examples to mutate from.
pub fn seeds(name: &str) -> Vec<Vec<u8>> {
    let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}"#;
    let s: Vec<String> = match name {
        "message" => vec![
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"add","arguments":{{"a":1,"b":2}},{meta}}}}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":"x","method":"tools/list","params":{{"cursor":"YWZ0ZXI6YQ",{meta}}}}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"ask","inputResponses":{{"n":{{"action":"accept","content":{{"name":"a"}}}}}},"requestState":"v1.k1.AAAA",{meta}}}}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{{"uri":"files:///a/%2e%2e/b",{meta}}}}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":4,"method":"completion/complete","params":{{"ref":{{"type":"ref/resource","uri":"files:///{{+path}}"}},"argument":{{"name":"path","value":"a"}},{meta}}}}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":5,"method":"subscriptions/listen","params":{{"notifications":{{"toolsListChanged":true}},{meta}}}}}"#),
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#.into(),
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#.into(),
        ],
        "header_value" => vec![
            "=?base64?WsO8cmljaA==?=\n\"Zürich\"".into(),
            "42\n42".into(),
            "true\ntrue".into(),
            "=?base64?SGVsbG8?=\n\"Hello\"".into(),
            " eu-west \n\"eu-west\"".into(),
        ],
        "uri_template" => vec![
            "files:///{+path}\nfiles:///a/b/c".into(),
            "notes://{id}{?format,lang}\nnotes://42?format=md&lang=en".into(),
            "src://tree{/path*}\nsrc://tree/a/b".into(),
            "n://{ids*}\nn://1,2,3".into(),
            "x://{.ext*}\nx://.a.b".into(),
            "n://{ids}{?tags}\nn://a%2Cb,c?tags=x,y%2Cz".into(),
            "s://items{?q}{&tag*}\ns://items?tag=a&q=1&tag=b%26c".into(),
            "m://x{;m*}{#f}\nm://x;m=1;m;m=%3B#".into(),
            "l://d{/ids}{.e}{;p}{?q}\nl://d/a,b%2Cc.x,y;p=1,,2?q=3,4".into(),
        ],
        "request_state" => vec![
            "v1.k1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n{\"n\":{\"action\":\"accept\"}}".into(),
            "v1.ephemeral.\n{}".into(),
            "garbage\n[]".into(),
        ],
        "stdio_lines" => vec![
            "{\"a\":1}\n\r\n\n".into(),
            format!("{}\nshort\n", "x".repeat(100)),
            "no newline at the end".into(),
        ],
        "http_head" => vec![
            "POST /mcp HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n".into(),
            "\r\nGET / HTTP/1.1\nTransfer-Encoding: chunked\nX: content-length:\n\n".into(),
            "M-SEARCH * HTTP/1.1\r\ncontent-length: 0\r\n\r\n{\"a\":1}".into(),
        ],
        "schema" => vec![
            r##"{"type":"object","properties":{"a":{"type":"integer","minimum":1}},"required":["a"],"additionalProperties":false}
{"a":0,"b":1}"##.into(),
            r##"{"$defs":{"t":{"type":"array","items":{"$ref":"#/$defs/t"}}},"$ref":"#/$defs/t"}
[[[]],[[[1]]]]"##.into(),
            r##"{"anyOf":[{"properties":{"a":true}}],"unevaluatedProperties":false,"pattern":"^a+$"}
{"a":1,"b":2}"##.into(),
            r##"{"prefixItems":[{"const":1.0}],"contains":{"enum":["x",[1]]},"maxContains":1,"uniqueItems":true}
[1,"x",[1]]"##.into(),
            r##"{"$schema":"http://json-schema.org/draft-04/schema#","maximum":3,"exclusiveMaximum":true,"multipleOf":0.5}
2.5"##.into(),
            r##"{"if":{"type":"string"},"then":{"minLength":2},"else":{"not":{"type":"null"}},"dependentSchemas":{"a":{"required":["b"]}}}
"é""##.into(),
        ],
        _ => vec![],
    };
    s.into_iter().map(String::into_bytes).collect()
}

/// Tokens worth splicing into inputs of any target.
pub const DICTIONARY: &[&str] = &[
    "\"jsonrpc\":\"2.0\"",
    "\"id\":",
    "\"method\":",
    "\"params\":",
    "\"_meta\":",
    "\"result\":",
    "\"error\":",
    "null",
    "true",
    "false",
    "[]",
    "{}",
    "\"\"",
    "-1",
    "1e999",
    "18446744073709551616",
    "\\u0000",
    "\\ud800",
    "%2e%2e",
    "..",
    "/",
    "{+",
    "{?",
    "*}",
    "=?base64?",
    "?=",
    "\n",
    "\r",
    "\u{fffd}",
    "tools/call",
    "tasks/get",
    "initialize",
    "\"inputResponses\":",
    "\"requestState\":",
    "\"$ref\":\"#\"",
    "\"anyOf\":[",
    "\"properties\":{",
    "\"items\":",
    "\"unevaluatedProperties\":false",
    "\"type\":\"integer\"",
];
