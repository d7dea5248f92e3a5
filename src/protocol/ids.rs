//! Request ids: [`RequestId`] (also the type of a progress token) and [`IdField`], the
//! `id` member of an incoming message as it was found.
//!
//! A leaf: imports nothing from the rest of the crate, so envelopes, `_meta`, notifications
//! and subscriptions can all name ids without importing each other.

use std::fmt;
use std::sync::Arc;

use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A JSON-RPC request id: a string or an integer, never `null`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RequestId {
    /// An integer id.
    Number(i64),
    /// A string id.
    String(Arc<str>),
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => f.write_str(s),
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        RequestId::Number(n)
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        RequestId::String(s.into())
    }
}

impl Serialize for RequestId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            RequestId::Number(n) => s.serialize_i64(*n),
            RequestId::String(v) => s.serialize_str(v),
        }
    }
}

impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match IdField::deserialize(d)? {
            IdField::Valid(id) => Ok(id),
            _ => Err(de::Error::custom(
                "a request id must be a string or an integer",
            )),
        }
    }
}

/// The `id` member of an incoming message, as it was found.
///
/// A request id MUST be a string or an integer; anything else makes the message an
/// invalid request, and the error sent back then carries no id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) enum IdField {
    /// No `id` member: the message is a notification.
    #[default]
    Absent,
    /// `"id": null`, which MCP forbids on requests.
    Null,
    /// An id of another type (a fraction, a boolean, an array, an object).
    Invalid,
    /// A usable id.
    Valid(RequestId),
}

impl IdField {
    /// The id to echo in an error response, when one could be read.
    pub(crate) fn echo(&self) -> Option<RequestId> {
        match self {
            IdField::Valid(id) => Some(id.clone()),
            _ => None,
        }
    }
}

impl<'de> Deserialize<'de> for IdField {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = IdField;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON-RPC id")
            }
            fn visit_unit<E: de::Error>(self) -> Result<IdField, E> {
                Ok(IdField::Null)
            }
            fn visit_none<E: de::Error>(self) -> Result<IdField, E> {
                Ok(IdField::Null)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<IdField, E> {
                Ok(IdField::Valid(RequestId::Number(v)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<IdField, E> {
                Ok(i64::try_from(v)
                    .map(|n| IdField::Valid(RequestId::Number(n)))
                    .unwrap_or(IdField::Invalid))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<IdField, E> {
                Ok(IdField::Invalid)
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<IdField, E> {
                Ok(IdField::Invalid)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<IdField, E> {
                Ok(IdField::Valid(RequestId::String(v.into())))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<IdField, A::Error> {
                while a.next_element::<IgnoredAny>()?.is_some() {}
                Ok(IdField::Invalid)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<IdField, A::Error> {
                while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(IdField::Invalid)
            }
        }
        d.deserialize_any(V)
    }
}

/// A progress token: a string or an integer.
pub type ProgressToken = RequestId;
