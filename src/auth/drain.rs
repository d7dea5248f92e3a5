//! What a refusal does with the body it did not read, so that the client may reuse the
//! connection.
//!
//! A refusal is answered before the request body is read. hyper then reads what has
//! already arrived and, when the rest is still on its way, closes the connection after the
//! response without saying so: a client that sends the body in its own write (httpx does)
//! and reuses the connection for its next request, typically the retry with a token after a
//! `401`, meets a closed connection. So the refusal first reads a small body to its end
//! (bounded in size and time, and discarded); a body that is larger or slower gets
//! `Connection: close` on the answer instead, so the client knows to open a new connection.

use std::time::Duration;

use bytes::Buf as _;
use http::{HeaderValue, Response, header};
use http_body::Body;
use http_body_util::BodyExt as _;

/// The largest body a refusal reads before answering.
const DRAIN_BYTES: usize = 64 * 1024;
/// How long a refusal waits for that body.
const DRAIN_TIME: Duration = Duration::from_secs(1);

/// Reads `body` to its end if it is small and arrives soon; `false` when it was not read
/// whole (the connection cannot be reused).
pub(super) async fn drain<B: Body>(body: B) -> bool {
    if body.is_end_stream() {
        return true;
    }
    let read = async move {
        let mut body = std::pin::pin!(body);
        let mut seen = 0usize;
        while let Some(frame) = body.frame().await {
            let Ok(frame) = frame else { return false };
            seen += frame.data_ref().map_or(0, |d| d.remaining());
            if seen > DRAIN_BYTES {
                return false;
            }
        }
        true
    };
    tokio::time::timeout(DRAIN_TIME, read)
        .await
        .unwrap_or(false)
}

/// Marks `response` as the last on its connection.
pub(super) fn close<T>(response: &mut Response<T>) {
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use http_body_util::{Empty, Full, StreamBody};

    #[tokio::test]
    async fn small_bodies_are_read_and_large_or_slow_ones_are_not() {
        assert!(drain(Empty::<Bytes>::new()).await);
        assert!(drain(Full::new(Bytes::from_static(b"{\"jsonrpc\":\"2.0\"}"))).await);
        assert!(!drain(Full::new(Bytes::from(vec![b'x'; DRAIN_BYTES + 1]))).await);
        tokio::time::pause();
        let never = StreamBody::new(futures_util::stream::pending::<
            Result<http_body::Frame<Bytes>, std::convert::Infallible>,
        >());
        assert!(!drain(never).await);
    }
}
