//! The `_meta` a [`RequestContext`](super::RequestContext) holds: owned (a legacy request's,
//! a task's), or as read from a 2026 request's body, made an owned [`RequestMeta`] only when
//! a handler asks for the whole of it.
//!
//! Most handlers never look at `_meta`; what the server itself needs of it (the client's
//! capabilities, the log level, the progress token, the protocol version) is at hand in
//! both forms, so a request whose handler does not ask copies none of its strings.

use std::fmt;
use std::sync::OnceLock;

use bytes::Bytes;

use crate::protocol::{
    ClientCapabilities, DeferredMeta, LoggingLevel, ProgressToken, RequestMeta, SessionMeta,
};

/// A request's validated `_meta`, owned or still in its body.
///
/// Its `Debug` shows the `_meta` (built if it was not), never the body it may still hold:
/// the body carries the request's arguments.
// Boxed: a `_meta` is over 500 bytes, and a context's parts are moved several times on their
// way into the context (each move of an inline one was a `memcpy`).
#[derive(Clone)]
pub(crate) struct ContextMeta(Box<Repr>);

impl fmt::Debug for ContextMeta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ContextMeta").field(self.get()).finish()
    }
}

#[derive(Clone)]
enum Repr {
    Owned(RequestMeta),
    Deferred {
        /// Places in `body`: only ever read against the body it was read from, which is why
        /// the two are kept together here and nowhere else.
        meta: DeferredMeta,
        /// The body `meta` was read from (the whole request, kept alive while the context
        /// is).
        body: Bytes,
        /// Boxed: most contexts never build it (inline it would double this box).
        built: OnceLock<Box<RequestMeta>>,
    },
    /// A legacy request's: its session's identity, shared.
    Session {
        meta: SessionMeta,
        /// Boxed, as the deferred one's.
        built: OnceLock<Box<RequestMeta>>,
    },
}

impl From<RequestMeta> for ContextMeta {
    fn from(meta: RequestMeta) -> Self {
        ContextMeta(Box::new(Repr::Owned(meta)))
    }
}

impl ContextMeta {
    /// The `_meta` read from `body` (see [`DeferredMeta`]).
    pub(crate) fn deferred(meta: DeferredMeta, body: Bytes) -> Self {
        ContextMeta(Box::new(Repr::Deferred {
            meta,
            body,
            built: OnceLock::new(),
        }))
    }

    /// A legacy request's `_meta` (see [`SessionMeta`]).
    pub(crate) fn session(meta: SessionMeta) -> Self {
        ContextMeta(Box::new(Repr::Session {
            meta,
            built: OnceLock::new(),
        }))
    }

    /// The protocol version the request declared.
    pub(crate) fn protocol_version(&self) -> &str {
        match &*self.0 {
            Repr::Owned(m) => &m.protocol_version,
            Repr::Deferred { meta, .. } => meta.protocol_version(),
            Repr::Session { meta, .. } => meta.protocol_version(),
        }
    }

    /// The capabilities the client declared.
    pub(crate) fn client_capabilities(&self) -> &ClientCapabilities {
        match &*self.0 {
            Repr::Owned(m) => &m.client_capabilities,
            Repr::Deferred { meta, .. } => meta.client_capabilities(),
            Repr::Session { meta, .. } => meta.client_capabilities(),
        }
    }

    /// The log level the request asked for, if any.
    pub(crate) fn log_level(&self) -> Option<LoggingLevel> {
        match &*self.0 {
            Repr::Owned(m) => m.log_level,
            Repr::Deferred { meta, .. } => meta.log_level(),
            Repr::Session { meta, .. } => meta.log_level(),
        }
    }

    /// The request's progress token, if any.
    pub(crate) fn progress_token(&self) -> Option<&ProgressToken> {
        match &*self.0 {
            Repr::Owned(m) => m.progress_token.as_ref(),
            Repr::Deferred { meta, .. } => meta.progress_token(),
            Repr::Session { meta, .. } => meta.progress_token(),
        }
    }

    /// The whole `_meta`, owned: built from the body on the first call.
    pub(crate) fn get(&self) -> &RequestMeta {
        match &*self.0 {
            Repr::Owned(m) => m,
            Repr::Deferred { meta, body, built } => {
                built.get_or_init(|| Box::new(meta.build(body)))
            }
            Repr::Session { meta, built } => built.get_or_init(|| Box::new(meta.build())),
        }
    }

