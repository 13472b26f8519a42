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
///
/// ```
/// use mcp_runtime::{Param, Signature};
///
/// let city = Param { name: "city", description: Some("City name"), header: Some("City") };
/// let mut signature = Signature::new();
/// signature.add_argument::<String>(&city);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Param {
    /// The parameter's name: the argument's key in `arguments` and `inputSchema`.
    pub name: &'static str,
    /// `#[arg(description = "...")]`, if given.
    pub description: Option<&'static str>,
    /// `#[arg(header = "Region")]`: mirrored into the `Mcp-Param-Region` HTTP header.
    pub header: Option<&'static str>,
}

/// The arguments and request of one `tools/call`, handed to each parameter in turn.
///
/// ```
/// use mcp_runtime::{FromToolCall, Param, Signature, ToolCall, ToolDef, ToolError};
///
/// let text = Param { name: "text", description: None, header: None };
/// let mut signature = Signature::new();
/// <String as FromToolCall>::describe(&text, &mut signature);
/// let echo = ToolDef::new("echo", signature, move |mut call: ToolCall| async move {
///     let text = String::from_tool_call(&mut call, &text)?;
///     Ok::<_, ToolError>(format!("{text} (request {})", call.context().request_id()))
/// });
/// assert_eq!(echo.name(), "echo");
/// ```
pub struct ToolCall {
    pub(crate) arguments: Map<String, Value>,
    pub(crate) request: Arc<RequestState>,
}

impl ToolCall {
    /// The request context.
    pub fn context(&self) -> Context {
        Context(Arc::clone(&self.request))
    }
    /// The request's [`Input`](crate::Input), to ask the client for more.
    pub fn input(&self) -> Result<crate::Input, ToolError> {
        <crate::Input as FromRequest>::from_request(&self.context())
    }
    /// Takes the argument `name` out of the call (it can be taken once).
    pub fn take_argument(&mut self, name: &str) -> Option<Value> {
        self.arguments.remove(name)
    }
}

