//! One session over a pipe: lines in, dispatch through [`Server::handle`], messages out.
//!
//! Each line is handed to the server as it is read. A reply that is ready is written at
//! once; a handler runs in its own task and writes its notifications and its reply when they
//! come, so answers go out in the order they finish, not the order they were asked. A
//! `subscriptions/listen` stream runs in its own task too, until the client cancels it or
//! the session ends.
//!
//! Bounds: `max_in_flight` handlers run at once; as many more requests may wait for a slot
//! (read, checked, not started); beyond that no more input is read, so a client that writes
//! faster than the server answers fills its own pipe. Notifications and requests answered at
//! once never wait, so a client can still cancel a request while the server is saturated. Listen streams do not take slots (the
//! server's [`ListenLimits`](crate::settings::ListenLimits) bound them).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt as _;
use http::Extensions;
use serde::Deserialize;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::framing::{Frame, LineDecoder};
use super::pipes::{Input, Output};
use crate::legacy::stdio::{Handled, LegacySession, Notifications, is_response};
use crate::protocol::{ErrorCode, ErrorObject, IncomingMessage, RequestId};
use crate::server::{Listen, Outcome, Reply, ReplyBody, Running, Server};

/// `notifications/cancelled`: the client no longer wants the answer to a request.
const CANCELLED: &str = "notifications/cancelled";

/// How long the writer gets to flush what is queued once the session is over.
const FLUSH_TIMEOUT: Duration = Duration::from_secs(5);

/// The session's limits.
#[derive(Debug, Clone, Copy)]
pub(super) struct Settings {
    pub(super) line_limit: usize,
    pub(super) max_in_flight: usize,
    pub(super) drain_timeout: Duration,
}

/// `params` of `notifications/cancelled`.
#[derive(Deserialize)]
struct CancelledParams {
    #[serde(rename = "requestId")]
    request_id: RequestId,
}

/// Requests and listen streams by id, each with the token that cancels it. The sequence
/// number tells a request from a later one that reuses its id.
#[derive(Default)]
struct InFlight {
    next: u64,
    by_id: HashMap<RequestId, (u64, CancellationToken)>,
}

struct Session {
    server: Server,
    settings: Settings,
    out: mpsc::Sender<ReplyBody>,
    in_flight: Arc<Mutex<InFlight>>,
    /// Requests read and not answered yet (twice `max_in_flight`).
    admitted: Arc<Semaphore>,
    /// Handlers running (`max_in_flight`).
    running: Arc<Semaphore>,
    tasks: TaskTracker,
    /// Cancelled when the session must stop reading (a shutdown signal).
    shutdown: CancellationToken,
    /// Cancelled when everything must stop now: the output is gone, or the drain timed out.
    abort: CancellationToken,
    /// Cancelled when the session drains: listen streams end with their graceful result.
    draining: CancellationToken,
    /// The 2025-11-25 session a legacy client opened with `initialize` (the process is the
    /// session).
    legacy: LegacySession,
}

/// Why the session stopped reading.
enum End {
    Eof,
    Shutdown,
    Broken,
}

/// Runs a session until the input ends, `shutdown` is cancelled or the output breaks; then
/// lets what is in flight finish (within the drain timeout) and the writer flush.
pub(super) async fn run(
    server: Server,
    settings: Settings,
    mut input: Input,
    output: Output,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let Output {
        messages,
        broken,
        flushed,
    } = output;
    let max = settings.max_in_flight.max(1);
    let legacy = LegacySession::new(&server);
    let session = Session {
        server,
        settings,
        out: messages,
        in_flight: Arc::default(),
        admitted: Arc::new(Semaphore::new(max.saturating_mul(2))),
        running: Arc::new(Semaphore::new(max)),
        tasks: TaskTracker::new(),
        shutdown,
        abort: broken.child_token(),
        draining: CancellationToken::new(),
        legacy,
    };
    let mut decoder = LineDecoder::new(settings.line_limit);
    let end = loop {
        let chunk = tokio::select! {
            biased;
            () = broken.cancelled() => break Ok(End::Broken),
            () = session.shutdown.cancelled() => break Ok(End::Shutdown),
            chunk = input.recv() => chunk,
        };
        match chunk {
            None => {
                if let Some(frame) = decoder.finish() {
                    session.frame(frame).await;
                }
                break Ok(End::Eof);
            }
            Some(Err(e)) => break Err(e),
            Some(Ok(bytes)) => {
                let mut rest = &bytes[..];
                while !rest.is_empty() {
                    if let Some(frame) = decoder.decode(&mut rest) {
                        session.frame(frame).await;
                    }
                }
            }
        }
    };
    drop(input);
    match &end {
        Ok(End::Eof) => tracing::info!("stdin closed; finishing the requests in flight"),
        Ok(End::Shutdown) => tracing::info!("shutting down; finishing the requests in flight"),
        Ok(End::Broken) => tracing::info!("stdout closed; stopping"),
        Err(e) => {
            tracing::error!(error = %e, "cannot read stdin; finishing the requests in flight")
        }
    }
    session.drain().await;
    let Session { out, abort, .. } = session;
    drop(out);
    if !abort.is_cancelled() || !broken.is_cancelled() {
        let _ = tokio::time::timeout(FLUSH_TIMEOUT, flushed).await;
    }
    end.map(drop)
}

