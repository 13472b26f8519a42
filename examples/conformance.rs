//! The fixture surface the official MCP conformance suite calls, written with our macros.
//!
//! `cargo run --example conformance` serves Streamable HTTP on `127.0.0.1:$PORT/mcp`
//! (`PORT` from the environment, default 3000); `--stdio` serves stdio instead.
//! `MCP_REQUEST_TIMEOUT_MS` sets the request time limit (the default otherwise).
//!
//! Tool names and texts follow the suite's reference fixture exactly: the suite matches
//! on them. Later issues add their fixtures (resources, prompts, MRTR, headers, listen).

use mcp_runtime::config::{Limits, RequestState};
use mcp_runtime::{
    Arguments, Content, Context, Error, Form, Input, Logger, Progress, PromptMessage,
    ResourceContents, Server, prompt, prompts, resource, resources, tool, tools,
};
use std::time::Duration;

const PNG: &[u8] = include_bytes!("assets/pixel.png");
const WAV: &[u8] = include_bytes!("assets/tone.wav");

/// Returns a simple text response.
#[tool]
async fn test_simple_text() -> &'static str {
    "This is a simple text response for testing."
}

/// Returns a 1x1 PNG image.
#[tool]
async fn test_image_content() -> Content {
    Content::image(PNG, "image/png")
}

/// Returns a short WAV clip.
#[tool]
async fn test_audio_content() -> Content {
    Content::audio(WAV, "audio/wav")
}

/// Returns an embedded text resource.
#[tool]
async fn test_embedded_resource() -> Content {
    Content::embedded_text(
        "test://embedded-resource",
        "text/plain",
        "This is an embedded resource content.",
    )
}

/// Returns text, an image and an embedded resource together.
#[tool]
async fn test_multiple_content_types() -> Vec<Content> {
    vec![
        Content::text("Multiple content types test:"),
        Content::image(PNG, "image/png"),
        Content::embedded_text(
            "test://mixed-content-resource",
            "application/json",
            r#"{"test":"data","value":123}"#,
        ),
    ]
}

/// Reports progress three times (0, 50, 100 of 100), then answers.
#[tool]
async fn test_tool_with_progress(progress: Progress) -> &'static str {
    for (i, p) in [0.0, 50.0, 100.0].into_iter().enumerate() {
        if i > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        progress.report(p, Some(100.0), Some(&format!("step {}", i + 1)));
    }
    "Progress test completed."
}

/// Sends three log messages, then answers (only when the request sets a log level).
#[tool]
async fn test_tool_with_logging(log: Logger) -> &'static str {
    for msg in [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ] {
        log.info(msg);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    "Logging test completed."
}

/// Logs one message when the request sets `io.modelcontextprotocol/logLevel`; silent otherwise.
#[tool]
async fn test_logging_tool(log: Logger) -> &'static str {
    log.info("test_logging_tool ran");
    "Logging tool completed."
}

/// Always fails with a tool execution error.
#[tool]
async fn test_error_handling() -> Result<String, Error> {
    Err(Error::new(
        "This tool intentionally returns an error for testing",
    ))
}

/// Needs the client's `sampling` capability; without it the call fails with -32021.
#[tool]
async fn test_missing_capability(cx: Context) -> Result<&'static str, Error> {
    cx.require_capability("sampling")?;
    Ok("Success")
}

/// Streams one progress notification, then the result; never a request to the client.
#[tool]
async fn test_streaming_elicitation(progress: Progress) -> &'static str {
    progress.report(1.0, Some(1.0), Some("working"));
    "Streaming test completed."
}