/// What a tool's parameters add to its definition: `inputSchema` properties, and what the
/// server must provide (state, logging).
///
/// ```
/// use mcp_runtime::{Param, Signature, ToolDef, ToolError};
///
/// let mut signature = Signature::new();
/// signature.add_argument::<String>(&Param { name: "city", description: None, header: None });
/// signature.add_argument::<Option<u8>>(&Param { name: "days", description: None, header: None });
/// let forecast = ToolDef::new("forecast", signature, |_call| async { Ok::<_, ToolError>("sunny") });
/// assert_eq!(forecast.input_schema_value()["required"], serde_json::json!(["city"]));
/// ```
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
        if let Some(obj) = schema.as_object_mut() {
            if let Some(desc) = param.description {
                obj.insert("description".into(), json!(desc));
            }
            if let Some(header) = param.header {
                obj.insert("x-mcp-header".into(), json!(header));
            }
        }
        self.properties.insert(param.name.to_owned(), schema);
        if T::deserialize(Missing).is_err() {
            self.required.push(param.name.to_owned());
        }
    }

    /// Inlines the schemas of argument types instead of referencing them through `$defs`
    /// (for clients that cannot resolve `$ref`). Call it before adding arguments.
    pub fn inline_refs(&mut self) {
        self.generator = schemars::generate::SchemaSettings::draft2020_12()
            .with(|s| {
                s.meta_schema = None;
                s.inline_subschemas = true;
            })
            .into_generator();
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
///
/// ```
/// use mcp_runtime::{FromToolCall, Param, Server, Signature, ToolCall, ToolError, tool, tools};
///
/// /// The caller's trace id, or `none`.
/// struct TraceId(String);
///
/// impl FromToolCall for TraceId {
///     fn describe(_: &Param, _: &mut Signature) {} // adds nothing to `inputSchema`
///     fn from_tool_call(call: &mut ToolCall, _: &Param) -> Result<Self, ToolError> {
///         let trace = call.context().trace_context().map(|t| t.trace_id.clone());
///         Ok(TraceId(trace.unwrap_or_else(|| "none".into())))
///     }
/// }
///
/// /// Echoes the caller's trace id.
/// #[tool]
/// async fn trace(id: TraceId) -> String {
///     id.0
/// }
///
/// let server = Server::builder("x", "1.0").tools(tools![trace]).build().unwrap();
/// assert_eq!(server.tool_names(), ["trace"]);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool parameter",
    label = "not an argument or an extractor",
    note = "an argument type implements `serde::Deserialize` and `schemars::JsonSchema`; an extractor (`Context`, `Progress`, `Logger`, `Input`, `State<T>`) implements `FromToolCall`"
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
    [] crate::mrtr::Input;
    [] Context;
    [] Progress;
    [] Logger;
    [T: Send + Sync + 'static] State<T>;
}

/// All the arguments of the call, as sent (those not taken by other parameters). Useful
/// with a hand-written `inputSchema`.
///
/// ```
/// use mcp_runtime::{Arguments, Server, tool, tools};
///
/// /// Looks an airport up by its code.
/// #[tool(input_schema = r#"{"type": "object", "properties": {"code": {"type": "string", "pattern": "^[A-Z]{3}$"}}, "required": ["code"]}"#)]
/// async fn airport(args: Arguments) -> String {
///     let code = args.0.get("code").and_then(|c| c.as_str()).unwrap_or_default();
///     format!("airport {code}")
/// }
///
/// let server = Server::builder("x", "1.0").tools(tools![airport]).build().unwrap();
/// assert_eq!(server.tool_names(), ["airport"]);
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Arguments(pub Map<String, Value>);

impl FromToolCall for Arguments {
    fn describe(_: &Param, _: &mut Signature) {}
    fn from_tool_call(call: &mut ToolCall, _: &Param) -> Result<Self, ToolError> {
        Ok(Arguments(std::mem::take(&mut call.arguments)))
    }
}

/// A type a parameter mirrored into an HTTP header (`#[arg(header = "...")]`) can have:
/// text, booleans and integers that stay within ±(2^53−1).
///
/// ```
/// use mcp_runtime::{HeaderValue, tool};
///
/// /// Queries orders in a regional shard; gateways route on `Mcp-Param-Region`.
/// #[tool]
/// async fn query_orders(#[arg(header = "Region")] region: String, #[arg(header = "Limit")] limit: Option<u32>) -> String {
///     format!("{region} {limit:?}")
/// }
///
/// fn mirrorable<T: HeaderValue>() {}
/// mirrorable::<Option<u32>>();
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be mirrored into an `Mcp-Param-*` header",
    label = "not a string, boolean or small integer",
    note = "`x-mcp-header` applies to strings, booleans and integers of at most 32 bits (so values stay within ±(2^53−1)); not to floats, arrays or objects"
)]
pub trait HeaderValue {}
impl HeaderValue for String {}
impl HeaderValue for bool {}
impl HeaderValue for i8 {}
impl HeaderValue for i16 {}
impl HeaderValue for i32 {}
impl HeaderValue for u8 {}
impl HeaderValue for u16 {}
impl HeaderValue for u32 {}
impl<T: HeaderValue> HeaderValue for Option<T> {}

pub(crate) type Handler =
    Arc<dyn Fn(ToolCall) -> BoxFuture<'static, Result<CallToolResult, ToolError>> + Send + Sync>;

/// Behaviour hints for clients (`annotations` of a tool). Unset hints are left out.
///
/// ```
/// use mcp_runtime::{Signature, ToolAnnotations, ToolDef, ToolError, tool};
///
/// /// Deletes a note.
/// #[tool(annotations(destructive_hint = true, idempotent_hint = true))]
/// async fn delete_note(id: u64) -> String {
///     format!("deleted {id}")
/// }
///
/// // By hand:
/// let annotations = ToolAnnotations { read_only_hint: Some(true), ..Default::default() };
/// assert_eq!(serde_json::to_value(&annotations).unwrap(), serde_json::json!({"readOnlyHint": true}));
/// let stats = ToolDef::new("stats", Signature::new(), |_call| async { Ok::<_, ToolError>("42") })
///     .annotations(annotations);
/// # drop(stats);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// A human-readable title for the tool.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// `readOnlyHint`: the tool does not modify its environment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// `destructiveHint`: the tool may perform destructive updates (meaningful when not read-only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// `idempotentHint`: calling again with the same arguments has no further effect (meaningful when not read-only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// `openWorldHint`: the tool may interact with an open world of external entities.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

