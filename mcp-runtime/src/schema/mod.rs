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

/// A compiled validator for a tool's `inputSchema`.
pub(crate) struct ArgumentValidator(jsonschema::Validator);

impl ArgumentValidator {
    /// Compiles `schema` (2020-12 unless it names another dialect). Remote references are
    /// never fetched: this crate builds jsonschema without its HTTP and file resolvers, so
    /// a schema with an unresolvable `$ref` is refused here.
    pub(crate) fn compile(schema: &Value) -> Result<Self, String> {
        jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
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
    fn remote_refs_are_refused() {
        let e = ArgumentValidator::compile(&json!({"$ref": "https://example.com/s.json"}));
        assert!(e.is_err());
    }
}