/// Takes a JSON Schema 2020-12 input schema, served exactly as written, and echoes the
/// arguments.
#[tool(input_schema = r##"{
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": { "street": { "type": "string" }, "city": { "type": "string" } }
        }
    },
    "properties": {
        "name": { "type": "string" },
        "address": { "$ref": "#/$defs/address" },
        "contactMethod": { "type": "string", "enum": ["phone", "email"] },
        "phone": { "type": "string" },
        "email": { "type": "string" }
    },
    "allOf": [{ "anyOf": [{ "required": ["phone"] }, { "required": ["email"] }] }],
    "if": { "properties": { "contactMethod": { "const": "phone" } }, "required": ["contactMethod"] },
    "then": { "required": ["phone"] },
    "else": { "required": ["email"] },
    "additionalProperties": false
}"##)]
async fn json_schema_2020_12_tool(args: Arguments) -> String {
    serde_json::Value::Object(args.0).to_string()
}

/// Routes a query by region; `region` is mirrored into the `Mcp-Param-Region` header.
#[tool]
async fn test_x_mcp_header(
    #[arg(header = "Region", description = "Region to query")] region: String,
    #[arg(header = "Priority")] priority: Option<i32>,
    #[arg(header = "Verbose")] verbose: Option<bool>,
    query: Option<String>,
) -> String {
    format!("region={region} priority={priority:?} verbose={verbose:?} query={query:?}")
}

/// Announces that the tool list changed, on the listen streams that asked for it.
#[tool]
async fn test_trigger_tool_change(cx: Context) -> &'static str {
    if let Some(server) = cx.server() {
        server.notify(mcp_runtime::Change::ToolsListChanged);
    }
    "Mutation triggered"
}

/// Announces that the prompt list changed, on the listen streams that asked for it.
#[tool]
async fn test_trigger_prompt_change(cx: Context) -> &'static str {
    if let Some(server) = cx.server() {
        server.notify(mcp_runtime::Change::PromptsListChanged);
    }
    "Mutation triggered"
}

/// Announces that `test://watched-resource` changed.
#[tool]
async fn test_trigger_resource_update(cx: Context) -> &'static str {
    if let Some(server) = cx.server() {
        server.notify_resource_updated("test://watched-resource");
    }
    "Mutation triggered"
}

// ---------------------------------------------------------------- input required (MRTR)

#[derive(serde::Deserialize, schemars::JsonSchema, Form)]
struct UserName {
    /// Your name
    name: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema, Form)]
struct Confirm {
    /// Confirm the action
    ok: bool,
}

#[derive(serde::Deserialize, schemars::JsonSchema, Form)]
struct Color {
    /// Your favourite color
    color: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema, Form)]
struct UserContext {
    /// Context for the prompt
    context: String,
}

fn sampled_text(v: &serde_json::Value) -> String {
    v["content"]["text"].as_str().unwrap_or_default().to_owned()
}

/// Asks the user's name (elicitation), then greets them.
#[tool]
#[needs_input]
async fn test_input_required_result_elicitation(
    #[input(elicit = "What is your name?")] user_name: UserName,
) -> String {
    format!("Hello, {}!", user_name.name)
}

/// Asks the client's model a question (sampling).
#[tool]
#[needs_input]
async fn test_input_required_result_sampling(
    #[input(sample = "What is the capital of France?", max_tokens = 100)]
    sample_request: serde_json::Value,
) -> String {
    format!("The model said: {}", sampled_text(&sample_request))
}

/// Asks the client for its roots.
#[tool]
#[needs_input]
async fn test_input_required_result_list_roots(
    #[input(roots)] roots_request: Vec<serde_json::Value>,
) -> String {
    format!("Found {} root(s)", roots_request.len())
}

/// Asks for a confirmation; a recorded step carries a token between rounds.
#[tool]
#[needs_input]
async fn test_input_required_result_request_state(
    input: Input,
    #[input(elicit = "Proceed?")] confirm: Confirm,
) -> Result<String, Error> {
    let token = input.step("token", async { "state-ok".to_owned() }).await?;
    Ok(format!("{token}: confirmed={}", confirm.ok))
}

