//! `x-mcp-header` over real HTTP, and JSON Schema 2020-12 input schemas.

mod common;

use common::*;
use mcp_runtime::def::ToolDef;
use mcp_runtime::protocol::headers::client_headers;
use mcp_runtime::{Arguments, Server, tool, tools};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::OnceLock;

/// Queries orders in a region.
#[tool]
async fn query_orders(
    #[arg(header = "Region")] region: String,
    #[arg(header = "Limit")] limit: Option<i32>,
    #[arg(header = "DryRun")] dry_run: Option<bool>,
    #[arg(header = "City")] city: Option<String>,
    filter: Option<String>,
) -> String {
    format!("{region}|{limit:?}|{dry_run:?}|{city:?}|{filter:?}")
}

/// Validates with a rich hand-written schema.
#[tool(input_schema = r#"{"type":"object","properties":{
    "code":{"type":"string","pattern":"^[A-Z]{3}-[0-9]+$"},
    "tags":{"type":"array","items":{"type":"string"},"uniqueItems":true,"maxItems":3},
    "size":{"enum":["s","m","l"]},
    "n":{"type":"integer","minimum":1,"maximum":10},
    "slow":{"type":"string","pattern":"^(a|a)*$"}
  },"required":["code"],"oneOf":[{"required":["size"]},{"required":["n"]}],"additionalProperties":false}"#)]
async fn strict(args: Arguments) -> String {
    Value::Object(args.0).to_string()
}

fn addr() -> SocketAddr {
    static ADDR: OnceLock<SocketAddr> = OnceLock::new();
    *ADDR.get_or_init(|| {
        let server = Server::builder("headers-test", "1.0")
            .tools(tools![query_orders, strict])
            .build()
            .unwrap();
        serve_in_background(server.http())
    })
}

