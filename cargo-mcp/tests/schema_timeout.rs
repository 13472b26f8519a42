//! `cargo mcp schema -- PROGRAM`, run as cargo runs it (`cargo-mcp mcp schema ...`): a
//! program that never answers fails within its deadline, with an error that names it,
//! the deadline and `--timeout`.

use std::process::Command;
use std::time::{Duration, Instant};

#[test]
fn a_program_that_never_answers_fails_in_seconds_naming_the_deadline() {
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_cargo-mcp"))
        .args(["mcp", "schema", "--timeout", "1", "--", "sleep", "100"])
        .output()
        .unwrap();
    let took = started.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{out:?}");
    // One second of deadline plus start-up: far from sleep's 100 s or the old 600 s.
    assert!(took < Duration::from_secs(20), "took {took:?}: {stderr}");
    assert!(stderr.contains("`sleep 100`"), "{stderr}");
    assert!(stderr.contains("the 1 s deadline expired"), "{stderr}");
    assert!(stderr.contains("--timeout SECS"), "{stderr}");
    assert!(out.stdout.is_empty(), "{out:?}");
}

#[test]
fn the_default_deadline_is_stated_in_the_help() {
    let out = Command::new(env!("CARGO_BIN_EXE_cargo-mcp"))
        .args(["mcp", "schema", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(help.contains("--timeout <SECS>"), "{help}");
    assert!(help.contains("600 when COMMAND is cargo"), "{help}");
    assert!(help.contains("30 for any other program"), "{help}");
}
