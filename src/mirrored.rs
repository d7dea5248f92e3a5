//! The mirrored MCP headers (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`,
//! `Mcp-Param-*`): the values a transport found ([`Mirrored`], [`MirroredHeaders`]) and
//! reading them off an HTTP request (one value each, visible ASCII, trimmed, and
//! `=?base64?…?=` decoded where the spec allows it).
//!
//! One place that every side reading these headers depends on: the HTTP transport (to hand
//! them to dispatch), dispatch (`server`, which compares them with the body) and the
//! resource server's scope rules (`auth`, which reads `Mcp-Method`/`Mcp-Name` before the
//! body), so all three decode them alike.

use std::borrow::Cow;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use http::HeaderValue;
// One header at a time, for the resource server's scope rules (which read before the
// endpoint's one pass).
#[cfg(any(feature = "auth", test))]
use http::HeaderMap;
#[cfg(any(feature = "auth", test))]
use http::header::AsHeaderName;

/// One mirrored header as the transport found it.
///
/// A value read from a request borrows the request's header map (`'a`); only a
/// `=?base64?…?=` value, decoded, is owned. Build one from your own strings with
/// `Mirrored::Value("tools/list".into())` (`Mirrored<'static>` from a `String`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Mirrored<'a> {
    /// Not sent.
    #[default]
    Absent,
    /// Sent once, trimmed and decoded.
    Value(Cow<'a, str>),
    /// Sent but unusable (repeated, bad characters, bad `=?base64?…?=` encoding): why.
    Invalid(Cow<'static, str>),
}

/// Every mirrored header of one request, borrowing its header map (`'a`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MirroredHeaders<'a> {
    /// `MCP-Protocol-Version`.
    pub protocol_version: Mirrored<'a>,
    /// `Mcp-Method`.
    pub method: Mirrored<'a>,
    /// `Mcp-Name`.
    pub name: Mirrored<'a>,
    /// `Mcp-Param-{Name}` headers: lower-cased `{Name}` and value.
    pub params: Vec<(Cow<'a, str>, Mirrored<'a>)>,
}

impl Mirrored<'_> {
    /// The value, when the header was sent once and is usable.
    pub fn value(&self) -> Option<&str> {
        match self {
            Mirrored::Value(v) => Some(v),
            Mirrored::Absent | Mirrored::Invalid(_) => None,
        }
    }
}

/// `MCP-Protocol-Version`.
pub(crate) const PROTOCOL_VERSION: &str = "mcp-protocol-version";
/// `Mcp-Method`.
pub(crate) const METHOD: &str = "mcp-method";
/// `Mcp-Name`.
pub(crate) const NAME: &str = "mcp-name";
/// Prefix of `Mcp-Param-{Name}`.
pub(crate) const PARAM_PREFIX: &str = "mcp-param-";

/// What every mirrored header's name starts with: most headers are told apart by it.
const MCP_PREFIX: &str = "mcp-";

const SENTINEL_START: &str = "=?base64?";
const SENTINEL_END: &str = "?=";

const REPEATED: &str = "the header is repeated";
const NOT_VISIBLE_ASCII: &str = "the value must be visible ASCII (use =?base64?...?=)";

/// Decodes a `=?base64?…?=` value; other values are literal (borrowed).
fn decode(value: &str) -> Result<Cow<'_, str>, Cow<'static, str>> {
    match value
        .strip_prefix(SENTINEL_START)
        .and_then(|v| v.strip_suffix(SENTINEL_END))
    {
        None => Ok(Cow::Borrowed(value)),
        Some(b64) => {
            let bytes = STANDARD
                .decode(b64)
                .map_err(|e| format!("invalid base64 in =?base64?...?= value: {e}"))?;
            String::from_utf8(bytes)
                .map(Cow::Owned)
                .map_err(|_| Cow::Borrowed("base64 value is not UTF-8"))
        }
    }
}

/// What a pass over a header map found of one header: its first value (what
/// [`HeaderMap::get`] returns) and whether there were more.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Found<'a> {
    first: Option<&'a HeaderValue>,
    repeated: bool,
}

impl<'a> Found<'a> {
    /// Every value of `name` in `headers`, as one lookup finds them (for the resource
    /// server's scope rules, which read before the endpoint's one pass).
    #[cfg(any(feature = "auth", test))]
    pub(crate) fn lookup(headers: &'a HeaderMap, name: impl AsHeaderName) -> Self {
        let mut found = Found::default();
        for value in headers.get_all(name) {
            found.add(value);
            if found.repeated {
                break;
            }
        }
        found
    }

    /// One more value of the header.
    pub(crate) fn add(&mut self, value: &'a HeaderValue) {
        if self.first.is_some() {
            self.repeated = true;
        } else {
            self.first = Some(value);
        }
    }

    /// The first value, as [`HeaderMap::get`] returns it.
    pub(crate) fn first(self) -> Option<&'a HeaderValue> {
        self.first
    }

    /// Whether the header was sent more than once.
    pub(crate) fn repeated(self) -> bool {
        self.repeated
    }

    /// The header read as a mirrored one: sent once, visible ASCII, trimmed
    /// (`Ok(None)`: absent; `Err`: why it is unusable).
    pub(crate) fn text(self) -> Result<Option<&'a str>, &'static str> {
        let Some(first) = self.first else {
            return Ok(None);
        };
        if self.repeated {
            return Err(REPEATED);
        }
        // `to_str` accepts visible ASCII, spaces and tabs (a header value holds no other
        // control characters), and spaces and tabs are all the ASCII whitespace it can hold.
        first
            .to_str()
            .map(|text| Some(text.trim_ascii()))
            .map_err(|_| NOT_VISIBLE_ASCII)
    }

    /// The header as a [`Mirrored`] value: [`Found::text`], then (when `encoded`)
    /// `=?base64?…?=` decoded.
    pub(crate) fn mirrored(self, encoded: bool) -> Mirrored<'a> {
        match self.text() {
            Ok(None) => Mirrored::Absent,
            Err(why) => Mirrored::Invalid(Cow::Borrowed(why)),
            Ok(Some(text)) if !encoded => Mirrored::Value(Cow::Borrowed(text)),
            Ok(Some(text)) => match decode(text) {
                Ok(v) => Mirrored::Value(v),
                Err(e) => Mirrored::Invalid(e),
            },
        }
    }
}

