use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};
use std::fmt;

/// A JSON-RPC request id: a string or an integer, echoed token for token.
///
/// ```
/// use mcp_runtime::protocol::RequestId;
/// use serde_json::json;
///
/// let id = RequestId::from_value(&json!(7)).unwrap();
/// assert_eq!(id.to_value(), json!(7)); // echoed as sent: a number stays a number
/// assert_eq!(RequestId::from_value(&json!("a")).unwrap().to_string(), "\"a\"");
/// assert!(RequestId::from_value(&json!(1.5)).is_none());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RequestId {
    /// A string id.
    String(String),
    /// An integer id (kept as the exact number that was sent).
    Number(Number),
}

impl RequestId {
    /// Reads an id from the wire. Fractional, exponent or out-of-range numbers, `null` and
    /// other JSON types are rejected.
    pub fn from_value(v: &Value) -> Option<RequestId> {
        match v {
            Value::String(s) => Some(RequestId::String(s.clone())),
            Value::Number(n) if n.is_i64() || n.is_u64() => Some(RequestId::Number(n.clone())),
            _ => None,
        }
    }

    /// The id as a JSON value.
    pub fn to_value(&self) -> Value {
        match self {
            RequestId::String(s) => Value::String(s.clone()),
            RequestId::Number(n) => Value::Number(n.clone()),
        }
    }
}

/// As logs show it: a number as it is, a string quoted and escaped, cut to its first 128
/// characters (a client's id may be megabytes long, and a request's span, with every line
/// logged in it, carries it).
impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const SHOWN: usize = 128;
        match self {
            RequestId::String(s) => match s.char_indices().nth(SHOWN) {
                Some((end, _)) => write!(f, "{:?}…", &s[..end]),
                None => write!(f, "{s:?}"),
            },
            RequestId::Number(n) => write!(f, "{n}"),
        }
    }
}

/// The capabilities a client declared on *this* request (`_meta` `clientCapabilities`).
///
/// Nothing is remembered between requests: an empty object means no optional capability.
///
/// ```
/// use mcp_runtime::protocol::ClientCapabilities;
/// use mcp_runtime::{Context, tool};
///
/// /// Says how the client can be asked for input on this request.
/// #[tool]
/// async fn modes(cx: Context) -> String {
///     let caps: &ClientCapabilities = cx.client_capabilities();
///     format!("form: {}, url: {}", caps.has("elicitation.form"), caps.has("elicitation.url"))
/// }
///
/// assert!(!ClientCapabilities::default().has("sampling"));
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClientCapabilities(Map<String, Value>);

impl ClientCapabilities {
    pub(crate) fn from_map(map: Map<String, Value>) -> Self {
        ClientCapabilities(map)
    }

    /// Whether the client declared a capability, given as a path such as `"sampling"`,
    /// `"elicitation"` or `"elicitation.url"`.
    ///
    /// For elicitation, `{}` means form mode only, so `elicitation.form` is true when
    /// `elicitation` is declared without sub-keys.
    pub fn has(&self, path: &str) -> bool {
        let mut parts = path.split('.');
        let Some(first) = parts.next() else {
            return false;
        };
        let Some(mut cur) = self.0.get(first) else {
            return false;
        };
        if !cur.is_object() {
            return false;
        }
        for (i, part) in parts.enumerate() {
            match cur.get(part) {
                Some(v) if v.is_object() => cur = v,
                _ => {
                    // `elicitation: {}` means form mode.
                    return first == "elicitation"
                        && i == 0
                        && part == "form"
                        && cur
                            .as_object()
                            .is_some_and(|o| !o.contains_key("url") && !o.contains_key("form"));
                }
            }
        }
        true
    }

