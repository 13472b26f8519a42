//! The binaries of benches/servers (package `mcp-bench-servers`): the servers the `stdio`
//! and `http` benches measure, built apart from the bench so that they have mcp-runtime's
//! default features, as a user's server does (this package's dev-dependencies turn on
//! every optional feature for the tests, and a bench binary would carry them all).
//!
//! `BENCH_SERVERS_DIR` names a directory holding them (benches/layout.sh points it at
//! relinked copies); without it they are built here, release, in this target directory,
//! by the `cargo` that runs the bench.

use std::path::PathBuf;
use std::process::Command;

/// The path of binary `name` (`mcp-bench-stdio`, `mcp-bench-stdio-io`, `mcp-bench-http`),
/// built first when `BENCH_SERVERS_DIR` is not set.
pub fn binary(name: &str) -> Result<PathBuf, String> {
    if let Some(dir) = std::env::var_os("BENCH_SERVERS_DIR").filter(|d| !d.is_empty()) {
        let path = PathBuf::from(dir).join(name);
        return match path.is_file() {
            true => Ok(path),
            false => Err(format!("BENCH_SERVERS_DIR has no {}", path.display())),
        };
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "build",
            "--quiet",
            "--release",
            "--package",
            "mcp-bench-servers",
        ])
        .args(["--bin", name, "--message-format=json"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("cargo build -p mcp-bench-servers: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cargo build -p mcp-bench-servers --bin {name} failed"
        ));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|m| m["target"]["name"] == name)
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .ok_or_else(|| format!("cargo build -p mcp-bench-servers named no {name} binary"))
}
