//! Resources and resource templates: definitions, variables, contents.

use super::completion::{Completer, IntoCompleter};
use super::context::{Context, RequestState};
use super::extract::{FromRequest, Requirements};
use super::result::{Json, ToolError};
use super::tool::{Icon, Missing};
use crate::protocol::{
    Annotations, BlobResourceContents, CacheHints, ResourceContents, RpcError, TextResourceContents,
};
use futures_util::future::BoxFuture;
use schemars::JsonSchema;
use serde::de::{self, DeserializeOwned};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::future::Future;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

/// A resource as `resources/list` shows it (also what a template's list function returns).
///
/// ```
/// use mcp_runtime::{Resource, SafePath, Server, resource, resources};
///
/// async fn docs() -> Vec<Resource> {
///     vec![Resource::new("file:///docs/intro.md", "intro.md").mime_type("text/markdown")]
/// }
///
/// /// A document, by relative path.
/// #[resource("file:///docs/{+path}", list = docs)]
/// async fn doc(path: SafePath) -> String {
///     format!("contents of {}", path.as_path().display())
/// }
///
/// let server = Server::builder("docs", "1.0").resources(resources![doc]).build().unwrap();
/// # drop(server);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Resource {
    /// The resource's URI.
    pub uri: String,
    /// A short name.
    pub name: String,
    /// A human-readable title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its MIME type.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Its size in bytes (before base64), if known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}

impl Resource {
    /// A resource with a URI and a name.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Resource {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            size: None,
        }
    }
    /// Sets the MIME type.
    pub fn mime_type(mut self, m: impl Into<String>) -> Self {
        self.mime_type = Some(m.into());
        self
    }
    /// Sets the description.
    pub fn description(mut self, d: impl Into<String>) -> Self {
        self.description = Some(d.into());
        self
    }
}

/// One `resources/read`: the URI, the template variables it bound, the request.
///
/// ```
/// use mcp_runtime::{Requirements, ResourceCall, ResourceDef, ToolError};
///
/// let note = ResourceDef::new("notes://{id}", "note", Requirements::default(), |mut call: ResourceCall| async move {
///     let id: u64 = call.variable("id")?;
///     Ok::<_, ToolError>(format!("note {id} at {}", call.uri()))
/// });
/// assert_eq!(note.uri(), "notes://{id}");
/// ```
pub struct ResourceCall {
    pub(crate) uri: String,
    pub(crate) mime_type: Option<Arc<str>>,
    pub(crate) variables: BTreeMap<String, String>,
    pub(crate) request: Arc<RequestState>,
}

impl ResourceCall {
    /// The URI being read.
    pub fn uri(&self) -> &str {
        &self.uri
    }
    /// The request's [`Input`](crate::Input), to ask the client for more.
    pub fn input(&self) -> Result<crate::Input, ToolError> {
        self.extract::<crate::Input>()
    }
    /// Produces an extractor parameter.
    pub fn extract<T: FromRequest>(&self) -> Result<T, ToolError> {
        T::from_request(&Context(Arc::clone(&self.request)))
    }
    /// Parses the template variable `name` into `T` (percent-decoded already). A variable
    /// the URI left out (an optional query variable) is `None` for `Option<T>`.
    pub fn variable<T: DeserializeOwned>(&mut self, name: &str) -> Result<T, ToolError> {
        let uri = self.uri.clone();
        let invalid = move |e: String| {
            ToolError::protocol(
                RpcError::invalid_params(format!("invalid `{name}` in the resource URI: {e}"))
                    .with_data(json!({ "uri": uri })),
            )
        };
        match self.variables.remove(name) {
            Some(s) => super::plain::from_str(&s).map_err(invalid),
            None => T::deserialize(Missing).map_err(|_| invalid("missing".into())),
        }
    }
}

/// A relative path from a URI template variable (`{+path}`), checked before the handler
/// runs: no `..` or `.` segments (also when sent percent-encoded as `%2e%2e`), no absolute
/// path or drive prefix, no NUL, no backslash, no empty segment.
///
/// ```
/// use mcp_runtime::SafePath;
/// let p: SafePath = serde_json::from_value(serde_json::json!("notes/2026/today.md")).unwrap();
/// assert_eq!(p.as_path(), std::path::Path::new("notes/2026/today.md"));
/// assert!(serde_json::from_value::<SafePath>(serde_json::json!("../etc/passwd")).is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, JsonSchema)]
pub struct SafePath(PathBuf);

