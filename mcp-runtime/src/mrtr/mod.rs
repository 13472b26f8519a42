//! Multi round-trip requests (MRTR): a handler asks the client for input (elicitation,
//! sampling, roots) by returning `input_required`; the client answers on a retry.
//!
//! The handler is plain straight-line code. Each [`Input`] method either returns what the
//! client answered (this round or an earlier one) or asks for it, which ends the round.
//! Work done between questions goes through [`Input::step`]: its result is recorded in the
//! sealed `requestState`, so a later round replays it instead of running it again. Nothing
//! is kept in server memory between rounds: any instance holding the key ring can serve the
//! next round.

pub mod state;

use crate::protocol::{ClientCapabilities, RpcError};
use crate::server::ToolError;
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::future::Future;
use std::sync::{Arc, Mutex};

/// What the client answered to an elicitation.
///
/// ```
/// use mcp_runtime::{Elicited, Form, tool};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema, Form)]
/// struct Sure {
///     ok: bool,
/// }
///
/// /// Deploys a service after the user confirms.
/// #[tool]
/// #[mcp_runtime::needs_input]
/// async fn deploy(service: String, #[input(elicit = "Really deploy {service}?")] sure: Elicited<Sure>) -> String {
///     match sure {
///         Elicited::Accept(Sure { ok: true }) => format!("deployed {service}"),
///         Elicited::Accept(_) | Elicited::Decline => "not deployed".into(),
///         Elicited::Cancel => "cancelled".into(),
///     }
/// }
///
/// assert_eq!(Elicited::Accept(3).accepted().unwrap(), 3);
/// assert!(Elicited::<u8>::Decline.accepted().is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Elicited<T> {
    /// The user submitted the form.
    Accept(T),
    /// The user declined.
    Decline,
    /// The user dismissed the request.
    Cancel,
}

impl<T> Elicited<T> {
    /// The accepted value, or an `isError` result saying the user declined or cancelled.
    pub fn accepted(self) -> Result<T, ToolError> {
        match self {
            Elicited::Accept(v) => Ok(v),
            Elicited::Decline => Err(ToolError::new("The user declined the request for input.")),
            Elicited::Cancel => Err(ToolError::new("The user cancelled the request for input.")),
        }
    }
}

/// The state of one request's inputs across rounds.
pub(crate) struct InputState {
    pub(crate) answers: BTreeMap<String, Value>,
    pub(crate) steps: BTreeMap<String, Value>,
    /// Answers sent with this retry, for keys asked in the previous round.
    pub(crate) responses: Map<String, Value>,
    /// What to ask now: key → `{method, params}`.
    pub(crate) pending: BTreeMap<String, Value>,
    pub(crate) capabilities: ClientCapabilities,
    pub(crate) round: u32,
}

/// Asks the client for input during a `tools/call`, `prompts/get` or `resources/read`.
///
/// Take it as a parameter. Ask independent questions together (`tokio::join!`) so they go
/// in one round; ask dependent ones in sequence.
///
/// ```
/// use mcp_runtime::{tool, Input, ToolError};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Confirm { ok: bool }
///
/// /// Deletes a file after the user confirms.
/// #[tool]
/// async fn delete(path: String, input: Input) -> Result<String, ToolError> {
///     let size = input.step("size", async { 42u64 }).await?; // runs once across rounds
///     let confirm: Confirm = input.elicit("confirm", format!("Delete {path} ({size} bytes)?")).await?.accepted()?;
///     Ok(if confirm.ok { format!("deleted {path}") } else { "kept".into() })
/// }
/// ```
#[derive(Clone)]
pub struct Input(pub(crate) Arc<Mutex<InputState>>);

/// The error that ends a round: the runtime turns it into `input_required`.
fn input_required() -> ToolError {
    ToolError(crate::server::ToolErrorKind::InputRequired)
}