/// An icon for a tool, prompt, resource or the server (`https:` or `data:` URI).
///
/// ```
/// use mcp_runtime::{Icon, Server};
///
/// let icon = Icon::new("https://example.com/logo.png").mime_type("image/png").size("48x48").theme("light");
/// assert_eq!(serde_json::to_value(&icon).unwrap()["sizes"], serde_json::json!(["48x48"]));
/// let server = Server::builder("x", "1.0").icon(icon).build().unwrap();
/// assert_eq!(server.info().icons.len(), 1);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Icon {
    /// The icon's URI (`https:` or `data:`).
    pub src: String,
    /// The MIME type of the icon (`mimeType`), if given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The sizes the icon is available in, such as `"48x48"` or `"any"`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sizes: Vec<String>,
    /// The theme the icon is for (`"light"` or `"dark"`).
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
///
/// ```
/// use mcp_runtime::{Server, Signature, ToolDef, ToolError, tool, tools};
///
/// /// Says hello.
/// #[tool]
/// async fn hello() -> &'static str {
///     "hello"
/// }
///
/// let ping = ToolDef::new("ping", Signature::new(), |_call| async { Ok::<_, ToolError>("pong") })
///     .description("Answers pong.");
/// let server = Server::builder("x", "1.0").tools(tools![hello]).tool(ping).build().unwrap();
/// assert_eq!(server.tool_names(), ["hello", "ping"]);
/// ```
pub struct ToolDef {
    pub(crate) name: String,
    pub(crate) title: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) annotations: Option<ToolAnnotations>,
    pub(crate) icons: Vec<Icon>,
    pub(crate) meta: Option<Map<String, Value>>,
    pub(crate) cache: Option<CacheHints>,
    pub(crate) input_schema: Value,
    /// A hand-written `inputSchema`, minified but otherwise as given.
    pub(crate) input_schema_text: Option<String>,
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
            input_schema_text: None,
            output_schema: R::output_schema(),
            requirements: std::mem::take(&mut signature.requirements),
            handler,
        }
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The `inputSchema` (generated or hand-written).
    pub fn input_schema_value(&self) -> &Value {
        &self.input_schema
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
    /// Replaces the generated `inputSchema` with a hand-written one.
    pub fn input_schema(mut self, schema: Value) -> Self {
        self.input_schema_text = Some(schema.to_string());
        self.input_schema = schema;
        self
    }

    /// Replaces the generated `inputSchema` with hand-written JSON text, served as given
    /// (key order and all; only insignificant whitespace is removed). Any JSON Schema
    /// 2020-12 keyword may appear. Invalid JSON is reported when the server is built.
    pub fn input_schema_json(mut self, text: &str) -> Self {
        match serde_json::from_str::<Value>(text) {
            Ok(v) => {
                self.input_schema = v;
                self.input_schema_text = Some(crate::schema::minify(text));
            }
            Err(e) => {
                self.input_schema = json!({ "$invalid": e.to_string() });
                self.input_schema_text = None;
            }
        }
        self
    }

    /// The definition as `tools/list` shows it, as JSON text (a hand-written
    /// `inputSchema` is embedded as given).
    pub(crate) fn to_json(&self) -> String {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Wire<'a> {
            name: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            title: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            description: Option<&'a str>,
            input_schema: &'a serde_json::value::RawValue,
            #[serde(skip_serializing_if = "Option::is_none")]
            output_schema: Option<&'a Value>,
            #[serde(skip_serializing_if = "Option::is_none")]
            annotations: Option<&'a ToolAnnotations>,
            #[serde(skip_serializing_if = "<[Icon]>::is_empty")]
            icons: &'a [Icon],
            #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
            meta: Option<&'a Map<String, Value>>,
        }
        let schema_text = self
            .input_schema_text
            .clone()
            .unwrap_or_else(|| self.input_schema.to_string());
        let raw =
            serde_json::value::RawValue::from_string(schema_text).expect("schema text is JSON");
        serde_json::to_string(&Wire {
            name: &self.name,
            title: self.title.as_deref(),
            description: self.description.as_deref(),
            input_schema: &raw,
            output_schema: self.output_schema.as_ref(),
            annotations: self.annotations.as_ref(),
            icons: &self.icons,
            meta: self.meta.as_ref(),
        })
        .expect("tool definitions serialize")
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
                header: Some("City"),
            },
            &mut sig,
        );
        <Option<u8> as FromToolCall>::describe(
            &Param {
                name: "days",
                description: None,
                header: None,
            },
            &mut sig,
        );
        <Progress as FromToolCall>::describe(
            &Param {
                name: "p",
                description: None,
                header: None,
            },
            &mut sig,
        );
        let s = sig.input_schema();
        assert_eq!(s["required"], json!(["city"]));
        assert_eq!(s["properties"]["city"]["description"], "City name");
        assert_eq!(s["properties"]["city"]["x-mcp-header"], "City");
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
