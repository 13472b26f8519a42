//! [`IntoResult<K>`]: turning what a handler returns into the result of its kind.

use super::call::Target;
use super::kind::{self, Kind};
use super::prompt::{GetPromptResult, PromptMessage};
use super::resource::Resource;
use crate::Error;
use crate::protocol::{
    BlobResourceContents, CallToolResult, Content, ResourceContents, RpcError, TextResourceContents,
};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

/// A value a handler of kind `K` can return.
///
/// - tools: text (`String`, `&'static str`), content blocks ([`Content`], `Vec<Content>`),
///   [`CallToolResult`], [`Json<T>`] (structured output and an `outputSchema`), `()`;
/// - prompts: messages (`Vec<PromptMessage>`, [`PromptMessage`]), text (one user
///   message), [`GetPromptResult`];
/// - resources: text, bytes (`Vec<u8>`, sent as base64), [`Json<T>`],
///   [`ResourceContents`] or a `Vec` of them;
/// - a resource template's list function: `Vec<Resource>`;
/// - and a `Result` of any of these, whose `Err` converts into [`Error`] (any
///   `std::error::Error`, a `String` or `&str`, `Box<dyn std::error::Error + Send + Sync>`,
///   `anyhow::Error`).
///
/// ```
/// use mcp_runtime::handler::{IntoResult, Target};
/// use mcp_runtime::kind::Tool;
/// use mcp_runtime::{CallToolResult, Content, Error, tool};
///
/// /// Rows, shown as a tab-separated table.
/// struct Table(Vec<(String, u32)>);
///
/// impl IntoResult<Tool> for Table {
///     fn into_result(self, _: &Target<'_>) -> Result<CallToolResult, Error> {
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
/// let result = Table(vec![("a".into(), 1)]).into_result(&Target::new("counts", None)).unwrap();
/// assert_eq!(result.content, [Content::text("a\t1")]);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from this handler",
    label = "this return type",
    note = "a tool returns text (`String`), content (`Content`, `Vec<Content>`), `Json<T>` for structured output or `CallToolResult`; a prompt returns `Vec<PromptMessage>`, a `PromptMessage`, text or `GetPromptResult`; a resource returns text, bytes (`Vec<u8>`), `Json<T>` or `ResourceContents`",
    note = "a `Result` of one of these works too, with an error that converts into `mcp_runtime::Error`: any `std::error::Error`, a `String`, `Box<dyn std::error::Error + Send + Sync>` or `anyhow::Error`"
)]
pub trait IntoResult<K: Kind>: Send {
    /// The `outputSchema` of tools returning this type (only [`Json<T>`] has one).
    fn output_schema() -> Option<Value> {
        None
    }

    /// Converts the value into the result for `target`.
    fn into_result(self, target: &Target<'_>) -> Result<K::Output, Error>;
}

impl<K: Kind, T: IntoResult<K>, E: Into<Error> + Send> IntoResult<K> for Result<T, E> {
    fn output_schema() -> Option<Value> {
        T::output_schema()
    }
    fn into_result(self, target: &Target<'_>) -> Result<K::Output, Error> {
        self.map_err(Into::into)?.into_result(target)
    }
}

/// Conversions that ignore the target.
macro_rules! results {
    ($kind:ty => $($ty:ty: |$v:ident| $body:expr;)*) => {$(
        impl IntoResult<$kind> for $ty {
            fn into_result(self, _: &Target<'_>) -> Result<<$kind as Kind>::Output, Error> {
                let $v = self;
                Ok($body)
            }
        }
    )*};
}

results! { kind::Tool =>
    CallToolResult: |r| r;
    String: |s| CallToolResult::success(vec![Content::text(s)]);
    &'static str: |s| CallToolResult::success(vec![Content::text(s)]);
    (): |_u| CallToolResult::success(Vec::new());
    Content: |c| CallToolResult::success(vec![c]);
    Vec<Content>: |c| CallToolResult::success(c);
}

results! { kind::Prompt =>
    GetPromptResult: |r| r;
    Vec<PromptMessage>: |m| GetPromptResult { description: None, messages: m };
    PromptMessage: |m| GetPromptResult { description: None, messages: vec![m] };
    String: |s| GetPromptResult { description: None, messages: vec![PromptMessage::user(s)] };
    &'static str: |s| GetPromptResult { description: None, messages: vec![PromptMessage::user(s)] };
}

results! { kind::ResourceList =>
    Vec<Resource>: |r| r;
}

impl IntoResult<kind::Resource> for String {
    fn into_result(self, target: &Target<'_>) -> Result<Vec<ResourceContents>, Error> {
        Ok(vec![ResourceContents::Text(TextResourceContents {
            uri: target.uri().to_owned(),
            mime_type: Some(target.mime_type().unwrap_or("text/plain").to_owned()),
            text: self,
            meta: None,
        })])
    }
}

impl IntoResult<kind::Resource> for &'static str {
    fn into_result(self, target: &Target<'_>) -> Result<Vec<ResourceContents>, Error> {
        IntoResult::<kind::Resource>::into_result(self.to_owned(), target)
    }
}

