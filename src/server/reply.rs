//! One encoded JSON-RPC response ([`Reply`]): a typed result serialized once into a buffer
//! sized for it, a pre-encoded result with the id spliced in, or an error.
//!
//! May import: `protocol` only. `outcome` and `listen` both build on it.

use std::fmt;
use std::sync::Arc;

use bytes::Bytes;
use serde::Serialize;
use serde_json::value::RawValue;

use crate::protocol::{
    ErrorCode, ErrorObject, ErrorResponse, Implementation, RequestId, ResponseRef, SERVER_INFO_KEY,
    StampResult,
};

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
    member: Box<[u8]>,
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
            member: member.into_boxed_slice(),
        }
    }
}

/// One encoded JSON-RPC response.
#[derive(Clone, PartialEq, Eq)]
pub struct Reply {
    /// The JSON text of the response.
    pub body: Bytes,
    /// The error code, when the response is an error.
    pub error_code: Option<i32>,
    /// Set when the server is too busy to take the request: HTTP 503 with `Retry-After`.
    pub retry_after_secs: Option<u32>,
}

impl fmt::Debug for Reply {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reply")
            .field("body", &String::from_utf8_lossy(&self.body))
            .field("error_code", &self.error_code)
            .field("retry_after_secs", &self.retry_after_secs)
            .finish()
    }
}

impl Reply {
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
            Ok(()) => Reply {
                body: Bytes::from(body),
                error_code: None,
                retry_after_secs: None,
            },
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
        Reply {
            body: Bytes::from(body),
            error_code: None,
            retry_after_secs: None,
        }
    }

    /// A success response around a result encoded already (a pre-serialized list page or
    /// `server/discover`): the id is spliced in, the result copied once into a buffer of
    /// the exact size.
    pub(crate) fn encoded(id: &RequestId, result: &RawValue) -> Self {
        let result = result.get().as_bytes();
        Self::encoded_with(id, result.len(), |out| out.extend_from_slice(result))
    }

    /// A success response whose result `write` appends, already encoded, to the buffer (of
    /// which it needs about `size` bytes): the id is spliced in before it.
    pub(crate) fn encoded_with(
        id: &RequestId,
        size: usize,
        write: impl FnOnce(&mut Vec<u8>),
    ) -> Self {
        let id_len = match id {
            RequestId::Number(_) => 20,
            RequestId::String(s) => s.len() + 2,
        };
        let mut body = Vec::with_capacity(HEAD.len() + id_len + RESULT.len() + size + 1);
        body.extend_from_slice(HEAD);
        serde_json::to_writer(&mut body, id).expect("a request id always serializes");
        body.extend_from_slice(RESULT);
        write(&mut body);
        body.push(b'}');
        Reply {
            body: Bytes::from(body),
            error_code: None,
            retry_after_secs: None,
        }
    }

    /// The HTTP status this reply is sent with: 200, or the one its error code calls for.
    pub fn http_status(&self) -> u16 {
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
            body: Bytes::from(body),
            error_code: Some(code),
            retry_after_secs: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_encoded_result_matches_a_serialized_one() {
        let page = RawValue::from_string(r#"{"tools":[],"resultType":"complete"}"#.into()).unwrap();
        for id in [
            RequestId::Number(-7),
            RequestId::Number(i64::MAX),
            RequestId::from("a \"quoted\" id é"),
        ] {
            let spliced = Reply::encoded(&id, &page);
            assert_eq!(spliced, Reply::result(&id, &*page));
            let v: serde_json::Value = serde_json::from_slice(&spliced.body).unwrap();
            assert_eq!(v["result"]["resultType"], "complete");
        }
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
