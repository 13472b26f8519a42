//! The method families, one module each: what a method's params mean, which item serves
//! it, and how its result is serialized. Item methods (`tools/call`, `prompts/get`,
//! `resources/read`) hand the call to the one pipeline (`super::pipeline`).

pub(crate) mod completion;
pub(crate) mod listen;
pub(crate) mod lists;
pub(crate) mod prompts;
pub(crate) mod resources;
pub(crate) mod tasks;
pub(crate) mod tools;

use super::Server;
use super::catalog::{Catalog, PromptEntry, ResourceEntry};
use super::context::Extensions;
use super::def::{PromptDef, ResourceDef};
use super::parts::{Parts, TransportGuard};
use super::reply::{Rejection, Reply};
use super::route::Prepared;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::sync::Arc;

/// What serves one kind of item beside tools: prompts, or resources and templates. Every
/// definition of the kind carries a reference to its kind's one engine (its constructor
/// sets it), and the builder and the router reach the kind's code only through it. Nothing
/// else names that code, so a server without prompts (or without resources) does not link
/// what serves them, as one without task tools does not link the task engine.
pub(crate) struct Engine<D, E, M = ()> {
    /// Checks a definition and makes its catalog entry.
    pub(crate) compile: fn(D, &Extensions) -> Result<E, Vec<String>>,
    /// The kind's methods, by `parts.method`: `prompts/get`; `resources/list` and
    /// `resources/read`.
    pub(crate) serve: Serve,
    /// `completion/complete` (prompts and templates both have completers).
    pub(crate) complete: Complete,
    /// What else only the kind's entries need.
    pub(crate) more: M,
}

/// The shape of an item method.
pub(crate) type Serve =
    fn(&Server, Parts, Map<String, Value>, &dyn TransportGuard, &Catalog) -> Prepared;

/// `completion/complete`'s shape.
pub(crate) type Complete = fn(&Server, Parts, Map<String, Value>, &Catalog) -> Prepared;

/// What serves prompts ([`prompts::ENGINE`]).
pub(crate) type PromptEngine = Engine<PromptDef, PromptEntry>;

/// What serves resources and templates ([`resources::ENGINE`]).
pub(crate) type ResourceEngine = Engine<ResourceDef, ResourceEntry, Templates>;

/// What only URI templates need, so the template matcher is linked with resources only.
pub(crate) struct Templates {
    /// The first template (in the order given) that matches a URI, with the variables
    /// it bound.
    pub(crate) find: fn(&[Arc<ResourceEntry>], &str) -> Option<Found>,
    /// Whether two templates can match the same URI (or have the same text).
    pub(crate) clash: fn(&ResourceEntry, &ResourceEntry) -> bool,
}

/// A template's variables, as a URI bound them.
pub(crate) type Captures = BTreeMap<String, mcp_uri_template::Capture>;

/// The resource serving a URI, and the variables its template bound.
pub(crate) type Found = (Arc<ResourceEntry>, Captures);

/// The request answered with an error before anything ran.
pub(crate) fn reject(parts: &Parts, rejection: Rejection) -> Prepared {
    Prepared::Reply(Reply::rejection(Some(&parts.id), rejection))
}

/// The client capabilities an item's declared inputs need (`#[input]` parameters), which
/// the client must have before its arguments are looked at (security.md R-1:
/// capabilities, then arguments): the `-32021` answer when it lacks one.
pub(crate) fn lacks_input_capabilities(
    parts: &Parts,
    requirements: &super::def::Requirements,
) -> Option<Prepared> {
    let e = parts
        .meta
        .capabilities
        .missing(&requirements.input_capabilities)?;
    Some(reject(parts, Rejection::failed(e)))
}

/// A `params` member that must be a map of strings (prompt arguments, completion context);
/// the error names the first entry that is not a string, and what it is.
pub(crate) fn string_map(v: Option<Value>) -> Result<BTreeMap<String, String>, String> {
    match v {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(Value::Object(m)) => m
            .into_iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k, s)),
                other => Err(format!(
                    "must map names to strings: `{}` is {}",
                    crate::protocol::reflect(&k),
                    kind_of(&other)
                )),
            })
            .collect(),
        Some(other) => Err(format!("must be an object, not {}", kind_of(&other))),
    }
}

/// What a JSON value is, with its article, for an error message.
fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The `cursor` param of a list method.
pub(crate) fn cursor(
    params: &serde_json::Map<String, Value>,
) -> Result<Option<&str>, &'static str> {
    match params.get("cursor") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(c)) => Ok(Some(c.as_str())),
        Some(_) => Err("`cursor` must be a string"),
    }
}

#[cfg(test)]
mod tests {
    use super::string_map;
    use serde_json::json;

    #[test]
    fn a_string_map_names_what_is_not_a_string() {
        assert_eq!(
            string_map(Some(json!({"city": "Oslo", "days": 3}))).unwrap_err(),
            "must map names to strings: `days` is a number"
        );
        assert_eq!(
            string_map(Some(json!(["a"]))).unwrap_err(),
            "must be an object, not an array"
        );
        let ok = string_map(Some(json!({"city": "Oslo"}))).unwrap();
        assert_eq!(ok["city"], "Oslo");
        assert!(string_map(None).unwrap().is_empty());
    }
}
