//! What a handler's parameters say about its definition: [`Param`], [`Signature`],
//! [`Requirements`].

use crate::schema::PatternEngine;
use schemars::{JsonSchema, SchemaGenerator};
use serde::de::{self, DeserializeOwned, Deserializer, Visitor};
use serde_json::{Map, Value, json};
use std::any::TypeId;

/// One parameter of a handler function, as the macro saw it.
///
/// ```
/// use mcp_runtime::handler::{Param, Signature};
///
/// const CITY: Param = Param::new("city").description("City name").header("City");
/// let mut signature = Signature::new();
/// signature.add_argument::<String>(&CITY);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Param {
    /// The parameter's name: the argument's key in `arguments` and `inputSchema` (or the
    /// template variable it binds).
    pub name: &'static str,
    /// `#[arg(description = "...")]`, if given.
    pub description: Option<&'static str>,
    /// `#[arg(header = "Region")]`: mirrored into the `Mcp-Param-Region` HTTP header.
    pub header: Option<&'static str>,
}

impl Param {
    /// A parameter named `name`.
    pub const fn new(name: &'static str) -> Param {
        Param {
            name,
            description: None,
            header: None,
        }
    }
    /// Sets the description.
    pub const fn description(mut self, description: &'static str) -> Param {
        self.description = Some(description);
        self
    }
    /// Mirrors the argument into the `Mcp-Param-{header}` HTTP header.
    pub const fn header(mut self, header: &'static str) -> Param {
        self.header = Some(header);
        self
    }
}

/// The type of an argument with `#[arg(default = ..)]`: one whose value a tool's
/// `inputSchema` can show (`Serialize`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be shown as the argument's default: it does not implement `Serialize`",
    label = "the type of an argument with `#[arg(default ..)]`",
    note = "a tool's input schema shows the default; derive `serde::Serialize` for the type, or make the argument an `Option<T>` and pick the value in the body"
)]
pub trait DefaultValue {
    /// The value as JSON (`None` if it does not serialize: the schema then shows no
    /// default).
    fn to_json(&self) -> Option<Value>;
}

#[diagnostic::do_not_recommend]
impl<T: serde::Serialize + ?Sized> DefaultValue for T {
    fn to_json(&self) -> Option<Value> {
        serde_json::to_value(self).ok()
    }
}

/// What a handler's extractors need from the server, checked when it is built.
///
/// ```
/// use mcp_runtime::{Error, Server};
/// use mcp_runtime::def::ToolDef;
/// use mcp_runtime::handler::Signature;
///
/// struct Db;
///
/// let mut signature = Signature::new();
/// signature.requirements().requires_state::<Db>();
/// let count = ToolDef::new("count", signature, |_call| async { Ok::<_, Error>("0") })
///     .description("Counts rows.");
/// // Checked when the server is built: no `Db` was given with `.state(..)`.
/// assert!(Server::builder("x", "1.0").tool(count).build().is_err());
/// ```
#[derive(Debug, Default, Clone)]
pub struct Requirements {
    pub(crate) uses_logging: bool,
    /// What runs its rounds, when the handler may ask for input.
    pub(crate) input: Option<&'static crate::mrtr::round::Engine>,
    pub(crate) asks_upfront: bool,
    /// The client capabilities its declared inputs need (`"elicitation.form"`, ...),
    /// checked before its arguments are.
    pub(crate) input_capabilities: Vec<&'static str>,
    pub(crate) required_state: Vec<(TypeId, &'static str)>,
    /// The types of the `Layered<T>` parameters: only a middleware inserts those, so a
    /// handler no middleware wraps cannot be called.
    pub(crate) required_layered: Vec<&'static str>,
}

impl Requirements {
    /// The handler may send `notifications/message` (the server then advertises `logging`).
    pub fn uses_logging(&mut self) {
        self.uses_logging = true;
    }
    /// The handler may ask the client for input (multi round-trip requests).
    pub fn uses_input(&mut self) {
        self.input = Some(&crate::mrtr::round::ENGINE);
    }
    /// The handler asks for its declared inputs (`#[input]` parameters) before its body
    /// runs, and marks where the body begins with `Input::begin_body` (generated code
    /// does). A tool that runs as a task collects them in rounds before the task exists.
    pub fn asks_upfront(&mut self) {
        self.uses_input();
        self.asks_upfront = true;
    }
    /// A declared input of the handler needs the client capability `path`
    /// (`"elicitation.form"`, `"sampling"`, ...): a `tools/call` from a client that did
    /// not declare it is refused with `-32021` before its arguments are checked (as
    /// security.md's order has it), not after. Generated code calls it for `#[input]`
    /// parameters; the handler checks them too (`Input::require_all`).
    #[doc(hidden)]
    pub fn needs_capability(&mut self, path: &'static str) {
        if !self.input_capabilities.contains(&path) {
            self.input_capabilities.push(path);
        }
    }
    /// The handler takes a value of type `T` a middleware inserts
    /// ([`Layered`](crate::middleware::Layered)): building a server refuses it when no
    /// middleware wraps it.
    pub fn requires_layered<T: 'static>(&mut self) {
        self.required_layered.push(std::any::type_name::<T>());
    }
    /// The handler needs shared state of type `T` (given with `ServerBuilder::state`).
    pub fn requires_state<T: 'static>(&mut self) {
        self.required_state
            .push((TypeId::of::<T>(), std::any::type_name::<T>()));
    }
}