/// The error for a line over the limit (its id cannot be read: none is echoed).
fn too_long(limit: usize) -> Bytes {
    Reply::error(
        None,
        ErrorObject::invalid_request(format!(
            "Message too large: a line may hold at most {limit} bytes; the rest of this one was discarded"
        )),
    )
    .into_bytes()
}

/// The id of a request the server accepted (read again: the legacy path does not hand it
/// back).
fn request_id(line: &[u8]) -> Option<RequestId> {
    serde_json::from_slice::<IncomingMessage<'_>>(line)
        .ok()?
        .id
        .echo()
}

impl Session {
    /// Resolves when the session stops taking requests.
    async fn stopped(&self) {
        tokio::select! {
            () = self.shutdown.cancelled() => {}
            () = self.abort.cancelled() => {}
        }
    }

    async fn send(&self, message: ReplyBody) {
        // A closed output is noticed by the session through `broken`.
        let _ = self.out.send(message).await;
    }

    /// Handles one line of input.
    async fn frame(&self, frame: Frame) {
        let line = match frame {
            Frame::Line(line) => line,
            Frame::TooLong => {
                return self.send(too_long(self.settings.line_limit).into()).await;
            }
        };
        let (outcome, id, notifications) = match self.dispatch(&line).await {
            Some(dispatched) => dispatched,
            None => return,
        };
        self.outcome(&line, outcome, id).await;
        if let Some(notifications) = notifications {
            self.spawn_notifications(notifications);
        }
    }

    /// Sends or starts what the server made of a line (`id`: the request's, when dispatch
    /// handed it back).
    async fn outcome(&self, line: &Bytes, outcome: Outcome, id: Option<RequestId>) {
        let id = || id.or_else(|| request_id(line));
        match outcome {
            Outcome::Accepted => self.notification(line),
            Outcome::Ready(reply) => {
                if reply.error_code == Some(ErrorCode::InvalidRequest.code()) && is_response(line) {
                    tracing::debug!(
                        "ignored a JSON-RPC response: no request of this server awaits one"
                    );
                    return;
                }
                self.send(reply.into_body()).await;
            }
            Outcome::Running(running) => {
                // Only a request that runs a handler waits for room: notifications (a
                // cancellation) and ready replies are handled while the server is saturated.
                let admitted = tokio::select! {
                    biased;
                    () = self.stopped() => return,
                    permit = self.admitted.clone().acquire_owned() => match permit {
                        Ok(p) => p,
                        Err(_) => return,
                    },
                };
                self.spawn_request(id(), running, admitted);
            }
            Outcome::Listen(listen) => self.spawn_listen(id(), listen),
        }
    }

    /// Hands a line to the server: a 2025-11-25 client's (`initialize`, then anything of the
    /// session it opened, which is this process's) to the legacy path, the rest to
    /// [`Server::handle`] (which also hands back the request's id). `None`: nothing to send
    /// (a legacy client's answer, delivered).
    async fn dispatch(
        &self,
        line: &Bytes,
    ) -> Option<(Outcome, Option<RequestId>, Option<Notifications>)> {
        match self.legacy.handle(line, &self.draining).await {
            Handled::NotLegacy => {
                let (outcome, id) = self.server.handle_request(line, None, Extensions::new());
                Some((outcome, id, None))
            }
            Handled::Answer => None,
            Handled::Outcome(outcome, notifications) => Some((outcome, None, notifications)),
        }
    }

    /// Writes a legacy session's notifications until the session drains or is replaced.
    fn spawn_notifications(&self, notifications: Notifications) {
        let out = self.out.clone();
        let abort = self.abort.clone();
        self.tasks.spawn(async move {
            tokio::select! {
                () = abort.cancelled() => {}
                () = notifications.forward(out) => {}
            }
        });
    }

