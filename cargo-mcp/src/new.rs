//! `cargo mcp new`: the template, embedded at build time.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Every file of `template/` except `cargo-generate.toml` (a test checks none is missing).
pub(crate) const FILES: &[(&str, &str)] = &[
    ("Cargo.toml", include_str!("../../template/Cargo.toml")),
    ("README.md", include_str!("../../template/README.md")),
    (".gitignore", include_str!("../../template/.gitignore")),
    (
        ".github/workflows/ci.yml",
        include_str!("../../template/.github/workflows/ci.yml"),
    ),
    ("src/lib.rs", include_str!("../../template/src/lib.rs")),
    ("src/main.rs", include_str!("../../template/src/main.rs")),
    (
        "tests/server.rs",
        include_str!("../../template/tests/server.rs"),
    ),
    (
        "tests/snapshots/server__lists.snap",
        include_str!("../../template/tests/snapshots/server__lists.snap"),
    ),
];

/// Which `mcp-runtime` the project depends on.
pub(crate) enum Runtime {
    /// A checkout: this one, or (when `None`) the one `cargo-mcp` was built from.
    Path(Option<PathBuf>),
    /// The crates.io release.
    CratesIo,
}

/// The version control `new` sets up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Vcs {
    /// A git repository (skipped inside an existing work tree, as `cargo new` does).
    Git,
    /// None.
    None,
}

/// The `mcp-runtime` checkout this `cargo-mcp` was built from, if it is still there.
fn own_runtime() -> Option<PathBuf> {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../mcp-runtime")
        .canonicalize()
        .ok()
        .filter(|p| p.join("Cargo.toml").is_file())
}

/// Writes the project into `path` (a bare name is `./NAME`). As with `cargo new`, the
/// project is named after the last component of `path` unless `name` says otherwise.
pub(crate) fn run(
    path: &Path,
    name: Option<&str>,
    runtime: Runtime,
    vcs: Vcs,
) -> Result<(), String> {
    let name = project_name(path, name)?;
    let runtime = match runtime {
        Runtime::CratesIo => None,
        Runtime::Path(Some(p)) => Some(checked_runtime_path(&p)?),
        Runtime::Path(None) => Some(own_runtime().ok_or(
            "mcp-runtime is not on crates.io yet, and the checkout this cargo-mcp was built from is gone: pass --runtime-path DIR (a checkout of mcp-runtime)",
        )?),
    };
    let inside = write_project(path, &name, runtime.as_deref())?;
    let mut status = Status::default();
    if let Some(ws) = inside {
        status.say(format_args!(
            "note: {} is inside the workspace of {}: the project is a workspace of its own (`[workspace]` at the end of its Cargo.toml); to make it a member instead, add it to that workspace's `members` and take that line out",
            path.display(),
            ws.display()
        ));
    }
    if vcs == Vcs::Git {
        init_git(path);
    }
    let dir = path.display();
    let created = if dir.to_string() == name {
        name
    } else {
        format!("{name} in {dir}")
    };
    status.say(format_args!(
        "created {created}: cd {dir} && cargo test (tests), cargo run (serves stdio), cargo run -- --http 127.0.0.1:8080"
    ));
    if let Some(path) = &runtime {
        status.say(format_args!(
            "note: it depends on mcp-runtime at {} (a path on this machine): its CI workflow (.github/workflows/ci.yml) cannot build elsewhere until that dependency is a version or a git repository",
            path.display()
        ));
    }
    Ok(())
}

/// What `new` says once the project is written, on stdout. A stdout that cannot take it
/// does not fail the command, nor panic (as `println!` did): the project is there, and the
/// exit status says so. A reader gone (`| head -1`, `| grep -q`) stops the text silently;
/// another failure (a full disk) is a warning on stderr. Either way the rest is not tried.
#[derive(Default)]
struct Status {
    failed: bool,
}

impl Status {
    fn say(&mut self, line: std::fmt::Arguments<'_>) {
        if self.failed {
            return;
        }
        let mut out = std::io::stdout().lock();
        if let Err(e) = writeln!(out, "{line}").and_then(|()| out.flush()) {
            self.failed = true;
            if e.kind() != std::io::ErrorKind::BrokenPipe {
                warn(format_args!(
                    "cannot write to stdout ({e}); the project was created"
                ));
            }
        }
    }
}

