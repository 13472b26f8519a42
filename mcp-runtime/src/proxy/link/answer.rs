//! What an upstream's answer means: its result, or why there is none ([`UpstreamError`]).

use super::Told;
use serde_json::Value;
use std::fmt;

/// Why an upstream request has no result.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum UpstreamError {
    /// It answered with a JSON-RPC error.
    Rpc {
        /// The error code.
        code: i32,
        /// The message.
        message: String,
        /// The data, if any.
        data: Option<Value>,
    },
    /// It could not be reached, went away, or answered something that is not MCP. A stdio
    /// upstream that exited is started again on the next request, unless it keeps exiting
    /// (then this says when it will be). What it says is meant for clients: a short
    /// reason (`cannot connect (connection refused)`, say), never the upstream's own
    /// words or an error's text, which go to the log.
    Unavailable(String),
    /// It stayed silent on the request for longer than its time limit
    /// ([`DEFAULT_UPSTREAM_TIMEOUT`](super::DEFAULT_UPSTREAM_TIMEOUT) unless set).
    Timeout,
}

impl fmt::Display for UpstreamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UpstreamError::Rpc { code, message, .. } => write!(f, "error {code}: {message}"),
            UpstreamError::Unavailable(why) => f.write_str(why),
            UpstreamError::Timeout => write!(f, "no answer within its time limit"),
        }
    }
}

impl std::error::Error for UpstreamError {}

pub(crate) fn gone(why: impl fmt::Display) -> UpstreamError {
    UpstreamError::Unavailable(why.to_string())
}

/// A JSON-RPC error object of the upstream's (an answer's `error`, a failed task's), with
/// `fallback` as its message when it has none.
pub(crate) fn rpc_error(e: &Value, fallback: &str) -> UpstreamError {
    UpstreamError::Rpc {
        code: e["code"]
            .as_i64()
            .and_then(|c| i32::try_from(c).ok())
            .unwrap_or(-32603),
        message: e["message"].as_str().unwrap_or(fallback).to_owned(),
        data: e.get("data").cloned(),
    }
}

/// The message of an upstream's JSON-RPC error that has none (or one that is not a
/// string).
pub(crate) const NO_MESSAGE: &str = "the upstream server's error has no message";

/// An answer's result, or its error (an `error` that is not an object is no JSON-RPC
/// error: the upstream is then unavailable, and what that error held is told to `told`,
/// not to the client).
pub(crate) fn outcome(answer: Value, told: &Told) -> Result<Value, UpstreamError> {
    if let Some(e) = answer.get("error") {
        if !e.is_object() {
            told.tell(format_args!(
                "the upstream server answered an error that is not a JSON-RPC error object: {}",
                excerpt(e.to_string().as_bytes())
            ));
            return Err(gone(
                "it answered an error that is not a JSON-RPC error object",
            ));
        }
        return Err(rpc_error(e, NO_MESSAGE));
    }
    answer
        .get("result")
        .cloned()
        .ok_or_else(|| gone("an answer with neither result nor error"))
}

/// The start of `bytes` (an answer that is not what it should be), to show in the log
/// (never in a client's error: see `told.rs`).
pub(crate) fn excerpt(bytes: &[u8]) -> String {
    const SHOWN: usize = 200;
    let text = String::from_utf8_lossy(bytes);
    let mut shown: String = text.chars().take(SHOWN).collect();
    if text.chars().nth(SHOWN).is_some() {
        shown.push('…');
    }
    shown
}

/// What is wrong in an answer serde refused with `e`, without any of its values (serde's
/// message quotes them: a string, a number, a variant or member name of the upstream's):
/// the field it misses (one of ours: `missing field` and its name), or the kind of value found
/// and what was expected (`invalid type: string, expected a sequence`), or only that it is
/// of the wrong shape.
pub(crate) fn shape(e: &serde_json::Error) -> String {
    let said = e.to_string();
    // A value may hold `, expected `: what was expected (ours) is after the last one.
    let expected = said
        .rfind(", expected ")
        .map(|at| &said[at..])
        .filter(|tail| !tail.contains('"'));
    // `string "..."`, `integer `5``, `map, ...`: the kind is what comes before the value.
    let kind_of = |rest: &str| -> String {
        let end = [" `", " \"", ","]
            .iter()
            .filter_map(|m| rest.find(m))
            .min()
            .unwrap_or(rest.len());
        rest[..end].trim().to_owned()
    };
    let ours = |name: &str| name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if let Some(rest) = said.strip_prefix("missing field `")
        && let Some(field) = rest.strip_suffix('`').filter(|f| ours(f))
    {
        return format!("missing field `{field}`");
    }
    if let Some(rest) = said.strip_prefix("data did not match any variant of untagged enum ")
        && ours(rest)
    {
        return format!("no variant of {rest} matches");
    }
    for (prefix, named) in [
        ("invalid type: ", "invalid type"),
        ("invalid value: ", "invalid value"),
    ] {
        if let (Some(rest), Some(expected)) = (said.strip_prefix(prefix), expected) {
            return format!("{named}: {}{expected}", kind_of(rest));
        }
    }
    for (prefix, named) in [
        ("unknown variant ", "unknown variant"),
        ("unknown field ", "unknown field"),
        ("invalid length ", "invalid length"),
    ] {
        if said.starts_with(prefix) {
            return format!("{named}{}", expected.unwrap_or_default());
        }
    }
    "a value of the wrong shape".to_owned()
}

#[cfg(test)]
mod tests {
    use super::shape;
    use crate::protocol::CallToolResult;
    use serde_json::json;

    fn shape_of(v: serde_json::Value) -> String {
        let e = serde_json::from_value::<CallToolResult>(v).err();
        e.map(|e| shape(&e)).unwrap_or_default()
    }

    #[test]
    fn a_shape_names_fields_and_kinds_never_values() {
        let secret = "db-9.internal, expected \"x\"";
        assert_eq!(
            shape_of(json!({"content": secret})),
            "invalid type: string, expected a sequence"
        );
        assert_eq!(shape_of(json!({})), "missing field `content`");
        let said = shape_of(json!({"content": [{"type": secret, "text": "x"}]}));
        assert!(!said.contains("db-9"), "{said}");
        let said = shape_of(json!({"content": [], "isError": 17}));
        assert_eq!(said, "invalid type: integer, expected a boolean");
        let said = shape_of(json!({"content": [], "isError": secret}));
        assert_eq!(said, "invalid type: string, expected a boolean");
        let e = serde_json::from_value::<Vec<u8>>(json!({"k": 1})).err();
        assert_eq!(
            e.map(|e| shape(&e)).unwrap_or_default(),
            "invalid type: map, expected a sequence"
        );
    }
}
