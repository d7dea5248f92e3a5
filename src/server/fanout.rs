//! The replica's listen fan-out: one bus subscription for all `subscriptions/listen` streams,
//! each event matched against an index of what the streams asked for and encoded once, each
//! interested stream's id spliced in ([`super::spliced`]).
//!
//! A stream registers its interest when it opens ([`Hub::register`]) and leaves the table when
//! it is dropped. One task per replica reads the bus: a list change goes to the streams that
//! follow that list; a `resources/updated` to the streams subscribed to the URI or a parent of
//! it, found by looking up the URI's covering prefixes (see [`super::listen::covers`]) in a
//! map, never by scanning every stream's subscriptions; a task status to the streams that
//! listed its id. Each stream has a bounded inbox: one that falls [`INBOX_CAPACITY`] messages
//! behind skips them and resyncs (as a lagging bus subscriber does), so a stalled client never
//! grows memory and never slows the others.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError, Weak};

use bytes::Bytes;
use tokio::sync::{Notify, watch};
use tokio::task::JoinHandle;
use tokio_util::sync::{CancellationToken, DropGuard};

mod keys;

use self::keys::StreamKeys;
use super::spliced::{EncodedId, Spliced};
use super::versions::{Versions, changed_lists};
use crate::backends::bus::{BusReceiver, Delivery};
use crate::notify::{ChangeEvent, ListFingerprints, Notifier};
use crate::observability::metrics;
use crate::protocol::{
    ListChangedParams, PROMPTS_LIST_CHANGED, RESOURCES_LIST_CHANGED, RESOURCES_UPDATED,
    ResourceUpdatedParams, TASKS_NOTIFICATION, TOOLS_LIST_CHANGED, TaskNotificationParams,
};

/// Messages a stream may have waiting before it skips them and resyncs (the in-process bus's
/// default ring size).
pub(crate) const INBOX_CAPACITY: usize = crate::backends::bus::DEFAULT_CAPACITY;

/// The inbox capacity a drained stream keeps: a burst grows it (up to [`INBOX_CAPACITY`]),
/// and it shrinks back once emptied.
const IDLE_INBOX_CAPACITY: usize = 4;

/// The list-changed methods, in the order of [`Interest::follows`].
const LISTS: [&str; 3] = [
    TOOLS_LIST_CHANGED,
    PROMPTS_LIST_CHANGED,
    RESOURCES_LIST_CHANGED,
];

/// What one stream asked for (and the server honours).
pub(crate) struct Interest {
    /// Whether it follows the tool, prompt and resource lists, in that order.
    pub(crate) follows: [bool; 3],
    /// The URIs it subscribed to.
    pub(crate) uris: Vec<String>,
    /// The task ids it listens to.
    pub(crate) task_ids: Vec<String>,
    /// The digest of its principal: only that principal's tasks are reported.
    pub(crate) principal: Option<String>,
}

/// What a stream's inbox yields.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Received {
    /// A message for the stream.
    Message(Bytes),
    /// Messages were skipped (the stream or the fan-out fell behind the bus): assume every
    /// followed list and subscribed resource changed.
    Resync,
    /// The bus is gone: nothing more will arrive.
    Closed,
}

#[derive(Default)]
struct Queue {
    /// Shared with every stream the event went to: the stream's id is spliced in when it
    /// takes the message, so the fan-out encodes and copies nothing per stream.
    messages: VecDeque<Arc<Spliced>>,
    lagged: bool,
    closed: bool,
}

/// One stream's bounded queue of encoded messages, filled by the fan-out task.
#[derive(Default)]
pub(crate) struct Inbox {
    queue: Mutex<Queue>,
    wake: Notify,
}

impl Inbox {
    fn with<R>(&self, f: impl FnOnce(&mut Queue) -> R) -> R {
        let r = f(&mut self.queue.lock().unwrap_or_else(PoisonError::into_inner));
        self.wake.notify_one();
        r
    }

    /// Queues `message`; when the inbox is full, drops what it holds and marks it lagged.
    /// Whether the message was queued.
    fn push(&self, message: &Arc<Spliced>) -> bool {
        self.with(|q| {
            if q.messages.len() >= INBOX_CAPACITY {
                q.messages = VecDeque::new();
                q.lagged = true;
                metrics::record_bus_lagged(1);
                false
            } else {
                q.messages.push_back(message.clone());
                true
            }
        })
    }

    fn resync(&self) {
        self.with(|q| {
            q.messages = VecDeque::new();
            q.lagged = true;
        });
    }

