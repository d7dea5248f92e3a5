//! One encoded JSON-RPC response ([`Reply`]): a typed result serialized once into a buffer
//! sized for it, a pre-encoded result with the id spliced in, or an error.
//!
//! A long pre-encoded result is not copied into the reply: the reply's body is two chunks,
//! the few bytes before the result copied and the result's shared buffer (or, for a page of
//! a scoped list, the last run of its shared item encodings) referenced ([`Splice`]).

use std::fmt;
use std::sync::Arc;

use bytes::Bytes;
use serde::Serialize;

use crate::protocol::{
    ErrorCode, ErrorObject, ErrorResponse, Implementation, RequestId, ResponseRef, SERVER_INFO_KEY,
    StampResult,
};

/// What `Retry-After` says when a shared store cannot answer: its circuit breaker probes
/// twice a second, so a retry a second later finds it back if it is.
const STORE_RETRY_AFTER_SECS: u32 = 1;

/// The head of every success response, up to the id.
const HEAD: &[u8] = br#"{"jsonrpc":"2.0","id":"#;
/// Between the id and the result.
const RESULT: &[u8] = br#","result":"#;

/// The server's `serverInfo`, and the `_meta` member that carries it encoded once
/// (`"_meta":{"io.modelcontextprotocol/serverInfo":{…}}`), so a result is not stamped by
/// serializing the server's `Implementation` again on every request.
#[derive(Debug)]
pub(crate) struct Stamp {
    info: Arc<Implementation>,
    member: Arc<[u8]>,
}

impl Stamp {
    pub(crate) fn new(info: Arc<Implementation>) -> Self {
        let mut member = br#""_meta":{"#.to_vec();
        serde_json::to_writer(&mut member, SERVER_INFO_KEY).expect("a key always serializes");
        member.push(b':');
        serde_json::to_writer(&mut member, &*info).expect("an Implementation always serializes");
        member.push(b'}');
        Stamp {
            info,
            member: member.into(),
        }
    }

    /// The `_meta` member it adds to results, encoded: `"_meta":{"…/serverInfo":{…}}`.
    pub(crate) fn member(&self) -> &Arc<[u8]> {
        &self.member
    }
}

/// Shared bytes shorter than this are copied into the reply rather than referenced: copying
/// a few hundred bytes costs less than another chunk to queue and drop.
pub(super) const SHARE_FROM: usize = 2048;

/// The bytes of a reply: one buffer, or the few bytes before a long shared piece and that
/// piece, which ends the reply.
///
/// A referenced piece is only ever the last one: hyper flushes what it holds as soon as it
/// holds more than its buffer size, so a chunk after a long one would be another write
/// (and, with `TCP_NODELAY`, another segment). As it is, the head, the copied chunk and the
/// shared one go out in one vectored write.
#[derive(Clone)]
pub(crate) enum Body {
    /// The whole response in one buffer.
    One(Bytes),
    /// The response in two chunks, in order, neither empty.
    Two([Bytes; 2]),
}

impl Body {
    /// The chunks, in order.
    pub(crate) fn chunks(&self) -> &[Bytes] {
        match self {
            Body::One(bytes) => std::slice::from_ref(bytes),
            Body::Two(chunks) => chunks,
        }
    }
}

impl From<Bytes> for Body {
    fn from(bytes: Bytes) -> Self {
        Body::One(bytes)
    }
}

/// A result encoded once, with the `}` that closes the response around it after it: a reply
/// ends with it as it is.
#[derive(Clone, Debug)]
pub(crate) struct Encoded(Bytes);

impl Encoded {
    /// `json` (one JSON value), ready to end a reply.
    pub(crate) fn new(mut json: Vec<u8>) -> Self {
        json.push(b'}');
        Encoded(Bytes::from(json))
    }

    /// The result's JSON.
    pub(crate) fn json(&self) -> &[u8] {
        &self.0[..self.0.len() - 1]
    }
}

/// Builds a reply's [`Body`]: bytes copied into its first chunk, then perhaps a shared piece
/// to end it with.
pub(crate) struct Splice {
    open: Vec<u8>,
}