impl Input {
    fn lock(&self) -> std::sync::MutexGuard<'_, InputState> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn require(&self, path: &str, required: Value) -> Result<(), ToolError> {
        if self.lock().capabilities.has(path) {
            Ok(())
        } else {
            Err(ToolError::protocol(RpcError::missing_capability(
                format!(
                    "This request needs input through `{path}`, which the client did not declare"
                ),
                required,
            )))
        }
    }

    /// The answer to `key` if there is a valid one (validated by `check`), else asks with
    /// `request`. A bad answer is asked again, with the reason prepended by `reask`.
    fn answer_or_ask(
        &self,
        key: &str,
        request: Value,
        check: impl Fn(&Value) -> Result<(), String>,
        reask: impl Fn(&Value, &str) -> Value,
    ) -> Result<Value, ToolError> {
        let mut st = self.lock();
        if let Some(v) = st.answers.get(key) {
            return Ok(v.clone());
        }
        if let Some(v) = st.responses.remove(key) {
            match check(&v) {
                Ok(()) => {
                    st.answers.insert(key.to_owned(), v.clone());
                    return Ok(v);
                }
                Err(why) => {
                    st.pending.insert(key.to_owned(), reask(&request, &why));
                    return Err(input_required());
                }
            }
        }
        st.pending.insert(key.to_owned(), request);
        Err(input_required())
    }

    /// Asks the user to fill in a form whose schema comes from `T` (a flat object of
    /// strings, numbers, booleans and enums).
    pub async fn elicit<T: DeserializeOwned + JsonSchema>(
        &self,
        key: &str,
        message: impl Into<String>,
    ) -> Result<Elicited<T>, ToolError> {
        self.require("elicitation", json!({ "elicitation": {} }))?;
        let schema = crate::schema::inline_schema_for::<T>();
        let mut requested = schema.clone();
        if let Some(o) = requested.as_object_mut() {
            o.remove("$schema");
            o.remove("title");
        }
        let message = message.into();
        let request = json!({
            "method": "elicitation/create",
            "params": { "mode": "form", "message": message, "requestedSchema": requested },
        });
        let validator = crate::schema::ArgumentValidator::compile(&schema).map_err(|e| {
            ToolError::protocol(RpcError::internal(format!(
                "the elicitation schema does not compile: {e}"
            )))
        })?;
        let check = |v: &Value| -> Result<(), String> {
            match v.get("action").and_then(Value::as_str) {
                Some("accept") => {
                    let content = v
                        .get("content")
                        .ok_or("the accepted answer has no content")?;
                    validator.validate(content)?;
                    serde_json::from_value::<T>(content.clone())
                        .map(drop)
                        .map_err(|e| e.to_string())
                }
                Some("decline" | "cancel") => Ok(()),
                _ => Err("the answer needs an `action` of accept, decline or cancel".into()),
            }
        };
        let reask = |req: &Value, why: &str| {
            let mut r = req.clone();
            r["params"]["message"] = json!(format!(
                "The previous answer was not valid ({why}). {message}"
            ));
            r
        };
        let v = self.answer_or_ask(key, request, check, reask)?;
        Ok(match v["action"].as_str() {
            Some("accept") => Elicited::Accept(
                serde_json::from_value(v["content"].clone())
                    .map_err(|e| ToolError::new(e.to_string()))?,
            ),
            Some("decline") => Elicited::Decline,
            _ => Elicited::Cancel,
        })
    }

    /// Asks the user to complete a flow at `url` (URL-mode elicitation); returns whether
    /// they accepted.
    pub async fn elicit_url(
        &self,
        key: &str,
        message: impl Into<String>,
        url: impl Into<String>,
    ) -> Result<Elicited<()>, ToolError> {
        self.require("elicitation.url", json!({ "elicitation": { "url": {} } }))?;
        let request = json!({
            "method": "elicitation/create",
            "params": { "mode": "url", "message": message.into(), "url": url.into() },
        });
        let check = |v: &Value| match v.get("action").and_then(Value::as_str) {
            Some("accept" | "decline" | "cancel") => Ok(()),
            _ => Err("the answer needs an `action`".to_owned()),
        };
        let v = self.answer_or_ask(key, request, check, |r, _| r.clone())?;
        Ok(match v["action"].as_str() {
            Some("accept") => Elicited::Accept(()),
            Some("decline") => Elicited::Decline,
            _ => Elicited::Cancel,
        })
    }

    /// Asks the client's model for a completion (`sampling/createMessage`, deprecated in
    /// 2026-07-28). `params` are the request's params (`messages`, `maxTokens`, ...);
    /// returns the client's `CreateMessageResult`.
    pub async fn sample(&self, key: &str, params: Value) -> Result<Value, ToolError> {
        self.require("sampling", json!({ "sampling": {} }))?;
        let request = json!({ "method": "sampling/createMessage", "params": params });
        let check = |v: &Value| {
            if v.get("content").is_some() {
                Ok(())
            } else {
                Err("the answer has no `content`".to_owned())
            }
        };
        self.answer_or_ask(key, request, check, |r, _| r.clone())
    }

    /// Asks the client for its roots (`roots/list`, deprecated in 2026-07-28).
    pub async fn roots(&self, key: &str) -> Result<Vec<Value>, ToolError> {
        self.require("roots", json!({ "roots": {} }))?;
        let request = json!({ "method": "roots/list", "params": {} });
        let check = |v: &Value| {
            if v.get("roots").is_some_and(Value::is_array) {
                Ok(())
            } else {
                Err("the answer has no `roots` array".to_owned())
            }
        };
        let v = self.answer_or_ask(key, request, check, |r, _| r.clone())?;
        Ok(v["roots"].as_array().cloned().unwrap_or_default())
    }

    /// Runs `work` once for this request, across all its rounds: the result is recorded in
    /// the sealed `requestState` and a later round gets the recorded value back without
    /// running `work` again.
    pub async fn step<T, F>(&self, key: &str, work: F) -> Result<T, ToolError>
    where
        T: Serialize + DeserializeOwned,
        F: Future<Output = T>,
    {
        if let Some(v) = self.lock().steps.get(key).cloned() {
            return serde_json::from_value(v)
                .map_err(|e| ToolError::new(format!("step `{key}`: {e}")));
        }
        let out = work.await;
        let v =
            serde_json::to_value(&out).map_err(|e| ToolError::new(format!("step `{key}`: {e}")))?;
        self.lock().steps.insert(key.to_owned(), v);
        Ok(out)
    }

    /// Which round this is (1 for the first call).
    pub fn round(&self) -> u32 {
        self.lock().round
    }
}

