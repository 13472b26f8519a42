//! What a prompt adds to a definition (its arguments), and the messages it returns.

use super::call::Call;
use super::kind::Prompt;
use super::output::IntoResult;
use super::signature::{PromptArgument, Signature};
use super::{Def, Icon};
use crate::Error;
use crate::protocol::{Content, Role};
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::future::Future;

/// One message of a prompt.
///
/// ```
/// use mcp_runtime::{Content, PromptMessage};
/// use mcp_runtime::protocol::Role;
///
/// let question = PromptMessage::user("What changed in this diff?");
/// let answer = PromptMessage::assistant(Content::text("Let me look."));
/// assert_eq!(question.role, Role::User);
/// assert_eq!(
///     serde_json::to_value(&answer).unwrap(),
///     serde_json::json!({"role": "assistant", "content": {"type": "text", "text": "Let me look."}})
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct PromptMessage {
    /// `user` or `assistant`.
    pub role: Role,
    /// Text, image, audio, embedded resource or resource link.
    pub content: Content,
}

impl PromptMessage {
    /// A message from the user.
    pub fn user(content: impl Into<Content>) -> Self {
        PromptMessage {
            role: Role::User,
            content: content.into(),
        }
    }
    /// A message from the assistant.
    pub fn assistant(content: impl Into<Content>) -> Self {
        PromptMessage {
            role: Role::Assistant,
            content: content.into(),
        }
    }
}

/// The result of `prompts/get`.
///
/// ```
/// use mcp_runtime::{GetPromptResult, PromptMessage, Server, prompt, prompts};
///
/// /// Summarizes a topic.
/// #[prompt]
/// async fn summarize(topic: String) -> GetPromptResult {
///     GetPromptResult {
///         description: Some(format!("A summary of {topic}")),
///         messages: vec![PromptMessage::user(format!("Summarize {topic} in three lines."))],
///     }
/// }
///
/// let server = Server::builder("x", "1.0").prompts(prompts![summarize]).build().unwrap();
/// # drop(server);
/// ```
#[derive(Debug, Clone, PartialEq, Default, Serialize, serde::Deserialize)]
pub struct GetPromptResult {
    /// An optional description of this rendering of the prompt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The messages.
    pub messages: Vec<PromptMessage>,
}

/// A prompt's part of its definition.
#[doc(hidden)]
pub struct PromptSpec {
    pub(crate) arguments: Vec<PromptArgument>,
    /// What serves prompts: named here, so that only a server with prompts links it.
    pub(crate) engine: &'static crate::server::methods::PromptEngine,
}

impl Def<Prompt> {
    /// A prompt named `name` whose parameters are described by `signature`.
    ///
    /// ```
    /// use mcp_runtime::{Error, PromptMessage, Server};
    /// use mcp_runtime::def::PromptDef;
    /// use mcp_runtime::handler::{Call, Param, Signature};
    /// use mcp_runtime::kind::Prompt;
    ///
    /// let mut signature = Signature::new();
    /// signature.add_text_argument::<String>(&Param::new("topic").description("What to write about"));
    /// let haiku = PromptDef::new("haiku", signature, |mut call: Call<Prompt>| async move {
    ///     let topic: String = call.argument("topic")?;
    ///     Ok::<_, Error>(PromptMessage::user(format!("Write a haiku about {topic}.")))
    /// })
    /// .description("Writes a haiku.");
    /// assert!(Server::builder("x", "1.0").prompt(haiku).build().is_ok());
    /// ```
    pub fn new<F, Fut, R>(name: impl Into<String>, signature: Signature, handler: F) -> Self
    where
        F: Fn(Call<Prompt>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, Error>> + Send + 'static,
        R: IntoResult<Prompt>,
    {
        let spec = PromptSpec {
            arguments: signature.arguments,
            engine: &crate::server::methods::prompts::ENGINE,
        };
        Def::from_parts(
            name.into(),
            spec,
            signature.requirements,
            super::erase(handler),
        )
    }

    /// The definition as `prompts/list` shows it.
    pub(crate) fn to_json(&self) -> Box<RawValue> {
        #[derive(Serialize)]
        struct Wire<'a> {
            name: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            title: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            description: Option<&'a str>,
            #[serde(skip_serializing_if = "<[PromptArgument]>::is_empty")]
            arguments: &'a [PromptArgument],
            #[serde(skip_serializing_if = "<[Icon]>::is_empty")]
            icons: &'a [Icon],
            #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
            meta: Option<&'a Map<String, Value>>,
        }
        let item = &self.item;
        serde_json::value::to_raw_value(&Wire {
            name: &item.name,
            title: item.title.as_deref(),
            description: item.description.as_deref(),
            arguments: &self.spec.arguments,
            icons: &item.icons,
            meta: item.meta.as_ref(),
        })
        .expect("prompt definitions serialize")
    }
}

impl From<String> for Content {
    fn from(s: String) -> Content {
        Content::text(s)
    }
}

impl From<&str> for Content {
    fn from(s: &str) -> Content {
        Content::text(s)
    }
}
