//! MCP Apps and extensions over real HTTP: a tool with a view and the `ui://` view itself,
//! their `_meta.ui` validated against the JSON Schema the official
//! `@modelcontextprotocol/ext-apps` package ships (pinned in `tests/clients`), the text
//! fallback, the extension in `server/discover` and `initialize`, build errors for a view
//! that is not served, mounted views, and a declared extension that gates a tool.
//!
//! The schema comes from `tests/clients/node_modules` (`tests/clients/setup.sh`); without
//! it the schema checks skip, unless `MCP_REAL_CLIENTS=required` (set by `.ci/run`).

mod common;

use common::{post, post_bytes, raw, request};
use mcp_runtime::{CallToolResult, Context, Json, Server, resource, resources, tool, tools};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::path::PathBuf;

/// Shows the forecast.
#[tool(ui = "ui://weather/view.html")]
async fn weather(city: String) -> String {
    format!("Sunny in {city}")
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Point {
    x: i32,
    y: i32,
}

/// Charts points (structured output only: the text comes from the fallback).
#[tool(ui = "ui://weather/view.html")]
async fn chart() -> CallToolResult {
    CallToolResult {
        structured_content: Some(json!({"points": [[1, 2]]})),
        ..Default::default()
    }
}

/// Plots a point.
#[tool]
async fn plot() -> Json<Point> {
    Json(Point { x: 1, y: 2 })
}

/// The forecast view.
#[resource(
    "ui://weather/view.html",
    app(
        prefers_border = true,
        connect_domains("https://api.weather.example"),
        resource_domains("https://cdn.weather.example"),
        permissions(geolocation, clipboard_write)
    )
)]
async fn weather_view() -> &'static str {
    "<!doctype html><title>Weather</title><p id=forecast></p>"
}

/// A plain page, not a view.
#[resource("ui://weather/plain.html")]
async fn plain() -> &'static str {
    "<p>plain"
}

/// Says which audit level the client asked for.
#[tool]
async fn audited(cx: Context) -> String {
    cx.client_extension("com.example/audit")
        .map_or("none".into(), |v| v["level"].to_string())
}

fn server() -> Server {
    let audited_def = audited::__mcp_tool().requires_extension("com.example/audit");
    Server::builder("apps", "1.0")
        .tools(tools![weather, chart, plot])
        .tool(audited_def)
        .resources(resources![weather_view, plain])
        .extension("com.example/audit", json!({"levels": [1, 2]}))
        .build()
        .unwrap()
}

fn schema_file() -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(
        "tests/clients/node_modules/@modelcontextprotocol/ext-apps/dist/src/generated/schema.json",
    );
    if p.exists() {
        return Some(p);
    }
    assert!(
        std::env::var("MCP_REAL_CLIENTS").as_deref() != Ok("required"),
        "MCP_REAL_CLIENTS=required but {} is missing: run tests/clients/setup.sh",
        p.display()
    );
    eprintln!(
        "skipped the ext-apps schema checks: {} is missing",
        p.display()
    );
    None
}

/// Validates `value` against definition `def` of the ext-apps schema.
fn valid(schema: &Value, def: &str, value: &Value) -> Result<(), String> {
    let defs = schema
        .get("$defs")
        .or_else(|| schema.get("definitions"))
        .unwrap();
    let root = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$ref": format!("#/$defs/{def}"),
        "$defs": defs,
    });
    let v = jsonschema::validator_for(&root).map_err(|e| e.to_string())?;
    let errors: Vec<String> = v.iter_errors(value).map(|e| e.to_string()).collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(format!("{value} is not a valid {def}: {errors:?}"))
    }
}

fn list(addr: SocketAddr, method: &str) -> Value {
    post(addr, &request(json!(1), method, json!({}))).json()["result"].clone()
}

#[test]
fn tools_with_views_and_views_follow_the_ext_apps_schema() {
    let addr = common::serve_in_background(server().http());
    let tools = list(addr, "tools/list");
    let tool = |name: &str| {
        tools["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .cloned()
            .unwrap()
    };
    let ui = tool("weather")["_meta"]["ui"].clone();
    assert_eq!(ui, json!({"resourceUri": "ui://weather/view.html"}));
    assert!(tool("plot")["_meta"].get("ui").is_none());

    let resources = list(addr, "resources/list");
    let view = resources["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["uri"] == "ui://weather/view.html")
        .cloned()
        .unwrap();
    assert_eq!(view["mimeType"], "text/html;profile=mcp-app");
    let view_ui = view["_meta"]["ui"].clone();
    assert_eq!(view_ui["prefersBorder"], true);
    assert_eq!(
        view_ui["csp"]["connectDomains"],
        json!(["https://api.weather.example"])
    );
    assert_eq!(
        view_ui["permissions"],
        json!({"geolocation": {}, "clipboardWrite": {}})
    );

    let read = post(
        addr,
        &request(
            json!(2),
            "resources/read",
            json!({"uri": "ui://weather/view.html"}),
        ),
    )
    .json();
    let contents = &read["result"]["contents"][0];
    assert_eq!(contents["mimeType"], "text/html;profile=mcp-app", "{read}");
    assert!(
        contents["text"]
            .as_str()
            .unwrap()
            .starts_with("<!doctype html>")
    );
    assert_eq!(contents["_meta"]["ui"], view_ui);

    // The text fallback: a result without text gets its structured content as text.
    let r = post(
        addr,
        &request(
            json!(3),
            "tools/call",
            json!({"name": "chart", "arguments": {}}),
        ),
    )
    .json();
    assert_eq!(r["result"]["content"][0]["type"], "text", "{r}");
    assert_eq!(r["result"]["content"][0]["text"], r#"{"points":[[1,2]]}"#);
    let r = post(
        addr,
        &request(
            json!(4),
            "tools/call",
            json!({"name": "weather", "arguments": {"city": "Oslo"}}),
        ),
    )
    .json();
    assert_eq!(
        r["result"]["content"],
        json!([{"type": "text", "text": "Sunny in Oslo"}])
    );

    // The extension is declared, beside the server's own declared one, in both eras.
    let d = list(addr, "server/discover");
    let ext = &d["capabilities"]["extensions"];
    assert!(ext["io.modelcontextprotocol/ui"].is_object(), "{d}");
    assert_eq!(ext["com.example/audit"], json!({"levels": [1, 2]}));
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "host", "version": "1"}}});
    let r = raw(
        addr,
        &post_bytes(
            addr,
            init.to_string().as_bytes(),
            &[
                ("Content-Type", "application/json"),
                ("Accept", "application/json, text/event-stream"),
            ],
        ),
    );
    let caps = &r.json()["result"]["capabilities"];
    assert!(
        caps["extensions"]["io.modelcontextprotocol/ui"].is_object(),
        "{}",
        r.text()
    );

    let Some(path) = schema_file() else { return };
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    valid(&schema, "McpUiToolMeta", &ui).unwrap();
    valid(&schema, "McpUiResourceMeta", &view_ui).unwrap();
    valid(&schema, "McpUiResourceMeta", &contents["_meta"]["ui"]).unwrap();
    // The schema has teeth: what it refuses is refused.
    assert!(
        valid(
            &schema,
            "McpUiResourceMeta",
            &json!({"permissions": {"camera": true}})
        )
        .is_err()
    );
    assert!(valid(&schema, "McpUiToolMeta", &json!({"resourceUri": 1})).is_err());
}

