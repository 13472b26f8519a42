//! What a tool adds to a definition: behaviour hints and its schemas.

use super::call::Call;
use super::kind::Tool;
use super::output::IntoResult;
use super::signature::Signature;
use super::{Def, Icon};
use crate::Error;
use crate::schema::PatternEngine;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use std::future::Future;

/// Behaviour hints for clients (`annotations` of a tool). Unset hints are left out.
///
/// ```
/// use mcp_runtime::{Error, tool};
/// use mcp_runtime::def::{ToolAnnotations, ToolDef};
/// use mcp_runtime::handler::Signature;
///
/// /// Deletes a note.
/// #[tool(annotations(destructive_hint = true, idempotent_hint = true))]
/// async fn delete_note(id: u64) -> String {
///     format!("deleted {id}")
/// }
///
/// // By hand:
/// let annotations = ToolAnnotations::new().read_only_hint(true);
/// assert_eq!(serde_json::to_value(&annotations).unwrap(), serde_json::json!({"readOnlyHint": true}));
/// let stats = ToolDef::new("stats", Signature::new(), |_call| async { Ok::<_, Error>("42") })
///     .annotations(annotations);
/// # drop(stats);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// A human-readable title for the tool.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// `readOnlyHint`: the tool does not modify its environment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// `destructiveHint`: the tool may perform destructive updates (meaningful when not
    /// read-only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// `idempotentHint`: calling again with the same arguments has no further effect
    /// (meaningful when not read-only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// `openWorldHint`: the tool may interact with an open world of external entities.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

impl ToolAnnotations {
    /// No hints.
    pub fn new() -> Self {
        Self::default()
    }
    /// Sets the title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }
    /// Sets `readOnlyHint`.
    pub fn read_only_hint(mut self, on: bool) -> Self {
        self.read_only_hint = Some(on);
        self
    }
    /// Sets `destructiveHint`.
    pub fn destructive_hint(mut self, on: bool) -> Self {
        self.destructive_hint = Some(on);
        self
    }
    /// Sets `idempotentHint`.
    pub fn idempotent_hint(mut self, on: bool) -> Self {
        self.idempotent_hint = Some(on);
        self
    }
    /// Sets `openWorldHint`.
    pub fn open_world_hint(mut self, on: bool) -> Self {
        self.open_world_hint = Some(on);
        self
    }
}

/// Whether a tool runs as a task (the `io.modelcontextprotocol/tasks` extension).
///
/// A task is created only for a request that declares the extension; the client then
/// polls `tasks/get` for the result. `#[tool(task = "optional")]` and `"required"` set it.
///
/// ```
/// use mcp_runtime::def::{TaskSupport, ToolDef};
/// use mcp_runtime::handler::Signature;
/// use mcp_runtime::Error;
///
/// let export = ToolDef::new("export", Signature::new(), |_call| async { Ok::<_, Error>("done") })
///     .task(TaskSupport::Optional);
/// assert_eq!(export.task_support(), TaskSupport::Optional);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TaskSupport {
    /// Never a task: the call is answered when the handler returns (the default).
    #[default]
    Forbidden,
    /// A task when the request declares the extension; answered directly otherwise.
    Optional,
    /// Only as a task: a request without the extension gets `-32021` naming it.
    Required,
}

/// A tool's part of its definition.
#[doc(hidden)]
pub struct ToolSpec {
    pub(crate) annotations: Option<ToolAnnotations>,
    pub(crate) task: TaskSupport,
    /// What runs it as a task: set by [`Def::task`], so that a server none of whose tools
    /// may run as one does not carry the task machinery's code.
    pub(crate) engine: Option<&'static crate::server::tasks::Engine>,
    pub(crate) input_schema: Value,
    /// A hand-written `inputSchema`, minified but otherwise as given.
    pub(crate) input_schema_text: Option<String>,
    /// Why a hand-written `inputSchema` could not be read.
    pub(crate) input_schema_error: Option<String>,
    pub(crate) output_schema: Option<Value>,
    /// With a hand-written `inputSchema`: the typed parameters' argument names (the
    /// generated schema's properties), which it must list too.
    pub(crate) typed: Vec<String>,
    /// What compiles the `inputSchema`'s patterns: `None` when it was generated from plain
    /// argument types only (see `Signature::add_argument`).
    pub(crate) patterns: Option<PatternEngine>,
}