    /// A notification the server accepted; `notifications/cancelled` cancels its request.
    fn notification(&self, line: &[u8]) {
        let Ok(message) = serde_json::from_slice::<IncomingMessage<'_>>(line) else {
            return;
        };
        let method = message.method.and_then(crate::protocol::strict::json_str);
        if method.as_deref() != Some(CANCELLED) {
            tracing::debug!(method = method.as_deref(), "ignored a notification");
            return;
        }
        let params = message
            .params
            .and_then(|p| serde_json::from_str::<CancelledParams>(p.get()).ok());
        let Some(CancelledParams { request_id }) = params else {
            tracing::debug!("ignored notifications/cancelled without a readable requestId");
            return;
        };
        let cancelled = lock(&self.in_flight).by_id.remove(&request_id);
        match cancelled {
            Some((_, token)) => {
                tracing::debug!(request_id = %request_id, "request cancelled by the client");
                token.cancel();
            }
            None => tracing::debug!(request_id = %request_id, "cancelled request is not in flight"),
        }
    }

    /// Registers `id` for cancellation: its token (a child of `abort`) and a sequence number.
    fn register(&self, id: Option<&RequestId>) -> (u64, CancellationToken) {
        let token = self.abort.child_token();
        let mut in_flight = lock(&self.in_flight);
        in_flight.next += 1;
        let seq = in_flight.next;
        if let Some(id) = id {
            in_flight.by_id.insert(id.clone(), (seq, token.clone()));
        }
        (seq, token)
    }

    fn spawn_request(
        &self,
        id: Option<RequestId>,
        running: Running,
        admitted: OwnedSemaphorePermit,
    ) {
        let (seq, token) = self.register(id.as_ref());
        let slots = self.running.clone();
        let out = self.out.clone();
        let in_flight = self.in_flight.clone();
        self.tasks.spawn(async move {
            let _admitted = admitted;
            tokio::select! {
                biased;
                () = token.cancelled() => {}
                () = async {
                    let _slot = slots.acquire_owned().await;
                    drive(running, &out).await;
                } => {}
            }
            unregister(&in_flight, id, seq);
        });
    }

    fn spawn_listen(&self, id: Option<RequestId>, listen: Listen) {
        let (seq, token) = self.register(id.as_ref());
        let out = self.out.clone();
        let in_flight = self.in_flight.clone();
        let draining = self.draining.clone();
        let server_info = self.server.server_info().clone();
        self.tasks.spawn(async move {
            let mut messages = listen.messages;
            loop {
                tokio::select! {
                    biased;
                    () = token.cancelled() => break,
                    () = draining.cancelled() => {
                        if let Some(id) = &id {
                            let closed = crate::server::listen_closed(id, &server_info);
                            let _ = out.send(closed.into()).await;
                        }
                        break;
                    }
                    message = messages.next() => {
                        let Some(m) = message else { break };
                        if out.send(m.into()).await.is_err() {
                            break;
                        }
                    }
                }
            }
            unregister(&in_flight, id, seq);
        });
    }

    /// Lets what is in flight finish, within the drain timeout; then cancels the rest.
    async fn drain(&self) {
        self.draining.cancel();
        self.tasks.close();
        let timeout = self.settings.drain_timeout;
        if tokio::time::timeout(timeout, self.tasks.wait())
            .await
            .is_err()
        {
            tracing::warn!(
                requests = self.tasks.len(),
                timeout_secs = timeout.as_secs_f64(),
                "requests still running at the end of the drain were cancelled"
            );
            self.abort.cancel();
            self.tasks.wait().await;
        }
    }
}

fn lock(in_flight: &Mutex<InFlight>) -> std::sync::MutexGuard<'_, InFlight> {
    in_flight.lock().unwrap_or_else(|e| e.into_inner())
}

fn unregister(in_flight: &Mutex<InFlight>, id: Option<RequestId>, seq: u64) {
    let Some(id) = id else { return };
    let mut in_flight = lock(in_flight);
    if in_flight.by_id.get(&id).is_some_and(|(s, _)| *s == seq) {
        in_flight.by_id.remove(&id);
    }
}

