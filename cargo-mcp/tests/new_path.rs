//! `cargo mcp new PATH`, run as cargo runs it (`cargo-mcp mcp new ...`): the project is
//! written at PATH and named after its last component, as `cargo new` does.

use std::path::Path;
use std::process::{Command, Output};

mod common;
use common::Scratch;

fn cargo_mcp_new(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cargo-mcp"))
        .args(["mcp", "new", "--vcs", "none"])
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap()
}

fn package_name(dir: &Path) -> String {
    let toml = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    let line = toml.lines().find(|l| l.starts_with("name = ")).unwrap();
    line["name = ".len()..].trim_matches('"').to_owned()
}

#[test]
fn an_absolute_path_with_a_parent_is_created_and_named_after_its_last_component() {
    let scratch = Scratch::new("abs");
    let target = scratch.0.join("parent").join("probe-new");
    std::fs::create_dir(scratch.0.join("parent")).unwrap();
    let out = cargo_mcp_new(&scratch.0, &[target.to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(package_name(&target), "probe-new");
    let main = std::fs::read_to_string(target.join("src/main.rs")).unwrap();
    assert!(main.contains("probe_new::server()"), "{main}");
    let readme = std::fs::read_to_string(target.join("README.md")).unwrap();
    assert!(readme.starts_with("# probe-new\n"), "{readme}");
    for text in [&main, &readme] {
        assert!(
            !text.contains(scratch.0.to_str().unwrap()),
            "the path leaked"
        );
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.starts_with(&format!("created probe-new in {}:", target.display())),
        "{stdout}"
    );
    // Refused once it exists, as before.
    let out = cargo_mcp_new(&scratch.0, &[target.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("exists already; nothing written"),
        "{out:?}"
    );
}

#[test]
fn a_relative_path_and_a_name_option() {
    let scratch = Scratch::new("rel");
    let out = cargo_mcp_new(&scratch.0, &["servers/my_server"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        package_name(&scratch.0.join("servers/my_server")),
        "my_server"
    );
    let out = cargo_mcp_new(&scratch.0, &["servers/1st", "--name", "first"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(package_name(&scratch.0.join("servers/1st")), "first");
}

#[test]
fn an_invalid_last_component_is_refused_with_a_hint() {
    let scratch = Scratch::new("bad");
    let target = scratch.0.join("1abc");
    let out = cargo_mcp_new(&scratch.0, &[target.to_str().unwrap()]);
    assert!(!out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "error: `1abc`, the project name taken from `{0}`, is not valid: a project name \
             starts with a letter\nhelp: to create `{0}` under another project name, pass \
             `--name NAME`\n",
            target.display()
        )
    );
    assert!(!target.exists(), "written anyway");
}

#[test]
fn a_bare_name_still_works() {
    let scratch = Scratch::new("bare");
    let out = cargo_mcp_new(&scratch.0, &["demo"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(package_name(&scratch.0.join("demo")), "demo");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.starts_with("created demo: cd demo && cargo test"),
        "{out:?}"
    );
    // With the default path dependency, it says the project's CI cannot build it
    // elsewhere.
    assert!(said.contains("its CI workflow"), "{out:?}");
    let out = cargo_mcp_new(&scratch.0, &["1abc"]);
    assert!(!out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: `1abc`: a project name starts with a letter\n"
    );
}

/// `--runtime-path` must name mcp-runtime's own folder: a folder without it (or the clone
/// of this repository, whose root package is another one) wrote a project cargo could
/// not resolve. Refused before anything is written, with the folder to pass instead.
#[test]
fn a_runtime_path_that_is_not_mcp_runtime_is_refused_before_writing() {
    let scratch = Scratch::new("runtime-path");
    let empty = scratch.0.join("empty");
    std::fs::create_dir(&empty).unwrap();
    let out = cargo_mcp_new(
        &scratch.0,
        &["--runtime-path", empty.to_str().unwrap(), "srv"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{out:?}");
    assert!(stderr.contains("is not mcp-runtime's folder"), "{stderr}");
    assert!(!scratch.0.join("srv").exists(), "written anyway");

    let clone = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = cargo_mcp_new(
        &scratch.0,
        &["--runtime-path", clone.to_str().unwrap(), "srv"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{out:?}");
    let inner = clone.join("mcp-runtime").canonicalize().unwrap();
    assert!(
        stderr.contains(&format!("help: pass `--runtime-path {}`", inner.display())),
        "{stderr}"
    );
    assert!(!scratch.0.join("srv").exists(), "written anyway");
}