impl Def<Tool> {
    /// A tool named `name` whose parameters are described by `signature`, served by
    /// `handler`. The handler's output type gives the `outputSchema` (see
    /// [`Json`](crate::Json)).
    pub fn new<F, Fut, R>(name: impl Into<String>, mut signature: Signature, handler: F) -> Self
    where
        F: Fn(Call<Tool>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, Error>> + Send + 'static,
        R: IntoResult<Tool>,
    {
        let spec = ToolSpec {
            annotations: None,
            task: TaskSupport::Forbidden,
            engine: None,
            input_schema: signature.input_schema(),
            input_schema_text: None,
            input_schema_error: None,
            output_schema: R::output_schema(),
            typed: Vec::new(),
            patterns: signature.patterns,
        };
        Def::from_parts(
            name.into(),
            spec,
            signature.requirements,
            super::erase(handler),
        )
    }

    /// The `inputSchema` (generated or hand-written).
    pub fn input_schema_value(&self) -> &Value {
        &self.spec.input_schema
    }

    /// Whether the tool runs as a task (see [`TaskSupport`]).
    pub fn task(mut self, support: TaskSupport) -> Self {
        self.spec.task = support;
        self.spec.engine = match support {
            TaskSupport::Forbidden => None,
            TaskSupport::Optional | TaskSupport::Required => Some(&crate::server::tasks::ENGINE),
        };
        self
    }

    /// Whether the tool runs as a task.
    pub fn task_support(&self) -> TaskSupport {
        self.spec.task
    }

    /// Sets the behaviour hints.
    pub fn annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.spec.annotations = Some(annotations);
        self
    }

    /// Replaces the generated `inputSchema` with a hand-written one.
    pub fn input_schema(mut self, schema: Value) -> Self {
        self.keep_typed();
        self.spec.input_schema_text = Some(schema.to_string());
        self.spec.input_schema = schema;
        self.spec.input_schema_error = None;
        self.spec.patterns = Some(crate::schema::regex);
        self
    }

    /// Before the generated `inputSchema` is replaced: the names it gives the typed
    /// parameters, for the build to check the hand-written one against.
    fn keep_typed(&mut self) {
        if self.spec.input_schema_text.is_none() && self.spec.typed.is_empty() {
            let props = self
                .spec
                .input_schema
                .get("properties")
                .and_then(Value::as_object);
            self.spec.typed = props
                .map(|p| p.keys().cloned().collect())
                .unwrap_or_default();
        }
    }

    /// Replaces the generated `inputSchema` with hand-written JSON text, served as given
    /// (key order and all; only insignificant whitespace is removed). Any JSON Schema
    /// 2020-12 keyword may appear. Invalid JSON is reported when the server is built.
    pub fn input_schema_json(mut self, text: &str) -> Self {
        self.keep_typed();
        match serde_json::from_str::<Value>(text) {
            Ok(v) => {
                self.spec.input_schema = v;
                self.spec.input_schema_text = Some(crate::schema::minify(text));
                self.spec.input_schema_error = None;
                self.spec.patterns = Some(crate::schema::regex);
            }
            Err(e) => {
                self.spec.input_schema = json!({});
                self.spec.input_schema_text = None;
                self.spec.input_schema_error = Some(e.to_string());
            }
        }
        self
    }

    /// The definition as `tools/list` shows it (a hand-written `inputSchema` embedded as
    /// given).
    pub(crate) fn to_json(&self) -> Box<RawValue> {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Wire<'a> {
            name: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            title: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            description: Option<&'a str>,
            input_schema: &'a RawValue,
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
            .spec
            .input_schema_text
            .clone()
            .unwrap_or_else(|| self.spec.input_schema.to_string());
        let schema = RawValue::from_string(schema_text).expect("schema text is JSON");
        let item = &self.item;
        serde_json::value::to_raw_value(&Wire {
            name: &item.name,
            title: item.title.as_deref(),
            description: item.description.as_deref(),
            input_schema: &schema,
            output_schema: self.spec.output_schema.as_ref(),
            annotations: self.spec.annotations.as_ref(),
            icons: &item.icons,
            meta: item.meta.as_ref(),
        })
        .expect("tool definitions serialize")
    }
}
