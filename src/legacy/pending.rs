//! Server-to-client requests waiting for their answers, on the replica holding the stream
//! they were sent on.
//!
//! A legacy client answers a request (`elicitation/create`, `sampling/createMessage`,
//! `roots/list`) with a separate POST that the load balancer may send to any replica. The
//! request id says where to go: `<instance>.<n>.<random>`, where `instance` names the
//! process that sent it. The replica that receives the answer hands it over directly when it
//! is that instance, else publishes it on the bus ([`ChangeEvent::InputAnswer`]); every
//! instance hears the bus, and the named one delivers it. An answer is delivered only to a
//! request of the same session (another client cannot answer it); a late, unknown or
//! foreign answer is dropped with a log line.
//!

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chacha20poly1305::aead::OsRng;
use chacha20poly1305::aead::rand_core::RngCore as _;
use tokio::sync::oneshot;

use crate::backends::bus::{Delivery, MAX_EVENT_BYTES};
use crate::notify::{ChangeEvent, Notifier};
use crate::protocol::RequestId;

/// What became of an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Delivered {
    /// Handed to the waiting request on this replica.
    Here,
    /// Sent over the bus to the instance that holds the request.
    Forwarded,
    /// Dropped: late, unknown, foreign, or the bus refused it (logged).
    Dropped,
    /// Too large to travel on the bus ([`MAX_EVENT_BYTES`] as an event): refused.
    TooLarge,
}

struct Waiter {
    session: String,
    tx: oneshot::Sender<String>,
}

/// This process's waiting requests.
pub(crate) struct Pending {
    instance: String,
    next: AtomicU64,
    waiting: Mutex<HashMap<String, Waiter>>,
    listening: AtomicBool,
}

impl std::fmt::Debug for Pending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pending")
            .field("instance", &self.instance)
            .field("waiting", &self.lock().len())
            .finish()
    }
}

/// One request waiting for its answer; dropping it forgets the request (a later answer is
/// then dropped as late).
pub(crate) struct Waiting {
    /// The id sent to the client.
    pub(crate) id: RequestId,
    key: String,
    rx: oneshot::Receiver<String>,
    pending: Arc<Pending>,
}

impl Waiting {
    /// The JSON text of the client's answer; `None` if it can never come.
    pub(crate) async fn answer(&mut self) -> Option<String> {
        (&mut self.rx).await.ok()
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        self.pending.lock().remove(&self.key);
    }
}

fn random(bytes: usize) -> String {
    let mut raw = vec![0u8; bytes];
    OsRng.fill_bytes(&mut raw);
    URL_SAFE_NO_PAD.encode(raw)
}

/// The instance a request id names (its first dot-separated part).
pub(crate) fn instance_of(id: &str) -> Option<&str> {
    id.split_once('.').map(|(i, _)| i).filter(|i| !i.is_empty())
}

