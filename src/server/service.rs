//! [`Server`] as a `tower::Service`, so transports and middleware compose with it.

use std::convert::Infallible;
use std::future::{Ready, ready};
use std::task::{Context, Poll};

use bytes::Bytes;
use http::Extensions;

use super::{MirroredHeaders, Outcome, Server};

/// One incoming message for [`Server`] as a service.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct Incoming {
    /// The raw JSON-RPC message.
    pub body: Bytes,
    /// Mirrored header values, for transports that have headers.
    pub mirror: Option<MirroredHeaders<'static>>,
    /// Request extensions handed to handlers.
    pub extensions: Extensions,
}

impl Incoming {
    /// A message with no mirrored headers and no extensions (as on stdio).
    pub fn new(body: impl Into<Bytes>) -> Self {
        Incoming {
            body: body.into(),
            mirror: None,
            extensions: Extensions::new(),
        }
    }

    /// Sets the mirrored headers.
    #[must_use]
    pub fn with_mirror(mut self, mirror: MirroredHeaders<'static>) -> Self {
        self.mirror = Some(mirror);
        self
    }
}

impl tower::Service<Incoming> for Server {
    type Response = Outcome;
    type Error = Infallible;
    type Future = Ready<Result<Outcome, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    /// Runs the validation ladder; a handler, if any, runs when the outcome is driven.
    fn call(&mut self, req: Incoming) -> Self::Future {
        ready(Ok(self.handle(
            &req.body,
            req.mirror.as_ref(),
            req.extensions,
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tower::ServiceExt as _;

    #[tokio::test]
    async fn serves_through_tower() {
        let server = Server::builder().build().unwrap();
        let body = r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
        match server.oneshot(Incoming::new(body)).await.unwrap() {
            Outcome::Ready(reply) => {
                assert_eq!(reply.error_code, None);
                let v: serde_json::Value = serde_json::from_slice(&reply.to_bytes()).unwrap();
                assert_eq!(v["result"]["supportedVersions"][0], "2026-07-28");
            }
            other => panic!("expected a ready reply, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn notifications_are_accepted_without_headers() {
        let server = Server::builder().build().unwrap();
        let body =
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#;
        assert!(matches!(
            server.oneshot(Incoming::new(body)).await.unwrap(),
            Outcome::Accepted
        ));
    }
}
