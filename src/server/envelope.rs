//! Reading a request body: the JSON-RPC envelope, the params members dispatch needs, and
//! `_meta`, in one pass over the body when the request is well-formed.
//!
//! A well-formed request (the common case) is read once: envelope members, the raw params
//! members and the typed `_meta` together. When that read fails, the body is read again
//! step by step (envelope, then params, then `_meta`), so each step of the validation
//! ladder reports exactly what is wrong, with the code it calls for (`-32700`, `-32600`,
//! `-32602`). Both reads accept the same requests: the one-pass read is never more lenient.

use std::borrow::Cow;

use bytes::Bytes;
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;

use crate::handler::context_meta::ContextMeta;
use crate::protocol::strict::json_str;
use crate::protocol::{
    BoxedMeta, ErrorObject, IdField, IncomingMessage, MetaWire, RequestMeta, SessionMeta,
};

/// Every params member the dispatcher may need besides `_meta`, left raw; `_meta` as `M`
/// (raw, or already read).
#[derive(Deserialize)]
#[serde(bound(deserialize = "M: Deserialize<'de>"))]
pub(crate) struct ParamsView<'a, M = &'a RawValue> {
    #[serde(rename = "_meta", default)]
    pub(crate) meta: Option<M>,
    #[serde(borrow, default)]
    pub(crate) name: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(crate) uri: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(crate) arguments: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(crate) cursor: Option<&'a RawValue>,
    #[serde(
        rename = "inputResponses",
        borrow,
        default,
        deserialize_with = "present"
    )]
    pub(crate) input_responses: Option<&'a RawValue>,
    #[serde(rename = "requestState", borrow, default, deserialize_with = "present")]
    pub(crate) request_state: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    pub(crate) notifications: Option<&'a RawValue>,
    #[serde(rename = "taskId", borrow, default)]
    pub(crate) task_id: Option<&'a RawValue>,
}

impl<M> Default for ParamsView<'_, M> {
    fn default() -> Self {
        ParamsView {
            meta: None,
            name: None,
            uri: None,
            arguments: None,
            cursor: None,
            input_responses: None,
            request_state: None,
            notifications: None,
            task_id: None,
        }
    }
}

impl<'a, M> ParamsView<'a, M> {
    /// `_meta`, and the other members.
    fn split(self) -> (Option<M>, ParamsView<'a>) {
        let rest = ParamsView {
            meta: None,
            name: self.name,
            uri: self.uri,
            arguments: self.arguments,
            cursor: self.cursor,
            input_responses: self.input_responses,
            request_state: self.request_state,
            notifications: self.notifications,
            task_id: self.task_id,
        };
        (self.meta, rest)
    }
}

/// A member that is present, even as `null` (which plain `Option` would read as absent).
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// A JSON object or `null` only, as [`crate::protocol::strict`] reads it.
fn object_or_null<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    crate::protocol::strict::option_object(d)
}

/// The envelope read in one pass with params and `_meta` (see the module docs).
#[derive(Deserialize)]
struct OnePass<'a> {
    #[serde(default, borrow)]
    jsonrpc: Option<&'a RawValue>,
    #[serde(default)]
    id: IdField,
    #[serde(default, borrow)]
    method: Option<&'a RawValue>,
    // `_meta` read into its box: the params are moved several times on their way to the
    // method, and a `MetaWire` is over 500 bytes.
    #[serde(default, borrow, deserialize_with = "object_or_null")]
    params: Option<ParamsView<'a, BoxedMeta<'a>>>,
    #[serde(default, borrow)]
    result: Option<&'a RawValue>,
    #[serde(default, borrow)]
    error: Option<&'a RawValue>,
}

/// How far the params of a message have been read.
pub(crate) enum Params<'a> {
    /// Read with the envelope; `None` when absent or `null`.
    Read(Option<ParamsView<'a, BoxedMeta<'a>>>),
    /// Left raw, for the step-by-step read.
    Raw(Option<&'a RawValue>),
}

