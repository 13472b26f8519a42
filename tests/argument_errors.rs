//! What a client reads when its arguments do not fit: over real HTTP, from JSON text as a
//! client writes it (numbers past 64 bits included, which a `serde_json::Value` built here
//! could not carry).

mod common;

use common::*;
use mcp_runtime::{Arguments, Server, tool, tools};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::OnceLock;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Inner {
    a: i64,
    tags: Vec<String>,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Outer {
    inner: Inner,
    list: Vec<Inner>,
}

/// Echoes what it was given.
#[tool]
async fn echo(n: i64, outer: Option<Outer>) -> String {
    let tags = outer.map_or(0, |o| {
        o.inner.a as usize + o.inner.tags.len() + o.list.len()
    });
    format!("{n} {tags}")
}

/// Adds two wide integers.
#[tool]
async fn wide(u: u64, i: i64) -> String {
    (i128::from(u) + i128::from(i)).to_string()
}

/// Adds a size and a 128-bit count.
#[tool]
async fn sizes(n: usize, big: u128, small: u16) -> String {
    (big + n as u128 + u128::from(small)).to_string()
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Pair {
    a: u64,
    b: u64,
}

/// Adds a pair and a list.
#[tool]
async fn pairs(p: Pair, list: Vec<u64>) -> String {
    (p.a + p.b + list.iter().sum::<u64>()).to_string()
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Loose {
    n: u32,
    #[allow(dead_code)]
    big: f64,
}

/// Takes any object as `s` (its schema says no more), read as a `u32` and an `f64`.
#[tool(
    input_schema = r#"{"type": "object", "properties": {"s": {"type": "object"}}, "required": ["s"]}"#
)]
async fn loose(s: Loose) -> String {
    s.n.to_string()
}

/// Says what it got, all the arguments first.
#[tool]
async fn all_first(args: Arguments, x: u8) -> String {
    format!("{} {x}", Value::Object(args.0))
}

/// Says what it got, all the arguments last.
#[tool]
async fn all_last(x: u8, args: Arguments) -> String {
    format!("{} {x}", Value::Object(args.0))
}

fn addr() -> SocketAddr {
    static ADDR: OnceLock<SocketAddr> = OnceLock::new();
    *ADDR.get_or_init(|| {
        let server = Server::builder("argument-errors", "0.0.1")
            .tools(tools![echo, wide, sizes, pairs, loose, all_first, all_last])
            .build()
            .unwrap();
        serve_in_background(server.http())
    })
}

/// `tools/call` of `name` with `arguments`, given as JSON text: the result object.
fn call(name: &str, arguments: &str) -> Value {
    let body = request(
        json!(1),
        "tools/call",
        json!({"name": name, "arguments": "ARGUMENTS"}),
    );
    let text = body.to_string().replace("\"ARGUMENTS\"", arguments);
    let headers = standard_headers(&body);
    let headers: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let a = addr();
    let response = raw(a, &post_bytes(a, text.as_bytes(), &headers));
    assert_eq!(response.status, 200, "{}", response.text());
    let v = response.json();
    assert!(v["result"].is_object(), "{v}");
    v["result"].clone()
}

/// The text of an `isError` result.
fn error_text(result: &Value) -> &str {
    assert_eq!(result["isError"], true, "{result}");
    result["content"][0]["text"].as_str().unwrap_or_default()
}

#[test]
fn a_nested_field_of_an_optional_struct_is_named() {
    let r = call(
        "echo",
        r#"{"n": 1, "outer": {"inner": {"a": "x", "tags": []}, "list": []}}"#,
    );
    assert_eq!(
        error_text(&r),
        r#"Invalid arguments for tool `echo`: `outer.inner.a`: "x" is not an integer"#
    );
    let r = call(
        "echo",
        r#"{"n": 1, "outer": {"inner": {"a": 1, "tags": []}, "list": [{"a": 2}]}}"#,
    );
    assert_eq!(
        error_text(&r),
        r#"Invalid arguments for tool `echo`: `outer.list.0`: the required property "tags" is missing"#
    );
    // What fits is called as ever.
    let r = call(
        "echo",
        r#"{"n": 1, "outer": {"inner": {"a": 1, "tags": ["t"]}, "list": []}}"#,
    );
    assert_ne!(r["isError"], true, "{r}");
    assert_eq!(r["content"][0]["text"], "1 2");
    assert_eq!(
        call("echo", r#"{"n": 1, "outer": null}"#)["content"][0]["text"],
        "1 0"
    );
}

#[test]
fn an_integer_past_64_bits_is_out_of_range_not_a_float() {
    let r = call("wide", r#"{"u": 18446744073709551616, "i": 0}"#);
    assert_eq!(
        error_text(&r),
        "Invalid arguments for tool `wide`: `u`: 18446744073709551616 is out of range for \
         uint64 (0 to 18446744073709551615)"
    );
    let r = call("wide", r#"{"u": 0, "i": -9223372036854775809}"#);
    assert_eq!(
        error_text(&r),
        "Invalid arguments for tool `wide`: `i`: the number is out of range for int64 \
         (-9223372036854775808 to 9223372036854775807)"
    );
    let r = call("wide", r#"{"u": 0, "i": 9223372036854775808}"#);
    assert_eq!(
        error_text(&r),
        "Invalid arguments for tool `wide`: `i`: 9223372036854775808 is out of range for \
         int64 (-9223372036854775808 to 9223372036854775807)"
    );
    // The bounds themselves fit.
    let r = call(
        "wide",
        r#"{"u": 18446744073709551615, "i": -9223372036854775808}"#,
    );
    assert_ne!(r["isError"], true, "{r}");
    assert_eq!(r["content"][0]["text"], "9223372036854775807");
}

/// `usize` and the 128-bit integers are ranges as `u64` is (a 128-bit one within the 64
/// bits JSON numbers carry here), and an integer written as a float of 2^53 or more is told
/// to be written in digits, not "invalid type: floating point".
#[test]
fn sizes_and_wide_floats_are_named_as_such() {
    for (args, text) in [
        (
            r#"{"n": 18446744073709551616, "big": 0, "small": 0}"#,
            "`n`: 18446744073709551616 is out of range for uint (0 to 18446744073709551615)",
        ),
        (
            r#"{"n": 0, "big": 18446744073709551616, "small": 0}"#,
            "`big`: 18446744073709551616 is out of range for uint128 (0 to \
             18446744073709551615 from JSON)",
        ),
        (
            r#"{"n": -1, "big": 0, "small": 0}"#,
            "`n`: -1 is less than 0",
        ),
    ] {
        let r = call("sizes", args);
        assert_eq!(
            error_text(&r),
            format!("Invalid arguments for tool `sizes`: {text}"),
            "{args}"
        );
    }
    let wide = "is written as a float of 2^53 or more, where a float stands for several \
                integers; write the integer's digits";
    // 2^53 itself is how 2^53 + 1 reads as a float: not taken for either.
    for (tool, args, name, number) in [
        (
            "sizes",
            r#"{"n": 1e19, "big": 0, "small": 0}"#,
            "n",
            "1e+19",
        ),
        (
            "sizes",
            r#"{"n": 9007199254740993.0, "big": 0, "small": 0}"#,
            "n",
            "9007199254740992.0",
        ),
        // Beside a float taken for its integer, the one that is not is named.
        (
            "pairs",
            r#"{"p": {"a": 3.0, "b": 1e19}, "list": []}"#,
            "p",
            "1e+19",
        ),
        (
            "pairs",
            r#"{"p": {"a": 1, "b": 2}, "list": [3.0, 1e19]}"#,
            "list",
            "1e+19",
        ),
    ] {
        let r = call(tool, args);
        assert_eq!(
            error_text(&r),
            format!("Invalid argument `{name}`: {number} {wide}"),
            "{args}"
        );
    }
    // A float refused for another reason is not said to be too large, even beside one
    // that is (this schema lets both through; serde refuses 2.5 for the u32).
    let r = call("loose", r#"{"s": {"n": 2.5, "big": 1e19}}"#);
    assert_eq!(
        error_text(&r),
        "Invalid argument `s`: invalid type: floating point `2.5`, expected u32"
    );
    let r = call(
        "pairs",
        r#"{"p": {"a": 3.0, "b": 9007199254740991.0}, "list": [2.0]}"#,
    );
    assert_ne!(r["isError"], true, "{r}");
    assert_eq!(r["content"][0]["text"], "9007199254740996");
    // Within range, in digits, or integral floats within 2^53: called.
    let r = call(
        "sizes",
        r#"{"n": 10000000000000000000, "big": 18446744073709551615, "small": 2.0}"#,
    );
    assert_ne!(r["isError"], true, "{r}");
    assert_eq!(r["content"][0]["text"], "28446744073709551617");
}

/// A typed parameter gets its argument whether `Arguments` comes before or after it;
/// `Arguments` holds what the parameters before it did not take.
#[test]
fn all_the_arguments_and_a_typed_one_in_either_order() {
    for (tool, text) in [("all_first", r#"{"x":7} 7"#), ("all_last", "{} 7")] {
        let r = call(tool, r#"{"x": 7}"#);
        assert_eq!(r["content"][0]["text"], text, "{tool}: {r}");
    }
}
