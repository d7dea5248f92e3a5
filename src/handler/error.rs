//! [`HandlerError`]: the one error type of every handler kind.

use std::fmt;

use super::input::{InputRequired, Stop};
use crate::Error;
use crate::error::{BoxError, chain};
use crate::protocol::CallToolResult;

/// What the client sees of an unexpected failure (the detail is logged).
const GENERIC: &str = "Internal error";

/// Why a handler (tool, resource, resource template, prompt or completion) did not finish.
///
/// `?` works on any `std::error::Error + Send + Sync`, on `anyhow::Error` (and anything else
/// that converts into `Box<dyn Error + Send + Sync>`), on the crate's [`Error`] and on an
/// [`InputRequired`]. What the client sees depends on how the error was made:
///
/// | made with | logged | tool call answers | other methods answer |
/// |---|---|---|---|
/// | `?` on any other error, [`HandlerError::unexpected`] | yes, with its source chain | `isError` result, "Internal error" | `-32603` "Internal error" |
/// | [`HandlerError::new`] (a message meant for the model or user) | no | `isError` result with the message | `-32603` with the message |
/// | a protocol [`Error`] (`Error::invalid_params`, `Error::resource_not_found`, …) | internal ones | that JSON-RPC error | that JSON-RPC error |
/// | [`InputRequired`] | no | `input_required` result | `input_required` (resources, prompts); `-32603` for completion |
///
/// So a library error's text (an SQL statement, a host name) never reaches the model unless
/// the handler says so.
///
/// ```
/// use stateless_mcp::{HandlerError, RequestContext, ToolDef};
///
/// # #[derive(serde::Deserialize, schemars::JsonSchema)] struct Args { path: String }
/// let read = ToolDef::new("read_file").handler(|_ctx: RequestContext, args: Args| async move {
///     if args.path.contains("..") {
///         // Meant for the model: it can correct the call.
///         return Err(HandlerError::new("paths must not contain `..`"));
///     }
///     // Unexpected: logged with its detail, the model sees "Internal error".
///     let text = std::fs::read_to_string(&args.path)?;
///     Ok(text)
/// });
/// ```
pub struct HandlerError(Repr);

enum Repr {
    Message(String),
    Protocol(Error),
    Input(InputRequired),
    Unexpected(BoxError),
}

impl HandlerError {
    /// A failure whose message is meant for the model (a tool's `isError` result) or the
    /// user (`-32603` with this message on other methods). Nothing is logged.
    pub fn new(message: impl Into<String>) -> Self {
        HandlerError(Repr::Message(message.into()))
    }

    /// An unexpected failure: logged with its detail; the client sees a generic message.
    /// (`?` does the same.)
    pub fn unexpected(error: impl Into<BoxError>) -> Self {
        HandlerError(Repr::Unexpected(error.into()))
    }

    /// Splits a tool's error into a tool result, a protocol error or a request for input.
    pub(crate) fn into_outcome(self) -> Result<CallToolResult, Stop> {
        match self.0 {
            Repr::Message(m) => Ok(CallToolResult::error(m)),
            Repr::Protocol(e) => Err(Stop::Error(e)),
            Repr::Input(i) => Err(Stop::Input(i)),
            Repr::Unexpected(e) => {
                tracing::error!(error = %chain(&*e), "tool failed");
                Ok(CallToolResult::error(GENERIC))
            }
        }
    }

    /// What dispatch does with the error of a handler that is not a tool.
    pub(crate) fn into_stop(self) -> Stop {
        match self.0 {
            Repr::Message(m) => Stop::Error(Error::failed(m)),
            Repr::Protocol(e) => Stop::Error(e),
            Repr::Input(i) => Stop::Input(i),
            Repr::Unexpected(e) => Stop::Error(Error::internal_from(e)),
        }
    }
}

impl fmt::Debug for HandlerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut t = f.debug_tuple("HandlerError");
        match &self.0 {
            Repr::Message(m) => t.field(m),
            Repr::Protocol(e) => t.field(e),
            Repr::Input(i) => t.field(i),
            Repr::Unexpected(e) => t.field(e),
        };
        t.finish()
    }
}

impl fmt::Display for HandlerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::Message(m) => f.write_str(m),
            Repr::Protocol(e) => fmt::Display::fmt(e, f),
            Repr::Input(_) => f.write_str("input required"),
            Repr::Unexpected(e) => f.write_str(&chain(&**e)),
        }
    }
}

impl<E: Into<BoxError>> From<E> for HandlerError {
    fn from(e: E) -> Self {
        match e.into().downcast::<Error>() {
            Ok(protocol) => HandlerError(Repr::Protocol(*protocol)),
            Err(other) => HandlerError(Repr::Unexpected(other)),
        }
    }
}

impl From<InputRequired> for HandlerError {
    fn from(i: InputRequired) -> Self {
        HandlerError(Repr::Input(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Io;
    impl fmt::Display for Io {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("disk full at /secret/path")
        }
    }
    impl std::error::Error for Io {}

    #[test]
    fn unexpected_errors_stay_inside_and_explicit_messages_go_out() {
        let r = HandlerError::from(Io).into_outcome().unwrap();
        assert!(r.is_error());
        assert_eq!(r.content[0].as_text(), Some(GENERIC));
        let r = HandlerError::new("try a smaller file")
            .into_outcome()
            .unwrap();
        assert_eq!(r.content[0].as_text(), Some("try a smaller file"));
        let Stop::Error(e) = HandlerError::from(Io).into_stop() else {
            panic!("an error")
        };
        assert_eq!(e.to_wire().code, -32603);
        assert_eq!(e.to_wire().message, GENERIC);
        assert!(e.to_string().contains("disk full"), "{e}");
        let Stop::Error(e) = HandlerError::new("quota exceeded").into_stop() else {
            panic!("an error")
        };
        assert_eq!(e.to_wire().message, "quota exceeded");
    }

    #[test]
    fn protocol_errors_and_input_requests_keep_their_meaning() {
        let e = HandlerError::from(Error::invalid_params("bad")).into_outcome();
        assert!(matches!(e, Err(Stop::Error(e)) if e.to_wire().code == -32602));
        let i = HandlerError::from(InputRequired::new().list_roots("r")).into_outcome();
        assert!(matches!(i, Err(Stop::Input(_))));
    }

    #[test]
    fn anyhow_errors_convert_with_their_context() {
        fn fails() -> Result<(), HandlerError> {
            let inner: Result<(), Io> = Err(Io);
            anyhow::Context::context(inner, "loading the index")?;
            Ok(())
        }
        let e = fails().unwrap_err();
        let shown = e.to_string();
        assert!(shown.contains("loading the index"), "{shown}");
        assert!(shown.contains("disk full"), "{shown}");
        let r = e.into_outcome().unwrap();
        assert_eq!(r.content[0].as_text(), Some(GENERIC));
    }
}
