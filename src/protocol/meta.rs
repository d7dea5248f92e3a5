//! The per-request `_meta` object that makes every request self-describing.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::value::RawValue;

use super::JsonObject;
use super::capabilities::{ClientCapabilities, Implementation};
use super::error::ErrorObject;
use super::ids::ProgressToken;
use super::keys::{CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY, LOG_LEVEL_KEY, PROTOCOL_VERSION_KEY};
use super::notification::LoggingLevel;
use super::strict::Str;

/// The validated `_meta` of a request.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct RequestMeta {
    /// `io.modelcontextprotocol/protocolVersion`.
    #[serde(rename = "io.modelcontextprotocol/protocolVersion")]
    pub protocol_version: String,
    /// `io.modelcontextprotocol/clientCapabilities`.
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities")]
    pub client_capabilities: ClientCapabilities,
    /// `io.modelcontextprotocol/clientInfo`: self-reported, for display and logs only.
    #[serde(
        rename = "io.modelcontextprotocol/clientInfo",
        skip_serializing_if = "Option::is_none"
    )]
    pub client_info: Option<Implementation>,
    /// `io.modelcontextprotocol/logLevel`: without it, no log messages for this request.
    #[serde(
        rename = "io.modelcontextprotocol/logLevel",
        skip_serializing_if = "Option::is_none"
    )]
    pub log_level: Option<LoggingLevel>,
    /// `progressToken`: opts the request into progress notifications.
    #[serde(rename = "progressToken", skip_serializing_if = "Option::is_none")]
    pub progress_token: Option<ProgressToken>,
    /// W3C `traceparent`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub traceparent: Option<String>,
    /// W3C `tracestate`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tracestate: Option<String>,
    /// W3C `baggage`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baggage: Option<String>,
    /// Every other key (application keys such as `com.example/tenant`).
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl RequestMeta {
    /// A `_meta` for `version` with the given client capabilities (handy for clients and tests).
    pub fn new(version: impl Into<String>, client_capabilities: ClientCapabilities) -> Self {
        RequestMeta {
            protocol_version: version.into(),
            client_capabilities,
            client_info: None,
            log_level: None,
            progress_token: None,
            traceparent: None,
            tracestate: None,
            baggage: None,
            extra: JsonObject::new(),
        }
    }

    /// Reads `params._meta` from the raw `params` of a request.
    ///
    /// A missing `params`, `_meta` or required field, or a field of the wrong type, is a
    /// `-32602` error naming what is wrong.
    pub fn from_params(params: Option<&RawValue>) -> Result<Self, ErrorObject> {
        #[derive(Deserialize)]
        struct MetaOnly<'a> {
            #[serde(rename = "_meta", borrow, default)]
            meta: Option<&'a RawValue>,
        }
        let params = params.ok_or_else(|| {
            ErrorObject::invalid_params("Missing params: every request carries params._meta")
        })?;
        let meta = super::strict::object::<_, MetaOnly<'_>>(
            &mut serde_json::Deserializer::from_str(params.get()),
        )
        .map_err(|_| ErrorObject::invalid_params("params must be an object"))?
        .meta
        .ok_or_else(|| ErrorObject::invalid_params("Missing params._meta"))?;
        Self::from_raw(Some(meta))
    }

    /// Reads an already-located raw `_meta` value (`None` when `params._meta` is missing).
    pub fn from_raw(raw: Option<&RawValue>) -> Result<Self, ErrorObject> {
        let raw = raw.ok_or_else(|| ErrorObject::invalid_params("Missing params._meta"))?;
        Self::parse(raw)
    }

    fn parse(raw: &RawValue) -> Result<Self, ErrorObject> {
        let wire = MetaWire::from_raw(raw)?;
        wire.check()?;
        Ok(wire.into_meta())
    }
}

impl<'a> MetaWire<'a> {
    /// Reads a raw `_meta` value, borrowing from it (`-32602` when it is not an object of
    /// the expected members; the required ones are checked by [`check`](Self::check)).
    pub(crate) fn from_raw(raw: &'a RawValue) -> Result<Self, ErrorObject> {
        BoxedMeta::from_raw(raw).map(|b| *b.0)
    }
}

impl<'a> BoxedMeta<'a> {
    /// [`MetaWire::from_raw`], read into its box.
    pub(crate) fn from_raw(raw: &'a RawValue) -> Result<Self, ErrorObject> {
        super::strict::object(&mut serde_json::Deserializer::from_str(raw.get()))
            .map_err(|e| ErrorObject::invalid_params(format!("Invalid params._meta: {e}")))
    }
}

