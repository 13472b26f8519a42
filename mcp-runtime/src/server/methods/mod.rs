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

use super::parts::Parts;
use super::reply::{Rejection, Reply};
use super::route::Prepared;
use serde_json::Value;
use std::collections::BTreeMap;

/// The request answered with an error before anything ran.
pub(crate) fn reject(parts: &Parts, rejection: Rejection) -> Prepared {
    Prepared::Reply(Reply::rejection(Some(&parts.id), rejection))
}

/// A `params` member that must be a map of strings (prompt arguments, completion context).
pub(crate) fn string_map(v: Option<Value>) -> Result<BTreeMap<String, String>, &'static str> {
    match v {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(Value::Object(m)) => m
            .into_iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k, s)),
                _ => Err("must map names to strings"),
            })
            .collect(),
        Some(_) => Err("must be an object"),
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
