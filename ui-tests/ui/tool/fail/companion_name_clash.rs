// `#[tool]` defines, beside the function, a hidden struct of the function's name (what
// `tools![fmt]` reads). It shares the type namespace with modules, types and imports: an
// import of the same name in the same scope clashes with it (E0255). Rename the function
// and keep the tool's name with `#[tool(name = "fmt")]`, or import the module under
// another name (`use std::fmt as format;`).
use mcp_runtime::{Server, tool, tools};
use std::fmt;

/// Formats.
#[tool]
async fn fmt() -> String {
    String::new()
}

fn main() {
    let _ = Server::builder("x", "1").tools(tools![fmt]).build();
}
