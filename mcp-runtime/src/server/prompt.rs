//! Prompts: arguments, messages, handlers.

use super::completion::{Completer, IntoCompleter};
use super::context::{Context, Logger, Progress, RequestState, State};
use super::extract::{FromRequest, Requirements};
use super::result::ToolError;
use super::tool::{Icon, Missing, Param};
use crate::protocol::{Content, Role, RpcError};
use futures_util::future::BoxFuture;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

/// One message of a prompt.
///
/// ```
/// use mcp_runtime::{Content, PromptMessage, Role};
///
/// let question = PromptMessage::user("What changed in this diff?");
/// let answer = PromptMessage::assistant(Content::text("Let me look."));
/// assert_eq!(question.role, Role::User);
/// assert_eq!(
///     serde_json::to_value(&answer).unwrap(),
///     serde_json::json!({"role": "assistant", "content": {"type": "text", "text": "Let me look."}})
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
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
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct GetPromptResult {
    /// An optional description of this rendering of the prompt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The messages.
    pub messages: Vec<PromptMessage>,
}

/// A value a prompt can return: messages (`Vec<PromptMessage>`, `PromptMessage`), text (one
/// user message), [`GetPromptResult`], or a `Result` of these.
///
/// ```
/// use mcp_runtime::{GetPromptResult, IntoPromptResult, PromptMessage, ToolError};
///
/// /// Question and answer pairs, replayed as a conversation.
/// struct Conversation(Vec<(String, String)>);
///
/// impl IntoPromptResult for Conversation {
///     fn into_prompt_result(self) -> Result<GetPromptResult, ToolError> {
///         let messages = self.0.into_iter()
///             .flat_map(|(q, a)| [PromptMessage::user(q), PromptMessage::assistant(a)])
///             .collect();
///         Ok(GetPromptResult { description: None, messages })
///     }
/// }
///
/// let result = Conversation(vec![("2 + 2?".into(), "4".into())]).into_prompt_result().unwrap();
/// assert_eq!(result.messages.len(), 2);
/// assert_eq!("Hi".into_prompt_result().unwrap().messages.len(), 1); // text: one user message
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a prompt",
    label = "this return type",
    note = "return `Vec<PromptMessage>`, a `PromptMessage`, text (one user message), `GetPromptResult`, or a `Result` of one of these"
)]
pub trait IntoPromptResult: Send {
    /// Converts the value.
    fn into_prompt_result(self) -> Result<GetPromptResult, ToolError>;
}

impl IntoPromptResult for GetPromptResult {
    fn into_prompt_result(self) -> Result<GetPromptResult, ToolError> {
        Ok(self)
    }
}
impl IntoPromptResult for Vec<PromptMessage> {
    fn into_prompt_result(self) -> Result<GetPromptResult, ToolError> {
        Ok(GetPromptResult {
            description: None,
            messages: self,
        })
    }
}
impl IntoPromptResult for PromptMessage {
    fn into_prompt_result(self) -> Result<GetPromptResult, ToolError> {
        vec![self].into_prompt_result()
    }
}
impl IntoPromptResult for String {
    fn into_prompt_result(self) -> Result<GetPromptResult, ToolError> {
        PromptMessage::user(self).into_prompt_result()
    }
}
impl IntoPromptResult for &'static str {
    fn into_prompt_result(self) -> Result<GetPromptResult, ToolError> {
        PromptMessage::user(self).into_prompt_result()
    }
}
impl<T: IntoPromptResult, E: Into<ToolError> + Send> IntoPromptResult for Result<T, E> {
    fn into_prompt_result(self) -> Result<GetPromptResult, ToolError> {
        self.map_err(Into::into)?.into_prompt_result()
    }
}

/// The arguments and request of one `prompts/get`.
///
/// ```
/// use mcp_runtime::{PromptCall, PromptDef, PromptSignature, ToolError};
///
/// let def = PromptDef::new("greeting", PromptSignature::new(), |call: PromptCall| async move {
///     // A prompt that may ask the client for input takes it from the call.
///     let _input = call.input();
///     Ok::<_, ToolError>("Say hello to the team.")
/// });
/// assert_eq!(def.name(), "greeting");
/// ```
pub struct PromptCall {
    pub(crate) arguments: BTreeMap<String, String>,
    pub(crate) request: Arc<RequestState>,
}

