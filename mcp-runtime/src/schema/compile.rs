//! The built-in validator's first half: a schema (JSON) read into a [`Program`], a flat
//! list of [`Node`]s that point at each other by index (so a `$ref` cycle is an index, not
//! an infinite structure). Every keyword the validator knows is checked for the shape its
//! meta-schema requires (`"type": "strnig"` and `"required": "a"` are refused); unknown
//! keywords are annotations and ignored, as JSON Schema says.
//!
//! What it does not implement (`$dynamicRef`, `$recursiveRef`, references to an `$id` or
//! `$anchor`) is reported as [`Refusal::Unsupported`], so the caller can hand the schema
//! to the full validator (feature `jsonschema`) or refuse it with that name.

use super::Dialect;
use super::pattern::{Matcher, PatternEngine};
use serde_json::{Map, Number, Value};
use std::collections::HashMap;

/// A node's index in [`Program::nodes`].
pub(super) type Id = u32;

/// A compiled schema: node 0 is the root.
pub(crate) struct Program {
    pub(super) nodes: Vec<Node>,
}

/// Why a schema was not compiled.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// It breaks the rules of a keyword (the message says which, and where).
    Invalid(String),
    /// It uses a keyword or reference form the built-in validator does not implement.
    Unsupported(String),
}

/// JSON types, as bits.
pub(super) mod ty {
    pub const NULL: u8 = 1;
    pub const BOOLEAN: u8 = 2;
    pub const OBJECT: u8 = 4;
    pub const ARRAY: u8 = 8;
    pub const NUMBER: u8 = 16;
    pub const STRING: u8 = 32;
    pub const INTEGER: u8 = 64;
}

/// One schema object (or boolean schema): the keywords that assert something.
#[derive(Default)]
pub(super) struct Node {
    /// The `false` schema.
    pub never: bool,
    pub types: Option<u8>,
    pub constant: Option<Value>,
    pub one_of_values: Option<Vec<Value>>,
    pub minimum: Option<Number>,
    pub maximum: Option<Number>,
    pub exclusive_minimum: Option<Number>,
    pub exclusive_maximum: Option<Number>,
    pub multiple_of: Option<Number>,
    /// A `format` naming a fixed-width integer (`int64`, `uint8`, ...): asserted as a
    /// range, where every other format is an annotation.
    pub integer_format: Option<&'static IntegerFormat>,
    pub min_length: Option<u64>,
    pub max_length: Option<u64>,
    pub pattern: Option<Pattern>,
    pub prefix_items: Vec<Id>,
    /// Items after the prefix (`items` in 2020-12, `additionalItems` before).
    pub items: Option<Id>,
    pub contains: Option<Id>,
    pub min_contains: Option<u64>,
    pub max_contains: Option<u64>,
    pub min_items: Option<u64>,
    pub max_items: Option<u64>,
    pub unique_items: bool,
    pub unevaluated_items: Option<Id>,
    pub properties: Vec<(String, Id)>,
    pub pattern_properties: Vec<(Pattern, Id)>,
    pub additional_properties: Option<Id>,
    pub required: Vec<String>,
    pub min_properties: Option<u64>,
    pub max_properties: Option<u64>,
    pub property_names: Option<Id>,
    pub dependent_required: Vec<(String, Vec<String>)>,
    pub dependent_schemas: Vec<(String, Id)>,
    pub unevaluated_properties: Option<Id>,
    pub all_of: Vec<Id>,
    pub any_of: Vec<Id>,
    pub one_of: Vec<Id>,
    pub not: Option<Id>,
    pub condition: Option<(Id, Option<Id>, Option<Id>)>,
    pub reference: Option<Id>,
}

/// A `pattern` (or `patternProperties` key): its text, for messages, and its regex.
pub(super) struct Pattern {
    pub text: String,
    pub regex: Box<dyn Matcher>,
}

