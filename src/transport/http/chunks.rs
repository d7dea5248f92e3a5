//! A response body of two buffers sent one after the other, its length known: a
//! [`Reply`](crate::server::Reply) whose pre-encoded result is referenced, not copied.
//!
//! The exact size hint gives the response its `Content-Length`, and hyper queues each
//! chunk as it is (HTTP/1.1 writes the head and both with one vectored write) instead of
//! copying it.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};

/// The chunks of a body, in order, and how many bytes of them are left to send.
#[derive(Debug)]
pub(crate) struct Chunks {
    chunks: std::array::IntoIter<Bytes, 2>,
    left: u64,
}

impl Chunks {
    pub(crate) fn new(chunks: [Bytes; 2]) -> Self {
        let left = chunks.iter().map(|c| c.len() as u64).sum();
        Chunks {
            chunks: chunks.into_iter(),
            left,
        }
    }
}

impl Body for Chunks {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        Poll::Ready(this.chunks.next().map(|chunk| {
            this.left -= chunk.len() as u64;
            Ok(Frame::data(chunk))
        }))
    }

    fn is_end_stream(&self) -> bool {
        self.chunks.len() == 0
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.left)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt as _;

    #[tokio::test]
    async fn the_chunks_come_in_order_with_their_exact_length() {
        let parts = [&b"{\"id\":1,"[..], b"\"result\":{}}"];
        let body = Chunks::new(parts.map(Bytes::from_static));
        assert_eq!(body.size_hint().exact(), Some(20));
        assert!(!body.is_end_stream());
        let mut body = std::pin::pin!(body);
        let mut frames = Vec::new();
        while let Some(frame) = body.frame().await {
            frames.push(frame.unwrap().into_data().unwrap());
            assert_eq!(
                body.size_hint().exact(),
                Some(20 - frames.iter().map(|f| f.len() as u64).sum::<u64>())
            );
        }
        assert!(body.is_end_stream());
        assert_eq!(frames, parts);
    }
}
