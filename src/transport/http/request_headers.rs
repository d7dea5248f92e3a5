//! The headers the endpoint reads, found in one pass over the request's header map: the
//! `Host`/`Origin` guard, the in-flight bound (`Mcp-Method`), negotiation (`Accept`,
//! `Content-Type`), legacy sessions (`Mcp-Session-Id`), trace context (`traceparent`) and the
//! mirrored headers dispatch compares with the body. Each used to be its own lookup, hashing
//! its name; a request carries few headers, so walking them once is cheaper.
//!
//! Values are borrowed from the map; what each check makes of them stays with the check.

use http::header::{ACCEPT, CONTENT_TYPE, HOST, ORIGIN};
use http::{HeaderMap, HeaderName};

use super::headers::{IDEMPOTENCY_KEY, SESSION_ID};
use crate::mirrored::{Collector, Found, MirroredHeaders};
use crate::observability::TRACEPARENT;

/// What one pass found of the headers the endpoint reads.
#[derive(Debug)]
pub(crate) struct RequestHeaders<'a> {
    pub(crate) host: Found<'a>,
    pub(crate) origin: Found<'a>,
    pub(crate) accept: Found<'a>,
    pub(crate) content_type: Found<'a>,
    pub(crate) session_id: Found<'a>,
    pub(crate) traceparent: Found<'a>,
    /// `Idempotency-Key` (for tools that honour it).
    pub(crate) idempotency_key: Found<'a>,
    /// `Mcp-Method` as sent (the in-flight bound looks at its first value, undecoded).
    pub(crate) method: Found<'a>,
    /// The mirrored headers, decoded.
    pub(crate) mirror: MirroredHeaders<'a>,
}

impl<'a> RequestHeaders<'a> {
    /// Walks `headers` once.
    pub(crate) fn read(headers: &'a HeaderMap) -> Self {
        let (mut host, mut origin, mut accept, mut content_type) = Default::default();
        let (mut session_id, mut traceparent, mut idempotency_key) = Default::default();
        let mut mirrored = Collector::default();
        for (name, value) in headers {
            // Standard names compare as one byte; the others by their first letter first.
            let slot: &mut Found<'a> = if *name == HOST {
                &mut host
            } else if *name == ACCEPT {
                &mut accept
            } else if *name == CONTENT_TYPE {
                &mut content_type
            } else if *name == ORIGIN {
                &mut origin
            } else {
                let name = name.as_str();
                match name.as_bytes().first() {
                    Some(b'm') if mirrored.offer(name, value) => continue,
                    Some(b'm') if name == SESSION_ID => &mut session_id,
                    Some(b't') if name == TRACEPARENT => &mut traceparent,
                    Some(b'i') if name == IDEMPOTENCY_KEY => &mut idempotency_key,
                    _ => continue,
                }
            };
            slot.add(value);
        }
        RequestHeaders {
            host,
            origin,
            accept,
            content_type,
            session_id,
            traceparent,
            idempotency_key,
            method: mirrored.method(),
            mirror: mirrored.finish(),
        }
    }
}

/// Every value of a header `found` in `headers` as `name`: the one found, or (when it was
/// repeated, which is rare) all of them, looked up again.
pub(crate) fn all<'a>(
    found: Found<'a>,
    headers: &'a HeaderMap,
    name: HeaderName,
) -> impl Iterator<Item = &'a http::HeaderValue> {
    let again = found.repeated().then(|| headers.get_all(name));
    found
        .first()
        .filter(|_| again.is_none())
        .into_iter()
        .chain(again.into_iter().flatten())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mirrored::{self, Mirrored};
    use http::HeaderValue;

    fn map(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut m = HeaderMap::new();
        for (k, v) in pairs {
            m.append(
                HeaderName::from_bytes(k.as_bytes()).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        m
    }

    /// The one pass finds what a lookup of each header finds.
    fn agrees_with_lookups(h: &HeaderMap) {
        let read = RequestHeaders::read(h);
        let same = |found: Found<'_>, name: &str| {
            let looked_up = Found::lookup(h, name);
            assert_eq!(found.first(), h.get(name), "{name}");
            assert_eq!(found.repeated(), looked_up.repeated(), "{name}");
            assert_eq!(found.text(), looked_up.text(), "{name}");
        };
        same(read.host, "host");
        same(read.origin, "origin");
        same(read.accept, "accept");
        same(read.content_type, "content-type");
        same(read.session_id, SESSION_ID);
        same(read.traceparent, TRACEPARENT);
        same(read.method, mirrored::METHOD);
        assert_eq!(read.mirror, mirrored::mirrored(h));
    }

    #[test]
    fn one_pass_equals_lookups() {
        agrees_with_lookups(&HeaderMap::new());
        agrees_with_lookups(&map(&[
            ("host", "localhost:3000"),
            ("accept", "application/json, text/event-stream"),
            ("content-type", "application/json"),
            ("user-agent", "curl"),
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "=?base64?ZWNobw==?="),
            ("mcp-param-region", "eu"),
            (
                "traceparent",
                "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            ),
        ]));
        agrees_with_lookups(&map(&[
            ("origin", "http://localhost"),
            ("accept", "application/json"),
            ("accept", "text/event-stream"),
            ("mcp-session-id", "abc"),
            ("mcp-session-id", "def"),
            ("mcp-param-a", "1"),
            ("mcp-param-b", "2"),
            ("mcp-param-a", "3"),
            ("host", "a"),
            ("host", "b"),
        ]));
    }

    #[test]
    fn mirrored_values_borrow_the_map() {
        let h = map(&[
            ("mcp-method", " tools/list "),
            ("mcp-name", "a"),
            ("mcp-name", "b"),
        ]);
        let read = RequestHeaders::read(&h);
        assert!(matches!(
            read.mirror.method,
            Mirrored::Value(std::borrow::Cow::Borrowed("tools/list"))
        ));
        assert!(matches!(read.mirror.name, Mirrored::Invalid(_)));
        assert_eq!(read.method.first().unwrap(), " tools/list ");
    }

    #[test]
    fn all_values_of_a_repeated_header() {
        let h = map(&[("accept", "a"), ("accept", "b"), ("content-type", "c")]);
        let read = RequestHeaders::read(&h);
        let accept: Vec<_> = all(read.accept, &h, ACCEPT).collect();
        assert_eq!(accept, ["a", "b"]);
        let ct: Vec<_> = all(read.content_type, &h, CONTENT_TYPE).collect();
        assert_eq!(ct, ["c"]);
        assert_eq!(all(read.origin, &h, ORIGIN).count(), 0);
    }
}