/// Raw params (absent or an object) as the raw `_meta` and the other members (`-32602`
/// when not an object).
fn raw_view(raw: Option<&RawValue>) -> Result<(Option<&RawValue>, ParamsView<'_>), ErrorObject> {
    let Some(raw) = raw else {
        return Ok((None, ParamsView::default()));
    };
    let view: ParamsView<'_> =
        crate::protocol::strict::object(&mut serde_json::Deserializer::from_str(raw.get()))
            .map_err(|e| ErrorObject::invalid_params(format!("Invalid params: {e}")))?;
    Ok(view.split())
}

impl<'a> Params<'a> {
    /// `params.name`, raw, when the one-pass read found it.
    pub(crate) fn name(&self) -> Option<&'a RawValue> {
        match self {
            Params::Read(Some(view)) => view.name,
            _ => None,
        }
    }

    /// The params members and the validated `_meta` (boxed: it is large and moved on to
    /// the method), still borrowed from the body (`-32602` when params is not an object,
    /// `_meta` is missing or invalid).
    pub(crate) fn read(self) -> Result<(ParamsView<'a>, Box<MetaWire<'a>>), ErrorObject> {
        let (meta, view) = match self {
            Params::Read(view) => {
                let (wire, view) = view.unwrap_or_default().split();
                let BoxedMeta(wire) =
                    wire.ok_or_else(|| ErrorObject::invalid_params("Missing params._meta"))?;
                wire.check()?;
                return Ok((view, wire));
            }
            Params::Raw(raw) => raw_view(raw)?,
        };
        let raw = meta.ok_or_else(|| ErrorObject::invalid_params("Missing params._meta"))?;
        let BoxedMeta(wire) = BoxedMeta::from_raw(raw)?;
        wire.check()?;
        Ok((view, wire))
    }

    /// The params members and the `_meta` as sent (boxed, as [`read`](Self::read)'s), for a
    /// legacy request (whose `_meta` carries no protocol version or capabilities: the
    /// session does). `-32602` when params or `_meta` is not an object.
    pub(crate) fn read_legacy(self) -> Result<(ParamsView<'a>, Box<MetaWire<'a>>), ErrorObject> {
        let (meta, view) = match self {
            Params::Read(view) => {
                let (wire, view) = view.unwrap_or_default().split();
                return Ok((view, wire.map(|w| w.0).unwrap_or_default()));
            }
            Params::Raw(raw) => raw_view(raw)?,
        };
        let wire = meta.map(BoxedMeta::from_raw).transpose()?;
        Ok((view, wire.map(|w| w.0).unwrap_or_default()))
    }
}

/// A request's validated `_meta` on its way to its method: still borrowed from the body (a
/// 2026 request), or a legacy request's (its session's identity and what it sent). Only
/// methods that run a handler make it an owned [`RequestMeta`], and only when asked.
pub(crate) enum Meta<'a> {
    /// Read from the body, checked; its protocol version is the server's `&'static str`
    /// equal to the one sent.
    Wire(Box<MetaWire<'a>>, &'static str),
    /// A legacy request's: its session's identity, shared, and what the request sent
    /// (boxed, as the read one is: this is moved on to the method).
    Session(Box<SessionMeta>),
}

impl Meta<'_> {
    /// The owned `_meta`.
    pub(crate) fn into_owned(self) -> RequestMeta {
        match self {
            Meta::Wire(wire, _) => (*wire).into_meta(),
            Meta::Session(meta) => meta.into_meta(),
        }
    }

    /// The `_meta` for a handler's context: a 2026 request's stays in `body` (the body it
    /// was read from) until the handler asks for it.
    pub(crate) fn into_context(self, body: &Bytes) -> ContextMeta {
        match self {
            Meta::Wire(wire, version) => {
                ContextMeta::deferred((*wire).defer(version, body), body.clone())
            }
            Meta::Session(meta) => ContextMeta::session(*meta),
        }
    }
}

/// One JSON-RPC message, its params read as far as the one-pass read got.
pub(crate) struct Message<'a> {
    pub(crate) jsonrpc: Option<&'a RawValue>,
    pub(crate) id: IdField,
    pub(crate) method: Option<&'a RawValue>,
    pub(crate) params: Params<'a>,
    pub(crate) result: Option<&'a RawValue>,
    pub(crate) error: Option<&'a RawValue>,
}

