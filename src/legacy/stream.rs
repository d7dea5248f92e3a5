//! A legacy session's GET stream: the change notifications of the 2025-11-25 wire, fed by
//! the same bus as `subscriptions/listen` streams, so a change announced on any replica
//! reaches it.
//!
//! It carries `notifications/{tools,prompts,resources}/list_changed` for the lists this
//! server has, and `notifications/resources/updated` for the URIs the session subscribed to
//! (or a sub-resource of one). The subscriptions live in the session store; the stream
//! reads them when it opens and again whenever any replica announces that the session
//! changed (`session_changed` on the bus), which is also how it learns that the session was
//! deleted (it then ends). A stream that fell behind the bus resyncs as listen streams do:
//! every list-changed notification, and `resources/updated` for every subscribed URI. It
//! ends without a word when the server drains, when the session expires, or at the listen
//! streams' maximum lifetime; the client opens it again, on any replica.
//!

use std::collections::VecDeque;
use std::sync::Arc;

use bytes::Bytes;
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use super::session::Session;
use super::store::{SessionSettings, SessionStore};
use crate::backends::bus::{BusReceiver, Delivery};
use crate::notify::{ChangeEvent, ListFingerprints};
use crate::observability::metrics;
use crate::protocol::legacy::LegacyNotification;
use crate::protocol::{
    PROMPTS_LIST_CHANGED, RESOURCES_LIST_CHANGED, RESOURCES_UPDATED, TOOLS_LIST_CHANGED,
};
use crate::server::advertised::Advertised;
use crate::server::listen::{Slot, covers};
use crate::server::versions::{Versions, changed_lists};

#[derive(Serialize)]
struct Updated<'a> {
    uri: &'a str,
}

fn encode<P: Serialize>(method: &str, params: Option<P>) -> Bytes {
    match serde_json::to_vec(&LegacyNotification::new(method, params)) {
        Ok(v) => Bytes::from(v),
        Err(e) => {
            tracing::error!(error = %e, "a notification failed to serialize");
            Bytes::new()
        }
    }
}

/// Everything one open stream holds.
pub(crate) struct Stream {
    pub(crate) session: Session,
    pub(crate) settings: SessionSettings,
    pub(crate) store: Arc<dyn SessionStore>,
    pub(crate) bus: BusReceiver,
    /// What the server advertises: the lists this stream announces changes of.
    pub(crate) lists: Advertised,
    /// This replica's lists as the stream last reported them, and their changes.
    pub(crate) versions: Versions,
    pub(crate) shutdown: CancellationToken,
    pub(crate) deadline: Option<tokio::time::Instant>,
    /// Whether it opens with a resync (it replaces a stream the client lost, and what was
    /// announced while none was open reached no one).
    pub(crate) resync: bool,
    /// This stream's place in the replica's stream count.
    pub(crate) _slot: Slot,
}

struct State {
    s: Stream,
    pending: VecDeque<Bytes>,
    done: bool,
}

impl State {
    fn list_changed(&mut self, method: &'static str) {
        metrics::record_notification_delivered(method);
        self.pending.push_back(encode::<()>(method, None));
    }

    fn updated(&mut self, uri: &str) {
        metrics::record_notification_delivered(RESOURCES_UPDATED);
        self.pending
            .push_back(encode(RESOURCES_UPDATED, Some(Updated { uri })));
    }

    /// The list-changed notifications owed for `theirs` (another replica's lists), or for
    /// a resync (`None`).
    fn lists_changed(&mut self, theirs: Option<&ListFingerprints>) {
        let l = self.s.lists;
        let ours = theirs.map(|_| self.s.versions.seen.clone());
        let diff = ours.as_deref().zip(theirs);
        for method in changed_lists([l.tools, l.prompts, l.resources], diff) {
            self.list_changed(method);
        }
    }

    /// Every list changed, every subscribed resource updated: what the client may have
    /// missed, announced again.
    fn resync(&mut self) {
        self.lists_changed(None);
        let uris: Vec<String> = self.s.settings.subscriptions.iter().cloned().collect();
        for uri in uris {
            self.updated(&uri);
        }
    }

    /// Reads the session's settings again; a deleted session ends the stream.
    async fn reload(&mut self) {
        match self.s.store.load(&self.s.session.key).await {
            Ok(settings) => {
                self.done = settings.revoked;
                self.s.settings = settings;
            }
            Err(e) => {
                tracing::warn!(error = %e, "a legacy GET stream could not re-read its session; keeping what it had");
            }
        }
    }

