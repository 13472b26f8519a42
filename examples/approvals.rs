//! Forms and approvals: one tool that asks, in one round, for a form (a documented choice
//! and optional fields) and for an approval at a URL: elicitation in both of its modes.
//! `cargo run --example approvals` serves stdio; `-- --http 127.0.0.1:8080` serves
//! Streamable HTTP at `/mcp` instead. A client without URL elicitation is refused before
//! anything is asked (`-32021`, or the tool's error in a legacy session).

use mcp_runtime::config::RequestState;
use mcp_runtime::{Elicited, Form, Server, tool, tools};

/// Where a service runs.
#[derive(serde::Deserialize, schemars::JsonSchema, Form)]
#[serde(rename_all = "lowercase")]
enum Env {
    /// Staging, for trying things out
    Staging,
    /// Production, where the users are
    Production,
}

#[derive(serde::Deserialize, schemars::JsonSchema, Form)]
struct Plan {
    /// Where to deploy
    env: Env,
    /// How many replicas (2 if left empty)
    replicas: Option<u32>,
    /// A line for the change log
    note: Option<String>,
}

/// Deploys a service: asks where and how, and for the change board's approval.
#[tool]
#[needs_input]
async fn deploy(
    service: String,
    #[input(elicit = "How should {service} be deployed?")] plan: Plan,
    #[input(
        url = "https://changes.example.com/approve/{service}",
        message = "Approve the deployment of {service}"
    )]
    approval: Elicited<()>,
) -> String {
    if !matches!(approval, Elicited::Accept(())) {
        return format!("{service} stays where it is: not approved");
    }
    let env = match plan.env {
        Env::Staging => "staging",
        Env::Production => "production",
    };
    let replicas = plan.replicas.unwrap_or(2);
    match plan.note {
        Some(note) => format!("deployed {service} to {env} with {replicas} replicas ({note})"),
        None => format!("deployed {service} to {env} with {replicas} replicas"),
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    mcp_runtime::telemetry::init(); // logs to stderr: stdout carries the protocol
    let server = Server::builder("approvals", "1.0")
        .tools(tools![deploy])
        // One process serves every round, so a key made at start-up may seal
        // `requestState`; several instances share one instead.
        .request_state(RequestState::single_instance())
        .build()?;
    let args: Vec<String> = std::env::args().collect();
    match args.iter().position(|a| a == "--http") {
        Some(i) => {
            let addr = args.get(i + 1).map_or("127.0.0.1:8080", String::as_str);
            server.serve_http(addr).await?;
        }
        None => server.serve_stdio().await?,
    }
    Ok(())
}
