//! MCP Apps (`io.modelcontextprotocol/ui`): a tool names an interactive view, a `ui://`
//! resource of type `text/html;profile=mcp-app` that hosts render in a sandboxed frame
//! next to the conversation; the tool's result is also text, for hosts without views.
//!
//! ```
//! use mcp_runtime::apps::{Csp, UiResource};
//! use mcp_runtime::{Server, resource, resources, tool, tools};
//!
//! /// Shows the weather (also as text).
//! #[tool(ui = "ui://weather/view.html")]
//! async fn weather(city: String) -> String {
//!     format!("Sunny in {city}")
//! }
//!
//! /// The weather view.
//! #[resource("ui://weather/view.html", app(prefers_border = true, connect_domains("https://api.weather.example")))]
//! async fn weather_view() -> &'static str {
//!     "<!doctype html><title>Weather</title><p id=forecast></p>"
//! }
//!
//! let server = Server::builder("weather", "1.0")
//!     .tools(tools![weather])
//!     .resources(resources![weather_view])
//!     .build()
//!     .unwrap();
//! # drop(server);
//!
//! // Without its view, a tool that names one is refused when the server is built.
//! assert!(Server::builder("x", "1.0").tools(tools![weather]).build().is_err());
//! ```

use crate::server::def::{ResourceDef, ToolDef};
use serde::Serialize;
use serde_json::{Value, json};
use std::sync::Arc;

/// The extension's identifier.
pub const EXTENSION: &str = "io.modelcontextprotocol/ui";

/// The MIME type of an MCP App view.
pub const MIME_TYPE: &str = "text/html;profile=mcp-app";

/// Who may call a tool that has a view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Visibility {
    /// The model (the agent) sees and calls it.
    Model,
    /// The view calls it (through the host), for this server only.
    App,
}

/// Where a view may connect and load from (its Content Security Policy). Empty lists
/// (the default) allow nothing beyond the view itself.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Csp {
    /// Origins for `fetch`, XHR and WebSockets (`connect-src`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub connect_domains: Vec<String>,
    /// Origins for images, scripts, styles, fonts and media.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub resource_domains: Vec<String>,
    /// Origins for nested frames (`frame-src`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub frame_domains: Vec<String>,
    /// Allowed base URIs (`base-uri`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub base_uri_domains: Vec<String>,
}

impl Csp {
    fn is_empty(&self) -> bool {
        self == &Csp::default()
    }
}

/// A sandbox permission a view asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Permission {
    /// `camera`.
    Camera,
    /// `microphone`.
    Microphone,
    /// `geolocation`.
    Geolocation,
    /// `clipboardWrite`.
    ClipboardWrite,
}

impl Permission {
    fn key(self) -> &'static str {
        match self {
            Permission::Camera => "camera",
            Permission::Microphone => "microphone",
            Permission::Geolocation => "geolocation",
            Permission::ClipboardWrite => "clipboardWrite",
        }
    }
}

/// How a view is served: its CSP, permissions, dedicated origin and border preference
/// (the resource's `_meta.ui`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UiResource {
    csp: Csp,
    permissions: Vec<Permission>,
    domain: Option<String>,
    prefers_border: Option<bool>,
}

impl UiResource {
    /// A view with the secure defaults: no network, no permissions, the host's origin.
    pub fn new() -> Self {
        Self::default()
    }
    /// Its Content Security Policy.
    pub fn csp(mut self, csp: Csp) -> Self {
        self.csp = csp;
        self
    }
    /// Asks for a sandbox permission.
    pub fn permission(mut self, p: Permission) -> Self {
        if !self.permissions.contains(&p) {
            self.permissions.push(p);
        }
        self
    }
    /// A dedicated origin for its sandbox (the format is the host's).
    pub fn domain(mut self, domain: impl Into<String>) -> Self {
        self.domain = Some(domain.into());
        self
    }
    /// Whether it prefers a visible border and background.
    pub fn prefers_border(mut self, on: bool) -> Self {
        self.prefers_border = Some(on);
        self
    }

    /// The `_meta.ui` object.
    pub fn to_meta(&self) -> Value {
        let mut ui = serde_json::Map::new();
        if !self.csp.is_empty() {
            ui.insert("csp".into(), json!(self.csp));
        }
        if !self.permissions.is_empty() {
            let p: serde_json::Map<String, Value> = self
                .permissions
                .iter()
                .map(|p| (p.key().to_owned(), json!({})))
                .collect();
            ui.insert("permissions".into(), Value::Object(p));
        }
        if let Some(d) = &self.domain {
            ui.insert("domain".into(), json!(d));
        }
        if let Some(b) = self.prefers_border {
            ui.insert("prefersBorder".into(), json!(b));
        }
        Value::Object(ui)
    }
}

