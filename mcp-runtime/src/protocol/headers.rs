//! `x-mcp-header`: tool parameters mirrored into `Mcp-Param-{Name}` HTTP headers.
//!
//! The rules live here once: which annotations are valid, how a client encodes a value
//! (used by our tests and usable by yours), and how a server compares a header with the
//! argument it mirrors.

use base64::Engine;
use serde_json::{Map, Value};

/// The largest integer a mirrored header may carry: ±(2^53−1), exact in every JSON stack.
pub const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

/// What a mirrored parameter holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderKind {
    /// A `string` property; compared exactly.
    String,
    /// An `integer` property; compared by exact value, within ±(2^53−1).
    Integer,
    /// A `boolean` property; the header is `true` or `false`.
    Boolean,
}

/// One `x-mcp-header` annotation of a tool: the property path and the header suffix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderParam {
    /// Property names from the root of `inputSchema` (through `properties` only).
    pub path: Vec<String>,
    /// The `x-mcp-header` value: the header is `Mcp-Param-{name}`.
    pub name: String,
    /// The property's type.
    pub kind: HeaderKind,
}

impl HeaderParam {
    /// The argument this header mirrors, if the arguments have it.
    pub fn value<'a>(&self, arguments: &'a Value) -> Option<&'a Value> {
        self.path.iter().try_fold(arguments, |v, key| v.get(key))
    }

    /// Whether `value` has the JSON type the property declares (an argument of another
    /// type fails the `inputSchema` instead: a tool error, not a header mismatch).
    pub fn fits(&self, value: &Value) -> bool {
        match self.kind {
            HeaderKind::String => value.is_string(),
            HeaderKind::Integer => {
                value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|f| f.fract() == 0.0)
            }
            HeaderKind::Boolean => value.is_boolean(),
        }
    }
}

/// An RFC 9110 token: `1*tchar`.
pub fn is_token(s: &str) -> bool {
    mcp_rules::is_token(s)
}

/// Finds and checks every `x-mcp-header` annotation of an `inputSchema`: a token, unique
/// regardless of case, on a property whose `type` is one of `string`, `integer` or
/// `boolean` (not a list, not even with `null`), reached from the root through
/// `properties` only. Errors name each problem.
pub fn header_params(schema: &Value) -> Result<Vec<HeaderParam>, Vec<String>> {
    let mut found = Vec::new();
    let mut errors = Vec::new();
    collect(schema, &mut Vec::new(), true, &mut found, &mut errors);
    for (i, h) in found.iter().enumerate() {
        if found[..i]
            .iter()
            .any(|o: &HeaderParam| o.name.eq_ignore_ascii_case(&h.name))
        {
            errors.push(format!(
                "x-mcp-header `{}` is used twice (names are compared without case)",
                h.name
            ));
        }
    }
    if errors.is_empty() {
        Ok(found)
    } else {
        Err(errors)
    }
}

fn collect(
    schema: &Value,
    path: &mut Vec<String>,
    reachable: bool,
    found: &mut Vec<HeaderParam>,
    errors: &mut Vec<String>,
) {
    let Some(obj) = schema.as_object() else {
        return;
    };
    if let Some(h) = obj.get("x-mcp-header") {
        let at = if path.is_empty() {
            "the schema root".to_owned()
        } else {
            format!("`{}`", path.join("."))
        };
        match h.as_str() {
            _ if !reachable || path.is_empty() => errors.push(format!(
                "x-mcp-header at {at} is not on a property reached through `properties` only"
            )),
            Some(name) if is_token(name) => match kind_of(obj) {
                Ok(kind) => found.push(HeaderParam { path: path.clone(), name: name.to_owned(), kind }),
                Err(e) => errors.push(format!("x-mcp-header `{name}` on {at}: {e}")),
            },
            Some(name) => errors.push(format!(
                "x-mcp-header `{}` on {at} is not an HTTP token (letters, digits and !#$%&'*+-.^_`|~)",
                name.escape_debug()
            )),
            None => errors.push(format!("x-mcp-header on {at} must be a string")),
        }
    }
    for (key, sub) in obj {
        match key.as_str() {
            "properties" => {
                if let Some(props) = sub.as_object() {
                    for (name, prop) in props {
                        path.push(name.clone());
                        collect(prop, path, reachable, found, errors);
                        path.pop();
                    }
                }
            }
            "x-mcp-header" => {}
            // Anything under another keyword is not reachable through `properties` alone.
            _ => match sub {
                Value::Object(_) => collect(sub, path, false, found, errors),
                Value::Array(items) => {
                    for item in items {
                        collect(item, path, false, found, errors);
                    }
                }
                _ => {}
            },
        }
    }
}

