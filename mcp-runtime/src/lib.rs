//! # mcp-runtime
//!
//! Write MCP servers (protocol revision **2026-07-28**) as plain `async fn`s.
//!
//! ```no_run
//! use mcp_runtime::{tool, tools, Server};
//!
//! /// Adds two numbers.
//! #[tool]
//! async fn add(a: i64, b: i64) -> String {
//!     (a + b).to_string()
//! }
//!
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let server = Server::builder("calculator", "1.0.0").tools(tools![add]).build()?;
//!     server.serve_stdio().await?;
//!     Ok(())
//! }
//! ```
//!
//! - [`macro@tool`] turns an `async fn` into a tool: parameters become the input schema,
//!   the doc comment the description. [`macro@server`] does the same for the methods of
//!   an `impl` block, so tools share state.
//! - [`macro@resource`] and [`macro@prompt`] do the same for resources (fixed URIs and
//!   RFC 6570 templates) and prompts.
//! - [`macro@needs_input`] (below `#[tool]`) asks the client for `#[input(...)]` parameters
//!   in a multi round-trip request; [`Input`] asks from straight-line code, with recorded
//!   steps that run once across rounds:
//!
//! ```no_run
//! use mcp_runtime::{Form, tool};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema, Form)]
//! struct GitHub {
//!     /// Your GitHub login
//!     login: String,
//! }
//!
//! /// Current weather for a location, personalised for the GitHub user.
//! #[tool]
//! #[needs_input]
//! async fn get_weather(location: String, #[input(elicit = "Who is asking about {location}?")] user: GitHub) -> String {
//!     format!("Sunny in {location}, @{}", user.login)
//! }
//! ```
//!
//! - [`Server`] validates every request and dispatches it; it is transport-agnostic.
//! - Transports: [`Server::serve_stdio`] (newline-delimited JSON), and Streamable HTTP
//!   with [`Server::serve_http`] or [`Server::router`] to mount into an axum app.

#![warn(missing_docs)]

pub mod mrtr;
pub mod protocol;
mod schema;
mod server;
pub mod telemetry;
#[cfg(feature = "testing")]
pub mod testing;
mod transport;

pub use mcp_macros::{Form, needs_input, prompt, resource, server, tool};
pub use mrtr::state::KeyRing;
pub use mrtr::{ElicitForm, ElicitParam, Elicited, FormField, Input};
pub use protocol::{Annotations, ResourceContents, Role};
pub use protocol::{
    CacheHints, CacheScope, CallToolResult, ClientCapabilities, Content, LogLevel, RequestId,
    RpcError,
};
pub use server::{
    Arguments, BuildError, Change, Context, DEFAULT_LIST_CACHE, DEFAULT_MAX_ROUNDS,
    DEFAULT_MAX_SUBSCRIPTIONS, DEFAULT_PAGE_SIZE, DEFAULT_READ_CACHE, DEFAULT_REQUEST_TIMEOUT,
    FromPromptCall, FromRequest, FromToolCall, GetPromptResult, HeaderValue, Icon, IntoCompleter,
    IntoContents, IntoPromptResult, IntoResourceList, IntoToolResult, Json, KnownArguments,
    LocalBus, Logger, MAX_COMPLETIONS, NotificationBus, Param, Progress, PromptCall, PromptDef,
    PromptMessage, PromptSignature, Provider, Requirements, Resource, ResourceCall, ResourceDef,
    SafePath, Server, ServerBuilder, ServerInfo, Signature, State, ToolAnnotations, ToolCall,
    ToolDef, ToolError, TraceContext, UriTemplate, valid_tool_name,
};
#[cfg(feature = "http")]
pub use transport::http::{
    DEFAULT_BODY_LIMIT, DEFAULT_DRAIN, DEFAULT_KEEP_ALIVE, HttpConfig, HttpServer,
};

/// Collects `#[tool]` functions into tool definitions for [`ServerBuilder::tools`].
///
/// ```
/// use mcp_runtime::{tool, tools};
///
/// /// Says hello.
/// #[tool]
/// async fn hello() -> &'static str {
///     "hello"
/// }
///
/// let defs = tools![hello];
/// assert_eq!(defs[0].name(), "hello");
/// ```
#[macro_export]
macro_rules! tools {
    ($($($segment:ident)::+),* $(,)?) => {
        [$($($segment)::+ :: __mcp_tool()),*]
    };
}

/// Collects `#[resource]` functions into resource definitions for
/// [`ServerBuilder::resources`].
#[macro_export]
macro_rules! resources {
    ($($($segment:ident)::+),* $(,)?) => {
        [$($($segment)::+ :: __mcp_resource()),*]
    };
}

/// Collects `#[prompt]` functions into prompt definitions for [`ServerBuilder::prompts`].
#[macro_export]
macro_rules! prompts {
    ($($($segment:ident)::+),* $(,)?) => {
        [$($($segment)::+ :: __mcp_prompt()),*]
    };
}

pub(crate) fn base64_encode(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// What the macros expand to. Not a public API: it changes without notice.
#[doc(hidden)]
pub mod __private {
    pub use crate::mrtr::{ElicitForm, ElicitParam, FormField, Input, sampling_request};
    pub use crate::protocol::{Annotations, Role};
    pub use futures_util::join;

    /// Checks at compile time that a form field's type is allowed (reported at the type).
    pub fn assert_form_field<T: FormField>() {}
    pub use crate::protocol::{CacheHints, CacheScope};
    pub use crate::server::{
        FromPromptCall, FromRequest, PromptCall, PromptDef, PromptSignature, Requirements,
        ResourceCall, ResourceDef,
    };
    pub use crate::server::{FromToolCall, Param, Signature, ToolCall, ToolDef, ToolError};
    pub use crate::server::{Icon, IntoToolResult, Provider, ToolAnnotations};
    pub use core::option::Option::{self, None, Some};
    pub use core::result::Result::{self, Err, Ok};
    pub use serde_json;
    pub use std::sync::Arc;
    pub use std::vec::Vec;

    /// Caching hints from `#[tool(ttl_ms = .., cache_scope = "..")]`; what is left out
    /// comes from the server default.
    pub fn cache_hints(ttl_ms: Option<u64>, private: Option<bool>) -> CacheHints {
        let d = crate::DEFAULT_LIST_CACHE;
        CacheHints::new(
            ttl_ms.unwrap_or(d.ttl_ms),
            match private {
                Some(true) => CacheScope::Private,
                Some(false) => CacheScope::Public,
                None => d.scope,
            },
        )
    }

    /// Checks at compile time that a header-mirrored parameter has a type that can be
    /// mirrored (the error is reported at the type).
    pub fn assert_header_value<T: crate::HeaderValue>() {}

    /// Boxes a tool's future, requiring it to be `Send` (the error is reported at the
    /// tool's name).
    pub fn boxed<F, T>(future: F) -> futures_util::future::BoxFuture<'static, T>
    where
        F: core::future::Future<Output = T> + Send + 'static,
    {
        Box::pin(future)
    }

    /// Parses JSON text the macro already validated at compile time.
    pub fn json(text: &str) -> serde_json::Value {
        serde_json::from_str(text).unwrap_or(serde_json::Value::Null)
    }
}

/// The README's examples, compiled as doctests so they cannot rot.
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
