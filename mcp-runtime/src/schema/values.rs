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

/// A whole number's exact value: an integer, or a whole float within i128's range
/// (2^127 is itself a float, so the bound is below it).
fn integral(n: &Number) -> Option<i128> {
    exact(n).or_else(|| {
        let f = n.as_f64()?;
        (f.fract() == 0.0 && f.abs() < 1.7e38).then_some(f as i128)
    })
}

/// Numbers in order, exactly: a whole bound written as a float (`1e19`) compares with an
/// integer past 2^53 as the integer it is, not through a rounding `f64`.
pub(super) fn compare(a: &Number, b: &Number) -> Ordering {
    let float = |n: &Number| n.as_f64().unwrap_or(0.0);
    match (integral(a), integral(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        (Some(x), None) => integer_to_float(x, float(b)),
        (None, Some(y)) => integer_to_float(y, float(a)).reverse(),
        (None, None) => float(a).partial_cmp(&float(b)).unwrap_or(Ordering::Equal),
    }
}

/// `x` against `y`, a float that is not integral in i128 (a fraction, below 2^53 then;
/// or whole but past i128, where the floor saturates): never equal.
fn integer_to_float(x: i128, y: f64) -> Ordering {
    if x <= y.floor() as i128 {
        Ordering::Less
    } else {
        Ordering::Greater
    }
}

pub(super) fn multiple_of(x: &Number, m: &Number) -> bool {
    if let (Some(x), Some(m)) = (exact(x), exact(m)) {
        return m != 0 && x % m == 0;
    }
    let (x, m) = (x.as_f64().unwrap_or(0.0), m.as_f64().unwrap_or(1.0));
    // A few units in the last place of the quotient, for the rounding of decimal
    // fractions (0.3 / 0.1 = 2.9999999999999996), and no more: a tolerance that grew
    // faster would pass 12345678.123 as a multiple of 0.01.
    let q = x / m;
    q.is_finite() && (q - q.round()).abs() <= 4.0 * f64::EPSILON * q.abs().max(1.0)
}

/// JSON equality: numbers by value (`1` equals `1.0`), objects regardless of order.
pub(super) fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => number_key(x) == number_key(y),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| equal(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, a)| y.get(k).is_some_and(|b| equal(a, b)))
        }
        _ => a == b,
    }
}

/// The first pair of equal items (`i < j`, the smallest `j`, then the smallest `i`), as
/// [`equal`] has it. Linear in the items: each is hashed consistently with [`equal`] (a
/// number by its `f64` value, an object's members in any order), and only items with the
/// same hash are compared.
pub(super) fn first_repeat(items: &[Value]) -> Option<(usize, usize)> {
    let seed = std::collections::hash_map::RandomState::new();
    let mut seen: std::collections::HashMap<u64, Vec<usize>> =
        std::collections::HashMap::with_capacity(items.len());
    for (j, item) in items.iter().enumerate() {
        let bucket = seen.entry(hash(&seed, item)).or_default();
        if let Some(&i) = bucket.iter().find(|&&i| equal(&items[i], item)) {
            return Some((i, j));
        }
        bucket.push(j);
    }
    None
}

/// A number's exact value, as equality compares it: an integer (whether written `3` or
/// `3.0`, and however large) as itself, any other number by its bits (`-0` as `0`). Two
/// numbers are equal exactly when their keys are, so equality is transitive (an integer
/// past 2^53 is not equal to a float it merely rounds to) and hashing by the key agrees
/// with it.
#[derive(PartialEq, Eq, Hash)]
enum NumberKey {
    Integer(i128),
    Float(u64),
}

fn number_key(n: &Number) -> NumberKey {
    match integral(n) {
        Some(i) => NumberKey::Integer(i),
        // `+ 0.0`: -0.0 and 0.0 are one value (though both are integral anyway).
        None => NumberKey::Float((n.as_f64().unwrap_or(0.0) + 0.0).to_bits()),
    }
}

/// A hash of `v` that two [`equal`] values share.
fn hash(seed: &impl std::hash::BuildHasher, v: &Value) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = seed.build_hasher();
    match v {
        Value::Null => 0u8.hash(&mut h),
        Value::Bool(b) => (1u8, b).hash(&mut h),
        Value::Number(n) => (2u8, number_key(n)).hash(&mut h),
        Value::String(s) => (3u8, s).hash(&mut h),
        Value::Array(a) => {
            (4u8, a.len()).hash(&mut h);
            for item in a {
                hash(seed, item).hash(&mut h);
            }
        }
        Value::Object(o) => {
            // Members in any order: their hashes summed.
            let members = o.iter().fold(0u64, |sum, (k, v)| {
                sum.wrapping_add(seed.hash_one((k, hash(seed, v))))
            });
            (5u8, o.len(), members).hash(&mut h);
        }
    }
    h.finish()
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn repeat(v: Value) -> Option<(usize, usize)> {
        first_repeat(v.as_array().unwrap())
    }

    #[test]
    fn repeats_are_found_as_json_schema_compares() {
        assert_eq!(repeat(json!([1, 2, 3])), None);
        assert_eq!(repeat(json!([1, 2, 1.0])), Some((0, 2)));
        assert_eq!(repeat(json!([0.0, -0.0])), Some((0, 1)));
        assert_eq!(
            repeat(json!([{"a": 1, "b": [2]}, {"b": [2.0], "a": 1}])),
            Some((0, 1))
        );
        assert_eq!(repeat(json!([[1, 2], [2, 1]])), None);
        assert_eq!(repeat(json!(["1", 1, true, null, {}, []])), None);
        assert_eq!(repeat(json!([5, 3, 3, 5])), Some((1, 2)));
        assert_eq!(
            repeat(json!([{"a": 1}, {"a": 1, "b": 1}, {"a": 1}])),
            Some((0, 2))
        );
    }

    #[test]
    fn numbers_are_equal_exactly() {
        let big = 1u64 << 63;
        assert_eq!(repeat(json!([big, big + 1])), None, "distinct integers");
        assert_eq!(repeat(json!([big, 2f64.powi(63)])), Some((0, 1)));
        assert_eq!(repeat(json!([big + 1, 2f64.powi(63)])), None);
        assert_eq!(repeat(json!([1e300, 1e300])), Some((0, 1)));
        assert_eq!(repeat(json!([0.5, 0.25])), None);
        assert!(equal(&json!(-0.0), &json!(0)));
    }

    #[test]
    fn items_that_would_share_a_rounded_float_are_still_linear() {
        // Integers past 2^53 that round to one f64, and arrays of them: each is its own.
        let base = 1u64 << 63;
        let items: Vec<Value> = (0..300u64)
            .flat_map(|x| (0..300u64).map(move |y| json!([base + x, base + y])))
            .collect();
        assert_eq!(first_repeat(&items), None);
    }

    #[test]
    fn many_distinct_items_are_checked_in_linear_time() {
        // 200k distinct numbers: a pairwise check would make 2·10^10 comparisons.
        let items: Vec<Value> = (0..200_000).map(Value::from).collect();
        assert_eq!(first_repeat(&items), None);
        let mut items = items;
        items.push(Value::from(199_999.0));
        assert_eq!(first_repeat(&items), Some((199_999, 200_000)));
    }
}