    fn close(&self) {
        self.with(|q| q.closed = true);
    }

    /// The next message (for the stream with the listen request id `id`), resync or end.
    /// Cancel-safe: nothing is taken unless it returns.
    pub(crate) async fn recv(&self, id: &EncodedId) -> Received {
        loop {
            let message = {
                let mut q = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
                if q.lagged {
                    q.lagged = false;
                    return Received::Resync;
                }
                let message = q.messages.pop_front();
                if message.is_none() && q.closed {
                    return Received::Closed;
                }
                if q.messages.is_empty() && q.messages.capacity() > IDLE_INBOX_CAPACITY {
                    // A burst is over: an idle stream keeps a small inbox.
                    q.messages = VecDeque::with_capacity(IDLE_INBOX_CAPACITY);
                }
                message
            };
            if let Some(m) = message {
                return Received::Message(m.to(id));
            }
            // A push between the check and here leaves a permit: no wake-up is lost.
            self.wake.notified().await;
        }
    }
}

struct Entry {
    follows: [bool; 3],
    principal: Option<String>,
    uris: Vec<String>,
    task_ids: Vec<String>,
    inbox: Arc<Inbox>,
}

/// The open streams and the indexes into them.
///
/// Streams are kept and visited in the order they registered (keys count up): streams opened
/// together — typically the streams of one HTTP/2 connection — are woken one after another
/// instead of in a hash map's order, which hopped across connections on every wake-up (at
/// 50,000 streams that cost about 25 % more writes and twice the server CPU per event).
struct Table {
    next: u64,
    streams: BTreeMap<u64, Entry>,
    by_uri: HashMap<String, StreamKeys>,
    by_task: HashMap<String, StreamKeys>,
    /// The list-changed notifications, encoded once.
    lists: [Arc<Spliced>; 3],
    /// The task reading the bus, while it runs.
    task: Option<JoinHandle<()>>,
    /// Whether the task still reads the bus (false once the bus closed).
    live: bool,
}

fn index(map: &mut HashMap<String, StreamKeys>, keys: &[String], key: u64) {
    for k in keys {
        match map.get_mut(k) {
            Some(streams) => streams.insert(key),
            None => {
                map.insert(k.clone(), StreamKeys::One(key));
            }
        }
    }
}

fn unindex(map: &mut HashMap<String, StreamKeys>, keys: &[String], key: u64) {
    for k in keys {
        if map.get_mut(k).is_some_and(|streams| streams.remove(key)) {
            map.remove(k);
        }
    }
}

/// The prefixes of `uri` that cover it ([`super::listen::covers`]): `uri` itself, and each
/// prefix followed by `/`, `?` or `#` or ending in `/`.
pub(crate) fn covering_prefixes(uri: &str) -> impl Iterator<Item = &str> {
    let bytes = uri.as_bytes();
    (1..=bytes.len())
        .filter(move |&i| {
            i == bytes.len() || bytes[i - 1] == b'/' || matches!(bytes[i], b'/' | b'?' | b'#')
        })
        .map(move |i| &uri[..i])
}

impl Table {
    fn new() -> Self {
        Table {
            next: 0,
            streams: BTreeMap::new(),
            by_uri: HashMap::new(),
            by_task: HashMap::new(),
            lists: LISTS
                .map(|method| Arc::new(Spliced::new(method, |meta| ListChangedParams { meta }))),
            task: None,
            live: false,
        }
    }

    /// The streams following the list `list` (see [`Interest::follows`]), in registration
    /// order.
    fn followers(&self, list: usize) -> impl Iterator<Item = (u64, &Entry)> {
        self.streams
            .iter()
            .filter(move |(_, e)| e.follows[list])
            .map(|(k, e)| (*k, e))
    }

    /// Sends the list-changed notification `list`, because of `cause`, to every stream
    /// following it.
    fn list_changed(&self, list: usize, cause: &ChangeEvent) {
        let followers = self.followers(list).map(|(_, e)| e);
        self.push(LISTS[list], followers, &self.lists[list], cause);
    }

    /// Sends `message`, because of `cause`, to the streams `keys`.
    fn send(
        &self,
        method: &'static str,
        keys: impl Iterator<Item = u64>,
        message: Spliced,
        cause: &ChangeEvent,
    ) {
        let to = keys.filter_map(|k| self.streams.get(&k));
        self.push(method, to, &Arc::new(message), cause);
    }

