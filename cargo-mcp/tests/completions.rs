//! `cargo mcp completions SHELL`, run as cargo runs it (`cargo-mcp mcp completions ...`):
//! a stdout that cannot take the script is an error, not a panic.

use std::process::{Command, Stdio};

/// Writing to a full disk (`/dev/full`) panicked inside clap_complete ("failed to write
/// completion file") with exit status 101 and, with RUST_BACKTRACE set, a backtrace.
#[cfg(target_os = "linux")]
#[test]
fn a_stdout_that_fails_is_an_error_not_a_panic() {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_cargo-mcp"))
        .args(["mcp", "completions", "bash"])
        .stdout(Stdio::from(full))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stderr.starts_with("error: "), "{stderr}");
}

#[test]
fn the_script_is_printed() {
    let out = Command::new(env!("CARGO_BIN_EXE_cargo-mcp"))
        .args(["mcp", "completions", "bash"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("complete -F"));
}
