//! The mirrored MCP headers (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`,
//! `Mcp-Param-*`): the values a transport found ([`Mirrored`], [`MirroredHeaders`]) and
//! reading them off an HTTP request (one value each, visible ASCII, trimmed, and
//! `=?base64?…?=` decoded where the spec allows it).
//!
//! One place that every side reading these headers depends on: the HTTP transport (to hand
//! them to dispatch), dispatch (`server`, which compares them with the body) and the
//! resource server's scope rules (`auth`, which reads `Mcp-Method`/`Mcp-Name` before the
//! body), so all three decode them alike.
//!
//! May import: `http` and `base64` only; nothing else of the crate.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use http::header::AsHeaderName;
use http::{HeaderMap, HeaderName};

/// One mirrored header as the transport found it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Mirrored {
    /// Not sent.
    #[default]
    Absent,
    /// Sent once, trimmed and decoded.
    Value(String),
    /// Sent but unusable (repeated, bad characters, bad `=?base64?…?=` encoding).
    Invalid(String),
}

/// Every mirrored header of one request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MirroredHeaders {
    /// `MCP-Protocol-Version`.
    pub protocol_version: Mirrored,
    /// `Mcp-Method`.
    pub method: Mirrored,
    /// `Mcp-Name`.
    pub name: Mirrored,
    /// `Mcp-Param-{Name}` headers: lower-cased `{Name}` and value.
    pub params: Vec<(String, Mirrored)>,
}

impl Mirrored {
    /// The value, when the header was sent once and is usable.
    pub fn value(&self) -> Option<&str> {
        match self {
            Mirrored::Value(v) => Some(v),
            Mirrored::Absent | Mirrored::Invalid(_) => None,
        }
    }
}

/// `MCP-Protocol-Version`.
pub const PROTOCOL_VERSION: &str = "mcp-protocol-version";
/// `Mcp-Method`.
pub const METHOD: &str = "mcp-method";
/// `Mcp-Name`.
pub const NAME: &str = "mcp-name";
/// Prefix of `Mcp-Param-{Name}`.
pub const PARAM_PREFIX: &str = "mcp-param-";

/// The header names, parsed once.
const PROTOCOL_VERSION_HEADER: HeaderName = HeaderName::from_static(PROTOCOL_VERSION);
const METHOD_HEADER: HeaderName = HeaderName::from_static(METHOD);
const NAME_HEADER: HeaderName = HeaderName::from_static(NAME);

const SENTINEL_START: &str = "=?base64?";
const SENTINEL_END: &str = "?=";

/// Decodes a `=?base64?…?=` value; other values are literal.
fn decode(value: &str) -> Result<String, String> {
    match value
        .strip_prefix(SENTINEL_START)
        .and_then(|v| v.strip_suffix(SENTINEL_END))
    {
        None => Ok(value.to_owned()),
        Some(b64) => {
            let bytes = STANDARD
                .decode(b64)
                .map_err(|e| format!("invalid base64 in =?base64?...?= value: {e}"))?;
            String::from_utf8(bytes).map_err(|_| "base64 value is not UTF-8".to_owned())
        }
    }
}

/// Reads one mirrored header: sent once, visible ASCII, trimmed, and (when `encoded`)
/// `=?base64?…?=` decoded.
pub(crate) fn read(headers: &HeaderMap, name: impl AsHeaderName, encoded: bool) -> Mirrored {
    let mut values = headers.get_all(name).iter();
    let Some(first) = values.next() else {
        return Mirrored::Absent;
    };
    if values.next().is_some() {
        return Mirrored::Invalid("the header is repeated".into());
    }
    // `to_str` accepts visible ASCII, space and tab only: no control characters get past it.
    let Ok(text) = first.to_str() else {
        return Mirrored::Invalid("the value must be visible ASCII (use =?base64?...?=)".into());
    };
    let text = text.trim_matches([' ', '\t']);
    if !encoded {
        return Mirrored::Value(text.to_owned());
    }
    match decode(text) {
        Ok(v) => Mirrored::Value(v),
        Err(e) => Mirrored::Invalid(e),
    }
}

/// Every mirrored header of a request.
pub(crate) fn mirrored(headers: &HeaderMap) -> MirroredHeaders {
    let mut params: Vec<(String, Mirrored)> = Vec::new();
    for name in headers.keys() {
        if let Some(suffix) = name.as_str().strip_prefix(PARAM_PREFIX) {
            params.push((suffix.to_owned(), read(headers, name, true)));
        }
    }
    MirroredHeaders {
        protocol_version: read(headers, &PROTOCOL_VERSION_HEADER, false),
        method: read(headers, &METHOD_HEADER, false),
        name: read(headers, &NAME_HEADER, true),
        params,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    #[test]
    fn base64_sentinel() {
        assert_eq!(decode("=?base64?SGVsbG8=?=").unwrap(), "Hello");
        assert!(decode("=?base64?SGVsbG8?=").is_err(), "padding is required");
        assert!(decode("=?base64?SGVs!!!bG8=?=").is_err());
        assert_eq!(decode("SGVsbG8=").unwrap(), "SGVsbG8=");
        assert_eq!(decode("=?base64?SGVsbG8=").unwrap(), "=?base64?SGVsbG8=");
        assert_eq!(
            decode("=?BASE64?SGVsbG8=?=").unwrap(),
            "=?BASE64?SGVsbG8=?="
        );
    }

    #[test]
    fn reading() {
        let mut h = HeaderMap::new();
        h.insert("MCP-METHOD", HeaderValue::from_static("  tools/list "));
        h.append("mcp-name", HeaderValue::from_static("a"));
        h.append("mcp-name", HeaderValue::from_static("b"));
        h.insert(
            "mcp-param-region",
            HeaderValue::from_static("=?base64?ZXU=?="),
        );
        h.insert(
            "mcp-protocol-version",
            HeaderValue::from_bytes(b"2026\xff").unwrap(),
        );
        let m = mirrored(&h);
        assert_eq!(m.method, Mirrored::Value("tools/list".into()));
        assert!(matches!(m.name, Mirrored::Invalid(_)));
        assert!(matches!(m.protocol_version, Mirrored::Invalid(_)));
        assert_eq!(
            m.params,
            vec![("region".to_owned(), Mirrored::Value("eu".into()))]
        );
    }
}
