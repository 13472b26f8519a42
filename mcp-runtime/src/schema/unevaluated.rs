//! `unevaluatedProperties` and `unevaluatedItems`: which members of a value the keywords
//! that applied to it (its own, and those of the subschemas it passed) looked at, and the
//! others checked against the `unevaluated*` schema.

use super::compile::Id;
use super::validate::{MAX_DEPTH, Seg, Walk};
use super::values::show_str;
use serde_json::Value;

/// What the subschemas that applied to a value evaluated of it, for `unevaluated*`.
#[derive(Default)]
struct Evaluated {
    all: bool,
    /// For each member of the object, in its order: whether it was evaluated.
    keys: Vec<bool>,
    indices: Vec<bool>,
}

impl<'i> Walk<'_, '_> {
    /// `unevaluatedProperties` and `unevaluatedItems` of node `id`, once everything else
    /// of it passed: the members no keyword of it (or of a subschema that applied) looked
    /// at must pass them.
    pub(super) fn unevaluated(
        &mut self,
        id: Id,
        v: &'i Value,
        path: &mut Vec<Seg<'i>>,
        depth: usize,
    ) -> bool {
        let n = &self.program.nodes[id as usize];
        let mut ok = true;
        let mut seen = Evaluated::default();
        match v {
            Value::Object(map) => {
                let Some(u) = n.unevaluated_properties else {
                    return true;
                };
                // A flag per member (looking keys up in a list was quadratic in them).
                seen.keys = vec![false; map.len()];
                self.evaluated(id, v, &mut seen, depth, true);
                if seen.all {
                    return true;
                }
                for (i, (key, value)) in map.iter().enumerate() {
                    if seen.keys.get(i) == Some(&true) {
                        continue;
                    }
                    path.push(Seg::Key(key));
                    let passed = self.unevaluated_member(u, value, path, depth, &|| {
                        format!("the property {} is not allowed", show_str(key))
                    });
                    path.pop();
                    ok &= passed;
                    if !ok && self.failures.is_none() {
                        return false;
                    }
                }
            }
            Value::Array(items) => {
                let Some(u) = n.unevaluated_items else {
                    return true;
                };
                seen.indices = vec![false; items.len()];
                self.evaluated(id, v, &mut seen, depth, true);
                if seen.all {
                    return true;
                }
                for (i, item) in items.iter().enumerate() {
                    if seen.indices[i] {
                        continue;
                    }
                    path.push(Seg::Index(i));
                    let passed = self.unevaluated_member(u, item, path, depth, &|| {
                        format!("item {i} is not allowed")
                    });
                    path.pop();
                    ok &= passed;
                    if !ok && self.failures.is_none() {
                        return false;
                    }
                }
            }
            _ => {}
        }
        ok
    }

    fn unevaluated_member(
        &mut self,
        u: Id,
        v: &'i Value,
        path: &mut Vec<Seg<'i>>,
        depth: usize,
        refused: &dyn Fn() -> String,
    ) -> bool {
        if self.program.nodes[u as usize].never {
            self.fail(path, refused);
            return false;
        }
        self.check(u, v, path, depth + 1)
    }

    /// Adds to `seen` what node `id` (valid for `v`) and its applied subschemas evaluate.
    fn evaluated(&self, id: Id, v: &'i Value, seen: &mut Evaluated, depth: usize, top: bool) {
        if seen.all || depth > MAX_DEPTH {
            return;
        }
        // A step of the walk's budget, as a check is.
        if !self.step() {
            return;
        }
        let n = &self.program.nodes[id as usize];
        match v {
            Value::Object(map) => {
                if n.additional_properties.is_some() || (!top && n.unevaluated_properties.is_some())
                {
                    seen.all = true;
                    return;
                }
                for (i, (key, _)) in map.iter().enumerate() {
                    let named = n.properties.iter().any(|(p, _)| p == key)
                        || n.pattern_properties
                            .iter()
                            .any(|(p, _)| p.regex.is_match(key));
                    if named && let Some(flag) = seen.keys.get_mut(i) {
                        *flag = true;
                    }
                }
            }
            Value::Array(items) => {
                if n.items.is_some() || (!top && n.unevaluated_items.is_some()) {
                    seen.all = true;
                    return;
                }
                for flag in seen.indices.iter_mut().take(n.prefix_items.len()) {
                    *flag = true;
                }
                if let Some(c) = n.contains {
                    for (i, item) in items.iter().enumerate() {
                        if self.passes(c, item, &mut Vec::new(), depth + 1) {
                            seen.indices[i] = true;
                        }
                    }
                }
            }
            _ => return,
        }
        let mut scratch = Vec::new();
        if let Some(r) = n.reference {
            self.evaluated(r, v, seen, depth + 1, false);
        }
        for &s in &n.all_of {
            self.evaluated(s, v, seen, depth + 1, false);
        }
        for &s in n.any_of.iter().chain(&n.one_of) {
            if self.passes(s, v, &mut scratch, depth + 1) {
                self.evaluated(s, v, seen, depth + 1, false);
            }
        }
        if let Some((test, then, otherwise)) = n.condition {
            if self.passes(test, v, &mut scratch, depth + 1) {
                self.evaluated(test, v, seen, depth + 1, false);
                if let Some(t) = then {
                    self.evaluated(t, v, seen, depth + 1, false);
                }
            } else if let Some(e) = otherwise {
                self.evaluated(e, v, seen, depth + 1, false);
            }
        }
        if let Value::Object(map) = v {
            for (name, s) in &n.dependent_schemas {
                if map.contains_key(name) {
                    self.evaluated(*s, v, seen, depth + 1, false);
                }
            }
        }
    }
}
