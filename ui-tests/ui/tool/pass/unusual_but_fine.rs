//! Code a user writes that must compile: doc lines starting with other white space, a
//! deprecated tool, `self: &Self`, a raw identifier inserted into an input's text, and
//! `#[mcp_runtime::arg]`.
#![deny(deprecated)]

use mcp_runtime::{Error, Form, Server, server, tool, tools};

/// First line.
///　全角で始まる行
/// Last line.
#[tool]
async fn jp() -> String {
    String::new()
}

/// Old.
#[deprecated(note = "use `jp`")]
#[tool]
async fn old() -> String {
    String::new()
}

#[derive(serde::Deserialize, schemars::JsonSchema, Form)]
struct Sure {
    /// Sure?
    ok: bool,
}

/// Deletes things of a type.
#[tool]
#[mcp_runtime::needs_input]
async fn delete(
    r#type: String,
    #[mcp_runtime::arg(description = "How many")] count: u32,
    #[input(elicit = "Delete {count} of {type}? ({type:?})")] sure: Sure,
) -> Result<String, Error> {
    Ok(format!("{} {count} {type}", sure.ok, type = r#type))
}

struct S;

#[server]
impl S {
    /// Says hi.
    #[tool]
    async fn hi(self: &Self) -> String {
        "hi".into()
    }
}

fn main() {
    Server::builder("t", "1")
        .tools(tools![jp, old, delete])
        .build()
        .unwrap();
    let _ = S;
}
