//! Idempotent tool calls: a tool that opts in
//! ([`ToolDef::idempotency_keys`](crate::ToolDef::idempotency_keys)) and is called with an
//! idempotency key runs its handler at most once per key while the key is kept, on any
//! replica sharing the [`IdempotencyStore`].
//!
//! The key comes from the `Idempotency-Key` HTTP header (the IETF httpapi draft; a transport
//! puts it in the request's extensions as [`IdempotencyHeader`]) or from the request's
//! `_meta` under [`META_KEY`] (stdio, or clients that cannot set headers). It is scoped to the
//! caller (principal digest), the protocol version, and the tool; the arguments' digest is
//! its fingerprint: the same key with other arguments is refused (`-32602`, HTTP 422).
//!
//! The first result (success or `isError`) is kept for [`IdempotencySettings::keep`]; a
//! retry gets it without running the handler. A duplicate that arrives while the first runs
//! waits for it (at most [`IdempotencySettings::wait`]), then is refused with a retryable
//! error (HTTP 409 with `Retry-After`). What is not kept (the key is released, a retry runs
//! the handler): JSON-RPC errors, `input_required` answers (the continuation that carries the
//! answers, with the same key, is the call whose result is kept), results over
//! [`IdempotencySettings::max_result_bytes`], and a call whose client went away before its
//! result. A task-augmented call keeps its `CreateTaskResult`: a retry gets the same task.

use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use bytes::Bytes;
use futures_util::future::BoxFuture;
use http::Extensions;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

use super::outcome::{Outcome, Running};
use super::reply::{Encoded, Reply};
use crate::backends::idempotency::{IdempotencyClaim, IdempotencyStore};
use crate::handler::context_meta::ContextMeta;
use crate::protocol::{ErrorCode, ErrorObject, RequestId};

/// The `_meta` key that carries an idempotency key where no header can (stdio, or a client
/// that cannot set headers). Vendor-prefixed: the protocol defines no such key.
pub(crate) const META_KEY: &str = "dev.stateless-mcp/idempotency-key";

/// The longest idempotency key accepted, in characters.
pub(crate) const MAX_KEY_LEN: usize = 255;

/// How idempotent tool calls behave (see
/// [`ServerBuilder::idempotency`](crate::ServerBuilder::idempotency)).
///
/// ```
/// use std::time::Duration;
/// use stateless_mcp::settings::IdempotencySettings;
///
/// let settings = IdempotencySettings::default()
///     .keep(Duration::from_secs(24 * 3600))
///     .max_result_bytes(256 * 1024);
/// assert_eq!(settings.wait, Duration::from_secs(10));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
#[must_use]
pub struct IdempotencySettings {
    /// How long a finished call's result is kept for retries (default 1 hour).
    pub keep: Duration,
    /// How long a running call holds its key (default 5 minutes): make it longer than the
    /// slowest opted-in tool. If the replica running it dies, its key is free again after
    /// this long (a retry then runs the handler).
    pub lease: Duration,
    /// How long a duplicate arriving while the first call runs waits for its result before
    /// it is refused with a retryable error (default 10 seconds).
    pub wait: Duration,
    /// The largest result (encoded JSON) kept, in bytes (default 64 KiB); a larger one is
    /// answered but not kept, and a retry runs the handler again.
    pub max_result_bytes: usize,
}

impl Default for IdempotencySettings {
    fn default() -> Self {
        IdempotencySettings {
            keep: Duration::from_secs(3600),
            lease: Duration::from_secs(300),
            wait: Duration::from_secs(10),
            max_result_bytes: 64 * 1024,
        }
    }
}

impl IdempotencySettings {
    /// Sets [`keep`](Self::keep).
    pub fn keep(mut self, keep: Duration) -> Self {
        self.keep = keep;
        self
    }

    /// Sets [`lease`](Self::lease).
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease;
        self
    }

    /// Sets [`wait`](Self::wait).
    pub fn wait(mut self, wait: Duration) -> Self {
        self.wait = wait;
        self
    }

    /// Sets [`max_result_bytes`](Self::max_result_bytes).
    pub fn max_result_bytes(mut self, max: usize) -> Self {
        self.max_result_bytes = max;
        self
    }
}

/// The `Idempotency-Key` header of a request, as the HTTP transport found it (in the
/// request's extensions).
#[derive(Debug, Clone)]
pub(crate) struct IdempotencyHeader(pub(crate) http::HeaderValue);

