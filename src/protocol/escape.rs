//! Writing a JSON string: byte for byte what serde_json writes, but the runs that need no
//! escape (nearly all of any text a tool returns) are found eight bytes at a time and copied
//! whole, where serde_json looks every byte up in a table.
//!
//! serde_json escapes `"` and `\` with a backslash, `\b`, `\t`, `\n`, `\f` and `\r` in their
//! short forms, other bytes below 0x20 as `\u00xx` (lower-case hex), and nothing else (not
//! DEL, not non-ASCII text).

/// Eight copies of a byte.
const fn splat(b: u8) -> u64 {
    u64::from_ne_bytes([b; 8])
}

const HIGH_BITS: u64 = splat(0x80);

/// Whether any of the eight bytes of `w` may need an escape: no false negatives (a flagged
/// word is then looked at byte by byte, so false positives only cost time).
fn may_need_escape(w: u64) -> bool {
    // A byte below 0x20 (bytes from 0x80 up have their high bit cleared by `!w`).
    let control = w.wrapping_sub(splat(0x20)) & !w;
    let quote = w ^ splat(b'"');
    let quote = quote.wrapping_sub(splat(1)) & !quote;
    let backslash = w ^ splat(b'\\');
    let backslash = backslash.wrapping_sub(splat(1)) & !backslash;
    (control | quote | backslash) & HIGH_BITS != 0
}

/// The escape of `b`, if it needs one.
fn escape(b: u8, out: &mut Vec<u8>) -> bool {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let short = match b {
        b'"' => b'"',
        b'\\' => b'\\',
        0x08 => b'b',
        0x09 => b't',
        0x0a => b'n',
        0x0c => b'f',
        0x0d => b'r',
        0x00..=0x1f => {
            out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(b >> 4)],
                HEX[usize::from(b & 0xf)],
            ]);
            return true;
        }
        _ => return false,
    };
    out.extend_from_slice(&[b'\\', short]);
    true
}

/// Appends `s` to `out` as a JSON string (quotes included), exactly as
/// `serde_json::to_writer(out, s)` would.
pub(crate) fn write_str(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    // `bytes[start..i]` is the run not yet copied, which needs no escape.
    let (mut start, mut i) = (0, 0);
    while i < bytes.len() {
        if let Some(word) = bytes.get(i..i + 8) {
            let w = u64::from_ne_bytes(word.try_into().expect("eight bytes"));
            if !may_need_escape(w) {
                i += 8;
                continue;
            }
        }
        let end = (i + 8).min(bytes.len());
        while i < end {
            let b = bytes[i];
            if b == b'"' || b == b'\\' || b < 0x20 {
                out.extend_from_slice(&bytes[start..i]);
                escape(b, out);
                start = i + 1;
            }
            i += 1;
        }
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(s: &str) {
        let mut ours = Vec::new();
        write_str(&mut ours, s);
        assert_eq!(
            String::from_utf8(ours).unwrap(),
            serde_json::to_string(s).unwrap(),
            "{s:?}"
        );
    }

    #[test]
    fn every_ascii_byte_at_every_offset_in_a_word() {
        for b in 0u8..0x80 {
            let c = char::from(b);
            for before in 0..17 {
                let text: String = "a".repeat(before) + &c.to_string() + "bcdefghijk";
                check(&text);
            }
        }
    }

    #[test]
    fn texts_like_tools_return() {
        for s in [
            "",
            "x",
            "hello from the load benchmark",
            "quotes \" and \\ backslashes \\\" mixed",
            "lines\nand\ttabs\r\n\u{0}\u{1f}\u{7f}",
            "é, 日本語, emoji 🎉, and \u{2028}\u{2029}",
            "\u{80}\u{ff}\u{100}ÿ€",
            &"x".repeat(100_000),
            &"ab\"cd\\ef\ngh".repeat(1000),
        ] {
            check(s);
        }
    }

    #[test]
    fn bytes_near_the_flagged_ranges() {
        // Bytes just beside 0x20, '"' and '\' in every position of a word, next to
        // multi-byte characters (whose bytes have the high bit set).
        let pieces = [
            "\u{1f}", " ", "!", "\"", "#", "[", "\\", "]", "é", "\u{7ff}", "\u{ffff}",
        ];
        for a in pieces {
            for b in pieces {
                for pad in 0..9 {
                    check(&format!("{}{a}{}{b}", "-".repeat(pad), "+".repeat(8 - pad)));
                }
            }
        }
    }
}