impl MetaWire<'_> {
    /// Whether the required fields are there (`-32602` naming the first one missing).
    pub(crate) fn check(&self) -> Result<(), ErrorObject> {
        if self.protocol_version.is_none() {
            return Err(ErrorObject::invalid_params(format!(
                "Missing required _meta field {PROTOCOL_VERSION_KEY}"
            )));
        }
        if self.client_capabilities.is_none() {
            return Err(ErrorObject::invalid_params(format!(
                "Missing required _meta field {CLIENT_CAPABILITIES_KEY}"
            )));
        }
        Ok(())
    }

    /// `io.modelcontextprotocol/protocolVersion` as sent (empty when missing: see
    /// [`check`](Self::check)).
    pub(crate) fn protocol_version(&self) -> &str {
        self.protocol_version.as_ref().map_or("", |v| &v.0)
    }

    /// The client's self-reported name, if sent.
    pub(crate) fn client_name(&self) -> Option<&str> {
        self.client_info.as_ref().map(|i| &*i.name.0)
    }

    /// `traceparent`, if sent.
    pub(crate) fn traceparent(&self) -> Option<&str> {
        self.rest.traceparent.as_deref()
    }

    /// `tracestate`, if sent.
    pub(crate) fn tracestate(&self) -> Option<&str> {
        self.rest.tracestate.as_deref()
    }

    /// The validated `_meta`, owned (after [`check`](Self::check); a missing required field
    /// is left empty).
    pub(crate) fn into_meta(self) -> RequestMeta {
        self.rest.into_meta(
            (self.protocol_version)
                .map(|v| v.0.into_owned())
                .unwrap_or_default(),
            self.client_capabilities.unwrap_or_default(),
            self.client_info.map(ImplementationRef::into_owned),
            self.log_level,
        )
    }
}

/// Who a client said it is and what it can do, as it said it once for many requests (a
/// legacy session's `initialize`): shared by those requests, not copied into each.
#[derive(Debug, PartialEq)]
pub(crate) struct ClientIdentity {
    /// The negotiated protocol version.
    pub(crate) protocol_version: String,
    /// What the client declared.
    pub(crate) capabilities: ClientCapabilities,
    /// Who the client said it is.
    pub(crate) client_info: Option<Implementation>,
}

impl MetaWire<'_> {
    /// The `_meta` of a legacy request: the protocol version, capabilities and clientInfo
    /// of its session (`identity`, shared), the session's log level, and what the request
    /// sent itself (`progressToken`, trace context, other keys).
    pub(crate) fn with_identity(
        mut self: Box<Self>,
        identity: Arc<ClientIdentity>,
        log_level: Option<LoggingLevel>,
    ) -> SessionMeta {
        SessionMeta {
            identity,
            log_level,
            rest: std::mem::take(&mut self.rest),
        }
    }
}

/// A legacy request's `_meta`: its session's [`ClientIdentity`], shared, and what the
/// request sent. The owned [`RequestMeta`] is built only for a handler that asks.
#[derive(Debug, Clone)]
pub(crate) struct SessionMeta {
    identity: Arc<ClientIdentity>,
    log_level: Option<LoggingLevel>,
    rest: MetaRest,
}

impl SessionMeta {
    /// `io.modelcontextprotocol/protocolVersion`: the session's.
    pub(crate) fn protocol_version(&self) -> &str {
        &self.identity.protocol_version
    }

    /// The capabilities the session's client declared.
    pub(crate) fn client_capabilities(&self) -> &ClientCapabilities {
        &self.identity.capabilities
    }

    /// The client's self-reported name, if it sent one.
    pub(crate) fn client_name(&self) -> Option<&str> {
        self.identity.client_info.as_ref().map(|i| i.name.as_str())
    }

    /// The session's log level, if set.
    pub(crate) fn log_level(&self) -> Option<LoggingLevel> {
        self.log_level
    }

    /// `progressToken`, if sent.
    pub(crate) fn progress_token(&self) -> Option<&ProgressToken> {
        self.rest.progress_token.as_ref()
    }

    /// `traceparent`, if sent.
    pub(crate) fn traceparent(&self) -> Option<&str> {
        self.rest.traceparent.as_deref()
    }

    /// `tracestate`, if sent.
    pub(crate) fn tracestate(&self) -> Option<&str> {
        self.rest.tracestate.as_deref()
    }

