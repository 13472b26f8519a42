use mcp_runtime::{Content, Context, Json, Logger, Progress, Server, State, Error, tool, tools};

struct Db;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Filter {
    prefix: String,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Out {
    n: u32,
}

/// Every option at once.
///
/// A second paragraph.
#[tool(
    name = "every-option.v1",
    title = "Every option",
    annotations(title = "Every", read_only_hint, destructive_hint = false, idempotent_hint = true, open_world_hint = false),
    icon(src = "https://example.com/i.png", mime_type = "image/png", sizes = "48x48 96x96", theme = "dark"),
    icon(src = "data:image/png;base64,AA=="),
    meta = r#"{"com.example/team": "search", "plain": 1}"#,
    ttl_ms = 1000,
    cache_scope = "private"
)]
pub async fn every_option(
    #[arg(description = "The query")] query: String,
    limit: Option<u32>,
    filter: Option<Filter>,
    r#type: Vec<String>,
    cx: Context,
    progress: Progress,
    log: Logger,
    db: State<Db>,
) -> Result<Json<Out>, Error> {
    let _ = (query, filter, r#type, cx, progress, log, db);
    Ok(Json(Out { n: limit.unwrap_or(0) }))
}

/// Returns content blocks.
#[tool]
async fn blocks() -> Vec<Content> {
    vec![Content::text("a"), Content::image([1, 2, 3], "image/png")]
}

/// Returns nothing.
#[tool(description = "Overrides the doc comment")]
async fn nothing() {}

mod nested {
    use mcp_runtime::tool;

    /// A tool in a module.
    #[tool]
    pub async fn inner() -> &'static str {
        "inner"
    }
}

fn main() {
    let server = Server::builder("t", "1")
        .state(Db)
        .tools(tools![every_option, blocks, nothing, nested::inner])
        .build()
        .unwrap();
    let names = server.tool_names();
    assert_eq!(names, ["blocks", "every-option.v1", "inner", "nothing"]);
    // The function is still an ordinary function.
    let _future = blocks();
}