/// A fixed-width integer `format`, as schemars writes it for Rust's integer types (`u64`
/// is `"format": "uint64"`, `usize` `"uint"`, `u128` `"uint128"`): a number must be an
/// integer within the type's range. Checked because schemars gives no `maximum` to `u32`,
/// `u64`, `usize`, `i64` and the 128-bit types (nor any bound to `i32`), and a JSON number
/// beyond them would reach serde, which reads an integer too large for 64 bits as a float
/// and refuses it as one ("invalid type: floating point").
pub(super) struct IntegerFormat {
    pub name: &'static str,
    pub min: i128,
    pub max: i128,
    /// The range is narrower than the type's, and the refusal says "from JSON": 128-bit
    /// integers are read from JSON only within 64 bits (serde_json reads a larger one as a
    /// float).
    pub narrowed: bool,
}

const INTEGER_FORMATS: [IntegerFormat; 12] = [
    IntegerFormat::of("int8", i8::MIN as i128, i8::MAX as i128),
    IntegerFormat::of("int16", i16::MIN as i128, i16::MAX as i128),
    IntegerFormat::of("int32", i32::MIN as i128, i32::MAX as i128),
    IntegerFormat::of("int64", i64::MIN as i128, i64::MAX as i128),
    IntegerFormat::of("uint8", 0, u8::MAX as i128),
    IntegerFormat::of("uint16", 0, u16::MAX as i128),
    IntegerFormat::of("uint32", 0, u32::MAX as i128),
    IntegerFormat::of("uint64", 0, u64::MAX as i128),
    // `isize` and `usize`: the width of the platform the server runs on.
    IntegerFormat::of("int", isize::MIN as i128, isize::MAX as i128),
    IntegerFormat::of("uint", 0, usize::MAX as i128),
    IntegerFormat::narrowed("int128", i64::MIN as i128, u64::MAX as i128),
    IntegerFormat::narrowed("uint128", 0, u64::MAX as i128),
];

impl IntegerFormat {
    const fn of(name: &'static str, min: i128, max: i128) -> Self {
        IntegerFormat {
            name,
            min,
            max,
            narrowed: false,
        }
    }

    const fn narrowed(name: &'static str, min: i128, max: i128) -> Self {
        IntegerFormat {
            name,
            min,
            max,
            narrowed: true,
        }
    }

    /// The integer format `format` names, if it names one.
    fn named(format: &str) -> Option<&'static IntegerFormat> {
        INTEGER_FORMATS.iter().find(|f| f.name == format)
    }

    /// Whether `x` is an integer within the range (`3.0` counts, as JSON Schema has it).
    /// A float of 2^53 or more stands for every integer that rounds to it, and is within only
    /// when they all are: serde_json reads `-9223372036854775809` (below `i64::MIN`) as the
    /// float -2^63, which is `i64::MIN` itself.
    pub fn admits(&self, x: &Number) -> bool {
        if let Some(i) = x.as_i64() {
            return (self.min..=self.max).contains(&i128::from(i));
        }
        if let Some(u) = x.as_u64() {
            return (self.min..=self.max).contains(&i128::from(u));
        }
        let Some(f) = x.as_f64() else {
            return false;
        };
        // Integral and well within i128 (the ranges end at 2^64): exact as an integer.
        if f.fract() != 0.0 || f.abs() > 1e30 {
            return false;
        }
        let i = f as i128;
        if f.abs() >= super::EXACT_FLOATS {
            self.min < i && i < self.max
        } else {
            self.min <= i && i <= self.max
        }
    }

    /// Why `x`, a number it does not admit, is refused: `x` shown as the client most
    /// likely wrote it (an integer past 64 bits reads as a float, shown without an
    /// exponent).
    pub fn refusal(&self, x: &Number) -> String {
        let (name, min, max) = (self.name, self.min, self.max);
        let f = x.as_f64().unwrap_or_default();
        if x.is_f64() && f.fract() != 0.0 {
            return format!("{x} is not an integer, as {name} requires");
        }
        let shown = match x.is_f64() && f.abs() < 1e30 {
            true => format!("{f:.0}"),
            false => x.to_string(),
        };
        let why = match self.narrowed {
            true => " from JSON",
            false => "",
        };
        if x.is_f64() && (f as i128 == min || f as i128 == max) {
            // The float a number past 64 bits rounds to, on a bound: not the bound itself
            // (that reads as an integer), so not shown as if it were.
            return format!("the number is out of range for {name} ({min} to {max}{why})");
        }
        format!("{shown} is out of range for {name} ({min} to {max}{why})")
    }
}

