//! JSON Schema generation (schemars, 2020-12) and argument validation, compiled once (on
//! first use where that cannot hide a broken schema until then).
//!
//! Validation is built in ([`compile`] reads a schema, [`validate`] applies it, with
//! [`unevaluated`] for `unevaluated*` and [`values`] for comparing and showing values): every
//! keyword of the 2020-12 validation and applicator vocabularies, `unevaluated*` included,
//! local `$ref`s (JSON pointers, recursion allowed), and the older dialects a schema may
//! declare (2019-09, draft-07, -06, -04). `format` is an annotation, as 2020-12 has it by
//! default, except the integer formats schemars writes for Rust's integers (`int8` to
//! `int128`, `uint8` to `uint128`, `int` and `uint` for `isize` and `usize`), asserted as
//! the type's range (for the 128-bit ones, what JSON numbers carry here: 64 bits): a
//! number past it would otherwise reach serde as a float. The few things it does not implement
//! (`$dynamicRef`, `$recursiveRef`, references to an `$id` or `$anchor`) are handed to the
//! `jsonschema` crate when the feature of that name is on (which checks no `format`), and
//! refused with their name when it is off.

mod compile;
mod pattern;
pub(crate) use pattern::{PatternEngine, regex};
#[cfg(all(test, feature = "jsonschema"))]
mod differential;
mod unevaluated;
mod validate;
mod values;

/// 2^53: a float this large or larger stands for several integers (2^53 is also how
/// 2^53 + 1 reads), so neither the validator nor a typed argument takes it for one.
pub(crate) const EXACT_FLOATS: f64 = 9_007_199_254_740_992.0;

use schemars::transform::{RecursiveTransform, Transform};
use schemars::{JsonSchema, Schema, SchemaGenerator, generate::SchemaSettings};
use serde_json::Value;

/// A generator for 2020-12 schemas with local `#/$defs/...` references.
pub(crate) fn generator() -> SchemaGenerator {
    settings().into_generator()
}

/// What both generators share: 2020-12 without `$schema`, and an `f32`'s range.
fn settings() -> SchemaSettings {
    SchemaSettings::draft2020_12()
        .with(|s| s.meta_schema = None)
        .with_transform(RecursiveTransform(float_range))
}

/// `schema`, a subschema a generator of ours made, with the settings' transforms applied
/// (the generator applies them to root schemas and definitions, not to subschemas).
pub(crate) fn finish_subschema(schema: &mut Schema) {
    RecursiveTransform(float_range).transform(schema);
}

/// An `f32` (schemars says `"format": "float"` alone) gets its range as `minimum` and
/// `maximum` where it has no bound of its own: a JSON number beyond it would deserialize
/// as an infinity, so it is refused as any value out of range is, and clients see the
/// range.
fn float_range(schema: &mut Schema) {
    if schema.get("format").and_then(Value::as_str) != Some("float") {
        return;
    }
    // `f32::MAX` as it is written (`3.4028235e38`, a shade above its exact value, and
    // read back as it): a client echoing an `f32` it was given is not refused.
    let max: f64 = 3.4028235e38;
    for (bound, exclusive, value) in [
        ("minimum", "exclusiveMinimum", -max),
        ("maximum", "exclusiveMaximum", max),
    ] {
        if schema.get(bound).is_none() && schema.get(exclusive).is_none() {
            schema.insert(bound.into(), value.into());
        }
    }
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
    settings()
        .with(|s| s.inline_subschemas = true)
        .into_generator()
}

/// The schema of `T` with every subschema inlined (no `$ref`): elicitation forms must be
/// flat, self-contained objects.
pub(crate) fn inline_schema_for<T: JsonSchema + ?Sized>() -> Value {
    inline_generator().into_root_schema_for::<T>().to_value()
}

/// A compiled validator for a tool's `inputSchema` (or an elicitation form's schema).
pub(crate) struct ArgumentValidator(Engine);

enum Engine {
    BuiltIn(compile::Program),
    #[cfg(feature = "jsonschema")]
    Full(Box<jsonschema::Validator>),
}

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
        patterns: Option<PatternEngine>,
        schema: impl FnOnce() -> Result<Value, String>,
    ) -> Result<&ArgumentValidator, &str> {
        self.0
            .get_or_init(|| schema().and_then(|s| ArgumentValidator::compile_with(&s, patterns)))
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

/// The JSON Schema dialects a schema may declare, oldest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Dialect {
    Draft4,
    Draft6,
    Draft7,
    Draft2019,
    Draft2020,
}

/// The dialect a schema declares with `$schema` (2020-12 when it declares none, as MCP
/// specifies); an unknown one is an error, never silently read as another.
fn dialect(schema: &Value) -> Result<Dialect, String> {
    let Some(uri) = schema.get("$schema") else {
        return Ok(Dialect::Draft2020);
    };
    let Some(uri) = uri.as_str() else {
        return Err("`$schema` must be a string (a dialect URI)".into());
    };
    let bare = uri
        .trim_end_matches('#')
        .trim_start_matches("https://")
        .trim_start_matches("http://");
    match bare {
        "json-schema.org/draft/2020-12/schema" => Ok(Dialect::Draft2020),
        "json-schema.org/draft/2019-09/schema" => Ok(Dialect::Draft2019),
        "json-schema.org/draft-07/schema" => Ok(Dialect::Draft7),
        "json-schema.org/draft-06/schema" => Ok(Dialect::Draft6),
        "json-schema.org/draft-04/schema" => Ok(Dialect::Draft4),
        _ => Err(format!(
            "unsupported JSON Schema dialect {}: use 2020-12 (the default), 2019-09, draft-07, draft-06 or draft-04",
            crate::protocol::reflect(uri)
        )),
    }
}