    /// The whole `_meta`, owned (built now unless it was already).
    pub(crate) fn into_owned(self) -> RequestMeta {
        match *self.0 {
            Repr::Owned(m) => m,
            Repr::Deferred { meta, body, built } => match built.into_inner() {
                Some(meta) => *meta,
                None => meta.into_meta(&body),
            },
            Repr::Session { meta, built } => match built.into_inner() {
                Some(meta) => *meta,
                None => meta.into_meta(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::value::RawValue;

    use super::*;
    use crate::protocol::MetaWire;

    /// The `_meta` of `body` (a `_meta` object) both ways: built on demand, and as
    /// `RequestMeta::from_raw` reads it.
    fn both(body: &str) -> (ContextMeta, RequestMeta) {
        let bytes = Bytes::from(body.to_owned());
        let text = std::str::from_utf8(&bytes).unwrap();
        let raw: &RawValue = serde_json::from_str(text).unwrap();
        let wire = MetaWire::from_raw(raw).unwrap();
        wire.check().unwrap();
        let deferred = wire.defer(crate::protocol::LATEST_PROTOCOL_VERSION, &bytes);
        let eager = RequestMeta::from_raw(Some(raw)).unwrap();
        (ContextMeta::deferred(deferred, bytes.clone()), eager)
    }

    #[test]
    fn debug_shows_the_meta_and_not_the_body() {
        #[derive(serde::Deserialize)]
        struct Params<'a> {
            #[serde(borrow, rename = "_meta")]
            meta: &'a RawValue,
        }
        let body = Bytes::from_static(
            br#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}},"arguments":{"password":"hunter2"}}"#,
        );
        let raw = serde_json::from_slice::<Params<'_>>(&body).unwrap().meta;
        let wire = MetaWire::from_raw(raw).unwrap();
        wire.check().unwrap();
        let deferred = wire.defer(crate::protocol::LATEST_PROTOCOL_VERSION, &body);
        let eager = RequestMeta::from_raw(Some(raw)).unwrap();
        let meta = ContextMeta::deferred(deferred, body.clone());
        let shown = format!("{meta:?}");
        assert!(!shown.contains("hunter2"), "{shown}");
        assert_eq!(shown, format!("ContextMeta({eager:?})"));
    }

    #[test]
    fn a_deferred_meta_builds_what_the_eager_read_makes() {
        for body in [
            r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#,
            r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"load-bench","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{}}"#,
            // Escaped strings are unescaped when read, not kept as places in the body.
            r#"{"io.modelcontextprotocol/protocolVersion":"2026\u002d07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{},"sampling":{}},
                "io.modelcontextprotocol/clientInfo":{"name":"c\u00e9","version":"1","title":"T \"q\"","description":"d","websiteUrl":"https://e.x/","icons":[{"src":"https://e.x/i.png"}]},
                "io.modelcontextprotocol/logLevel":"info","progressToken":7,"traceparent":"tp","tracestate":"ts","baggage":"b","com.example/tenant":{"id":1}}"#,
            r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":null,"progressToken":"p"}"#,
        ] {
            let (deferred, eager) = both(body);
            assert_eq!(
                deferred.protocol_version(),
                eager.protocol_version,
                "{body}"
            );
            assert_eq!(deferred.client_capabilities(), &eager.client_capabilities);
            assert_eq!(deferred.log_level(), eager.log_level);
            assert_eq!(deferred.progress_token(), eager.progress_token.as_ref());
            assert_eq!(deferred.get(), &eager, "{body}");
            assert_eq!(deferred.clone().into_owned(), eager);
            let (unbuilt, _) = both(body);
            assert_eq!(unbuilt.into_owned(), eager, "{body}");
        }
    }

    #[test]
    fn an_owned_meta_is_read_as_it_is() {
        let mut meta = RequestMeta::new("2026-07-28", ClientCapabilities::sampling());
        meta.log_level = Some(LoggingLevel::Debug);
        let held = ContextMeta::from(meta.clone());
        assert_eq!(held.protocol_version(), "2026-07-28");
        assert_eq!(held.client_capabilities(), &meta.client_capabilities);
        assert_eq!(held.log_level(), Some(LoggingLevel::Debug));
        assert_eq!(held.progress_token(), None);
        assert_eq!(held.get(), &meta);
        assert_eq!(held.into_owned(), meta);
    }

    #[test]
    fn a_session_meta_builds_the_sessions_identity_and_what_the_request_sent() {
        use std::sync::Arc;

        use crate::protocol::{ClientIdentity, Implementation};
        let identity = Arc::new(ClientIdentity {
            protocol_version: "2025-11-25".into(),
            capabilities: ClientCapabilities::elicitation_form(),
            client_info: Some(Implementation::new("c", "1")),
        });
        // What the request sent; its own capabilities and version (a legacy `_meta` has
        // none) are the session's, never the request's.
        let sent = r#"{"progressToken":"p","traceparent":"tp","com.example/x":[1],
            "io.modelcontextprotocol/protocolVersion":"2026-07-28"}"#;
        let raw: &RawValue = serde_json::from_str(sent).unwrap();
        let meta = |level| {
            let wire = Box::new(MetaWire::from_raw(raw).unwrap());
            ContextMeta::session(wire.with_identity(identity.clone(), level))
        };
        let mut expected = RequestMeta::new("2025-11-25", ClientCapabilities::elicitation_form());
        expected.client_info = Some(Implementation::new("c", "1"));
        expected.log_level = Some(LoggingLevel::Warning);
        expected.progress_token = Some("p".into());
        expected.traceparent = Some("tp".into());
        expected
            .extra
            .insert("com.example/x".into(), serde_json::json!([1]));

        let held = meta(Some(LoggingLevel::Warning));
        assert_eq!(held.protocol_version(), "2025-11-25");
        assert_eq!(held.client_capabilities(), &expected.client_capabilities);
        assert_eq!(held.log_level(), Some(LoggingLevel::Warning));
        assert_eq!(held.progress_token(), expected.progress_token.as_ref());
        assert_eq!(held.get(), &expected);
        assert_eq!(held.into_owned(), expected);
        assert_eq!(meta(Some(LoggingLevel::Warning)).into_owned(), expected);
        assert_eq!(meta(None).log_level(), None);
        // Only the handle is taken, not a copy of the identity.
        let before = Arc::strong_count(&identity);
        let held = meta(None);
        assert_eq!(Arc::strong_count(&identity), before + 1);
        drop(held);
        assert_eq!(Arc::strong_count(&identity), before);
    }
}