/// Compiles `schema`, read as `dialect`.
pub(super) fn compile(
    schema: &Value,
    dialect: Dialect,
    patterns: Option<PatternEngine>,
) -> Result<Program, Refusal> {
    let mut c = Compiler {
        root: schema,
        dialect,
        patterns,
        nodes: Vec::new(),
        by_pointer: HashMap::new(),
        pending: Vec::new(),
    };
    c.node(schema, String::new())?;
    while let Some((pointer, id)) = c.pending.pop() {
        let target = resolve(schema, &pointer).ok_or_else(|| {
            Refusal::Invalid(format!(
                "`$ref` \"#{pointer}\" points at nothing in the schema"
            ))
        })?;
        let node = c.read(target, &pointer)?;
        c.nodes[id as usize] = node;
    }
    let program = Program { nodes: c.nodes };
    if program.loops_in_place() {
        return Err(Refusal::Invalid(
            "the schema refers to itself without descending into the value (a `$ref` cycle \
             through `$ref`, `allOf`, `anyOf`, `oneOf`, `not`, `if` or `dependentSchemas` \
             alone), so no value could ever be checked against it"
                .into(),
        ));
    }
    Ok(program)
}

impl Program {
    /// The subschemas node `id` applies to the same value (not to a member or an item).
    fn in_place(&self, id: Id) -> impl Iterator<Item = Id> + '_ {
        let n = &self.nodes[id as usize];
        let (test, then, otherwise) = match n.condition {
            Some((t, a, b)) => (Some(t), a, b),
            None => (None, None, None),
        };
        n.reference
            .into_iter()
            .chain(n.all_of.iter().copied())
            .chain(n.any_of.iter().copied())
            .chain(n.one_of.iter().copied())
            .chain(n.not)
            .chain(test)
            .chain(then)
            .chain(otherwise)
            .chain(n.dependent_schemas.iter().map(|(_, s)| *s))
    }

    /// Whether some node reaches itself through subschemas applied in place: validating
    /// any value against it would never end.
    fn loops_in_place(&self) -> bool {
        // 0: not seen, 1: on the current path, 2: done.
        let mut state = vec![0u8; self.nodes.len()];
        for start in 0..self.nodes.len() as Id {
            if state[start as usize] != 0 {
                continue;
            }
            let mut stack: Vec<(Id, Vec<Id>)> = vec![(start, self.in_place(start).collect())];
            state[start as usize] = 1;
            while let Some((node, pending)) = stack.last_mut() {
                match pending.pop() {
                    Some(next) => match state[next as usize] {
                        1 => return true,
                        0 => {
                            state[next as usize] = 1;
                            let children = self.in_place(next).collect();
                            stack.push((next, children));
                        }
                        _ => {}
                    },
                    None => {
                        state[*node as usize] = 2;
                        stack.pop();
                    }
                }
            }
        }
        false
    }
}

struct Compiler<'a> {
    root: &'a Value,
    dialect: Dialect,
    /// `None`: the schema was made with no `pattern` in it.
    patterns: Option<PatternEngine>,
    nodes: Vec<Node>,
    /// The node made for each JSON pointer a `$ref` named (and the root, ``).
    by_pointer: HashMap<String, Id>,
    /// References whose node is still to be read.
    pending: Vec<(String, Id)>,
}