/// A Rust type an elicitation form can be made from: a flat object whose fields are text,
/// numbers, booleans or string enums (the spec allows nothing nested). Derive it:
/// `#[derive(serde::Deserialize, schemars::JsonSchema, mcp_runtime::Form)]`; the derive
/// checks every field at compile time.
///
/// ```
/// use mcp_runtime::{Form, Input, ToolError, tool};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema, Form)]
/// struct Login {
///     /// Your login
///     login: String,
///     remember: Option<bool>,
/// }
///
/// /// Greets the user by login.
/// #[tool]
/// async fn greet(input: Input) -> Result<String, ToolError> {
///     let user: Login = input.elicit("login", "Who are you?").await?.accepted()?;
///     Ok(format!("hello {} (remembered: {:?})", user.login, user.remember))
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an elicitation form",
    label = "not a form",
    note = "add `#[derive(mcp_runtime::Form)]` to a struct whose fields are text, numbers, booleans or string enums"
)]
pub trait ElicitForm: DeserializeOwned + JsonSchema + Send {}

/// A type a form field can have: text, numbers, booleans, string enums
/// (`#[derive(Form)]` on a unit-only enum), and `Option` of these.
///
/// ```
/// use mcp_runtime::{Form, FormField};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema, Form)]
/// #[serde(rename_all = "lowercase")]
/// enum Size {
///     Small,
///     Large,
/// }
///
/// #[derive(serde::Deserialize, schemars::JsonSchema, Form)]
/// struct Order {
///     size: Size,
///     quantity: u32,
///     note: Option<String>,
/// }
///
/// fn field<T: FormField>() {}
/// field::<Size>();
/// field::<Option<u32>>();
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a field of an elicitation form",
    label = "not a primitive",
    note = "forms are flat: a field is text, a number, a boolean, a string enum (`#[derive(Form)]` on a unit-only enum) or an `Option` of these"
)]
pub trait FormField {}

macro_rules! form_fields {
    ($($t:ty),*) => {$(impl FormField for $t {})*};
}
form_fields!(String, bool, i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);
impl<T: FormField> FormField for Option<T> {}

/// A parameter filled by a declared elicitation (`#[input(elicit = "...")]`): `T` (a
/// decline or cancel becomes an `isError` result) or [`Elicited<T>`] (the handler decides).
///
/// ```
/// use mcp_runtime::{ElicitParam, Elicited, Form};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema, Form)]
/// struct Approval {
///     approved: bool,
/// }
///
/// fn elicitable<T: ElicitParam>() {}
/// elicitable::<Approval>(); // a decline becomes an error result
/// elicitable::<Elicited<Approval>>(); // the handler sees decline and cancel
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot receive an elicitation",
    label = "not a form",
    note = "an elicited parameter is a form type `T: Form` (decline becomes an error result) or `Elicited<T>` (you handle decline and cancel)"
)]
pub trait ElicitParam: Sized + Send {
    /// Asks (or takes the answer) under `key`.
    fn elicit<'a>(
        input: &'a Input,
        key: &'static str,
        message: String,
    ) -> futures_util::future::BoxFuture<'a, Result<Self, ToolError>>;
}

#[diagnostic::do_not_recommend]
impl<T: ElicitForm + 'static> ElicitParam for T {
    fn elicit<'a>(
        input: &'a Input,
        key: &'static str,
        message: String,
    ) -> futures_util::future::BoxFuture<'a, Result<Self, ToolError>> {
        Box::pin(async move { input.elicit::<T>(key, message).await?.accepted() })
    }
}

impl<T: ElicitForm + 'static> ElicitParam for Elicited<T> {
    fn elicit<'a>(
        input: &'a Input,
        key: &'static str,
        message: String,
    ) -> futures_util::future::BoxFuture<'a, Result<Self, ToolError>> {
        Box::pin(input.elicit::<T>(key, message))
    }
}

/// `sampling/createMessage` params for a one-question prompt.
pub fn sampling_request(text: &str, max_tokens: u32) -> Value {
    json!({
        "messages": [{ "role": "user", "content": { "type": "text", "text": text } }],
        "maxTokens": max_tokens,
    })
}
