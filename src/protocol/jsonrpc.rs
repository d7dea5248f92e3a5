//! JSON-RPC 2.0 envelopes: the incoming message, responses and notifications.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::error::ErrorObject;
use super::ids::{IdField, RequestId};

/// The only JSON-RPC version MCP speaks.
pub(super) const JSONRPC_VERSION: &str = "2.0";

/// One incoming JSON-RPC message, split into its members without interpreting them.
///
/// `params` stays raw so that each step of the validation ladder reads only what it needs,
/// and large tool arguments are scanned once.
#[derive(Debug, Deserialize)]
pub(crate) struct IncomingMessage<'a> {
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
pub(crate) struct ResponseRef<'a, T: ?Sized> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    result: &'a T,
}

impl<'a, T: ?Sized + Serialize> ResponseRef<'a, T> {
    /// A response to request `id` carrying `result`.
    pub(crate) fn new(id: &'a RequestId, result: &'a T) -> Self {
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

    #[test]
    fn a_response_wraps_its_result_with_the_id() {
        let id = RequestId::from("r-1");
        let v = serde_json::to_value(ResponseRef::new(&id, &serde_json::json!({"a": 1}))).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"jsonrpc": "2.0", "id": "r-1", "result": {"a": 1}})
        );
    }

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