fn kind_of(obj: &Map<String, Value>) -> Result<HeaderKind, String> {
    match obj.get("type") {
        Some(Value::String(t)) => match t.as_str() {
            "string" => Ok(HeaderKind::String),
            "integer" => Ok(HeaderKind::Integer),
            "boolean" => Ok(HeaderKind::Boolean),
            "number" => Err("`number` cannot be mirrored (use `integer`)".to_owned()),
            other => Err(format!(
                "type `{other}` cannot be mirrored (only string, integer, boolean)"
            )),
        },
        // Clients drop a tool whose mirrored property has a list of types, even
        // `["string", "null"]`: an optional argument is one that is not required.
        Some(Value::Array(_)) => Err(
            "the property must have one primitive `type` (string, integer or boolean), not a list; leave an optional argument out of `required` instead of allowing null".to_owned(),
        ),
        _ => Err("the property needs an explicit `type` of string, integer or boolean".to_owned()),
    }
}

/// Leaves out of `arguments` the mirrored arguments that are `null`: for a mirrored
/// property, `null` means absent (no header is sent for it, and it is not validated).
pub fn drop_null_arguments(params: &[HeaderParam], arguments: &mut Value) {
    for p in params {
        let Some((last, parents)) = p.path.split_last() else {
            continue;
        };
        let parent = parents
            .iter()
            .try_fold(&mut *arguments, |v, key| v.get_mut(key));
        if let Some(Value::Object(m)) = parent
            && m.get(last).is_some_and(Value::is_null)
        {
            m.remove(last);
        }
    }
}

/// How a client writes a value into a header: as is when it is plain visible ASCII,
/// otherwise as `=?base64?…?=` (non-ASCII, control characters, leading or trailing space
/// or tab, or text that looks like the sentinel itself).
pub fn encode_header_value(text: &str) -> String {
    let needs = text.bytes().any(|b| !(0x20..0x7f).contains(&b))
        || text.starts_with([' ', '\t'])
        || text.ends_with([' ', '\t'])
        || (text.starts_with("=?") && text.ends_with("?="));
    if needs {
        format!(
            "=?base64?{}?=",
            base64::engine::general_purpose::STANDARD.encode(text)
        )
    } else {
        text.to_owned()
    }
}

/// The text a client mirrors for an argument: strings as is, integers in decimal,
/// booleans as `true`/`false`. `None` for null (no header is sent).
pub fn header_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The `Mcp-Param-*` headers a conforming client sends for a call of `tool` (its
/// definition, as listed) with `arguments`.
///
/// ```
/// use serde_json::json;
/// let tool = json!({"name": "q", "inputSchema": {"type": "object", "properties": {
///     "region": {"type": "string", "x-mcp-header": "Region"}}}});
/// let h = mcp_runtime::protocol::headers::client_headers(&tool, &json!({"region": "Zürich"}));
/// assert_eq!(h, vec![("Mcp-Param-Region".to_owned(), "=?base64?WsO8cmljaA==?=".to_owned())]);
/// ```
pub fn client_headers(tool: &Value, arguments: &Value) -> Vec<(String, String)> {
    match header_params(tool.get("inputSchema").unwrap_or(&Value::Null)) {
        Ok(params) => param_headers(&params, arguments),
        Err(_) => Vec::new(),
    }
}

/// The `Mcp-Param-*` headers of `params` (a tool's, from [`header_params`]) for a call
/// with `arguments`: one per argument present and not null.
pub fn param_headers(params: &[HeaderParam], arguments: &Value) -> Vec<(String, String)> {
    params
        .iter()
        .filter_map(|p| {
            let text = header_text(p.value(arguments)?)?;
            Some((format!("Mcp-Param-{}", p.name), encode_header_value(&text)))
        })
        .collect()
}

/// Decodes a header value: `=?base64?…?=` (exact lower-case markers, standard alphabet with
/// padding, UTF-8) or a literal.
/// `None` when the value has the markers but is not valid Base64 of UTF-8.
pub fn decode_header_value(v: &str) -> Option<std::borrow::Cow<'_, str>> {
    match v
        .strip_prefix("=?base64?")
        .and_then(|r| r.strip_suffix("?="))
    {
        Some(b64) => {
            let bytes = base64::engine::general_purpose::STANDARD.decode(b64).ok()?;
            String::from_utf8(bytes).ok().map(std::borrow::Cow::Owned)
        }
        None => Some(std::borrow::Cow::Borrowed(v)),
    }
}

/// Compares a received header (already trimmed, visible ASCII) with the argument it
/// mirrors. Integers compare by exact value (never through floating point), booleans as
/// `true`/`false`, strings exactly.
pub fn header_matches(raw: &str, kind: HeaderKind, value: &Value) -> Result<(), String> {
    let text = decode_header_value(raw).ok_or("has invalid Base64")?;
    let ok = match (kind, value) {
        (HeaderKind::String, Value::String(s)) => *s == *text,
        (HeaderKind::Boolean, Value::Bool(b)) => text == if *b { "true" } else { "false" },
        (HeaderKind::Integer, Value::Number(n)) => {
            let body = integer_of(n).ok_or("mirrors a body value that is not an integer")?;
            if body.unsigned_abs() > MAX_SAFE_INTEGER as u128 {
                return Err("mirrors an integer outside ±(2^53−1)".to_owned());
            }
            parse_integer(&text) == Some(body)
        }
        _ => return Err("mirrors a value of the wrong type".to_owned()),
    };
    if ok {
        Ok(())
    } else {
        Err("does not match the argument".to_owned())
    }
}

