//! The two ends of the pipe: a reader that hands over chunks of input, and the one writer
//! that puts every outgoing message on its own line.
//!
//! For the process's own stdin and stdout the blocking reads and writes run on two plain
//! threads, not on the runtime's blocking pool: a runtime waits for its blocking tasks when
//! it shuts down, and a read of an open stdin never returns. The threads are detached; the
//! process exits without them. Any other reader and writer (pipes, sockets, in-memory
//! streams) run as tasks.
//!
//! Both ends are bounded: the reader hands over at most [`CHUNK`] bytes at a time through
//! a channel of one, so it stops reading while the session is busy; the writer's queue
//! holds [`QUEUE`] messages, so a client that does not read its stdout slows the server
//! down instead of growing a buffer.

use std::io::{self, Read as _, Write as _};

use std::borrow::Cow;

use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::server::ReplyBody;

/// The most bytes read at once.
pub(super) const CHUNK: usize = 64 * 1024;
/// Messages waiting for the writer.
pub(super) const QUEUE: usize = 64;

/// Chunks of input as they are read; closed at the end of input (after an `Err` when the
/// read failed).
pub(super) type Input = mpsc::Receiver<io::Result<Bytes>>;

/// The writer's side: messages to write (a reply in its chunks, which are written in turn),
/// a signal that it stopped writing for good (the
/// other end closed the pipe), and one that it wrote and flushed everything it was given.
pub(super) struct Output {
    pub(super) messages: mpsc::Sender<ReplyBody>,
    pub(super) broken: CancellationToken,
    pub(super) flushed: oneshot::Receiver<()>,
}

/// A message as the chunks of one line: JSON-RPC text from the server never holds a raw
/// newline (JSON escapes it inside strings), but a line break in it would split the message,
/// so one that has any is put together and re-encoded compactly.
fn framed(message: &ReplyBody) -> Cow<'_, [Bytes]> {
    let chunks = message.chunks();
    if !chunks.iter().any(|c| c.contains(&b'\n')) {
        return chunks.into();
    }
    let whole = chunks.concat();
    vec![Bytes::from(one_line(&whole).into_owned())].into()
}

/// `message` without line breaks (see [`framed`]).
fn one_line(message: &[u8]) -> Cow<'_, [u8]> {
    if !message.contains(&b'\n') {
        return message.into();
    }
    match serde_json::from_slice::<serde_json::Value>(message).and_then(|v| serde_json::to_vec(&v))
    {
        Ok(compact) => compact.into(),
        Err(_) => message
            .iter()
            .map(|&b| if b == b'\n' { b' ' } else { b })
            .collect::<Vec<u8>>()
            .into(),
    }
}

/// Reads the process's stdin on its own thread.
pub(super) fn stdin() -> Input {
    let (tx, rx) = mpsc::channel(1);
    let spawned = std::thread::Builder::new()
        .name("mcp-stdin".into())
        .spawn(move || {
            let mut stdin = io::stdin().lock();
            let mut buf = vec![0; CHUNK];
            loop {
                let chunk = match stdin.read(&mut buf) {
                    Ok(0) => return,
                    Ok(n) => Ok(Bytes::copy_from_slice(&buf[..n])),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => Err(e),
                };
                let failed = chunk.is_err();
                if tx.blocking_send(chunk).is_err() || failed {
                    return;
                }
            }
        });
    if let Err(e) = spawned {
        tracing::error!(error = %e, "cannot start the stdin reader thread");
    }
    rx
}

/// Writes to the process's stdout on its own thread.
pub(super) fn stdout() -> Output {
    let (messages, mut rx) = mpsc::channel::<ReplyBody>(QUEUE);
    let broken = CancellationToken::new();
    let (done, flushed) = oneshot::channel();
    let gone = broken.clone();
    let spawned = std::thread::Builder::new()
        .name("mcp-stdout".into())
        .spawn(move || {
            let mut out = io::BufWriter::with_capacity(CHUNK, io::stdout().lock());
            let result = (|| {
                while let Some(message) = rx.blocking_recv() {
                    for chunk in framed(&message).iter() {
                        out.write_all(chunk)?;
                    }
                    out.write_all(b"\n")?;
                    if rx.is_empty() {
                        out.flush()?;
                    }
                }
                out.flush()
            })();
            match result {
                Ok(()) => {
                    let _ = done.send(());
                }
                Err(e) => {
                    tracing::debug!(error = %e, "stdout is closed");
                    gone.cancel();
                }
            }
        });
    if let Err(e) = spawned {
        tracing::error!(error = %e, "cannot start the stdout writer thread");
        broken.cancel();
    }
    Output {
        messages,
        broken,
        flushed,
    }
}