/// The idempotency component: the store and the settings.
pub(crate) struct Idempotency {
    store: Arc<dyn IdempotencyStore>,
    settings: IdempotencySettings,
}

impl Idempotency {
    pub(crate) fn new(store: Arc<dyn IdempotencyStore>, settings: IdempotencySettings) -> Self {
        Idempotency { store, settings }
    }

    /// The guard of a call of the opted-in tool `tool` with `arguments` by the caller whose
    /// digest is `principal`, if the request carries a key; `-32602` for a malformed key (or
    /// two keys that differ).
    pub(crate) fn guard(
        &self,
        extensions: &Extensions,
        principal: Option<&str>,
        meta: &ContextMeta,
        tool: &str,
        arguments: &Value,
    ) -> Result<Option<Guard>, ErrorObject> {
        let Some(client_key) = client_key(extensions, meta)? else {
            return Ok(None);
        };
        let mut scope = Sha256::new();
        for part in [
            "stateless-mcp/idempotency/v1",
            principal.unwrap_or(""),
            meta.protocol_version(),
            tool,
            &client_key,
        ] {
            scope.update(part.as_bytes());
            scope.update([0]);
        }
        let mut fingerprint = Sha256::new();
        digest_value(&mut fingerprint, arguments);
        Ok(Some(Guard {
            store: self.store.clone(),
            settings: self.settings,
            key: URL_SAFE_NO_PAD.encode(scope.finalize()),
            fingerprint: URL_SAFE_NO_PAD.encode(fingerprint.finalize()),
            owner: owner_name(),
        }))
    }
}

/// A random name for one call's claim.
fn owner_name() -> String {
    use chacha20poly1305::aead::OsRng;
    use chacha20poly1305::aead::rand_core::RngCore as _;
    format!("{:016x}{:016x}", OsRng.next_u64(), OsRng.next_u64())
}

/// The client's key: the header's, or `_meta`'s (both present: they must agree).
fn client_key(extensions: &Extensions, meta: &ContextMeta) -> Result<Option<String>, ErrorObject> {
    let header = match extensions.get::<IdempotencyHeader>() {
        None => None,
        Some(h) => Some(checked_key(h.0.to_str().ok())?),
    };
    let in_meta = match meta.get().extra.get(META_KEY) {
        None => None,
        Some(Value::String(s)) => Some(checked_key(Some(s))?),
        Some(_) => return Err(bad_key(format!("_meta[\"{META_KEY}\"] must be a string"))),
    };
    match (header, in_meta) {
        (Some(h), Some(m)) if h != m => Err(bad_key(format!(
            "the Idempotency-Key header and _meta[\"{META_KEY}\"] differ"
        ))),
        (Some(k), _) | (None, Some(k)) => Ok(Some(k)),
        (None, None) => Ok(None),
    }
}

/// A key as sent (an sf-string in quotes, as the draft writes it, or bare): 1 to
/// [`MAX_KEY_LEN`] printable ASCII characters.
fn checked_key(raw: Option<&str>) -> Result<String, ErrorObject> {
    let raw = raw.ok_or_else(|| bad_key("Idempotency-Key must be printable ASCII"))?;
    let key = raw
        .strip_prefix('"')
        .and_then(|k| k.strip_suffix('"'))
        .unwrap_or(raw);
    if key.is_empty() || key.len() > MAX_KEY_LEN {
        return Err(bad_key(format!(
            "an idempotency key has 1 to {MAX_KEY_LEN} characters"
        )));
    }
    if !key.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        return Err(bad_key("an idempotency key is printable ASCII"));
    }
    Ok(key.to_owned())
}

fn bad_key(message: impl Into<String>) -> ErrorObject {
    ErrorObject::invalid_params_with(
        message.into(),
        json!({ "reason": "invalid_idempotency_key" }),
    )
}

/// Feeds `value` to `hash` in a canonical form: object members sorted by name, so the
/// same arguments sent in another order have the same digest.
fn digest_value(hash: &mut Sha256, value: &Value) {
    match value {
        Value::Object(members) => {
            let mut sorted: Vec<(&String, &Value)> = members.iter().collect();
            sorted.sort_unstable_by(|a, b| a.0.cmp(b.0));
            hash.update(b"{");
            for (name, v) in sorted {
                digest_value(hash, &Value::String(name.clone()));
                hash.update(b":");
                digest_value(hash, v);
                hash.update(b",");
            }
            hash.update(b"}");
        }
        Value::Array(items) => {
            hash.update(b"[");
            for v in items {
                digest_value(hash, v);
                hash.update(b",");
            }
            hash.update(b"]");
        }
        leaf => hash.update(leaf.to_string().as_bytes()),
    }
}

