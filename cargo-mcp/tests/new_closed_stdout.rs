//! `cargo mcp new PATH` with a stdout that cannot take its status lines: the project is
//! written, and that is a success, not a panic.

use std::process::{Command, Output, Stdio};

mod common;
use common::Scratch;

/// `cargo-mcp mcp new --vcs none NAME` in `scratch`, its stdout `stdout`.
fn new_with_stdout(scratch: &Scratch, stdout: Stdio) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cargo-mcp"))
        .args(["mcp", "new", "--vcs", "none", "probe"])
        .current_dir(&scratch.0)
        .stdout(stdout)
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

/// A pipe whose reader is gone before the command writes (`cargo mcp new x | head -0`):
/// `println!` panicked ("failed printing to stdout: Broken pipe", exit status 101) after
/// the project was written.
#[test]
fn a_closed_stdout_is_no_panic_and_no_failure() {
    let scratch = Scratch::new("closed-pipe");
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = new_with_stdout(&scratch, Stdio::from(writer));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(out.status.success(), "{:?}: {stderr}", out.status);
    // The reader left on purpose: nothing to warn about.
    assert!(stderr.is_empty(), "{stderr}");
    assert!(scratch.0.join("probe/Cargo.toml").is_file());
    assert!(scratch.0.join("probe/src/main.rs").is_file());
}

/// A stdout that fails otherwise (a full disk): a warning, and still a success.
#[cfg(target_os = "linux")]
#[test]
fn a_stdout_that_fails_is_a_warning() {
    let scratch = Scratch::new("closed-full");
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = new_with_stdout(&scratch, Stdio::from(full));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(out.status.success(), "{:?}: {stderr}", out.status);
    assert!(
        stderr.starts_with("warning: cannot write to stdout"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(scratch.0.join("probe/Cargo.toml").is_file());
}
