//! The built-in validator's second half: a [`Program`] applied to an instance.
//!
//! One walk does both jobs. Asked only whether an instance is valid, it stops at the first
//! failure; asked why not, it goes on and records up to [`MAX_FAILURES`] messages, each with
//! the instance path of the offending value. Subschemas whose failure is not the instance's
//! fault alone (`anyOf`, `oneOf`, `not`, `if`, `contains`) are asked the short way; only
//! when all the branches of an `anyOf` or `oneOf` but one are ruled out by type (the
//! `null` branch of an `Option`) is that one asked why, its failures then being the
//! value's.

use super::compile::{Id, Node, Program};
use super::values::{
    compare, equal, first_repeat, multiple_of, show, show_list, show_str, type_matches, type_names,
};
use serde_json::{Map, Value};

/// One assertion of a walk: when `$cond` is false, `$ok` becomes false and `$msg` is
/// recorded, and the enclosing function returns `false` unless more failures are wanted.
macro_rules! assert_or {
    ($walk:ident, $ok:ident, $path:ident, $cond:expr, $msg:expr) => {
        if !$cond {
            $ok = false;
            if !$walk.fail($path, &|| $msg) {
                return false;
            }
        }
    };
}

/// Messages recorded at most for one instance.
pub(super) const MAX_FAILURES: usize = 8;

/// Subschemas entered at most on one path (a `$ref` cycle that consumes nothing of the
/// instance would otherwise never end).
pub(super) const MAX_DEPTH: usize = 256;

impl Program {
    /// Whether `instance` is valid.
    pub(crate) fn is_valid(&self, instance: &Value) -> bool {
        Walk {
            program: self,
            failures: None,
        }
        .check(0, instance, &mut Vec::new(), 0)
    }

    /// Why `instance` is not valid: up to [`MAX_FAILURES`] messages, each after the path
    /// of the value it is about (`a.b.0`; empty for the instance itself).
    pub(crate) fn failures(&self, instance: &Value) -> Vec<(String, String)> {
        let mut failures = Vec::new();
        Walk {
            program: self,
            failures: Some(&mut failures),
        }
        .check(0, instance, &mut Vec::new(), 0);
        failures
    }
}

pub(super) enum Seg<'i> {
    Key(&'i str),
    Index(usize),
}

pub(super) struct Walk<'p, 'f> {
    pub(super) program: &'p Program,
    /// `None`: stop at the first failure.
    pub(super) failures: Option<&'f mut Vec<(String, String)>>,
}

