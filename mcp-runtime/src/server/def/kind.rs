//! The kinds of things a server serves, as type markers: [`Tool`], [`Prompt`], [`Resource`]
//! (and [`ResourceList`], a template's list function, and [`Completion`], a completer).
//!
//! One definition type ([`Def<K>`](super::Def)), one call type
//! ([`Call<K>`](super::Call)), one extractor trait
//! ([`FromRequest<K>`](super::FromRequest)) and one output trait
//! ([`IntoResult<K>`](super::IntoResult)) serve all of them; the marker says which.

use super::prompt::GetPromptResult;
use super::resource::Resource as Listed;
use crate::protocol::{CallToolResult, Content, ResourceContents, RpcError, methods};

mod sealed {
    pub trait Sealed {}
}

/// A kind of handler. Sealed: the markers of this module are all there is.
pub trait Kind: sealed::Sealed + Send + Sync + Sized + 'static {
    /// What a handler of this kind produces.
    type Output: Send + 'static;
    /// What this kind adds to a definition beyond the shared item metadata.
    #[doc(hidden)]
    type Spec: Send + Sync + 'static;
    /// `tool`, `prompt`, `resource`: how messages name the kind.
    #[doc(hidden)]
    const LABEL: &'static str;
    /// The method a handler of this kind answers.
    #[doc(hidden)]
    const METHOD: &'static str;
    /// What an execution error (`Error::new`) becomes: an `isError` result for a tool, a
    /// JSON-RPC error `-32603` for the rest.
    #[doc(hidden)]
    fn execution_error(content: Vec<Content>) -> Result<Self::Output, RpcError> {
        Err(crate::Error::with_content(content).into_rpc())
    }
    /// The output as JSON (what middleware sees).
    #[doc(hidden)]
    fn to_json(out: Self::Output) -> Result<serde_json::Value, RpcError> {
        let _ = out;
        Err(RpcError::internal(
            "Internal error: no middleware for this kind",
        ))
    }
    /// The output back from JSON (what middleware answered).
    #[doc(hidden)]
    fn from_json(v: serde_json::Value) -> Result<Self::Output, RpcError> {
        let _ = v;
        Err(RpcError::internal(
            "Internal error: no middleware for this kind",
        ))
    }
    /// What puts middleware around a handler of this kind, of `w`; none for the kinds
    /// that middleware does not wrap.
    #[doc(hidden)]
    fn wrapper(
        w: &crate::server::middleware::Wrappers,
    ) -> Option<crate::server::middleware::WrapFn<Self>> {
        let _ = w;
        None
    }
    /// What tells this item apart from the others of its kind: its name (a resource's
    /// URI or URI template, which is unique where names are not).
    #[doc(hidden)]
    fn identity<'a>(name: &'a str, spec: &'a Self::Spec) -> &'a str {
        let _ = spec;
        name
    }
    /// What a "not found" from the handler becomes, for `target` (the name or URI):
    /// an execution error with `message`, except for a resource.
    #[doc(hidden)]
    fn not_found(target: &str, message: String) -> Result<Self::Output, RpcError> {
        let _ = target;
        Self::execution_error(vec![Content::text(message)])
    }
}

/// An output as JSON (what middleware sees).
fn json_of<T: serde::Serialize>(out: T) -> Result<serde_json::Value, RpcError> {
    serde_json::to_value(out).map_err(|e| RpcError::internal(format!("Internal error: {e}")))
}

/// An output from JSON (what middleware answered).
fn from_json<T: serde::de::DeserializeOwned>(v: serde_json::Value) -> Result<T, RpcError> {
    serde_json::from_value(v).map_err(|e| {
        RpcError::internal(format!(
            "Internal error: a middleware answered an invalid result: {e}"
        ))
    })
}

/// A tool (`tools/call`): arguments in, [`CallToolResult`] out.
#[derive(Debug, Clone, Copy)]
pub struct Tool;

/// A prompt (`prompts/get`): string arguments in, messages out.
#[derive(Debug, Clone, Copy)]
pub struct Prompt;

/// A resource or resource template (`resources/read`): URI variables in, contents out.
#[derive(Debug, Clone, Copy)]
pub struct Resource;

/// A resource template's list function (`resources/list`): what it can produce.
#[derive(Debug, Clone, Copy)]
pub struct ResourceList;

/// A completer (`completion/complete`): suggestions for one argument.
#[derive(Debug, Clone, Copy)]
pub struct Completion;

impl sealed::Sealed for Tool {}
impl sealed::Sealed for Prompt {}
impl sealed::Sealed for Resource {}
impl sealed::Sealed for ResourceList {}
impl sealed::Sealed for Completion {}

impl Kind for Tool {
    type Output = CallToolResult;
    type Spec = super::tool::ToolSpec;
    const LABEL: &'static str = "tool";
    const METHOD: &'static str = methods::TOOLS_CALL;
    fn to_json(out: Self::Output) -> Result<serde_json::Value, RpcError> {
        json_of(out)
    }
    fn from_json(v: serde_json::Value) -> Result<Self::Output, RpcError> {
        from_json(v)
    }
    fn wrapper(
        w: &crate::server::middleware::Wrappers,
    ) -> Option<crate::server::middleware::WrapFn<Self>> {
        Some(w.tool)
    }
    fn execution_error(content: Vec<Content>) -> Result<CallToolResult, RpcError> {
        Ok(CallToolResult {
            content,
            is_error: Some(true),
            ..Default::default()
        })
    }
}

impl Kind for Prompt {
    type Output = GetPromptResult;
    type Spec = super::prompt::PromptSpec;
    const LABEL: &'static str = "prompt";
    const METHOD: &'static str = methods::PROMPTS_GET;
    fn to_json(out: Self::Output) -> Result<serde_json::Value, RpcError> {
        json_of(out)
    }
    fn from_json(v: serde_json::Value) -> Result<Self::Output, RpcError> {
        from_json(v)
    }
    fn wrapper(
        w: &crate::server::middleware::Wrappers,
    ) -> Option<crate::server::middleware::WrapFn<Self>> {
        Some(w.prompt)
    }
}

impl Kind for Resource {
    type Output = Vec<ResourceContents>;
    type Spec = super::resource::ResourceSpec;
    const LABEL: &'static str = "resource";
    const METHOD: &'static str = methods::RESOURCES_READ;
    fn identity<'a>(_: &'a str, spec: &'a Self::Spec) -> &'a str {
        &spec.uri
    }
    fn to_json(out: Self::Output) -> Result<serde_json::Value, RpcError> {
        json_of(out)
    }
    fn from_json(v: serde_json::Value) -> Result<Self::Output, RpcError> {
        from_json(v)
    }
    fn wrapper(
        w: &crate::server::middleware::Wrappers,
    ) -> Option<crate::server::middleware::WrapFn<Self>> {
        Some(w.resource)
    }
    fn not_found(uri: &str, _: String) -> Result<Self::Output, RpcError> {
        Err(RpcError::resource_not_found(uri))
    }
}

impl Kind for ResourceList {
    type Output = Vec<Listed>;
    type Spec = ();
    const LABEL: &'static str = "resource list";
    const METHOD: &'static str = methods::RESOURCES_LIST;
}

impl Kind for Completion {
    type Output = Vec<String>;
    type Spec = ();
    const LABEL: &'static str = "completer";
    const METHOD: &'static str = methods::COMPLETE;
}
