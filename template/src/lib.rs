//! The {{project-name}} MCP server: one tool, one resource and one prompt to start from.

use mcp_runtime::{
    Error, Json, PromptMessage, Server, prompt, prompts, resource, resources, tool, tools,
};
use schemars::JsonSchema;
use serde::Serialize;

/// The sum of two numbers.
#[derive(Serialize, JsonSchema)]
pub struct Sum {
    /// a + b
    pub total: i64,
}

/// Adds two whole numbers.
#[tool(annotations(read_only_hint = true))]
pub async fn add(
    #[arg(description = "The first number")] a: i64,
    #[arg(description = "The second number")] b: i64,
) -> Result<Json<Sum>, Error> {
    a.checked_add(b)
        .map(|total| Json(Sum { total }))
        .ok_or_else(|| Error::new(format!("{a} + {b} does not fit in 64 bits")))
}

/// A greeting for someone, as a resource.
#[resource("greeting://{name}", mime_type = "text/plain")]
pub async fn greeting(name: String) -> String {
    format!("Hello, {name}!")
}

/// Asks the model to explain a topic simply.
#[prompt]
pub async fn explain(#[arg(description = "What to explain")] topic: String) -> PromptMessage {
    PromptMessage::user(format!("Explain {topic} to a curious twelve-year-old."))
}

/// The server, with everything registered.
pub fn server() -> Result<Server, mcp_runtime::BuildError> {
    Server::builder("{{project-name}}", env!("CARGO_PKG_VERSION"))
        .tools(tools![add])
        .resources(resources![greeting])
        .prompts(prompts![explain])
        .build()
}
