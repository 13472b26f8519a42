//! `cargo mcp`: start an MCP server project, and print what a server lists.
//!
//! ```text
//! cargo mcp new NAME [--runtime-path DIR]   write a new project into ./NAME
//! cargo mcp schema [-- COMMAND ARGS...]     print the server's tools/prompts/resources lists
//! ```
//!
//! `new` writes the files of this repository's `template/` folder (the same one
//! `cargo generate` uses), with the project name filled in; `--runtime-path` depends on a
//! local `mcp-runtime` checkout instead of the crates.io release.
//!
//! `schema` runs the server over stdio (by default `cargo run --quiet`, in the current
//! folder), asks for `tools/list`, `prompts/list`, `resources/list` and
//! `resources/templates/list` (all pages), and prints them as one pretty JSON document with
//! sorted keys: the same text `mcp_runtime::testing::assert_lists_snapshot` commits.

mod new;
mod schema;

use std::process::ExitCode;

const USAGE: &str = "usage:
  cargo mcp new NAME [--runtime-path DIR]   write a new MCP server project into ./NAME
  cargo mcp schema [-- COMMAND ARGS...]     print the lists of a server served on stdio
                                            (default command: cargo run --quiet)";

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    // As a cargo subcommand, cargo passes the subcommand name first.
    if args.first().is_some_and(|a| a == "mcp") {
        args.remove(0);
    }
    let result = match args.first().map(String::as_str) {
        Some("new") => new::run(&args[1..]),
        Some("schema") => schema::run(&args[1..]),
        Some("-h" | "--help" | "help") => {
            println!("{USAGE}");
            Ok(())
        }
        _ => Err(USAGE.to_owned()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