/// Writes a handler's notifications as they come, then its reply.
async fn drive(Running { mut reply, events }: Running, out: &mpsc::Sender<ReplyBody>) {
    let Some(mut events) = events else {
        let _ = out.send(reply.await.into_body()).await;
        return;
    };
    loop {
        tokio::select! {
            biased;
            // An empty message (a handler's request to close its stream) is not sent.
            Some(event) = events.recv() => {
                if !event.is_empty() {
                    let _ = out.send(event.into()).await;
                }
            }
            done = &mut reply => {
                while let Ok(event) = events.try_recv() {
                    if !event.is_empty() {
                        let _ = out.send(event.into()).await;
                    }
                }
                let _ = out.send(done.into_body()).await;
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};
    use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _};

    use super::super::Stdio;
    use super::*;
    use crate::{HandlerError, RequestContext, ToolDef};

    fn request(id: usize) -> String {
        let m = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "block", "arguments": {},
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {}}}});
        format!("{m}\n")
    }

    /// Returns once every task of the (current-thread, paused-clock) test runtime waits on
    /// something only the test can give: tokio moves a paused clock on only when no task can
    /// run, so a sleep on it ends when all that could happen has happened.
    async fn settled() {
        tokio::time::sleep(Duration::from_secs(1)).await;
    }

    #[tokio::test(start_paused = true)]
    async fn a_client_that_writes_faster_than_the_server_answers_is_held_back() {
        // One message per handler start; permits let handlers finish.
        let (started_tx, mut started) = tokio::sync::mpsc::unbounded_channel::<()>();
        let release = Arc::new(tokio::sync::Semaphore::new(0));
        let r = release.clone();
        let server = Server::builder()
            .tool(
                ToolDef::new("block").raw_handler(move |_ctx: RequestContext, _: Value| {
                    let (s, r) = (started_tx.clone(), r.clone());
                    async move {
                        let _ = s.send(());
                        let _ = r.acquire().await.map(|p| p.forget());
                        Ok::<_, HandlerError>("done")
                    }
                }),
            )
            .build()
            .unwrap();
        let (client, server_end) = tokio::io::duplex(4096);
        let (server_read, server_write) = tokio::io::split(server_end);
        let (client_read, mut client_write) = tokio::io::split(client);
        let session = tokio::spawn(
            Stdio::new(server)
                .max_in_flight(2)
                .serve_io(server_read, server_write),
        );
        let total = 300;
        let cancel =
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":0}}"#;
        let all: String = (0..4)
            .map(request)
            .chain([format!("{cancel}\n")])
            .chain((4..total).map(request))
            .collect();
        let writer = tokio::spawn(async move {
            client_write.write_all(all.as_bytes()).await.unwrap();
            client_write
        });
        // Two run and two more wait; the cancellation behind them was still read (request 0
        // was cancelled before it started, a waiting one took its slot). The rest is not
        // read: the writer is blocked.
        for _ in 0..2 {
            started.recv().await.unwrap();
        }
        settled().await;
        assert!(started.is_empty(), "a third handler started");
        assert!(
            !writer.is_finished(),
            "{} bytes were all taken in",
            total * 250
        );
        let mut lines = tokio::io::BufReader::new(client_read).lines();
        release.add_permits(1);
        let first = lines.next_line().await.unwrap().unwrap();
        assert!(first.contains("done"), "{first}");
        // The freed slot goes to exactly one more.
        started.recv().await.unwrap();
        settled().await;
        assert!(started.is_empty(), "a fourth handler started");
        // Once the handlers finish, everything is answered (read while the rest is written).
        release.add_permits(total);
        let reader = tokio::spawn(async move {
            let mut answered = 1;
            while let Some(line) = lines.next_line().await.unwrap() {
                assert!(line.contains("done"), "{line}");
                answered += 1;
            }
            answered
        });
        let mut client_write = writer.await.unwrap();
        client_write.shutdown().await.unwrap();
        // Every request but the cancelled one.
        assert_eq!(reader.await.unwrap(), total - 1);
        session.await.unwrap().unwrap();
    }

    #[tokio::test]
    async fn oversized_lines_are_refused_and_the_session_goes_on() {
        let server = crate::fixtures::demo(Server::builder()).build().unwrap();
        let (client, server_end) = tokio::io::duplex(64 * 1024);
        let (server_read, server_write) = tokio::io::split(server_end);
        let (client_read, mut client_write) = tokio::io::split(client);
        let session = tokio::spawn(
            Stdio::new(server)
                .line_limit(100)
                .serve_io(server_read, server_write),
        );
        let mut input = vec![b'{'; 10_000];
        input.extend_from_slice(b"\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}\n");
        client_write.write_all(&input).await.unwrap();
        client_write.shutdown().await.unwrap();
        let mut lines = tokio::io::BufReader::new(client_read).lines();
        let too_long: Value =
            serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
        assert_eq!(too_long["error"]["code"], -32600);
        assert!(too_long.get("id").is_none());
        let next: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
        assert_eq!(
            (next["id"].clone(), next["error"]["code"].clone()),
            (json!(1), json!(-32602))
        );
        assert!(lines.next_line().await.unwrap().is_none());
        session.await.unwrap().unwrap();
    }
}