    /// Pushes `message` into the inboxes of `to`; when there is any, in the span continuing
    /// the trace of `cause` (the publisher's), if it carries one.
    fn push<'a>(
        &self,
        method: &'static str,
        to: impl Iterator<Item = &'a Entry>,
        message: &Arc<Spliced>,
        cause: &ChangeEvent,
    ) {
        let mut to = to.peekable();
        let mut n = 0;
        if to.peek().is_some() {
            cause.delivery_span().in_scope(|| {
                for e in to {
                    n += u64::from(e.inbox.push(message));
                }
            });
        }
        metrics::record_notifications_delivered(method, n);
    }

    fn deliver(&self, event: &ChangeEvent, ours: &ListFingerprints) {
        match event {
            ChangeEvent::ToolsListChanged { .. } => self.list_changed(0, event),
            ChangeEvent::PromptsListChanged { .. } => self.list_changed(1, event),
            ChangeEvent::ResourcesListChanged { .. } => self.list_changed(2, event),
            ChangeEvent::ResourceUpdated { uri, .. } => {
                let mut covering = covering_prefixes(uri).filter_map(|p| self.by_uri.get(p));
                let Some(first) = covering.next() else {
                    return;
                };
                let second = covering.next();
                let owned = uri.clone();
                let message = Spliced::new(RESOURCES_UPDATED, move |meta| ResourceUpdatedParams {
                    meta,
                    uri: owned.clone(),
                });
                match second {
                    None => self.send(RESOURCES_UPDATED, first.iter(), message, event),
                    Some(second) => {
                        // A stream subscribed to several covering URIs hears about it once.
                        let mut keys: Vec<u64> = first
                            .iter()
                            .chain(second.iter())
                            .chain(covering.flat_map(StreamKeys::iter))
                            .collect();
                        keys.sort_unstable();
                        keys.dedup();
                        self.send(RESOURCES_UPDATED, keys.into_iter(), message, event);
                    }
                }
            }
            ChangeEvent::TaskStatus(change) => {
                let Some(keys) = self.by_task.get(&change.task.task_id) else {
                    return;
                };
                let keys = keys.iter().filter(|k| {
                    self.streams
                        .get(k)
                        .is_some_and(|e| e.principal == change.principal)
                });
                let task = change.task.clone();
                let message = Spliced::new(TASKS_NOTIFICATION, move |meta| {
                    TaskNotificationParams::new(task.clone(), meta)
                });
                self.send(TASKS_NOTIFICATION, keys, message, event);
            }
            ChangeEvent::ServerFingerprint(theirs) => {
                for method in changed_lists([true; 3], Some((ours, theirs))) {
                    if let Some(list) = LISTS.iter().position(|m| *m == method) {
                        self.list_changed(list, event);
                    }
                }
            }
            _ => {}
        }
    }

    fn each_inbox(&self, f: impl Fn(&Inbox)) {
        for e in self.streams.values() {
            f(&e.inbox);
        }
    }
}

/// The fan-out of one replica.
pub(crate) struct Hub {
    table: Arc<Mutex<Table>>,
    /// This replica's list fingerprints as runtime changes update them.
    fingerprints: watch::Receiver<Arc<ListFingerprints>>,
    /// Stops the task when the hub goes.
    stop: CancellationToken,
    _stop_on_drop: DropGuard,
}

/// A stream's place in the table; dropping it removes the stream.
pub(crate) struct Registration {
    table: Arc<Mutex<Table>>,
    key: u64,
}

impl Drop for Registration {
    fn drop(&mut self) {
        let mut t = self.table.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(e) = t.streams.remove(&self.key) {
            unindex(&mut t.by_uri, &e.uris, self.key);
            unindex(&mut t.by_task, &e.task_ids, self.key);
        }
    }
}

impl Hub {
    pub(crate) fn new(fingerprints: watch::Receiver<Arc<ListFingerprints>>) -> Self {
        let stop = CancellationToken::new();
        Hub {
            table: Arc::new(Mutex::new(Table::new())),
            fingerprints,
            _stop_on_drop: stop.clone().drop_guard(),
            stop,
        }
    }

