use mcp_runtime::{
    Context, Json, KnownArguments, Resource, ResourceContents, SafePath, Server, State, Error,
    resource, resources,
};

struct Root(std::path::PathBuf);

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Unit {
    Metric,
    Imperial,
}

/// The configuration.
#[resource(
    "config://app",
    title = "App config",
    mime_type = "application/json",
    size = 2,
    icon(src = "https://example.com/c.png"),
    annotations(audience(user, assistant), priority = 0.5, last_modified = "2026-07-28T10:00:00Z"),
    meta = r#"{"com.example/owner": "ops"}"#,
    ttl_ms = 60000,
    cache_scope = "public"
)]
async fn config() -> &'static str {
    "{}"
}

async fn list_files() -> Vec<Resource> {
    vec![Resource::new("file:///a.txt", "a.txt")]
}

async fn complete_path(partial: String, known: KnownArguments) -> Vec<String> {
    let _ = known.get("other");
    vec![format!("{partial}.txt")]
}

/// A file under the root.
#[resource("file:///{+path}", name = "file", mime_type = "text/plain", list = list_files)]
async fn file(#[arg(complete = complete_path)] path: SafePath, root: State<Root>) -> Result<Vec<u8>, Error> {
    Ok(path.read_under(&root.0).await?)
}

/// Weather in a city.
#[resource("weather://{city}/forecast{?days,unit}")]
async fn forecast(city: String, days: Option<u8>, unit: Option<Unit>, cx: Context) -> Json<serde_json::Value> {
    let _ = cx.request_id();
    Json(serde_json::json!({"city": city, "days": days, "unit": unit}))
}

/// A nested path, from an exploded path expression: `src://tree/a/b.rs` binds `a/b.rs`.
#[resource("src://tree{/path*}")]
async fn source(path: SafePath) -> String {
    path.as_path().display().to_string()
}

async fn ids_from_state(partial: String, root: State<Root>) -> Vec<String> {
    let _ = &root.0;
    vec![partial]
}

/// Several notes, from an exploded list: `notes://1,2,3` binds `[1, 2, 3]`.
#[resource("notes://{ids*}")]
async fn notes(#[arg(complete = ids_from_state)] ids: Vec<u64>) -> String {
    format!("{ids:?}")
}

/// Several contents.
#[resource("bundle://{id}")]
async fn bundle(id: u32) -> Vec<ResourceContents> {
    vec![
        ResourceContents::text(format!("bundle://{id}/a"), "text/plain", "a"),
        ResourceContents::blob(format!("bundle://{id}/b"), "application/octet-stream", [1, 2]),
    ]
}

fn main() {
    let server = Server::builder("t", "1")
        .state(Root(std::env::temp_dir()))
        .resources(resources![config, file, forecast, bundle, source, notes])
        .build()
        .unwrap();
    drop(server);
}