fn integer_of(n: &serde_json::Number) -> Option<i128> {
    if let Some(i) = n.as_i64() {
        return Some(i.into());
    }
    if let Some(u) = n.as_u64() {
        return Some(u.into());
    }
    let f = n.as_f64()?;
    (f.fract() == 0.0 && f.abs() < 1e18).then_some(f as i128)
}

/// A decimal integer, or an integral decimal such as `42.0`; no exponents.
fn parse_integer(s: &str) -> Option<i128> {
    let (int, frac) = match s.split_once('.') {
        Some((i, f)) if !f.is_empty() && f.bytes().all(|b| b == b'0') => (i, Some(f)),
        Some(_) => return None,
        None => (s, None),
    };
    let _ = frac;
    let digits = int.strip_prefix('-').unwrap_or(int);
    if digits.is_empty() || digits.len() > 30 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    int.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn annotations_are_validated() {
        let ok = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "limit": {"type": "integer", "x-mcp-header": "Limit"},
            "target": {"type": "object", "properties": {"tenant": {"type": "string", "x-mcp-header": "Tenant"}}}
        }});
        let params = header_params(&ok).unwrap();
        assert_eq!(params.len(), 3);
        assert_eq!(params[2].path, ["target", "tenant"]);

        for bad in [
            json!({"type": "object", "properties": {"a": {"type": "number", "x-mcp-header": "A"}}}),
            json!({"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "My Region"}}}),
            json!({"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": ""}}}),
            json!({"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "Région"}}}),
            json!({"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "A"}, "b": {"type": "string", "x-mcp-header": "a"}}}),
            json!({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}}}),
            json!({"type": "object", "anyOf": [{"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}]}),
            json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/x", "x-mcp-header": "A"}}}),
            json!({"type": "object", "properties": {"a": {"type": "object", "x-mcp-header": "A"}}}),
            json!({"type": "object", "properties": {"a": {"type": ["integer", "null"], "x-mcp-header": "A"}}}),
        ] {
            assert!(header_params(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn null_mirrored_arguments_are_absent() {
        let schema = json!({"type": "object", "properties": {
            "limit": {"type": "integer", "x-mcp-header": "Limit"},
            "t": {"type": "object", "properties": {"id": {"type": "string", "x-mcp-header": "Id"}}}
        }});
        let params = header_params(&schema).unwrap();
        let mut args = json!({"limit": null, "t": {"id": null}, "other": null});
        drop_null_arguments(&params, &mut args);
        assert_eq!(args, json!({"t": {}, "other": null}));
    }

    #[test]
    fn client_encoding_follows_the_spec_table() {
        assert_eq!(encode_header_value("us-west1"), "us-west1");
        assert_eq!(
            encode_header_value("Hello, 世界"),
            "=?base64?SGVsbG8sIOS4lueVjA==?="
        );
        assert_eq!(
            encode_header_value(" eu-west1 "),
            "=?base64?IGV1LXdlc3QxIA==?="
        );
        assert_eq!(
            encode_header_value("=?base64?x?="),
            "=?base64?PT9iYXNlNjQ/eD89?="
        );
        assert_eq!(encode_header_value("a\tb"), "=?base64?YQli?=");
    }

    #[test]
    fn server_comparison() {
        assert!(header_matches("=?base64?SGVsbG8=?=", HeaderKind::String, &json!("Hello")).is_ok());
        assert!(header_matches("=?base64?SGVsbG8?=", HeaderKind::String, &json!("Hello")).is_err());
        assert!(
            header_matches(
                "=?base64?SGVs!!!bG8=?=",
                HeaderKind::String,
                &json!("Hello")
            )
            .is_err()
        );
        assert!(header_matches("SGVsbG8=", HeaderKind::String, &json!("SGVsbG8=")).is_ok());
        assert!(
            header_matches(
                "=?base64?SGVsbG8=",
                HeaderKind::String,
                &json!("=?base64?SGVsbG8=")
            )
            .is_ok()
        );
        assert!(header_matches("42", HeaderKind::Integer, &json!(42)).is_ok());
        assert!(header_matches("42.0", HeaderKind::Integer, &json!(42)).is_ok());
        assert!(header_matches("4.2e1", HeaderKind::Integer, &json!(42)).is_err());
        assert!(header_matches("43", HeaderKind::Integer, &json!(42)).is_err());
        assert!(
            header_matches(
                "9007199254740993",
                HeaderKind::Integer,
                &json!(9007199254740993u64)
            )
            .is_err()
        );
        assert!(
            header_matches(
                "9007199254740991",
                HeaderKind::Integer,
                &json!(9007199254740991u64)
            )
            .is_ok()
        );
        assert!(
            header_matches(
                "-9007199254740991",
                HeaderKind::Integer,
                &json!(-9007199254740991i64)
            )
            .is_ok()
        );
        assert!(header_matches("true", HeaderKind::Boolean, &json!(true)).is_ok());
        assert!(header_matches("True", HeaderKind::Boolean, &json!(true)).is_err());
        assert!(header_matches("1", HeaderKind::Boolean, &json!(true)).is_err());
    }
}