impl SafePath {
    /// Checks `s`.
    pub fn new(s: &str) -> Result<SafePath, String> {
        if s.is_empty() {
            return Err("the path is empty".into());
        }
        if s.contains('\0') || s.contains('\\') {
            return Err("the path contains NUL or a backslash".into());
        }
        if s.starts_with('/') || s.as_bytes().get(1) == Some(&b':') {
            return Err("the path is absolute".into());
        }
        for seg in s.split('/') {
            if seg.is_empty() || seg == "." || seg == ".." {
                return Err("the path has an empty, `.` or `..` segment".into());
            }
        }
        let path = PathBuf::from(s);
        if !path.components().all(|c| matches!(c, Component::Normal(_))) {
            return Err("the path is not a plain relative path".into());
        }
        Ok(SafePath(path))
    }
    /// The path.
    pub fn as_path(&self) -> &Path {
        &self.0
    }
    /// Joins it under `root` (which it cannot escape).
    pub fn under(&self, root: impl AsRef<Path>) -> PathBuf {
        root.as_ref().join(&self.0)
    }
}

impl<'de> Deserialize<'de> for SafePath {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        SafePath::new(&s).map_err(de::Error::custom)
    }
}

/// A value a resource can return: text (`String`, `&'static str`), bytes (`Vec<u8>`,
/// sent as base64 `blob`), [`Json<T>`], [`ResourceContents`] or several of them, or a
/// `Result` of these (`Err` becomes a JSON-RPC error).
///
/// ```
/// use mcp_runtime::{IntoContents, ResourceContents, ToolError, resource};
///
/// /// Rows, served as CSV.
/// struct Csv(Vec<Vec<String>>);
///
/// impl IntoContents for Csv {
///     fn into_contents(self, uri: &str, _: Option<&str>) -> Result<Vec<ResourceContents>, ToolError> {
///         let text: Vec<String> = self.0.iter().map(|row| row.join(",")).collect();
///         Ok(vec![ResourceContents::text(uri, "text/csv", text.join("\n"))])
///     }
/// }
///
/// /// The first-quarter report.
/// #[resource("reports://q1")]
/// async fn q1() -> Csv {
///     Csv(vec![vec!["month".into(), "sales".into()], vec!["jan".into(), "10".into()]])
/// }
///
/// let contents = Csv(vec![vec!["a".into()]]).into_contents("reports://x", None).unwrap();
/// assert_eq!(contents, [ResourceContents::text("reports://x", "text/csv", "a")]);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a resource",
    label = "this return type",
    note = "return text (`String`), bytes (`Vec<u8>`), `Json<T>`, `ResourceContents`, `Vec<ResourceContents>`, or a `Result` of one of these"
)]
pub trait IntoContents: Send {
    /// Converts the value into the contents of `uri` (with the resource's MIME type).
    fn into_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, ToolError>;
}

impl IntoContents for String {
    fn into_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, ToolError> {
        Ok(vec![ResourceContents::Text(TextResourceContents {
            uri: uri.to_owned(),
            mime_type: Some(mime_type.unwrap_or("text/plain").to_owned()),
            text: self,
            meta: None,
        })])
    }
}
impl IntoContents for &'static str {
    fn into_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, ToolError> {
        self.to_owned().into_contents(uri, mime_type)
    }
}
impl IntoContents for Vec<u8> {
    fn into_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, ToolError> {
        Ok(vec![ResourceContents::Blob(BlobResourceContents {
            uri: uri.to_owned(),
            mime_type: Some(mime_type.unwrap_or("application/octet-stream").to_owned()),
            blob: crate::base64_encode(&self),
            meta: None,
        })])
    }
}
impl IntoContents for &'static [u8] {
    fn into_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, ToolError> {
        self.to_vec().into_contents(uri, mime_type)
    }
}
impl<T: Serialize + Send> IntoContents for Json<T> {
    fn into_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, ToolError> {
        let text = serde_json::to_string(&self.0)
            .map_err(|e| ToolError::new(format!("could not serialize: {e}")))?;
        text.into_contents(uri, Some(mime_type.unwrap_or("application/json")))
    }
}
impl IntoContents for ResourceContents {
    fn into_contents(self, _: &str, _: Option<&str>) -> Result<Vec<ResourceContents>, ToolError> {
        Ok(vec![self])
    }
}
impl IntoContents for Vec<ResourceContents> {
    fn into_contents(self, _: &str, _: Option<&str>) -> Result<Vec<ResourceContents>, ToolError> {
        Ok(self)
    }
}
impl<T: IntoContents, E: Into<ToolError> + Send> IntoContents for Result<T, E> {
    fn into_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, ToolError> {
        self.map_err(Into::into)?.into_contents(uri, mime_type)
    }
}