/// Asks three kinds of input in one round.
#[tool]
#[needs_input]
async fn test_input_required_result_multiple_inputs(
    #[input(elicit = "What is your name?")] user_name: UserName,
    #[input(sample = "Write a short greeting.", max_tokens = 100)] greeting: serde_json::Value,
    #[input(roots)] client_roots: Vec<serde_json::Value>,
) -> String {
    format!(
        "{} / {} / {} root(s)",
        user_name.name,
        sampled_text(&greeting),
        client_roots.len()
    )
}

/// Asks in two rounds: the second question depends on the first answer.
#[tool]
#[needs_input]
async fn test_input_required_result_multi_round(
    input: Input,
    #[input(elicit = "What is your name?")] step1: UserName,
) -> Result<String, Error> {
    let color: Color = input
        .elicit(
            "step2",
            format!("{}, what is your favourite color?", step1.name),
        )
        .await?
        .accepted()?;
    Ok(format!("{} likes {}", step1.name, color.color))
}

/// Carries an integrity-protected state; a tampered state is refused.
#[tool]
#[needs_input]
async fn test_input_required_result_tampered_state(
    #[input(elicit = "Proceed?")] confirm: Confirm,
) -> String {
    format!("confirmed={}", confirm.ok)
}

/// Asks only for what this request's client capabilities allow: elicitation if declared,
/// else sampling.
#[tool]
async fn test_input_required_result_capabilities(
    cx: Context,
    input: Input,
) -> Result<String, Error> {
    if cx.client_capabilities().has("elicitation") {
        let user: UserName = input
            .elicit("user_input", "What is your name?")
            .await?
            .accepted()?;
        return Ok(format!("Hello, {}!", user.name));
    }
    let request = mcp_runtime::mrtr::sampling_request("Say hello.", 100);
    let answer = input.sample("sample_input", request).await?;
    Ok(format!("The model said: {}", sampled_text(&answer)))
}

/// A prompt that asks the user for context first.
#[prompt]
#[needs_input]
async fn test_input_required_result_prompt(
    #[input(elicit = "What context should the prompt use?")] user_context: UserContext,
) -> String {
    format!("Prompt with context: {}", user_context.context)
}

// ---------------------------------------------------------------- resources

/// A static text resource.
#[resource(
    "test://static-text",
    name = "static-text",
    title = "Static text",
    mime_type = "text/plain"
)]
async fn static_text() -> &'static str {
    "This is the content of the static text resource."
}

/// A static binary resource (a 1x1 PNG).
#[resource(
    "test://static-binary",
    name = "static-binary",
    title = "Static binary",
    mime_type = "image/png"
)]
async fn static_binary() -> &'static [u8] {
    PNG
}

/// A resource template: the data of one id.
#[resource(
    "test://template/{id}/data",
    name = "template",
    title = "Template",
    mime_type = "application/json"
)]
async fn template(id: String) -> String {
    serde_json::json!({ "id": id, "templateTest": true, "data": format!("Data for ID: {id}") })
        .to_string()
}

/// A resource whose updates clients can watch.
#[resource(
    "test://watched-resource",
    name = "watched-resource",
    title = "Watched resource",
    mime_type = "text/plain"
)]
async fn watched_resource() -> &'static str {
    "Watched resource content"
}

/// A static resource served statelessly.
#[resource(
    "test://stateless-static-text",
    name = "Stateless Static Text",
    mime_type = "text/plain"
)]
async fn stateless_static_text() -> &'static str {
    "Static text content from the stateless draft path."
}

// ---------------------------------------------------------------- prompts

/// A simple prompt without arguments.
#[prompt]
async fn test_simple_prompt() -> &'static str {
    "This is a simple prompt for testing."
}

/// A prompt with two required arguments.
#[prompt]
async fn test_prompt_with_arguments(
    #[arg(description = "First test argument", complete = complete_arg1)] arg1: String,
    #[arg(description = "Second test argument")] arg2: String,
) -> String {
    format!("Prompt with arguments: arg1='{arg1}', arg2='{arg2}'")
}

