//! The weather server of the README: a tool that needs the user's GitHub login (asked by
//! elicitation, in a multi round-trip request), a resource template and a prompt.
//! `cargo run --example weather` serves stdio; `-- --http 127.0.0.1:8080` serves Streamable
//! HTTP at `/mcp` instead (the README's "The wire, with curl" section talks to it).

use mcp_runtime::config::RequestState;
use mcp_runtime::{Form, PromptMessage, Server, prompt, prompts, resource, resources, tool, tools};

#[derive(serde::Deserialize, schemars::JsonSchema, Form)]
struct GitHub {
    /// Your GitHub login
    login: String,
}

/// Current weather for a location, personalised for the GitHub user.
#[tool]
#[needs_input]
async fn get_weather(
    #[arg(header = "Location")] location: String, // mirrored as `Mcp-Param-Location` on HTTP
    #[input(elicit = "Who is asking about {location}?")] user: GitHub,
) -> String {
    format!("Sunny in {location}, @{}", user.login)
}

/// Three-day forecast for a city.
#[resource("weather://{city}/forecast", mime_type = "text/plain")]
async fn forecast(city: String) -> String {
    format!("{city}: sun, clouds, rain")
}

/// Asks the model for a weather report.
#[prompt]
async fn weather_report(city: String) -> PromptMessage {
    PromptMessage::user(format!("Write a short weather report for {city}."))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    mcp_runtime::telemetry::init(); // logs to stderr: stdout carries the protocol
    let server = Server::builder("weather", "1.0")
        .tools(tools![get_weather])
        .resources(resources![forecast])
        .prompts(prompts![weather_report])
        // One process serves every round of a multi round-trip request, so a key made at
        // start-up may seal `requestState`; several instances share one instead.
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
