//! Which revision a request speaks, decided before the 2026-07-28 ladder sees it.
//!
//! A request that describes itself as 2026-07-28 (the `MCP-Protocol-Version` header, or
//! `io.modelcontextprotocol/protocolVersion` in `params._meta`) takes today's path
//! unchanged, `initialize` and the other removed methods included (`-32601`). A legacy
//! request is one that carries a legacy `MCP-Protocol-Version` (2025-11-25, 2025-06-18,
//! 2025-03-26), or an `Mcp-Session-Id`, or is an `initialize` (which real clients send with
//! no version header), and in each case has no 2026 `_meta`.
//!

use std::sync::LazyLock;

use memchr::memmem;
use serde::Deserialize;
use serde::de::IgnoredAny;

use crate::protocol::PROTOCOL_VERSION_KEY;
use crate::protocol::legacy::{INITIALIZE, is_legacy_version};
use crate::server::Mirrored;

/// The revision a request speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Era {
    /// 2026-07-28: the stateless ladder.
    Current,
    /// 2025-11-25 and earlier: sessions, `initialize`, server-to-client requests.
    Legacy,
}

/// Just enough of a body to classify it.
#[derive(Deserialize)]
struct Peek<'a> {
    #[serde(borrow, default)]
    method: Option<std::borrow::Cow<'a, str>>,
    #[serde(default)]
    params: Option<PeekParams>,
}

#[derive(Deserialize)]
struct PeekParams {
    #[serde(rename = "_meta", default)]
    meta: Option<PeekMeta>,
}

#[derive(Deserialize)]
struct PeekMeta {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion", default)]
    version: Option<IgnoredAny>,
}

/// What the body says: whether it is an `initialize`, and whether it has 2026 `_meta`.
/// A body that does not parse says neither.
fn peek(body: &[u8]) -> (bool, bool) {
    match serde_json::from_slice::<Peek<'_>>(body) {
        Ok(p) => (
            p.method.as_deref() == Some(INITIALIZE),
            p.params
                .and_then(|p| p.meta)
                .is_some_and(|m| m.version.is_some()),
        ),
        Err(_) => (false, false),
    }
}

/// Whether `body` may hold a JSON string with `text` in it: `false` only when it certainly
/// does not, because its text has no backslash (so no string in it is escaped) and `text` is
/// nowhere in it. Two byte scans instead of a parse.
fn may_hold(body: &[u8], text: &memmem::Finder<'_>) -> bool {
    memchr::memchr(b'\\', body).is_some() || text.find(body).is_some()
}

/// Whether `body` may carry the 2026 `_meta` version key (see [`may_hold`]), for the legacy
/// requests whose header or session already points to their era.
fn may_have_modern_meta(body: &[u8]) -> bool {
    // The searcher, built once: `memmem::find` builds one on every call, which costs more
    // than the search of a small body (~3k instructions per legacy request).
    static KEY: LazyLock<memmem::Finder<'static>> =
        LazyLock::new(|| memmem::Finder::new(PROTOCOL_VERSION_KEY.as_bytes()));
    may_hold(body, &KEY)
}

/// Whether `body` may be an `initialize` (see [`may_hold`]), for the requests that carry
/// neither a version header nor a session (stdio's, where no header says 2026-07-28): only
/// an `initialize` of those is legacy, and most are not one, which two scans tell without
/// the parse (~6k instructions per request).
fn may_be_initialize(body: &[u8]) -> bool {
    static METHOD: LazyLock<memmem::Finder<'static>> =
        LazyLock::new(|| memmem::Finder::new(INITIALIZE.as_bytes()));
    may_hold(body, &METHOD)
}

/// Whether a request's `MCP-Protocol-Version` header names a legacy revision: the request
/// says it speaks that era (a GET or DELETE without a session is then answered in its words).
pub(crate) fn says_legacy(protocol_version: &Mirrored) -> bool {
    matches!(protocol_version, Mirrored::Value(v) if is_legacy_version(v))
}