impl ArgumentValidator {
    /// Compiles `schema` (2020-12 unless it names another dialect). Remote references are
    /// never fetched, so a schema with a `$ref` outside itself is refused here.
    ///
    /// Patterns run on `regex-lite` (no backtracking, so a hostile argument cannot make
    /// one slow); schemas nested deeper than [`MAX_SCHEMA_DEPTH`] are refused.
    pub(crate) fn compile(schema: &Value) -> Result<Self, String> {
        Self::compile_with(schema, Some(regex))
    }

    /// [`ArgumentValidator::compile`], with the engine for the schema's patterns: `None`
    /// for a schema made from plain argument types, which has none (see
    /// [`PatternEngine`]).
    pub(crate) fn compile_with(
        schema: &Value,
        patterns: Option<PatternEngine>,
    ) -> Result<Self, String> {
        if depth(schema) > MAX_SCHEMA_DEPTH {
            return Err(format!(
                "the schema nests deeper than {MAX_SCHEMA_DEPTH} levels"
            ));
        }
        let dialect = dialect(schema)?;
        match compile::compile(schema, dialect, patterns) {
            Ok(program) => Ok(ArgumentValidator(Engine::BuiltIn(program))),
            Err(compile::Refusal::Invalid(e)) => Err(e),
            Err(compile::Refusal::Unsupported(what)) => Self::full(schema, dialect, &what),
        }
    }

    /// A schema the built-in validator does not implement, compiled by `jsonschema`.
    #[cfg(feature = "jsonschema")]
    fn full(schema: &Value, dialect: Dialect, _what: &str) -> Result<Self, String> {
        use jsonschema::Draft;
        let draft = match dialect {
            Dialect::Draft4 => Draft::Draft4,
            Dialect::Draft6 => Draft::Draft6,
            Dialect::Draft7 => Draft::Draft7,
            Dialect::Draft2019 => Draft::Draft201909,
            Dialect::Draft2020 => Draft::Draft202012,
        };
        jsonschema::options()
            .with_draft(draft)
            .should_validate_formats(false)
            .with_pattern_options(
                jsonschema::PatternOptions::regex()
                    .size_limit(1 << 20)
                    .dfa_size_limit(1 << 20),
            )
            .build(schema)
            .map(|v| ArgumentValidator(Engine::Full(Box::new(v))))
            .map_err(|e| e.to_string())
    }

    #[cfg(not(feature = "jsonschema"))]
    fn full(_: &Value, _: Dialect, what: &str) -> Result<Self, String> {
        Err(unsupported(what))
    }

    /// Whether the built-in validator runs it (not the full one, feature `jsonschema`).
    #[cfg(test)]
    pub(crate) fn is_built_in(&self) -> bool {
        #[cfg(feature = "jsonschema")]
        if let Engine::Full(_) = self.0 {
            return false;
        }
        true
    }

    /// Whether the built-in validator's short walk and its explaining walk agree on
    /// `instance` (the fuzz target checks it).
    #[cfg(feature = "fuzzing")]
    pub(crate) fn agrees(&self, instance: &Value) -> bool {
        match &self.0 {
            Engine::BuiltIn(p) => p.is_valid(instance) == p.failures(instance).is_empty(),
            #[cfg(feature = "jsonschema")]
            Engine::Full(_) => true,
        }
    }

    /// Checks the arguments. On failure, a message naming each offending field.
    pub(crate) fn validate(&self, instance: &Value) -> Result<(), String> {
        let failures = match &self.0 {
            Engine::BuiltIn(p) => {
                if p.is_valid(instance) {
                    return Ok(());
                }
                p.failures(instance)
            }
            #[cfg(feature = "jsonschema")]
            Engine::Full(v) => {
                if v.is_valid(instance) {
                    return Ok(());
                }
                v.iter_errors(instance)
                    .take(validate::MAX_FAILURES)
                    .map(|e| {
                        let path = e.instance_path().to_string();
                        (
                            path.trim_start_matches('/').replace('/', "."),
                            e.to_string(),
                        )
                    })
                    .collect()
            }
        };
        let msgs: Vec<String> = failures
            .into_iter()
            .map(|(path, msg)| {
                let msg = crate::protocol::reflect(&msg).into_owned();
                if path.is_empty() {
                    msg
                } else {
                    format!("`{path}`: {msg}")
                }
            })
            .collect();
        if msgs.is_empty() {
            // A schema that failed without saying why cannot happen; never report success.
            return Err("the value does not match the schema".into());
        }
        Err(msgs.join("; "))
    }
}

/// Why a schema using `what` is refused without the `jsonschema` feature.
#[cfg_attr(feature = "jsonschema", allow(dead_code))]
fn unsupported(what: &str) -> String {
    format!(
        "the schema uses {what}, which the built-in validator does not implement; \
         enable the `jsonschema` feature of mcp-runtime to validate it in full"
    )
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
            lazy.get(None, || {
                runs += 1;
                schema()
            })
            .is_ok()
        );
        assert!(
            lazy.get(None, || {
                runs += 1;
                schema()
            })
            .is_ok()
        );
        assert_eq!(runs, 1);
        assert!(
            lazy.get(None, schema)
                .is_ok_and(|v| v.validate(&json!({})).is_err())
        );
        let broken = LazyValidator::deferred();
        assert!(broken.get(None, || Ok(json!({"type": "strnig"}))).is_err());
        assert!(
            broken.get(None, schema).is_err(),
            "the first outcome is kept"
        );
    }

    #[test]
    fn remote_refs_are_refused() {
        let e = ArgumentValidator::compile(&json!({"$ref": "https://example.com/s.json"}));
        assert!(e.is_err());
    }
}
