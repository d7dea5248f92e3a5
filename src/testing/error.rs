//! What a [`TestClient`](super::TestClient) call can fail with: a JSON-RPC error, a tool
//! result with `isError`, an `input_required` nobody answered, an answer that is not what
//! was asked for, or a listen stream that stayed silent.

use std::fmt;
use std::time::Duration;

use serde_json::Value;

use crate::protocol::{CallToolResult, InputRequiredResult};

/// A JSON-RPC error response, as the client received it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RpcError {
    /// The error code (`-32602`, `-32021`, …).
    pub code: i32,
    /// The error message.
    pub message: String,
    /// The error's `data`, when it has one.
    pub data: Option<Value>,
    /// The HTTP status the Streamable HTTP transport answers this error with (400, 404, …).
    pub http_status: u16,
}

/// Why a [`TestClient`](super::TestClient) call did not give the result asked for.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum TestError {
    /// The server answered with a JSON-RPC error (a protocol error: unknown tool,
    /// invalid params, a missing client capability, an internal error, …).
    Rpc(RpcError),
    /// The tool ran and failed: a `CallToolResult` with `isError: true` (what the model
    /// would read). Only the typed calls report it as an error;
    /// [`CallTool::result`](super::CallTool::result) returns it as a result.
    Tool(CallToolResult),
    /// The server asked for input (`input_required`) that no answer was given for: no
    /// [`TestClient::on_input`](super::TestClient::on_input) callback, the callback
    /// answered `None`, or the rounds did not end. The result carries the requests and
    /// the sealed `requestState` to retry with by hand.
    InputRequired(InputRequiredResult),
    /// The answer was not the shape asked for (it did not decode into the requested type,
    /// or it is not a JSON-RPC response); the text says what was received.
    Unexpected(String),
    /// No message arrived on a listen stream within this time.
    Timeout(Duration),
}

impl TestError {
    /// The JSON-RPC error code, when the server answered with an error.
    pub fn code(&self) -> Option<i32> {
        match self {
            TestError::Rpc(e) => Some(e.code),
            _ => None,
        }
    }

    /// The JSON-RPC error, when the server answered with one.
    pub fn rpc(&self) -> Option<&RpcError> {
        match self {
            TestError::Rpc(e) => Some(e),
            _ => None,
        }
    }

    /// The text of the first text block of a failed tool's result.
    pub fn tool_text(&self) -> Option<&str> {
        match self {
            TestError::Tool(r) => r.content.iter().find_map(|c| c.as_text()),
            _ => None,
        }
    }
}

impl fmt::Display for TestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TestError::Rpc(e) => write!(f, "JSON-RPC error {}: {}", e.code, e.message),
            TestError::Tool(_) => write!(
                f,
                "the tool failed (isError): {}",
                self.tool_text().unwrap_or("no text content")
            ),
            TestError::InputRequired(r) => {
                let keys: Vec<&str> = r
                    .input_requests
                    .iter()
                    .flat_map(|m| m.keys().map(String::as_str))
                    .collect();
                write!(f, "the server asks for input nobody answered: {keys:?}")
            }
            TestError::Unexpected(why) => write!(f, "unexpected answer: {why}"),
            TestError::Timeout(d) => write!(f, "no message within {} ms", d.as_millis()),
        }
    }
}

impl std::error::Error for TestError {}

pub(super) fn unexpected(what: impl fmt::Display) -> TestError {
    TestError::Unexpected(what.to_string())
}