/// Reads any async reader in a task.
pub(super) fn reader<R: AsyncRead + Unpin + Send + 'static>(mut reader: R) -> Input {
    let (tx, rx) = mpsc::channel(1);
    tokio::spawn(async move {
        let mut buf = vec![0; CHUNK];
        loop {
            let chunk = match reader.read(&mut buf).await {
                Ok(0) => return,
                Ok(n) => Ok(Bytes::copy_from_slice(&buf[..n])),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => Err(e),
            };
            let failed = chunk.is_err();
            if tx.send(chunk).await.is_err() || failed {
                return;
            }
        }
    });
    rx
}

/// Writes to any async writer in a task.
pub(super) fn writer<W: AsyncWrite + Unpin + Send + 'static>(mut writer: W) -> Output {
    let (messages, mut rx) = mpsc::channel::<ReplyBody>(QUEUE);
    let broken = CancellationToken::new();
    let (done, flushed) = oneshot::channel();
    let gone = broken.clone();
    tokio::spawn(async move {
        let result = async {
            while let Some(message) = rx.recv().await {
                for chunk in framed(&message).iter() {
                    writer.write_all(chunk).await?;
                }
                writer.write_all(b"\n").await?;
                if rx.is_empty() {
                    writer.flush().await?;
                }
            }
            writer.flush().await?;
            writer.shutdown().await
        }
        .await;
        match result {
            Ok(()) => {
                let _ = done.send(());
            }
            Err(e) => {
                tracing::debug!(error = %e, "the output is closed");
                gone.cancel();
            }
        }
    });
    Output {
        messages,
        broken,
        flushed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_is_always_one_line() {
        assert_eq!(&*one_line(br#"{"a":"b"}"#), br#"{"a":"b"}"#);
        assert_eq!(&*one_line(b"{\"a\":\n \"b\"}"), br#"{"a":"b"}"#);
        assert_eq!(&*one_line(b"not\njson"), b"not json");
        let chunked = |parts: [&'static [u8]; 2]| ReplyBody::Two(parts.map(Bytes::from_static));
        // Chunks without line breaks are written as they are.
        let plain = chunked([b"{\"a\":", b"\"b\"}"]);
        assert!(matches!(framed(&plain), Cow::Borrowed(c) if c.len() == 2));
        // A line break in any chunk: the whole message, re-encoded.
        let broken = chunked([b"{\"a\":", b"\n\"b\"}"]);
        assert_eq!(framed(&broken).concat(), br#"{"a":"b"}"#);
    }

    #[tokio::test]
    async fn a_chunked_message_is_written_whole_on_one_line() {
        let (w, mut r) = tokio::io::duplex(1024);
        let out = writer(w);
        let parts = [&b"{\"id\":1,"[..], b"\"result\":{}}"];
        let message = ReplyBody::Two(parts.map(Bytes::from_static));
        out.messages.send(message).await.unwrap();
        drop(out.messages);
        out.flushed.await.unwrap();
        let mut text = String::new();
        r.read_to_string(&mut text).await.unwrap();
        assert_eq!(text, "{\"id\":1,\"result\":{}}\n");
    }

    #[tokio::test]
    async fn the_writer_puts_each_message_on_a_line_and_flushes() {
        let (w, mut r) = tokio::io::duplex(1024);
        let out = writer(w);
        out.messages
            .send(Bytes::from_static(b"{}").into())
            .await
            .unwrap();
        out.messages
            .send(Bytes::from_static(b"[1]").into())
            .await
            .unwrap();
        drop(out.messages);
        out.flushed.await.unwrap();
        let mut text = String::new();
        r.read_to_string(&mut text).await.unwrap();
        assert_eq!(text, "{}\n[1]\n");
    }

    #[tokio::test]
    async fn a_closed_output_is_reported() {
        let (w, r) = tokio::io::duplex(16);
        drop(r);
        let out = writer(w);
        out.messages
            .send(Bytes::from_static(b"{}").into())
            .await
            .unwrap();
        out.broken.cancelled().await;
        assert!(out.flushed.await.is_err());
    }
}