/// `warning: ...` on stderr; a stderr that cannot take it is ignored (no panic, as with
/// `eprintln!`).
fn warn(what: std::fmt::Arguments<'_>) {
    let _ = writeln!(std::io::stderr(), "warning: {what}");
}

/// Whether `dir` holds a manifest of the package `mcp-runtime`.
fn is_mcp_runtime(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join("Cargo.toml"))
        .is_ok_and(|toml| toml.lines().any(|l| l.trim() == "name = \"mcp-runtime\""))
}

/// `--runtime-path DIR`, absolute, once it is known to be mcp-runtime's folder: anything
/// else gives a project cargo cannot resolve. The clone of this repository (whose root
/// is another package) gets a hint at its `mcp-runtime` folder.
fn checked_runtime_path(dir: &Path) -> Result<PathBuf, String> {
    let shown = dir.display();
    let dir = dir
        .canonicalize()
        .map_err(|e| format!("--runtime-path {shown}: {e}"))?;
    if is_mcp_runtime(&dir) {
        return Ok(dir);
    }
    let mut err = format!(
        "--runtime-path {shown} is not mcp-runtime's folder (no Cargo.toml of the package \
         mcp-runtime there); nothing written"
    );
    let inner = dir.join("mcp-runtime");
    if is_mcp_runtime(&inner) {
        err.push_str(&format!(
            "\nhelp: pass `--runtime-path {}`",
            inner.display()
        ));
    }
    Err(err)
}

/// The package name for a project written at `path`: `name` when given (checked), else
/// the last component of `path`, checked with an error that says where it came from and
/// how to pass another (as `cargo new` does).
pub(crate) fn project_name(path: &Path, name: Option<&str>) -> Result<String, String> {
    if let Some(name) = name {
        check_name(name)?;
        return Ok(name.to_owned());
    }
    let shown = path.display();
    let last = path.file_name().ok_or_else(|| {
        format!("`{shown}` has no last component to name the project after; pass `--name NAME`")
    })?;
    let last = last.to_str().ok_or_else(|| {
        format!("the last component of `{shown}` is not UTF-8; pass `--name NAME`")
    })?;
    if path.as_os_str() == last {
        // A bare name: the messages it always had.
        check_name(last)?;
    } else if let Some(problem) = name_problem(last) {
        return Err(format!(
            "`{last}`, the project name taken from `{shown}`, is not valid: {}\n\
             help: to create `{shown}` under another project name, pass `--name NAME`",
            problem.reason()
        ));
    }
    Ok(last.to_owned())
}

/// `git init`, unless `dir` is inside a work tree already or git is missing (said, not
/// an error: the project is written either way).
fn init_git(dir: &Path) {
    use std::process::{Command, Stdio};
    let inside = Command::new("git")
        .args(["rev-parse", "--is-inside-work-tree"])
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if inside {
        return;
    }
    match Command::new("git")
        .args(["init", "--quiet"])
        .current_dir(dir)
        .status()
    {
        Ok(s) if s.success() => {}
        Ok(s) => warn(format_args!(
            "`git init` failed ({s}); the project has no repository"
        )),
        Err(e) => warn(format_args!(
            "git is not available ({e}); the project has no repository"
        )),
    }
}

/// Why a project name is not a valid package name.
enum NameProblem {
    Empty,
    FirstNotALetter,
    Char(char),
    Reserved,
    /// A Rust keyword: the crate could not be named in code (`async::server()`).
    Keyword,
    /// The name of a crate the project depends on: two crates of one name.
    Dependency,
    /// A folder of cargo's build directory, which cargo refuses as a binary's name.
    BuildFolder,
    /// An upper-case letter: rustc's `non_snake_case` lint fires on the crate name.
    UpperCase,
}

impl NameProblem {
    fn reason(&self) -> String {
        match self {
            Self::Empty => "it is empty".to_owned(),
            Self::FirstNotALetter => "a project name starts with a letter".to_owned(),
            Self::Char(c) => {
                format!("`{c}` is not allowed in a project name (letters, digits, - and _)")
            }
            Self::Reserved => "it is reserved".to_owned(),
            Self::Keyword => {
                "it is a Rust keyword, which code could not name the crate by".to_owned()
            }
            Self::Dependency => "the project depends on a crate of that name".to_owned(),
            Self::UpperCase => "with an upper-case letter the crate name is not snake case, \
                 so rustc warns and the project's CI (clippy -D warnings) fails; use lower case"
                .to_owned(),
            Self::BuildFolder => {
                "cargo refuses it as a binary's name (a folder of cargo's build directory)"
                    .to_owned()
            }
        }
    }
}