/// A prompt argument as `prompts/list` shows it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub(crate) struct PromptArgument {
    pub(crate) name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) description: Option<String>,
    pub(crate) required: bool,
}

/// What a handler's parameters add to its definition: a tool's `inputSchema`
/// properties, a prompt's `arguments`, and what the server must provide (state, logging,
/// input).
///
/// ```
/// use mcp_runtime::Error;
/// use mcp_runtime::def::ToolDef;
/// use mcp_runtime::handler::{Param, Signature};
///
/// let mut signature = Signature::new();
/// signature.add_argument::<String>(&Param::new("city"));
/// signature.add_argument::<Option<u8>>(&Param::new("days"));
/// let forecast = ToolDef::new("forecast", signature, |_call| async { Ok::<_, Error>("sunny") });
/// assert_eq!(forecast.input_schema_value()["required"], serde_json::json!(["city"]));
/// ```
pub struct Signature {
    generator: Option<SchemaGenerator>,
    inline_refs: bool,
    properties: Map<String, Value>,
    required: Vec<String>,
    pub(crate) arguments: Vec<PromptArgument>,
    pub(crate) requirements: Requirements,
    /// What compiles the schema's patterns: set by the first argument whose type is not
    /// plain (see [`plain`]), so that a server whose tools take only plain arguments
    /// does not link the pattern engine.
    pub(crate) patterns: Option<PatternEngine>,
}

impl Default for Signature {
    fn default() -> Self {
        Self::new()
    }
}

impl Signature {
    /// An empty signature (a handler without parameters).
    pub fn new() -> Self {
        Signature {
            generator: None,
            inline_refs: false,
            properties: Map::new(),
            required: Vec::new(),
            arguments: Vec::new(),
            requirements: Requirements::default(),
            patterns: None,
        }
    }