impl PromptCall {
    /// The request's [`Input`](crate::Input), to ask the client for more.
    pub fn input(&self) -> Result<crate::Input, ToolError> {
        <crate::Input as FromRequest>::from_request(&Context(Arc::clone(&self.request)))
    }
}

/// What a prompt's parameters add to its definition: its `arguments` list.
///
/// ```
/// use mcp_runtime::{Param, PromptDef, PromptSignature, ToolError};
///
/// let mut signature = PromptSignature::new();
/// signature.add_argument::<String>(&Param { name: "topic", description: Some("The topic"), header: None });
/// signature.add_argument::<Option<u32>>(&Param { name: "lines", description: None, header: None });
/// let def = PromptDef::new("poem", signature, |_call| async { Ok::<_, ToolError>("Write a poem.") });
/// assert_eq!(def.name(), "poem");
/// ```
#[derive(Default)]
pub struct PromptSignature {
    arguments: Vec<(String, Option<String>, bool)>,
    pub(crate) requirements: Requirements,
}

impl PromptSignature {
    /// An empty signature.
    pub fn new() -> Self {
        Self::default()
    }
    /// Adds a string-valued argument, required unless `T` accepts a missing value.
    pub fn add_argument<T: DeserializeOwned>(&mut self, param: &Param) {
        let required = T::deserialize(Missing).is_err();
        self.arguments.push((
            param.name.to_owned(),
            param.description.map(str::to_owned),
            required,
        ));
    }
    /// What the prompt's extractors need.
    pub fn requirements(&mut self) -> &mut Requirements {
        &mut self.requirements
    }
}

/// A type a prompt function can take as a parameter: an argument (any `T: Deserialize`,
/// parsed from the argument's string value; `Option<T>` is not required) or an extractor.
///
/// ```
/// use mcp_runtime::{FromPromptCall, Param, PromptCall, PromptDef, PromptMessage, PromptSignature};
/// use mcp_runtime::ToolError;
///
/// let topic = Param { name: "topic", description: Some("What to write about"), header: None };
/// let mut signature = PromptSignature::new();
/// <String as FromPromptCall>::describe(&topic, &mut signature);
/// let haiku = PromptDef::new("haiku", signature, move |mut call: PromptCall| async move {
///     let topic = String::from_prompt_call(&mut call, &topic)?;
///     Ok::<_, ToolError>(PromptMessage::user(format!("Write a haiku about {topic}.")))
/// });
/// assert_eq!(haiku.name(), "haiku");
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a prompt parameter",
    label = "not an argument or an extractor",
    note = "prompt arguments are strings parsed into any `serde::Deserialize` type; extractors are `Context`, `Progress`, `Logger`, `Input` and `State<T>`"
)]
pub trait FromPromptCall: Sized + Send {
    /// Adds what this parameter contributes to the prompt's definition.
    fn describe(param: &Param, signature: &mut PromptSignature);
    /// Produces the value for one call.
    fn from_prompt_call(call: &mut PromptCall, param: &Param) -> Result<Self, ToolError>;
}

#[diagnostic::do_not_recommend]
impl<T: DeserializeOwned + Send> FromPromptCall for T {
    fn describe(param: &Param, signature: &mut PromptSignature) {
        signature.add_argument::<T>(param);
    }
    fn from_prompt_call(call: &mut PromptCall, param: &Param) -> Result<Self, ToolError> {
        let invalid = |e: String| {
            ToolError::protocol(RpcError::invalid_params(format!(
                "invalid argument `{}`: {e}",
                param.name
            )))
        };
        match call.arguments.remove(param.name) {
            Some(s) => super::plain::from_str(&s).map_err(invalid),
            None => {
                T::deserialize(Missing).map_err(|_| invalid("missing required argument".into()))
            }
        }
    }
}

macro_rules! prompt_extractors {
    ($([$($gen:tt)*] $ty:ty;)*) => {$(
        impl<$($gen)*> FromPromptCall for $ty {
            fn describe(_: &Param, signature: &mut PromptSignature) {
                <$ty as FromRequest>::requirements(&mut signature.requirements);
            }
            fn from_prompt_call(call: &mut PromptCall, _: &Param) -> Result<Self, ToolError> {
                <$ty as FromRequest>::from_request(&Context(Arc::clone(&call.request)))
            }
        }
    )*};
}

