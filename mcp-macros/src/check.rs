//! Rules on names and values, as plain functions (unit-tested), and rules across the
//! tools of one `impl`.

use crate::model::{Common, ResourceFn};
use darling::error::Accumulator;
use syn::Type;

/// `[A-Za-z0-9_.-]{1,64}`: what the spec recommends and every client accepts.
pub fn tool_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("a tool name cannot be empty".into());
    }
    if name.len() > 64 {
        return Err(format!(
            "tool name `{name}` is {} characters long\n\n= help: use at most 64 characters",
            name.len()
        ));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')))
    {
        return Err(format!(
            "tool name `{name}` contains `{}`\n\n= help: use only letters, digits, `_`, `.` and `-`",
            c.escape_debug()
        ));
    }
    Ok(())
}

/// Parameter types that cannot work, caught early with a clear message.
pub fn param_type(ty: &Type) -> Option<darling::Error> {
    match ty {
        Type::Reference(r) => Some(crate::errors::spanned(
            r,
            "a tool parameter must be an owned type\n\n= help: arguments are decoded from JSON for every call; use `String` instead of `&str`, `Vec<T>` instead of `&[T]`",
        )),
        Type::ImplTrait(t) => Some(crate::errors::spanned(
            t,
            "a tool parameter cannot be `impl Trait`\n\n= help: name a concrete type; it decides the input schema",
        )),
        _ => None,
    }
}

/// A `_meta` key: an optional prefix of dot-separated labels ending in `/`, then a name
/// that starts and ends alphanumeric. Prefixes whose second label is `modelcontextprotocol`
/// or `mcp` are reserved for MCP itself.
pub fn meta_key(key: &str) -> Result<(), String> {
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
        return Err(format!(
            "`_meta` key `{key}` is not valid\n\n= help: the name after the prefix must start and end with a letter or digit, with only letters, digits, `-`, `_` and `.` between"
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
            return Err(format!(
                "`_meta` key `{key}` has an invalid prefix\n\n= help: use reverse DNS, such as `com.example/{name}`"
            ));
        }
        if labels
            .get(1)
            .is_some_and(|l| *l == "modelcontextprotocol" || *l == "mcp")
        {
            return Err(format!(
                "`_meta` prefix `{prefix}/` is reserved for MCP\n\n= help: use your own reverse-DNS prefix, such as `com.example/{name}`"
            ));
        }
    }
    Ok(())
}

/// `meta = r#"{...}"#`: a JSON object with valid keys. Returns the entries as JSON text.
pub fn meta_object(text: &str) -> Result<Vec<(String, String)>, String> {
    let v: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| format!("`meta` is not valid JSON: {e}\n\n= help: write a JSON object, such as meta = r#\"{{\"com.example/team\": \"search\"}}\"#"))?;
    let serde_json::Value::Object(map) = v else {
        return Err("`meta` must be a JSON object".into());
    };
    let mut out = Vec::new();
    for (k, v) in map {
        meta_key(&k)?;
        out.push((k, v.to_string()));
    }
    Ok(out)
}

/// Icons are `https:` or `data:` URIs (clients refuse other schemes).
pub fn icon_src(src: &str) -> Result<(), String> {
    let lower = src.to_ascii_lowercase();
    if lower.starts_with("https://") || lower.starts_with("data:") {
        Ok(())
    } else {
        Err(format!(
            "icon `{src}` must be an `https:` or `data:` URI\n\n= help: clients reject other schemes"
        ))
    }
}

/// `x-mcp-header` values: RFC 9110 tokens, unique regardless of case within one tool.
pub fn headers(params: &[crate::model::Param], errors: &mut crate::model::Errors<'_>) {
    let mut seen: Vec<&str> = Vec::new();
    for p in params {
        let Some((name, span)) = &p.header else {
            continue;
        };
        if let Err(msg) = header_name(name) {
            errors.push(darling::Error::custom(msg).with_span(span));
        } else if let Some(first) = seen.iter().find(|s| s.eq_ignore_ascii_case(name)) {
            errors.push(darling::Error::custom(format!(
                "header `{name}` is already used by this tool (as `{first}`)\n\n= help: header names are compared without case; give each parameter its own"
            )).with_span(span));
        }
        seen.push(name);
    }
}

/// An RFC 9110 token (`1*tchar`).
pub fn header_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("a header name cannot be empty".into());
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(*c)))
    {
        return Err(format!(
            "header name `{}` contains `{}`\n\n= help: use an HTTP token: letters, digits and !#$%&'*+-.^_`|~ (the header is `Mcp-Param-{{name}}`)",
            name.escape_debug(),
            c.escape_debug()
        ));
    }
    Ok(())
}

/// A hand-written `inputSchema`: a JSON object with `"type": "object"` at its root.
pub fn input_schema(text: &str) -> Result<(), String> {
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("`input_schema` is not valid JSON: {e}"))?;
    if v.get("type").and_then(serde_json::Value::as_str) != Some("object") {
        return Err(
            "`input_schema` must be a JSON object with \"type\": \"object\" at its root".into(),
        );
    }
    Ok(())
}

/// Names are unique within one `impl` (per kind).
pub fn unique_names(kind: &str, items: &[&Common], errors: &mut Accumulator) {
    for (i, t) in items.iter().enumerate() {
        if let Some(first) = items[..i].iter().find(|o| o.name == t.name) {
            errors.push(
                darling::Error::custom(format!(
                    "duplicate {kind} name `{}`\n\n= note: `{}` already uses this name\n= help: give one of them `#[{kind}(name = \"...\")]`",
                    t.name, first.ident
                ))
                .with_span(&t.name_span),
            );
        }
    }
}

/// Resource URIs and templates of one `impl` cannot match the same URI.
pub fn distinct_resources(items: &[&ResourceFn], errors: &mut Accumulator) {
    // A fixed URI that a template also matches is fine: the fixed one is served.
    let collide = |a: &ResourceFn, b: &ResourceFn| {
        a.uri == b.uri
            || (!a.template.is_static()
                && !b.template.is_static()
                && a.template.overlaps(&b.template))
    };
    for (i, r) in items.iter().enumerate() {
        if let Some(first) = items[..i].iter().find(|o| collide(o, r)) {
            errors.push(
                darling::Error::custom(format!(
                    "resources `{}` and `{}` can match the same URI\n\n= note: `{}` declares the first one\n= help: make their fixed parts differ",
                    first.uri, r.uri, first.common.ident
                ))
                .with_span(&r.uri_span),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names() {
        assert!(tool_name("get_weather").is_ok());
        assert!(tool_name("a.b-c_9").is_ok());
        assert!(tool_name("").is_err());
        assert!(tool_name("has space").unwrap_err().contains("` `"));
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
        }
        assert!(input_schema(r#"{"type":"object"}"#).is_ok());
        assert!(input_schema(r#"{"type":"array"}"#).is_err());
        assert!(input_schema("{").is_err());
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
    fn meta_objects_and_icons() {
        assert_eq!(
            meta_object(r#"{"com.example/a": [1]}"#).unwrap(),
            vec![("com.example/a".to_owned(), "[1]".to_owned())]
        );
        assert!(meta_object("[1]").is_err());
        assert!(meta_object("{").is_err());
        assert!(icon_src("https://x/y.png").is_ok());
        assert!(icon_src("data:image/png;base64,AA").is_ok());
        assert!(icon_src("javascript:alert(1)").is_err());
        assert!(icon_src("http://x").is_err());
    }
}
