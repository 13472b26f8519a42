//! Tool definitions: parameters (arguments and extractors), schemas, handlers.

use super::context::{Context, Logger, Progress, RequestState, State};
use super::extract::{FromRequest, Requirements};
use super::result::{IntoToolResult, ToolError};
use crate::protocol::{CacheHints, CallToolResult};
use futures_util::future::BoxFuture;
use schemars::{JsonSchema, SchemaGenerator};
use serde::Serialize;
use serde::de::{self, DeserializeOwned, Deserializer, Visitor};
use serde_json::{Map, Value, json};
use std::future::Future;
use std::sync::Arc;

/// One parameter of a tool function, as the macro saw it.
#[derive(Debug, Clone, Copy)]
pub struct Param {
    /// The parameter's name: the argument's key in `arguments` and `inputSchema`.
    pub name: &'static str,
    /// `#[arg(description = "...")]`, if given.
    pub description: Option<&'static str>,
}

/// The arguments and request of one `tools/call`, handed to each parameter in turn.
pub struct ToolCall {
    pub(crate) arguments: Map<String, Value>,
    pub(crate) request: Arc<RequestState>,
}

impl ToolCall {
    /// The request context.
    pub fn context(&self) -> Context {
        Context(Arc::clone(&self.request))
    }
    /// Takes the argument `name` out of the call (it can be taken once).
    pub fn take_argument(&mut self, name: &str) -> Option<Value> {
        self.arguments.remove(name)
    }
}

/// What a tool's parameters add to its definition: `inputSchema` properties, and what the
/// server must provide (state, logging).
pub struct Signature {
    generator: SchemaGenerator,
    properties: Map<String, Value>,
    required: Vec<String>,
    pub(crate) requirements: Requirements,
}

impl Default for Signature {
    fn default() -> Self {
        Self::new()
    }
}

impl Signature {
    /// An empty signature (a tool without parameters).
    pub fn new() -> Self {
        Signature {
            generator: crate::schema::generator(),
            properties: Map::new(),
            required: Vec::new(),
            requirements: Requirements::default(),
        }
    }

    /// Adds `param` as an argument of type `T`: a property of `inputSchema`, required
    /// unless `T` can be made from a missing value (`Option<_>`).
    pub fn add_argument<T: DeserializeOwned + JsonSchema>(&mut self, param: &Param) {
        let mut schema = self.generator.subschema_for::<T>().to_value();
        if let (Some(desc), Some(obj)) = (param.description, schema.as_object_mut()) {
            obj.insert("description".into(), json!(desc));
        }
        self.properties.insert(param.name.to_owned(), schema);
        if T::deserialize(Missing).is_err() {
            self.required.push(param.name.to_owned());
        }
    }

    /// What the tool's extractors need from the server.
    pub fn requirements(&mut self) -> &mut Requirements {
        &mut self.requirements
    }

    /// The `inputSchema`: an object with one property per argument.
    pub(crate) fn input_schema(&mut self) -> Value {
        let mut schema = Map::new();
        schema.insert("type".into(), json!("object"));
        if !self.properties.is_empty() {
            schema.insert("properties".into(), Value::Object(self.properties.clone()));
        }
        if !self.required.is_empty() {
            schema.insert("required".into(), json!(self.required));
        }
        schema.insert("additionalProperties".into(), json!(false));
        let defs = self.generator.take_definitions(true);
        if !defs.is_empty() {
            schema.insert("$defs".into(), Value::Object(defs));
        }
        Value::Object(schema)
    }
}

/// A deserializer for an argument the client left out: only `Option`-like types accept it.
pub(crate) struct Missing;

impl<'de> Deserializer<'de> for Missing {
    type Error = de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom("missing"))
    }
    fn deserialize_option<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Self::Error> {
        v.visit_none()
    }
    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