prompt_extractors! {
    [] crate::mrtr::Input;
    [] Context;
    [] Progress;
    [] Logger;
    [T: Send + Sync + 'static] State<T>;
}

pub(crate) type PromptHandler =
    Arc<dyn Fn(PromptCall) -> BoxFuture<'static, Result<GetPromptResult, ToolError>> + Send + Sync>;

/// A prompt: its definition (as listed by `prompts/list`) and its handler.
///
/// `#[prompt]` builds these; [`PromptDef::new`] builds one by hand.
///
/// ```
/// use mcp_runtime::{PromptDef, PromptMessage, PromptSignature, Server, ToolError, prompt, prompts};
///
/// /// Asks for a code review.
/// #[prompt]
/// async fn review() -> PromptMessage {
///     PromptMessage::user("Review my last commit.")
/// }
///
/// let standup = PromptDef::new("standup", PromptSignature::new(), |_call| async {
///     Ok::<_, ToolError>("Summarize what I did yesterday.")
/// })
/// .title("Stand-up")
/// .description("Drafts a stand-up update.");
/// let server = Server::builder("x", "1.0").prompts(prompts![review]).prompt(standup).build();
/// assert!(server.is_ok());
/// ```
pub struct PromptDef {
    pub(crate) name: String,
    pub(crate) title: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) icons: Vec<Icon>,
    pub(crate) meta: Option<Map<String, Value>>,
    pub(crate) arguments: Vec<(String, Option<String>, bool)>,
    pub(crate) requirements: Requirements,
    pub(crate) completers: BTreeMap<String, Completer>,
    pub(crate) handler: PromptHandler,
}

impl PromptDef {
    /// A prompt named `name` whose parameters are described by `signature`.
    pub fn new<F, Fut, R>(
        name: impl Into<String>,
        signature: PromptSignature,
        handler: F,
    ) -> PromptDef
    where
        F: Fn(PromptCall) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, ToolError>> + Send + 'static,
        R: IntoPromptResult,
    {
        let handler: PromptHandler = Arc::new(move |call| {
            let fut = handler(call);
            Box::pin(async move { fut.await?.into_prompt_result() })
        });
        PromptDef {
            name: name.into(),
            title: None,
            description: None,
            icons: Vec::new(),
            meta: None,
            arguments: signature.arguments,
            requirements: signature.requirements,
            completers: BTreeMap::new(),
            handler,
        }
    }
    /// The prompt's name.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// Sets the title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }
    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
    /// Adds an icon.
    pub fn icon(mut self, icon: Icon) -> Self {
        self.icons.push(icon);
        self
    }
    /// Adds an entry to the prompt's `_meta`.
    pub fn meta(mut self, key: impl Into<String>, value: Value) -> Self {
        self.meta
            .get_or_insert_with(Map::new)
            .insert(key.into(), value);
        self
    }
    /// Completes the argument `argument` with `completer`.
    pub fn completer<A, C: IntoCompleter<A>>(
        mut self,
        argument: impl Into<String>,
        completer: C,
    ) -> Self {
        self.completers
            .insert(argument.into(), completer.into_completer());
        self
    }

    /// The definition as `prompts/list` shows it.
    pub(crate) fn to_json(&self) -> Value {
        let mut p = Map::new();
        p.insert("name".into(), json!(self.name));
        if let Some(t) = &self.title {
            p.insert("title".into(), json!(t));
        }
        if let Some(d) = &self.description {
            p.insert("description".into(), json!(d));
        }
        if !self.arguments.is_empty() {
            let args: Vec<Value> = self
                .arguments
                .iter()
                .map(|(name, desc, required)| {
                    let mut a = Map::new();
                    a.insert("name".into(), json!(name));
                    if let Some(d) = desc {
                        a.insert("description".into(), json!(d));
                    }
                    a.insert("required".into(), json!(required));
                    Value::Object(a)
                })
                .collect();
            p.insert("arguments".into(), Value::Array(args));
        }
        if !self.icons.is_empty() {
            p.insert("icons".into(), json!(self.icons));
        }
        if let Some(m) = &self.meta {
            p.insert("_meta".into(), Value::Object(m.clone()));
        }
        Value::Object(p)
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
