use mcp_runtime::{Context, Form, PromptMessage, Server, prompt, prompts, resource, resources, tool, tools};

#[derive(serde::Deserialize, schemars::JsonSchema, Form)]
struct Go {
    go: bool,
}

/// Counts to `n` (CPU-bound, so a plain `fn`: it runs on the blocking pool).
#[tool]
fn count(n: u64, cx: Context) -> String {
    let _ = cx.request_id();
    (0..n).sum::<u64>().to_string()
}

/// Asks first (asynchronously), then runs the plain body on the blocking pool.
#[tool]
#[mcp_runtime::needs_input]
fn guarded(#[input(elicit = "Go?")] go: Go) -> Result<String, mcp_runtime::Error> {
    Ok(go.go.to_string())
}

/// A computed document.
#[resource("calc://{n}")]
fn doc(n: u64) -> String {
    n.to_string()
}

/// A prompt made without awaiting anything.
#[prompt]
fn hello(name: String) -> PromptMessage {
    PromptMessage::user(format!("Say hello to {name}"))
}

struct Svc;

#[mcp_runtime::server]
impl Svc {
    /// A plain method, on the blocking pool.
    #[tool]
    fn ping(&self) -> &'static str {
        "pong"
    }
}

fn main() {
    let server = Server::builder("x", "1")
        .tools(tools![count, guarded])
        .resources(resources![doc])
        .prompts(prompts![hello])
        .provider(Svc)
        .request_state(mcp_runtime::config::RequestState::single_instance())
        .build()
        .unwrap();
    drop(server);
}
