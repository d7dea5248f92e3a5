//! The Rust error type of the crate. The wire error lives in [`crate::protocol::ErrorObject`];
//! the two meet in one place, dispatch.

use std::borrow::Cow;
use std::fmt;

use crate::protocol::{ClientCapabilities, ErrorObject};

pub(crate) type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// `error` and its sources, joined with `: ` (what a log line should show).
pub(crate) fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(s) = source {
        let next = s.to_string();
        // Some errors repeat their source's text in their own.
        if !text.contains(&next) {
            text.push_str(": ");
            text.push_str(&next);
        }
        source = s.source();
    }
    text
}

/// What went wrong, broadly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The request's params are invalid (answered with `-32602`).
    InvalidParams,
    /// A resource, prompt or other named thing does not exist (`-32602`).
    NotFound,
    /// The request needs a client capability the client did not declare (`-32021`).
    MissingClientCapability,
    /// The server failed (`-32603`; details are logged, not sent).
    Internal,
    /// A definition given to a builder is invalid (raised when building, never on the wire).
    InvalidDefinition,
    /// Reading configuration or binding a socket failed.
    Io,
    /// A backend the server relies on (the bus's broker, the replay store) could not be
    /// reached (`-32603` when it happens during a request).
    Unavailable,
}

/// The crate's error: an opaque value with a [`ErrorKind`], a message and an optional source.
///
/// Errors a client caused carry the wire error they are answered with, built by the same
/// [`ErrorObject`] constructors dispatch uses; server-side failures never reach the wire in
/// detail.
pub struct Error {
    kind: ErrorKind,
    message: Cow<'static, str>,
    wire: Option<ErrorObject>,
    source: Option<BoxError>,
}

impl Error {
    fn new(kind: ErrorKind, message: impl Into<Cow<'static, str>>) -> Self {
        Error {
            kind,
            message: message.into(),
            wire: None,
            source: None,
        }
    }

    fn answered(kind: ErrorKind, wire: ErrorObject) -> Self {
        Error {
            kind,
            message: wire.message.clone(),
            wire: Some(wire),
            source: None,
        }
    }

    /// Invalid params (`-32602`), with a message the client can act on.
    pub fn invalid_params(message: impl Into<Cow<'static, str>>) -> Self {
        Self::answered(
            ErrorKind::InvalidParams,
            ErrorObject::invalid_params(message),
        )
    }

    /// The resource `uri` does not exist (`-32602` with `data.uri`).
    pub fn resource_not_found(uri: impl Into<String>) -> Self {
        Self::answered(
            ErrorKind::NotFound,
            ErrorObject::resource_not_found(&uri.into()),
        )
    }

    /// Something named does not exist (`-32602`).
    pub fn not_found(message: impl Into<Cow<'static, str>>) -> Self {
        Self::answered(ErrorKind::NotFound, ErrorObject::invalid_params(message))
    }

    /// The request needs `required` from the client (`-32021`).
    pub fn missing_client_capability(required: &ClientCapabilities) -> Self {
        Self::answered(
            ErrorKind::MissingClientCapability,
            ErrorObject::missing_client_capability(required),
        )
    }

    /// An internal failure (`-32603`). The message is logged; the client sees a generic one.
    pub fn internal(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorKind::Internal, message)
    }

    /// A failure the client is told about (`-32603` with `message`), for what is neither
    /// the client's fault nor a secret: a client that did not answer in time, say.
    pub(crate) fn internal_visible(message: impl Into<Cow<'static, str>>) -> Self {
        Self::answered(ErrorKind::Internal, ErrorObject::internal_error(message))
    }

    /// An internal failure caused by `source` (logged with its source chain).
    pub fn internal_from(source: impl Into<BoxError>) -> Self {
        let source = source.into();
        let mut e = Self::new(ErrorKind::Internal, chain(&*source));
        e.source = Some(source);
        e
    }

    /// A failure whose message the handler meant for the client (`-32603` with it).
    pub(crate) fn failed(message: impl Into<Cow<'static, str>>) -> Self {
        let message = message.into();
        Self::answered(ErrorKind::Internal, ErrorObject::internal_error(message))
    }

    /// An invalid definition given to a builder.
    pub fn invalid_definition(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorKind::InvalidDefinition, message)
    }

    /// An I/O failure (binding, reading configuration).
    pub fn io(context: impl Into<Cow<'static, str>>, source: std::io::Error) -> Self {
        let mut e = Self::new(ErrorKind::Io, context);
        e.source = Some(Box::new(source));
        e
    }

    /// A backend (broker, store) that could not be reached or answered with an error.
    pub fn unavailable(context: impl Into<Cow<'static, str>>, source: impl Into<BoxError>) -> Self {
        let mut e = Self::new(ErrorKind::Unavailable, context);
        e.source = Some(source.into());
        e
    }

    /// The kind of this error.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The error object sent on the wire for this error.
    pub(crate) fn to_wire(&self) -> ErrorObject {
        self.wire
            .clone()
            .unwrap_or_else(|| ErrorObject::internal_error("Internal error"))
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Error");
        d.field("kind", &self.kind).field("message", &self.message);
        if let Some(s) = &self.source {
            d.field("source", s);
        }
        d.finish()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        if let Some(s) = &self.source {
            if !self.message.contains(&s.to_string()) {
                write!(f, ": {}", chain(&**s))?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.as_deref().map(|e| e as _)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_details_stay_inside() {
        let e = Error::internal("db password wrong");
        let w = e.to_wire();
        assert_eq!(w.code, -32603);
        assert!(!w.message.contains("password"));
    }

    #[test]
    fn resource_not_found_is_invalid_params_with_uri() {
        let w = Error::resource_not_found("file:///x").to_wire();
        assert_eq!(w.code, -32602);
        assert_eq!(w.data.unwrap()["uri"], "file:///x");
    }

    #[test]
    fn the_error_chain_names_every_cause() {
        let inner = std::io::Error::other("invalid peer certificate: UnknownIssuer");
        let text = chain(&ChainErr(inner));
        assert!(text.starts_with("error sending request: "), "{text}");
        assert!(text.contains("UnknownIssuer"), "{text}");
    }

    #[derive(Debug)]
    struct ChainErr(std::io::Error);
    impl std::fmt::Display for ChainErr {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("error sending request")
        }
    }
    impl std::error::Error for ChainErr {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }
}
