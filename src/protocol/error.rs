//! The wire error object and one named constructor per error code.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::capabilities::ClientCapabilities;

/// JSON-RPC and MCP error codes used by this revision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorCode {
    /// `-32700`: the body is not valid JSON.
    ParseError,
    /// `-32600`: not a valid JSON-RPC request.
    InvalidRequest,
    /// `-32601`: unknown method, removed method, or capability not advertised.
    MethodNotFound,
    /// `-32602`: invalid params (also: unknown tool/prompt, bad cursor, resource not found).
    InvalidParams,
    /// `-32603`: unexpected server failure.
    InternalError,
    /// `-32020`: a mirrored HTTP header is missing, malformed or differs from the body.
    HeaderMismatch,
    /// `-32021`: the request needs a client capability the client did not declare.
    MissingRequiredClientCapability,
    /// `-32022`: the requested protocol version is not supported.
    UnsupportedProtocolVersion,
}

impl ErrorCode {
    /// The integer sent on the wire.
    pub const fn code(self) -> i32 {
        match self {
            ErrorCode::ParseError => -32700,
            ErrorCode::InvalidRequest => -32600,
            ErrorCode::MethodNotFound => -32601,
            ErrorCode::InvalidParams => -32602,
            ErrorCode::InternalError => -32603,
            ErrorCode::HeaderMismatch => -32020,
            ErrorCode::MissingRequiredClientCapability => -32021,
            ErrorCode::UnsupportedProtocolVersion => -32022,
        }
    }

    /// The code for a wire integer, if it is one of this revision's.
    pub const fn from_code(code: i32) -> Option<Self> {
        Some(match code {
            -32700 => ErrorCode::ParseError,
            -32600 => ErrorCode::InvalidRequest,
            -32601 => ErrorCode::MethodNotFound,
            -32602 => ErrorCode::InvalidParams,
            -32603 => ErrorCode::InternalError,
            -32020 => ErrorCode::HeaderMismatch,
            -32021 => ErrorCode::MissingRequiredClientCapability,
            -32022 => ErrorCode::UnsupportedProtocolVersion,
            _ => return None,
        })
    }

    /// The HTTP status this code is answered with on Streamable HTTP.
    ///
    /// The spec pins 400 for `-32602` (missing `_meta`), `-32020`, `-32021`, `-32022` and 404
    /// for `-32601`. For the rest we answer 400 for client faults and 500 for `-32603`.
    pub const fn http_status(self) -> u16 {
        match self {
            ErrorCode::MethodNotFound => 404,
            ErrorCode::InternalError => 500,
            _ => 400,
        }
    }

    /// The HTTP status for any wire code: codes outside this revision's set are client
    /// faults (400).
    pub const fn status_of(code: i32) -> u16 {
        match Self::from_code(code) {
            Some(c) => c.http_status(),
            None => 400,
        }
    }
}

/// A JSON-RPC error object: `{code, message, data?}`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ErrorObject {
    /// The error code.
    pub code: i32,
    /// One concise sentence.
    pub message: Cow<'static, str>,
    /// Structured details, when the code defines them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ErrorObject {
    fn new(code: ErrorCode, message: impl Into<Cow<'static, str>>, data: Option<Value>) -> Self {
        ErrorObject {
            code: code.code(),
            message: message.into(),
            data,
        }
    }

    /// The known code of this error, if it is one of this revision's.
    pub fn kind(&self) -> Option<ErrorCode> {
        ErrorCode::from_code(self.code)
    }

    /// `-32700` Parse error.
    pub fn parse_error(detail: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorCode::ParseError, detail, None)
    }

    /// `-32600` Invalid Request.
    pub fn invalid_request(detail: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorCode::InvalidRequest, detail, None)
    }

    /// `-32601` Method not found, with `data.method` and a `data.reason`.
    pub fn method_not_found(method: &str, reason: impl Into<Cow<'static, str>>) -> Self {
        let reason = reason.into();
        Self::new(
            ErrorCode::MethodNotFound,
            format!("Method not found: {method}"),
            Some(json!({ "method": method, "reason": reason })),
        )
    }

    /// `-32602` Invalid params.
    pub fn invalid_params(detail: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorCode::InvalidParams, detail, None)
    }

    /// `-32602` with structured `data`.
    pub fn invalid_params_with(detail: impl Into<Cow<'static, str>>, data: Value) -> Self {
        Self::new(ErrorCode::InvalidParams, detail, Some(data))
    }

    /// `-32602` Resource not found, with `data.uri` (never the retired `-32002`).
    pub fn resource_not_found(uri: &str) -> Self {
        Self::new(
            ErrorCode::InvalidParams,
            "Resource not found",
            Some(json!({ "uri": uri })),
        )
    }

    /// `-32603` Internal error.
    pub fn internal_error(detail: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorCode::InternalError, detail, None)
    }

    /// `-32020` HeaderMismatch.
    pub fn header_mismatch(detail: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorCode::HeaderMismatch, detail, None)
    }

    /// `-32021` MissingRequiredClientCapability, with `data.requiredCapabilities`.
    pub fn missing_client_capability(required: &ClientCapabilities) -> Self {
        Self::new(
            ErrorCode::MissingRequiredClientCapability,
            "Missing required client capability",
            Some(json!({ "requiredCapabilities": required })),
        )
    }

    /// `-32022` UnsupportedProtocolVersion, with `data.supported` and `data.requested`.
    pub fn unsupported_protocol_version(supported: &[&str], requested: &str) -> Self {
        Self::new(
            ErrorCode::UnsupportedProtocolVersion,
            "Unsupported protocol version",
            Some(json!({ "supported": supported, "requested": requested })),
        )
    }

    /// The HTTP status this error is answered with.
    pub fn http_status(&self) -> u16 {
        ErrorCode::status_of(self.code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip() {
        for c in [
            ErrorCode::ParseError,
            ErrorCode::InvalidRequest,
            ErrorCode::MethodNotFound,
            ErrorCode::InvalidParams,
            ErrorCode::InternalError,
            ErrorCode::HeaderMismatch,
            ErrorCode::MissingRequiredClientCapability,
            ErrorCode::UnsupportedProtocolVersion,
        ] {
            assert_eq!(ErrorCode::from_code(c.code()), Some(c));
        }
        assert_eq!(ErrorCode::from_code(-32002), None);
    }

    #[test]
    fn unsupported_version_data() {
        let e = ErrorObject::unsupported_protocol_version(&["2026-07-28"], "1900-01-01");
        assert_eq!(e.code, -32022);
        assert_eq!(
            e.data.unwrap(),
            json!({"supported": ["2026-07-28"], "requested": "1900-01-01"})
        );
    }
}
