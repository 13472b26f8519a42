//! The options of our attributes, as darling reads them. Names are the MCP JSON fields
//! in snake_case.

use darling::FromMeta;
use darling::util::{Flag, PathList, SpannedValue};

/// Options every kind has: name, presentation, `_meta`, caching, the crate path.
#[derive(Debug, Default, FromMeta)]
#[darling(default)]
pub struct CommonArgs {
    /// The item's name (defaults to the function's name).
    pub name: Option<SpannedValue<String>>,
    /// Human-readable title.
    pub title: Option<String>,
    /// Description (defaults to the doc comment).
    pub description: Option<SpannedValue<String>>,
    /// Icons (repeatable).
    #[darling(multiple)]
    pub icon: Vec<SpannedValue<IconArgs>>,
    /// `_meta` as a JSON object.
    pub meta: Option<SpannedValue<String>>,
    /// Caching hint: TTL in milliseconds.
    pub ttl_ms: Option<u64>,
    /// Caching hint: `"public"` or `"private"`.
    pub cache_scope: Option<SpannedValue<String>>,
    /// OAuth scopes a caller needs: `scopes("files:read", "files:write")`.
    pub scopes: Option<Vec<syn::LitStr>>,
    /// Middleware around this item alone (repeatable; the first is the outermost).
    #[darling(multiple)]
    pub layer: Vec<syn::Expr>,
    /// The path of `mcp_runtime`, for crates that re-export it.
    #[darling(rename = "crate")]
    pub krate: Option<SpannedValue<syn::Path>>,
}

/// `#[tool(...)]`.
#[derive(Debug, Default, FromMeta)]
#[darling(default)]
pub struct ToolArgs {
    #[darling(flatten)]
    pub common: CommonArgs,
    /// Behaviour hints.
    pub annotations: Option<AnnotationArgs>,
    /// A hand-written `inputSchema` (JSON text), served as given.
    pub input_schema: Option<SpannedValue<String>>,
    /// Inline the argument types' schemas instead of `$ref`s into `$defs`.
    pub inline_refs: Flag,
    /// Runs as a task (the tasks extension): `"optional"` or `"required"`.
    pub task: Option<SpannedValue<String>>,
    /// The MCP App view of its results: a `ui://` resource of the server.
    pub ui: Option<SpannedValue<String>>,
}

/// `annotations(...)` inside `#[tool]`.
#[derive(Debug, Default, FromMeta)]
#[darling(default)]
pub struct AnnotationArgs {
    pub title: Option<String>,
    pub read_only_hint: Option<bool>,
    pub destructive_hint: Option<bool>,
    pub idempotent_hint: Option<bool>,
    pub open_world_hint: Option<bool>,
}

/// `icon(src = "...", mime_type = "...", sizes = "48x48 96x96", theme = "dark")`.
#[derive(Debug, FromMeta)]
pub struct IconArgs {
    pub src: SpannedValue<String>,
    #[darling(default)]
    pub mime_type: Option<String>,
    #[darling(default)]
    pub sizes: Option<String>,
    #[darling(default)]
    pub theme: Option<SpannedValue<String>>,
}

/// `#[resource("uri", ...)]`: the options after the URI.
#[derive(Debug, Default, FromMeta)]
#[darling(default)]
pub struct ResourceArgs {
    #[darling(flatten)]
    pub common: CommonArgs,
    pub mime_type: Option<String>,
    pub size: Option<u64>,
    pub annotations: Option<ResourceAnnotationArgs>,
    /// A function listing the resources a template can produce.
    pub list: Option<syn::Path>,
    /// Served as an MCP App view: `app`, or `app(prefers_border = true, ...)`.
    pub app: Option<SpannedValue<darling::util::Override<AppArgs>>>,
}

