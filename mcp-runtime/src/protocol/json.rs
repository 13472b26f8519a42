//! Strict JSON parsing for messages from the peer.
//!
//! One value per message, strict UTF-8, depth at most 128 (serde_json's limit), and no
//! duplicate member names anywhere: `serde_json::Value` would silently keep the last one,
//! while an intermediary may have read the first, so duplicates are refused outright.

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::map::Entry;
use serde_json::{Map, Number, Value};
use std::fmt;

/// How the refusal of a member name given twice begins.
const DUPLICATE: &str = "duplicate member name";

/// Why a message could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError(String);

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ParseError {}

impl ParseError {
    /// Whether the message was refused for a number no `f64` holds (`1e400`): JSON's
    /// grammar allows it, so the message is otherwise readable.
    pub(crate) fn is_number_out_of_range(&self) -> bool {
        self.0.starts_with("number out of range")
    }
    /// Whether the message was refused for a member name given twice: it is JSON, only
    /// not one this server takes, so its id may still be read.
    pub(crate) fn is_duplicate_member(&self) -> bool {
        self.0.starts_with(DUPLICATE)
    }
}

/// Parses one JSON message, refusing duplicate member names and trailing data.
pub fn parse_strict(bytes: &[u8]) -> Result<Value, ParseError> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let v = Strict::deserialize(&mut de).map_err(|e| ParseError(e.to_string()))?;
    de.end().map_err(|e| ParseError(e.to_string()))?;
    Ok(v.0)
}

/// The size of `value` as JSON, counted without writing it anywhere.
pub(crate) fn json_len(value: &impl serde::Serialize) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Count(0);
    let _ = serde_json::to_writer(&mut c, value);
    c.0
}

/// The `id` of a request that is JSON but not one [`parse_strict`] takes whole (a number
/// out of range elsewhere in it): read with every other member skipped, which checks
/// their syntax and not their numbers' range. `None` when even that fails, and for a
/// response (its id is one of the peer's own requests, which an error must not name).
pub(crate) fn readable_id(bytes: &[u8]) -> Option<super::RequestId> {
    use serde::de::IgnoredAny;
    #[derive(serde::Deserialize)]
    struct Envelope {
        id: Option<Value>,
        method: Option<String>,
        result: Option<IgnoredAny>,
        error: Option<IgnoredAny>,
    }
    let e: Envelope = serde_json::from_slice(bytes).ok()?;
    if e.method.is_none() || e.result.is_some() || e.error.is_some() {
        return None;
    }
    super::RequestId::from_value(&e.id?)
}

struct Strict(Value);

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrictVisitor).map(Strict)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        Strict::deserialize(d).map(|s| s.0)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        while let Some(Strict(v)) = seq.next_element()? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            // One search of the map per member: the slot found is the one filled.
            match out.entry(key) {
                Entry::Occupied(taken) => {
                    return Err(de::Error::custom(format_args!(
                        "{DUPLICATE} {}",
                        super::error::reflect(taken.key())
                    )));
                }
                Entry::Vacant(slot) => {
                    let Strict(v) = map.next_value()?;
                    slot.insert(v);
                }
            }
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_number_out_of_range_leaves_the_id_readable() {
        let msg = br#"{"jsonrpc":"2.0","id":7,"method":"m","params":{"n":1e400,"s":"x"}}"#;
        let e = parse_strict(msg).unwrap_err();
        assert!(e.is_number_out_of_range(), "{e}");
        assert_eq!(
            readable_id(msg),
            Some(crate::protocol::RequestId::Number(7.into()))
        );
        // The id itself out of range, or JSON broken elsewhere: no id.
        assert_eq!(readable_id(br#"{"id":1e400,"method":"m"}"#), None);
        let broken = br#"{"id":7,"n":1e400,"#;
        assert_eq!(readable_id(broken), None);
        // A response's id is the peer's own request's.
        assert_eq!(
            readable_id(br#"{"jsonrpc":"2.0","id":6,"result":{"n":1e400}}"#),
            None
        );
        assert!(!parse_strict(b"{bad").unwrap_err().is_number_out_of_range());
    }
    use serde_json::json;

    #[test]
    fn accepts_ordinary_messages() {
        let v = parse_strict(br#"{"a":[1,-2,3.5,"x",null,true,{"b":{}}]}"#).unwrap();
        assert_eq!(v, json!({"a":[1,-2,3.5,"x",null,true,{"b":{}}]}));
    }

    #[test]
    fn rejects_duplicates_at_any_depth() {
        assert!(parse_strict(br#"{"a":1,"a":2}"#).is_err());
        let e = parse_strict(br#"{"p":{"args":{"x":1,"x":1}}}"#).unwrap_err();
        assert!(e.to_string().contains("duplicate member name"), "{e}");
    }

    #[test]
    fn rejects_trailing_data_bad_utf8_and_deep_nesting() {
        assert!(parse_strict(br#"{} {}"#).is_err());
        assert!(parse_strict(b"{\"a\":\"\xff\"}").is_err());
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert!(parse_strict(deep.as_bytes()).is_err());
        let ok = format!("{}{}", "[".repeat(100), "]".repeat(100));
        assert!(parse_strict(ok.as_bytes()).is_ok());
    }
}