/// What `cargo new` refuses in a package name, plus reserved names.
fn name_problem(name: &str) -> Option<NameProblem> {
    let Some(first) = name.chars().next() else {
        return Some(NameProblem::Empty);
    };
    if !first.is_ascii_alphabetic() {
        return Some(NameProblem::FirstNotALetter);
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '-' || *c == '_'))
    {
        return Some(NameProblem::Char(c));
    }
    if matches!(name, "test" | "std" | "core" | "alloc" | "proc_macro") {
        return Some(NameProblem::Reserved);
    }
    // What `cargo new` refuses too: every keyword, strict and reserved, of edition 2024.
    const KEYWORDS: &[&str] = &[
        "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "crate",
        "do", "dyn", "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl",
        "in", "let", "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub",
        "ref", "return", "self", "Self", "static", "struct", "super", "trait", "true", "try",
        "type", "typeof", "unsafe", "unsized", "use", "virtual", "where", "while", "yield",
    ];
    if KEYWORDS.contains(&name) {
        return Some(NameProblem::Keyword);
    }
    if name.chars().any(|c| c.is_ascii_uppercase()) {
        return Some(NameProblem::UpperCase);
    }
    // What `cargo new` refuses too: the project has a binary of its name, and cargo
    // rejects the manifest of a binary named like a folder of `target/debug/`.
    if matches!(name, "deps" | "build" | "examples" | "incremental") {
        return Some(NameProblem::BuildFolder);
    }
    // The template's dependencies (template/Cargo.toml), as crate names.
    let krate = name.replace('-', "_");
    if matches!(
        krate.as_str(),
        "mcp_runtime" | "serde" | "serde_json" | "schemars" | "tokio"
    ) {
        return Some(NameProblem::Dependency);
    }
    // The crates of this workspace mcp-runtime depends on: with a path dependency, a
    // package of the same name and version elsewhere collides in the lockfile.
    if matches!(name, "mcp-macros" | "mcp-rules" | "mcp-uri-template") {
        return Some(NameProblem::Dependency);
    }
    None
}

/// A valid package name: what `cargo new` accepts, minus reserved names.
pub(crate) fn check_name(name: &str) -> Result<(), String> {
    match name_problem(name) {
        None => Ok(()),
        Some(NameProblem::Empty) => Err("the project name is empty".to_owned()),
        Some(NameProblem::Reserved) => Err(format!("`{name}` is reserved; pick another name")),
        Some(
            p @ (NameProblem::Keyword
            | NameProblem::Dependency
            | NameProblem::BuildFolder
            | NameProblem::UpperCase),
        ) => Err(format!("`{name}`: {}; pick another name", p.reason())),
        Some(p) => Err(format!("`{name}`: {}", p.reason())),
    }
}

/// The template's text for a project: names filled in, and the runtime dependency pointed
/// at a local checkout when asked.
pub(crate) fn render(text: &str, name: &str, runtime: Option<&Path>) -> String {
    let mut out = text
        .replace("{{project-name}}", name)
        .replace("{{crate_name}}", &name.replace('-', "_"));
    if let Some(path) = runtime {
        // A TOML basic string: backslashes (a Windows path), quotes and control
        // characters escaped.
        let mut escaped = String::new();
        for c in path.display().to_string().chars() {
            match c {
                '\\' | '"' => {
                    escaped.push('\\');
                    escaped.push(c);
                }
                c if c.is_control() => escaped.push_str(&format!("\\u{:04X}", u32::from(c))),
                c => escaped.push(c),
            }
        }
        let path = escaped;
        out = out
            .replace(
                "mcp-runtime = \"0.1\"",
                &format!("mcp-runtime = {{ path = \"{path}\" }}"),
            )
            .replace(
                "mcp-runtime = { version = \"0.1\",",
                &format!("mcp-runtime = {{ path = \"{path}\","),
            );
    }
    out
}