/// `app(...)` inside `#[resource]`: how an MCP App view is served.
#[derive(Debug, Default, Clone, FromMeta)]
#[darling(default)]
pub struct AppArgs {
    pub prefers_border: Option<bool>,
    pub domain: Option<String>,
    pub connect_domains: Option<Vec<syn::LitStr>>,
    pub resource_domains: Option<Vec<syn::LitStr>>,
    pub frame_domains: Option<Vec<syn::LitStr>>,
    pub base_uri_domains: Option<Vec<syn::LitStr>>,
    pub permissions: Option<PathList>,
}

/// `annotations(audience(user, assistant), priority = 0.5, last_modified = "...")`.
#[derive(Debug, Default, FromMeta)]
#[darling(default)]
pub struct ResourceAnnotationArgs {
    pub audience: Option<PathList>,
    pub priority: Option<SpannedValue<f64>>,
    pub last_modified: Option<SpannedValue<String>>,
}

/// `#[prompt(...)]`.
#[derive(Debug, Default, FromMeta)]
#[darling(default)]
pub struct PromptArgs {
    #[darling(flatten)]
    pub common: CommonArgs,
}

/// `#[server(...)]`.
#[derive(Debug, Default, FromMeta)]
#[darling(default)]
pub struct ServerArgs {
    /// The path of `mcp_runtime`, for crates that re-export it.
    #[darling(rename = "crate")]
    pub krate: Option<syn::Path>,
}

/// `#[arg(...)]` on a parameter.
#[derive(Debug, Default, FromMeta)]
#[darling(default)]
pub struct ArgArgs {
    /// The argument's key, when it differs from the parameter's name (`resourceUri`).
    pub name: Option<SpannedValue<String>>,
    /// The parameter's description (`inputSchema`, prompt argument).
    pub description: Option<SpannedValue<String>>,
    /// A completer for a prompt argument or a template variable.
    pub complete: Option<syn::Path>,
    /// `x-mcp-header`: mirror this tool argument into `Mcp-Param-{header}`.
    pub header: Option<SpannedValue<String>>,
    /// The value of an argument the call leaves out (`default = 3`), or the type's
    /// `Default` (`default` alone).
    pub default: Option<DefaultArg>,
}

/// `default = <expression>` kept as written (darling would read a string literal's text
/// as an expression: `"Oslo"` as the path `Oslo`), or `default` alone (`None`).
#[derive(Debug)]
pub struct DefaultArg {
    /// Where `default` was written.
    pub span: proc_macro2::Span,
    pub value: Option<syn::Expr>,
}

impl FromMeta for DefaultArg {
    fn from_meta(item: &syn::Meta) -> darling::Result<Self> {
        let span = syn::spanned::Spanned::span(item);
        match item {
            syn::Meta::Path(_) => Ok(DefaultArg { span, value: None }),
            syn::Meta::NameValue(nv) => Ok(DefaultArg {
                span,
                value: Some(nv.value.clone()),
            }),
            syn::Meta::List(_) => Err(darling::Error::custom(
                "write `default = <value>`, or `default` alone for the type's `Default`",
            )
            .with_span(item)),
        }
    }
}

/// `#[input(...)]` on a parameter of a `#[needs_input]` function: what to ask the client.
#[derive(Debug, Default, FromMeta)]
#[darling(default)]
pub struct InputArgs {
    /// A form elicitation with this message (`{name}` inserts an argument).
    pub elicit: Option<SpannedValue<String>>,
    /// A URL-mode elicitation to this URL (with `message`).
    pub url: Option<SpannedValue<String>>,
    /// The message of a URL-mode elicitation.
    pub message: Option<SpannedValue<String>>,
    /// A sampling request with this prompt (deprecated in 2026-07-28).
    pub sample: Option<SpannedValue<String>>,
    /// `maxTokens` of the sampling request (default 256).
    pub max_tokens: Option<u32>,
    /// The client's roots (deprecated in 2026-07-28).
    pub roots: Flag,
    /// The key in `inputRequests` (default: the parameter's name).
    pub key: Option<SpannedValue<String>>,
}
