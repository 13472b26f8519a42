//! Turning what a tool returns into a `CallToolResult`.

use crate::protocol::{CallToolResult, Content, RpcError};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;
use std::fmt;

/// An error from a tool.
///
/// Most errors are *execution* errors: the client sees a result with `isError: true` and
/// the message as text, so the model can read it and try again. A few are *protocol*
/// errors that become a JSON-RPC error instead, such as a missing client capability
/// (`-32021`).
///
/// Any `std::error::Error` converts into it with `?`; plain messages use
/// [`ToolError::new`].
///
/// ```
/// use mcp_runtime::{tool, ToolError};
///
/// /// Divides a by b.
/// #[tool]
/// async fn divide(a: f64, b: f64) -> Result<String, ToolError> {
///     if b == 0.0 {
///         return Err(ToolError::new("cannot divide by zero"));
///     }
///     Ok((a / b).to_string())
/// }
/// ```
pub struct ToolError(pub(crate) ToolErrorKind);

pub(crate) enum ToolErrorKind {
    /// `isError: true` with this content.
    Execution(Vec<Content>),
    /// A JSON-RPC error.
    Protocol(RpcError),
    /// The handler asked for input: the round ends with `input_required`.
    InputRequired,
}

impl ToolError {
    /// An execution error with this message.
    pub fn new(message: impl fmt::Display) -> Self {
        ToolError(ToolErrorKind::Execution(vec![Content::text(
            message.to_string(),
        )]))
    }

    /// An execution error with these content blocks.
    pub fn with_content(content: Vec<Content>) -> Self {
        ToolError(ToolErrorKind::Execution(content))
    }

    /// The request needs a client capability it did not declare: `-32021`, with
    /// `data.requiredCapabilities` set to `required` (for example `{"sampling": {}}`).
    pub fn missing_capability(message: impl Into<String>, required: Value) -> Self {
        ToolError(ToolErrorKind::Protocol(RpcError::missing_capability(
            message, required,
        )))
    }

    /// The resource at `uri` does not exist: `-32602` with `data.uri` (from a resource
    /// handler; never an empty `contents`).
    pub fn resource_not_found(uri: impl Into<String>) -> Self {
        let uri = uri.into();
        ToolError(ToolErrorKind::Protocol(
            RpcError::invalid_params(format!(
                "Resource not found: {}",
                crate::protocol::reflect(&uri)
            ))
            .with_data(serde_json::json!({ "uri": uri })),
        ))
    }

    /// A JSON-RPC error of the caller's choosing.
    pub fn protocol(error: RpcError) -> Self {
        ToolError(ToolErrorKind::Protocol(error))
    }

    /// Whether this becomes `isError: true` (as opposed to a JSON-RPC error).
    pub fn is_execution_error(&self) -> bool {
        matches!(self.0, ToolErrorKind::Execution(_))
    }
}

impl fmt::Debug for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            ToolErrorKind::Execution(c) => f.debug_tuple("Execution").field(c).finish(),
            ToolErrorKind::Protocol(e) => f.debug_tuple("Protocol").field(e).finish(),
            ToolErrorKind::InputRequired => f.write_str("InputRequired"),
        }
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            ToolErrorKind::Execution(content) => {
                let mut first = true;
                for c in content {
                    if let Content::Text(t) = c {
                        if !first {
                            f.write_str("; ")?;
                        }
                        f.write_str(&t.text)?;
                        first = false;
                    }
                }
                Ok(())
            }
            ToolErrorKind::Protocol(e) => fmt::Display::fmt(e, f),
            ToolErrorKind::InputRequired => f.write_str("input required from the client"),
        }
    }
}

impl<E: std::error::Error + Send + Sync + 'static> From<E> for ToolError {
    fn from(e: E) -> Self {
        let mut msg = e.to_string();
        let mut source = e.source();
        while let Some(s) = source {
            msg.push_str(": ");
            msg.push_str(&s.to_string());
            source = s.source();
        }
        ToolError::new(msg)
    }
}

/// A value a tool can return.
///
/// Implemented for text (`String`, `&'static str`), content blocks ([`Content`],
/// `Vec<Content>`), [`CallToolResult`], [`Json<T>`] (structured output), `()` and
/// `Result<T, E>` where `E: Into<ToolError>` (an `Err` becomes `isError: true`).
///
/// ```
/// use mcp_runtime::{CallToolResult, Content, IntoToolResult, ToolError, tool};
///
/// /// Rows, shown as a tab-separated table.
/// struct Table(Vec<(String, u32)>);
///
/// impl IntoToolResult for Table {
///     fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
///         let rows: Vec<String> = self.0.iter().map(|(k, v)| format!("{k}\t{v}")).collect();
///         Ok(CallToolResult::success(vec![Content::text(rows.join("\n"))]))
///     }
/// }
///
/// /// Counts the words of the text.
/// #[tool]
/// async fn counts(text: String) -> Table {
///     Table(vec![("words".into(), text.split_whitespace().count() as u32)])
/// }
///
/// let result = Table(vec![("a".into(), 1)]).into_tool_result().unwrap();
/// assert_eq!(result.content, [Content::text("a\t1")]);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a tool",
    label = "this return type",
    note = "return text (`String`), content (`Content`, `Vec<Content>`), `Json<T>` for structured output, `CallToolResult`, or a `Result` of one of these"
)]
pub trait IntoToolResult: Send {
    /// The `outputSchema` of tools returning this type (only [`Json<T>`] has one).
    fn output_schema() -> Option<Value> {
        None
    }

    /// Converts the value.
    fn into_tool_result(self) -> Result<CallToolResult, ToolError>;
}

impl IntoToolResult for CallToolResult {
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        Ok(self)
    }
}

impl IntoToolResult for String {
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        Ok(CallToolResult::success(vec![Content::text(self)]))
    }
}

impl IntoToolResult for &'static str {
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        Ok(CallToolResult::success(vec![Content::text(self)]))
    }
}

impl IntoToolResult for () {
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        Ok(CallToolResult::success(Vec::new()))
    }
}

impl IntoToolResult for Content {
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        Ok(CallToolResult::success(vec![self]))
    }
}

impl IntoToolResult for Vec<Content> {
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        Ok(CallToolResult::success(self))
    }
}

impl<T: IntoToolResult, E: Into<ToolError> + Send> IntoToolResult for Result<T, E> {
    fn output_schema() -> Option<Value> {
        T::output_schema()
    }
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        match self {
            Ok(v) => v.into_tool_result(),
            Err(e) => Err(e.into()),
        }
    }
}

/// Structured output: the value becomes `structuredContent`, its JSON text is mirrored in
/// a text block, and `T`'s schema becomes the tool's `outputSchema`.
///
/// ```
/// use mcp_runtime::{tool, Json};
///
/// #[derive(serde::Serialize, schemars::JsonSchema)]
/// struct Sum { total: i64 }
///
/// /// Adds two numbers.
/// #[tool]
/// async fn add(a: i64, b: i64) -> Json<Sum> {
///     Json(Sum { total: a + b })
/// }
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Json<T>(pub T);

impl<T: Serialize + JsonSchema + Send> IntoToolResult for Json<T> {
    fn output_schema() -> Option<Value> {
        Some(crate::schema::root_schema_for::<T>())
    }
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        let value = serde_json::to_value(&self.0).map_err(|e| {
            ToolError::protocol(RpcError::internal(format!(
                "output could not be serialized: {e}"
            )))
        })?;
        let text = value.to_string();
        Ok(CallToolResult {
            content: vec![Content::text(text)],
            structured_content: Some(value),
            ..Default::default()
        })
    }
}