/// The era of a POST: from its `MCP-Protocol-Version` header as read, whether it carries an
/// `Mcp-Session-Id`, and (only when those do not decide) its body.
pub(crate) fn classify(protocol_version: &Mirrored, has_session: bool, body: &[u8]) -> Era {
    let legacy_header = match protocol_version {
        Mirrored::Value(v) if is_legacy_version(v) => true,
        // A modern (or unknown, or unreadable) version: the ladder answers it.
        Mirrored::Value(_) | Mirrored::Invalid(_) => return Era::Current,
        Mirrored::Absent => false,
    };
    // A legacy header or a session decides unless the body has 2026 `_meta`; without
    // either, only an `initialize` is legacy.
    if legacy_header || has_session {
        if !may_have_modern_meta(body) {
            return Era::Legacy;
        }
    } else if !may_be_initialize(body) {
        return Era::Current;
    }
    let (initialize, modern_meta) = peek(body);
    if modern_meta {
        return Era::Current;
    }
    if legacy_header || has_session || initialize {
        Era::Legacy
    } else {
        Era::Current
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MODERN: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#;
    const LIST: &str =
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"progressToken":1}}}"#;

    fn v(s: &str) -> Mirrored<'_> {
        Mirrored::Value(s.into())
    }

    #[test]
    fn the_header_decides_first() {
        assert_eq!(
            classify(&v("2026-07-28"), false, INIT.as_bytes()),
            Era::Current
        );
        assert_eq!(
            classify(&v("2026-07-28"), true, LIST.as_bytes()),
            Era::Current
        );
        assert_eq!(
            classify(&v("1999-01-01"), true, LIST.as_bytes()),
            Era::Current
        );
        let bad = Mirrored::Invalid("repeated".into());
        assert_eq!(classify(&bad, true, LIST.as_bytes()), Era::Current);
        for legacy in ["2025-11-25", "2025-06-18", "2025-03-26"] {
            assert_eq!(classify(&v(legacy), false, LIST.as_bytes()), Era::Legacy);
        }
    }

    #[test]
    fn modern_meta_wins_over_a_legacy_header_or_session() {
        assert_eq!(
            classify(&v("2025-11-25"), true, MODERN.as_bytes()),
            Era::Current
        );
        assert_eq!(
            classify(&Mirrored::Absent, true, MODERN.as_bytes()),
            Era::Current
        );
        let modern_init = MODERN.replace("tools/list", "initialize");
        assert_eq!(
            classify(&Mirrored::Absent, false, modern_init.as_bytes()),
            Era::Current,
            "initialize with 2026 _meta is a 2026 request (-32601)"
        );
    }

    #[test]
    fn without_a_header() {
        assert_eq!(
            classify(&Mirrored::Absent, false, INIT.as_bytes()),
            Era::Legacy
        );
        assert_eq!(
            classify(&Mirrored::Absent, true, LIST.as_bytes()),
            Era::Legacy
        );
        assert_eq!(
            classify(&Mirrored::Absent, false, LIST.as_bytes()),
            Era::Current
        );
        // Unparsable bodies go where their headers point; the ladder there reports them.
        assert_eq!(classify(&Mirrored::Absent, false, b"{"), Era::Current);
        assert_eq!(classify(&v("2025-11-25"), false, b"{"), Era::Legacy);
        assert_eq!(classify(&Mirrored::Absent, false, b"[1]"), Era::Current);
    }

    /// The classification by parsing alone (before the byte scan was put in front of it).
    fn by_parsing(protocol_version: &Mirrored, has_session: bool, body: &[u8]) -> Era {
        let legacy_header = match protocol_version {
            Mirrored::Value(v) if is_legacy_version(v) => true,
            Mirrored::Value(_) | Mirrored::Invalid(_) => return Era::Current,
            Mirrored::Absent => false,
        };
        let (initialize, modern_meta) = peek(body);
        if modern_meta {
            Era::Current
        } else if legacy_header || has_session || initialize {
            Era::Legacy
        } else {
            Era::Current
        }
    }

    #[test]
    fn the_byte_scan_decides_as_parsing_would() {
        let bodies = [
            MODERN.to_owned(),
            INIT.to_owned(),
            LIST.to_owned(),
            // The key escaped: only a parse sees it.
            MODERN.replace("modelcontextprotocol/", "modelcontextprotocol\\/"),
            MODERN.replace("protocolVersion", "\\u0070rotocolVersion"),
            // The key's text elsewhere than in `params._meta`.
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"io.modelcontextprotocol/protocolVersion"}}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a \\"quoted\\" word"}}}"#.to_owned(),
            // `initialize` escaped, or its text elsewhere, or with 2026 `_meta`.
            INIT.replace("\"initialize\"", "\"\\u0069nitialize\""),
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"initialize","arguments":{}}}"#.to_owned(),
            INIT.replace(
                "\"capabilities\":{}",
                "\"capabilities\":{},\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}",
            ),
            "{".to_owned(),
            "[1]".to_owned(),
            String::new(),
        ];
        for body in &bodies {
            for header in [Mirrored::Absent, v("2025-11-25"), v("2026-07-28")] {
                for session in [false, true] {
                    assert_eq!(
                        classify(&header, session, body.as_bytes()),
                        by_parsing(&header, session, body.as_bytes()),
                        "{header:?} session {session}: {body}"
                    );
                }
            }
        }
        let escaped = MODERN.replace("modelcontextprotocol/", "modelcontextprotocol\\/");
        assert_eq!(
            classify(&v("2025-11-25"), true, escaped.as_bytes()),
            Era::Current
        );
    }
}
