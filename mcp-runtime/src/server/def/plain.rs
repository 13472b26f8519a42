//! A deserializer for one string value (a URI template variable, a prompt argument):
//! `u64` parses the text as a number, `bool` as `true`/`false`, an enum by variant name,
//! `String` takes it as is, a sequence (`Vec<T>`) takes its items (a prompt argument's
//! split at `,`; a template variable's as the URI template matched them, split before
//! percent-decoding: `/a/b` for `{/segs*}`, `a%2Cb,c` for `{ids}`), empty ones left out,
//! a struct or map reads the text as JSON (`{"depth":2}`, parsed as strictly as a message
//! is). And one for a template variable the URI left undefined.

use serde::de::{self, Deserializer, IntoDeserializer, Visitor};

/// Deserializes `T` from the text of one value (a list splits at `,`).
pub(crate) fn from_str<T: de::DeserializeOwned>(s: &str) -> Result<T, String> {
    T::deserialize(Plain(s, None)).map_err(|e: de::value::Error| e.to_string())
}

/// Deserializes `T` from one value whose list items are known: a sequence takes `items`,
/// any other type the whole `value`.
pub(crate) fn from_items<T: de::DeserializeOwned>(
    value: &str,
    items: &[String],
) -> Result<T, String> {
    T::deserialize(Plain(value, Some(items))).map_err(|e: de::value::Error| e.to_string())
}

/// `T` for a template variable the URI left undefined: `None`, an empty list, or (for
/// any other type) an error.
pub(crate) fn undefined<T: de::DeserializeOwned>() -> Result<T, String> {
    T::deserialize(Undefined).map_err(|e: de::value::Error| e.to_string())
}

/// `T`'s name without module paths, for messages: `Vec<u64>`, `Option<String>`.
pub(crate) fn type_label<T>() -> String {
    let full = std::any::type_name::<T>();
    let mut out = String::with_capacity(full.len());
    let mut segment = String::new();
    let mut chars = full.chars().peekable();
    while let Some(c) = chars.next() {
        if c == ':' && chars.peek() == Some(&':') {
            chars.next();
            segment.clear(); // a module path: drop it
        } else if c.is_alphanumeric() || c == '_' {
            segment.push(c);
        } else {
            out.push_str(&segment);
            segment.clear();
            out.push(c);
        }
    }
    out + &segment
}

/// One value's text, and its list items when they are known (else it splits at `,`).
struct Plain<'a>(&'a str, Option<&'a [String]>);

impl<'de, 'a> IntoDeserializer<'de, de::value::Error> for Plain<'a> {
    type Deserializer = Self;
    fn into_deserializer(self) -> Self {
        self
    }
}

/// A number in its own syntax (Rust's, which JSON's numbers are within); a float (marked
/// `| is_finite`) that is not finite (`NaN`, `inf`, or beyond the type's range: `1e39`
/// for an `f32`) is no number JSON could carry, so it is refused as the others are.
macro_rules! parse_number {
    ($($method:ident => $visit:ident: $ty:ty $(| $finite:ident)?),* $(,)?) => {$(
        fn $method<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Self::Error> {
            match self.0.parse::<$ty>() {
                Ok(n) if true $(&& n.$finite())? => v.$visit(n),
                Ok(_) => Err(de::Error::custom(format_args!(
                    "expected a finite {}, got {:?}", stringify!($ty), self.0
                ))),
                Err(_) => Err(de::Error::custom(format_args!(
                    "expected {}, got {:?}", stringify!($ty), self.0
                ))),
            }
        }
    )*};
}

impl<'de> Deserializer<'de> for Plain<'_> {
    type Error = de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Self::Error> {
        v.visit_str(self.0)
    }

    parse_number! {
        deserialize_i8 => visit_i8: i8,
        deserialize_i16 => visit_i16: i16,
        deserialize_i32 => visit_i32: i32,
        deserialize_i64 => visit_i64: i64,
        deserialize_i128 => visit_i128: i128,
        deserialize_u8 => visit_u8: u8,
        deserialize_u16 => visit_u16: u16,
        deserialize_u32 => visit_u32: u32,
        deserialize_u64 => visit_u64: u64,
        deserialize_u128 => visit_u128: u128,
        deserialize_f32 => visit_f32: f32 | is_finite,
        deserialize_f64 => visit_f64: f64 | is_finite,
        deserialize_bool => visit_bool: bool,
        deserialize_char => visit_char: char,
    }

    fn deserialize_option<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Self::Error> {
        v.visit_some(self)
    }
    fn deserialize_seq<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Self::Error> {
        let items: Box<dyn Iterator<Item = &str>> = match self.1 {
            Some(items) => Box::new(items.iter().map(String::as_str)),
            None => Box::new(self.0.split(',')),
        };
        let items = items
            .filter(|s| !s.is_empty())
            .map(|item| Plain(item, None));
        v.visit_seq(de::value::SeqDeserializer::new(items))
    }
    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        v: V,
    ) -> Result<V::Value, Self::Error> {
        v.visit_newtype_struct(self)
    }
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, Self::Error> {
        v.visit_enum(self.0.into_deserializer())
    }
    fn deserialize_map<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Self::Error> {
        json_object(self.0)?
            .deserialize_map(v)
            .map_err(de::Error::custom)
    }
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, Self::Error> {
        json_object(self.0)?
            .deserialize_struct(name, fields, v)
            .map_err(de::Error::custom)
    }

    serde::forward_to_deserialize_any! {
        str string bytes byte_buf unit unit_struct tuple tuple_struct identifier ignored_any
    }
}