impl Compiler<'_> {
    /// Reads the schema at `at` (a JSON pointer, for messages) into a new node.
    fn node(&mut self, v: &Value, at: String) -> Result<Id, Refusal> {
        let id = self.reserve();
        if at.is_empty() {
            self.by_pointer.insert(String::new(), id);
        }
        let node = self.read(v, &at)?;
        self.nodes[id as usize] = node;
        Ok(id)
    }

    fn reserve(&mut self) -> Id {
        self.nodes.push(Node::default());
        (self.nodes.len() - 1) as Id
    }

    fn read(&mut self, v: &Value, at: &str) -> Result<Node, Refusal> {
        let map = match v {
            Value::Bool(true) => return Ok(Node::default()),
            Value::Bool(false) => {
                return Ok(Node {
                    never: true,
                    ..Node::default()
                });
            }
            Value::Object(m) => m,
            _ => return Err(invalid(at, "a schema must be an object or a boolean")),
        };
        let mut n = Node::default();
        let draft4 = self.dialect == Dialect::Draft4;
        let modern = self.dialect >= Dialect::Draft2019;
        for (k, v) in map {
            let here = &format!("{at}/{}", escape(k));
            match k.as_str() {
                "$dynamicRef" | "$recursiveRef" => {
                    return Err(Refusal::Unsupported(format!("`{k}`")));
                }
                "$ref" => {
                    let r = v.as_str().ok_or_else(|| invalid(here, "must be a string"))?;
                    n.reference = Some(self.reference(r, here)?);
                    if !modern {
                        // Before 2019-09 a `$ref` replaces its siblings.
                        return Ok(Node {
                            reference: n.reference,
                            ..Node::default()
                        });
                    }
                }
                "type" => n.types = Some(types(v).ok_or_else(|| {
                    invalid(here, "must be a type name (null, boolean, object, array, number, string, integer) or an array of them")
                })?),
                "const" => n.constant = Some(v.clone()),
                "enum" => {
                    let a = v.as_array().ok_or_else(|| invalid(here, "must be an array"))?;
                    n.one_of_values = Some(a.clone());
                }
                "minimum" => n.minimum = Some(number(v, here)?),
                "maximum" => n.maximum = Some(number(v, here)?),
                "exclusiveMinimum" | "exclusiveMaximum" if draft4 && !v.is_boolean() => {
                    return Err(invalid(here, "must be a boolean in draft-04"));
                }
                // Draft-04's flags, applied once the loop is done.
                "exclusiveMinimum" | "exclusiveMaximum" if draft4 => {}
                "exclusiveMinimum" => n.exclusive_minimum = Some(number(v, here)?),
                "exclusiveMaximum" => n.exclusive_maximum = Some(number(v, here)?),
                "multipleOf" => {
                    let m = number(v, here)?;
                    if m.as_f64().is_none_or(|f| f <= 0.0) {
                        return Err(invalid(here, "must be greater than 0"));
                    }
                    n.multiple_of = Some(m);
                }
                // The other formats are annotations (2020-12's default), as are formats
                // that are not strings.
                "format" => n.integer_format = v.as_str().and_then(IntegerFormat::named),
                "minLength" => n.min_length = Some(count(v, here)?),
                "maxLength" => n.max_length = Some(count(v, here)?),
                "pattern" => n.pattern = Some(pattern(v, here, self.patterns)?),
                "prefixItems" if self.dialect == Dialect::Draft2020 => {
                    n.prefix_items = self.list(v, here)?;
                }
                "items" => match v {
                    Value::Array(_) if self.dialect < Dialect::Draft2020 => {
                        n.prefix_items = self.list(v, here)?;
                    }
                    _ => n.items = Some(self.node(v, here.clone())?),
                },
                "additionalItems" if self.dialect < Dialect::Draft2020 => {
                    // Only after a tuple `items`; read once the loop is done.
                }
                "contains" if self.dialect >= Dialect::Draft6 => {
                    n.contains = Some(self.node(v, here.clone())?);
                }
                "minContains" if modern => n.min_contains = Some(count(v, here)?),
                "maxContains" if modern => n.max_contains = Some(count(v, here)?),
                "minItems" => n.min_items = Some(count(v, here)?),
                "maxItems" => n.max_items = Some(count(v, here)?),
                "uniqueItems" => {
                    n.unique_items = v
                        .as_bool()
                        .ok_or_else(|| invalid(here, "must be a boolean"))?;
                }
                "unevaluatedItems" if modern => n.unevaluated_items = Some(self.node(v, here.clone())?),
                "properties" => {
                    for (name, s) in object(v, here)? {
                        let id = self.node(s, format!("{here}/{}", escape(name)))?;
                        n.properties.push((name.clone(), id));
                    }
                }
                "patternProperties" => {
                    for (p, s) in object(v, here)? {
                        let at = format!("{here}/{}", escape(p));
                        let compiled = pattern(&Value::String(p.clone()), &at, self.patterns)?;
                        let id = self.node(s, at)?;
                        n.pattern_properties.push((compiled, id));
                    }
                }
                "additionalProperties" => {
                    n.additional_properties = Some(self.node(v, here.clone())?);
                }
                "required" => n.required = strings(v, here, !draft4)?,
                "minProperties" => n.min_properties = Some(count(v, here)?),
                "maxProperties" => n.max_properties = Some(count(v, here)?),
                "propertyNames" if self.dialect >= Dialect::Draft6 => {
                    n.property_names = Some(self.node(v, here.clone())?);
                }
                "dependentRequired" if modern => {
                    for (name, r) in object(v, here)? {
                        let at = format!("{here}/{}", escape(name));
                        n.dependent_required
                            .push((name.clone(), strings(r, &at, true)?));
                    }
                }
                "dependentSchemas" if modern => {
                    for (name, s) in object(v, here)? {
                        let id = self.node(s, format!("{here}/{}", escape(name)))?;
                        n.dependent_schemas.push((name.clone(), id));
                    }
                }
                "dependencies" if !modern => {
                    for (name, d) in object(v, here)? {
                        let at = format!("{here}/{}", escape(name));
                        if d.is_array() {
                            n.dependent_required
                                .push((name.clone(), strings(d, &at, true)?));
                        } else {
                            let id = self.node(d, at)?;
                            n.dependent_schemas.push((name.clone(), id));
                        }
                    }
                }
                "unevaluatedProperties" if modern => {
                    n.unevaluated_properties = Some(self.node(v, here.clone())?);
                }
                "allOf" => n.all_of = self.non_empty_list(v, here)?,
                "anyOf" => n.any_of = self.non_empty_list(v, here)?,
                "oneOf" => n.one_of = self.non_empty_list(v, here)?,
                "not" => n.not = Some(self.node(v, here.clone())?),
                "if" if self.dialect >= Dialect::Draft7 => {
                    let test = self.node(v, here.clone())?;
                    let then = match map.get("then") {
                        Some(s) => Some(self.node(s, format!("{at}/then"))?),
                        None => None,
                    };
                    let otherwise = match map.get("else") {
                        Some(s) => Some(self.node(s, format!("{at}/else"))?),
                        None => None,
                    };
                    n.condition = Some((test, then, otherwise));
                }
                // Read with `if`; alone they do nothing.
                "then" | "else" => {}
                // Subschemas reached only by `$ref` are read when referenced; they must
                // still be schemas.
                "$defs" | "definitions" => {
                    for (name, s) in object(v, here)? {
                        if !(s.is_object() || s.is_boolean()) {
                            return Err(invalid(
                                &format!("{here}/{}", escape(name)),
                                "a schema must be an object or a boolean",
                            ));
                        }
                    }
                }
                "$schema" if !at.is_empty() => {
                    return Err(Refusal::Unsupported("`$schema` in a subschema".into()));
                }
                "$id" | "id" if !at.is_empty() => {
                    // A subschema with its own base URI: references inside it resolve
                    // against that, which this validator does not do.
                    return Err(Refusal::Unsupported(format!("`{k}` in a subschema")));
                }
                _ => {}
            }
        }
        if draft4 {
            let flag = |k: &str| map.get(k).and_then(Value::as_bool) == Some(true);
            if flag("exclusiveMinimum") {
                n.exclusive_minimum = n.minimum.take();
            }
            if flag("exclusiveMaximum") {
                n.exclusive_maximum = n.maximum.take();
            }
        }
        if let (true, Some(extra), Some(Value::Array(_))) = (
            self.dialect < Dialect::Draft2020,
            map.get("additionalItems"),
            map.get("items"),
        ) {
            n.items = Some(self.node(extra, format!("{at}/additionalItems"))?);
        }
        Ok(n)
    }

    fn list(&mut self, v: &Value, at: &str) -> Result<Vec<Id>, Refusal> {
        let a = v
            .as_array()
            .ok_or_else(|| invalid(at, "must be an array of schemas"))?;
        a.iter()
            .enumerate()
            .map(|(i, s)| self.node(s, format!("{at}/{i}")))
            .collect()
    }

    fn non_empty_list(&mut self, v: &Value, at: &str) -> Result<Vec<Id>, Refusal> {
        let list = self.list(v, at)?;
        if list.is_empty() {
            return Err(invalid(at, "must not be empty"));
        }
        Ok(list)
    }

    /// The node a `$ref` names: a JSON pointer into this schema (`#`, `#/$defs/a`).
    fn reference(&mut self, r: &str, at: &str) -> Result<Id, Refusal> {
        let Some(fragment) = r.strip_prefix('#') else {
            return Err(Refusal::Unsupported(format!(
                "a `$ref` outside the schema (\"{r}\"); references are never fetched"
            )));
        };
        let pointer = mcp_uri_template::percent_decode(fragment)
            .ok_or_else(|| invalid(at, "is not a valid URI fragment"))?;
        if !pointer.is_empty() && !pointer.starts_with('/') {
            return Err(Refusal::Unsupported(format!(
                "a `$ref` to an anchor (\"{r}\")"
            )));
        }
        if let Some(&id) = self.by_pointer.get(&pointer) {
            return Ok(id);
        }
        if resolve(self.root, &pointer).is_none() {
            return Err(invalid(
                at,
                &format!("\"{r}\" points at nothing in the schema"),
            ));
        }
        let id = self.reserve();
        self.by_pointer.insert(pointer.clone(), id);
        self.pending.push((pointer, id));
        Ok(id)
    }
}