    /// Adds `param` as a tool argument of type `T`: a property of `inputSchema`, required
    /// unless `T` can be made from a missing value (`Option<_>`).
    pub fn add_argument<T: DeserializeOwned + JsonSchema + 'static>(&mut self, param: &Param) {
        // Only what needs `T` is generic (compiled in the caller's crate, once per type);
        // the rest is compiled once, here.
        if !plain::<T>() {
            self.patterns = Some(crate::schema::regex);
        }
        let schema = self.generator().subschema_for::<T>();
        self.add_argument_schema(param, schema, !accepts_missing::<T>());
    }

    /// The schema generator the arguments' subschemas share.
    fn generator(&mut self) -> &mut SchemaGenerator {
        let inline = self.inline_refs;
        self.generator.get_or_insert_with(|| {
            if inline {
                crate::schema::inline_generator()
            } else {
                crate::schema::generator()
            }
        })
    }

    /// [`Signature::add_argument`]'s work once the subschema is made.
    fn add_argument_schema(&mut self, param: &Param, mut schema: schemars::Schema, required: bool) {
        crate::schema::finish_subschema(&mut schema);
        let mut schema = schema.to_value();
        if let Some(obj) = schema.as_object_mut() {
            if let Some(desc) = param.description {
                obj.insert("description".into(), json!(desc));
            }
            if let Some(header) = param.header {
                // `x-mcp-header` applies to one primitive type, and clients drop a tool
                // whose mirrored property says `["integer", "null"]`: an optional argument
                // is one that is not required, not one that may be null.
                if let Some(Value::Array(types)) = obj.get("type") {
                    let mut non_null = types.iter().filter(|t| t.as_str() != Some("null"));
                    if let (Some(one), None) = (non_null.next().cloned(), non_null.next()) {
                        obj.insert("type".into(), one);
                    }
                }
                obj.insert("x-mcp-header".into(), json!(header));
            }
        }
        self.properties.insert(param.name.to_owned(), schema);
        if required {
            self.required.push(param.name.to_owned());
        }
    }

    /// A prompt argument known only at run time (a proxied prompt's).
    #[cfg_attr(not(feature = "proxy"), allow(dead_code))]
    pub(crate) fn add_raw_argument(
        &mut self,
        name: &str,
        description: Option<&str>,
        required: bool,
    ) {
        self.arguments.push(PromptArgument {
            name: name.to_owned(),
            description: description.map(str::to_owned),
            required,
        });
    }

    /// Adds `param` as a prompt argument (a string parsed into `T`), required unless `T`
    /// accepts a missing value.
    pub fn add_text_argument<T: DeserializeOwned>(&mut self, param: &Param) {
        self.arguments.push(PromptArgument {
            name: param.name.to_owned(),
            description: param.description.map(str::to_owned),
            required: !accepts_missing::<T>(),
        });
    }

    /// Gives the argument `param`, added already, a default (`#[arg(default ..)]`): it is
    /// no longer required, and a tool's `inputSchema` shows `value` as the property's
    /// `default`.
    ///
    /// ```
    /// use mcp_runtime::def::ToolDef;
    /// use mcp_runtime::handler::{Param, Signature};
    /// use mcp_runtime::Error;
    ///
    /// const DAYS: Param = Param::new("days");
    /// let mut signature = Signature::new();
    /// signature.add_argument::<u8>(&DAYS);
    /// signature.default_value(&DAYS, &3u8);
    /// let forecast = ToolDef::new("forecast", signature, |_call| async { Ok::<_, Error>("sunny") });
    /// let schema = forecast.input_schema_value();
    /// assert_eq!(schema["properties"]["days"]["default"], 3);
    /// assert!(schema.get("required").is_none());
    /// ```
    pub fn default_value<T: DefaultValue + ?Sized>(&mut self, param: &Param, value: &T) {
        self.not_required(param);
        if let (Some(Value::Object(property)), Some(value)) =
            (self.properties.get_mut(param.name), value.to_json())
        {
            property.insert("default".into(), value);
        }
    }

    /// Makes the argument `param`, added already, not required (a prompt argument with
    /// `#[arg(default ..)]`: the call may leave it out).
    pub fn not_required(&mut self, param: &Param) {
        self.required.retain(|name| name != param.name);
        if let Some(argument) = self.arguments.iter_mut().find(|a| a.name == param.name) {
            argument.required = false;
        }
    }

    /// Inlines the schemas of argument types instead of referencing them through `$defs`
    /// (for clients that cannot resolve `$ref`). Call it before adding arguments.
    pub fn inline_refs(&mut self) {
        self.inline_refs = true;
        self.generator = None;
    }

    /// What the handler's extractors need from the server.
    pub fn requirements(&mut self) -> &mut Requirements {
        &mut self.requirements
    }

    /// The `inputSchema`: an object with one property per argument.
    pub(crate) fn input_schema(&mut self) -> Value {
        let mut schema = Map::new();
        schema.insert("type".into(), json!("object"));
        if !self.properties.is_empty() {
            schema.insert(
                "properties".into(),
                Value::Object(std::mem::take(&mut self.properties)),
            );
        }
        if !self.required.is_empty() {
            schema.insert("required".into(), json!(self.required));
        }
        schema.insert("additionalProperties".into(), json!(false));
        if let Some(generator) = &mut self.generator {
            let defs = generator.take_definitions(true);
            if !defs.is_empty() {
                schema.insert("$defs".into(), Value::Object(defs));
            }
        }
        Value::Object(schema)
    }
}