fn tool_def(name: &str) -> Value {
    let v = post(addr(), &request(json!(1), "tools/list", json!({}))).json();
    v["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap()
        .clone()
}

/// Calls `query_orders` with `args`, sending the headers a conforming client would, then
/// applying `edit` to them.
fn call_with(args: Value, edit: impl FnOnce(&mut Vec<(String, String)>)) -> Response {
    let body = request(
        json!(7),
        "tools/call",
        json!({"name": "query_orders", "arguments": args.clone()}),
    );
    let mut mirrored = client_headers(&tool_def("query_orders"), &args);
    edit(&mut mirrored);
    let extra: Vec<(&str, &str)> = mirrored
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    post_with(addr(), &body, &[], &extra)
}

fn ok_text(r: &Response) -> String {
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    assert!(v.get("error").is_none(), "{v}");
    v["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn mismatch(r: &Response) {
    assert_eq!(r.status, 400, "{}", r.text());
    assert_eq!(r.json()["error"]["code"], -32020, "{}", r.text());
}

#[test]
fn the_schema_carries_the_annotations() {
    let t = tool_def("query_orders");
    assert_eq!(
        t["inputSchema"]["properties"]["region"]["x-mcp-header"],
        "Region"
    );
    assert_eq!(
        t["inputSchema"]["properties"]["limit"]["x-mcp-header"],
        "Limit"
    );
    assert!(
        t["inputSchema"]["properties"]["filter"]
            .get("x-mcp-header")
            .is_none()
    );
}

#[test]
fn optional_mirrored_parameters_have_one_primitive_type() {
    // Clients drop a tool whose mirrored property has a list of types (`["integer",
    // "null"]`); optional means "not required".
    let t = tool_def("query_orders");
    let props = &t["inputSchema"]["properties"];
    assert_eq!(props["limit"]["type"], "integer");
    assert_eq!(props["dry_run"]["type"], "boolean");
    assert_eq!(props["city"]["type"], "string");
    let required = t["inputSchema"]["required"].as_array().unwrap();
    assert_eq!(required, &[json!("region")]);
    // Not mirrored: schemars' nullable form stays.
    assert_eq!(props["filter"]["type"], json!(["string", "null"]));
}

#[test]
fn a_null_mirrored_argument_means_absent() {
    // No header for a null argument, and the argument is left out before validation.
    let r = call_with(json!({"region": "x", "limit": null, "city": null}), |_| {});
    assert_eq!(ok_text(&r), "x|None|None|None|None");
    // A header for it disagrees with the body.
    let r = call_with(json!({"region": "x", "limit": null}), |h| {
        h.push(("Mcp-Param-Limit".into(), "5".into()))
    });
    mismatch(&r);
}

#[test]
fn conforming_headers_are_accepted() {
    let args = json!({"region": " eu-west1 ", "limit": 50, "dry_run": false, "city": "Zürich"});
    let h = client_headers(&tool_def("query_orders"), &args);
    assert!(h.contains(&("Mcp-Param-City".into(), "=?base64?WsO8cmljaA==?=".into())));
    assert!(h.contains(&(
        "Mcp-Param-Region".into(),
        "=?base64?IGV1LXdlc3QxIA==?=".into()
    )));
    assert_eq!(
        ok_text(&call_with(args, |_| {})),
        " eu-west1 |Some(50)|Some(false)|Some(\"Zürich\")|None"
    );
    // A value that looks like the sentinel is sent encoded, and decodes back to itself.
    let args = json!({"region": "=?base64?SGk=?="});
    assert_eq!(
        ok_text(&call_with(args, |_| {})),
        "=?base64?SGk=?=|None|None|None|None"
    );
    // 42.0 equals 42; names are case-insensitive.
    let r = call_with(json!({"region": "x", "limit": 42}), |h| {
        h.retain(|(k, _)| k != "Mcp-Param-Limit");
        h.push(("mcp-param-limit".into(), "42.0".into()));
    });
    assert_eq!(ok_text(&r), "x|Some(42)|None|None|None");
    // Unknown Mcp-Param-* headers are ignored.
    let r = call_with(json!({"region": "x"}), |h| {
        h.push(("Mcp-Param-Other".into(), "1".into()))
    });
    ok_text(&r);
}

#[test]
fn disagreeing_or_malformed_headers_are_400() {
    let base = || json!({"region": "us-east1", "limit": 5, "dry_run": true});
    mismatch(&call_with(base(), |h| {
        h.retain(|(k, _)| k != "Mcp-Param-Region")
    }));
    mismatch(&call_with(base(), |h| {
        h.iter_mut().for_each(|(k, v)| {
            if k == "Mcp-Param-Region" {
                *v = "us-west1".into()
            }
        })
    }));
    mismatch(&call_with(base(), |h| {
        h.push(("Mcp-Param-Region".into(), "us-east1".into()))
    }));
    mismatch(&call_with(base(), |h| {
        h.iter_mut().for_each(|(k, v)| {
            if k == "Mcp-Param-Limit" {
                *v = "6".into()
            }
        })
    }));
    mismatch(&call_with(base(), |h| {
        h.iter_mut().for_each(|(k, v)| {
            if k == "Mcp-Param-Limit" {
                *v = "5e0".into()
            }
        })
    }));
    mismatch(&call_with(base(), |h| {
        h.iter_mut().for_each(|(k, v)| {
            if k == "Mcp-Param-DryRun" {
                *v = "True".into()
            }
        })
    }));
    mismatch(&call_with(base(), |h| {
        h.iter_mut().for_each(|(k, v)| {
            if k == "Mcp-Param-Region" {
                *v = "=?base64?dXMtZWFzdDE?=".into()
            }
        })
    }));
    mismatch(&call_with(base(), |h| {
        h.iter_mut().for_each(|(k, v)| {
            if k == "Mcp-Param-Region" {
                *v = "=?base64?dXMt!!!ZWFzdDE=?=".into()
            }
        })
    }));
    // A header for an argument that is absent or null.
    mismatch(&call_with(json!({"region": "x", "city": null}), |h| {
        h.push(("Mcp-Param-City".into(), "x".into()))
    }));
    // Raw non-ASCII in a header value.
    let body = request(
        json!(7),
        "tools/call",
        json!({"name": "query_orders", "arguments": {"region": "Zürich"}}),
    );
    let mut req = String::from_utf8(post_bytes(
        addr(),
        body.to_string().as_bytes(),
        &[
            ("Content-Type", "application/json"),
            ("MCP-Protocol-Version", VERSION),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "query_orders"),
        ],
    ))
    .unwrap();
    req = req.replacen("\r\n\r\n", "\r\nMcp-Param-Region: Zürich\r\n\r\n", 1);
    mismatch(&raw(addr(), req.as_bytes()));
}

#[test]
fn integers_beyond_two_to_the_53_are_refused() {
    // 2^53+1 cannot travel exactly through every JSON stack.
    let body = request(
        json!(7),
        "tools/call",
        json!({"name": "query_orders", "arguments": {"region": "x", "limit": 9007199254740993u64}}),
    );
    let r = post_with(
        addr(),
        &body,
        &[],
        &[
            ("Mcp-Param-Region", "x"),
            ("Mcp-Param-Limit", "9007199254740993"),
        ],
    );
    mismatch(&r);
}

#[test]
fn stdio_ignores_the_annotations() {
    // The in-process transport used by stdio has no header layer: the same call succeeds.
    let server = Server::builder("x", "1")
        .tools(tools![query_orders])
        .build()
        .unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let input = format!(
        "{}\n",
        request(
            json!(1),
            "tools/call",
            json!({"name": "query_orders", "arguments": {"region": "r"}})
        )
    );
    let mut out = Vec::new();
    rt.block_on(async {
        let (mut client, server_io) = tokio::io::duplex(1 << 16);
        let (r, w) = tokio::io::split(server_io);
        let task = tokio::spawn(server.serve_io(r, w, std::future::pending()));
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        client.write_all(input.as_bytes()).await.unwrap();
        client.shutdown().await.unwrap();
        client.read_to_end(&mut out).await.unwrap();
        task.await.unwrap().unwrap();
    });
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["result"]["content"][0]["text"], "r|None|None|None|None");
}