impl ResourceContents {
    /// Text contents.
    pub fn text(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        ResourceContents::Text(TextResourceContents {
            uri: uri.into(),
            mime_type: Some(mime_type.into()),
            text: text.into(),
            meta: None,
        })
    }
    /// Binary contents from raw bytes (base64-encoded here).
    pub fn blob(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        bytes: impl AsRef<[u8]>,
    ) -> Self {
        ResourceContents::Blob(BlobResourceContents {
            uri: uri.into(),
            mime_type: Some(mime_type.into()),
            blob: crate::base64_encode(bytes.as_ref()),
            meta: None,
        })
    }
}

/// What a template's list function returns: `Vec<Resource>` or a `Result` of it.
///
/// ```
/// use mcp_runtime::{Resource, SafePath, Server, resource, resources};
///
/// async fn files() -> Result<Vec<Resource>, std::io::Error> {
///     Ok(vec![Resource::new("file:///srv/a.txt", "a.txt")])
/// }
///
/// /// A file under `/srv`.
/// #[resource("file:///srv/{+path}", list = files)]
/// async fn file(path: SafePath) -> String {
///     path.as_path().display().to_string()
/// }
///
/// let server = Server::builder("files", "1.0").resources(resources![file]).build().unwrap();
/// # drop(server);
/// ```
pub trait IntoResourceList: Send {
    /// Converts the value.
    fn into_resource_list(self) -> Result<Vec<Resource>, ToolError>;
}
impl IntoResourceList for Vec<Resource> {
    fn into_resource_list(self) -> Result<Vec<Resource>, ToolError> {
        Ok(self)
    }
}
impl<E: Into<ToolError> + Send> IntoResourceList for Result<Vec<Resource>, E> {
    fn into_resource_list(self) -> Result<Vec<Resource>, ToolError> {
        self.map_err(Into::into)
    }
}

pub(crate) type ResourceHandler = Arc<
    dyn Fn(ResourceCall) -> BoxFuture<'static, Result<Vec<ResourceContents>, ToolError>>
        + Send
        + Sync,
>;
pub(crate) type Lister =
    Arc<dyn Fn(Context) -> BoxFuture<'static, Result<Vec<Resource>, ToolError>> + Send + Sync>;

/// A resource (fixed URI) or resource template (RFC 6570 URI template): its definition and
/// its handler.
///
/// `#[resource]` builds these; [`ResourceDef::new`] builds one by hand.
///
/// ```
/// use mcp_runtime::{Requirements, ResourceDef, Server, ToolError};
///
/// let motd = ResourceDef::new("motd://today", "motd", Requirements::default(), |_call| async {
///     Ok::<_, ToolError>("Stay hydrated.")
/// })
/// .description("The message of the day.")
/// .mime_type("text/plain");
/// assert_eq!(motd.uri(), "motd://today");
/// let server = Server::builder("x", "1.0").resource(motd).build().unwrap();
/// # drop(server);
/// ```
pub struct ResourceDef {
    pub(crate) uri: String,
    pub(crate) name: String,
    pub(crate) title: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) mime_type: Option<String>,
    pub(crate) size: Option<u64>,
    pub(crate) icons: Vec<Icon>,
    pub(crate) annotations: Option<Annotations>,
    pub(crate) meta: Option<Map<String, Value>>,
    pub(crate) cache: Option<CacheHints>,
    pub(crate) requirements: Requirements,
    pub(crate) completers: BTreeMap<String, Completer>,
    pub(crate) lister: Option<Lister>,
    pub(crate) handler: ResourceHandler,
}