/// The JSON object one value's text holds (a struct's or map's only written form here).
fn json_object(text: &str) -> Result<serde_json::Value, de::value::Error> {
    match crate::protocol::json::parse_strict(text.as_bytes()) {
        Ok(v) if v.is_object() => Ok(v),
        Ok(_) => Err(de::Error::custom(format_args!(
            "expected a JSON object, got {text:?}"
        ))),
        Err(e) => Err(de::Error::custom(format_args!(
            "expected a JSON object ({e}), got {text:?}"
        ))),
    }
}

/// An undefined template variable: only `Option`-like types (`None`) and sequences (no
/// items) accept it.
struct Undefined;

impl<'de> Deserializer<'de> for Undefined {
    type Error = de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom("missing"))
    }
    fn deserialize_option<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Self::Error> {
        v.visit_none()
    }
    fn deserialize_seq<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Self::Error> {
        v.visit_seq(de::value::SeqDeserializer::new(std::iter::empty::<Plain>()))
    }
    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        v: V,
    ) -> Result<V::Value, Self::Error> {
        v.visit_newtype_struct(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct tuple tuple_struct map struct enum identifier
        ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, Debug, PartialEq)]
    #[serde(rename_all = "lowercase")]
    enum Unit {
        Metric,
        Imperial,
    }

    #[test]
    fn plain_values() {
        assert_eq!(from_str::<u64>("42").unwrap(), 42);
        assert!(from_str::<u64>("-1").is_err());
        assert_eq!(from_str::<String>("a b").unwrap(), "a b");
        assert_eq!(from_str::<Option<i32>>("-7").unwrap(), Some(-7));
        assert!(from_str::<bool>("true").unwrap());
        assert_eq!(from_str::<Unit>("metric").unwrap(), Unit::Metric);
        assert!(from_str::<Unit>("kelvin").is_err());
        assert_eq!(from_str::<Unit>("imperial").unwrap(), Unit::Imperial);
        assert_eq!(from_str::<Vec<u64>>("1,2,3").unwrap(), [1, 2, 3]);
        assert_eq!(from_str::<f32>("2.5").unwrap(), 2.5);
        for not_finite in ["1e39", "-1e39", "inf", "NaN"] {
            assert!(from_str::<f32>(not_finite).is_err(), "{not_finite}");
        }
        assert_eq!(from_str::<f64>("1e39").unwrap(), 1e39);
        assert!(from_str::<f64>("1e309").is_err());
        assert!(from_str::<f64>("-inf").is_err());
        assert!(from_str::<Vec<u64>>("1,x").is_err());
        let items = ["a,b".to_owned(), String::new(), "c".to_owned()];
        assert_eq!(
            from_items::<Vec<String>>("a,b/c", &items).unwrap(),
            ["a,b", "c"]
        );
        assert_eq!(from_items::<String>("a,b/c", &items).unwrap(), "a,b/c");
        assert_eq!(
            from_items::<Option<Vec<String>>>("a,b/c", &items).unwrap(),
            Some(vec!["a,b".to_owned(), "c".to_owned()])
        );
        let e = from_str::<Option<u32>>("notnum").unwrap_err();
        assert!(e.contains("u32") && e.contains("notnum"), "{e}");
    }

    #[test]
    fn a_struct_or_map_is_read_from_json_text() {
        #[derive(serde::Deserialize, Debug, PartialEq)]
        struct Opts {
            depth: u32,
            unit: Option<Unit>,
        }
        let opts = from_str::<Option<Opts>>(r#"{"depth":2,"unit":"metric"}"#).unwrap();
        assert_eq!(
            opts,
            Some(Opts {
                depth: 2,
                unit: Some(Unit::Metric)
            })
        );
        let map = from_str::<std::collections::BTreeMap<String, u8>>(r#"{"a":1}"#).unwrap();
        assert_eq!(map["a"], 1);
        for (text, says) in [
            ("depth=2", "expected a JSON object"),
            ("[1]", "expected a JSON object"),
            (r#"{"depth":"2"}"#, "invalid type"),
            (r#"{"depth":1,"depth":2}"#, "duplicate"),
            (r#"{"depth":2} x"#, "expected a JSON object"),
        ] {
            let e = from_str::<Opts>(text).unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
        }
    }

    #[test]
    fn undefined_values() {
        assert_eq!(undefined::<Option<u32>>().unwrap(), None);
        assert_eq!(undefined::<Vec<u64>>().unwrap(), Vec::<u64>::new());
        assert_eq!(undefined::<Option<Vec<u64>>>().unwrap(), None);
        assert!(undefined::<u32>().is_err());
        assert!(undefined::<String>().is_err());
        assert!(undefined::<crate::SafePath>().is_err());
    }

    #[test]
    fn type_labels() {
        assert_eq!(type_label::<u32>(), "u32");
        assert_eq!(type_label::<Vec<u64>>(), "Vec<u64>");
        assert_eq!(type_label::<Option<String>>(), "Option<String>");
        assert_eq!(type_label::<crate::SafePath>(), "SafePath");
        assert_eq!(
            type_label::<std::collections::BTreeMap<String, u8>>(),
            "BTreeMap<String, u8>"
        );
    }
}