#[test]
fn a_declared_extension_gates_a_tool_and_reaches_its_handler() {
    let addr = common::serve_in_background(server().http());
    let call = |caps: Value| {
        let mut body = request(
            json!(5),
            "tools/call",
            json!({"name": "audited", "arguments": {}}),
        );
        body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = caps;
        post(addr, &body).json()
    };
    let e = call(json!({}));
    assert_eq!(e["error"]["code"], -32021, "{e}");
    assert!(
        e["error"]["data"]["requiredCapabilities"]["extensions"]["com.example/audit"].is_object()
    );
    let ok = call(json!({"extensions": {"com.example/audit": {"level": 2}}}));
    assert_eq!(ok["result"]["content"][0]["text"], "2", "{ok}");
}

#[test]
fn a_view_the_server_does_not_serve_is_a_build_error() {
    let e = Server::builder("x", "1.0")
        .tools(tools![weather])
        .build()
        .unwrap_err()
        .to_string();
    assert!(e.contains("tool `weather` shows the view `ui://weather/view.html`, which this server does not serve"), "{e}");

    /// Points at a page that is not a view.
    #[tool(ui = "ui://weather/plain.html")]
    async fn wrong() -> &'static str {
        "x"
    }
    let e = Server::builder("x", "1.0")
        .tools(tools![wrong])
        .resources(resources![plain])
        .build()
        .unwrap_err()
        .to_string();
    assert!(e.contains("not as an MCP App view"), "{e}");
}

#[test]
fn mounted_views_keep_the_ui_scheme_and_their_tools_follow() {
    let child = Server::builder("weather", "1.0")
        .tools(tools![weather])
        .resources(resources![weather_view]);
    let server = Server::builder("hub", "1.0")
        .mount("wx", child)
        .build()
        .unwrap();
    let addr = common::serve_in_background(server.http());
    let tools = list(addr, "tools/list");
    assert_eq!(tools["tools"][0]["name"], "wx_weather");
    assert_eq!(
        tools["tools"][0]["_meta"]["ui"]["resourceUri"],
        "ui://wx/weather/view.html"
    );
    let r = post(
        addr,
        &request(
            json!(6),
            "resources/read",
            json!({"uri": "ui://wx/weather/view.html"}),
        ),
    )
    .json();
    assert_eq!(
        r["result"]["contents"][0]["uri"], "ui://wx/weather/view.html",
        "{r}"
    );
}

/// A view served as bytes (`include_bytes!`).
#[resource("ui://weather/bytes.html", app(prefers_border = true))]
async fn bytes_view() -> &'static [u8] {
    b"<!doctype html><title>Bytes</title>"
}

/// A view whose handler makes its contents itself, with a plain HTML MIME type.
#[resource("ui://weather/own.html", app(prefers_border = true))]
async fn own_view() -> mcp_runtime::ResourceContents {
    mcp_runtime::ResourceContents::text("ui://weather/own.html", "text/html", "<p>own")
}

/// Every content of a view carries the view's MIME type and `_meta.ui`, whether the
/// handler gave text or bytes, and whatever MIME type it gave: a host reads the contents
/// as an app only by those. Before, bytes carried no `_meta.ui`, and contents a handler
/// made kept their own MIME type (`text/html`).
#[test]
fn every_content_of_a_view_is_the_view() {
    let server = Server::builder("apps", "1.0")
        .resources(resources![bytes_view, own_view])
        .build()
        .unwrap();
    let addr = common::serve_in_background(server.http());
    for uri in ["ui://weather/bytes.html", "ui://weather/own.html"] {
        let read = post(
            addr,
            &request(json!(1), "resources/read", json!({ "uri": uri })),
        )
        .json();
        let contents = &read["result"]["contents"][0];
        assert_eq!(contents["mimeType"], "text/html;profile=mcp-app", "{read}");
        assert_eq!(contents["_meta"]["ui"]["prefersBorder"], true, "{read}");
    }
}
