//! Entry points for the fuzz targets (`fuzz/`, feature `fuzzing`): each parser that sees
//! untrusted bytes, driven with arbitrary input. Not part of the API; hidden from docs.
//! Every function must return (any error is fine) and never panic or hang.
//!
//! Each returns an *outcome signal*: a number that differs between the paths an input took
//! (which error, with which message class; how far it got). The driver keeps inputs that
//! produce a signal it has not seen, a cheap stand-in for coverage feedback on stable Rust.

use crate::Server;
use crate::mrtr::KeyRing;
use crate::mrtr::round::{Binding, Round, Sealer};
use crate::protocol::ClientCapabilities;
use crate::protocol::json::parse_strict;
use crate::server::parts::{NoGuard, Streams};
use crate::server::route::Prepared;
use serde_json::{Map, Value};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;
use std::time::Duration;

/// A signal from a step number and a message: the message's first words, up to the first
/// character that usually starts echoed input (a quote, a digit, a colon), so inputs
/// differing only in what they echo share a signal.
fn signal(step: u64, text: &str) -> u64 {
    let class: String = text
        .chars()
        .take_while(|c| !matches!(c, '"' | '\'' | '`' | ':' | '(' | '0'..='9'))
        .take(48)
        .collect();
    let class: Vec<&str> = class.split_whitespace().take(3).collect();
    let mut h = DefaultHasher::new();
    step.hash(&mut h);
    class.hash(&mut h);
    h.finish()
}

fn reply_signal(step: u64, reply: &crate::server::reply::Reply) -> u64 {
    match &reply.rpc {
        Some(e) => signal(
            step * 100_000 + u64::from(e.1.code().get().unsigned_abs()),
            e.1.message(),
        ),
        None => {
            // A result: which of its shapes (tool error or not, kind of result).
            let shape = ["\"isError\":true", "input_required", "\"task\"", "contents"]
                .iter()
                .map(|k| if reply.body.contains(k) { 'y' } else { 'n' })
                .collect::<String>();
            signal(step + 100, &shape)
        }
    }
}

/// One JSON-RPC message through the whole request path: the strict parser, the envelope
/// and `_meta` rules, routing, and (for a request that runs) the handler, bounded in time.
pub fn message(server: &Server, runtime: &tokio::runtime::Runtime, bytes: &[u8]) -> u64 {
    let msg = match parse_strict(bytes) {
        Ok(m) => m,
        Err(e) => return signal(1, &e.to_string()),
    };
    match server.prepare(msg, &NoGuard, Streams::None) {
        Prepared::Reply(r) => reply_signal(2, &r),
        Prepared::Notification { method, .. } => {
            let known = ["notifications/cancelled", "notifications/initialized"];
            signal(
                3,
                if known.contains(&method.as_str()) {
                    &method
                } else {
                    ""
                },
            )
        }
        Prepared::Call(job) => runtime.block_on(async {
            match tokio::time::timeout(Duration::from_millis(200), job.run()).await {
                Ok(r) => reply_signal(4, &r),
                Err(_) => signal(5, "timeout"),
            }
        }),
        Prepared::Listen(_) => signal(6, ""),
        _ => signal(7, ""),
    }
}

/// Header values: the `=?base64?..?=` decoding and the `Mcp-Param-*` comparison for each
/// kind, against a JSON value from the input.
pub fn header_value(bytes: &[u8]) -> u64 {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return 1;
    };
    let (raw, rest) = text.split_once('\n').unwrap_or((text, ""));
    let mut out = u64::from(crate::protocol::headers::decode_header_value(raw).is_some()) << 1;
    if let Ok(v) = serde_json::from_str::<Value>(rest) {
        for (i, kind) in [
            crate::protocol::headers::HeaderKind::String,
            crate::protocol::headers::HeaderKind::Integer,
            crate::protocol::headers::HeaderKind::Boolean,
        ]
        .into_iter()
        .enumerate()
        {
            match crate::protocol::headers::header_matches(raw, kind, &v) {
                Ok(()) => out |= 1 << (2 + i),
                Err(e) => out ^= signal(i as u64, &e),
            }
        }
    }
    out
}

