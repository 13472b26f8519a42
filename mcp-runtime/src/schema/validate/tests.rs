use super::super::{ArgumentValidator, root_schema_for};
use schemars::JsonSchema;
use serde_json::{Value, json};

#[allow(dead_code)]
#[derive(JsonSchema)]
struct Inner {
    a: i64,
    tags: Vec<String>,
}

#[allow(dead_code)]
#[derive(JsonSchema)]
struct Outer {
    inner: Inner,
    list: Vec<Inner>,
}

/// A tool's arguments: `n: i64, outer: Option<Outer>`.
#[allow(dead_code)]
#[derive(JsonSchema)]
struct Args {
    n: i64,
    outer: Option<Outer>,
}

fn error(schema: &Value, instance: Value) -> String {
    let v = ArgumentValidator::compile(schema).unwrap_or_else(|e| panic!("{e}"));
    v.validate(&instance).expect_err("invalid")
}

#[test]
fn an_option_of_a_struct_reports_the_nested_field() {
    let schema = root_schema_for::<Args>();
    // schemars writes `Option<Outer>` as `anyOf: [{"$ref": ...}, {"type": "null"}]`.
    assert!(
        schema["properties"]["outer"]["anyOf"].is_array(),
        "{schema}"
    );
    let e = error(
        &schema,
        json!({"n": 1, "outer": {"inner": {"a": "x", "tags": []}, "list": []}}),
    );
    assert_eq!(e, r#"`outer.inner.a`: "x" is not an integer"#);
    // Every failure of the branch, each at its path.
    let e = error(
        &schema,
        json!({"n": 1, "outer": {"inner": {"a": 1.5, "tags": [3]}, "list": [{"a": 2}]}}),
    );
    assert_eq!(
        e,
        "`outer.inner.a`: 1.5 is not an integer; `outer.inner.tags.0`: 3 is not a string; \
         `outer.list.0`: the required property \"tags\" is missing"
    );
    // Null is what the other branch is for.
    assert!(
        ArgumentValidator::compile(&schema)
            .unwrap()
            .validate(&json!({"n": 1, "outer": null}))
            .is_ok()
    );
    // A value of neither type: no branch stands out.
    let e = error(&schema, json!({"n": 1, "outer": 5}));
    assert_eq!(e, "`outer`: 5 matches none of the schemas of `anyOf`");
}

#[test]
fn a_missing_nested_property_is_named_with_its_path() {
    let schema = root_schema_for::<Args>();
    let e = error(
        &schema,
        json!({"n": 1, "outer": {"inner": {"a": 1, "tags": []}, "list": [{"a": 2}]}}),
    );
    assert_eq!(
        e,
        "`outer.list.0`: the required property \"tags\" is missing"
    );
}

#[test]
fn the_one_branch_of_the_value_s_type_is_explained() {
    // Inlined (no `$ref`), in `oneOf`, nested in an array, with several other types.
    let schema = json!({"type": "object", "properties": {"v": {"type": "array", "items": {
    "oneOf": [
        {"type": "string", "enum": ["red", "green"]},
        {"type": "object", "properties": {"rgb": {"type": "integer", "maximum": 255}},
         "required": ["rgb"]},
        {"type": ["null", "boolean"]},
    ]}}}});
    let e = error(&schema, json!({"v": ["red", {"rgb": 300}]}));
    assert_eq!(e, "`v.1.rgb`: 300 is greater than 255");
    let e = error(&schema, json!({"v": ["blue"]}));
    assert_eq!(e, r#"`v.0`: "blue" is not one of ["red","green"]"#);
    // `allOf` and `$ref` count for the type too; a `false` branch is ruled out.
    let schema = json!({"$defs": {"o": {"type": "object", "required": ["a"]}},
        "anyOf": [{"allOf": [{"$ref": "#/$defs/o"}]}, {"type": "string"}, false]});
    assert_eq!(
        error(&schema, json!({})),
        "the required property \"a\" is missing"
    );
}

#[test]
fn a_genuine_union_keeps_the_whole_value_s_message() {
    // Both branches take an object: neither stands out.
    #[allow(dead_code)]
    #[derive(JsonSchema)]
    #[serde(untagged)]
    enum Either {
        A { a: i64 },
        B { b: String },
    }
    #[allow(dead_code)]
    #[derive(JsonSchema)]
    struct Args {
        e: Either,
    }
    let schema = root_schema_for::<Args>();
    let e = error(&schema, json!({"e": {"a": "x"}}));
    assert_eq!(
        e,
        r#"`e`: {"a":"x"} matches none of the schemas of `anyOf`"#
    );
    // Numbers both, in `oneOf`; and a branch with no `type` is never ruled out.
    let schema = json!({"oneOf": [{"type": "integer", "minimum": 5}, {"type": "number",
        "multipleOf": 3}]});
    assert_eq!(
        error(&schema, json!(4)),
        "4 matches none of the schemas of `oneOf`"
    );
    // 4.5 is no integer: the number branch is the one meant.
    assert_eq!(error(&schema, json!(4.5)), "4.5 is not a multiple of 3");
    let schema = json!({"anyOf": [{"type": "string", "maxLength": 1}, {"enum": [1, 2]}]});
    assert_eq!(
        error(&schema, json!("abc")),
        r#""abc" matches none of the schemas of `anyOf`"#
    );
    // More than one match is still `oneOf`'s own failure.
    let schema = json!({"oneOf": [{"type": "integer"}, {"minimum": 2}]});
    assert_eq!(
        error(&schema, json!(3)),
        "3 matches more than one of the schemas of `oneOf`"
    );
}

#[test]
fn both_walks_agree_where_a_branch_is_explained() {
    let schema = root_schema_for::<Args>();
    let program =
        match super::super::compile::compile(&schema, super::super::Dialect::Draft2020, None) {
            Ok(p) => p,
            Err(e) => panic!("{e:?}"),
        };
    for instance in [
        json!({"n": 1, "outer": {"inner": {"a": "x", "tags": []}, "list": []}}),
        json!({"n": 1, "outer": {"inner": {"a": 1, "tags": []}, "list": []}}),
        json!({"n": 1, "outer": null}),
        json!({"n": 1, "outer": []}),
        json!({"outer": {"list": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]}}),
    ] {
        let failures = program.failures(&instance);
        assert_eq!(
            program.is_valid(&instance),
            failures.is_empty(),
            "{instance}"
        );
        assert!(failures.len() <= super::MAX_FAILURES);
    }
}

/// A property `n` of schemars' schema for `T`.
fn integer<T: JsonSchema>() -> Value {
    #[derive(JsonSchema)]
    struct One<T> {
        #[allow(dead_code)]
        n: T,
    }
    root_schema_for::<One<T>>()
}

#[test]
fn integer_formats_are_ranges() {
    let u64_ = integer::<u64>();
    assert_eq!(u64_["properties"]["n"]["format"], "uint64");
    let wide: Value = serde_json::from_str(r#"{"n": 18446744073709551616}"#).unwrap();
    assert_eq!(
        error(&u64_, wide),
        "`n`: 18446744073709551616 is out of range for uint64 (0 to 18446744073709551615)"
    );
    let ok = ArgumentValidator::compile(&u64_).unwrap();
    let max: Value = serde_json::from_str(r#"{"n": 18446744073709551615}"#).unwrap();
    assert!(ok.validate(&max).is_ok());
    // A float just below 2^64, every integer it stands for within range.
    assert!(ok.validate(&json!({"n": (u64::MAX - 2047) as f64})).is_ok());
    assert!(ok.validate(&json!({"n": 7.0})).is_ok());
    // The schema's own `minimum: 0` says it first, and alone.
    assert_eq!(error(&u64_, json!({"n": -1})), "`n`: -1 is less than 0");
    // A fraction is `type`'s to report.
    assert_eq!(
        error(&u64_, json!({"n": 2.5})),
        "`n`: 2.5 is not an integer"
    );

    let i64_ = integer::<i64>();
    let low: Value = serde_json::from_str(r#"{"n": -9223372036854775809}"#).unwrap();
    assert_eq!(
        error(&i64_, low),
        "`n`: the number is out of range for int64 (-9223372036854775808 to \
         9223372036854775807)"
    );
    let lower: Value = serde_json::from_str(r#"{"n": -9223372036854777856}"#).unwrap();
    assert_eq!(
        error(&i64_, lower),
        "`n`: -9223372036854777856 is out of range for int64 (-9223372036854775808 to \
         9223372036854775807)"
    );
    let min: Value = serde_json::from_str(r#"{"n": -9223372036854775808}"#).unwrap();
    assert!(
        ArgumentValidator::compile(&i64_)
            .unwrap()
            .validate(&min)
            .is_ok()
    );
    assert_eq!(
        error(&i64_, json!({"n": u64::MAX})),
        "`n`: 18446744073709551615 is out of range for int64 (-9223372036854775808 to \
         9223372036854775807)"
    );
    assert_eq!(
        error(&i64_, json!({"n": 1e300})),
        "`n`: 1e+300 is out of range for int64 (-9223372036854775808 to 9223372036854775807)"
    );

    // schemars bounds neither `i32` nor the top of `u32`.
    assert_eq!(
        error(&integer::<i32>(), json!({"n": 2147483648u64})),
        "`n`: 2147483648 is out of range for int32 (-2147483648 to 2147483647)"
    );
    assert_eq!(
        error(&integer::<u32>(), json!({"n": 4294967296u64})),
        "`n`: 4294967296 is out of range for uint32 (0 to 4294967295)"
    );
    // `u8` has its own bounds, which say it.
    assert_eq!(
        error(&integer::<u8>(), json!({"n": 256})),
        "`n`: 256 is greater than 255"
    );
    // Inside an `Option` (`"type": ["integer", "null"]`) and an array.
    assert_eq!(
        error(&integer::<Option<Vec<u64>>>(), json!({"n": [1, 0.5, 1e20]})),
        "`n.1`: 0.5 is not an integer; `n.2`: 100000000000000000000 is out of range \
         for uint64 (0 to 18446744073709551615)"
    );
}

#[test]
fn usize_and_the_128_bit_integers_are_ranges_too() {
    let wide: Value = serde_json::from_str(r#"{"n": 18446744073709551616}"#).unwrap();
    let usize_ = integer::<usize>();
    assert_eq!(usize_["properties"]["n"]["format"], "uint");
    assert_eq!(
        error(&usize_, wide.clone()),
        format!(
            "`n`: 18446744073709551616 is out of range for uint (0 to {})",
            usize::MAX
        )
    );
    let isize_ = integer::<isize>();
    assert_eq!(isize_["properties"]["n"]["format"], "int");
    assert!(error(&isize_, wide.clone()).contains("is out of range for int ("));
    let u128_ = integer::<u128>();
    assert_eq!(u128_["properties"]["n"]["format"], "uint128");
    assert_eq!(
        error(&u128_, wide),
        "`n`: 18446744073709551616 is out of range for uint128 (0 to 18446744073709551615 \
         from JSON)"
    );
    let max: Value = serde_json::from_str(r#"{"n": 18446744073709551615}"#).unwrap();
    let ok = ArgumentValidator::compile(&u128_).unwrap();
    assert!(ok.validate(&max).is_ok());
    let i128_ = ArgumentValidator::compile(&integer::<i128>()).unwrap();
    assert!(i128_.validate(&max).is_ok());
    assert!(i128_.validate(&json!({"n": i64::MIN})).is_ok());
    let low: Value = serde_json::from_str(r#"{"n": -9223372036854775809}"#).unwrap();
    assert!(i128_.validate(&low).is_err());
}

#[test]
fn a_hand_written_integer_format_is_a_range_and_other_formats_annotations() {
    let schema = json!({"format": "int8"});
    assert_eq!(
        error(&schema, json!(128)),
        "128 is out of range for int8 (-128 to 127)"
    );
    // Without a `type` to say it, a fraction is the format's to refuse.
    assert_eq!(
        error(&schema, json!(1.5)),
        "1.5 is not an integer, as int8 requires"
    );
    let v = ArgumentValidator::compile(&schema).unwrap();
    for fine in [
        json!(-128),
        json!(127),
        json!(3.0),
        json!("300"),
        json!(null),
    ] {
        assert!(v.validate(&fine).is_ok(), "{fine}");
    }
    for annotation in [
        json!({"format": "double"}),
        json!({"format": "email"}),
        json!({"format": 64}),
    ] {
        let v = ArgumentValidator::compile(&annotation).unwrap();
        assert!(v.validate(&json!(1e300)).is_ok(), "{annotation}");
        assert!(v.validate(&json!("x")).is_ok(), "{annotation}");
    }
}

/// A recursive, internally tagged enum (schemars: `oneOf` of objects whose `op` is a
/// constant): every branch is checked in full, so a naive walk over nested input takes
/// time exponential in the nesting. The step budget cuts it off: the deep value is
/// refused at once, with a message saying why, and a shallow one is still checked.
#[allow(dead_code)]
#[derive(JsonSchema)]
#[serde(tag = "op")]
enum Filter {
    And { filters: Vec<Filter> },
    Or { filters: Vec<Filter> },
    Eq { field: String, value: String },
}

fn nested_filter(depth: usize) -> Value {
    let mut f = json!({"op": "Eq", "field": "a", "value": "b"});
    for _ in 0..depth {
        f = json!({"op": "And", "filters": [f]});
    }
    f
}

#[test]
fn nested_alternatives_take_time_linear_in_the_value_not_exponential() {
    let schema = root_schema_for::<Filter>();
    let v = ArgumentValidator::compile(&schema).unwrap();
    assert!(v.validate(&nested_filter(3)).is_ok());
    let mut bad = nested_filter(3);
    bad["filters"][0]["op"] = json!("Xor");
    assert!(v.validate(&bad).is_err());
    let started = std::time::Instant::now();
    let e = v.validate(&nested_filter(40)).unwrap_err();
    assert!(e.contains("too long to check"), "{e}");
    // 2^40 branch checks without the budget; a few hundred thousand with it.
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}

/// The same through `unevaluatedProperties`, whose annotations walk every branch again.
#[test]
fn a_closed_recursive_union_is_bounded_too() {
    let schema = json!({
        "$defs": {"n": {
            "type": "object",
            "anyOf": [
                {"properties": {"kind": {"const": "leaf"}}},
                {"properties": {"kind": {"const": "branch"}, "child": {"$ref": "#/$defs/n"}}}
            ],
            "unevaluatedProperties": false
        }},
        "$ref": "#/$defs/n"
    });
    let v = ArgumentValidator::compile(&schema).unwrap();
    let chain = |depth: usize| {
        let mut n = json!({"kind": "leaf"});
        for _ in 0..depth {
            n = json!({"kind": "branch", "child": n});
        }
        n
    };
    assert!(v.validate(&chain(3)).is_ok());
    let mut extra = chain(3);
    extra["child"]["child"]["other"] = json!(1);
    assert!(v.validate(&extra).is_err());
    let e = v.validate(&chain(40)).unwrap_err();
    assert!(e.contains("too long to check"), "{e}");
}

/// `multipleOf` with a fraction: rounding of decimal fractions passes, a value that is
/// no multiple fails however large its quotient.
#[test]
fn multiple_of_a_fraction_is_exact_to_the_last_places() {
    let cents = ArgumentValidator::compile(&json!({"multipleOf": 0.01})).unwrap();
    for ok in [json!(19.99), json!(4.35), json!(0.3), json!(12345678.12)] {
        assert!(cents.validate(&ok).is_ok(), "{ok}");
    }
    for bad in [json!(0.001), json!(12345678.123), json!(1234567890.125)] {
        assert!(cents.validate(&bad).is_err(), "{bad}");
    }
    let tenth = ArgumentValidator::compile(&json!({"multipleOf": 0.1})).unwrap();
    assert!(tenth.validate(&json!(0.3)).is_ok());
    assert!(tenth.validate(&json!(1.1)).is_ok());
    let one = ArgumentValidator::compile(&json!({"multipleOf": 1})).unwrap();
    assert!(one.validate(&json!(2000000000.5)).is_err());
    assert!(one.validate(&json!(2000000000.0)).is_ok());
}

/// `unevaluatedProperties` over many keys matched by a pattern: each key is looked up in
/// the evaluated ones in log time (it was a linear scan: quadratic in the keys).
#[test]
fn unevaluated_properties_over_many_keys_is_not_quadratic() {
    let schema = json!({
        "type": "object",
        "patternProperties": {"^x-": {"type": "string"}},
        "unevaluatedProperties": false
    });
    let v = ArgumentValidator::compile(&schema).unwrap();
    let mut map = serde_json::Map::new();
    for i in 0..100_000 {
        map.insert(format!("x-{i}"), json!(""));
    }
    let started = std::time::Instant::now();
    assert!(v.validate(&Value::Object(map.clone())).is_ok());
    map.insert("y".into(), json!(""));
    let e = v.validate(&Value::Object(map)).unwrap_err();
    assert!(e.contains("\"y\""), "{e}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}

/// Bounds compare with integers exactly, whichever is written as a float: past 2^53 an
/// `f64` rounds (u64::MAX and 2^64 compared equal, 10^19 + 1 and 10^19 too).
#[test]
fn bounds_compare_with_large_integers_exactly() {
    let below =
        ArgumentValidator::compile(&json!({"exclusiveMaximum": 1.8446744073709552e19})).unwrap();
    assert!(below.validate(&json!(u64::MAX)).is_ok());
    let max = ArgumentValidator::compile(&json!({"maximum": 1e19})).unwrap();
    assert!(max.validate(&json!(10_000_000_000_000_000_001u64)).is_err());
    assert!(max.validate(&json!(10_000_000_000_000_000_000u64)).is_ok());
    let min = ArgumentValidator::compile(&json!({"minimum": 2.5})).unwrap();
    assert!(min.validate(&json!(2)).is_err());
    assert!(min.validate(&json!(3)).is_ok());
    assert!(min.validate(&json!(2.5)).is_ok());
    let neg = ArgumentValidator::compile(&json!({"maximum": -2.5})).unwrap();
    assert!(neg.validate(&json!(-2)).is_err());
    assert!(neg.validate(&json!(-3)).is_ok());
    let huge = ArgumentValidator::compile(&json!({"maximum": 1e300})).unwrap();
    assert!(huge.validate(&json!(u64::MAX)).is_ok());
    assert!(huge.validate(&json!(1e301)).is_err());
}
