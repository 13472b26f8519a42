//! What can be asked in a form: [`ElicitForm`], [`FormField`], and [`ElicitParam`] for
//! declared `#[input(elicit = ...)]` parameters.

use super::{Elicited, Input};
use crate::Error;
use futures_util::future::BoxFuture;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// A Rust type an elicitation form can be made from: a flat object whose fields are text,
/// numbers, booleans or string enums (the spec allows nothing nested). Derive it:
/// `#[derive(serde::Deserialize, schemars::JsonSchema, mcp_runtime::Form)]`; the derive
/// checks every field at compile time.
///
/// ```
/// use mcp_runtime::{Error, Form, Input, tool};
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
/// async fn greet(input: Input) -> Result<String, Error> {
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
/// use mcp_runtime::Form;
/// use mcp_runtime::mrtr::FormField;
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
/// decline or cancel becomes an execution error) or [`Elicited<T>`] (the handler decides).
///
/// ```
/// use mcp_runtime::{Elicited, Form};
/// use mcp_runtime::mrtr::ElicitParam;
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
    ) -> BoxFuture<'a, Result<Self, Error>>;
}

#[diagnostic::do_not_recommend]
impl<T: ElicitForm + 'static> ElicitParam for T {
    fn elicit<'a>(
        input: &'a Input,
        key: &'static str,
        message: String,
    ) -> BoxFuture<'a, Result<Self, Error>> {
        Box::pin(async move { input.elicit::<T>(key, message).await?.accepted() })
    }
}

impl<T: ElicitForm + 'static> ElicitParam for Elicited<T> {
    fn elicit<'a>(
        input: &'a Input,
        key: &'static str,
        message: String,
    ) -> BoxFuture<'a, Result<Self, Error>> {
        Box::pin(input.elicit::<T>(key, message))
    }
}

/// `sampling/createMessage` params for a one-question prompt.
///
/// ```
/// let p = mcp_runtime::mrtr::sampling_request("Name a colour.", 16);
/// assert_eq!(p["maxTokens"], 16);
/// assert_eq!(p["messages"][0]["content"]["text"], "Name a colour.");
/// ```
pub fn sampling_request(text: &str, max_tokens: u32) -> Value {
    json!({
        "messages": [{ "role": "user", "content": { "type": "text", "text": text } }],
        "maxTokens": max_tokens,
    })
}