/// One guarded call: its scoped key, its arguments' fingerprint and its claim's owner.
pub(crate) struct Guard {
    store: Arc<dyn IdempotencyStore>,
    settings: IdempotencySettings,
    key: String,
    fingerprint: String,
    owner: String,
}

impl Guard {
    /// `outcome` (a running call, or a ready answer such as a validation failure) guarded:
    /// its handler runs (its answer is given) only once the key is claimed; a retry is
    /// answered from the store.
    pub(crate) fn wrap(self, id: RequestId, outcome: Outcome) -> Outcome {
        let (reply, events): (BoxFuture<'static, Reply>, _) = match outcome {
            Outcome::Running(Running { reply, events }) => (reply, events),
            Outcome::Ready(reply) => (Box::pin(std::future::ready(reply)), None),
            other => return other,
        };
        Outcome::Running(Running {
            reply: Box::pin(self.run(id, reply)),
            events,
        })
    }

    async fn run(self, id: RequestId, call: BoxFuture<'static, Reply>) -> Reply {
        let deadline = Instant::now() + self.settings.wait;
        let mut pause = Duration::from_millis(10);
        loop {
            let claim = self
                .store
                .claim(
                    &self.key,
                    &self.fingerprint,
                    &self.owner,
                    self.settings.lease,
                )
                .await;
            match claim {
                Ok(IdempotencyClaim::Claimed) => break,
                Ok(IdempotencyClaim::Done(result)) => {
                    crate::observability::metrics::record_idempotent_call("replayed");
                    return Reply::encoded(&id, &Encoded::new(result.to_vec()));
                }
                Ok(IdempotencyClaim::Conflict) => {
                    crate::observability::metrics::record_idempotent_call("conflict");
                    return reused(id);
                }
                Ok(IdempotencyClaim::InFlight) if Instant::now() + pause < deadline => {
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_millis(250));
                }
                Ok(_) => {
                    crate::observability::metrics::record_idempotent_call("in_flight");
                    return in_flight(id);
                }
                Err(e) => {
                    crate::observability::metrics::record_idempotent_call("unavailable");
                    return Reply::store_unavailable(Some(id), "idempotency", &e);
                }
            }
        }
        crate::observability::metrics::record_idempotent_call("run");
        let mut held = Held {
            store: self.store.clone(),
            key: self.key.clone(),
            owner: self.owner.clone(),
            armed: true,
        };
        let reply = call.await;
        held.armed = false;
        match kept_result(&reply, self.settings.max_result_bytes) {
            Some(result) => {
                match self
                    .store
                    .complete(&self.key, &self.owner, result, self.settings.keep)
                    .await
                {
                    Ok(true) => {}
                    Ok(false) => tracing::warn!(
                        "an idempotent call outlived its lease: its result is not kept"
                    ),
                    Err(e) => {
                        tracing::warn!(error = %e, "an idempotent call's result could not be kept")
                    }
                }
            }
            None => {
                if let Err(e) = self.store.release(&self.key, &self.owner).await {
                    tracing::warn!(error = %e, "an idempotency key could not be released");
                }
            }
        }
        reply
    }
}

/// Releases a claim whose call was dropped before its reply (the client went away).
struct Held {
    store: Arc<dyn IdempotencyStore>,
    key: String,
    owner: String,
    armed: bool,
}

impl Drop for Held {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let (store, key, owner) = (
            self.store.clone(),
            std::mem::take(&mut self.key),
            std::mem::take(&mut self.owner),
        );
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                if let Err(e) = store.release(&key, &owner).await {
                    tracing::warn!(error = %e, "an idempotency key could not be released");
                }
            });
        }
    }
}

