//! The README's "The wire, with curl" section: its `sh` block, run with bash against
//! `examples/weather` on HTTP, prints exactly the `text` block that follows it.
//!
//! Needs bash, curl and jq; skips without them unless `MCP_REAL_CLIENTS=required`.

mod common;

use common::*;
use std::process::Command;

const SECTION: &str = "## The wire, with curl";
const README_ADDR: &str = "127.0.0.1:8080";

/// The body of the first fenced block with this info string after `from`.
fn fenced<'a>(text: &'a str, info: &str) -> (&'a str, &'a str) {
    let open = format!("```{info}\n");
    let start = text
        .find(&open)
        .unwrap_or_else(|| panic!("no ```{info} block"))
        + open.len();
    let len = text[start..].find("```\n").expect("unclosed block");
    (&text[start..start + len], &text[start + len..])
}

fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn the_readme_curl_session_prints_what_the_readme_says() {
    let missing: Vec<_> = ["bash", "curl", "jq"]
        .into_iter()
        .filter(|t| !have(t))
        .collect();
    if !missing.is_empty() {
        assert_ne!(
            std::env::var("MCP_REAL_CLIENTS").as_deref(),
            Ok("required"),
            "missing {missing:?}"
        );
        eprintln!("skipping: {missing:?} not installed");
        return;
    }
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    let section = &readme[readme.find(SECTION).expect("README section")..];
    let (script, rest) = fenced(section, "sh");
    let (expected, _) = fenced(rest, "text");
    assert!(
        script.contains(README_ADDR),
        "the block should talk to {README_ADDR}"
    );

    let (_server, addr) = spawn_http_example("weather", &["--http", "127.0.0.1:0"]);
    let script = script.replace(README_ADDR, &addr.to_string());
    let out = Command::new("bash")
        .args(["-euo", "pipefail", "-c", &script])
        .output()
        .expect("run bash");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the README block failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout, expected, "update the README's output block");
}
