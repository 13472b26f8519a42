//! The rules MCP puts on names and values of a server's definitions: tool and prompt
//! names, `_meta` keys, icons, header names, annotations.
//!
//! They live here once, in a crate without dependencies, so that `mcp-macros` checks them
//! at compile time and `mcp-runtime` checks them in `Server::build()` with the same code:
//! a definition built by hand is held to exactly the rules of one the macros made.
//!
//! Every check returns a [`Violation`]: a one-line message naming the culprit, and a help
//! line saying what to write instead.
//!
//! ```
//! assert!(mcp_rules::tool_name("get_weather").is_ok());
//! let v = mcp_rules::tool_name("get weather").unwrap_err();
//! assert_eq!(v.message, "tool name `get weather` contains ` `");
//! assert!(v.help.unwrap().contains("letters, digits"));
//! ```

#![warn(missing_docs)]

use std::fmt;

/// A broken rule: what is wrong, and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// One line naming the culprit, such as ``tool name `a b` contains ` ` ``.
    pub message: String,
    /// What to write instead, when there is a clear fix.
    pub help: Option<String>,
}

impl Violation {
    fn new(message: impl Into<String>) -> Self {
        Violation {
            message: message.into(),
            help: None,
        }
    }

    fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
}

impl fmt::Display for Violation {
    /// The message, then the help in parentheses: the form `Server::build()` reports.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        if let Some(help) = &self.help {
            write!(f, " ({help})")?;
        }
        Ok(())
    }
}

impl std::error::Error for Violation {}

/// The result of one check.
pub type Check = Result<(), Violation>;

/// A tool name: 1 to 64 characters from `[A-Za-z0-9_.-]`, what the spec recommends and
/// every client accepts (so `météo` is refused: `é` is a letter, but not ASCII).
///
/// ```
/// assert!(mcp_rules::tool_name("search.v2-beta").is_ok());
/// assert!(mcp_rules::tool_name("").is_err());
/// assert!(mcp_rules::tool_name(&"x".repeat(65)).is_err());
/// ```
pub fn tool_name(name: &str) -> Check {
    if name.is_empty() {
        return Err(Violation::new("a tool name cannot be empty"));
    }
    if name.chars().count() > 64 {
        return Err(Violation::new(format!(
            "tool name `{name}` is {} characters long",
            name.chars().count()
        ))
        .help("use at most 64 characters"));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')))
    {
        return Err(Violation::new(format!(
            "tool name `{name}` contains `{}`",
            c.escape_debug()
        ))
        .help("use only ASCII letters, digits, `_`, `.` and `-`"));
    }
    Ok(())
}

/// A prompt name: not empty, no whitespace or control characters.
///
/// ```
/// assert!(mcp_rules::prompt_name("code_review").is_ok());
/// assert!(mcp_rules::prompt_name("code review").is_err());
/// ```
pub fn prompt_name(name: &str) -> Check {
    if name.is_empty() {
        return Err(Violation::new("a prompt name cannot be empty"));
    }
    if name.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(Violation::new(format!(
            "prompt name `{}` contains whitespace or a control character",
            name.escape_debug()
        ))
        .help("use letters, digits, `_`, `.` and `-`"));
    }
    Ok(())
}

/// A resource name: not blank.
///
/// ```
/// assert!(mcp_rules::resource_name("readme").is_ok());
/// assert!(mcp_rules::resource_name("  ").is_err());
/// ```
pub fn resource_name(name: &str) -> Check {
    if name.trim().is_empty() {
        return Err(Violation::new("a resource name cannot be empty"));
    }
    Ok(())
}

