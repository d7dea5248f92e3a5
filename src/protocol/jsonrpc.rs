//! JSON-RPC 2.0 envelopes: request ids, the incoming message, responses and notifications.

use std::fmt;
use std::sync::Arc;

use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;

use super::error::ErrorObject;

/// The only JSON-RPC version MCP speaks.
pub const JSONRPC_VERSION: &str = "2.0";

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
pub enum IdField {
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
    pub fn echo(&self) -> Option<RequestId> {
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

/// One incoming JSON-RPC message, split into its members without interpreting them.
///
/// `params` stays raw so that each step of the validation ladder reads only what it needs,
/// and large tool arguments are scanned once.
#[derive(Debug, Deserialize)]
pub struct IncomingMessage<'a> {
    /// The `jsonrpc` member.
    #[serde(default, borrow)]
    pub jsonrpc: Option<&'a RawValue>,
    /// The `id` member.
    #[serde(default)]
    pub id: IdField,
    /// The `method` member, raw.
    #[serde(default, borrow)]
    pub method: Option<&'a RawValue>,
    /// The `params` member, raw.
    #[serde(default, borrow)]
    pub params: Option<&'a RawValue>,
    /// The `result` member: present when a client posted a response.
    #[serde(default, borrow)]
    pub result: Option<&'a RawValue>,
    /// The `error` member: present when a client posted an error response.
    #[serde(default, borrow)]
    pub error: Option<&'a RawValue>,
}

/// A successful response, serialized around an already-encoded or typed result.
#[derive(Debug, Serialize)]
pub struct ResponseRef<'a, T: ?Sized> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    result: &'a T,
}

impl<'a, T: ?Sized + Serialize> ResponseRef<'a, T> {
    /// A response to request `id` carrying `result`.
    pub fn new(id: &'a RequestId, result: &'a T) -> Self {
        ResponseRef {
            jsonrpc: JSONRPC_VERSION,
            id,
            result,
        }
    }
}

/// An error response. `id` is omitted when the request's id could not be read.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ErrorResponse {
    jsonrpc: String,
    /// The id of the request this answers, if it could be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<RequestId>,
    /// The error.
    pub error: ErrorObject,
}

impl ErrorResponse {
    /// An error response for the request `id` (or for an unreadable request).
    pub fn new(id: Option<RequestId>, error: ErrorObject) -> Self {
        ErrorResponse {
            jsonrpc: JSONRPC_VERSION.to_owned(),
            id,
            error,
        }
    }
}

/// A server-to-client notification.
#[derive(Debug, Clone, Serialize)]
pub struct Notification<P> {
    jsonrpc: &'static str,
    /// The notification method, e.g. `notifications/progress`.
    pub method: &'static str,
    /// Its params.
    pub params: P,
}

impl<P: Serialize> Notification<P> {
    /// A notification with `method` and `params`.
    pub fn new(method: &'static str, params: P) -> Self {
        Notification {
            jsonrpc: JSONRPC_VERSION,
            method,
            params,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id_of(json: &str) -> IdField {
        serde_json::from_str::<IncomingMessage<'_>>(json)
            .unwrap()
            .id
    }

    #[test]
    fn id_forms() {
        assert_eq!(id_of(r#"{"id":7}"#), IdField::Valid(RequestId::Number(7)));
        assert_eq!(id_of(r#"{"id":"a"}"#), IdField::Valid("a".into()));
        assert_eq!(id_of(r#"{"id":null}"#), IdField::Null);
        assert_eq!(id_of(r#"{}"#), IdField::Absent);
        assert_eq!(id_of(r#"{"id":1.5}"#), IdField::Invalid);
        assert_eq!(id_of(r#"{"id":true}"#), IdField::Invalid);
        assert_eq!(id_of(r#"{"id":[1]}"#), IdField::Invalid);
        assert_eq!(id_of(r#"{"id":{"a":1}}"#), IdField::Invalid);
        assert_eq!(id_of(r#"{"id":18446744073709551615}"#), IdField::Invalid);
    }

    #[test]
    fn error_response_without_id_omits_it() {
        let e = ErrorResponse::new(None, ErrorObject::parse_error("bad"));
        let s = serde_json::to_string(&e).unwrap();
        assert!(!s.contains("\"id\""), "{s}");
    }
}
