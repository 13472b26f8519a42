//! The built-in validator against the `jsonschema` crate: for each schema below, over a
//! few hundred small instances, both must agree on which are valid.

use super::*;
use serde_json::json;

/// Small JSON values of every type, nested a little.
fn instances() -> Vec<Value> {
    let scalars = vec![
        json!(null),
        json!(true),
        json!(false),
        json!(0),
        json!(1),
        json!(-2),
        json!(3),
        json!(2.5),
        json!(4.0),
        json!(""),
        json!("a"),
        json!("ab"),
        json!("abc"),
        json!("b1"),
        json!("é€"),
    ];
    let mut out = scalars.clone();
    for (i, a) in scalars.iter().enumerate() {
        out.push(json!([a]));
        out.push(json!([a, scalars[(i + 3) % scalars.len()]]));
        out.push(json!([a, a]));
        out.push(json!({ "a": a }));
        out.push(json!({ "b": a, "c": scalars[(i + 5) % scalars.len()] }));
        out.push(json!({ "a": a, "b": a, "x": 1 }));
        out.push(json!({ "a": { "a": a } }));
        out.push(json!({ "a": [a, 1] }));
    }
    out.push(json!([]));
    out.push(json!({}));
    out.push(json!([1, 2, 3, 4]));
    out.push(json!({"a": 1, "b": 2, "c": 3, "d": 4}));
    out
}

fn schemas() -> Vec<Value> {
    vec![
        json!({"type": "integer"}),
        json!({"type": ["string", "null"]}),
        json!({"type": "number", "minimum": 0, "exclusiveMaximum": 3}),
        json!({"multipleOf": 0.5}),
        json!({"multipleOf": 2}),
        json!({"minLength": 2, "maxLength": 2}),
        json!({"pattern": "^[a-z]+$"}),
        json!({"enum": [1, "a", null, [1], {"a": 1}]}),
        json!({"const": {"a": 1.0}}),
        json!({"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}),
        json!({"properties": {"a": {"type": "string"}}, "additionalProperties": false}),
        json!({"patternProperties": {"^[ab]$": {"type": "integer"}},
               "additionalProperties": {"type": "string"}}),
        json!({"minProperties": 2, "maxProperties": 2}),
        json!({"propertyNames": {"maxLength": 1}}),
        json!({"dependentRequired": {"b": ["c"]}}),
        json!({"dependentSchemas": {"a": {"required": ["b"]}}}),
        json!({"items": {"type": "integer"}, "minItems": 1, "maxItems": 2}),
        json!({"prefixItems": [{"type": "string"}], "items": false}),
        json!({"uniqueItems": true}),
        json!({"contains": {"type": "integer"}, "minContains": 2}),
        json!({"contains": {"type": "string"}, "maxContains": 1}),
        json!({"anyOf": [{"type": "string"}, {"minimum": 2}]}),
        json!({"oneOf": [{"type": "integer"}, {"minimum": 2}]}),
        json!({"allOf": [{"type": "object"}, {"required": ["a"]}]}),
        json!({"not": {"type": ["object", "array"]}}),
        json!({"if": {"type": "string"}, "then": {"minLength": 2}, "else": {"type": "integer"}}),
        json!({"$defs": {"n": {"type": "object", "properties": {"a": {"$ref": "#/$defs/n"}}}},
               "$ref": "#/$defs/n"}),
        json!({"properties": {"a": true}, "allOf": [{"properties": {"b": true}}],
               "unevaluatedProperties": false}),
        json!({"anyOf": [{"properties": {"a": {"type": "integer"}}, "required": ["a"]},
                         {"properties": {"b": true}}],
               "unevaluatedProperties": false}),
        json!({"prefixItems": [true], "contains": {"type": "integer"}, "unevaluatedItems": false}),
        json!({"$schema": "http://json-schema.org/draft-07/schema#",
               "items": [{"type": "string"}], "additionalItems": {"type": "integer"}}),
        json!({"$schema": "http://json-schema.org/draft-04/schema#",
               "minimum": 1, "exclusiveMinimum": true, "dependencies": {"a": ["b"]}}),
        json!({"$schema": "http://json-schema.org/draft-07/schema#",
               "$ref": "#/definitions/a", "type": "string", "definitions": {"a": {"type": "integer"}}}),
    ]
}

#[test]
fn the_built_in_validator_agrees_with_jsonschema() {
    let instances = instances();
    let mut compared = 0;
    for schema in schemas() {
        let ours = match compile::compile(&schema, dialect(&schema).unwrap(), Some(super::regex)) {
            Ok(p) => p,
            Err(e) => panic!("{schema} not compiled: {e:?}"),
        };
        let theirs = ArgumentValidator::full(&schema, dialect(&schema).unwrap(), "")
            .ok()
            .unwrap();
        let Engine::Full(theirs) = theirs.0 else {
            unreachable!()
        };
        for v in &instances {
            let (a, b) = (ours.is_valid(v), theirs.is_valid(v));
            assert_eq!(
                a, b,
                "schema {schema}, instance {v}: ours {a}, jsonschema {b}"
            );
            assert_eq!(ours.failures(v).is_empty(), a, "{schema} {v}");
            compared += 1;
        }
    }
    assert!(compared > 4000, "{compared}");
}

#[test]
fn what_the_built_in_validator_leaves_is_validated_in_full() {
    let v = ArgumentValidator::compile(&json!({
        "$defs": {"item": {"$anchor": "item", "type": "integer"}},
        "type": "array", "items": {"$ref": "#item"},
    }))
    .ok()
    .unwrap();
    assert!(matches!(v.0, Engine::Full(_)));
    assert!(v.validate(&json!([1, 2])).is_ok());
    assert!(v.validate(&json!([1, "x"])).is_err());
    let v = ArgumentValidator::compile(&json!({"pattern": "^\\p{L}+$"}))
        .ok()
        .unwrap();
    assert!(v.validate(&json!("é")).is_ok());
    assert!(v.validate(&json!("1")).is_err());
}