    /// The owned `_meta` (the session's members copied).
    pub(crate) fn build(&self) -> RequestMeta {
        self.clone().into_meta()
    }

    /// [`build`](Self::build), taking what the request sent instead of copying it.
    pub(crate) fn into_meta(self) -> RequestMeta {
        let identity = &*self.identity;
        self.rest.into_meta(
            identity.protocol_version.clone(),
            identity.capabilities.clone(),
            identity.client_info.clone(),
            self.log_level,
        )
    }
}

/// What a request's `_meta` carries besides the client's identity, its capabilities and
/// the log level, kept as sent by both [`MetaWire`] and [`DeferredMeta`].
#[derive(Debug, Clone, Default)]
struct MetaRest {
    progress_token: Option<ProgressToken>,
    traceparent: Option<String>,
    tracestate: Option<String>,
    baggage: Option<String>,
    /// Every other key.
    extra: JsonObject,
}

impl MetaRest {
    /// The owned `_meta` of these and the given members.
    fn into_meta(
        self,
        protocol_version: String,
        client_capabilities: ClientCapabilities,
        client_info: Option<Implementation>,
        log_level: Option<LoggingLevel>,
    ) -> RequestMeta {
        RequestMeta {
            protocol_version,
            client_capabilities,
            client_info,
            log_level,
            progress_token: self.progress_token,
            traceparent: self.traceparent,
            tracestate: self.tracestate,
            baggage: self.baggage,
            extra: self.extra,
        }
    }
}

impl MetaWire<'_> {
    /// The checked `_meta` of a request whose protocol version is `version` (one of the
    /// server's, found equal to the one sent), with its borrowed strings kept as places in
    /// `body`, the text it was read from: nothing is copied until
    /// [`DeferredMeta::build`] is asked for the owned form.
    pub(crate) fn defer(self, version: &'static str, body: &[u8]) -> DeferredMeta {
        let client_info = self.client_info.map(|i| DeferredImplementation {
            name: BodyText::new(i.name, body),
            version: BodyText::new(i.version, body),
            title: i.title.map(|t| BodyText::new(t, body)),
            description: i.description.map(|t| BodyText::new(t, body)),
            website_url: i.website_url.map(|t| BodyText::new(t, body)),
            icons: i.icons,
        });
        DeferredMeta {
            protocol_version: version,
            client_capabilities: self.client_capabilities.unwrap_or_default(),
            client_info,
            log_level: self.log_level,
            rest: self.rest,
        }
    }
}

/// A checked `_meta` as read from a request body, its strings not yet copied out of the
/// body ([`MetaWire::defer`]). What dispatch decides on (capabilities, log level, progress
/// token) is at hand; the owned [`RequestMeta`] is built only for a handler that asks.
#[derive(Debug, Clone)]
// Not a `RequestMeta` for the owned members: its protocol version and `clientInfo` would
// sit unused, and this is moved whole a few times per request.
pub(crate) struct DeferredMeta {
    protocol_version: &'static str,
    client_capabilities: ClientCapabilities,
    client_info: Option<DeferredImplementation>,
    log_level: Option<LoggingLevel>,
    rest: MetaRest,
}

impl DeferredMeta {
    /// `io.modelcontextprotocol/protocolVersion`.
    pub(crate) fn protocol_version(&self) -> &'static str {
        self.protocol_version
    }

    /// `io.modelcontextprotocol/clientCapabilities`.
    pub(crate) fn client_capabilities(&self) -> &ClientCapabilities {
        &self.client_capabilities
    }

    /// `io.modelcontextprotocol/logLevel`, if sent.
    pub(crate) fn log_level(&self) -> Option<LoggingLevel> {
        self.log_level
    }

    /// `progressToken`, if sent.
    pub(crate) fn progress_token(&self) -> Option<&ProgressToken> {
        self.rest.progress_token.as_ref()
    }

    /// The owned `_meta`, its strings copied from `body` (the text [`MetaWire::defer`] was
    /// given): the same [`RequestMeta`] as [`MetaWire::into_meta`] makes.
    pub(crate) fn build(&self, body: &[u8]) -> RequestMeta {
        self.clone().into_meta(body)
    }

    /// [`build`](Self::build), taking this one's members instead of copying them.
    pub(crate) fn into_meta(self, body: &[u8]) -> RequestMeta {
        let client_info = self.client_info.map(|i| Implementation {
            name: i.name.owned(body),
            version: i.version.owned(body),
            title: i.title.map(|t| t.owned(body)),
            description: i.description.map(|t| t.owned(body)),
            website_url: i.website_url.map(|t| t.owned(body)),
            icons: i.icons,
        });
        self.rest.into_meta(
            self.protocol_version.to_owned(),
            self.client_capabilities,
            client_info,
            self.log_level,
        )
    }
}

