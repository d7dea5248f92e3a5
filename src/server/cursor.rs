//! Self-contained pagination cursors: any replica with the same registry continues a list.
//!
//! A cursor is `base64url("v1.<list fingerprint>.<offset>")`. The fingerprint (a digest of
//! the list's contents) makes a cursor from another list, or from a replica serving a
//! different version of the list, an invalid cursor rather than a silently wrong page.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};

/// A short digest naming one version of one list.
pub(crate) fn fingerprint(kind: &str, serialized_items: &[u8]) -> String {
    let mut h = Sha256::new();
    h.update(kind.as_bytes());
    h.update([0]);
    h.update(serialized_items);
    let d = h.finalize();
    d[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// The cursor that resumes the list `fingerprint` at `offset`.
pub(crate) fn encode(fingerprint: &str, offset: usize) -> String {
    URL_SAFE_NO_PAD.encode(format!("v1.{fingerprint}.{offset}"))
}

/// The offset a cursor resumes at, if it is a cursor of list `fingerprint` within `len` items.
pub(crate) fn decode(cursor: &str, fingerprint: &str, len: usize) -> Option<usize> {
    let raw = URL_SAFE_NO_PAD.decode(cursor).ok()?;
    let text = std::str::from_utf8(&raw).ok()?;
    let mut parts = text.splitn(3, '.');
    if parts.next()? != "v1" || parts.next()? != fingerprint {
        return None;
    }
    let offset: usize = parts.next()?.parse().ok()?;
    (offset > 0 && offset < len).then_some(offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_rejection() {
        let fp = fingerprint("tools", b"[1,2,3]");
        let c = encode(&fp, 2);
        assert_eq!(decode(&c, &fp, 3), Some(2));
        assert_eq!(decode(&c, &fp, 2), None, "past the end");
        assert_eq!(
            decode(&c, &fingerprint("prompts", b"[1,2,3]"), 3),
            None,
            "other list"
        );
        assert_eq!(decode("", &fp, 3), None);
        assert_eq!(decode("!!!", &fp, 3), None);
        assert_eq!(decode(&encode(&fp, 0), &fp, 3), None);
    }
}
