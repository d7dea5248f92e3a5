//! `Accept` and `Content-Type` negotiation.

use http::HeaderMap;
use http::header::{ACCEPT, CONTENT_TYPE};

use super::rejection::{NotAcceptable, UnsupportedMediaType};

/// What the client accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Accepts {
    /// `text/event-stream` may be sent (progress and log messages need it).
    pub(crate) sse: bool,
}

fn ranges(headers: &HeaderMap) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut any = false;
    for v in headers.get_all(ACCEPT) {
        any = true;
        for part in v.to_str().unwrap_or("").split(',') {
            let mut pieces = part.split(';');
            let range = pieces.next().unwrap_or("").trim().to_ascii_lowercase();
            let refused = pieces.any(|p| {
                let p = p.trim().to_ascii_lowercase();
                p == "q=0" || p == "q=0.0" || p == "q=0.00" || p == "q=0.000"
            });
            if !range.is_empty() && !refused {
                out.push(range);
            }
        }
    }
    any.then_some(out)
}

/// Reads `Accept`: it must allow `application/json` (no header allows everything).
pub(crate) fn accepts(headers: &HeaderMap) -> Result<Accepts, NotAcceptable> {
    let Some(ranges) = ranges(headers) else {
        return Ok(Accepts { sse: true });
    };
    let has = |full: &str, family: &str| {
        ranges
            .iter()
            .any(|r| r == full || r == family || r == "*/*")
    };
    if !has("application/json", "application/*") {
        return Err(NotAcceptable(
            "Not Acceptable: Accept must include application/json and text/event-stream".into(),
        ));
    }
    Ok(Accepts {
        sse: has("text/event-stream", "text/*"),
    })
}

/// `Content-Type`, when present, must be JSON.
pub(crate) fn content_type(headers: &HeaderMap) -> Result<(), UnsupportedMediaType> {
    let Some(ct) = headers.get(CONTENT_TYPE) else {
        return Ok(());
    };
    let essence = ct
        .to_str()
        .unwrap_or("")
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    if essence == "application/json"
        || (essence.starts_with("application/") && essence.ends_with("+json"))
    {
        Ok(())
    } else {
        Err(UnsupportedMediaType(format!(
            "Unsupported Media Type {essence:?}: send application/json"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

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
        h.insert(CONTENT_TYPE, HeaderValue::from_static("text/plain"));
        assert!(content_type(&h).is_err());
    }
}