/// The flat `_meta` key older hosts read a tool's view from (`ui/resourceUri`), which
/// ext-apps' `registerAppTool` writes beside `ui.resourceUri`.
const FLAT_RESOURCE_URI: &str = "ui/resourceUri";

/// The view a tool's `_meta` names: `ui.resourceUri`, or the flat `ui/resourceUri`.
#[cfg(feature = "proxy")]
pub(crate) fn view_in(meta: &Value) -> Option<&str> {
    meta["ui"]["resourceUri"]
        .as_str()
        .or_else(|| meta[FLAT_RESOURCE_URI].as_str())
}

/// Points a tool's `_meta` at the view `uri`: `ui.resourceUri`, and the flat key when it
/// is there.
pub(crate) fn point_at(meta: &mut serde_json::Map<String, Value>, uri: &str) {
    let ui = meta.entry("ui").or_insert_with(|| json!({}));
    if let Value::Object(o) = ui {
        o.insert("resourceUri".into(), json!(uri));
    }
    if let Some(flat) = meta.get_mut(FLAT_RESOURCE_URI) {
        *flat = json!(uri);
    }
}

/// Takes the view out of a tool's `_meta` (`ui.resourceUri` and the flat key).
#[cfg(feature = "proxy")]
pub(crate) fn forget_view(meta: &mut serde_json::Map<String, Value>) {
    meta.remove(FLAT_RESOURCE_URI);
    if let Some(Value::Object(ui)) = meta.get_mut("ui") {
        ui.remove("resourceUri");
        if ui.is_empty() {
            meta.remove("ui");
        }
    }
}

/// Whether `uri` can name a view: a `ui://` URI with something after the scheme.
pub fn is_view_uri(uri: &str) -> bool {
    mcp_rules::view_uri(uri).is_ok()
}

impl ToolDef {
    /// Shows the view at `resource_uri` (a `ui://` resource of this server served with
    /// [`ResourceDef::app`]) for this tool's results (`_meta.ui.resourceUri`). The tool
    /// still answers text for hosts without views: a result with no text block gets one
    /// (its structured content as JSON). `Server::build` refuses a tool whose view the
    /// server does not serve.
    pub fn ui(mut self, resource_uri: impl Into<String>) -> Self {
        let uri = resource_uri.into();
        point_at(
            self.item.meta.get_or_insert_with(serde_json::Map::new),
            &uri,
        );
        self.item.view = Some(uri);
        let inner = Arc::clone(&self.handler);
        self.handler = Arc::new(move |call| {
            let inner = Arc::clone(&inner);
            Box::pin(async move {
                let mut out = inner(call).await?;
                let has_text = out
                    .content
                    .iter()
                    .any(|c| matches!(c, crate::Content::Text(_)));
                if !has_text {
                    let text = out.structured_content.as_ref().map_or_else(
                        || "(shown in the interactive view)".to_owned(),
                        Value::to_string,
                    );
                    out.content.push(crate::Content::text(text));
                }
                Ok(out)
            })
        });
        self
    }
    /// Who may call the tool (`_meta.ui.visibility`; default: the model and the view).
    pub fn ui_visibility(mut self, who: &[Visibility]) -> Self {
        let meta = self.item.meta.get_or_insert_with(serde_json::Map::new);
        let ui = meta.entry("ui").or_insert_with(|| json!({}));
        if let Value::Object(o) = ui {
            o.insert("visibility".into(), json!(who));
        }
        self
    }
}

impl ResourceDef {
    /// Serves this `ui://` resource as an MCP App view: MIME type
    /// [`MIME_TYPE`], and `ui` in the `_meta` of its listing and of its contents (each of
    /// them, text or bytes, whatever MIME type the handler gave it).
    pub fn app(mut self, ui: UiResource) -> Self {
        self.spec.mime_type = Some(Arc::from(MIME_TYPE));
        let meta = ui.to_meta();
        self.item
            .meta
            .get_or_insert_with(serde_json::Map::new)
            .insert("ui".into(), meta.clone());
        self.item.app = true;
        let inner = Arc::clone(&self.handler);
        self.handler = Arc::new(move |call| {
            let (inner, meta) = (Arc::clone(&inner), meta.clone());
            Box::pin(async move {
                let mut contents = inner(call).await?;
                // Whatever the handler made, text or bytes (`include_bytes!`), each is
                // the view: its MIME type, and `ui` in its `_meta`.
                for c in &mut contents {
                    let (mime_type, own) = match c {
                        crate::ResourceContents::Text(t) => (&mut t.mime_type, &mut t.meta),
                        crate::ResourceContents::Blob(b) => (&mut b.mime_type, &mut b.meta),
                    };
                    *mime_type = Some(MIME_TYPE.to_owned());
                    own.get_or_insert_with(serde_json::Map::new)
                        .insert("ui".into(), meta.clone());
                }
                Ok(contents)
            })
        });
        self
    }
}
