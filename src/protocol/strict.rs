//! Deserializers for request input: JSON objects only, and strings borrowed from the body.
//!
//! A derived `Deserialize` for a struct also accepts a JSON array and fills the fields by
//! position. Request params come from untrusted clients and the schema requires objects, so
//! fields whose type is a struct use these helpers (`deserialize_with`) to reject arrays.
//!
//! serde's `Cow<str>` always deserializes into an owned `String`; [`Str`] and [`json_str`]
//! borrow from the input instead, and copy only a string with escapes.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::value::MapAccessDeserializer;
use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

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

/// A JSON string, borrowed from the input unless it has escapes.
pub(crate) struct Str<'de>(pub(crate) Cow<'de, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Str<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Str<'a>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }

            fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<Str<'a>, E> {
                Ok(Str(Cow::Borrowed(v)))
            }

            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Str<'a>, E> {
                Ok(Str(Cow::Owned(v.to_owned())))
            }

            fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Str<'a>, E> {
                Ok(Str(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V(PhantomData))
    }
}

/// The string a raw JSON value holds (`None` when it is not a string), borrowed from it
/// unless it has escapes.
pub(crate) fn json_str(raw: &RawValue) -> Option<Cow<'_, str>> {
    let text = raw.get();
    // A raw value is valid JSON with no whitespace around it, so a string without a
    // backslash is the text between its quotes (its characters were checked when it was
    // read); only one with escapes needs the parser.
    if let Some(inner) = text.strip_prefix('"').and_then(|t| t.strip_suffix('"'))
        // (The slice search: for these short strings it beats `memchr`'s vector setup.)
        && !inner.as_bytes().contains(&b'\\')
    {
        return Some(Cow::Borrowed(inner));
    }
    serde_json::from_str::<Str<'_>>(text).ok().map(|s| s.0)
}

/// Where `text` starts in `body`, when it is a part of it (a string borrowed from the body).
pub(crate) fn offset_in(body: &[u8], text: &str) -> Option<usize> {
    let at = text.as_ptr().addr().checked_sub(body.as_ptr().addr())?;
    (at.checked_add(text.len())? <= body.len()).then_some(at)
}

#[cfg(test)]
mod tests {
    use super::{Cow, json_str};
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

    #[test]
    fn strings_are_borrowed_unless_escaped() {
        use serde_json::value::RawValue;
        let raw = |s: &str| RawValue::from_string(s.to_owned()).unwrap();
        let plain = raw(r#""tools/call""#);
        assert!(matches!(
            json_str(&plain),
            Some(Cow::Borrowed("tools/call"))
        ));
        let escaped = raw(r#""a\u0062c""#);
        assert!(matches!(json_str(&escaped), Some(Cow::Owned(s)) if s == "abc"));
        assert!(json_str(&raw("5")).is_none());
        assert!(json_str(&raw("null")).is_none());
        assert!(json_str(&raw(r#"{"a":"b"}"#)).is_none());
        assert!(json_str(&raw(r#"["a"]"#)).is_none());
        // The quick path (no backslash) and the parser agree, borrowed or not.
        for text in [
            r#""""#,
            r#""héllo wörld ✓""#,
            r#""a\"b""#,
            r#""tab\there""#,
            r#""\\""#,
            r#""end\\""#,
            r#""\ud83d\ude00""#,
            r#""a longer string: a method name of more than sixteen bytes, no escape in it at all""#,
            r#""a longer string: a method name of more than sixteen bytes, an escape at its end\n""#,
        ] {
            let parsed = serde_json::from_str::<String>(text).unwrap();
            assert_eq!(json_str(&raw(text)).as_deref(), Some(&*parsed), "{text}");
        }
        // A raw value read from a document carries no whitespace around it.
        #[derive(serde::Deserialize)]
        struct M<'a> {
            #[serde(borrow)]
            m: &'a RawValue,
        }
        let m: M<'_> = serde_json::from_str(r#"{ "m" :   "tools/list"   }"#).unwrap();
        assert!(matches!(json_str(m.m), Some(Cow::Borrowed("tools/list"))));
    }
}