impl Splice {
    /// An empty body whose first chunk has room for `capacity` bytes.
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        Splice {
            open: Vec::with_capacity(capacity),
        }
    }

    /// The first chunk, to append to.
    pub(crate) fn open(&mut self) -> &mut Vec<u8> {
        &mut self.open
    }

    /// Ends the body with what was copied.
    pub(crate) fn end(self) -> Body {
        Body::One(Bytes::from(self.open))
    }

    /// Ends the body with `bytes[range]`: referenced when long, copied when short.
    pub(crate) fn end_with(mut self, bytes: &Bytes, range: std::ops::Range<usize>) -> Body {
        if range.len() < SHARE_FROM || self.open.is_empty() {
            self.open.extend_from_slice(&bytes[range]);
            return self.end();
        }
        Body::Two([Bytes::from(self.open), bytes.slice(range)])
    }
}

/// One encoded JSON-RPC response: its JSON text, in one or more chunks ([`chunks`]), and
/// what the transports need to send it.
///
/// [`chunks`]: Reply::chunks
#[derive(Clone)]
pub struct Reply {
    body: Body,
    /// The error code, when the response is an error.
    pub error_code: Option<i32>,
    /// Set when the server is too busy to take the request: HTTP 503 with `Retry-After`.
    pub retry_after_secs: Option<u32>,
    /// An HTTP status that differs from the one the error code calls for (an idempotent
    /// call's refusals: 409, 422).
    status: Option<u16>,
}

/// Two replies are equal when they send the same bytes with the same code and status, however
/// their bodies are chunked.
impl PartialEq for Reply {
    fn eq(&self, other: &Self) -> bool {
        self.error_code == other.error_code
            && self.retry_after_secs == other.retry_after_secs
            && self.status == other.status
            && self.len() == other.len()
            && self.to_bytes() == other.to_bytes()
    }
}

impl Eq for Reply {}

impl fmt::Debug for Reply {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reply")
            .field("body", &String::from_utf8_lossy(&self.to_bytes()))
            .field("error_code", &self.error_code)
            .field("retry_after_secs", &self.retry_after_secs)
            .finish()
    }
}

impl Reply {
    /// A reply of `body`, without an error code.
    fn success(body: Body) -> Self {
        Reply {
            body,
            error_code: None,
            retry_after_secs: None,
            status: None,
        }
    }

    /// The JSON text of the response, as the chunks it is sent in, in order: two when it
    /// carries a long pre-encoded result (a list page, 2 KiB or more), which is then
    /// referenced, not copied; one otherwise.
    pub fn chunks(&self) -> &[Bytes] {
        self.body.chunks()
    }

    /// The JSON text of the response in one buffer: the body itself when it is one chunk,
    /// else its chunks copied together.
    pub fn to_bytes(&self) -> Bytes {
        self.clone().into_bytes()
    }

    /// The JSON text of the response in one buffer, as [`to_bytes`](Self::to_bytes) but
    /// without a reference to release when it is one chunk.
    pub fn into_bytes(self) -> Bytes {
        match self.body {
            Body::One(bytes) => bytes,
            Body::Two(chunks) => Bytes::from(chunks.concat()),
        }
    }

    /// The length of the JSON text in bytes.
    pub fn len(&self) -> usize {
        self.chunks().iter().map(Bytes::len).sum()
    }

    /// Whether the JSON text is empty (never, for a reply the server made).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A success response of `json`, a whole JSON-RPC response encoded already (a wing's
    /// rewrite of one the core made).
    pub(crate) fn from_json(json: Bytes) -> Self {
        Self::success(Body::One(json))
    }

    /// The body, for a transport that sends the chunks itself.
    pub(crate) fn into_body(self) -> Body {
        self.body
    }

    /// A success response carrying `result`.
    pub(crate) fn result<T: Serialize + ?Sized>(id: &RequestId, result: &T) -> Self {
        Self::result_sized(id, result, 0)
    }

