use mcp_runtime::{
    Content, Error, GetPromptResult, KnownArguments, PromptMessage, Server, prompt, prompts,
};

async fn languages(partial: String) -> Vec<String> {
    ["rust", "ruby"].iter().filter(|l| l.starts_with(&partial)).map(|s| s.to_string()).collect()
}

async fn files(partial: String, known: KnownArguments) -> Vec<String> {
    vec![format!("{}/{partial}", known.get("language").unwrap_or("src"))]
}

/// Reviews code.
#[prompt(title = "Code review", icon(src = "https://example.com/r.png"), meta = r#"{"com.example/x": 1}"#)]
async fn review(
    #[arg(description = "The language", complete = languages)] language: String,
    #[arg(name = "filePath", complete = files)] file_path: Option<String>,
    strict: Option<bool>,
) -> Vec<PromptMessage> {
    vec![
        PromptMessage::user(format!("Review {language} {file_path:?} strict={strict:?}")),
        PromptMessage::assistant(Content::text("Sure.")),
    ]
}

/// Plain text becomes one user message; `prompts/list` is cacheable for a minute.
#[prompt(name = "hello.v2", ttl_ms = 60000, cache_scope = "public")]
async fn hello() -> &'static str {
    "hello"
}

/// Full control over the result.
#[prompt]
async fn custom() -> Result<GetPromptResult, Error> {
    Ok(GetPromptResult { description: Some("custom".into()), messages: vec![] })
}

fn main() {
    let server = Server::builder("t", "1").prompts(prompts![review, hello, custom]).build().unwrap();
    drop(server);
}
