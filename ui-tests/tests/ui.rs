//! Compile-time behaviour of the macros: every error message has a case under
//! `ui/<macro>/fail/` with its expected `.stderr`; every option is used by a case under
//! `ui/<macro>/pass/`.
//!
//! The `.stderr` files are pinned to one compiler (rustc's own messages change between
//! releases). Regenerate with `TRYBUILD=overwrite cargo test -p ui-tests` and review the diff.

const PINNED: &str = "rustc 1.95.";

#[test]
fn ui() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = std::process::Command::new(rustc)
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    assert!(
        version.starts_with(PINNED),
        "the ui snapshots are pinned to {PINNED}x, but the compiler is `{}`; regenerate them with TRYBUILD=overwrite on the new compiler and review the diff",
        version.trim()
    );
    let t = trybuild::TestCases::new();
    t.pass("ui/tool/pass/*.rs");
    t.pass("ui/server/pass/*.rs");
    t.pass("ui/resource/pass/*.rs");
    t.pass("ui/prompt/pass/*.rs");
    t.compile_fail("ui/tool/fail/*.rs");
    t.compile_fail("ui/server/fail/*.rs");
    t.compile_fail("ui/resource/fail/*.rs");
    t.compile_fail("ui/prompt/fail/*.rs");
    t.pass("ui/needs_input/pass/*.rs");
    t.compile_fail("ui/needs_input/fail/*.rs");
}