    /// A success response carrying `result`, which holds about `content_size` bytes of bulky
    /// content: the buffer is sized for it once, so large results are not copied while the
    /// buffer grows.
    pub(crate) fn result_sized<T: Serialize + ?Sized>(
        id: &RequestId,
        result: &T,
        content_size: usize,
    ) -> Self {
        // Room for the envelope and a typical small result besides the content (escapes may
        // still grow it a little).
        let mut body = Vec::with_capacity(content_size + content_size / 16 + 512);
        match serde_json::to_writer(&mut body, &ResponseRef::new(id, result)) {
            Ok(()) => Self::success(Body::One(Bytes::from(body))),
            Err(e) => {
                tracing::error!(error = %e, "a result failed to serialize");
                Self::error(
                    Some(id.clone()),
                    ErrorObject::internal_error("Internal error"),
                )
            }
        }
    }

    /// A success response carrying `result` stamped with the server's `serverInfo`, as
    /// [`result_sized`](Self::result_sized) with `result`'s `_meta.serverInfo` set would
    /// encode it (the same JSON, `_meta` last). A result whose `_meta` is empty (the common
    /// case) gets the pre-encoded `_meta` member spliced in, and a plain one
    /// ([`StampResult::encode_plain`]) is written without serde; one with other `_meta` keys
    /// is serialized with them.
    pub(crate) fn stamped<T: Serialize + StampResult + ?Sized>(
        id: &RequestId,
        result: &mut T,
        stamp: &Stamp,
    ) -> Self {
        let content_size = result.content_size_hint();
        if !result.meta_mut().is_empty() {
            result.meta_mut().server_info = Some(stamp.info.clone());
            return Self::result_sized(id, result, content_size);
        }
        let mut body =
            Vec::with_capacity(content_size + content_size / 16 + 512 + stamp.member.len());
        body.extend_from_slice(HEAD);
        serde_json::to_writer(&mut body, id).expect("a request id always serializes");
        body.extend_from_slice(RESULT);
        let start = body.len();
        if !result.encode_plain(&mut body) {
            body.truncate(start);
            if let Err(e) = serde_json::to_writer(&mut body, &*result) {
                tracing::error!(error = %e, "a result failed to serialize");
                return Self::error(
                    Some(id.clone()),
                    ErrorObject::internal_error("Internal error"),
                );
            }
        }
        // The result is an object: `_meta` goes before its closing brace.
        match body.pop() {
            Some(b'}') => {}
            _ => {
                result.meta_mut().server_info = Some(stamp.info.clone());
                return Self::result_sized(id, result, content_size);
            }
        }
        if body.last() != Some(&b'{') {
            body.push(b',');
        }
        body.extend_from_slice(&stamp.member);
        body.extend_from_slice(b"}}");
        Self::success(Body::One(Bytes::from(body)))
    }

    /// A success response around a result encoded already (a pre-serialized list page or
    /// `server/discover`): the id is spliced in before it, and the result referenced, not
    /// copied, when it is long.
    pub(crate) fn encoded(id: &RequestId, result: &Encoded) -> Self {
        let len = result.0.len();
        let copied = if len < SHARE_FROM { len } else { 0 };
        Self::encoded_with(id, copied, |body| body.end_with(&result.0, 0..len))
    }

    /// A success response whose result and closing `}` `write` appends, already encoded, to
    /// `body` and ends it with (copying about `copied` bytes into its first chunk): the id is
    /// spliced in before it.
    pub(crate) fn encoded_with(
        id: &RequestId,
        copied: usize,
        write: impl FnOnce(Splice) -> Body,
    ) -> Self {
        let id_len = match id {
            RequestId::Number(_) => 20,
            RequestId::String(s) => s.len() + 2,
        };
        let mut body = Splice::with_capacity(HEAD.len() + id_len + RESULT.len() + copied);
        let head = body.open();
        head.extend_from_slice(HEAD);
        serde_json::to_writer(&mut *head, id).expect("a request id always serializes");
        head.extend_from_slice(RESULT);
        Self::success(write(body))
    }

    /// The HTTP status this reply is sent with: 200, or the one its error code calls for.
    pub fn http_status(&self) -> u16 {
        if let Some(status) = self.status {
            return status;
        }
        if self.retry_after_secs.is_some() {
            return 503;
        }
        self.error_code.map_or(200, ErrorCode::status_of)
    }