fn classify_unparsable(e: &serde_json::Error) -> ErrorObject {
    if !matches!(e.classify(), serde_json::error::Category::Data) {
        return ErrorObject::parse_error(format!("Parse error: {e}"));
    }
    ErrorObject::invalid_request(format!("Invalid Request: {e}"))
}

/// The body as text. JSON text is UTF-8 (RFC 8259 §8.1); serde_json checks the strings it
/// keeps but not the ones it skips (unknown members), so the whole body is checked once, up
/// front, and then parsed as `str`, which spares the per-string checks.
fn utf8(body: &[u8]) -> Result<&str, ErrorObject> {
    std::str::from_utf8(body)
        .map_err(|e| ErrorObject::parse_error(format!("Parse error: the body is not UTF-8 ({e})")))
}

/// The first non-whitespace byte of the body.
fn first_byte(body: &[u8]) -> Option<u8> {
    body.iter().copied().find(|b| !b.is_ascii_whitespace())
}

/// Reads the body as one JSON-RPC object, telling a syntax error (`-32700`) from valid JSON
/// of the wrong shape (`-32600`: batches, scalars, responses).
pub(crate) fn parse_message(body: &[u8]) -> Result<IncomingMessage<'_>, ErrorObject> {
    let text = utf8(body)?;
    let first = first_byte(body);
    if first != Some(b'{') {
        return match serde_json::from_str::<IgnoredAny>(text) {
            Err(e) => Err(ErrorObject::parse_error(format!("Parse error: {e}"))),
            Ok(_) if first == Some(b'[') => Err(ErrorObject::invalid_request(
                "Batch requests are not supported: send one JSON-RPC message per request",
            )),
            Ok(_) => Err(ErrorObject::invalid_request(
                "A JSON-RPC message must be a JSON object",
            )),
        };
    }
    serde_json::from_str(text).map_err(|e| classify_unparsable(&e))
}

/// Reads a message: in one pass when it is well-formed, else step by step (see the module
/// docs). `Err` is the envelope's own error (`-32700`, `-32600`).
pub(crate) fn read(body: &[u8]) -> Result<Message<'_>, ErrorObject> {
    let text = utf8(body)?;
    let one_pass = match first_byte(body) {
        Some(b'{') => serde_json::from_str::<OnePass<'_>>(text).ok(),
        _ => None,
    };
    if let Some(m) = one_pass {
        return Ok(Message {
            jsonrpc: m.jsonrpc,
            id: m.id,
            method: m.method,
            params: Params::Read(m.params),
            result: m.result,
            error: m.error,
        });
    }
    let m = parse_message(body)?;
    Ok(Message {
        jsonrpc: m.jsonrpc,
        id: m.id,
        method: m.method,
        params: Params::Raw(m.params),
        result: m.result,
        error: m.error,
    })
}

/// `text` as [`Bytes`]: a part of `body` shares it (a string read without escapes), any
/// other text is copied.
pub(crate) fn shared(body: &Bytes, text: &str) -> Bytes {
    match crate::protocol::strict::offset_in(body, text) {
        Some(at) => body.slice(at..at + text.len()),
        None => Bytes::copy_from_slice(text.as_bytes()),
    }
}

/// A params member that must be a string (`-32602` when missing or not a string).
pub(crate) fn string_field<'a>(
    raw: Option<&'a RawValue>,
    field: &str,
) -> Result<Cow<'a, str>, ErrorObject> {
    let raw =
        raw.ok_or_else(|| ErrorObject::invalid_params(format!("Missing required params.{field}")))?;
    json_str(raw)
        .ok_or_else(|| ErrorObject::invalid_params(format!("params.{field} must be a string")))
}