#[test]
fn hand_written_schemas_are_served_as_written_and_enforced() {
    let t = tool_def("strict");
    // Key order as written (not sorted), whitespace removed.
    let listed = post(addr(), &request(json!(1), "tools/list", json!({}))).text();
    assert!(listed.contains(r#""inputSchema":{"type":"object","properties":{"code":{"type":"string","pattern":"^[A-Z]{3}-[0-9]+$"}"#), "{listed}");
    assert_eq!(t["inputSchema"]["oneOf"].as_array().unwrap().len(), 2);

    let call = |args: Value| {
        post(
            addr(),
            &request(
                json!(2),
                "tools/call",
                json!({"name": "strict", "arguments": args}),
            ),
        )
        .json()
    };
    assert!(
        call(json!({"code": "ABC-1", "size": "m"}))["result"]
            .get("isError")
            .is_none()
    );
    for bad in [
        json!({"code": "abc-1", "size": "m"}),
        json!({"code": "ABC-1", "size": "xl"}),
        json!({"code": "ABC-1", "size": "m", "tags": ["a", "a"]}),
        json!({"code": "ABC-1", "n": 11}),
        json!({"code": "ABC-1", "size": "m", "n": 2}),
        json!({"code": "ABC-1"}),
        json!({"code": "ABC-1", "size": "m", "extra": 1}),
    ] {
        let v = call(bad.clone());
        assert_eq!(v["result"]["isError"], true, "{bad} → {v}");
    }
    // A pattern that backtracks catastrophically elsewhere is linear here.
    let hostile = format!("{}b", "a".repeat(50_000));
    let v = call(json!({"code": "ABC-1", "size": "m", "slow": hostile}));
    assert_eq!(v["result"]["isError"], true);
}

#[test]
fn invalid_annotations_and_remote_refs_refuse_to_start() {
    /// Takes anything.
    #[tool]
    async fn anything(args: Arguments) -> String {
        format!("{}", args.0.len())
    }
    let bad = |schema: Value| {
        Server::builder("x", "1")
            .tool(anything::__mcp_tool().input_schema(schema))
            .build()
            .unwrap_err()
            .to_string()
    };
    let e = bad(
        json!({"type": "object", "properties": {"score": {"type": "number", "x-mcp-header": "Score"}}}),
    );
    assert!(e.contains("number"), "{e}");
    let e = bad(
        json!({"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "A"}, "b": {"type": "string", "x-mcp-header": "a"}}}),
    );
    assert!(e.contains("twice"), "{e}");
    let e = bad(
        json!({"type": "object", "properties": {"a": {"type": ["string", "null"], "x-mcp-header": "A"}}}),
    );
    assert!(e.contains("one primitive `type`"), "{e}");
    let e = bad(
        json!({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}}}),
    );
    assert!(e.contains("not on a property"), "{e}");
    let e = bad(
        json!({"type": "object", "properties": {"p": {"$ref": "https://example.com/schema.json"}}}),
    );
    assert!(e.contains("does not compile"), "{e}");
    let e = Server::builder("x", "1")
        .tool(anything::__mcp_tool().input_schema_json("{not json"))
        .build()
        .unwrap_err()
        .to_string();
    assert!(e.contains("not valid JSON"), "{e}");
    let _: fn() -> ToolDef = anything::__mcp_tool;
}

#[test]
fn references_can_be_inlined() {
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Address {
        city: String,
    }
    /// Uses $defs.
    #[tool]
    async fn with_refs(address: Address) -> String {
        address.city
    }
    /// Inlines them.
    #[tool(inline_refs)]
    async fn inlined(address: Address) -> String {
        address.city
    }
    let refs = with_refs::__mcp_tool().input_schema_value().clone();
    assert_eq!(refs["properties"]["address"]["$ref"], "#/$defs/Address");
    assert!(refs["$defs"]["Address"].is_object());
    let inl = inlined::__mcp_tool().input_schema_value().clone();
    assert_eq!(
        inl["properties"]["address"]["properties"]["city"]["type"],
        "string"
    );
    assert!(inl.get("$defs").is_none());
}