    /// An error response (no `id` when it could not be read).
    pub(crate) fn error(id: Option<RequestId>, error: ErrorObject) -> Self {
        let code = error.code;
        let body = serde_json::to_vec(&ErrorResponse::new(id, error))
            .expect("error responses always serialize");
        Reply {
            body: Body::One(Bytes::from(body)),
            error_code: Some(code),
            retry_after_secs: None,
            status: None,
        }
    }

    /// The one answer of a request that needs a shared store which cannot answer now (down,
    /// hung, or its circuit breaker open): `-32603` with `data.reason = "store_unavailable"`
    /// and `data.retryAfterSecs = 1`, sent over HTTP as 503 with `Retry-After: 1`; the same
    /// JSON-RPC error over stdio. `store` names it in the message (`session`, `task`,
    /// `replay`, `idempotency`); `e` is logged, never sent.
    pub(crate) fn store_unavailable(id: Option<RequestId>, store: &str, e: &crate::Error) -> Self {
        tracing::debug!(store, error = %e, "a shared store could not answer; answered 503");
        let error = ErrorObject {
            code: ErrorCode::InternalError.code(),
            message: format!("The {store} store is unavailable; retry later").into(),
            data: Some(serde_json::json!({
                "reason": "store_unavailable",
                "retryAfterSecs": STORE_RETRY_AFTER_SECS,
            })),
        };
        let mut reply = Reply::error(id, error);
        reply.retry_after_secs = Some(STORE_RETRY_AFTER_SECS);
        reply
    }

