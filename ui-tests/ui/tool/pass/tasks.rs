use mcp_runtime::{Error, Form, Input, Progress, Server, tool, tools};

#[derive(serde::Deserialize, schemars::JsonSchema, Form)]
struct Go {
    go: bool,
}

/// Runs as a task when the client declares the extension.
#[tool(task = "optional")]
async fn export(progress: Progress) -> String {
    progress.report(1.0, Some(1.0), Some("exported"));
    "done".into()
}

/// Runs only as a task; asks before and during it.
#[tool(task = "required")]
#[mcp_runtime::needs_input]
async fn migrate(
    #[input(elicit = "Migrate {db}?")] go: Go,
    db: String,
    input: Input,
) -> Result<String, Error> {
    let again: Go = input.elicit("again", "Really?").await?.accepted()?;
    Ok(format!("{db}: {} {}", go.go, again.go))
}

fn main() {
    let server = Server::builder("x", "1")
        .tools(tools![export, migrate])
        .request_state(mcp_runtime::config::RequestState::single_instance())
        .build()
        .unwrap();
    drop(server);
}