/// A params member that may be absent but must be a string when present.
pub(crate) fn optional_string<'a>(
    raw: Option<&'a RawValue>,
    field: &str,
) -> Result<Option<Cow<'a, str>>, ErrorObject> {
    raw.map(|r| string_field(Some(r), field)).transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

    /// What a body's params read to, through both reads.
    fn both(body: &str) -> [Result<(Option<String>, String), i32>; 2] {
        let one_pass = read(body.as_bytes()).map(|m| m.params);
        let stepwise = parse_message(body.as_bytes()).map(|m| Params::Raw(m.params));
        [one_pass, stepwise].map(|params| {
            let (view, meta) = params.map_err(|e| e.code)?.read().map_err(|e| e.code)?;
            Ok((
                view.name.map(|n| n.get().to_owned()),
                meta.protocol_version().to_owned(),
            ))
        })
    }

    #[test]
    fn a_body_that_is_not_utf8_is_a_parse_error_even_in_a_skipped_member() {
        // Found by the `envelope` fuzz target: the one-pass read skipped the unknown member
        // without checking its bytes, the step-by-step read refused the body.
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"echo","x":"",{META}}}}}"#
        );
        let mut bytes = body.into_bytes();
        let at = bytes.windows(5).position(|w| w == br#""x":""#).unwrap() + 5;
        bytes.insert(at, 0xe9);
        assert_eq!(read(&bytes).err().map(|e| e.code), Some(-32700));
        assert_eq!(parse_message(&bytes).err().map(|e| e.code), Some(-32700));
    }

    #[test]
    fn both_reads_agree() {
        for body in [
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"echo",{META}}}}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{{{META},"extra":[1,{{"a":null}}]}}}}"#),
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"name":"a"}}"#.into(),
            r#"{"jsonrpc":"2.0","id":1,"method":"x"}"#.into(),
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":null}"#.into(),
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}"#.into(),
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":[]}}"#.into(),
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":5}}}"#.into(),
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{{"name":"a","name":"b",{META}}}}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{{{META},{META}}}}}"#),
        ] {
            let [one_pass, stepwise] = both(&body);
            assert_eq!(one_pass, stepwise, "{body}");
        }
    }

    #[test]
    fn a_well_formed_request_is_read_in_one_pass() {
        let body = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{{{META}}}}}"#);
        assert!(matches!(
            read(body.as_bytes()).unwrap().params,
            Params::Read(Some(_))
        ));
        let bad = r#"{"jsonrpc":"2.0","id":1,"method":"x","params":[]}"#;
        assert!(matches!(
            read(bad.as_bytes()).unwrap().params,
            Params::Raw(Some(_))
        ));
    }

    #[test]
    fn the_params_of_a_read_message_are_small_to_move() {
        // They are moved several times on the way to the method; `_meta` (over 500 bytes)
        // is boxed as it is read, so each move copies a few pointers.
        assert!(std::mem::size_of::<MetaWire<'_>>() > 400);
        assert!(std::mem::size_of::<Params<'_>>() <= 160);
    }

    #[test]
    fn shared_text_is_the_same_text() {
        let body = Bytes::from_static(br#"{"name":"echo","other":"x"}"#);
        let text = std::str::from_utf8(&body).unwrap();
        let part = &text[9..13];
        let s = shared(&body, part);
        assert_eq!(&s[..], b"echo");
        assert_eq!(
            s.as_ptr(),
            part.as_ptr(),
            "a part of the body is not copied"
        );
        let elsewhere = String::from("echo");
        let s = shared(&body, &elsewhere);
        assert_eq!(&s[..], b"echo");
        assert_ne!(s.as_ptr(), elsewhere.as_ptr());
        // Text that starts inside the body but runs past its end is copied.
        let tail = &text[text.len() - 2..];
        assert_eq!(
            &shared(&body.slice(..body.len() - 1), tail)[..],
            tail.as_bytes()
        );
    }

    #[test]
    fn envelope_errors() {
        let code = |b: &str| read(b.as_bytes()).err().map(|e| e.code);
        assert_eq!(code("{"), Some(-32700));
        assert_eq!(code("[]"), Some(-32600));
        assert_eq!(code("7"), Some(-32600));
        assert_eq!(code(r#"{"id":1} x"#), Some(-32700));
        assert_eq!(code(r#"{"id":1,"id":2}"#), Some(-32600));
    }
}
