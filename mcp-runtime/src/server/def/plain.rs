//! A deserializer for one string value (a URI template variable, a prompt argument):
//! `u64` parses the text as a number, `bool` as `true`/`false`, an enum by variant name,
//! `String` takes it as is, a sequence (`Vec<T>`) splits it at `,` (what an exploded
//! `{ids*}` binds).

use serde::de::{self, Deserializer, IntoDeserializer, Visitor};

/// Deserializes `T` from the text of one value.
pub(crate) fn from_str<T: de::DeserializeOwned>(s: &str) -> Result<T, String> {
    T::deserialize(Plain(s)).map_err(|e: de::value::Error| e.to_string())
}

struct Plain<'a>(&'a str);

impl<'de, 'a> IntoDeserializer<'de, de::value::Error> for Plain<'a> {
    type Deserializer = Self;
    fn into_deserializer(self) -> Self {
        self
    }
}

macro_rules! parse_number {
    ($($method:ident => $visit:ident: $ty:ty),* $(,)?) => {$(
        fn $method<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Self::Error> {
            match self.0.parse::<$ty>() {
                Ok(n) => v.$visit(n),
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
        deserialize_f32 => visit_f32: f32,
        deserialize_f64 => visit_f64: f64,
        deserialize_bool => visit_bool: bool,
        deserialize_char => visit_char: char,
    }

    fn deserialize_option<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Self::Error> {
        v.visit_some(self)
    }
    fn deserialize_seq<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Self::Error> {
        let items = self.0.split(',').filter(|s| !s.is_empty()).map(Plain);
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

    serde::forward_to_deserialize_any! {
        str string bytes byte_buf unit unit_struct tuple tuple_struct map struct
        identifier ignored_any
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
        assert!(from_str::<Vec<u64>>("1,x").is_err());
    }
}
