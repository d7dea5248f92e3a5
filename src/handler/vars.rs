//! Reading text values (resource template variables, prompt arguments) into a typed struct:
//! each value is text, parsed as the field's type asks (numbers, booleans, unit enums,
//! `Option`s, strings).

use std::collections::BTreeMap;

use serde::de::value::{Error, MapDeserializer, StringDeserializer};
use serde::de::{DeserializeOwned, Deserializer, IntoDeserializer, Visitor};

/// Reads `values` as `T`.
pub(crate) fn typed_vars<T: DeserializeOwned>(
    values: &BTreeMap<String, String>,
) -> Result<T, Error> {
    let entries = values.iter().map(|(k, v)| (k.clone(), Text(v.clone())));
    T::deserialize(MapDeserializer::new(entries))
}

/// One text value, parsed as the type that reads it asks.
struct Text(String);

impl<'de> IntoDeserializer<'de, Error> for Text {
    type Deserializer = Self;
    fn into_deserializer(self) -> Self {
        self
    }
}

impl Text {
    fn parse<T: std::str::FromStr>(&self, what: &str) -> Result<T, Error> {
        self.0
            .parse()
            .map_err(|_| serde::de::Error::custom(format!("{:?} is not {what}", self.0)))
    }

    fn string(self) -> StringDeserializer<Error> {
        self.0.into_deserializer()
    }
}

macro_rules! parsed {
    ($($method:ident => $visit:ident : $ty:ty, $what:literal;)*) => {
        $(
            fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
                visitor.$visit(self.parse::<$ty>($what)?)
            }
        )*
    };
}

impl<'de> Deserializer<'de> for Text {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_string(self.0)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.string().deserialize_enum(name, variants, visitor)
    }

    parsed! {
        deserialize_bool => visit_bool: bool, "true or false";
        deserialize_i8 => visit_i8: i8, "an integer";
        deserialize_i16 => visit_i16: i16, "an integer";
        deserialize_i32 => visit_i32: i32, "an integer";
        deserialize_i64 => visit_i64: i64, "an integer";
        deserialize_u8 => visit_u8: u8, "a non-negative integer";
        deserialize_u16 => visit_u16: u16, "a non-negative integer";
        deserialize_u32 => visit_u32: u32, "a non-negative integer";
        deserialize_u64 => visit_u64: u64, "a non-negative integer";
        deserialize_f32 => visit_f32: f32, "a number";
        deserialize_f64 => visit_f64: f64, "a number";
        deserialize_char => visit_char: char, "one character";
    }

    serde::forward_to_deserialize_any! {
        i128 u128 str string bytes byte_buf unit unit_struct seq tuple tuple_struct map
        struct identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "lowercase")]
    enum Size {
        Small,
        Large,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Vars {
        name: String,
        page: u32,
        draft: bool,
        size: Size,
        note: Option<String>,
    }

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn text_values_read_as_the_fields_types() {
        let v: Vars = typed_vars(&map(&[
            ("name", "42"),
            ("page", "7"),
            ("draft", "true"),
            ("size", "large"),
        ]))
        .unwrap();
        assert_eq!(
            v,
            Vars {
                name: "42".into(),
                page: 7,
                draft: true,
                size: Size::Large,
                note: None
            }
        );
        let all: BTreeMap<String, String> = typed_vars(&map(&[("a", "1")])).unwrap();
        assert_eq!(all["a"], "1");
    }

    #[test]
    fn values_that_do_not_parse_are_errors() {
        let bad = map(&[
            ("name", "x"),
            ("page", "seven"),
            ("draft", "false"),
            ("size", "small"),
        ]);
        let e = typed_vars::<Vars>(&bad).unwrap_err().to_string();
        assert!(e.contains("seven"), "{e}");
        let missing = map(&[("name", "x")]);
        assert!(typed_vars::<Vars>(&missing).is_err());
        let _ = Size::Small;
    }
}