/// A `_meta` key: an optional prefix of dot-separated labels ending in `/`, then a name
/// that starts and ends with a letter or digit. Prefixes whose second label is
/// `modelcontextprotocol` or `mcp` are reserved for MCP itself.
///
/// ```
/// assert!(mcp_rules::meta_key("com.example/team").is_ok());
/// assert!(mcp_rules::meta_key("io.modelcontextprotocol/x").is_err());
/// ```
pub fn meta_key(key: &str) -> Check {
    let (prefix, name) = match key.rfind('/') {
        Some(i) => (Some(&key[..i]), &key[i + 1..]),
        None => (None, key),
    };
    let alnum = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    if !alnum(name.chars().next())
        || !alnum(name.chars().last())
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        return Err(Violation::new(format!("`_meta` key `{key}` is not valid")).help(
            "the name after the prefix must start and end with a letter or digit, with only letters, digits, `-`, `_` and `.` between",
        ));
    }
    if let Some(prefix) = prefix {
        let labels: Vec<&str> = prefix.split('.').collect();
        let label_ok = |l: &&str| {
            l.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
                && l.chars().last().is_some_and(|c| c.is_ascii_alphanumeric())
                && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        };
        if !labels.iter().all(label_ok) {
            return Err(
                Violation::new(format!("`_meta` key `{key}` has an invalid prefix"))
                    .help(format!("use reverse DNS, such as `com.example/{name}`")),
            );
        }
        if labels
            .get(1)
            .is_some_and(|l| *l == "modelcontextprotocol" || *l == "mcp")
        {
            return Err(
                Violation::new(format!("`_meta` prefix `{prefix}/` is reserved for MCP")).help(
                    format!("use your own reverse-DNS prefix, such as `com.example/{name}`"),
                ),
            );
        }
    }
    Ok(())
}

/// An icon's `src`: an `https:` or `data:` URI (clients refuse other schemes).
///
/// ```
/// assert!(mcp_rules::icon_src("https://example.com/logo.png").is_ok());
/// assert!(mcp_rules::icon_src("javascript:alert(1)").is_err());
/// ```
pub fn icon_src(src: &str) -> Check {
    let lower = src.to_ascii_lowercase();
    if lower.starts_with("https://") || lower.starts_with("data:") {
        Ok(())
    } else {
        Err(
            Violation::new(format!("icon `{src}` must be an `https:` or `data:` URI"))
                .help("clients reject other schemes"),
        )
    }
}

/// An icon's `theme`: `light` or `dark`.
///
/// ```
/// assert!(mcp_rules::icon_theme("dark").is_ok());
/// assert!(mcp_rules::icon_theme("blue").is_err());
/// ```
pub fn icon_theme(theme: &str) -> Check {
    if matches!(theme, "light" | "dark") {
        Ok(())
    } else {
        Err(Violation::new(format!("unknown icon theme `{theme}`"))
            .help("use \"light\" or \"dark\""))
    }
}

/// Whether `s` is an RFC 9110 token (`1*tchar`).
///
/// ```
/// assert!(mcp_rules::is_token("X-Trace_1.v2"));
/// assert!(!mcp_rules::is_token("My Region"));
/// ```
pub fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// The name of an `x-mcp-header` (the header is `Mcp-Param-{name}`): an RFC 9110 token.
///
/// ```
/// assert!(mcp_rules::header_name("Region").is_ok());
/// assert!(mcp_rules::header_name("Région").is_err());
/// ```
pub fn header_name(name: &str) -> Check {
    if name.is_empty() {
        return Err(Violation::new("a header name cannot be empty"));
    }
    match name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(*c)))
    {
        Some(c) => Err(Violation::new(format!(
            "header name `{}` contains `{}`",
            name.escape_debug(),
            c.escape_debug()
        ))
        .help("use an HTTP token: letters, digits and !#$%&'*+-.^_`|~ (the header is `Mcp-Param-{name}`)")),
        None => Ok(()),
    }
}

