// A crate that re-exports mcp_runtime under another name points the macros at it with
// `crate = "..."`; attributes written through the new path are recognised.
use mcp_runtime as rt;

#[derive(serde::Deserialize, schemars::JsonSchema, rt::Form)]
#[form(crate = "rt")]
struct Login {
    login: String,
}

/// Greets the caller.
#[rt::tool(crate = "rt")]
#[rt::needs_input]
async fn greet(#[input(elicit = "Who are you?")] who: Login) -> String {
    format!("hello {}", who.login)
}

/// A note.
#[rt::resource("notes://{id}", crate = "rt")]
async fn note(id: u64) -> String {
    id.to_string()
}

/// Says hi.
#[rt::prompt(crate = "rt")]
async fn hi() -> &'static str {
    "hi"
}

struct Counter;

#[rt::server(crate = "rt")]
impl Counter {
    /// Counts.
    #[rt::tool]
    async fn count(&self) -> String {
        "1".into()
    }
}

fn main() {
    let server = rt::Server::builder("t", "1")
        .tools(rt::tools![greet])
        .resources(rt::resources![note])
        .prompts(rt::prompts![hi])
        .provider(Counter)
        .request_state(rt::config::RequestState::single_instance())
        .build()
        .unwrap();
    assert_eq!(server.tool_names(), ["count", "greet"]);
}