/// A type a tool function can take as a parameter.
///
/// Two kinds exist, told apart by trait, never by the type's spelling:
/// - **arguments**: any `T: Deserialize + JsonSchema` becomes a property of the tool's
///   `inputSchema`, read from `arguments` under the parameter's name (`Option<T>` is not
///   required);
/// - **extractors**: [`Context`], [`Progress`], [`Logger`], [`State<T>`], or your own type
///   implementing this trait. They read the request, not the arguments, and add nothing to
///   the schema.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool parameter",
    label = "not an argument or an extractor",
    note = "an argument type implements `serde::Deserialize` and `schemars::JsonSchema`; an extractor (`Context`, `Progress`, `Logger`, `State<T>`) implements `FromToolCall`"
)]
pub trait FromToolCall: Sized + Send {
    /// Adds what this parameter contributes to the tool's definition.
    fn describe(param: &Param, signature: &mut Signature);

    /// Produces the value for one call.
    fn from_tool_call(call: &mut ToolCall, param: &Param) -> Result<Self, ToolError>;
}

#[diagnostic::do_not_recommend]
impl<T: DeserializeOwned + JsonSchema + Send> FromToolCall for T {
    fn describe(param: &Param, signature: &mut Signature) {
        signature.add_argument::<T>(param);
    }

    fn from_tool_call(call: &mut ToolCall, param: &Param) -> Result<Self, ToolError> {
        let result = match call.arguments.remove(param.name) {
            Some(v) => T::deserialize(v).map_err(|e| e.to_string()),
            None => T::deserialize(Missing).map_err(|_| "missing required argument".to_owned()),
        };
        result.map_err(|e| ToolError::new(format!("Invalid argument `{}`: {e}", param.name)))
    }
}

/// Extractors are tool parameters too.
macro_rules! extractor_params {
    ($($(#[$g:meta])* [$($gen:tt)*] $ty:ty;)*) => {$(
        impl<$($gen)*> FromToolCall for $ty {
            fn describe(_: &Param, signature: &mut Signature) {
                <$ty as FromRequest>::requirements(&mut signature.requirements);
            }
            fn from_tool_call(call: &mut ToolCall, _: &Param) -> Result<Self, ToolError> {
                <$ty as FromRequest>::from_request(&call.context())
            }
        }
    )*};
}

extractor_params! {
    [] Context;
    [] Progress;
    [] Logger;
    [T: Send + Sync + 'static] State<T>;
}

pub(crate) type Handler =
    Arc<dyn Fn(ToolCall) -> BoxFuture<'static, Result<CallToolResult, ToolError>> + Send + Sync>;

/// Behaviour hints for clients (`annotations` of a tool). Unset hints are left out.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

/// An icon for a tool, prompt, resource or the server (`https:` or `data:` URI).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Icon {
    pub src: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sizes: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub theme: Option<String>,
}

impl Icon {
    /// An icon at `src`.
    pub fn new(src: impl Into<String>) -> Self {
        Icon {
            src: src.into(),
            mime_type: None,
            sizes: Vec::new(),
            theme: None,
        }
    }
    /// Sets the MIME type.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }
    /// Adds a size (`"48x48"` or `"any"`).
    pub fn size(mut self, size: impl Into<String>) -> Self {
        self.sizes.push(size.into());
        self
    }
    /// Sets the theme (`"light"` or `"dark"`).
    pub fn theme(mut self, theme: impl Into<String>) -> Self {
        self.theme = Some(theme.into());
        self
    }
}

/// A tool: its definition (as listed by `tools/list`) and its handler.
///
/// `#[tool]` builds these; [`ToolDef::new`] builds one by hand.
pub struct ToolDef {
    pub(crate) name: String,
    pub(crate) title: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) annotations: Option<ToolAnnotations>,
    pub(crate) icons: Vec<Icon>,
    pub(crate) meta: Option<Map<String, Value>>,
    pub(crate) cache: Option<CacheHints>,
    pub(crate) input_schema: Value,
    pub(crate) output_schema: Option<Value>,
    pub(crate) requirements: Requirements,
    pub(crate) handler: Handler,
}