/// `clientInfo` whose strings are places in the body ([`DeferredMeta`]).
#[derive(Debug, Clone)]
struct DeferredImplementation {
    name: BodyText,
    version: BodyText,
    title: Option<BodyText>,
    description: Option<BodyText>,
    website_url: Option<BodyText>,
    icons: Option<Vec<super::annotations::Icon>>,
}

/// A JSON string of a request body: where its text is in the body (a string without
/// escapes, borrowed when read), or its unescaped text.
#[derive(Debug, Clone)]
enum BodyText {
    /// `body[start..end]`.
    At(usize, usize),
    /// A string with escapes, unescaped.
    Text(String),
}

impl BodyText {
    fn new(s: Str<'_>, body: &[u8]) -> Self {
        match s.0 {
            Cow::Borrowed(text) => match super::strict::offset_in(body, text) {
                Some(at) => BodyText::At(at, at + text.len()),
                None => BodyText::Text(text.to_owned()),
            },
            Cow::Owned(text) => BodyText::Text(text),
        }
    }

    /// The text, copied (empty if `body` is not the text this was read from).
    fn owned(&self, body: &[u8]) -> String {
        match self {
            BodyText::At(start, end) => body
                .get(*start..*end)
                .and_then(|b| std::str::from_utf8(b).ok())
                .unwrap_or_default()
                .to_owned(),
            BodyText::Text(text) => text.clone(),
        }
    }
}

/// `_meta` as sent: every known key typed, every other key kept as JSON.
///
/// Read in one pass by hand: a derived `Deserialize` with `#[serde(flatten)]` for the other
/// keys would first buffer the whole object, on every request. Only JSON objects are
/// accepted. Dispatch reads it straight from the request body along with the rest of the
/// message ([`MetaWire::check`] then checks the required fields). The protocol version and
/// `clientInfo` stay borrowed from the body: only a request that runs a handler turns them
/// into an owned [`RequestMeta`] ([`MetaWire::into_meta`]).
#[derive(Default)]
pub(crate) struct MetaWire<'a> {
    protocol_version: Option<Str<'a>>,
    client_capabilities: Option<ClientCapabilities>,
    client_info: Option<ImplementationRef<'a>>,
    log_level: Option<LoggingLevel>,
    rest: MetaRest,
}

/// `clientInfo` as sent: an [`Implementation`] whose strings are borrowed from the body
/// (same fields, same rules: it accepts exactly what `Implementation` accepts).
#[derive(Deserialize)]
struct ImplementationRef<'a> {
    #[serde(borrow)]
    name: Str<'a>,
    #[serde(borrow)]
    version: Str<'a>,
    #[serde(default, borrow)]
    title: Option<Str<'a>>,
    #[serde(default, borrow)]
    description: Option<Str<'a>>,
    #[serde(default, rename = "websiteUrl", borrow)]
    website_url: Option<Str<'a>>,
    #[serde(default)]
    icons: Option<Vec<super::annotations::Icon>>,
}

impl ImplementationRef<'_> {
    fn into_owned(self) -> Implementation {
        let owned = |s: Str<'_>| s.0.into_owned();
        Implementation {
            name: owned(self.name),
            version: owned(self.version),
            title: self.title.map(owned),
            description: self.description.map(owned),
            website_url: self.website_url.map(owned),
            icons: self.icons,
        }
    }
}

/// A JSON object or `null` (never an array read by position).
struct ObjectOrNull<T>(Option<T>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for ObjectOrNull<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        super::strict::option_object(d).map(ObjectOrNull)
    }
}

/// Reads the next value into `slot`; a key seen twice is an error.
fn fill<'de, A: MapAccess<'de>, T: Deserialize<'de>>(
    map: &mut A,
    slot: &mut Option<T>,
    key: &'static str,
) -> Result<(), A::Error> {
    if slot.is_some() {
        return Err(de::Error::duplicate_field(key));
    }
    *slot = map.next_value()?;
    Ok(())
}

impl<'de: 'a, 'a> Deserialize<'de> for MetaWire<'a> {
    // Through `BoxedMeta` (the per-request reads are boxed; this one is for the rarer
    // step-by-step read).
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        BoxedMeta::deserialize(d).map(|b| *b.0)
    }
}

