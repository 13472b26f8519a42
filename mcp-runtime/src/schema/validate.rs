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
use std::cell::Cell;

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

/// Subschema checks a walk may make: a fixed allowance, and this many per value of the
/// instance. Branches (`anyOf`, `oneOf`, `if`) are checked in full, each, so a recursive
/// union over nested input would take time exponential in the nesting; with this budget a
/// walk takes time linear in the instance's size at most, and one that runs out fails.
const STEPS_PER_VALUE: u64 = 32;
const STEPS_BASE: u64 = 100_000;

/// Why an instance that ran out of steps is refused.
pub(super) fn out_of_steps() -> String {
    "the value takes too long to check against the schema (its nesting makes the \
     schema's alternatives multiply)"
        .to_owned()
}

/// The steps a walk over `instance` may take.
fn budget(instance: &Value) -> u64 {
    fn values(v: &Value) -> u64 {
        1 + match v {
            Value::Array(items) => items.iter().map(values).sum(),
            Value::Object(map) => map.values().map(values).sum(),
            _ => 0,
        }
    }
    // One more than the checks allowed: a walk that ran out leaves 0.
    STEPS_BASE
        .saturating_add(values(instance).saturating_mul(STEPS_PER_VALUE))
        .saturating_add(1)
}

impl Program {
    /// Whether `instance` is valid.
    pub(crate) fn is_valid(&self, instance: &Value) -> bool {
        let steps = Cell::new(budget(instance));
        let ok = Walk {
            program: self,
            failures: None,
            steps: &steps,
        }
        .check(0, instance, &mut Vec::new(), 0);
        // Out of steps, a branch may have passed for failing (`not`, `oneOf`).
        ok && steps.get() > 0
    }

    /// Why `instance` is not valid: up to [`MAX_FAILURES`] messages, each after the path
    /// of the value it is about (`a.b.0`; empty for the instance itself).
    pub(crate) fn failures(&self, instance: &Value) -> Vec<(String, String)> {
        let mut failures = Vec::new();
        let steps = Cell::new(budget(instance));
        Walk {
            program: self,
            failures: Some(&mut failures),
            steps: &steps,
        }
        .check(0, instance, &mut Vec::new(), 0);
        if steps.get() == 0 {
            return vec![(String::new(), out_of_steps())];
        }
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
    /// One more than the checks left (see [`STEPS_PER_VALUE`]); 0 once a check found none.
    /// Shared with the walks it asks.
    pub(super) steps: &'p Cell<u64>,
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
            steps: self.steps,
        }
        .check(id, v, path, depth)
    }

    /// Takes a step of the walk's budget; `false` when none is left (the count, one more
    /// than the steps left, is then 0 for good).
    pub(super) fn step(&self) -> bool {
        match self.steps.get() {
            0 | 1 => {
                self.steps.set(0);
                false
            }
            left => {
                self.steps.set(left - 1);
                true
            }
        }
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
        if !self.step() {
            // Out of steps: every check fails, and the walk unwinds at once.
            return false;
        }
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
mod tests;
