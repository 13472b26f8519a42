//! A server links only the machinery its items use (docs/architecture.md, "Rules"): the
//! engines serving prompts, resources, task tools, input rounds and middleware are reached
//! only through what needs them. Checked on built examples' symbol tables with `nm`:
//! `notes` (tools only; none of the five, nor the URI template matcher that only resources
//! reach; its tools take `Handles`, so the default handle store, made on first use, is
//! linked), `conformance` (prompts, resources, task tools and tools that ask; no
//! middleware, no `Handles`) and `gateway` (middleware). Each check first finds
//! `tools::call`, which every server links, so that a change in how symbols are named
//! fails the test instead of making "none" pass.

mod common;

use std::process::Command;

/// A function that only each engine names, by the engine's name.
const ENGINES: [(&str, &str); 7] = [
    ("prompts", "mcp_runtime::server::methods::prompts::get"),
    (
        "resources",
        "mcp_runtime::server::methods::resources::serve",
    ),
    (
        "template matching",
        "mcp_uri_template::matching::<impl mcp_uri_template::UriTemplate>::captures",
    ),
    ("tasks", "mcp_runtime::server::tasks::task_method"),
    ("input rounds", "mcp_runtime::mrtr::round::Round::open_with"),
    ("middleware", "mcp_runtime::server::middleware::wrap"),
    (
        "handle store",
        "<mcp_runtime::store::handles::MemoryHandleStore as mcp_runtime::store::handles::HandleStore>::insert",
    ),
];

/// A function every server links: the control that the names are read right.
const ALWAYS: &str = "mcp_runtime::server::methods::tools::call";

/// The engines example `name`'s binary links, or `None` (said why) without `nm`.
fn linked(name: &str) -> Option<Vec<&'static str>> {
    let path = common::example(name);
    let out = match Command::new("nm").arg("-C").arg(&path).output() {
        Ok(out) if out.status.success() => out,
        Ok(out) => panic!(
            "nm {} failed: {}",
            path.display(),
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) if std::env::var_os("CI").is_none() => {
            eprintln!("skipped: nm did not run ({e}); Debian: apt-get install binutils");
            return None;
        }
        Err(e) => panic!("nm did not run ({e}); on CI it must (binutils)"),
    };
    let symbols = String::from_utf8_lossy(&out.stdout);
    let names: Vec<&str> = symbols
        .lines()
        .filter_map(|l| l.splitn(3, ' ').nth(2))
        .collect();
    assert!(
        names.contains(&ALWAYS),
        "{ALWAYS} not found in {}: are symbols still named as this test reads them?",
        path.display()
    );
    Some(
        ENGINES
            .iter()
            .filter(|(_, f)| names.contains(f))
            .map(|(engine, _)| *engine)
            .collect(),
    )
}

#[test]
fn a_server_of_tools_only_links_none_of_the_engines() {
    let Some(engines) = linked("notes") else {
        return;
    };
    assert_eq!(engines, ["handle store"], "notes: tools that take Handles");
}

#[test]
fn a_server_with_every_kind_links_what_it_uses() {
    let Some(engines) = linked("conformance") else {
        return;
    };
    assert_eq!(
        engines,
        [
            "prompts",
            "resources",
            "template matching",
            "tasks",
            "input rounds"
        ],
        "conformance has prompts, resources, task tools and tools that ask; no middleware, no Handles"
    );
}

#[test]
fn a_server_with_middleware_links_its_engine() {
    let Some(engines) = linked("gateway") else {
        return;
    };
    assert!(
        engines.contains(&"middleware"),
        "gateway has middleware, yet links {engines:?}"
    );
}