    /// This reply, sent over HTTP with `status` (with `Retry-After` too when
    /// `retry_after_secs` is set).
    pub(crate) fn with_status(mut self, status: u16) -> Self {
        self.status = Some(status);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::value::RawValue;

    /// A page as `encode` in `lists` makes one, with `tools` tools.
    fn page(tools: usize) -> Vec<u8> {
        let tools: Vec<serde_json::Value> = (0..tools)
            .map(|i| serde_json::json!({"name": format!("t{i}"), "description": "x".repeat(60)}))
            .collect();
        let page = serde_json::json!({"tools": tools, "resultType": "complete"});
        serde_json::to_vec(&page).unwrap()
    }

    #[test]
    fn a_store_that_cannot_answer_gets_one_retryable_answer() {
        let e = crate::Error::unavailable("session store (Redis at x)", "secret detail");
        let reply = Reply::store_unavailable(Some(RequestId::from(4)), "session", &e);
        assert_eq!(reply.http_status(), 503);
        assert_eq!(reply.retry_after_secs, Some(1));
        let body: serde_json::Value = serde_json::from_slice(&reply.to_bytes()).unwrap();
        assert_eq!(
            body,
            serde_json::json!({"jsonrpc": "2.0", "id": 4, "error": {
                "code": -32603,
                "message": "The session store is unavailable; retry later",
                "data": {"reason": "store_unavailable", "retryAfterSecs": 1}}})
        );
    }

    #[test]
    fn an_encoded_result_matches_a_serialized_one() {
        // A short page is copied (one chunk), a long one referenced after the id's chunk.
        for (tools, chunks) in [(0, 1), (1, 1), (100, 2)] {
            let json = page(tools);
            let raw = RawValue::from_string(String::from_utf8(json.clone()).unwrap()).unwrap();
            let page = Encoded::new(json);
            assert_eq!(page.json(), raw.get().as_bytes());
            for id in [
                RequestId::Number(-7),
                RequestId::Number(i64::MAX),
                RequestId::from("a \"quoted\" id é \u{1}"),
            ] {
                let spliced = Reply::encoded(&id, &page);
                let serialized = Reply::result(&id, &*raw);
                assert_eq!(spliced.to_bytes(), serialized.to_bytes(), "{tools} tools");
                assert_eq!(spliced, serialized);
                assert_eq!(spliced.chunks().len(), chunks, "{tools} tools");
                assert_eq!(spliced.len(), serialized.len());
                if chunks > 1 {
                    // The page itself, not a copy of it.
                    assert_eq!(spliced.chunks()[1].as_ptr(), page.0.as_ptr());
                }
                let v: serde_json::Value = serde_json::from_slice(&spliced.to_bytes()).unwrap();
                assert_eq!(v["result"]["resultType"], "complete");
            }
        }
    }

    #[test]
    fn a_splice_copies_a_short_end_and_references_a_long_one() {
        let long = Bytes::from(vec![b'a'; SHARE_FROM + 10]);
        let mut body = Splice::with_capacity(8);
        body.open().extend_from_slice(b"[");
        let Body::Two([first, last]) = body.end_with(&long, 5..SHARE_FROM + 5) else {
            panic!("a long end is referenced")
        };
        assert_eq!(&first[..], b"[");
        assert_eq!(last.as_ptr(), long[5..].as_ptr());
        assert_eq!(last.len(), SHARE_FROM);
        let mut body = Splice::with_capacity(0);
        body.open().extend_from_slice(b"[");
        let Body::One(one) = body.end_with(&long, 0..SHARE_FROM - 1) else {
            panic!("a short end is copied")
        };
        assert_eq!(one.len(), SHARE_FROM);
        assert_eq!(&one[..2], b"[a");
        // Nothing before it: the piece alone, copied (no empty chunk).
        let Body::One(one) = Splice::with_capacity(0).end_with(&long, 0..SHARE_FROM) else {
            panic!("no empty first chunk")
        };
        assert_eq!(one.len(), SHARE_FROM);
    }

    #[test]
    fn a_stamped_result_matches_a_serialized_one() {
        use crate::protocol::{CallToolResult, ContentBlock, JsonObject};
        let info = Arc::new(Implementation::new("s \"q\"", "1.0"));
        let stamp = Stamp::new(info.clone());
        let mut with_extra = CallToolResult::text("x");
        with_extra
            .meta
            .extra
            .insert("com.example/k".into(), serde_json::json!(1));
        let mut annotated = CallToolResult::new(vec![
            ContentBlock::text("a"),
            ContentBlock::image_base64("aGk=", "image/png"),
        ]);
        annotated.is_error = Some(false);
        let mut annotated_text = ContentBlock::text("t");
        if let ContentBlock::Text { annotations, .. } = &mut annotated_text {
            *annotations = Some(crate::protocol::Annotations::default());
        }
        let mut meta_block = ContentBlock::text("m");
        if let ContentBlock::Text { meta, .. } = &mut meta_block {
            *meta = Some(JsonObject::new());
        }
        let cases = [
            CallToolResult::text("plain \"quoted\" \u{1} é"),
            CallToolResult::error("failed"),
            CallToolResult::new(vec![]),
            CallToolResult::new(vec![ContentBlock::text("a"), ContentBlock::text("b")]),
            CallToolResult::structured(serde_json::json!({"n": 1})),
            CallToolResult::new(vec![meta_block]),
            CallToolResult::new(vec![annotated_text]),
            annotated,
            with_extra,
        ];
        for (i, case) in cases.into_iter().enumerate() {
            for id in [RequestId::Number(7), RequestId::from("a \"b\"")] {
                let mut expected = case.clone();
                expected.meta.server_info = Some(info.clone());
                let mut stamped = case.clone();
                assert_eq!(
                    Reply::stamped(&id, &mut stamped, &stamp),
                    Reply::result(&id, &expected),
                    "case {i}"
                );
            }
        }
    }

    #[test]
    fn other_stamped_results_match_serialized_ones() {
        use crate::protocol::{InputRequiredResult, StampResult, TaskAck};
        fn check<T: Serialize + StampResult + Clone>(case: T, info: &Arc<Implementation>) {
            let id = RequestId::Number(3);
            let mut expected = case.clone();
            expected.meta_mut().server_info = Some(info.clone());
            let mut stamped = case;
            assert_eq!(
                Reply::stamped(&id, &mut stamped, &Stamp::new(info.clone())),
                Reply::result(&id, &expected)
            );
        }
        let info = Arc::new(Implementation::new("s", "2.0"));
        check(TaskAck::default(), &info);
        check(InputRequiredResult::new(None, Some("st".into())), &info);
    }
}
