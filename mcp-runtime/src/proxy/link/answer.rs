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
    /// (then this says when it will be).
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