/// Header names of one tool are unique regardless of case: the `Mcp-Param-*` header of
/// `name` would collide with the one of `earlier`.
///
/// ```
/// assert!(mcp_rules::distinct_headers("Region", "region").is_err());
/// assert!(mcp_rules::distinct_headers("Region", "Zone").is_ok());
/// ```
pub fn distinct_headers(earlier: &str, name: &str) -> Check {
    if earlier.eq_ignore_ascii_case(name) {
        Err(Violation::new(format!(
            "header `{name}` is already used by this tool (as `{earlier}`)"
        ))
        .help("header names are compared without case; give each parameter its own"))
    } else {
        Ok(())
    }
}

/// A `cacheScope`: `public` or `private`.
///
/// ```
/// assert!(mcp_rules::cache_scope("private").is_ok());
/// assert!(mcp_rules::cache_scope("shared").is_err());
/// ```
pub fn cache_scope(scope: &str) -> Check {
    if matches!(scope, "public" | "private") {
        Ok(())
    } else {
        Err(Violation::new(format!("unknown cache scope `{scope}`"))
            .help("use \"public\" (the same for every caller) or \"private\""))
    }
}

/// An OAuth scope an item requires (`#[tool(scopes("files:write"))]`): a scope token of
/// RFC 6749 section 3.3, printable ASCII without space, `"` or `\`.
///
/// ```
/// assert!(mcp_rules::scope("files:write").is_ok());
/// assert!(mcp_rules::scope("files write").is_err());
/// assert!(mcp_rules::scope("").is_err());
/// ```
pub fn scope(scope: &str) -> Check {
    if scope.is_empty() {
        return Err(Violation::new("empty scope")
            .help("a scope is one token such as \"files:read\"; leave `scopes` out for none"));
    }
    match scope
        .chars()
        .find(|&c| !matches!(c, '\x21' | '\x23'..='\x5b' | '\x5d'..='\x7e'))
    {
        None => Ok(()),
        Some(c) => Err(Violation::new(format!(
            "scope `{scope}` has the character {c:?}, which a scope token cannot hold"
        ))
        .help("scope tokens are printable ASCII without space, `\"` or `\\` (RFC 6749 3.3); list several scopes as separate strings")),
    }
}

/// How a tool runs as a task (`#[tool(task = "...")]`): `optional` or `required`.
///
/// ```
/// assert!(mcp_rules::task_support("optional").is_ok());
/// assert!(mcp_rules::task_support("always").is_err());
/// ```
pub fn task_support(value: &str) -> Check {
    if matches!(value, "optional" | "required") {
        Ok(())
    } else {
        Err(Violation::new(format!("unknown task support `{value}`")).help(
            "use \"optional\" (a task when the client declares the tasks extension) or \"required\" (only as a task); leave `task` out for a tool that never is one",
        ))
    }
}

/// The URI of an MCP App view: `ui://` and something after it, no whitespace.
///
/// ```
/// assert!(mcp_rules::view_uri("ui://weather/view.html").is_ok());
/// assert!(mcp_rules::view_uri("https://example.com/view.html").is_err());
/// assert!(mcp_rules::view_uri("ui://").is_err());
/// ```
pub fn view_uri(uri: &str) -> Check {
    match uri.strip_prefix("ui://") {
        Some(rest) if !rest.is_empty() && !rest.contains(char::is_whitespace) => Ok(()),
        _ => Err(Violation::new(format!("`{uri}` is not an MCP App view URI"))
            .help("an MCP App view is a resource with a fixed `ui://` URI, such as \"ui://weather/view.html\"")),
    }
}

