//! Deserializers that accept only JSON objects.
//!
//! A derived `Deserialize` for a struct also accepts a JSON array and fills the fields by
//! position. Request params come from untrusted clients and the schema requires objects, so
//! fields whose type is a struct use these helpers (`deserialize_with`) to reject arrays.

use std::fmt;
use std::marker::PhantomData;

use serde::de::value::MapAccessDeserializer;
use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};

struct ObjectVisitor<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjectVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        T::deserialize(MapAccessDeserializer::new(map))
    }
}

/// Deserializes `T` from a JSON object only.
pub(crate) fn object<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<T, D::Error> {
    d.deserialize_map(ObjectVisitor(PhantomData))
}

struct OptionVisitor<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for OptionVisitor<T> {
    type Value = Option<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object or null")
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<Option<T>, E> {
        Ok(None)
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Option<T>, E> {
        Ok(None)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Option<T>, D::Error> {
        object(d).map(Some)
    }
}

/// Deserializes `Option<T>` from a JSON object or `null` only (use with `default`).
pub(crate) fn option_object<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<T>, D::Error> {
    d.deserialize_option(OptionVisitor(PhantomData))
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Inner {
        a: Option<u8>,
    }

    #[derive(Debug, Deserialize)]
    struct Outer {
        #[serde(default, deserialize_with = "super::option_object")]
        inner: Option<Inner>,
        #[serde(deserialize_with = "super::object")]
        req: Inner,
    }

    #[test]
    fn arrays_are_refused() {
        let ok: Outer = serde_json::from_str(r#"{"inner":{"a":1},"req":{}}"#).unwrap();
        assert_eq!(ok.inner, Some(Inner { a: Some(1) }));
        assert_eq!(ok.req, Inner { a: None });
        let none: Outer = serde_json::from_str(r#"{"inner":null,"req":{}}"#).unwrap();
        assert_eq!(none.inner, None);
        let absent: Outer = serde_json::from_str(r#"{"req":{}}"#).unwrap();
        assert_eq!(absent.inner, None);
        assert!(serde_json::from_str::<Outer>(r#"{"inner":[1],"req":{}}"#).is_err());
        assert!(serde_json::from_str::<Outer>(r#"{"req":[1]}"#).is_err());
        // Without the helper, serde would have accepted the array.
        assert!(serde_json::from_str::<Inner>("[1]").is_ok());
    }
}