impl Pending {
    pub(crate) fn new() -> Self {
        Pending {
            instance: random(9),
            next: AtomicU64::new(1),
            waiting: Mutex::new(HashMap::new()),
            listening: AtomicBool::new(false),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Waiter>> {
        self.waiting.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// How many requests wait now.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }

    /// A new request of `session`, waiting for its answer. The first one starts this
    /// instance's bus listener (subscribed before the request can be sent).
    pub(crate) fn register(self: &Arc<Self>, session: &str, notifier: &Notifier) -> Waiting {
        self.listen(notifier);
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let key = format!("{}.{n}.{}", self.instance, random(6));
        let (tx, rx) = oneshot::channel();
        self.lock().insert(
            key.clone(),
            Waiter {
                session: session.to_owned(),
                tx,
            },
        );
        Waiting {
            id: RequestId::from(key.as_str()),
            key,
            rx,
            pending: self.clone(),
        }
    }

    /// Hands `answer` to request `id` of `session` if it waits here.
    fn deliver_here(&self, id: &str, session: &str, answer: String) -> Delivered {
        let mut waiting = self.lock();
        match waiting.get(id) {
            Some(w) if w.session == session => {
                let w = waiting.remove(id).expect("present");
                drop(waiting);
                if w.tx.send(answer).is_ok() {
                    Delivered::Here
                } else {
                    tracing::info!(
                        request_id = id,
                        "dropped an answer: its request was abandoned"
                    );
                    Delivered::Dropped
                }
            }
            Some(_) => {
                tracing::warn!(
                    request_id = id,
                    "dropped an answer from another session than the request's"
                );
                Delivered::Dropped
            }
            None => {
                tracing::info!(
                    request_id = id,
                    "dropped a late or unknown answer to a server-to-client request"
                );
                Delivered::Dropped
            }
        }
    }

    /// Hands `answer` to request `id` of `session` if it waits in this process; never
    /// forwards it (for a transport whose client can only be answering this process's
    /// requests: stdio). Anything else is dropped with a log line.
    pub(crate) fn deliver_local(&self, id: &RequestId, session: &str, answer: String) -> Delivered {
        match id {
            RequestId::String(id) => self.deliver_here(id, session, answer),
            RequestId::Number(_) => {
                tracing::info!(request_id = %id, "dropped an answer to an unknown server-to-client request");
                Delivered::Dropped
            }
        }
    }

    /// Routes a client's `answer` (its JSON text) to request `id` of `session`: here, or
    /// over the bus to the instance the id names.
    pub(crate) async fn route(
        &self,
        id: &RequestId,
        session: &str,
        answer: String,
        notifier: &Notifier,
    ) -> Delivered {
        let RequestId::String(id) = id else {
            tracing::info!(request_id = %id, "dropped an answer to an unknown server-to-client request");
            return Delivered::Dropped;
        };
        match instance_of(id) {
            Some(i) if i == self.instance => self.deliver_here(id, session, answer),
            Some(i) => {
                let event = ChangeEvent::InputAnswer {
                    replica: i.to_owned(),
                    id: id.to_string(),
                    session: session.to_owned(),
                    answer,
                    traceparent: crate::observability::current_traceparent(),
                };
                let size = serde_json::to_vec(&event).map_or(usize::MAX, |v| v.len());
                if size > MAX_EVENT_BYTES {
                    tracing::warn!(request_id = %id, bytes = size, "refused an answer too large to forward over the bus");
                    return Delivered::TooLarge;
                }
                match notifier.publish(event).await {
                    Ok(()) => Delivered::Forwarded,
                    Err(e) => {
                        tracing::error!(request_id = %id, error = %e, "could not forward an answer to the replica holding its request");
                        Delivered::Dropped
                    }
                }
            }
            None => {
                tracing::info!(request_id = %id, "dropped an answer to an unknown server-to-client request");
                Delivered::Dropped
            }
        }
    }

    /// Starts, once, the task that delivers answers forwarded to this instance over the bus.
    fn listen(self: &Arc<Self>, notifier: &Notifier) {
        if self.listening.swap(true, Ordering::AcqRel) {
            return;
        }
        let mut bus = notifier.subscribe();
        let me: Weak<Pending> = Arc::downgrade(self);
        let instance = self.instance.clone();
        tokio::spawn(async move {
            while let Some(delivery) = bus.recv().await {
                let Delivery::Event(event) = delivery else {
                    continue;
                };
                let ChangeEvent::InputAnswer {
                    replica,
                    id,
                    session,
                    answer,
                    traceparent,
                } = &*event
                else {
                    continue;
                };
                if *replica != instance {
                    continue;
                }
                let Some(pending) = me.upgrade() else {
                    return;
                };
                // In the trace of the replica that received the answer.
                let span =
                    tracing::debug_span!("mcp.input_answer.deliver", jsonrpc.request.id = %id);
                crate::observability::continue_trace(&span, traceparent.as_deref());
                span.in_scope(|| pending.deliver_here(id, session, answer.clone()));
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn answers_reach_their_request_here_or_over_the_bus() {
        let bus = Notifier::memory();
        let (a, b) = (Arc::new(Pending::new()), Arc::new(Pending::new()));
        let mut w = a.register("s1", &bus);
        assert_eq!(a.len(), 1);
        let id = w.id.to_string();
        assert_eq!(instance_of(&id), Some(a.instance.as_str()));
        // Posted to the other replica: forwarded over the bus.
        assert_eq!(
            b.route(&w.id, "s1", r#"{"result":{}}"#.into(), &bus).await,
            Delivered::Forwarded
        );
        let got = tokio::time::timeout(Duration::from_secs(5), w.answer()).await;
        assert_eq!(got.unwrap().as_deref(), Some(r#"{"result":{}}"#));
        drop(w);
        assert_eq!(a.len(), 0);

        // Another session cannot answer; a late answer is dropped.
        let w = a.register("s1", &bus);
        assert_eq!(
            a.route(&w.id, "s2", "{}".into(), &bus).await,
            Delivered::Dropped
        );
        let id = w.id.clone();
        drop(w);
        assert_eq!(
            a.route(&id, "s1", "{}".into(), &bus).await,
            Delivered::Dropped
        );
        assert_eq!(
            a.route(&RequestId::Number(3), "s1", "{}".into(), &bus)
                .await,
            Delivered::Dropped
        );
        assert_eq!(
            a.route(&RequestId::from("nodot"), "s1", "{}".into(), &bus)
                .await,
            Delivered::Dropped
        );
        // Too large for the bus (answered here, any size is fine).
        let big = "x".repeat(MAX_EVENT_BYTES);
        let w = a.register("s1", &bus);
        assert_eq!(
            b.route(&w.id, "s1", big.clone(), &bus).await,
            Delivered::TooLarge
        );
        let mut w2 = w;
        assert_eq!(a.route(&w2.id, "s1", big, &bus).await, Delivered::Here);
        assert!(w2.answer().await.is_some());
        // Answered here.
        let mut w = a.register("s1", &bus);
        assert_eq!(
            a.route(&w.id, "s1", "1".into(), &bus).await,
            Delivered::Here
        );
        assert_eq!(w.answer().await.as_deref(), Some("1"));
    }
}
