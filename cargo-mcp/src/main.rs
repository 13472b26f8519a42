//! `cargo mcp`: start an MCP server project, and print what a server lists.
//!
//! ```text
//! cargo mcp new PATH [--name NAME] [--runtime-path DIR | --crates-io] [--vcs git|none]
//! cargo mcp schema [--check SNAPSHOT] [--timeout SECS] [-- COMMAND ARGS...]
//! cargo mcp completions SHELL
//! ```
//!
//! `new` writes the files of this repository's `template/` folder (the same one
//! `cargo generate` uses) into PATH, with the project name (PATH's last component, as with
//! `cargo new`, or `--name`) filled in, and makes it a git repository.
//! Until `mcp-runtime` is published, the project depends on the checkout `cargo-mcp` was
//! built from (or `--runtime-path DIR`).
//!
//! `schema` runs the server over stdio (by default `cargo run --quiet`, in the current
//! folder), asks for `tools/list`, `prompts/list`, `resources/list` and
//! `resources/templates/list` (all pages), and prints them as one pretty JSON document with
//! sorted keys: the text `mcp_runtime::assert_lists_snapshot!` keeps in its insta snapshot.
//! `--check` compares instead of printing. The server must answer within 600 s when the
//! command is `cargo` (it may be building the server first) and within 30 s otherwise;
//! `--timeout SECS` sets another deadline.

mod new;
mod schema;

use clap::{CommandFactory, Parser, Subcommand};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// As a cargo subcommand, cargo runs `cargo-mcp mcp ARGS...`.
#[derive(Parser)]
#[command(name = "cargo", bin_name = "cargo")]
enum Cargo {
    /// MCP server projects: start one, print what it lists.
    Mcp(Cli),
}

#[derive(clap::Args)]
#[command(
    version,
    about = "Start MCP server projects written with mcp-runtime, and print what a server lists"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Writes a new MCP server project (one tool, one resource, one prompt, their tests)
    /// into PATH.
    New(NewArgs),
    /// Runs a server on stdio and prints its tools, prompts, resources and resource
    /// templates as one JSON document (what the list snapshot holds).
    Schema(SchemaArgs),
    /// Prints a completion script for SHELL (`cargo mcp completions bash >> ~/.bashrc`).
    Completions {
        /// The shell to complete in.
        shell: clap_complete::Shell,
    },
}

#[derive(clap::Args)]
struct NewArgs {
    /// The folder to create (missing parents are created, as `cargo new` does); its last
    /// component is the project's name (a package name: lower-case letters, digits, `-` and `_`).
    path: PathBuf,
    /// The project's name, instead of PATH's last component.
    #[arg(long, value_name = "NAME")]
    name: Option<String>,
    /// Depend on the mcp-runtime checkout at DIR (default: the one cargo-mcp was built
    /// from).
    #[arg(long, value_name = "DIR", conflicts_with = "crates_io")]
    runtime_path: Option<PathBuf>,
    /// Depend on mcp-runtime from crates.io instead of a checkout.
    #[arg(long)]
    crates_io: bool,
    /// The version control to set up, as `cargo new` does.
    #[arg(long, value_enum, default_value = "git")]
    vcs: new::Vcs,
}

#[derive(clap::Args)]
struct SchemaArgs {
    /// Compare with this insta snapshot (its body) instead of printing; exit 1 on a
    /// difference.
    #[arg(long, value_name = "SNAPSHOT")]
    check: Option<PathBuf>,
    /// Seconds the server gets to answer every list [default: 600 when COMMAND is cargo,
    /// which may build the server first; 30 for any other program].
    // At least 1: a deadline of 0 s would fail every server.
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..))]
    timeout: Option<u64>,
    /// The command that serves MCP on stdio (default: cargo run --quiet).
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

fn main() -> ExitCode {
    let Cargo::Mcp(cli) = Cargo::parse();
    let result = match cli.command {
        Command::New(a) => {
            let runtime = if a.crates_io {
                new::Runtime::CratesIo
            } else {
                new::Runtime::Path(a.runtime_path)
            };
            new::run(&a.path, a.name.as_deref(), runtime, a.vcs)
        }
        Command::Schema(a) => schema::run(
            a.command,
            a.check,
            a.timeout.map(std::time::Duration::from_secs),
        ),
        Command::Completions { shell } => {
            // Into memory first: clap_complete panics when its writer fails (a closed
            // pipe, a full disk).
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cargo::command(), "cargo", &mut script);
            let mut out = std::io::stdout().lock();
            out.write_all(&script)
                .and_then(|()| out.flush())
                .map_err(|e| format!("cannot write the completion script: {e}"))
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // Not `eprintln!`: it panics when stderr cannot take the text.
            let _ = writeln!(std::io::stderr(), "error: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_is_well_formed() {
        Cargo::command().debug_assert();
    }

    #[test]
    fn every_subcommand_has_help() {
        for sub in ["new", "schema", "completions"] {
            let err = Cargo::try_parse_from(["cargo", "mcp", sub, "--help"])
                .err()
                .unwrap();
            assert_eq!(err.kind(), clap::error::ErrorKind::DisplayHelp, "{sub}");
        }
        let err = Cargo::try_parse_from(["cargo", "mcp", "new", "--frobnicate"])
            .err()
            .unwrap();
        assert_eq!(err.kind(), clap::error::ErrorKind::UnknownArgument);
    }

    #[test]
    fn schema_takes_a_command_after_dashes() {
        let Cargo::Mcp(cli) =
            Cargo::try_parse_from(["cargo", "mcp", "schema", "--", "./srv", "--stdio"]).unwrap();
        let Command::Schema(a) = cli.command else {
            panic!()
        };
        assert_eq!(a.command, ["./srv", "--stdio"]);
        assert_eq!(a.timeout, None);
    }

    #[test]
    fn schema_takes_a_timeout_in_seconds_but_not_zero() {
        let Cargo::Mcp(cli) =
            Cargo::try_parse_from(["cargo", "mcp", "schema", "--timeout", "5", "--", "./srv"])
                .unwrap();
        let Command::Schema(a) = cli.command else {
            panic!()
        };
        assert_eq!(a.timeout, Some(5));
        assert_eq!(a.command, ["./srv"]);
        for bad in ["0", "-1", "ten"] {
            assert!(
                Cargo::try_parse_from(["cargo", "mcp", "schema", "--timeout", bad]).is_err(),
                "{bad}"
            );
        }
    }
}