impl<'i> Walk<'_, '_> {
    /// Records a failure; whether to go on looking for more.
    pub(super) fn fail(&mut self, path: &[Seg<'i>], message: &dyn Fn() -> String) -> bool {
        let Some(failures) = self.failures.as_deref_mut() else {
            return false;
        };
        if failures.len() < MAX_FAILURES {
            let path = path
                .iter()
                .map(|s| match s {
                    Seg::Key(k) => (*k).to_owned(),
                    Seg::Index(i) => i.to_string(),
                })
                .collect::<Vec<_>>()
                .join(".");
            failures.push((path, message()));
        }
        failures.len() < MAX_FAILURES
    }

    /// Whether `v` passes `id` alone, asked the short way.
    pub(super) fn passes(
        &self,
        id: Id,
        v: &'i Value,
        path: &mut Vec<Seg<'i>>,
        depth: usize,
    ) -> bool {
        Walk {
            program: self.program,
            failures: None,
        }
        .check(id, v, path, depth)
    }

    /// Checks `v` against node `id`; `false` once it failed (in the short way, at once).
    pub(super) fn check(
        &mut self,
        id: Id,
        v: &'i Value,
        path: &mut Vec<Seg<'i>>,
        depth: usize,
    ) -> bool {
        let program = self.program;
        let n = &program.nodes[id as usize];
        let mut ok = true;
        if n.never {
            assert_or!(self, ok, path, false, "no value is allowed here".to_owned());
            return ok;
        }
        if depth > MAX_DEPTH {
            assert_or!(
                self,
                ok,
                path,
                false,
                format!("the schema's references nest deeper than {MAX_DEPTH} levels")
            );
            return ok;
        }
        if let Some(t) = n.types {
            assert_or!(
                self,
                ok,
                path,
                type_matches(t, v),
                format!("{} is not {}", show(v), type_names(t))
            );
        }
        if let Some(c) = &n.constant {
            assert_or!(
                self,
                ok,
                path,
                equal(v, c),
                format!("{} is not {}", show(v), show(c))
            );
        }
        if let Some(values) = &n.one_of_values {
            assert_or!(
                self,
                ok,
                path,
                values.iter().any(|e| equal(v, e)),
                format!("{} is not one of {}", show(v), show_list(values))
            );
        }
        match v {
            Value::Number(x) => {
                // Whether the schema's own bounds held: a format's range is not reported
                // on top of one of them.
                let mut bounded = true;
                if let Some(m) = &n.minimum {
                    let within = compare(x, m).is_ge();
                    bounded &= within;
                    assert_or!(self, ok, path, within, format!("{x} is less than {m}"));
                }
                if let Some(m) = &n.maximum {
                    let within = compare(x, m).is_le();
                    bounded &= within;
                    assert_or!(self, ok, path, within, format!("{x} is greater than {m}"));
                }
                if let Some(m) = &n.exclusive_minimum {
                    let within = compare(x, m).is_gt();
                    bounded &= within;
                    assert_or!(
                        self,
                        ok,
                        path,
                        within,
                        format!("{x} is not greater than {m}")
                    );
                }
                if let Some(m) = &n.exclusive_maximum {
                    let within = compare(x, m).is_lt();
                    bounded &= within;
                    assert_or!(self, ok, path, within, format!("{x} is not less than {m}"));
                }
                if let Some(f) = n.integer_format {
                    // Already said (`ok` is false then): a bound, or a `type` refusing a
                    // fraction.
                    let said = !bounded || n.types.is_some_and(|t| !type_matches(t, v));
                    assert_or!(self, ok, path, said || f.admits(x), f.refusal(x));
                }
                if let Some(m) = &n.multiple_of {
                    assert_or!(
                        self,
                        ok,
                        path,
                        multiple_of(x, m),
                        format!("{x} is not a multiple of {m}")
                    );
                }
            }
            Value::String(s) => {
                if n.min_length.is_some() || n.max_length.is_some() {
                    let len = s.chars().count() as u64;
                    if let Some(m) = n.min_length {
                        assert_or!(
                            self,
                            ok,
                            path,
                            len >= m,
                            format!("{} is shorter than {m} characters", show(v))
                        );
                    }
                    if let Some(m) = n.max_length {
                        assert_or!(
                            self,
                            ok,
                            path,
                            len <= m,
                            format!("{} is longer than {m} characters", show(v))
                        );
                    }
                }
                if let Some(p) = &n.pattern {
                    assert_or!(
                        self,
                        ok,
                        path,
                        p.regex.is_match(s),
                        format!(
                            "{} does not match the pattern {}",
                            show(v),
                            show_str(&p.text)
                        )
                    );
                }
            }
            Value::Array(items) => ok &= self.array(n, items, path, depth),
            Value::Object(map) => ok &= self.object(n, v, map, path, depth),
            _ => {}
        }
        if !ok && self.failures.is_none() {
            return false;
        }
        if let Some(r) = n.reference {
            ok &= self.check(r, v, path, depth + 1);
            if !ok && self.failures.is_none() {
                return false;
            }
        }
        for &s in &n.all_of {
            ok &= self.check(s, v, path, depth + 1);
            if !ok && self.failures.is_none() {
                return false;
            }
        }
        if !n.any_of.is_empty() {
            let any = n.any_of.iter().any(|&s| self.passes(s, v, path, depth + 1));
            if !any {
                ok = false;
                if !self.explain_none(&n.any_of, "anyOf", v, path, depth) {
                    return false;
                }
            }
        }
        if !n.one_of.is_empty() {
            let matching = n
                .one_of
                .iter()
                .filter(|&&s| self.passes(s, v, path, depth + 1))
                .take(2)
                .count();
            if matching == 0 {
                ok = false;
                if !self.explain_none(&n.one_of, "oneOf", v, path, depth) {
                    return false;
                }
            }
            assert_or!(
                self,
                ok,
                path,
                matching < 2,
                format!(
                    "{} matches more than one of the schemas of `oneOf`",
                    show(v)
                )
            );
        }
        if let Some(not) = n.not {
            assert_or!(
                self,
                ok,
                path,
                !self.passes(not, v, path, depth + 1),
                format!("{} matches the schema of `not`", show(v))
            );
        }
        if let Some((test, then, otherwise)) = n.condition {
            let branch = if self.passes(test, v, path, depth + 1) {
                then
            } else {
                otherwise
            };
            if let Some(b) = branch {
                ok &= self.check(b, v, path, depth + 1);
                if !ok && self.failures.is_none() {
                    return false;
                }
            }
        }
        if ok && (n.unevaluated_properties.is_some() || n.unevaluated_items.is_some()) {
            ok &= self.unevaluated(id, v, path, depth);
        }
        ok
    }

    /// Records why `v` matches none of `branches` (of `keyword`, `anyOf` or `oneOf`);
    /// whether to go on looking for more failures. When all branches but one are ruled
    /// out by type alone (`null` for the `{"type": "null"}` branch of an `Option`), the
    /// value was meant for that one, and its own failures say what is wrong, at their own
    /// paths; otherwise no branch stands out, and the failure is the whole value's.
    fn explain_none(
        &mut self,
        branches: &[Id],
        keyword: &str,
        v: &'i Value,
        path: &mut Vec<Seg<'i>>,
        depth: usize,
    ) -> bool {
        let Some(recorded) = self.failures.as_deref().map(Vec::len) else {
            return false;
        };
        let mut open = branches
            .iter()
            .filter(|&&b| !self.ruled_out_by_type(b, v, depth + 1));
        if let (Some(&only), None) = (open.next(), open.next()) {
            // Its walk fails as its short one did; should it not say so, the whole value
            // is named below all the same.
            self.check(only, v, path, depth + 1);
            let now = self.failures.as_deref().map_or(0, Vec::len);
            if now > recorded {
                return now < MAX_FAILURES;
            }
        }
        self.fail(path, &|| {
            format!("{} matches none of the schemas of `{keyword}`", show(v))
        })
    }

    /// Whether node `id` refuses `v` for its type alone: by its `type`, or that of a
    /// subschema it applies whole (`$ref`, `allOf`), or because it is `false`.
    fn ruled_out_by_type(&self, id: Id, v: &Value, depth: usize) -> bool {
        if depth > MAX_DEPTH {
            return false;
        }
        let n = &self.program.nodes[id as usize];
        n.never
            || n.types.is_some_and(|t| !type_matches(t, v))
            || n.reference
                .is_some_and(|r| self.ruled_out_by_type(r, v, depth + 1))
            || n.all_of
                .iter()
                .any(|&s| self.ruled_out_by_type(s, v, depth + 1))
    }

    fn array(
        &mut self,
        n: &Node,
        items: &'i [Value],
        path: &mut Vec<Seg<'i>>,
        depth: usize,
    ) -> bool {
        let mut ok = true;
        let len = items.len() as u64;
        if let Some(m) = n.min_items {
            assert_or!(
                self,
                ok,
                path,
                len >= m,
                format!("the array has fewer than {m} items")
            );
        }
        if let Some(m) = n.max_items {
            assert_or!(
                self,
                ok,
                path,
                len <= m,
                format!("the array has more than {m} items")
            );
        }
        if n.unique_items {
            let repeated = first_repeat(items);
            assert_or!(
                self,
                ok,
                path,
                repeated.is_none(),
                match repeated {
                    Some((i, j)) => format!("items {i} and {j} are equal; items must be unique"),
                    None => String::new(),
                }
            );
        }
        for (i, (&s, item)) in n.prefix_items.iter().zip(items).enumerate() {
            path.push(Seg::Index(i));
            ok &= self.check(s, item, path, depth + 1);
            path.pop();
            if !ok && self.failures.is_none() {
                return false;
            }
        }
        if let Some(s) = n.items {
            for (i, item) in items.iter().enumerate().skip(n.prefix_items.len()) {
                path.push(Seg::Index(i));
                ok &= self.check(s, item, path, depth + 1);
                path.pop();
                if !ok && self.failures.is_none() {
                    return false;
                }
            }
        }
        if let Some(c) = n.contains {
            let mut found = 0u64;
            for (i, item) in items.iter().enumerate() {
                path.push(Seg::Index(i));
                found += u64::from(self.passes(c, item, path, depth + 1));
                path.pop();
            }
            let min = n.min_contains.unwrap_or(1);
            assert_or!(
                self,
                ok,
                path,
                found >= min,
                if min == 1 {
                    "no item matches the schema of `contains`".to_owned()
                } else {
                    format!("fewer than {min} items match the schema of `contains`")
                }
            );
            if let Some(max) = n.max_contains {
                assert_or!(
                    self,
                    ok,
                    path,
                    found <= max,
                    format!("more than {max} items match the schema of `contains`")
                );
            }
        }
        ok
    }

    fn object(
        &mut self,
        n: &Node,
        whole: &'i Value,
        map: &'i Map<String, Value>,
        path: &mut Vec<Seg<'i>>,
        depth: usize,
    ) -> bool {
        let mut ok = true;
        for name in &n.required {
            assert_or!(
                self,
                ok,
                path,
                map.contains_key(name),
                format!("the required property {} is missing", show_str(name))
            );
        }
        let len = map.len() as u64;
        if let Some(m) = n.min_properties {
            assert_or!(
                self,
                ok,
                path,
                len >= m,
                format!("the object has fewer than {m} properties")
            );
        }
        if let Some(m) = n.max_properties {
            assert_or!(
                self,
                ok,
                path,
                len <= m,
                format!("the object has more than {m} properties")
            );
        }
        for (name, also) in &n.dependent_required {
            if map.contains_key(name) {
                for a in also {
                    assert_or!(
                        self,
                        ok,
                        path,
                        map.contains_key(a),
                        format!(
                            "the property {} is required when {} is present",
                            show_str(a),
                            show_str(name)
                        )
                    );
                }
            }
        }
        for (name, s) in &n.properties {
            if let Some((key, value)) = map.get_key_value(name) {
                path.push(Seg::Key(key));
                ok &= self.check(*s, value, path, depth + 1);
                path.pop();
                if !ok && self.failures.is_none() {
                    return false;
                }
            }
        }
        let needs_walk = !n.pattern_properties.is_empty()
            || n.additional_properties.is_some()
            || n.property_names.is_some();
        if needs_walk {
            for (key, value) in map {
                path.push(Seg::Key(key));
                if let Some(names) = n.property_names {
                    let name = Value::String(key.clone());
                    if !self.passes(names, &name, &mut Vec::new(), depth + 1) {
                        ok = false;
                        let keep_going = self.fail(path, &|| {
                            format!("the property name {} is not allowed", show_str(key))
                        });
                        if !keep_going {
                            path.pop();
                            return false;
                        }
                    }
                }
                let mut matched = n.properties.iter().any(|(p, _)| p == key);
                for (p, s) in &n.pattern_properties {
                    if p.regex.is_match(key) {
                        matched = true;
                        ok &= self.check(*s, value, path, depth + 1);
                        if !ok && self.failures.is_none() {
                            path.pop();
                            return false;
                        }
                    }
                }
                if let (false, Some(s)) = (matched, n.additional_properties) {
                    if self.program.nodes[s as usize].never {
                        ok = false;
                        let keep_going = self.fail(path, &|| {
                            format!("the property {} is not allowed", show_str(key))
                        });
                        if !keep_going {
                            path.pop();
                            return false;
                        }
                    } else {
                        ok &= self.check(s, value, path, depth + 1);
                        if !ok && self.failures.is_none() {
                            path.pop();
                            return false;
                        }
                    }
                }
                path.pop();
            }
        }
        for (name, s) in &n.dependent_schemas {
            if map.contains_key(name) {
                ok &= self.check(*s, whole, path, depth + 1);
                if !ok && self.failures.is_none() {
                    return false;
                }
            }
        }
        ok
    }
}

#[cfg(test)]
mod tests {
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
            match super::super::compile::compile(&schema, super::super::Dialect::Draft2020) {
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
}
