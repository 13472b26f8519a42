//! What a [`TestClient`](super::TestClient) reports: error answers, final results, task
//! outcomes, and the scripted answers it gives to `input_required`.

use serde_json::{Value, json};
use std::collections::BTreeMap;

/// A JSON-RPC error answer, as the client saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorReply {
    /// The error code.
    pub code: i64,
    /// The message.
    pub message: String,
    /// The `data` member.
    pub data: Option<Value>,
}

impl std::fmt::Display for ErrorReply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for ErrorReply {}

/// The final result of a request, with what happened on the way.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The `result` object.
    pub result: Value,
    /// How many rounds it took (1 without `input_required`).
    pub rounds: u32,
    /// Notifications sent on the request's stream (progress, log messages), in order.
    pub notifications: Vec<Value>,
}

impl Outcome {
    /// The text of the first text content block (tool results), or of the first message
    /// with text (prompts), or of the first text contents entry (resources); empty when
    /// there is none (only images or blobs, say).
    pub fn text(&self) -> String {
        let r = &self.result;
        fn first_text(blocks: &Value, at: fn(&Value) -> &Value) -> Option<&str> {
            blocks
                .as_array()?
                .iter()
                .find_map(|b| at(b)["text"].as_str())
        }
        first_text(&r["content"], |b| b)
            .or_else(|| first_text(&r["messages"], |m| &m["content"]))
            .or_else(|| first_text(&r["contents"], |c| c))
            .unwrap_or_default()
            .to_owned()
    }
    /// Whether a tool result has `isError: true`.
    pub fn is_error(&self) -> bool {
        self.result["isError"] == json!(true)
    }
}

/// How a task ended, as [`TestClient::run_task`](super::TestClient::run_task) saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskOutcome {
    /// The final `tasks/get` result.
    pub task: Value,
    /// The input keys answered with `tasks/update`, in order.
    pub answered: Vec<String>,
}

impl TaskOutcome {
    /// The final status (`completed`, `failed` or `cancelled`).
    pub fn status(&self) -> &str {
        self.task["status"].as_str().unwrap_or_default()
    }
    /// The text of the first text content block of a completed task's result.
    pub fn text(&self) -> String {
        self.task["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }
}

/// Scripted answers to `input_required`, by input key.
#[derive(Debug, Clone, Default)]
pub struct Answers(pub(super) BTreeMap<String, Value>);

impl Answers {
    /// No answers.
    pub fn new() -> Self {
        Self::default()
    }
    /// Accepts a form elicitation under `key` with `content`.
    pub fn accept(mut self, key: &str, content: Value) -> Self {
        self.0.insert(
            key.into(),
            json!({ "action": "accept", "content": content }),
        );
        self
    }
    /// Declines the elicitation under `key`.
    pub fn decline(mut self, key: &str) -> Self {
        self.0.insert(key.into(), json!({ "action": "decline" }));
        self
    }
    /// Cancels the elicitation under `key`.
    pub fn cancel(mut self, key: &str) -> Self {
        self.0.insert(key.into(), json!({ "action": "cancel" }));
        self
    }
    /// Answers `key` with any response (a sampling result, roots, ...).
    pub fn raw(mut self, key: &str, response: Value) -> Self {
        self.0.insert(key.into(), response);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_the_first_text_block() {
        let of = |result: Value| {
            Outcome {
                result,
                rounds: 1,
                notifications: Vec::new(),
            }
            .text()
        };
        let image = json!({"type": "image", "data": "AA==", "mimeType": "image/png"});
        let hi = json!({"type": "text", "text": "hi"});
        assert_eq!(of(json!({"content": [image, hi]})), "hi");
        assert_eq!(of(json!({"content": [image]})), "");
        let messages = json!({"messages": [{"role": "user", "content": image},
            {"role": "user", "content": hi}]});
        assert_eq!(of(messages), "hi");
        let contents = json!({"contents": [{"uri": "a://b", "blob": "AA=="},
            {"uri": "a://c", "text": "hi"}]});
        assert_eq!(of(contents), "hi");
    }
}