    /// Adds a stream with `interest`; its messages arrive in the returned inbox until the
    /// registration is dropped. Starts the task reading `notifier`'s bus if it does not run
    /// (first stream, or the bus closed or its runtime ended since). Call from a Tokio
    /// runtime.
    pub(crate) fn register(
        &self,
        interest: Interest,
        notifier: &Notifier,
    ) -> (Arc<Inbox>, Registration) {
        let inbox = Arc::new(Inbox::default());
        let mut t = self.table.lock().unwrap_or_else(PoisonError::into_inner);
        if !t.live || t.task.as_ref().is_none_or(JoinHandle::is_finished) {
            t.live = true;
            t.task = Some(tokio::spawn(run(
                Arc::downgrade(&self.table),
                notifier.subscribe(),
                Versions::new(self.fingerprints.clone()),
                self.stop.clone(),
            )));
        }
        let key = t.next;
        t.next += 1;
        index(&mut t.by_uri, &interest.uris, key);
        index(&mut t.by_task, &interest.task_ids, key);
        t.streams.insert(
            key,
            Entry {
                follows: interest.follows,
                principal: interest.principal,
                uris: interest.uris,
                task_ids: interest.task_ids,
                inbox: inbox.clone(),
            },
        );
        drop(t);
        let registration = Registration {
            table: self.table.clone(),
            key,
        };
        (inbox, registration)
    }
}

