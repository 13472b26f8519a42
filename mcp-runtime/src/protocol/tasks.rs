//! The tasks extension (`io.modelcontextprotocol/tasks`) on the wire: its identifier, the
//! statuses a task moves through, and the `-32021` that names the extension.

use super::RpcError;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// The extension's identifier, under `capabilities.extensions` on both sides.
pub const EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// Where a task is: `working` ⇄ `input_required`, then one of the three terminal statuses,
/// which never change again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// Running.
    Working,
    /// Waiting for answers to its `inputRequests` (`tasks/update`).
    InputRequired,
    /// Finished with a result (a tool's `isError` result included).
    Completed,
    /// Finished with a JSON-RPC error.
    Failed,
    /// Cancelled (`tasks/cancel`).
    Cancelled,
}

impl TaskStatus {
    /// Whether the status is final.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }
}

/// `-32021` for a request that needs the tasks extension the client did not declare.
pub fn extension_required(what: &str) -> RpcError {
    RpcError::missing_capability(
        format!("{what} needs the `{EXTENSION}` extension, which this request did not declare"),
        json!({ "extensions": { EXTENSION: {} } }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses() {
        assert_eq!(
            serde_json::to_value(TaskStatus::InputRequired).unwrap(),
            "input_required"
        );
        assert!(TaskStatus::Cancelled.is_terminal() && !TaskStatus::Working.is_terminal());
        let e = serde_json::to_value(extension_required("tasks/get")).unwrap();
        assert_eq!(e["code"], -32021);
        assert!(e["data"]["requiredCapabilities"]["extensions"][EXTENSION].is_object());
    }
}