    /// `-32021` naming the capabilities of `paths` (`"elicitation.form"`, `"sampling"`,
    /// ...) the client did not declare, in `requiredCapabilities` as nested objects;
    /// `None` when it declared them all. Said of a request that asks for input through
    /// them (the one use).
    pub(crate) fn missing(&self, paths: &[&str]) -> Option<super::RpcError> {
        let mut missing: Vec<&str> = Vec::new();
        for &p in paths {
            if !self.has(p) && !missing.contains(&p) {
                missing.push(p);
            }
        }
        if missing.is_empty() {
            return None;
        }
        // `{"elicitation": {"url": {}}, "sampling": {}}`: each path as nested objects.
        let mut required = Map::new();
        for path in &missing {
            let mut at = &mut required;
            for part in path.split('.') {
                let next = at.entry(part).or_insert_with(|| Value::Object(Map::new()));
                if !next.is_object() {
                    *next = Value::Object(Map::new());
                }
                let Some(object) = next.as_object_mut() else {
                    break;
                };
                at = object;
            }
        }
        let names = missing
            .iter()
            .map(|p| format!("`{p}`"))
            .collect::<Vec<_>>()
            .join(" and ");
        Some(super::RpcError::missing_capability(
            format!("This request needs input through {names}, which the client did not declare"),
            Value::Object(required),
        ))
    }

    /// Whether the client declared the extension `id` (under `extensions`, such as
    /// `io.modelcontextprotocol/tasks`) on this request.
    pub fn has_extension(&self, id: &str) -> bool {
        self.0
            .get("extensions")
            .and_then(|e| e.get(id))
            .is_some_and(Value::is_object)
    }

    /// The raw object.
    pub fn as_map(&self) -> &Map<String, Value> {
        &self.0
    }
}

/// Log levels of `notifications/message`, in RFC 5424 order (lowest first).
///
/// ```
/// use mcp_runtime::protocol::LogLevel;
///
/// assert!(LogLevel::Error > LogLevel::Warning);
/// assert_eq!(LogLevel::parse("notice"), Some(LogLevel::Notice));
/// assert_eq!(LogLevel::Critical.as_str(), "critical");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// `debug`: detailed debugging information.
    Debug,
    /// `info`: informational messages.
    Info,
    /// `notice`: normal but significant events.
    Notice,
    /// `warning`: warning conditions.
    Warning,
    /// `error`: error conditions.
    Error,
    /// `critical`: critical conditions.
    Critical,
    /// `alert`: action must be taken immediately.
    Alert,
    /// `emergency`: the system is unusable.
    Emergency,
}

impl LogLevel {
    /// Parses the wire name.
    pub fn parse(s: &str) -> Option<LogLevel> {
        Some(match s {
            "debug" => LogLevel::Debug,
            "info" => LogLevel::Info,
            "notice" => LogLevel::Notice,
            "warning" => LogLevel::Warning,
            "error" => LogLevel::Error,
            "critical" => LogLevel::Critical,
            "alert" => LogLevel::Alert,
            "emergency" => LogLevel::Emergency,
            _ => return None,
        })
    }

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }
}

/// `cacheScope` of a cacheable result.
///
/// ```
/// use mcp_runtime::protocol::CacheScope;
/// use mcp_runtime::tool;
///
/// /// The caller's own quota: cacheable for a minute, by the caller only.
/// #[tool(ttl_ms = 60000, cache_scope = "private")]
/// async fn quota() -> &'static str {
///     "42 calls left"
/// }
///
/// assert_eq!(CacheScope::parse("private"), Some(CacheScope::Private));
/// assert!(CacheScope::Private > CacheScope::Public); // more restrictive
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheScope {
    /// The same for every caller; shared caches may keep it.
    Public,
    /// Depends on the caller; only the caller may keep it.
    Private,
}

impl CacheScope {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            CacheScope::Public => "public",
            CacheScope::Private => "private",
        }
    }

    /// Parses the wire name.
    pub fn parse(s: &str) -> Option<CacheScope> {
        match s {
            "public" => Some(CacheScope::Public),
            "private" => Some(CacheScope::Private),
            _ => None,
        }
    }
}

