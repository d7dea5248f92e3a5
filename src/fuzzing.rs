//! Entry points for the fuzz targets in `fuzz/` (feature `fuzzing`; not part of the API).
//!
//! Each function feeds attacker-controlled input to one decoder that reads it and checks the
//! decoder's invariant, panicking when it breaks: never a panic inside the decoder, and
//! exactly one schema-valid answer or a clean refusal. [`handle`] drives the whole
//! [`Server::handle`](crate::Server::handle) of a server with the demo and conformance
//! fixtures and validates what it answers against the official 2026-07-28 JSON Schema (read
//! from `MCP_SCHEMA_JSON`, `../shared/spec/2026-07-28/schema.json` or
//! `target/mcp-schema/2026-07-28/schema.json`, as the tests do).

use std::sync::OnceLock;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use bytes::Bytes;
use futures_util::StreamExt as _;
use http::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;

use crate::handler::UriTemplate;
use crate::server::{Outcome, Server, fuzz};
use crate::transport::http::request_headers::RequestHeaders;
use schema::check_message;

/// The integration tests' schema checks, shared rather than copied: the same file is
/// `tests/it/support/schema.rs` (only its 2026-07-28 half is used here).
#[path = "../tests/it/support/schema.rs"]
#[allow(dead_code, unreachable_pub)]
mod schema;

/// The one-pass and the step-by-step reads of a body agree (params, `_meta`, id, errors).
pub fn envelope(body: &[u8]) {
    fuzz::both_reads_agree(body);
}

/// Reads the mirrored headers of an arbitrary header list (through the endpoint's one pass
/// over the headers, as the transport does; the resource server reads them one by one), and
/// checks that `=?base64?…?=` carries any string unchanged.
pub fn mirrored_headers(headers: &[(Vec<u8>, Vec<u8>)], text: &str) {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        if let (Ok(n), Ok(v)) = (HeaderName::from_bytes(name), HeaderValue::from_bytes(value)) {
            map.append(n, v);
        }
    }
    let _ = RequestHeaders::read(&map).mirror;
    let mut map = HeaderMap::new();
    let encoded = format!("=?base64?{}?=", STANDARD.encode(text));
    map.insert(
        crate::mirrored::NAME,
        HeaderValue::from_str(&encoded).expect("base64 is a valid header value"),
    );
    let read = RequestHeaders::read(&map).mirror;
    assert_eq!(read.name.value(), Some(text), "{encoded}");
}

/// A fuzzed `requestState` token never opens; a sealed one opens to itself; a tampered one
/// never opens.
pub fn sealed_state(token: &str, payload: &[u8], flip: usize) {
    fuzz::sealed_round_trip(token, payload, flip);
}

/// A fuzzed legacy session id never opens; an issued one opens; a tampered one never
/// opens; session ids and `requestState` tokens never open as each other.
pub fn session_id(token: &str, version: &str, flip: usize) {
    crate::legacy::fuzz::session_round_trip(token, version, flip);
}

/// A cursor resumes within its list or is refused; encoding round-trips.
pub fn cursor(text: &str, offset: usize, len: usize) {
    fuzz::cursor_round_trip(text, offset, len);
}

/// Compiles a URI template (or refuses it) and matches a URI against it; a template
/// without expressions matches exactly itself.
pub fn uri_template(template: &str, uri: &str) {
    let Ok(t) = UriTemplate::parse(template) else {
        return;
    };
    assert_eq!(t.as_str(), template);
    let _ = t.matches(uri);
    if !template.contains(['{', '}']) {
        assert!(t.matches(template).is_some(), "{template:?} matches itself");
        assert_eq!(
            t.matches(uri).is_some(),
            uri == template,
            "{template:?} vs {uri:?}"
        );
    }
}

struct Harness {
    runtime: tokio::runtime::Runtime,
    server: Server,
}

fn harness() -> &'static Harness {
    static H: OnceLock<Harness> = OnceLock::new();
    H.get_or_init(|| {
        // Paused time: handlers that sleep (progress, `sleep`) finish at once.
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .expect("a runtime");
        let server = runtime.block_on(async {
            let b = Server::builder().state_keys(
                "k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
                    .parse()
                    .expect("the key ring parses"),
            );
            crate::fixtures::conformance(crate::fixtures::demo(b))
                .build()
                .expect("the fixtures build")
        });
        Harness { runtime, server }
    })
}

/// Hands `body` with `headers` to the server; its answer must be exactly one schema-valid
/// message (a notification gets none) whose `id` is the request's when it had a readable
/// one; a listen stream's first message must be schema-valid too. Returns the answer.
pub fn handle(body: &[u8], headers: &[(String, String)]) -> Option<Value> {
    let h = harness();
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        if let (Ok(n), Ok(v)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            map.append(n, v);
        }
    }
    let mirror = RequestHeaders::read(&map).mirror;
    let request: Option<Value> = serde_json::from_slice(body).ok();
    let method = request
        .as_ref()
        .and_then(|r| r.get("method"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let body = Bytes::copy_from_slice(body);
    let answer = h.runtime.block_on(async {
        match h
            .server
            .handle(&body, Some(&mirror), http::Extensions::new())
        {
            Outcome::Accepted => None,
            Outcome::Ready(reply) => Some(reply.into_bytes()),
            Outcome::Running(running) => {
                let reply = tokio::time::timeout(Duration::from_secs(86_400), running.reply)
                    .await
                    .expect("a handler answers within a (virtual) day");
                if let Some(mut events) = running.events {
                    while let Ok(e) = events.try_recv() {
                        if e.is_empty() {
                            continue;
                        }
                        check_message(&parse(&e), None);
                    }
                }
                Some(reply.into_bytes())
            }
            Outcome::Listen(mut listen) => {
                assert_eq!(method.as_deref(), Some("subscriptions/listen"));
                let first = listen
                    .messages
                    .next()
                    .await
                    .expect("a listen acknowledgement");
                check_message(&parse(&first), None);
                None
            }
        }
    });
    let answer = parse(&answer?);
    check_message(&answer, method.as_deref());
    let id = request
        .as_ref()
        .and_then(|r| r.get("id"))
        .filter(|id| id.is_string() || id.is_i64());
    if let Some(id) = id {
        assert_eq!(
            answer.get("id"),
            Some(id),
            "the answer echoes the request id"
        );
    }
    Some(answer)
}

fn parse(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes)
        .unwrap_or_else(|e| panic!("the server sent invalid JSON ({e}): {bytes:?}"))
}
