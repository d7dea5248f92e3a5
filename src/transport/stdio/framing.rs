//! Newline-delimited framing: one JSON-RPC message per line, at most `limit` bytes each.
//!
//! The decoder is fed the chunks that were read and hands back complete lines. A line that
//! grows past the limit is reported once, as soon as it does, and the rest of it is skipped
//! up to its newline without being kept: memory stays within the limit whatever the input.
//! A trailing `\r` is removed (a client writing CRLF); blank lines are skipped.

use bytes::{Bytes, BytesMut};

/// What the decoder found in the input.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Frame {
    /// One complete line, without its line ending.
    Line(Bytes),
    /// A line exceeded the limit; the rest of it is being discarded.
    TooLong,
}

/// Splits a byte stream into lines of at most `limit` bytes (see the module docs).
#[derive(Debug)]
pub(super) struct LineDecoder {
    limit: usize,
    line: BytesMut,
    /// Set while the rest of an oversized line is skipped.
    discarding: bool,
}

impl LineDecoder {
    /// A decoder for lines of at most `limit` bytes (not counting the line ending).
    pub(super) fn new(limit: usize) -> Self {
        LineDecoder {
            limit,
            line: BytesMut::new(),
            discarding: false,
        }
    }

    /// Consumes `input` up to and including its first newline, or all of it when it has
    /// none, and returns the frame completed on the way, if any. Call it again while
    /// `input` is not empty.
    pub(super) fn decode(&mut self, input: &mut &[u8]) -> Option<Frame> {
        let newline = input.iter().position(|&b| b == b'\n');
        let (part, rest) = match newline {
            Some(at) => (&input[..at], &input[at + 1..]),
            None => (&input[..], &input[input.len()..]),
        };
        *input = rest;
        if self.discarding {
            if newline.is_some() {
                self.discarding = false;
            }
            return None;
        }
        if self.line.len() + part.len() > self.limit {
            self.line = BytesMut::new();
            self.discarding = newline.is_none();
            return Some(Frame::TooLong);
        }
        self.line.extend_from_slice(part);
        if newline.is_some() { self.take() } else { None }
    }

    /// At the end of the input: the last line, when it had no newline.
    pub(super) fn finish(&mut self) -> Option<Frame> {
        if self.discarding {
            self.discarding = false;
            return None;
        }
        self.take()
    }

    fn take(&mut self) -> Option<Frame> {
        let mut line = self.line.split();
        if line.last() == Some(&b'\r') {
            line.truncate(line.len() - 1);
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        Some(Frame::Line(line.freeze()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every frame of `chunks` fed in order, then the end of input.
    fn frames(limit: usize, chunks: &[&[u8]]) -> Vec<Frame> {
        let mut d = LineDecoder::new(limit);
        let mut out = Vec::new();
        for chunk in chunks {
            let mut input = *chunk;
            while !input.is_empty() {
                out.extend(d.decode(&mut input));
            }
        }
        out.extend(d.finish());
        out
    }

    fn line(s: &str) -> Frame {
        Frame::Line(Bytes::copy_from_slice(s.as_bytes()))
    }

    #[test]
    fn splits_lines_across_chunks() {
        assert_eq!(
            frames(100, &[b"{\"a\":1}\n{\"b\"", b":2}\r\n\n   \n{\"c\":3}"]),
            [line("{\"a\":1}"), line("{\"b\":2}"), line("{\"c\":3}")]
        );
        assert_eq!(frames(100, &[b"\n\r\n", b""]), []);
    }

    #[test]
    fn an_oversized_line_is_reported_once_and_skipped() {
        let long = [b'x'; 25];
        assert_eq!(
            frames(10, &[b"0123456789\n", &long, &long, b"x\nok\n", b"tail"]),
            [line("0123456789"), Frame::TooLong, line("ok"), line("tail")]
        );
        // Over the limit inside one chunk, newline included.
        assert_eq!(
            frames(4, &[b"12345\n1234\n"]),
            [Frame::TooLong, line("1234")]
        );
        // An oversized last line without newline.
        assert_eq!(
            frames(4, &[b"ok\n123", b"45"]),
            [line("ok"), Frame::TooLong]
        );
    }

    #[test]
    fn memory_stays_within_the_limit() {
        let mut d = LineDecoder::new(1024);
        let chunk = vec![b'y'; 64 * 1024];
        for _ in 0..100 {
            let mut input = &chunk[..];
            while !input.is_empty() {
                d.decode(&mut input);
            }
            assert!(d.line.capacity() <= 1024, "{}", d.line.capacity());
        }
        let mut input = &b"\n{}\n"[..];
        let mut out = Vec::new();
        while !input.is_empty() {
            out.extend(d.decode(&mut input));
        }
        assert_eq!(out, [line("{}")]);
    }
}