/// URI templates: parsing one, matching a URI against it, and `SafePath` on what binds.
/// A variable's value must be its list items joined by its separator.
pub fn uri_template(bytes: &[u8]) -> u64 {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return 1;
    };
    let (template, uri) = text.split_once('\n').unwrap_or((text, text));
    match mcp_uri_template::UriTemplate::parse(template) {
        Err(e) => signal(2, &e.to_string()),
        Ok(t) => {
            let mut out = signal(3, "") ^ u64::from(t.overlaps(&t));
            if let Some(vars) = t.captures(uri) {
                out ^= signal(4, "") ^ (vars.len() as u64);
                for (name, v) in &vars {
                    let sep = t.list_separator(name).to_string();
                    assert_eq!(v.value(), v.items().join(&sep), "`{name}` of {uri}");
                    out ^= v.items().len() as u64;
                    match crate::SafePath::new(v.value()) {
                        Ok(_) => out = out.rotate_left(1),
                        Err(e) => out ^= signal(5, &e.to_string()),
                    }
                }
            }
            out
        }
    }
}

/// `requestState`: opening an arbitrary state string (base64, AEAD, JSON), and a round
/// from arbitrary `inputResponses` with it.
pub fn request_state(bytes: &[u8]) -> u64 {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return 1;
    };
    let Ok(keys) = KeyRing::new([("k1", [7u8; 32])]) else {
        return 2;
    };
    let sealer = Arc::new(Sealer {
        audience: "fuzz".into(),
        keys: keys.into(),
        ttl: Duration::from_secs(60),
        leeway: Duration::ZERO,
        max_rounds: 10,
        replay: None,
    });
    let opened = u64::from(sealer.keys.ring().open(text).is_ok());
    let (state, responses) = text.split_once('\n').unwrap_or((text, "{}"));
    let mut params = Map::new();
    params.insert("requestState".into(), Value::String(state.to_owned()));
    if let Ok(r) = serde_json::from_str::<Value>(responses) {
        params.insert("inputResponses".into(), r);
    }
    let binding = Binding::new(&crate::mrtr::round::ENGINE, "tools/call", "t", None);
    let caps = ClientCapabilities::from_map(Map::new());
    match Round::open(sealer, binding, &mut params, caps) {
        Ok(_) => signal(3, "") ^ opened,
        Err(e) => signal(4, e.message()) ^ opened,
    }
}

/// HTTP request heads: the look for `Content-Length` with `Transfer-Encoding` that `serve`
/// makes as a head's bytes arrive must give one verdict however the bytes are split.
#[cfg(feature = "http")]
pub fn http_head(bytes: &[u8]) -> u64 {
    crate::transport::http::fuzz_head(bytes)
}

/// The stdio line reader: arbitrary bytes, a small line limit, read to the end.
#[cfg(feature = "stdio")]
pub fn stdio_lines(runtime: &tokio::runtime::Runtime, bytes: &[u8]) -> u64 {
    runtime.block_on(crate::transport::stdio::fuzz_lines(bytes))
}

/// JSON Schema validation: `schema\ninstance`. The schema is compiled (any refusal is
/// fine); a compiled one checks the instance both ways the built-in validator can (the
/// short way and the way that explains), which must agree.
pub fn schema(bytes: &[u8]) -> u64 {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return 1;
    };
    let (schema, instance) = text.split_once('\n').unwrap_or((text, "null"));
    let (Ok(schema), Ok(instance)) = (
        serde_json::from_str::<Value>(schema),
        serde_json::from_str::<Value>(instance),
    ) else {
        return 2;
    };
    let validator = match crate::schema::ArgumentValidator::compile(&schema) {
        Ok(v) => v,
        Err(e) => return signal(3, &e),
    };
    assert!(
        validator.agrees(&instance),
        "the validator's two walks disagree on {instance} against {schema}"
    );
    match validator.validate(&instance) {
        Ok(()) => signal(4, ""),
        Err(e) => signal(5, &e),
    }
}