/// Reads the bus for every stream of the table until the bus closes, the hub is dropped or
/// the table is gone.
async fn run(
    table: Weak<Mutex<Table>>,
    mut bus: BusReceiver,
    mut ours: Versions,
    stop: CancellationToken,
) {
    loop {
        let delivery = tokio::select! {
            biased;
            () = stop.cancelled() => return,
            // A runtime change here: the lists that differ from before changed.
            before = ours.changed() => {
                Some(Delivery::Event(Arc::new(ChangeEvent::ServerFingerprint((*before).clone()))))
            }
            d = bus.recv() => d,
        };
        let Some(table) = table.upgrade() else {
            return;
        };
        let mut t = table.lock().unwrap_or_else(PoisonError::into_inner);
        match delivery {
            Some(Delivery::Event(event)) => t.deliver(&event, &ours.seen),
            Some(Delivery::Resync) => t.each_inbox(Inbox::resync),
            None => {
                t.live = false;
                t.each_inbox(Inbox::close);
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::listen::covers;
    use std::collections::HashSet;

    #[test]
    fn covering_prefixes_find_exactly_the_covering_subscriptions() {
        let subscriptions = [
            "file:///p",
            "file:///p/",
            "file:///p/a",
            "file:///pro",
            "db://t",
            "db://t?row",
            "ü://x/ÿ",
            "file:",
        ];
        let updates = [
            "file:///p",
            "file:///p/a",
            "file:///p/a/b",
            "file:///project",
            "file:///p?x=1",
            "file:///p#frag",
            "db://t?row=1",
            "db://t",
            "ü://x/ÿ/z",
            "ü://x/ÿz",
            "file:",
        ];
        for updated in updates {
            let found: HashSet<&str> = covering_prefixes(updated)
                .filter(|p| subscriptions.contains(p))
                .collect();
            let want: HashSet<&str> = subscriptions
                .into_iter()
                .filter(|s| covers(s, updated))
                .collect();
            assert_eq!(found, want, "{updated}");
        }
    }

    fn interest(id: i64, follows: [bool; 3], uris: &[&str], tasks: &[&str]) -> Interest {
        Interest {
            follows,
            uris: uris.iter().map(|u| u.to_string()).collect(),
            task_ids: tasks.iter().map(|t| t.to_string()).collect(),
            principal: Some(format!("p{}", id % 2)),
        }
    }

    fn id(n: i64) -> EncodedId {
        EncodedId::new(crate::protocol::RequestId::Number(n))
    }

    /// The method and subscription id of what `inbox` (of the stream with id `n`) holds now.
    async fn drained(inbox: &Inbox, n: i64) -> Vec<String> {
        let mut out = Vec::new();
        let id = id(n);
        while let Ok(r) =
            tokio::time::timeout(std::time::Duration::from_millis(50), inbox.recv(&id)).await
        {
            match r {
                Received::Message(m) => {
                    let v: serde_json::Value = serde_json::from_slice(&m).unwrap();
                    let id = &v["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"];
                    out.push(format!("{} {id}", v["method"].as_str().unwrap()));
                }
                other => out.push(format!("{other:?}")),
            }
        }
        out
    }

    #[tokio::test]
    async fn events_reach_exactly_the_interested_streams() {
        let ours = ListFingerprints {
            tools: "t".into(),
            prompts: "p".into(),
            resources: "r".into(),
        };
        let hub = Hub::new(watch::Sender::new(Arc::new(ours.clone())).subscribe());
        let notifier = Notifier::memory();
        let (a, _ra) = hub.register(
            interest(
                1,
                [true, false, false],
                &["file:///p", "file:///p/"],
                &["t1"],
            ),
            &notifier,
        );
        let (b, rb) = hub.register(
            interest(2, [false, true, true], &["file:///p/a", "db://x"], &["t1"]),
            &notifier,
        );
        let (c, _rc) = hub.register(interest(3, [true; 3], &[], &[]), &notifier);
        let publish = |e| {
            let n = notifier.clone();
            async move { n.publish(e).await.unwrap() }
        };
        publish(ChangeEvent::tools_list_changed()).await;
        // Covered twice for stream 1 (both its URIs), once for 2.
        publish(ChangeEvent::resource_updated("file:///p/a")).await;
        publish(ChangeEvent::resource_updated("file:///project")).await;
        let task = crate::protocol::Task {
            task_id: "t1".into(),
            status: "working".into(),
            status_message: None,
            created_at: "2026-01-01T00:00:00Z".into(),
            last_updated_at: "2026-01-01T00:00:00Z".into(),
            ttl_ms: None,
            poll_interval_ms: None,
        };
        // Only the principal's own stream (1 is "p1", 2 is "p0").
        publish(ChangeEvent::TaskStatus(crate::notify::TaskChange::new(
            task,
            Some("p1".into()),
        )))
        .await;
        let mut theirs = ours.clone();
        theirs.prompts = "other".into();
        publish(ChangeEvent::ServerFingerprint(theirs)).await;
        assert_eq!(
            drained(&a, 1).await,
            [
                "notifications/tools/list_changed 1",
                "notifications/resources/updated 1",
                "notifications/tasks 1",
            ]
        );
        assert_eq!(
            drained(&b, 2).await,
            [
                "notifications/resources/updated 2",
                "notifications/prompts/list_changed 2"
            ]
        );
        assert_eq!(
            drained(&c, 3).await,
            [
                "notifications/tools/list_changed 3",
                "notifications/prompts/list_changed 3"
            ]
        );
        // A dropped stream leaves the indexes.
        drop(rb);
        {
            let t = hub.table.lock().unwrap();
            assert!(!t.by_uri.contains_key("db://x"));
            assert_eq!(t.by_task["t1"].iter().count(), 1);
            assert_eq!(t.streams.len(), 2);
        }
        publish(ChangeEvent::resource_updated("file:///p/a")).await;
        assert_eq!(drained(&a, 1).await, ["notifications/resources/updated 1"]);
        assert!(drained(&b, 2).await.is_empty());
    }

    /// A message whose text is `i` followed by the stream's id.
    fn numbered(i: usize) -> Arc<Spliced> {
        Arc::new(Spliced::Split {
            before: Bytes::from(i.to_string()),
            after: Bytes::new(),
        })
    }

    #[tokio::test]
    async fn a_full_inbox_resyncs_instead_of_growing() {
        let inbox = Inbox::default();
        for i in 0..INBOX_CAPACITY + 3 {
            inbox.push(&numbered(i));
        }
        let id = id(7);
        assert_eq!(inbox.recv(&id).await, Received::Resync);
        // What came after the overflow is kept, the stream's id spliced in.
        let after = |i: usize| Received::Message(Bytes::from(format!("{}7", INBOX_CAPACITY + i)));
        assert_eq!(inbox.recv(&id).await, after(1));
        inbox.close();
        assert_eq!(inbox.recv(&id).await, after(2));
        assert_eq!(inbox.recv(&id).await, Received::Closed);
    }

    #[tokio::test]
    async fn a_drained_inbox_gives_back_what_a_burst_grew() {
        let inbox = Inbox::default();
        let id = id(1);
        for i in 0..100 {
            inbox.push(&numbered(i));
        }
        let capacity = || inbox.queue.lock().unwrap().messages.capacity();
        assert!(capacity() >= 100);
        for i in 0..100 {
            assert_eq!(
                inbox.recv(&id).await,
                Received::Message(Bytes::from(format!("{i}1")))
            );
        }
        assert!(capacity() <= IDLE_INBOX_CAPACITY, "{}", capacity());
    }

    #[test]
    fn streams_are_visited_in_registration_order() {
        let mut t = Table::new();
        // Keys in an order a hash map would not keep.
        for key in [5, 1_000_000, 3, 70, 0, 999] {
            t.streams.insert(
                key,
                Entry {
                    follows: [true; 3],
                    principal: None,
                    uris: Vec::new(),
                    task_ids: Vec::new(),
                    inbox: Arc::new(Inbox::default()),
                },
            );
        }
        let visited: Vec<u64> = t.followers(0).map(|(k, _)| k).collect();
        assert_eq!(visited, [0, 3, 5, 70, 999, 1_000_000]);
    }
}