/// Suggestions for `arg1`: the known values that start with what was typed.
async fn complete_arg1(partial: String) -> Vec<String> {
    ["test", "testValue1", "testing", "other"]
        .into_iter()
        .filter(|v| v.starts_with(&partial))
        .map(String::from)
        .collect()
}

/// A prompt that embeds a resource.
#[prompt]
async fn test_prompt_with_embedded_resource(
    #[arg(name = "resourceUri", description = "URI of the resource to embed")] resource_uri: String,
) -> Vec<PromptMessage> {
    vec![
        PromptMessage::user(Content::embedded(ResourceContents::text(
            resource_uri,
            "text/plain",
            "Embedded resource content for testing.",
        ))),
        PromptMessage::user("Please process the embedded resource above."),
    ]
}

// The 2025-11-25 requirement set's interactive fixtures. Written once with `Input`: a
// legacy session gets real server→client requests, a 2026-07-28 client input_required.

/// Asks the client's model to answer a prompt (sampling).
#[tool]
async fn test_sampling(
    #[arg(description = "The prompt to send to the LLM")] prompt: String,
    input: Input,
) -> Result<String, Error> {
    let request = serde_json::json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
        "maxTokens": 100,
    });
    let answer = input.sample("sample", request).await?;
    let content = &answer["content"];
    let text = match content.as_array() {
        Some(blocks) => blocks.iter().find_map(|b| b["text"].as_str()),
        None => content["text"].as_str(),
    };
    Ok(format!("LLM response: {}", text.unwrap_or_default()))
}

fn elicited(e: mcp_runtime::Elicited<serde_json::Value>) -> (String, String) {
    match e {
        mcp_runtime::Elicited::Accept(v) => ("accept".into(), v.to_string()),
        mcp_runtime::Elicited::Decline => ("decline".into(), "null".into()),
        mcp_runtime::Elicited::Cancel => ("cancel".into(), "null".into()),
    }
}

/// Asks the user for their name and e-mail (form elicitation).
#[tool]
async fn test_elicitation(
    #[arg(description = "The message to show the user")] message: String,
    input: Input,
) -> Result<String, Error> {
    let schema = serde_json::json!({
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        },
        "required": ["username", "email"],
    });
    let (action, content) = elicited(input.elicit_schema("response", message, schema).await?);
    Ok(format!("User response: action={action}, content={content}"))
}

/// Asks with a form whose fields have defaults (SEP-1034).
#[tool]
async fn test_elicitation_sep1034_defaults(input: Input) -> Result<String, Error> {
    let schema = serde_json::json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {
                "type": "string", "description": "User status",
                "enum": ["active", "inactive", "pending"], "default": "active",
            },
            "verified": {"type": "boolean", "description": "Verification status", "default": true},
        },
        "required": [],
    });
    let message = "Please review and update the form fields with defaults";
    let (action, content) = elicited(input.elicit_schema("defaults", message, schema).await?);
    Ok(format!(
        "Elicitation completed: action={action}, content={content}"
    ))
}

/// Asks with every kind of enum field (SEP-1330).
#[tool]
async fn test_elicitation_sep1330_enums(input: Input) -> Result<String, Error> {
    let schema = serde_json::json!({
        "type": "object",
        "properties": {
            "untitledSingle": {
                "type": "string", "description": "Select one option",
                "enum": ["option1", "option2", "option3"],
            },
            "titledSingle": {
                "type": "string", "description": "Select one option with titles",
                "oneOf": [
                    {"const": "value1", "title": "First Option"},
                    {"const": "value2", "title": "Second Option"},
                    {"const": "value3", "title": "Third Option"},
                ],
            },
            "legacyEnum": {
                "type": "string", "description": "Select one option (legacy)",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"],
            },
            "untitledMulti": {
                "type": "array", "description": "Select multiple options",
                "minItems": 1, "maxItems": 3,
                "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
            },
            "titledMulti": {
                "type": "array", "description": "Select multiple options with titles",
                "minItems": 1, "maxItems": 3,
                "items": {"anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"},
                ]},
            },
        },
        "required": [],
    });
    let message = "Please select options from the enum fields";
    let (action, content) = elicited(input.elicit_schema("enums", message, schema).await?);
    Ok(format!(
        "Elicitation completed: action={action}, content={content}"
    ))
}