fn invalid(at: &str, what: &str) -> Refusal {
    let at = if at.is_empty() { "/" } else { at };
    Refusal::Invalid(format!("at `{at}`: {what}"))
}

/// Escapes a key for a JSON pointer (RFC 6901).
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// The value a JSON pointer (RFC 6901) points at.
fn resolve<'v>(root: &'v Value, pointer: &str) -> Option<&'v Value> {
    if pointer.is_empty() {
        return Some(root);
    }
    let mut v = root;
    for token in pointer.strip_prefix('/')?.split('/') {
        let token = token.replace("~1", "/").replace("~0", "~");
        v = match v {
            Value::Object(m) => m.get(&token)?,
            Value::Array(a) => a.get(token.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(v)
}

fn types(v: &Value) -> Option<u8> {
    let one = |v: &Value| {
        Some(match v.as_str()? {
            "null" => ty::NULL,
            "boolean" => ty::BOOLEAN,
            "object" => ty::OBJECT,
            "array" => ty::ARRAY,
            "number" => ty::NUMBER,
            "string" => ty::STRING,
            "integer" => ty::INTEGER,
            _ => return None,
        })
    };
    match v {
        Value::Array(a) => {
            let mut bits = 0;
            for t in a {
                let b = one(t)?;
                if bits & b != 0 {
                    return None;
                }
                bits |= b;
            }
            Some(bits)
        }
        _ => one(v),
    }
}

fn number(v: &Value, at: &str) -> Result<Number, Refusal> {
    match v {
        Value::Number(n) => Ok(n.clone()),
        _ => Err(invalid(at, "must be a number")),
    }
}

/// A non-negative integer (`2.0` included, as the meta-schema allows).
fn count(v: &Value, at: &str) -> Result<u64, Refusal> {
    let n = v.as_u64().or_else(|| {
        v.as_f64()
            .filter(|f| *f >= 0.0 && f.fract() == 0.0 && *f < u64::MAX as f64)
            .map(|f| f as u64)
    });
    n.ok_or_else(|| invalid(at, "must be a non-negative integer"))
}

fn object<'v>(v: &'v Value, at: &str) -> Result<&'v Map<String, Value>, Refusal> {
    v.as_object()
        .ok_or_else(|| invalid(at, "must be an object"))
}