/// Reads one mirrored header: sent once, visible ASCII, trimmed, and (when `encoded`)
/// `=?base64?…?=` decoded.
#[cfg(any(feature = "auth", test))]
pub(crate) fn read(headers: &HeaderMap, name: impl AsHeaderName, encoded: bool) -> Mirrored<'_> {
    Found::lookup(headers, name).mirrored(encoded)
}

/// The mirrored headers of one request, gathered in one pass over its header map
/// ([`Collector::offer`] each header, then [`Collector::finish`]).
#[derive(Debug, Default)]
pub(crate) struct Collector<'a> {
    protocol_version: Found<'a>,
    method: Found<'a>,
    name: Found<'a>,
    params: Vec<(&'a str, Found<'a>)>,
}

impl<'a> Collector<'a> {
    /// Takes the header named `name` (as [`http::HeaderName::as_str`] spells it) if it is a
    /// mirrored one (`false`: not one of them).
    pub(crate) fn offer(&mut self, name: &'a str, value: &'a HeaderValue) -> bool {
        if !name.starts_with(MCP_PREFIX) {
            return false;
        }
        let slot = match name {
            PROTOCOL_VERSION => &mut self.protocol_version,
            METHOD => &mut self.method,
            NAME => &mut self.name,
            other => {
                let Some(suffix) = other.strip_prefix(PARAM_PREFIX) else {
                    return false;
                };
                match self.params.iter_mut().position(|(n, _)| *n == suffix) {
                    Some(i) => &mut self.params[i].1,
                    None => {
                        self.params.push((suffix, Found::default()));
                        &mut self.params.last_mut().expect("pushed").1
                    }
                }
            }
        };
        slot.add(value);
        true
    }

    /// The `Mcp-Method` value found so far, as [`Found::text`] reads it.
    pub(crate) fn method(&self) -> Found<'a> {
        self.method
    }

    /// The values, decoded.
    pub(crate) fn finish(self) -> MirroredHeaders<'a> {
        MirroredHeaders {
            protocol_version: self.protocol_version.mirrored(false),
            method: self.method.mirrored(false),
            name: self.name.mirrored(true),
            params: self
                .params
                .into_iter()
                .map(|(n, found)| (Cow::Borrowed(n), found.mirrored(true)))
                .collect(),
        }
    }
}

/// Every mirrored header of a request (the endpoint gathers them with the other headers it
/// reads, in `transport::http::request_headers`).
#[cfg(test)]
pub(crate) fn mirrored(headers: &HeaderMap) -> MirroredHeaders<'_> {
    let mut collector = Collector::default();
    for (name, value) in headers {
        collector.offer(name.as_str(), value);
    }
    collector.finish()
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
    fn every_name_has_the_common_prefix() {
        for name in [PROTOCOL_VERSION, METHOD, NAME, PARAM_PREFIX] {
            assert!(name.starts_with(MCP_PREFIX), "{name}");
        }
    }

    #[test]
    fn trimming_spaces_and_tabs_only() {
        let mut h = HeaderMap::new();
        for (sent, read) in [
            (" \t a b \t", Ok(Some("a b"))),
            ("   ", Ok(Some(""))),
            ("", Ok(Some(""))),
            ("x", Ok(Some("x"))),
        ] {
            h.insert("mcp-method", HeaderValue::from_str(sent).unwrap());
            assert_eq!(Found::lookup(&h, METHOD).text(), read, "{sent:?}");
        }
        assert_eq!(Found::lookup(&h, NAME).text(), Ok(None));
    }

    /// What `text` read before it checked bytes instead of `to_str`.
    fn text_by_to_str(value: &HeaderValue) -> Result<&str, &'static str> {
        let text = value.to_str().map_err(|_| NOT_VISIBLE_ASCII)?;
        Ok(text.trim_matches([' ', '\t']))
    }

    #[test]
    fn text_reads_as_to_str_does() {
        let mut values: Vec<Vec<u8>> = vec![
            b"".to_vec(),
            b" \t tools/call\t ".to_vec(),
            b"\t".to_vec(),
            b"a\x7fb".to_vec(),
            b"caf\xc3\xa9".to_vec(),
            b"\xff".to_vec(),
            b" x \x80 ".to_vec(),
        ];
        // Every byte a header value may hold, alone and between letters.
        for b in (0..=255u8).filter(|&b| b == b'\t' || (b >= 0x20 && b != 0x7f)) {
            values.push(vec![b]);
            values.push(vec![b'a', b, b'z']);
        }
        for bytes in values {
            let Ok(value) = HeaderValue::from_bytes(&bytes) else {
                continue;
            };
            let found = Found {
                first: Some(&value),
                repeated: false,
            };
            assert_eq!(found.text(), text_by_to_str(&value).map(Some), "{bytes:?}");
        }
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
            vec![("region".into(), Mirrored::Value("eu".into()))]
        );
    }
}