impl ResourceDef {
    /// A resource at `uri` (a plain URI, or a URI template with `{variables}`), named
    /// `name`, read by `handler`.
    pub fn new<F, Fut, R>(
        uri: impl Into<String>,
        name: impl Into<String>,
        requirements: Requirements,
        handler: F,
    ) -> ResourceDef
    where
        F: Fn(ResourceCall) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, ToolError>> + Send + 'static,
        R: IntoContents,
    {
        let handler: ResourceHandler = Arc::new(move |call: ResourceCall| {
            let uri = call.uri.clone();
            let mime = call.mime_type.clone();
            let fut = handler(call);
            Box::pin(async move { fut.await?.into_contents(&uri, mime.as_deref()) })
        });
        ResourceDef {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            size: None,
            icons: Vec::new(),
            annotations: None,
            meta: None,
            cache: None,
            requirements,
            completers: BTreeMap::new(),
            lister: None,
            handler,
        }
    }

    /// The URI or template.
    pub fn uri(&self) -> &str {
        &self.uri
    }
    /// Sets the title.
    pub fn title(mut self, t: impl Into<String>) -> Self {
        self.title = Some(t.into());
        self
    }
    /// Sets the description.
    pub fn description(mut self, d: impl Into<String>) -> Self {
        self.description = Some(d.into());
        self
    }
    /// Sets the MIME type (also the type of the text and bytes it returns).
    pub fn mime_type(mut self, m: impl Into<String>) -> Self {
        self.mime_type = Some(m.into());
        self
    }
    /// Sets the size in bytes.
    pub fn size(mut self, s: u64) -> Self {
        self.size = Some(s);
        self
    }
    /// Adds an icon.
    pub fn icon(mut self, icon: Icon) -> Self {
        self.icons.push(icon);
        self
    }
    /// Sets the annotations (audience, priority, last modification).
    pub fn annotations(mut self, a: Annotations) -> Self {
        self.annotations = Some(a);
        self
    }
    /// Adds an entry to the resource's `_meta`.
    pub fn meta(mut self, key: impl Into<String>, value: Value) -> Self {
        self.meta
            .get_or_insert_with(Map::new)
            .insert(key.into(), value);
        self
    }
    /// Sets the caching hints of its listing and of `resources/read` (default: `0`,
    /// `private`).
    pub fn cache(mut self, hints: CacheHints) -> Self {
        self.cache = Some(hints);
        self
    }
    /// Completes the template variable `variable` with `completer`.
    pub fn completer<A, C: IntoCompleter<A>>(
        mut self,
        variable: impl Into<String>,
        completer: C,
    ) -> Self {
        self.completers
            .insert(variable.into(), completer.into_completer());
        self
    }
    /// Lists the resources this template can produce (shown in `resources/list`).
    pub fn list_with<F, Fut, R>(mut self, list: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoResourceList,
    {
        self.lister = Some(Arc::new(move |_cx| {
            let fut = list();
            Box::pin(async move { fut.await.into_resource_list() })
        }));
        self
    }

    /// The entry of `resources/list` (for a plain URI) or of `resources/templates/list`.
    pub(crate) fn to_json(&self, template: bool) -> Value {
        let mut r = Map::new();
        r.insert(
            (if template { "uriTemplate" } else { "uri" }).into(),
            json!(self.uri),
        );
        r.insert("name".into(), json!(self.name));
        if let Some(t) = &self.title {
            r.insert("title".into(), json!(t));
        }
        if let Some(d) = &self.description {
            r.insert("description".into(), json!(d));
        }
        if let Some(m) = &self.mime_type {
            r.insert("mimeType".into(), json!(m));
        }
        if let (Some(s), false) = (self.size, template) {
            r.insert("size".into(), json!(s));
        }
        if !self.icons.is_empty() {
            r.insert("icons".into(), json!(self.icons));
        }
        if let Some(a) = &self.annotations {
            r.insert("annotations".into(), json!(a));
        }
        if let Some(m) = &self.meta {
            r.insert("_meta".into(), Value::Object(m.clone()));
        }
        Value::Object(r)
    }
}