// The tasks extension (io.modelcontextprotocol/tasks): the suite's tasks-* fixtures.

/// Greets by name; never runs as a task.
#[tool]
async fn greet(name: String) -> String {
    format!("Hello, {name}!")
}

/// Busy for `millis` ms (at most 60 000), yielding only through tokio's cooperative
/// budget, as a long computation that calls `tokio::task::consume_budget` does: the
/// request time limit still cuts it off, and other requests are answered meanwhile.
#[tool]
async fn busy_compute(millis: u64) -> String {
    let end = std::time::Instant::now() + Duration::from_millis(millis.min(60_000));
    let mut rounds = 0u64;
    while std::time::Instant::now() < end {
        tokio::task::consume_budget().await;
        rounds += 1;
    }
    format!("{rounds} rounds")
}

/// Waits `seconds` (0 to 3600), then answers; a task when the client declares the tasks
/// extension, reporting progress as the task's status message.
#[tool(task = "optional")]
async fn slow_compute(
    seconds: f64,
    label: Option<String>,
    progress: Progress,
) -> Result<String, Error> {
    if !(0.0..=3600.0).contains(&seconds) {
        return Err(Error::new("`seconds` must be between 0 and 3600"));
    }
    let label = label.unwrap_or_else(|| "job".into());
    let steps = seconds.ceil().max(1.0) as u32;
    for step in 0..steps {
        progress.report(
            f64::from(step),
            Some(f64::from(steps)),
            Some(&format!("{label}: step {} of {steps}", step + 1)),
        );
        tokio::time::sleep(Duration::from_secs_f64(seconds / f64::from(steps))).await;
    }
    Ok(format!("{label}: computed in {seconds} s"))
}

/// Fails as a tool after a second: the task completes with an `isError` result. Runs only
/// as a task.
#[tool(task = "required")]
async fn failing_job() -> Result<String, Error> {
    tokio::time::sleep(Duration::from_secs(1)).await;
    Err(Error::new("The job failed: the input was rejected."))
}

/// Fails with a JSON-RPC error: the task ends `failed`.
#[tool(task = "required")]
async fn protocol_error_job() -> Result<String, Error> {
    tokio::time::sleep(Duration::from_millis(200)).await;
    Err(Error::protocol(mcp_runtime::protocol::RpcError::internal(
        "Internal error: the job's backend is unavailable",
    )))
}

#[derive(serde::Deserialize, schemars::JsonSchema, Form)]
struct DeleteConfirmation {
    /// Delete the file?
    confirm: bool,
}

/// Deletes a file once the user confirms (asked from inside the task).
#[tool(task = "optional")]
async fn confirm_delete(filename: String, input: Input) -> Result<String, Error> {
    let answer: DeleteConfirmation = input
        .elicit("confirm", format!("Delete {filename}?"))
        .await?
        .accepted()?;
    Ok(if answer.confirm {
        format!("Deleted {filename}.")
    } else {
        format!("Kept {filename}.")
    })
}

#[derive(serde::Deserialize, schemars::JsonSchema, Form)]
struct Detail {
    /// A name
    name: Option<String>,
    /// Go ahead?
    confirm: Option<bool>,
}