/// A `_meta` read straight into its box: [`MetaWire`] is over 500 bytes, and read by value
/// it is moved out of the reader and into a box (two copies on every request).
pub(crate) struct BoxedMeta<'a>(pub(crate) Box<MetaWire<'a>>);

impl<'de: 'a, 'a> Deserialize<'de> for BoxedMeta<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = BoxedMeta<'a>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("the _meta object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<BoxedMeta<'a>, A::Error> {
                let mut w = Box::<MetaWire<'a>>::default();
                read_members(&mut map, &mut w)?;
                Ok(BoxedMeta(w))
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

/// Reads the members of a `_meta` object into `w` (see [`MetaWire`]).
fn read_members<'de: 'a, 'a, A: MapAccess<'de>>(
    map: &mut A,
    w: &mut MetaWire<'a>,
) -> Result<(), A::Error> {
    while let Some(super::strict::Str(key)) = map.next_key()? {
        match &*key {
            PROTOCOL_VERSION_KEY => fill(map, &mut w.protocol_version, PROTOCOL_VERSION_KEY)?,
            CLIENT_CAPABILITIES_KEY => {
                if w.client_capabilities.is_some() {
                    return Err(de::Error::duplicate_field(CLIENT_CAPABILITIES_KEY));
                }
                w.client_capabilities = map.next_value::<ObjectOrNull<_>>()?.0;
            }
            CLIENT_INFO_KEY => {
                if w.client_info.is_some() {
                    return Err(de::Error::duplicate_field(CLIENT_INFO_KEY));
                }
                w.client_info = map.next_value::<ObjectOrNull<_>>()?.0;
            }
            LOG_LEVEL_KEY => fill(map, &mut w.log_level, LOG_LEVEL_KEY)?,
            "progressToken" => fill(map, &mut w.rest.progress_token, "progressToken")?,
            "traceparent" => fill(map, &mut w.rest.traceparent, "traceparent")?,
            "tracestate" => fill(map, &mut w.rest.tracestate, "tracestate")?,
            "baggage" => fill(map, &mut w.rest.baggage, "baggage")?,
            _ => {
                let value = map.next_value()?;
                w.rest.extra.insert(key.into_owned(), value);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(params: &str) -> Result<RequestMeta, ErrorObject> {
        let raw: Box<RawValue> = serde_json::from_str(params).unwrap();
        RequestMeta::from_params(Some(&raw))
    }

    #[test]
    fn required_fields() {
        let ok = parse(
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":"t"}}"#,
        )
        .unwrap();
        assert_eq!(ok.protocol_version, "2026-07-28");
        assert_eq!(ok.progress_token, Some("t".into()));
        for bad in [
            r#"{}"#,
            r#"[]"#,
            r#"{"_meta":{}}"#,
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#,
            r#"{"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}"#,
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":5,"io.modelcontextprotocol/clientCapabilities":{}}}"#,
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"loud"}}"#,
        ] {
            assert_eq!(parse(bad).unwrap_err().code, -32602, "{bad}");
        }
        assert_eq!(RequestMeta::from_params(None).unwrap_err().code, -32602);
        for bad in [
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":[]}}"#,
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}"#,
        ] {
            assert_eq!(parse(bad).unwrap_err().code, -32602, "{bad}");
        }
    }

    /// The `_meta` reader against an independent read of the same text: a plain
    /// `serde_json::Value`, each known member taken out and read with its own type (`null`
    /// as absent; capabilities and clientInfo objects only), every other member kept as it
    /// is. Each valid input gives every field a value of its own, so a member read into the
    /// wrong field, dropped, or left in `extra` shows.
    #[test]
    fn reader_agrees_with_a_plain_json_read() {
        fn read(text: &str) -> Option<RequestMeta> {
            let meta = serde_json::from_str::<BoxedMeta<'_>>(text).ok()?;
            Some(meta.0.into_meta())
        }
        fn take<T: serde::de::DeserializeOwned>(
            object: &mut JsonObject,
            key: &str,
        ) -> Result<Option<T>, ()> {
            match object.remove(key) {
                None | Some(serde_json::Value::Null) => Ok(None),
                Some(value) => serde_json::from_value(value).map(Some).map_err(drop),
            }
        }
        fn take_object<T: serde::de::DeserializeOwned>(
            object: &mut JsonObject,
            key: &str,
        ) -> Result<Option<T>, ()> {
            match object.get(key) {
                None | Some(serde_json::Value::Null | serde_json::Value::Object(_)) => {
                    take(object, key)
                }
                Some(_) => Err(()),
            }
        }
        fn plain(text: &str) -> Option<RequestMeta> {
            let serde_json::Value::Object(mut o) = serde_json::from_str(text).ok()? else {
                return None;
            };
            let protocol_version = take::<String>(&mut o, PROTOCOL_VERSION_KEY).ok()?;
            Some(RequestMeta {
                protocol_version: protocol_version.unwrap_or_default(),
                client_capabilities: take_object(&mut o, CLIENT_CAPABILITIES_KEY)
                    .ok()?
                    .unwrap_or_default(),
                client_info: take_object(&mut o, CLIENT_INFO_KEY).ok()?,
                log_level: take(&mut o, LOG_LEVEL_KEY).ok()?,
                progress_token: take(&mut o, "progressToken").ok()?,
                traceparent: take(&mut o, "traceparent").ok()?,
                tracestate: take(&mut o, "tracestate").ok()?,
                baggage: take(&mut o, "baggage").ok()?,
                extra: o,
            })
        }

        for text in [
            r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#,
            r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true},"sampling":{}},
                "io.modelcontextprotocol/clientInfo":{"name":"c","version":"1","title":"T"},"io.modelcontextprotocol/logLevel":"warning",
                "progressToken":"tok","traceparent":"tp","tracestate":"ts","baggage":"bg","com.example/x":[1],"other":{"a":null}}"#,
            // Another order, a number token, escapes in keys and values.
            r#"{"baggage":"b\"g","progress\u0054oken":7,"io.modelcontextprotocol/logLevel":"debug","tracestate":"t\u0073",
                "io.modelcontextprotocol/clientInfo":{"version":"2","name":"n\u00e9"},"com.example/t\u0065nant":{"id":1},
                "io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},"io.modelcontextprotocol/protocolVersion":"v\\1","traceparent":"p"}"#,
            // `null` members are absent; an unknown `null` is kept.
            r#"{"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/clientCapabilities":null,
                "io.modelcontextprotocol/clientInfo":null,"io.modelcontextprotocol/logLevel":null,"progressToken":null,"io.modelcontextprotocol/clientInfo2":null}"#,
            r#"{}"#,
        ] {
            let expected = plain(text).expect("a valid _meta");
            assert_eq!(read(text), Some(expected), "{text}");
        }

        for bad in [
            r#"[]"#,
            r#"{"io.modelcontextprotocol/protocolVersion":5}"#,
            r#"{"io.modelcontextprotocol/clientCapabilities":[]}"#,
            r#"{"io.modelcontextprotocol/clientInfo":{"name":5,"version":"1"}}"#,
            r#"{"io.modelcontextprotocol/clientInfo":["c","1"]}"#,
            r#"{"io.modelcontextprotocol/logLevel":"loud"}"#,
            r#"{"progressToken":{}}"#,
            r#"{"traceparent":5}"#,
        ] {
            assert_eq!(plain(bad), None, "{bad}");
            assert_eq!(read(bad), None, "{bad}");
        }
        // A member sent twice is refused (a plain read would keep the last one).
        assert_eq!(read(r#"{"progressToken":1,"progressToken":2}"#), None);
    }

    #[test]
    fn every_key_is_kept() {
        let meta = parse(
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{}},
                "io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/logLevel":"info",
                "progressToken":7,"traceparent":"tp","tracestate":"ts","baggage":"b","com.example/t\u0065nant":{"id":1},"io.modelcontextprotocol/clientInfo2":null}}"#,
        )
        .unwrap();
        assert_eq!(meta.client_info.as_ref().unwrap().name, "c");
        assert_eq!(meta.log_level, Some(LoggingLevel::Info));
        assert_eq!(meta.progress_token, Some(7.into()));
        assert!(meta.client_capabilities.roots.is_some());
        assert_eq!(
            (
                meta.traceparent.as_deref(),
                meta.tracestate.as_deref(),
                meta.baggage.as_deref()
            ),
            (Some("tp"), Some("ts"), Some("b"))
        );
        assert_eq!(
            meta.extra["com.example/tenant"],
            serde_json::json!({"id": 1})
        );
        assert_eq!(
            meta.extra["io.modelcontextprotocol/clientInfo2"],
            serde_json::Value::Null
        );
        let null_info = parse(
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":null}}"#,
        )
        .unwrap();
        assert!(null_info.client_info.is_none());
    }
}