/// An array of distinct strings (`may_be_empty`: draft-04 wants at least one).
fn strings(v: &Value, at: &str, may_be_empty: bool) -> Result<Vec<String>, Refusal> {
    let a = v
        .as_array()
        .ok_or_else(|| invalid(at, "must be an array of strings"))?;
    let mut out: Vec<String> = Vec::with_capacity(a.len());
    for s in a {
        let s = s
            .as_str()
            .ok_or_else(|| invalid(at, "must be an array of strings"))?;
        if out.iter().any(|o| o == s) {
            return Err(invalid(at, &format!("names \"{s}\" twice")));
        }
        out.push(s.to_owned());
    }
    if out.is_empty() && !may_be_empty {
        return Err(invalid(at, "must not be empty"));
    }
    Ok(out)
}

/// The largest compiled pattern accepted, in bytes of pattern text.
const MAX_PATTERN_LEN: usize = 4096;

fn pattern(v: &Value, at: &str, engine: Option<PatternEngine>) -> Result<Pattern, Refusal> {
    let text = v.as_str().ok_or_else(|| invalid(at, "must be a string"))?;
    if text.len() > MAX_PATTERN_LEN {
        return Err(invalid(
            at,
            &format!("the pattern is longer than {MAX_PATTERN_LEN} bytes"),
        ));
    }
    let Some(engine) = engine else {
        // The schema's maker said no pattern could occur (plain argument types only); one
        // did, so that was wrong: the full validator may take it, or the schema is refused.
        return Err(Refusal::Unsupported(format!(
            "the pattern {text:?} (the schema was made without a pattern engine)"
        )));
    };
    let regex = engine(text).map_err(|e| {
        if e.contains("not supported") {
            // Valid elsewhere (Unicode classes such as `\p{L}`): the full validator
            // may take it.
            Refusal::Unsupported(format!("the pattern {text:?} ({e})"))
        } else {
            invalid(at, &format!("not a regular expression: {e}"))
        }
    })?;
    Ok(Pattern {
        text: text.to_owned(),
        regex,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::pattern::regex;
    use serde_json::json;

    /// A schema made without a pattern engine that has a pattern after all is not
    /// compiled with the pattern skipped: it is refused as unsupported (the full validator
    /// may take it), naming the pattern.
    #[test]
    fn a_pattern_without_an_engine_is_refused_not_skipped() {
        for schema in [
            json!({"type": "string", "pattern": "^a$"}),
            json!({"patternProperties": {"^a$": {}}}),
        ] {
            match compile(&schema, Dialect::Draft2020, None) {
                Err(Refusal::Unsupported(e)) => assert!(e.contains("^a$"), "{e}"),
                Err(Refusal::Invalid(e)) => panic!("invalid, not unsupported: {e}"),
                Ok(_) => panic!("compiled without its pattern: {schema}"),
            }
            assert!(compile(&schema, Dialect::Draft2020, Some(regex)).is_ok());
        }
    }

    fn refused(schema: Value) -> String {
        match compile(&schema, Dialect::Draft2020, Some(regex)) {
            Err(Refusal::Invalid(e)) => e,
            Err(Refusal::Unsupported(e)) => panic!("unsupported, not invalid: {e}"),
            Ok(_) => panic!("compiled: {schema}"),
        }
    }

    #[test]
    fn misused_keywords_are_refused_with_their_place() {
        let e = refused(json!({"properties": {"a": {"type": "strnig"}}}));
        assert!(e.contains("/properties/a/type"), "{e}");
        assert!(refused(json!({"required": "a"})).contains("/required"));
        assert!(refused(json!({"required": ["a", "a"]})).contains("twice"));
        assert!(refused(json!({"minLength": -1})).contains("non-negative"));
        assert!(refused(json!({"multipleOf": 0})).contains("greater than 0"));
        assert!(refused(json!({"anyOf": []})).contains("empty"));
        assert!(refused(json!({"properties": 5})).contains("object"));
        assert!(refused(json!({"items": 5})).contains("/items"));
        assert!(refused(json!({"pattern": "("})).contains("regular expression"));
        assert!(refused(json!({"$ref": "#/$defs/missing"})).contains("points at nothing"));
        assert!(refused(json!({"$defs": {"a": 3}})).contains("/$defs/a"));
        assert!(refused(json!({"type": ["string", "string"]})).contains("type"));
        // Unknown keywords are annotations.
        assert!(
            compile(
                &json!({"x-anything": {"type": 5}}),
                Dialect::Draft2020,
                Some(regex)
            )
            .is_ok()
        );
    }

    #[test]
    fn what_is_not_implemented_is_named() {
        for (schema, named) in [
            (json!({"$dynamicRef": "#meta"}), "$dynamicRef"),
            (
                json!({"$ref": "#item", "$defs": {"i": {"$anchor": "item"}}}),
                "anchor",
            ),
            (
                json!({"$ref": "https://example.com/s.json"}),
                "never fetched",
            ),
            (
                json!({"$defs": {"a": {"$id": "urn:a"}}, "$ref": "#/$defs/a"}),
                "$id",
            ),
        ] {
            match compile(&schema, Dialect::Draft2020, Some(regex)) {
                Err(Refusal::Unsupported(e)) => assert!(e.contains(named), "{e}"),
                _ => panic!("not refused as unsupported: {schema}"),
            }
        }
    }

    #[test]
    fn references_share_one_node_and_may_recurse() {
        let p = compile(
            &json!({
                "$defs": {"tree": {"type": "object", "properties": {
                    "kids": {"type": "array", "items": {"$ref": "#/$defs/tree"}}}}},
                "properties": {"a": {"$ref": "#/$defs/tree"}, "b": {"$ref": "#/$defs/tree"}},
            }),
            Dialect::Draft2020,
            Some(regex),
        )
        .ok()
        .unwrap();
        let refs: Vec<_> = p.nodes.iter().filter_map(|n| n.reference).collect();
        assert_eq!(refs.len(), 3);
        assert!(refs.iter().all(|r| *r == refs[0]));
    }

    #[test]
    fn a_schema_that_loops_without_descending_is_refused() {
        for looping in [
            json!({"$ref": "#"}),
            json!({"anyOf": [{"type": "string"}, {"$ref": "#/$defs/a"}],
                   "$defs": {"a": {"allOf": [{"$ref": "#"}]}}}),
            json!({"$defs": {"a": {"not": {"$ref": "#/$defs/a"}}},
                   "properties": {"x": {"$ref": "#/$defs/a"}}}),
        ] {
            assert!(refused(looping).contains("refers to itself"));
        }
        // Through a member or an item, a cycle ends with the value.
        for fine in [
            json!({"properties": {"next": {"$ref": "#"}}}),
            json!({"items": {"$ref": "#"}, "anyOf": [{"$ref": "#/$defs/t"}],
                   "$defs": {"t": {"type": "array"}}}),
        ] {
            assert!(
                compile(&fine, Dialect::Draft2020, Some(regex)).is_ok(),
                "{fine}"
            );
        }
    }

    #[test]
    fn pointers_are_unescaped() {
        let root = json!({"$defs": {"a/b": {"x~y": [1, {"k": true}]}}});
        assert_eq!(resolve(&root, "/$defs/a~1b/x~0y/1/k"), Some(&json!(true)));
        assert_eq!(
            mcp_uri_template::percent_decode("/%24defs/a%20b").as_deref(),
            Some("/$defs/a b")
        );
    }
}