/// Asks two questions at once from inside the task; completes when both are answered.
#[tool(task = "optional")]
async fn multi_input(input: Input) -> Result<String, Error> {
    let (first, second) = tokio::join!(
        input.elicit::<Detail>("first", "First detail?"),
        input.elicit::<Detail>("second", "Second detail?"),
    );
    let (first, second) = (first?.accepted()?, second?.accepted()?);
    let confirmed = first.confirm.unwrap_or(false) && second.confirm.unwrap_or(false);
    Ok(format!(
        "Got {} and {} (confirmed: {confirmed}).",
        first.name.unwrap_or_default(),
        second.name.unwrap_or_default()
    ))
}

/// Asks for the user's name in rounds before the task exists, then works as a task.
#[tool(task = "required")]
#[mcp_runtime::needs_input]
async fn test_tool_with_task(
    #[input(elicit = "What is your name?", key = "user_name")] user: UserName,
) -> String {
    tokio::time::sleep(Duration::from_millis(300)).await;
    format!("Hello, {}! The task is done.", user.name)
}

/// A prompt with an image.
#[prompt]
async fn test_prompt_with_image() -> Vec<PromptMessage> {
    vec![
        PromptMessage::user(Content::image(PNG, "image/png")),
        PromptMessage::user("Please analyze the image above."),
    ]
}

/// The default limits, with the request time limit from `MCP_REQUEST_TIMEOUT_MS`.
fn limits() -> Limits {
    let timeout = std::env::var("MCP_REQUEST_TIMEOUT_MS")
        .ok()
        .and_then(|ms| ms.parse().ok())
        .map(Duration::from_millis);
    match timeout {
        Some(t) => Limits::default().request_timeout(t),
        None => Limits::default(),
    }
}

pub(crate) fn server() -> Server {
    Server::builder("mcp-runtime-conformance", env!("CARGO_PKG_VERSION"))
        .instructions("Fixture server for the MCP conformance suite.")
        // One process serves the suite; multi-instance deployments set MCP_REQUEST_STATE_KEYS.
        .request_state(RequestState::single_instance())
        .limits(limits())
        .tools(tools![
            test_simple_text,
            test_image_content,
            test_audio_content,
            test_embedded_resource,
            test_multiple_content_types,
            test_tool_with_progress,
            test_tool_with_logging,
            test_logging_tool,
            test_error_handling,
            test_missing_capability,
            test_streaming_elicitation,
            json_schema_2020_12_tool,
            test_x_mcp_header,
            test_trigger_tool_change,
            test_trigger_prompt_change,
            test_trigger_resource_update,
            test_input_required_result_elicitation,
            test_input_required_result_sampling,
            test_input_required_result_list_roots,
            test_input_required_result_request_state,
            test_input_required_result_multiple_inputs,
            test_input_required_result_multi_round,
            test_input_required_result_tampered_state,
            test_input_required_result_capabilities,
            test_sampling,
            test_elicitation,
            test_elicitation_sep1034_defaults,
            test_elicitation_sep1330_enums,
            greet,
            slow_compute,
            busy_compute,
            failing_job,
            protocol_error_job,
            confirm_delete,
            multi_input,
            test_tool_with_task,
        ])
        .resources(resources![
            static_text,
            static_binary,
            template,
            watched_resource,
            stateless_static_text,
        ])
        .prompts(prompts![
            test_simple_prompt,
            test_prompt_with_arguments,
            test_prompt_with_embedded_resource,
            test_prompt_with_image,
            test_input_required_result_prompt,
        ])
        .build()
        .unwrap_or_else(|e| {
            eprintln!("{e}");
            std::process::exit(2)
        })
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    mcp_runtime::telemetry::init();
    let server = server();
    if std::env::args().any(|a| a == "--stdio") {
        return server.serve_stdio().await;
    }
    let port = std::env::var("PORT")
        .ok()
        .and_then(|p| p.parse::<u16>().ok())
        .unwrap_or(3000);
    server.serve_http(("127.0.0.1", port)).await
}