impl IntoResult<kind::Resource> for Vec<u8> {
    fn into_result(self, target: &Target<'_>) -> Result<Vec<ResourceContents>, Error> {
        Ok(vec![ResourceContents::Blob(BlobResourceContents {
            uri: target.uri().to_owned(),
            mime_type: Some(
                target
                    .mime_type()
                    .unwrap_or("application/octet-stream")
                    .to_owned(),
            ),
            blob: crate::base64_encode(&self),
            meta: None,
        })])
    }
}

impl IntoResult<kind::Resource> for &'static [u8] {
    fn into_result(self, target: &Target<'_>) -> Result<Vec<ResourceContents>, Error> {
        IntoResult::<kind::Resource>::into_result(self.to_vec(), target)
    }
}

results! { kind::Resource =>
    ResourceContents: |c| vec![c];
    Vec<ResourceContents>: |c| c;
}

/// Structured output: from a tool, the value becomes `structuredContent`, its JSON text is
/// mirrored in a text block, and `T`'s schema becomes the tool's `outputSchema`; from a
/// resource, JSON text contents.
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

impl<T: Serialize + JsonSchema + Send> IntoResult<kind::Tool> for Json<T> {
    fn output_schema() -> Option<Value> {
        Some(crate::schema::root_schema_for::<T>())
    }
    fn into_result(self, _: &Target<'_>) -> Result<CallToolResult, Error> {
        let value = serde_json::to_value(&self.0).map_err(|e| {
            Error::protocol(RpcError::internal(format!(
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

impl<T: Serialize + Send> IntoResult<kind::Resource> for Json<T> {
    fn into_result(self, target: &Target<'_>) -> Result<Vec<ResourceContents>, Error> {
        let text = serde_json::to_string(&self.0)
            .map_err(|e| Error::new(format!("could not serialize: {e}")))?;
        let json = Target::new(
            target.uri(),
            Some(target.mime_type().unwrap_or("application/json")),
        );
        IntoResult::<kind::Resource>::into_result(text, &json)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool<R: IntoResult<kind::Tool>>(r: R) -> Result<CallToolResult, Error> {
        r.into_result(&Target::new("t", None))
    }

    #[test]
    fn tools() {
        assert_eq!(tool("hi").unwrap().content, [Content::text("hi")]);
        assert!(tool(()).unwrap().content.is_empty());
        let json = tool(Json(json!({"a": 1}))).unwrap();
        assert_eq!(json.structured_content, Some(json!({"a": 1})));
        assert_eq!(json.content, [Content::text(r#"{"a":1}"#)]);
        let err: Result<String, Error> = Err(Error::new("boom"));
        assert!(tool(err).unwrap_err().is_execution_error());
        assert!(<Json<u8> as IntoResult<kind::Tool>>::output_schema().is_some());
        assert!(<String as IntoResult<kind::Tool>>::output_schema().is_none());
    }

    #[test]
    fn resources_take_the_uri_and_mime_type_of_the_target() {
        let t = Target::new("notes://1", Some("text/markdown"));
        let c = <String as IntoResult<kind::Resource>>::into_result("# One".into(), &t).unwrap();
        assert_eq!(
            c,
            [ResourceContents::text(
                "notes://1",
                "text/markdown",
                "# One"
            )]
        );
        let c = <Vec<u8> as IntoResult<kind::Resource>>::into_result(
            vec![1, 2],
            &Target::new("b://x", None),
        )
        .unwrap();
        assert_eq!(
            serde_json::to_value(&c[0]).unwrap(),
            json!({"uri": "b://x", "mimeType": "application/octet-stream", "blob": "AQI="})
        );
        let c = <Json<u8> as IntoResult<kind::Resource>>::into_result(
            Json(7),
            &Target::new("j://x", None),
        )
        .unwrap();
        assert_eq!(
            c,
            [ResourceContents::text("j://x", "application/json", "7")]
        );
    }

    #[test]
    fn prompts() {
        let r =
            <&str as IntoResult<kind::Prompt>>::into_result("Hi", &Target::new("p", None)).unwrap();
        assert_eq!(r.messages, [PromptMessage::user("Hi")]);
    }
}