    async fn on(&mut self, delivery: Delivery) {
        let l = self.s.lists;
        let event = match delivery {
            Delivery::Resync => {
                self.reload().await;
                self.resync();
                return;
            }
            Delivery::Event(event) => event,
        };
        if let ChangeEvent::SessionChanged { session } = &*event {
            if **session == *self.s.session.key {
                self.reload().await;
            }
            return;
        }
        let method = match &*event {
            ChangeEvent::ToolsListChanged { .. } if l.tools => TOOLS_LIST_CHANGED,
            ChangeEvent::PromptsListChanged { .. } if l.prompts => PROMPTS_LIST_CHANGED,
            ChangeEvent::ResourcesListChanged { .. } if l.resources => RESOURCES_LIST_CHANGED,
            ChangeEvent::ResourceUpdated { uri, .. }
                if self.s.settings.subscriptions.iter().any(|s| covers(s, uri)) =>
            {
                RESOURCES_UPDATED
            }
            ChangeEvent::ServerFingerprint(theirs) => return self.lists_changed(Some(theirs)),
            _ => return,
        };
        // In the publisher's trace when it sent one.
        event.delivery_span().in_scope(|| match &*event {
            ChangeEvent::ResourceUpdated { uri, .. } => self.updated(uri),
            _ => self.list_changed(method),
        });
    }

    async fn next(mut self) -> Option<(Bytes, Self)> {
        loop {
            if let Some(next) = self.pending.pop_front() {
                return Some((next, self));
            }
            if self.done {
                return None;
            }
            let deadline = self.s.deadline;
            let lifetime = async move {
                match deadline {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                biased;
                _ = self.s.shutdown.cancelled() => self.done = true,
                _ = lifetime => self.done = true,
                before = self.s.versions.changed() => self.lists_changed(Some(&before)),
                delivery = self.s.bus.recv() => match delivery {
                    Some(d) => self.on(d).await,
                    None => self.done = true,
                },
            }
        }
    }
}

impl Stream {
    /// The stream's messages, each one JSON text.
    pub(crate) fn messages(self) -> futures_util::stream::BoxStream<'static, Bytes> {
        let done = self.settings.revoked;
        let resync = self.resync && !done;
        let mut state = State {
            s: self,
            pending: VecDeque::new(),
            done,
        };
        if resync {
            state.resync();
        }
        Box::pin(futures_util::stream::unfold(state, State::next))
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use futures_util::StreamExt as _;
    use serde_json::{Value, json};

    use super::*;
    use crate::legacy::store::MemorySessionStore;
    use crate::notify::Notifier;
    use crate::server::listen::{ListenLimits, Listeners};

    fn fingerprints() -> ListFingerprints {
        ListFingerprints {
            tools: "t".into(),
            prompts: "p".into(),
            resources: "r".into(),
        }
    }

    #[tokio::test]
    async fn follows_the_bus_and_the_store_and_ends_when_the_session_is_deleted() {
        let store: Arc<dyn SessionStore> = Arc::new(MemorySessionStore::default());
        let expires = SystemTime::now() + Duration::from_secs(60);
        store.subscribe("k", "test://a", expires).await.unwrap();
        let bus = Notifier::memory();
        let listeners = Listeners::new(ListenLimits::default(), Arc::new(fingerprints()));
        let session = Session {
            key: "k".into(),
            identity: Arc::new(crate::protocol::ClientIdentity {
                protocol_version: "2025-11-25".into(),
                capabilities: Default::default(),
                client_info: None,
            }),
            expires,
            issued: SystemTime::now(),
        };
        let stream = Stream {
            session,
            settings: store.load("k").await.unwrap(),
            store: store.clone(),
            bus: bus.subscribe(),
            lists: Advertised {
                tools: true,
                prompts: false,
                resources: true,
                tasks: false,
                skills: false,
            },
            versions: listeners.versions(),
            shutdown: CancellationToken::new(),
            deadline: None,
            resync: false,
            _slot: listeners.acquire().unwrap(),
        };
        assert_eq!(listeners.open(), 1);
        let mut messages = stream.messages();
        async fn next(messages: &mut futures_util::stream::BoxStream<'static, Bytes>) -> Value {
            let m = tokio::time::timeout(Duration::from_secs(5), messages.next())
                .await
                .unwrap()
                .unwrap();
            serde_json::from_slice(&m).unwrap()
        }
        // Prompts are not a list this server has; a sub-resource of a subscription counts.
        bus.prompts_list_changed().await.unwrap();
        bus.resource_updated("test://a/b").await.unwrap();
        assert_eq!(next(&mut messages).await["params"]["uri"], "test://a/b");
        // Another replica subscribed to test://c: the stream re-reads the store.
        store.subscribe("k", "test://c", expires).await.unwrap();
        bus.publish(ChangeEvent::SessionChanged {
            session: "k".into(),
        })
        .await
        .unwrap();
        bus.resource_updated("test://c").await.unwrap();
        assert_eq!(next(&mut messages).await["params"]["uri"], "test://c");
        // Another replica's lists differ (a rolling deploy): tools and resources changed.
        let mut theirs = fingerprints();
        theirs.tools = "other".into();
        bus.publish(ChangeEvent::ServerFingerprint(theirs))
            .await
            .unwrap();
        assert_eq!(
            next(&mut messages).await,
            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        );
        // Deleted on another replica: the stream ends, and its slot is released.
        store.revoke("k", expires).await.unwrap();
        bus.publish(ChangeEvent::SessionChanged {
            session: "k".into(),
        })
        .await
        .unwrap();
        let end = tokio::time::timeout(Duration::from_secs(5), messages.next()).await;
        assert!(end.unwrap().is_none());
        drop(messages);
        assert_eq!(listeners.open(), 0);
    }
}