/// The encoded result of `reply` if it is one to keep: a result (not an error, not an
/// `input_required` answer) of at most `max` bytes.
fn kept_result(reply: &Reply, max: usize) -> Option<Bytes> {
    #[derive(Deserialize)]
    struct Envelope<'a> {
        #[serde(borrow)]
        result: Option<&'a RawValue>,
    }
    #[derive(Deserialize)]
    struct Kind<'a> {
        #[serde(rename = "resultType", borrow)]
        result_type: Option<&'a str>,
    }
    if reply.error_code.is_some() || reply.retry_after_secs.is_some() {
        return None;
    }
    let bytes = reply.to_bytes();
    let result = serde_json::from_slice::<Envelope<'_>>(&bytes)
        .ok()?
        .result?;
    if result.get().len() > max {
        tracing::warn!(
            bytes = result.get().len(),
            max,
            "an idempotent call's result is over the size kept: a retry runs it again"
        );
        return None;
    }
    let kind = serde_json::from_str::<Kind<'_>>(result.get()).ok()?;
    if kind.result_type == Some("input_required") {
        return None;
    }
    Some(Bytes::copy_from_slice(result.get().as_bytes()))
}

/// The same key with other arguments: `-32602`, HTTP 422 (the draft's answer).
fn reused(id: RequestId) -> Reply {
    let error = ErrorObject::invalid_params_with(
        "This idempotency key was used with other arguments",
        json!({ "reason": "idempotency_key_reused" }),
    );
    Reply::error(Some(id), error).with_status(422)
}

/// A duplicate of a call still running: retryable, HTTP 409 with `Retry-After`.
fn in_flight(id: RequestId) -> Reply {
    let error = ErrorObject {
        code: ErrorCode::InternalError.code(),
        message: "A call with this idempotency key is still running; retry later".into(),
        data: Some(json!({ "reason": "idempotency_key_in_flight", "retryAfterSecs": 1 })),
    };
    let mut reply = Reply::error(Some(id), error).with_status(409);
    reply.retry_after_secs = Some(1);
    reply
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digest(v: &Value) -> String {
        let mut h = Sha256::new();
        digest_value(&mut h, v);
        URL_SAFE_NO_PAD.encode(h.finalize())
    }

    #[test]
    fn the_fingerprint_ignores_member_order_but_not_values() {
        let a: Value = serde_json::from_str(r#"{"a":1,"b":{"x":[1,"2"],"y":null}}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"b":{"y":null,"x":[1,"2"]},"a":1}"#).unwrap();
        let c: Value = serde_json::from_str(r#"{"a":1,"b":{"x":["1",2],"y":null}}"#).unwrap();
        assert_eq!(digest(&a), digest(&b));
        assert_ne!(digest(&a), digest(&c));
        assert_ne!(digest(&json!({"a": "b,"})), digest(&json!({"a,": "b"})));
    }

    #[test]
    fn keys_are_short_printable_ascii_quoted_or_bare() {
        assert_eq!(checked_key(Some("\"abc-1\"")).unwrap(), "abc-1");
        assert_eq!(checked_key(Some("abc 1")).unwrap(), "abc 1");
        for bad in [None, Some(""), Some("\"\""), Some("é")] {
            let e = checked_key(bad).unwrap_err();
            assert_eq!(e.code, -32602);
            assert_eq!(e.data.unwrap()["reason"], "invalid_idempotency_key");
        }
        assert!(checked_key(Some(&"k".repeat(MAX_KEY_LEN))).is_ok());
        assert!(checked_key(Some(&"k".repeat(MAX_KEY_LEN + 1))).is_err());
    }

    fn unavailable(id: &RequestId) -> Reply {
        let e = crate::Error::unavailable("idempotency store", "down");
        Reply::store_unavailable(Some(id.clone()), "idempotency", &e)
    }

    #[test]
    fn only_small_complete_results_are_kept() {
        let id = RequestId::from(1);
        let ok = Reply::result(&id, &json!({"content": [], "resultType": "complete"}));
        assert_eq!(
            kept_result(&ok, 1024).unwrap(),
            Bytes::from_static(br#"{"content":[],"resultType":"complete"}"#)
        );
        assert!(kept_result(&ok, 10).is_none(), "over the cap");
        let asking = Reply::result(&id, &json!({"resultType": "input_required"}));
        assert!(kept_result(&asking, 1024).is_none());
        assert!(kept_result(&unavailable(&id), 1024).is_none());
        assert!(kept_result(&reused(id), 1024).is_none());
    }

    #[test]
    fn refusals_carry_their_statuses() {
        let id = RequestId::from(1);
        assert_eq!(reused(id.clone()).http_status(), 422);
        assert_eq!(in_flight(id.clone()).http_status(), 409);
        assert_eq!(unavailable(&id).http_status(), 503);
    }
}