/// Writes every template file under `dir`, which must not exist yet. Inside another
/// Cargo workspace (`cargo mcp new` run in a checkout), cargo would refuse to build a
/// package that workspace does not list: the project is then made a workspace of its own
/// (`[workspace]` in its manifest), and the enclosing workspace's manifest is returned.
pub(crate) fn write_project(
    dir: &Path,
    name: &str,
    runtime: Option<&Path>,
) -> Result<Option<std::path::PathBuf>, String> {
    check_name(name)?;
    if dir.exists() {
        return Err(format!("{} exists already; nothing written", dir.display()));
    }
    let inside = enclosing_workspace(dir);
    for (rel, text) in FILES {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        let mut text = render(text, name, runtime);
        if *rel == "Cargo.toml" && inside.is_some() {
            text.push_str("\n# A workspace of its own, though inside another one.\n[workspace]\n");
        }
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(inside)
}

/// The manifest of the Cargo workspace `dir` (not made yet) would be inside: the nearest
/// `Cargo.toml` above it with a `[workspace]` table.
fn enclosing_workspace(dir: &Path) -> Option<std::path::PathBuf> {
    let start = std::path::absolute(dir).ok()?;
    start.ancestors().skip(1).find_map(|d| {
        let manifest = d.join("Cargo.toml");
        let text = std::fs::read_to_string(&manifest).ok()?;
        text.lines()
            .any(|l| l.trim_start().starts_with("[workspace"))
            .then_some(manifest)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let rel = path
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                out.push(rel);
            }
        }
    }

    #[test]
    fn every_template_file_is_embedded() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../template");
        let mut on_disk = Vec::new();
        walk(&root, &root, &mut on_disk);
        on_disk.retain(|f| f != "cargo-generate.toml");
        on_disk.sort();
        let mut embedded: Vec<String> = FILES.iter().map(|(p, _)| (*p).to_owned()).collect();
        embedded.sort();
        assert_eq!(on_disk, embedded, "template/ and cargo-mcp's FILES differ");
    }

    #[test]
    fn names_are_filled_in_and_checked() {
        let toml = render(FILES[0].1, "my-server", None);
        assert!(toml.contains("name = \"my-server\""));
        assert!(!toml.contains("{{"));
        let main = render(FILES[5].1, "my-server", None);
        assert!(main.contains("my_server::server()"), "{main}");
        for bad in [
            "",
            "1abc",
            "a b",
            "a/b",
            "../x",
            "test",
            "async",
            "self",
            "Self",
            "fn",
            "match",
            "serde",
            "serde-json",
            "tokio",
            "mcp-runtime",
            "schemars",
        ] {
            assert!(check_name(bad).is_err(), "{bad:?} accepted");
        }
        check_name("demo").unwrap();
        check_name("my_server-2").unwrap();
    }

    /// Names cargo refuses for a binary target (its build directory's folders): the
    /// project would not even parse.
    #[test]
    fn names_of_cargos_build_folders_are_refused() {
        for bad in ["deps", "build", "examples", "incremental"] {
            let err = check_name(bad).unwrap_err();
            assert!(err.contains("cargo's build directory"), "{bad}: {err}");
        }
    }

    /// The crates of this workspace that mcp-runtime depends on: a project of the same
    /// name and version from another path makes cargo's lockfile collide.
    #[test]
    fn names_of_mcp_runtimes_own_dependencies_are_refused() {
        for bad in ["mcp-macros", "mcp-rules", "mcp-uri-template"] {
            let err = check_name(bad).unwrap_err();
            assert!(
                err.contains("depends on a crate of that name"),
                "{bad}: {err}"
            );
        }
    }

    /// An upper-case letter makes rustc's `non_snake_case` lint fire on the crate name,
    /// so the project's own `cargo clippy -- -D warnings` failed as generated.
    #[test]
    fn upper_case_names_are_refused() {
        for bad in ["CamelCase", "Insta", "myServer", "A"] {
            let err = check_name(bad).unwrap_err();
            assert!(err.contains("lower case"), "{bad}: {err}");
        }
    }

    #[test]
    fn the_name_is_the_last_component_of_the_path_unless_given() {
        let name = |p: &str, n: Option<&str>| project_name(Path::new(p), n);
        assert_eq!(name("demo", None).unwrap(), "demo");
        assert_eq!(name("/tmp/probe-new", None).unwrap(), "probe-new");
        assert_eq!(name("a/b/my_server", None).unwrap(), "my_server");
        assert_eq!(name("./demo/", None).unwrap(), "demo");
        assert_eq!(name("/tmp/1abc", Some("ok")).unwrap(), "ok");
        // A bare name keeps its messages; a path's says where the name came from.
        assert_eq!(
            name("1abc", None).unwrap_err(),
            "`1abc`: a project name starts with a letter"
        );
        assert_eq!(
            name("test", None).unwrap_err(),
            "`test` is reserved; pick another name"
        );
        assert_eq!(
            name("/tmp/1abc", None).unwrap_err(),
            "`1abc`, the project name taken from `/tmp/1abc`, is not valid: a project name \
             starts with a letter\nhelp: to create `/tmp/1abc` under another project name, \
             pass `--name NAME`"
        );
        let err = name("x/test", None).unwrap_err();
        assert!(
            err.starts_with(
                "`test`, the project name taken from `x/test`, is not valid: it is reserved\n"
            ),
            "{err}"
        );
        let err = name("x/a.b", None).unwrap_err();
        assert!(err.contains("`.` is not allowed"), "{err}");
        // --name is checked as given, with no hint about itself.
        assert_eq!(
            name("x/ok", Some("9")).unwrap_err(),
            "`9`: a project name starts with a letter"
        );
        for nameless in ["..", "/", "."] {
            let err = name(nameless, None).unwrap_err();
            assert!(err.contains("pass `--name NAME`"), "{nameless}: {err}");
        }
    }

    #[test]
    fn a_runtime_path_replaces_both_dependencies() {
        let toml = render(FILES[0].1, "demo", Some(Path::new("/src/mcp-runtime")));
        assert!(
            toml.contains("mcp-runtime = { path = \"/src/mcp-runtime\" }"),
            "{toml}"
        );
        assert!(
            toml.contains(
                "mcp-runtime = { path = \"/src/mcp-runtime\", features = [\"testing\"] }"
            ),
            "{toml}"
        );
        assert!(!toml.contains("\"0.1\""), "{toml}");
    }

    /// A checkout in a folder whose name has a `"` gave a Cargo.toml cargo could not parse.
    #[test]
    fn a_runtime_path_is_escaped_as_a_toml_string() {
        let toml = render(
            FILES[0].1,
            "demo",
            Some(Path::new("/src/q\"x\\y/mcp-runtime")),
        );
        assert!(
            toml.contains(r#"mcp-runtime = { path = "/src/q\"x\\y/mcp-runtime" }"#),
            "{toml}"
        );
    }

    #[test]
    fn the_default_runtime_is_this_checkout() {
        let own = own_runtime().expect("built inside the workspace");
        assert!(own.ends_with("mcp-runtime"), "{}", own.display());
    }

    #[test]
    fn refuses_an_existing_folder() {
        let dir = std::env::temp_dir().join(format!("cargo-mcp-exists-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let err = write_project(&dir, "demo", None).unwrap_err();
        assert!(err.contains("exists already"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn writes_every_file_with_no_placeholder_left() {
        let dir = std::env::temp_dir().join(format!("cargo-mcp-new-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(write_project(&dir, "demo-server", None), Ok(None));
        for (rel, _) in FILES {
            let text = std::fs::read_to_string(dir.join(rel)).unwrap();
            assert!(!text.contains("{{"), "{rel} keeps a placeholder");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Inside another Cargo workspace (`cargo mcp new` run in a checkout) the project is a
    /// workspace of its own, so cargo takes it: `cargo metadata` reads it. Before, cargo
    /// refused it ("current package believes it's in a workspace when it's not").
    #[test]
    fn a_project_inside_another_workspace_is_a_workspace_of_its_own() {
        let outer = std::env::temp_dir().join(format!("cargo-mcp-ws-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&outer);
        std::fs::create_dir_all(&outer).unwrap();
        std::fs::write(outer.join("Cargo.toml"), "[workspace]\nmembers = []\n").unwrap();
        let dir = outer.join("demo");
        let runtime = own_runtime().expect("built inside the workspace");
        let inside = write_project(&dir, "demo", Some(&runtime));
        assert_eq!(inside, Ok(Some(outer.join("Cargo.toml"))));
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let out = std::process::Command::new(cargo)
            .args([
                "metadata",
                "--no-deps",
                "--format-version",
                "1",
                "--offline",
            ])
            .current_dir(&dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::remove_dir_all(&outer).unwrap();
    }
}
