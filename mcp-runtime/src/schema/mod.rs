//! JSON Schema generation (schemars, 2020-12) and argument validation, compiled once (on
//! first use where that cannot hide a broken schema until then).

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

/// A tool's argument validator, compiled when it is first needed (the first `tools/call`
/// of that tool) or up front ([`LazyValidator::compiled`]). Compiling one (meta-schema
/// check included) is most of what a tool costs at start-up, and most tools of a large
/// server are never called by a given process.
pub(crate) struct LazyValidator(std::sync::OnceLock<Result<ArgumentValidator, String>>);

impl LazyValidator {
    /// One compiled already.
    pub(crate) fn compiled(validator: ArgumentValidator) -> Self {
        let cell = std::sync::OnceLock::new();
        let _ = cell.set(Ok(validator));
        LazyValidator(cell)
    }

    /// One compiled on first use (see [`LazyValidator::get`]).
    pub(crate) fn deferred() -> Self {
        LazyValidator(std::sync::OnceLock::new())
    }

    /// Whether it has been compiled (or tried to).
    #[cfg(test)]
    pub(crate) fn is_compiled(&self) -> bool {
        self.0.get().is_some()
    }

    /// The validator, compiled now from `schema()` if it was not yet (once: concurrent
    /// first calls wait for one compilation). `Err`: why the schema does not compile.
    pub(crate) fn get(
        &self,
        schema: impl FnOnce() -> Result<Value, String>,
    ) -> Result<&ArgumentValidator, &str> {
        self.0
            .get_or_init(|| schema().and_then(|s| ArgumentValidator::compile(&s)))
            .as_ref()
            .map_err(String::as_str)
    }
}

/// Whether a generated schema (schemars output, from the macros or `Signature`) may have
/// its validator compiled on first use: whether nothing in it can fail to compile other
/// than by breaking the meta-schema, which schemars output does not. Patterns (regular
/// expressions given by the user in attributes), references that do not point into the
/// schema itself, identifiers, declared dialects and deep nesting are compiled up front,
/// so they are refused when the server is built, as a hand-written schema is.
pub(crate) fn can_defer(schema: &Value) -> bool {
    fn walk(v: &Value, level: usize) -> bool {
        if level > MAX_SCHEMA_DEPTH {
            return false;
        }
        match v {
            Value::Object(m) => m.iter().all(|(k, v)| {
                let plain = match k.as_str() {
                    "pattern" | "patternProperties" | "$id" | "$schema" | "$anchor"
                    | "$dynamicRef" | "$dynamicAnchor" | "$recursiveRef" | "$vocabulary" => false,
                    "$ref" => v.as_str().is_some_and(|r| r.starts_with('#')),
                    _ => true,
                };
                plain && walk(v, level + 1)
            }),
            Value::Array(a) => a.iter().all(|v| walk(v, level + 1)),
            _ => true,
        }
    }
    walk(schema, 1)
}

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
    fn only_schemas_that_cannot_fail_to_compile_are_deferred() {
        let mut generator = generator();
        let plain = generator.subschema_for::<(String, u32, Option<bool>)>();
        assert!(can_defer(&plain.to_value()));
        assert!(can_defer(&json!({"type": "object",
            "properties": {"a": {"$ref": "#/$defs/A"}}, "$defs": {"A": {"type": "string"}}})));
        for risky in [
            json!({"properties": {"a": {"type": "string", "pattern": "^a"}}}),
            json!({"patternProperties": {"^a": {}}}),
            json!({"properties": {"a": {"$ref": "https://example.com/a.json"}}}),
            json!({"$schema": "http://json-schema.org/draft-07/schema#"}),
            json!({"$defs": {"a": {"$id": "urn:a"}}}),
        ] {
            assert!(!can_defer(&risky), "{risky}");
        }
        let mut deep = json!({"type": "object"});
        for _ in 0..70 {
            deep = json!({"allOf": [deep]});
        }
        assert!(!can_defer(&deep));
    }

    #[test]
    fn a_lazy_validator_compiles_once_and_keeps_its_error() {
        let lazy = LazyValidator::deferred();
        assert!(!lazy.is_compiled());
        let mut runs = 0;
        let schema = || Ok(json!({"type": "object", "required": ["a"]}));
        assert!(
            lazy.get(|| {
                runs += 1;
                schema()
            })
            .is_ok()
        );
        assert!(
            lazy.get(|| {
                runs += 1;
                schema()
            })
            .is_ok()
        );
        assert_eq!(runs, 1);
        assert!(
            lazy.get(schema)
                .is_ok_and(|v| v.validate(&json!({})).is_err())
        );
        let broken = LazyValidator::deferred();
        assert!(broken.get(|| Ok(json!({"type": "strnig"}))).is_err());
        assert!(broken.get(schema).is_err(), "the first outcome is kept");
    }

    #[test]
    fn remote_refs_are_refused() {
        let e = ArgumentValidator::compile(&json!({"$ref": "https://example.com/s.json"}));
        assert!(e.is_err());
    }
}
