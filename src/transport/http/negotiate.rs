//! `Accept` and `Content-Type` negotiation.

use http::header::ACCEPT;
use http::{HeaderMap, HeaderValue};

use super::rejection::{NotAcceptable, UnsupportedMediaType};
use super::request_headers::all;
use crate::mirrored::Found;

/// What the client accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Accepts {
    /// `text/event-stream` may be sent (progress and log messages need it).
    pub(crate) sse: bool,
}

/// Whether a media-range parameter refuses the range (`q=0`).
fn refuses(param: &str) -> bool {
    ["q=0", "q=0.0", "q=0.00", "q=0.000"]
        .iter()
        .any(|zero| param.trim().eq_ignore_ascii_case(zero))
}

/// Reads `Accept` (`found` in `headers`): it must allow `application/json` (no header allows
/// everything).
pub(crate) fn accepts(found: Found<'_>, headers: &HeaderMap) -> Result<Accepts, NotAcceptable> {
    let Some(first) = found.first() else {
        return Ok(Accepts { sse: true });
    };
    // What MCP clients send (the spec's wording), recognised without parsing.
    if first.as_bytes() == b"application/json, text/event-stream" && !found.repeated() {
        return Ok(Accepts { sse: true });
    }
    let (mut json, mut sse) = (false, false);
    for value in all(found, headers, ACCEPT) {
        for part in value.to_str().unwrap_or("").split(',') {
            let mut pieces = part.split(';');
            let range = pieces.next().unwrap_or("").trim();
            if range.is_empty() || pieces.any(refuses) {
                continue;
            }
            let is = |r: &str| range.eq_ignore_ascii_case(r);
            json |= is("application/json") || is("application/*") || is("*/*");
            sse |= is("text/event-stream") || is("text/*") || is("*/*");
        }
    }
    if !json {
        return Err(NotAcceptable(
            "Not Acceptable: Accept must include application/json and text/event-stream".into(),
        ));
    }
    Ok(Accepts { sse })
}

/// Whether `Accept` (`found` in `headers`) allows `text/event-stream` (no header allows
/// everything): what a GET stream needs.
pub(crate) fn allows_event_stream(found: Found<'_>, headers: &HeaderMap) -> bool {
    if found.first().is_none() {
        return true;
    }
    all(found, headers, ACCEPT).any(|value| {
        value.to_str().unwrap_or("").split(',').any(|part| {
            let mut pieces = part.split(';');
            let range = pieces.next().unwrap_or("").trim();
            let is = |r: &str| range.eq_ignore_ascii_case(r);
            !pieces.any(refuses) && (is("text/event-stream") || is("text/*") || is("*/*"))
        })
    })
}

/// `Content-Type` (its first value), when present, must be JSON.
pub(crate) fn content_type(ct: Option<&HeaderValue>) -> Result<(), UnsupportedMediaType> {
    let Some(ct) = ct else {
        return Ok(());
    };
    if ct.as_bytes() == b"application/json" {
        return Ok(());
    }
    let essence = ct
        .to_str()
        .unwrap_or("")
        .split(';')
        .next()
        .unwrap_or("")
        .trim();
    let json_suffixed = |e: &str| {
        let (type_, subtype) = e.split_at(e.find('/').map_or(0, |i| i + 1));
        type_.eq_ignore_ascii_case("application/")
            && subtype.len() >= 5
            && subtype[subtype.len() - 5..].eq_ignore_ascii_case("+json")
    };
    if essence.eq_ignore_ascii_case("application/json") || json_suffixed(essence) {
        Ok(())
    } else {
        Err(UnsupportedMediaType(format!(
            "Unsupported Media Type {:?}: send application/json",
            essence.to_ascii_lowercase()
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::header::CONTENT_TYPE;

    fn accepts(h: &HeaderMap) -> Result<Accepts, NotAcceptable> {
        super::accepts(Found::lookup(h, ACCEPT), h)
    }

    fn allows_event_stream(h: &HeaderMap) -> bool {
        super::allows_event_stream(Found::lookup(h, ACCEPT), h)
    }

    fn content_type(h: &HeaderMap) -> Result<(), UnsupportedMediaType> {
        super::content_type(h.get(CONTENT_TYPE))
    }

    fn with_accept(v: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(ACCEPT, HeaderValue::from_str(v).unwrap());
        h
    }

    #[test]
    fn accept_rules() {
        assert!(
            accepts(&with_accept("application/json, text/event-stream"))
                .unwrap()
                .sse
        );
        assert!(
            accepts(&with_accept("text/event-stream, application/json"))
                .unwrap()
                .sse
        );
        assert!(!accepts(&with_accept("application/json")).unwrap().sse);
        assert!(accepts(&with_accept("*/*")).unwrap().sse);
        assert!(accepts(&with_accept("text/event-stream")).is_err());
        assert!(accepts(&with_accept("text/html")).is_err());
        assert!(accepts(&with_accept("application/json;q=0, text/event-stream")).is_err());
        assert!(accepts(&HeaderMap::new()).unwrap().sse);
        assert!(
            accepts(&with_accept("Application/JSON; Q=0.5, TEXT/*"))
                .unwrap()
                .sse
        );
        assert!(
            !accepts(&with_accept("application/*, text/event-stream;q=0"))
                .unwrap()
                .sse
        );
    }

    #[test]
    fn repeated_accept_headers_are_read_together() {
        let mut h = with_accept("application/json, text/event-stream");
        h.append(ACCEPT, HeaderValue::from_static("text/html"));
        assert!(accepts(&h).unwrap().sse);
        let mut h = with_accept("text/event-stream");
        assert!(accepts(&h).is_err());
        h.append(ACCEPT, HeaderValue::from_static("application/json"));
        assert!(accepts(&h).unwrap().sse);
        let mut h = with_accept("application/json");
        assert!(!allows_event_stream(&h));
        h.append(ACCEPT, HeaderValue::from_static("text/event-stream"));
        assert!(allows_event_stream(&h));
    }

    #[test]
    fn get_streams_need_event_stream() {
        assert!(allows_event_stream(&with_accept("text/event-stream")));
        assert!(allows_event_stream(&with_accept("*/*")));
        assert!(allows_event_stream(&HeaderMap::new()));
        assert!(!allows_event_stream(&with_accept("application/json")));
        assert!(!allows_event_stream(&with_accept("text/event-stream;q=0")));
    }

    #[test]
    fn content_types() {
        let mut h = HeaderMap::new();
        assert!(content_type(&h).is_ok());
        h.insert(
            CONTENT_TYPE,
            HeaderValue::from_static("application/json; charset=utf-8"),
        );
        assert!(content_type(&h).is_ok());
        h.insert(
            CONTENT_TYPE,
            HeaderValue::from_static("Application/Vnd.Api+JSON"),
        );
        assert!(content_type(&h).is_ok());
        for bad in [
            "text/plain",
            "text/x+json",
            "application",
            "application/jso",
        ] {
            h.insert(CONTENT_TYPE, HeaderValue::from_static(bad));
            assert!(content_type(&h).is_err(), "{bad}");
        }
    }
}
