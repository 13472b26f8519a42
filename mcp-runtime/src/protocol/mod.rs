//! The 2026-07-28 wire: JSON-RPC envelope, `_meta` keys, errors, content and results.
//!
//! This layer is serde only: it knows nothing of tokio, axum or the registry.

mod content;
pub mod envelope;
mod error;
pub mod headers;
pub mod json;
pub mod legacy;
mod meta;
pub mod tasks;

pub use content::{
    Annotations, AudioContent, BlobResourceContents, CallToolResult, Content, EmbeddedResource,
    ImageContent, ResourceContents, ResourceLink, Role, TextContent, TextResourceContents,
};
pub(crate) use error::reflect;
pub use error::{ErrorCode, RpcError};
pub use meta::{CacheHints, CacheScope, ClientCapabilities, LogLevel, RequestId};

/// The protocol revision this crate implements.
pub const PROTOCOL_VERSION: &str = "2026-07-28";

/// The revisions served statelessly, with per-request `_meta`.
pub const MODERN_VERSIONS: &[&str] = &[PROTOCOL_VERSION];

/// Every revision this crate serves: the modern one, then the legacy ones (opened with
/// `initialize`). A dual-era server (the default) lists these in `server/discover` and in
/// `-32022` errors; a modern-only one lists [`MODERN_VERSIONS`].
pub const SUPPORTED_VERSIONS: &[&str] =
    &[PROTOCOL_VERSION, "2025-11-25", "2025-06-18", "2025-03-26"];

/// Reserved `_meta` keys and other fixed names of the wire.
pub mod keys {
    /// Request `_meta`: the protocol revision of this request (required).
    pub const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
    /// Request `_meta`: the client's capabilities for this request (required).
    pub const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
    /// Request `_meta`: the client's name and version (optional).
    pub const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
    /// Request `_meta`: the lowest log level the client wants on this request's stream.
    pub const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
    /// Result `_meta`: the server's name and version.
    pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
    /// Notification `_meta` on listen streams: the listen request's id.
    pub const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
    /// Request `_meta`: token the server echoes in `notifications/progress`.
    pub const PROGRESS_TOKEN: &str = "progressToken";
    /// Request `_meta`: W3C trace context.
    pub const TRACEPARENT: &str = "traceparent";
    /// Request `_meta`: W3C trace state.
    pub const TRACESTATE: &str = "tracestate";
}

/// Method names of the 2026-07-28 revision.
pub mod methods {
    /// `server/discover`: the server's supported versions and capabilities.
    pub const DISCOVER: &str = "server/discover";
    /// `tools/list`: lists the tools.
    pub const TOOLS_LIST: &str = "tools/list";
    /// `tools/call`: calls a tool.
    pub const TOOLS_CALL: &str = "tools/call";
    /// `prompts/list`: lists the prompts.
    pub const PROMPTS_LIST: &str = "prompts/list";
    /// `prompts/get`: renders a prompt.
    pub const PROMPTS_GET: &str = "prompts/get";
    /// `resources/list`: lists the resources.
    pub const RESOURCES_LIST: &str = "resources/list";
    /// `resources/templates/list`: lists the resource templates.
    pub const RESOURCES_TEMPLATES_LIST: &str = "resources/templates/list";
    /// `resources/read`: reads a resource.
    pub const RESOURCES_READ: &str = "resources/read";
    /// `completion/complete`: completes an argument of a prompt or resource template.
    pub const COMPLETE: &str = "completion/complete";
    /// `subscriptions/listen`: opens a stream of notifications.
    pub const LISTEN: &str = "subscriptions/listen";
    /// `notifications/cancelled`: the sender cancels a request it made.
    pub const NOTIFICATION_CANCELLED: &str = "notifications/cancelled";
    /// `notifications/progress`: progress of a request that carried a `progressToken`.
    pub const NOTIFICATION_PROGRESS: &str = "notifications/progress";
    /// `notifications/message`: a log message.
    pub const NOTIFICATION_MESSAGE: &str = "notifications/message";
    /// `tasks/get` (tasks extension): a task's status, then its result or error.
    pub const TASKS_GET: &str = "tasks/get";
    /// `tasks/update` (tasks extension): answers to a task's input requests.
    pub const TASKS_UPDATE: &str = "tasks/update";
    /// `tasks/cancel` (tasks extension): asks a task to stop.
    pub const TASKS_CANCEL: &str = "tasks/cancel";
    /// `notifications/tasks` (tasks extension): a task's status, on listen streams.
    pub const NOTIFICATION_TASKS: &str = "notifications/tasks";
    /// Methods of earlier revisions that no longer exist; they get `-32601`.
    pub const REMOVED: &[&str] = &[
        "initialize",
        "notifications/initialized",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        "tasks/list",
        "tasks/result",
    ];
}
