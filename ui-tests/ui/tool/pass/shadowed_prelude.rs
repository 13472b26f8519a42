// User types named like prelude items must not break the generated code.
#![allow(dead_code)]
use mcp_runtime::{Server, tool, tools};

struct Result;
struct Option;
struct Ok;
struct Some;
struct Vec;
struct String;

/// Still works.
#[tool]
async fn works(text: std::string::String) -> std::string::String {
    text
}

fn main() {
    Server::builder("t", "1").tools(tools![works]).build().unwrap();
}
