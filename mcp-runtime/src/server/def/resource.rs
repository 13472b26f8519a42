//! What a resource adds to a definition: its URI (or URI template), MIME type, size,
//! annotations and list function; and [`Resource`], an entry of `resources/list`.

use super::call::Call;
use super::kind::{self, Kind};
use super::output::IntoResult;
use super::signature::Signature;
use super::{Def, Icon};
use crate::Error;
use crate::protocol::Annotations;
use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::future::Future;
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

/// A template's list function, type-erased.
pub(crate) type Lister = Arc<
    dyn Fn() -> BoxFuture<'static, Result<<kind::ResourceList as Kind>::Output, Error>>
        + Send
        + Sync,
>;

/// A resource's part of its definition.
#[doc(hidden)]
pub struct ResourceSpec {
    /// The URI, or the URI template.
    pub(crate) uri: String,
    pub(crate) mime_type: Option<Arc<str>>,
    pub(crate) size: Option<u64>,
    pub(crate) annotations: Option<Annotations>,
    pub(crate) lister: Option<Lister>,
    /// What serves resources: named here, so that only a server with resources links it.
    pub(crate) engine: &'static crate::server::methods::ResourceEngine,
}

impl Def<kind::Resource> {
    /// A resource at `uri` (a plain URI, or an RFC 6570 URI template with `{variables}`),
    /// named `name`, read by `handler`.
    ///
    /// ```
    /// use mcp_runtime::{Error, Server};
    /// use mcp_runtime::def::ResourceDef;
    /// use mcp_runtime::handler::{Call, Signature};
    /// use mcp_runtime::kind::Resource;
    ///
    /// let motd = ResourceDef::new("motd://today", "motd", Signature::new(), |_call| async {
    ///     Ok::<_, Error>("Stay hydrated.")
    /// })
    /// .description("The message of the day.")
    /// .mime_type("text/plain");
    /// let note = ResourceDef::new("notes://{id}", "note", Signature::new(), |mut call: Call<Resource>| async move {
    ///     let id: u64 = call.variable("id")?;
    ///     Ok::<_, Error>(format!("note {id} at {}", call.target().uri()))
    /// });
    /// assert_eq!(note.uri(), "notes://{id}");
    /// let server = Server::builder("x", "1.0").resource(motd).resource(note).build().unwrap();
    /// # drop(server);
    /// ```
    pub fn new<F, Fut, R>(
        uri: impl Into<String>,
        name: impl Into<String>,
        signature: Signature,
        handler: F,
    ) -> Self
    where
        F: Fn(Call<kind::Resource>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, Error>> + Send + 'static,
        R: IntoResult<kind::Resource>,
    {
        let spec = ResourceSpec {
            uri: uri.into(),
            mime_type: None,
            size: None,
            annotations: None,
            lister: None,
            engine: &crate::server::methods::resources::ENGINE,
        };
        Def::from_parts(
            name.into(),
            spec,
            signature.requirements,
            super::erase(handler),
        )
    }

    /// The URI or template.
    pub fn uri(&self) -> &str {
        &self.spec.uri
    }
    /// Sets the MIME type (also the type of the text and bytes it returns).
    pub fn mime_type(mut self, m: impl Into<String>) -> Self {
        self.spec.mime_type = Some(Arc::from(m.into()));
        self
    }
    /// Sets the size in bytes.
    pub fn size(mut self, s: u64) -> Self {
        self.spec.size = Some(s);
        self
    }
    /// Sets the annotations (audience, priority, last modification).
    pub fn annotations(mut self, a: Annotations) -> Self {
        self.spec.annotations = Some(a);
        self
    }
    /// Lists the resources this template can produce (shown in `resources/list`): `list`
    /// returns `Vec<Resource>` or a `Result` of it.
    pub fn list_with<F, Fut, R>(mut self, list: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoResult<kind::ResourceList>,
    {
        self.spec.lister = Some(Arc::new(move || {
            let fut = list();
            Box::pin(async move {
                fut.await
                    .into_result(&super::Target::new("resources/list", None))
            })
        }));
        self
    }

    /// The entry of `resources/list` (for a plain URI) or of `resources/templates/list`.
    pub(crate) fn to_json(&self, template: bool) -> Box<RawValue> {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Wire<'a> {
            #[serde(skip_serializing_if = "Option::is_none")]
            uri: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            uri_template: Option<&'a str>,
            name: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            title: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            description: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            mime_type: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            size: Option<u64>,
            #[serde(skip_serializing_if = "<[Icon]>::is_empty")]
            icons: &'a [Icon],
            #[serde(skip_serializing_if = "Option::is_none")]
            annotations: Option<&'a Annotations>,
            #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
            meta: Option<&'a Map<String, Value>>,
        }
        let item = &self.item;
        let uri = self.spec.uri.as_str();
        serde_json::value::to_raw_value(&Wire {
            uri: (!template).then_some(uri),
            uri_template: template.then_some(uri),
            name: &item.name,
            title: item.title.as_deref(),
            description: item.description.as_deref(),
            mime_type: self.spec.mime_type.as_deref(),
            size: self.spec.size.filter(|_| !template),
            icons: &item.icons,
            annotations: self.spec.annotations.as_ref(),
            meta: item.meta.as_ref(),
        })
        .expect("resource definitions serialize")
    }
}
