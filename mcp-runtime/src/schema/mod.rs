//! JSON Schema generation (schemars, 2020-12) and argument validation, compiled once.

use schemars::{JsonSchema, SchemaGenerator, generate::SchemaSettings};
use serde_json::Value;

/// A generator for 2020-12 schemas with local `#/$defs/...` references.
pub(crate) fn generator() -> SchemaGenerator {
    SchemaSettings::draft2020_12()
        .with(|s| s.meta_schema = None)
        .into_generator()
}

/// The complete schema of `T`, with its definitions under `$defs`.
pub(crate) fn root_schema_for<T: JsonSchema + ?Sized>() -> Value {
    generator().into_root_schema_for::<T>().to_value()
}

/// The deepest schema (objects and arrays nested) accepted for validation.
pub const MAX_SCHEMA_DEPTH: usize = 64;

fn depth(v: &Value) -> usize {
    match v {
        Value::Object(m) => 1 + m.values().map(depth).max().unwrap_or(0),
        Value::Array(a) => 1 + a.iter().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// Removes insignificant whitespace from JSON text, keeping everything else (key order
/// included) byte for byte. The text must be valid JSON.
pub(crate) fn minify(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in text.chars() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if !c.is_ascii_whitespace() {
            out.push(c);
        }
    }
    out
}

/// A generator for 2020-12 schemas with every subschema inlined (no `$ref`).
pub(crate) fn inline_generator() -> SchemaGenerator {
    SchemaSettings::draft2020_12()
        .with(|s| {
            s.meta_schema = None;
            s.inline_subschemas = true;
        })
        .into_generator()
}

/// The schema of `T` with every subschema inlined (no `$ref`): elicitation forms must be
/// flat, self-contained objects.
pub(crate) fn inline_schema_for<T: JsonSchema + ?Sized>() -> Value {
    inline_generator().into_root_schema_for::<T>().to_value()
}

/// A compiled validator for a tool's `inputSchema`.
pub(crate) struct ArgumentValidator(jsonschema::Validator);

/// The dialect a schema declares with `$schema` (2020-12 when it declares none, as MCP
/// specifies); an unknown one is an error, never silently read as another.
fn dialect(schema: &Value) -> Result<jsonschema::Draft, String> {
    use jsonschema::Draft;
    let Some(uri) = schema.get("$schema") else {
        return Ok(Draft::Draft202012);
    };
    let Some(uri) = uri.as_str() else {
        return Err("`$schema` must be a string (a dialect URI)".into());
    };
    let bare = uri
        .trim_end_matches('#')
        .trim_start_matches("https://")
        .trim_start_matches("http://");
    match bare {
        "json-schema.org/draft/2020-12/schema" => Ok(Draft::Draft202012),
        "json-schema.org/draft/2019-09/schema" => Ok(Draft::Draft201909),
        "json-schema.org/draft-07/schema" => Ok(Draft::Draft7),
        "json-schema.org/draft-06/schema" => Ok(Draft::Draft6),
        "json-schema.org/draft-04/schema" => Ok(Draft::Draft4),
        _ => Err(format!(
            "unsupported JSON Schema dialect {}: use 2020-12 (the default), 2019-09, draft-07, draft-06 or draft-04",
            crate::protocol::reflect(uri)
        )),
    }
}

impl ArgumentValidator {
    /// Compiles `schema` (2020-12 unless it names another dialect). Remote references are
    /// never fetched: this crate builds jsonschema without its HTTP and file resolvers, so
    /// a schema with an unresolvable `$ref` is refused here.
    ///
    /// Patterns run on the linear-time `regex` engine (no backtracking, so a hostile
    /// argument cannot make one slow), with a size cap; schemas nested deeper than
    /// [`MAX_SCHEMA_DEPTH`] are refused.
    pub(crate) fn compile(schema: &Value) -> Result<Self, String> {
        if depth(schema) > MAX_SCHEMA_DEPTH {
            return Err(format!(
                "the schema nests deeper than {MAX_SCHEMA_DEPTH} levels"
            ));
        }
        jsonschema::options()
            .with_draft(dialect(schema)?)
            .with_pattern_options(
                jsonschema::PatternOptions::regex()
                    .size_limit(1 << 20)
                    .dfa_size_limit(1 << 20),
            )
            .build(schema)
            .map(ArgumentValidator)
            .map_err(|e| e.to_string())
    }

    /// Checks the arguments. On failure, a message naming each offending field.
    pub(crate) fn validate(&self, instance: &Value) -> Result<(), String> {
        if self.0.is_valid(instance) {
            return Ok(());
        }
        let mut msgs = Vec::new();
        for err in self.0.iter_errors(instance).take(8) {
            let path = err.instance_path().to_string();
            let msg = crate::protocol::reflect(&err.to_string());
            if path.is_empty() {
                msgs.push(msg);
            } else {
                msgs.push(format!(
                    "`{}`: {msg}",
                    path.trim_start_matches('/').replace('/', ".")
                ));
            }
        }
        Err(msgs.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn validation_names_the_field() {
        let v = ArgumentValidator::compile(&json!({
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
            "required": ["a", "b"],
            "additionalProperties": false
        }))
        .unwrap();
        let args = |v: Value| v;
        assert!(v.validate(&args(json!({"a": 1, "b": "x"}))).is_ok());
        let e = v
            .validate(&args(json!({"a": "one", "b": "x"})))
            .unwrap_err();
        assert!(e.contains("`a`"), "{e}");
        let e = v.validate(&args(json!({"a": 1}))).unwrap_err();
        assert!(e.contains("\"b\""), "{e}");
        let e = v
            .validate(&args(json!({"a": 1, "b": "x", "c": 2})))
            .unwrap_err();
        assert!(e.contains('c'), "{e}");
    }

    #[test]
    fn minify_keeps_order_and_strings() {
        assert_eq!(
            minify("{ \"b\" : [1, 2],\n \"a\": \"x y \\\" z\" }"),
            r#"{"b":[1,2],"a":"x y \" z"}"#
        );
    }

    #[test]
    fn deep_schemas_are_refused() {
        let mut s = json!({"type": "object"});
        for _ in 0..70 {
            s = json!({"allOf": [s]});
        }
        let err = ArgumentValidator::compile(&s).err().unwrap_or_default();
        assert!(err.contains("deeper"), "{err}");
    }

    #[test]
    fn the_declared_dialect_is_honoured_and_an_unknown_one_refused() {
        let old = ArgumentValidator::compile(&json!({
            "$schema": "http://json-schema.org/draft-04/schema#",
            "type": "object",
            "properties": {"n": {"type": "integer", "maximum": 5, "exclusiveMaximum": true}},
        }))
        .unwrap();
        // Draft-04's boolean `exclusiveMaximum`: 5 itself is out.
        assert!(old.validate(&json!({"n": 5})).is_err());
        assert!(old.validate(&json!({"n": 4})).is_ok());
        let e = ArgumentValidator::compile(&json!({"$schema": "https://example.com/my-dialect"}));
        assert!(e.err().unwrap().contains("unsupported JSON Schema dialect"));
        let e = ArgumentValidator::compile(&json!({"$schema": 7}));
        assert!(e.is_err());
    }

    #[test]
    fn remote_refs_are_refused() {
        let e = ArgumentValidator::compile(&json!({"$ref": "https://example.com/s.json"}));
        assert!(e.is_err());
    }
}
