//! What the validator's walks ask of JSON values: their type, numbers compared exactly
//! where they are integers, equality as JSON Schema has it, and values shown in messages.

use super::compile::ty;
use serde_json::{Number, Value};
use std::cmp::Ordering;

pub(super) fn type_matches(t: u8, v: &Value) -> bool {
    let bit = match v {
        Value::Null => ty::NULL,
        Value::Bool(_) => ty::BOOLEAN,
        Value::Object(_) => ty::OBJECT,
        Value::Array(_) => ty::ARRAY,
        Value::String(_) => ty::STRING,
        Value::Number(n) if is_integer(n) => ty::NUMBER | ty::INTEGER,
        Value::Number(_) => ty::NUMBER,
    };
    t & bit != 0
}

fn is_integer(n: &Number) -> bool {
    n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
}

pub(super) fn type_names(t: u8) -> String {
    let names = [
        (ty::NULL, "null"),
        (ty::BOOLEAN, "a boolean"),
        (ty::OBJECT, "an object"),
        (ty::ARRAY, "an array"),
        (ty::NUMBER, "a number"),
        (ty::STRING, "a string"),
        (ty::INTEGER, "an integer"),
    ];
    let listed: Vec<&str> = names
        .iter()
        .filter(|(b, _)| t & b != 0)
        .map(|(_, n)| *n)
        .collect();
    listed.join(" or ")
}

/// An integer's exact value, when it is one.
fn exact(n: &Number) -> Option<i128> {
    n.as_i64()
        .map(i128::from)
        .or_else(|| n.as_u64().map(i128::from))
}

pub(super) fn compare(a: &Number, b: &Number) -> Ordering {
    if let (Some(x), Some(y)) = (exact(a), exact(b)) {
        return x.cmp(&y);
    }
    let (x, y) = (a.as_f64().unwrap_or(0.0), b.as_f64().unwrap_or(0.0));
    x.partial_cmp(&y).unwrap_or(Ordering::Equal)
}

pub(super) fn multiple_of(x: &Number, m: &Number) -> bool {
    if let (Some(x), Some(m)) = (exact(x), exact(m)) {
        return m != 0 && x % m == 0;
    }
    let (x, m) = (x.as_f64().unwrap_or(0.0), m.as_f64().unwrap_or(1.0));
    let q = x / m;
    q.is_finite() && (q - q.round()).abs() <= 1e-9 * q.abs().max(1.0)
}

/// JSON equality: numbers by value (`1` equals `1.0`), objects regardless of order.
pub(super) fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => compare(x, y).is_eq(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| equal(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, a)| y.get(k).is_some_and(|b| equal(a, b)))
        }
        _ => a == b,
    }
}

/// Characters of a value shown in a message at most.
const SHOWN: usize = 60;

pub(super) fn show(v: &Value) -> String {
    clip(v.to_string())
}

pub(super) fn show_str(s: &str) -> String {
    clip(Value::from(s).to_string())
}

pub(super) fn show_list(values: &[Value]) -> String {
    clip(Value::from(values.to_vec()).to_string())
}

fn clip(mut s: String) -> String {
    if let Some((i, _)) = s.char_indices().nth(SHOWN) {
        s.truncate(i);
        s.push('…');
    }
    s
}