/// The URL of a URL-mode elicitation, as written (it may insert arguments, `{name}`): an
/// absolute `https://` or `http://` URL with a host, no white space, and nothing inserted
/// before its path, so an argument can never choose where the user is sent.
///
/// ```
/// assert!(mcp_rules::elicitation_url("https://example.com/approve/{service}").is_ok());
/// assert!(mcp_rules::elicitation_url("https://{host}/approve").is_err());
/// assert!(mcp_rules::elicitation_url("not a url").is_err());
/// assert!(mcp_rules::elicitation_url("javascript:alert(1)").is_err());
/// assert!(mcp_rules::elicitation_url("https://\\/{host}/x").is_err());
/// ```
pub fn elicitation_url(url: &str) -> Check {
    let lower = url.to_ascii_lowercase();
    let rest = lower
        .strip_prefix("https://")
        .or_else(|| lower.strip_prefix("http://"));
    let Some(rest) = rest else {
        return Err(Violation::new(format!("`{url}` is not an `https://` URL"))
            .help("a URL elicitation sends the user to a web page, such as \"https://example.com/connect\""));
    };
    // Browsers read `\` as `/` (WHATWG URL), so `https://\/{host}` would move the host.
    if url.contains('\\') {
        return Err(Violation::new(format!("`{url}` holds a backslash"))
            .help("browsers read `\\` as `/`, which can move the host; write `/`"));
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if authority.is_empty() || url.contains(char::is_whitespace) {
        return Err(Violation::new(format!("`{url}` is not a URL with a host"))
            .help("write an absolute URL, such as \"https://example.com/connect\""));
    }
    if authority.contains(['{', '}']) {
        return Err(Violation::new(format!("`{url}` inserts an argument into its host"))
            .help("an argument may fill the path or the query (\"https://example.com/connect/{service}\"), never choose the site the user is sent to"));
    }
    Ok(())
}

/// Whether the path of `url` holds a dot-segment (`.`, `..`, or their percent-encoded
/// forms, which browsers resolve as well): an argument inserted as a whole segment could
/// otherwise climb out of its place (`https://example.com/orgs/{org}/approve` with `..`).
///
/// ```
/// assert!(mcp_rules::url_has_dot_segment("https://example.com/orgs/../approve"));
/// assert!(!mcp_rules::url_has_dot_segment("https://example.com/approve?next=.."));
/// ```
pub fn url_has_dot_segment(url: &str) -> bool {
    let after_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
    let path = after_scheme
        .split(['?', '#'])
        .next()
        .unwrap_or_default()
        .split_once('/')
        .map_or("", |(_, path)| path);
    path.split('/').any(|segment| {
        let s = segment.to_ascii_lowercase().replace("%2e", ".");
        s == "." || s == ".."
    })
}

/// A sandbox permission an MCP App view may ask for (the attribute's spelling).
///
/// ```
/// assert!(mcp_rules::app_permission("clipboard_write").is_ok());
/// assert!(mcp_rules::app_permission("usb").is_err());
/// ```
pub fn app_permission(name: &str) -> Check {
    if matches!(
        name,
        "camera" | "microphone" | "geolocation" | "clipboard_write"
    ) {
        Ok(())
    } else {
        Err(
            Violation::new(format!("unknown MCP App permission `{name}`"))
                .help("use `camera`, `microphone`, `geolocation` or `clipboard_write`"),
        )
    }
}

/// The `priority` annotation: between 0 and 1.
///
/// ```
/// assert!(mcp_rules::priority(0.5).is_ok());
/// assert!(mcp_rules::priority(1.5).is_err());
/// ```
pub fn priority(priority: f64) -> Check {
    if (0.0..=1.0).contains(&priority) {
        Ok(())
    } else {
        Err(Violation::new(format!(
            "annotation priority {priority} is outside 0.0..=1.0"
        ))
        .help("0 is the least important, 1 the most"))
    }
}

/// The `lastModified` annotation: an ISO 8601 date (`YYYY-MM-DD`), optionally with a time.
///
/// ```
/// assert!(mcp_rules::last_modified("2026-07-28T10:00:00Z").is_ok());
/// assert!(mcp_rules::last_modified("yesterday").is_err());
/// ```
pub fn last_modified(value: &str) -> Check {
    let b = value.as_bytes();
    let ok = b.len() >= 10
        && b[..4].iter().all(u8::is_ascii_digit)
        && b[4] == b'-'
        && b[5..7].iter().all(u8::is_ascii_digit)
        && b[7] == b'-'
        && b[8..10].iter().all(u8::is_ascii_digit)
        && (b.len() == 10 || b[10] == b'T');
    if ok {
        Ok(())
    } else {
        Err(Violation::new(format!(
            "last_modified `{value}` is not an ISO 8601 date-time"
        ))
        .help("write it like \"2026-07-28T10:00:00Z\""))
    }
}

/// The root of a hand-written `inputSchema`: `"type": "object"` (`root_type` is the value of
/// its `type` keyword, when it is a string).
///
/// ```
/// assert!(mcp_rules::input_schema_root(Some("object")).is_ok());
/// assert!(mcp_rules::input_schema_root(Some("array")).is_err());
/// ```
pub fn input_schema_root(root_type: Option<&str>) -> Check {
    if root_type == Some("object") {
        Ok(())
    } else {
        Err(
            Violation::new("an inputSchema must have \"type\": \"object\" at its root")
                .help("tool arguments are always a JSON object"),
        )
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn dot_segments_are_found_in_the_path_only() {
        for url in [
            "https://example.com/orgs/../approve",
            "https://example.com/orgs/./approve",
            "https://example.com/orgs/%2E%2e/approve",
            "https://example.com/orgs/.%2E",
            "https://example.com/..",
        ] {
            assert!(url_has_dot_segment(url), "{url}");
        }
        for url in [
            "https://example.com/orgs/a..b/approve",
            "https://example.com/orgs/...",
            "https://example.com/approve?next=..",
            "https://example.com/approve#..",
            "https://example.com",
            "https://example.com/",
        ] {
            assert!(!url_has_dot_segment(url), "{url}");
        }
    }

    use super::*;

    #[test]
    fn tool_names() {
        assert!(tool_name("get_weather").is_ok());
        assert!(tool_name("a.b-c_9").is_ok());
        assert!(tool_name("").is_err());
        assert!(tool_name("has space").unwrap_err().message.contains("` `"));
        assert!(tool_name(&"x".repeat(65)).is_err());
        assert!(tool_name(&"x".repeat(64)).is_ok());
        assert!(tool_name("ünïcode").is_err());
    }

    #[test]
    fn header_names() {
        assert!(header_name("Region").is_ok());
        assert!(header_name("X-Trace_1.v2").is_ok());
        for bad in ["", "My Region", "Region:Primary", "Région", "Region\t1"] {
            assert!(header_name(bad).is_err(), "{bad}");
            assert!(!is_token(bad), "{bad}");
        }
    }

    #[test]
    fn meta_keys() {
        assert!(meta_key("com.example/team").is_ok());
        assert!(meta_key("com.example.mcp/x").is_ok());
        assert!(meta_key("plain").is_ok());
        assert!(meta_key("io.modelcontextprotocol/x").is_err());
        assert!(meta_key("dev.mcp/x").is_err());
        assert!(meta_key("com.mcp.tools/x").is_err());
        assert!(meta_key("com.example/-x").is_err());
        assert!(meta_key("1com.example/x").is_err());
    }

    #[test]
    fn icons_and_annotations() {
        assert!(icon_src("https://x/y.png").is_ok());
        assert!(icon_src("data:image/png;base64,AA").is_ok());
        assert!(icon_src("javascript:alert(1)").is_err());
        assert!(icon_src("http://x").is_err());
        assert!(icon_theme("light").is_ok());
        assert!(icon_theme("Light").is_err());
        assert!(priority(0.0).is_ok() && priority(1.0).is_ok());
        assert!(priority(-0.1).is_err() && priority(f64::NAN).is_err());
        assert!(last_modified("2026-07-28").is_ok());
        assert!(last_modified("2026-7-28").is_err());
    }

    #[test]
    fn display_joins_message_and_help() {
        let v = icon_theme("blue").unwrap_err();
        assert_eq!(
            v.to_string(),
            "unknown icon theme `blue` (use \"light\" or \"dark\")"
        );
    }
}