impl ToolDef {
    /// A tool named `name` whose parameters are described by `signature`, served by
    /// `handler`. The handler's output type gives the `outputSchema` (see [`Json`]).
    ///
    /// [`Json`]: crate::Json
    pub fn new<F, Fut, R>(name: impl Into<String>, mut signature: Signature, handler: F) -> ToolDef
    where
        F: Fn(ToolCall) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, ToolError>> + Send + 'static,
        R: IntoToolResult,
    {
        let handler: Handler = Arc::new(move |call| {
            let fut = handler(call);
            Box::pin(async move { fut.await?.into_tool_result() })
        });
        ToolDef {
            name: name.into(),
            title: None,
            description: None,
            annotations: None,
            icons: Vec::new(),
            meta: None,
            cache: None,
            input_schema: signature.input_schema(),
            output_schema: R::output_schema(),
            requirements: std::mem::take(&mut signature.requirements),
            handler,
        }
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// Sets the human-readable title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }
    /// Sets the description (shown to the model).
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
    /// Sets the behaviour hints.
    pub fn annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.annotations = Some(annotations);
        self
    }
    /// Adds an icon.
    pub fn icon(mut self, icon: Icon) -> Self {
        self.icons.push(icon);
        self
    }
    /// Adds an entry to the tool's `_meta`.
    pub fn meta(mut self, key: impl Into<String>, value: Value) -> Self {
        self.meta
            .get_or_insert_with(Map::new)
            .insert(key.into(), value);
        self
    }
    /// Sets this tool's caching hints; `tools/list` uses the shortest TTL and the most
    /// restrictive scope of all tools and the server default.
    pub fn cache(mut self, hints: CacheHints) -> Self {
        self.cache = Some(hints);
        self
    }
    /// Replaces the generated `inputSchema` with a hand-written one, served as given.
    pub fn input_schema(mut self, schema: Value) -> Self {
        self.input_schema = schema;
        self
    }

    /// The definition as `tools/list` shows it.
    pub(crate) fn to_json(&self) -> Value {
        let mut t = Map::new();
        t.insert("name".into(), json!(self.name));
        if let Some(title) = &self.title {
            t.insert("title".into(), json!(title));
        }
        if let Some(d) = &self.description {
            t.insert("description".into(), json!(d));
        }
        t.insert("inputSchema".into(), self.input_schema.clone());
        if let Some(o) = &self.output_schema {
            t.insert("outputSchema".into(), o.clone());
        }
        if let Some(a) = &self.annotations {
            t.insert("annotations".into(), json!(a));
        }
        if !self.icons.is_empty() {
            t.insert("icons".into(), json!(self.icons));
        }
        if let Some(m) = &self.meta {
            t.insert("_meta".into(), Value::Object(m.clone()));
        }
        Value::Object(t)
    }
}

impl std::fmt::Debug for ToolDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolDef")
            .field("name", &self.name)
            .field("input_schema", &self.input_schema)
            .finish_non_exhaustive()
    }
}

/// Checks a tool name: 1 to 64 characters from `[A-Za-z0-9_.-]`.
pub fn valid_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn option_arguments_are_not_required() {
        let mut sig = Signature::new();
        <String as FromToolCall>::describe(
            &Param {
                name: "city",
                description: Some("City name"),
            },
            &mut sig,
        );
        <Option<u8> as FromToolCall>::describe(
            &Param {
                name: "days",
                description: None,
            },
            &mut sig,
        );
        <Progress as FromToolCall>::describe(
            &Param {
                name: "p",
                description: None,
            },
            &mut sig,
        );
        let s = sig.input_schema();
        assert_eq!(s["required"], json!(["city"]));
        assert_eq!(s["properties"]["city"]["description"], "City name");
        assert!(s["properties"].get("p").is_none());
        assert_eq!(s["additionalProperties"], false);
    }

    #[test]
    fn tool_names() {
        assert!(valid_tool_name("get_weather.v2-beta"));
        assert!(!valid_tool_name(""));
        assert!(!valid_tool_name("has space"));
        assert!(!valid_tool_name(&"x".repeat(65)));
    }
}