/// Caching hints (`ttlMs`, `cacheScope`) of a cacheable result.
///
/// A hint is advice to the client, never access control.
///
/// ```
/// use mcp_runtime::Server;
/// use mcp_runtime::config::Caching;
/// use mcp_runtime::protocol::{CacheHints, CacheScope};
///
/// let hints = CacheHints::new(60_000, CacheScope::Public);
/// let combined = hints.combine(CacheHints::new(1_000, CacheScope::Private));
/// assert_eq!(combined, CacheHints::new(1_000, CacheScope::Private));
/// let server = Server::builder("x", "1.0").caching(Caching::default().lists(hints)).build().unwrap();
/// # drop(server);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct CacheHints {
    /// How long the result stays fresh, in milliseconds (`0`: stale at once).
    #[serde(rename = "ttlMs")]
    pub ttl_ms: u64,
    /// Who may reuse it.
    #[serde(rename = "cacheScope")]
    pub scope: CacheScope,
}

impl CacheHints {
    /// Hints with the given TTL and scope.
    pub const fn new(ttl_ms: u64, scope: CacheScope) -> Self {
        CacheHints { ttl_ms, scope }
    }

    /// Combines the hints of several items into the hints of a list holding them: the
    /// shortest TTL and the most restrictive scope.
    pub fn combine(self, other: CacheHints) -> CacheHints {
        CacheHints {
            ttl_ms: self.ttl_ms.min(other.ttl_ms),
            scope: self.scope.max(other.scope),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A string id is logged quoted and escaped, at most 128 characters of it: a client's
    /// id of megabytes was copied whole into every request's span and each line logged in
    /// it.
    #[test]
    fn ids_are_logged_short() {
        assert_eq!(RequestId::Number(7.into()).to_string(), "7");
        assert_eq!(RequestId::String("a\nb".into()).to_string(), "\"a\\nb\"");
        let long = RequestId::String("é".repeat(1_000_000));
        let shown = long.to_string();
        assert_eq!(shown.chars().count(), 128 + 3, "{shown:.40}");
        assert!(shown.ends_with("\"…"), "{shown:.40}");
    }
    use serde_json::json;

    fn caps(v: Value) -> ClientCapabilities {
        ClientCapabilities::from_map(v.as_object().unwrap().clone())
    }

    #[test]
    fn capability_paths() {
        let c = caps(json!({"sampling": {}, "elicitation": {}}));
        assert!(c.has("sampling"));
        assert!(c.has("elicitation"));
        assert!(c.has("elicitation.form"));
        assert!(!c.has("elicitation.url"));
        assert!(!c.has("roots"));
        let c = caps(json!({"elicitation": {"url": {}}}));
        assert!(c.has("elicitation.url"));
        assert!(!c.has("elicitation.form"));
        assert!(!caps(json!({"sampling": true})).has("sampling"));
    }

    #[test]
    fn ids_keep_their_type() {
        assert_eq!(
            RequestId::from_value(&json!(7)).unwrap().to_value(),
            json!(7)
        );
        assert_eq!(
            RequestId::from_value(&json!("7")).unwrap().to_value(),
            json!("7")
        );
        assert_eq!(
            RequestId::from_value(&json!(9007199254740993u64))
                .unwrap()
                .to_value(),
            json!(9007199254740993u64)
        );
        assert!(RequestId::from_value(&json!(1.5)).is_none());
        assert!(RequestId::from_value(&Value::Null).is_none());
        assert!(RequestId::from_value(&json!([1])).is_none());
    }

    #[test]
    fn hints_combine_to_the_most_restrictive() {
        let a = CacheHints::new(1000, CacheScope::Public);
        let b = CacheHints::new(500, CacheScope::Private);
        assert_eq!(a.combine(b), CacheHints::new(500, CacheScope::Private));
        assert!(LogLevel::Warning > LogLevel::Info);
    }
}
