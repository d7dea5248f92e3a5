//! Helpers for the dispatch unit tests: request bodies, mirrored headers and outcomes read
//! back as JSON, all without HTTP.

use serde_json::Value;

use super::{Mirrored, MirroredHeaders, Outcome};

/// A well-formed 2026-07-28 `_meta` member.
pub(super) const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

/// A request `id` 1 for `method` whose params are `_meta` plus `rest` (members, no braces).
pub(super) fn request(method: &str, rest: &str) -> String {
    let sep = if rest.is_empty() { "" } else { "," };
    format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{{META}{sep}{rest}}}}}"#)
}

/// Mirrored headers that agree with a request for `method` (naming `name`).
pub(super) fn mirror(method: &str, name: Option<&str>) -> MirroredHeaders<'static> {
    MirroredHeaders {
        protocol_version: Mirrored::Value("2026-07-28".into()),
        method: Mirrored::Value(method.to_owned().into()),
        name: name.map_or(Mirrored::Absent, |n| Mirrored::Value(n.to_owned().into())),
        params: Vec::new(),
    }
}

/// The response an outcome ends in (a running handler is driven to its reply).
pub(super) async fn answer(outcome: Outcome) -> Value {
    let body = match outcome {
        Outcome::Ready(reply) => reply.into_bytes(),
        Outcome::Running(running) => running.reply.await.into_bytes(),
        other => panic!("expected a reply, got {other:?}"),
    };
    serde_json::from_slice(&body).expect("a reply is JSON")
}

/// The error code of a ready error reply.
pub(super) fn code(outcome: &Outcome) -> i32 {
    match outcome {
        Outcome::Ready(reply) => reply.error_code.expect("an error reply"),
        other => panic!("expected a ready error, got {other:?}"),
    }
}