/// Whether `T` can be made from an argument the client left out (`Option`-like types).
/// Whether no `pattern` can occur in `T`'s schema: a number, a `bool`, a `char`, a
/// `String`, a `Vec` of one, or an `Option` of either (schemars gives them a type, a
/// format, bounds and items, never a pattern). Decided from type identity, a constant in
/// each instantiation of [`Signature::add_argument`], so an optimized build keeps only
/// the branch that applies and a tool of plain arguments never names the pattern engine.
fn plain<T: 'static>() -> bool {
    let t = TypeId::of::<T>();
    macro_rules! one_of {
        ($($ty:ty),*) => {
            $(
                t == TypeId::of::<$ty>()
                    || t == TypeId::of::<Option<$ty>>()
                    || t == TypeId::of::<Vec<$ty>>()
                    || t == TypeId::of::<Option<Vec<$ty>>>()
            )||*
        };
    }
    one_of!(
        i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize, f32, f64, bool, char,
        String
    )
}

pub(crate) fn accepts_missing<T: DeserializeOwned>() -> bool {
    T::deserialize(Missing).is_ok()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_arguments_leave_out_the_pattern_engine() {
        assert!(plain::<i64>() && plain::<Option<u8>>() && plain::<String>());
        assert!(plain::<Vec<String>>() && plain::<Option<Vec<f64>>>() && plain::<char>());
        assert!(!plain::<Value>() && !plain::<Vec<Vec<String>>>() && !plain::<Option<Value>>());
        let mut sig = Signature::new();
        sig.add_argument::<String>(&Param::new("a"));
        sig.add_argument::<Option<Vec<i64>>>(&Param::new("b"));
        assert!(sig.patterns.is_none());
        sig.add_argument::<Value>(&Param::new("c"));
        assert!(sig.patterns.is_some());
    }

    #[test]
    fn option_arguments_are_not_required() {
        let mut sig = Signature::new();
        sig.add_argument::<String>(&Param::new("city").description("City name").header("City"));
        sig.add_argument::<Option<u8>>(&Param::new("days"));
        sig.add_argument::<Option<i32>>(&Param::new("limit").header("Limit"));
        let s = sig.input_schema();
        assert_eq!(
            s["properties"]["limit"]["type"], "integer",
            "one primitive type"
        );
        assert_eq!(s["properties"]["days"]["type"], json!(["integer", "null"]));
        assert_eq!(s["required"], json!(["city"]));
        assert_eq!(s["properties"]["city"]["description"], "City name");
        assert_eq!(s["properties"]["city"]["x-mcp-header"], "City");
        assert_eq!(s["additionalProperties"], false);
    }

    #[test]
    fn prompt_arguments() {
        let mut sig = Signature::new();
        sig.add_text_argument::<String>(&Param::new("topic").description("The topic"));
        sig.add_text_argument::<Option<u32>>(&Param::new("lines"));
        assert_eq!(
            serde_json::to_value(&sig.arguments).unwrap(),
            json!([{"name": "topic", "description": "The topic", "required": true}, {"name": "lines", "required": false}])
        );
    }
}
