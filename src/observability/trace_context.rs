//! W3C Trace Context: the `traceparent` value a client sends in `params._meta` or as an HTTP
//! header, so the server's request span continues the client's trace.

use std::fmt;

/// A parsed W3C `traceparent` (`00-{trace-id}-{parent-id}-{flags}`).
///
/// Parsing follows the W3C rules: lower-case hex, version `ff` invalid, all-zero ids invalid,
/// a later version may append fields after the fourth.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TraceParent {
    trace_id: [u8; 32],
    parent_id: [u8; 16],
    flags: u8,
}

fn is_hex(bytes: &[u8]) -> bool {
    bytes
        .iter()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
}

fn all_zero(bytes: &[u8]) -> bool {
    bytes.iter().all(|b| *b == b'0')
}

impl TraceParent {
    /// Parses a `traceparent` value; `None` when it is malformed.
    pub(crate) fn parse(value: &str) -> Option<Self> {
        let v = value.trim().as_bytes();
        if v.len() < 55 || v[2] != b'-' || v[35] != b'-' || v[52] != b'-' {
            return None;
        }
        let (version, trace, parent, flags) = (&v[0..2], &v[3..35], &v[36..52], &v[53..55]);
        if !is_hex(version) || version == b"ff" || !is_hex(trace) || !is_hex(parent) {
            return None;
        }
        if !is_hex(flags) || all_zero(trace) || all_zero(parent) {
            return None;
        }
        if version == b"00" && v.len() != 55 {
            return None;
        }
        if v.len() > 55 && v[55] != b'-' {
            return None;
        }
        let flags = u8::from_str_radix(std::str::from_utf8(flags).ok()?, 16).ok()?;
        let mut out = TraceParent {
            trace_id: [0; 32],
            parent_id: [0; 16],
            flags,
        };
        out.trace_id.copy_from_slice(trace);
        out.parent_id.copy_from_slice(parent);
        Some(out)
    }

    /// The trace id: 32 lower-case hex digits.
    pub(crate) fn trace_id(&self) -> &str {
        std::str::from_utf8(&self.trace_id).expect("checked hex")
    }

    /// The caller's span id (the parent of the server's span): 16 lower-case hex digits.
    pub(crate) fn parent_id(&self) -> &str {
        std::str::from_utf8(&self.parent_id).expect("checked hex")
    }

    /// The trace flags (`01`: sampled).
    #[cfg(feature = "otel")]
    pub(crate) fn flags(&self) -> u8 {
        self.flags
    }

    /// Whether the caller sampled this trace (flag `01`).
    #[cfg(test)]
    pub(crate) fn sampled(&self) -> bool {
        self.flags & 1 == 1
    }
}

impl fmt::Display for TraceParent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "00-{}-{}-{:02x}",
            self.trace_id(),
            self.parent_id(),
            self.flags
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn parses_the_w3c_example() {
        let t = TraceParent::parse(GOOD).unwrap();
        assert_eq!(t.trace_id(), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(t.parent_id(), "00f067aa0ba902b7");
        assert!(t.sampled());
        assert_eq!(t.to_string(), GOOD);
    }

    #[test]
    fn accepts_future_versions_with_more_fields() {
        let t =
            TraceParent::parse("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-whatever")
                .unwrap();
        assert!(!t.sampled());
    }

    #[test]
    fn rejects_malformed_values() {
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g",
            "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        ] {
            assert_eq!(TraceParent::parse(bad), None, "{bad}");
        }
    }
}
