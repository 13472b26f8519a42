//! The weather server of the README: a tool that needs the user's GitHub login (asked by
//! elicitation, in a multi round-trip request), a resource template and a prompt.
//! `cargo run --example weather` serves stdio.

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
    location: String,
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
        .build()?;
    server.serve_stdio().await?;
    Ok(())
}
