//! Raw attribute syntax, parsed with darling. Nothing here is validated beyond its shape.

use darling::FromMeta;
use darling::util::SpannedValue;

/// `#[tool(...)]` options. Names are the MCP JSON fields in snake_case.
#[derive(Debug, Default, FromMeta)]
#[darling(default)]
pub struct ToolArgs {
    /// The tool's name (defaults to the function's name).
    pub name: Option<SpannedValue<String>>,
    /// Human-readable title.
    pub title: Option<String>,
    /// Description (defaults to the doc comment).
    pub description: Option<SpannedValue<String>>,
    /// Behaviour hints.
    pub annotations: Option<AnnotationArgs>,
    /// Icons (repeatable).
    #[darling(multiple)]
    pub icon: Vec<SpannedValue<IconArgs>>,
    /// `_meta` as a JSON object.
    pub meta: Option<SpannedValue<String>>,
    /// Caching hint: TTL in milliseconds.
    pub ttl_ms: Option<u64>,
    /// Caching hint: `"public"` or `"private"`.
    pub cache_scope: Option<SpannedValue<String>>,
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

/// `#[arg(...)]` on a tool parameter.
#[derive(Debug, Default, FromMeta)]
#[darling(default)]
pub struct ArgArgs {
    /// The parameter's description in `inputSchema`.
    pub description: Option<String>,
}
