//! `subscriptions/listen`: a long-lived stream of change notifications for one request.
//!
//! The stream sends the acknowledgement first, then only the notification types the client
//! asked for and the server honours, each tagged with the listen request's id; it ends with
//! a graceful `SubscriptionsListenResult` when the server shuts down or the stream reaches
//! its maximum lifetime, and silently when the client goes away.

use std::collections::VecDeque;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use chacha20poly1305::aead::OsRng;
use chacha20poly1305::aead::rand_core::RngCore as _;
use futures_util::stream::BoxStream;
use serde_json::value::RawValue;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::advertised::Advertised;
use super::fanout::{Hub, Inbox, Interest, Received, Registration};
use super::reply::Reply;
use super::spliced::{EncodedId, encode};
use super::versions::{Versions, changed_lists};
use crate::notify::{ListFingerprints, Notifier};
use crate::observability::metrics;
use crate::protocol::{
    AcknowledgedParams, ErrorObject, Implementation, ListChangedParams, RESOURCES_UPDATED,
    RequestId, ResourceUpdatedParams, SUBSCRIPTIONS_ACKNOWLEDGED, SubscriptionFilter,
    SubscriptionMeta, SubscriptionsListenResult,
};

/// The most URIs (and task ids) one listen request may subscribe to.
pub(crate) const MAX_RESOURCE_SUBSCRIPTIONS: usize = 1_000;

/// Limits on listen streams, per replica.
///
/// ```
/// use std::time::Duration;
/// use stateless_mcp::Server;
/// use stateless_mcp::settings::ListenLimits;
///
/// let limits = ListenLimits::default()
///     .max_streams(20_000)
///     .max_lifetime(Some(Duration::from_secs(30 * 60)))
///     .retry_after(Duration::from_secs(5));
/// let server = Server::builder().listen_limits(limits).build().unwrap();
/// # drop(server);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ListenLimits {
    /// Open streams beyond which a new listen gets HTTP 503 with `Retry-After`.
    pub max_streams: usize,
    /// When set, a stream is closed gracefully after this long, minus up to 10% random
    /// jitter, so clients reconnect and spread over replicas (for example after a scale-out).
    pub max_lifetime: Option<Duration>,
    /// What `Retry-After` says when the replica is full.
    pub retry_after: Duration,
}

impl Default for ListenLimits {
    fn default() -> Self {
        ListenLimits {
            max_streams: 10_000,
            max_lifetime: None,
            retry_after: Duration::from_secs(5),
        }
    }
}

impl ListenLimits {
    /// Limits with this many streams at most.
    pub fn max_streams(mut self, n: usize) -> Self {
        self.max_streams = n;
        self
    }

    /// Limits with this maximum stream lifetime.
    pub fn max_lifetime(mut self, lifetime: Option<Duration>) -> Self {
        self.max_lifetime = lifetime;
        self
    }

    /// Limits with this `Retry-After`.
    pub fn retry_after(mut self, d: Duration) -> Self {
        self.retry_after = d;
        self
    }
}

/// The replica-wide listen state: limits, the open-stream count, the shutdown signal.
pub(crate) struct Listeners {
    limits: ListenLimits,
    /// This replica's lists, to compare with other replicas' announcements; a runtime
    /// change sends the new ones, which the fan-out turns into list-changed notifications.
    fingerprints: watch::Sender<Arc<ListFingerprints>>,
    open: Arc<AtomicUsize>,
    shutdown: CancellationToken,
    /// The replica's fan-out of bus events to its streams.
    hub: Hub,
}

impl Listeners {
    pub(crate) fn new(limits: ListenLimits, fingerprints: Arc<ListFingerprints>) -> Self {
        let fingerprints = watch::Sender::new(fingerprints);
        Listeners {
            limits,
            hub: Hub::new(fingerprints.subscribe()),
            fingerprints,
            open: Arc::new(AtomicUsize::new(0)),
            shutdown: CancellationToken::new(),
        }
    }

    /// The bounds on this replica's streams.
    pub(crate) fn limits(&self) -> &ListenLimits {
        &self.limits
    }

    /// Cancelled when the replica closes its streams (it drains).
    pub(crate) fn shutdown(&self) -> &CancellationToken {
        &self.shutdown
    }

    /// What tells every stream this replica's lists changed (the catalog sends the new
    /// fingerprints on it).
    pub(crate) fn fingerprints(&self) -> watch::Sender<Arc<ListFingerprints>> {
        self.fingerprints.clone()
    }

    /// This replica's list fingerprints, now and as they change.
    pub(crate) fn versions(&self) -> Versions {
        Versions::new(self.fingerprints.subscribe())
    }

    pub(crate) fn open(&self) -> usize {
        self.open.load(Ordering::Relaxed)
    }

    /// A slot for one more stream, or `None` when the replica is full.
    pub(crate) fn acquire(&self) -> Option<Slot> {
        let max = self.limits.max_streams;
        self.open
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < max).then_some(n + 1)
            })
            .ok()
            .map(|_| {
                metrics::record_listen_stream_opened();
                Slot(self.open.clone())
            })
    }
}

/// One open stream's place in the count; released when the stream is dropped.
pub(crate) struct Slot(Arc<AtomicUsize>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
        metrics::record_listen_stream_closed();
    }
}

/// An open listen stream: encoded JSON-RPC messages, ending after the graceful result (or
/// never, until dropped).
pub struct Listen {
    /// The messages, each one JSON text.
    pub messages: BoxStream<'static, Bytes>,
}

impl fmt::Debug for Listen {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Listen").finish_non_exhaustive()
    }
}

/// Reads and checks `params.notifications`, and keeps the part the server honours.
pub(crate) fn filter(
    raw: Option<&RawValue>,
    honoured: &Advertised,
) -> Result<SubscriptionFilter, ErrorObject> {
    let raw =
        raw.ok_or_else(|| ErrorObject::invalid_params("Missing required params.notifications"))?;
    let asked: SubscriptionFilter =
        crate::protocol::strict::object(&mut serde_json::Deserializer::from_str(raw.get()))
            .map_err(|e| {
                ErrorObject::invalid_params(format!("Invalid params.notifications: {e}"))
            })?;
    let uris = asked.resource_subscriptions.unwrap_or_default();
    if uris.len() > MAX_RESOURCE_SUBSCRIPTIONS {
        return Err(ErrorObject::invalid_params(format!(
            "Too many resourceSubscriptions: at most {MAX_RESOURCE_SUBSCRIPTIONS}"
        )));
    }
    if let Some(bad) = uris
        .iter()
        .find(|u| !crate::handler::registry::has_scheme(u))
    {
        return Err(ErrorObject::invalid_params(format!(
            "Invalid resourceSubscriptions entry {bad:?}: a URI needs a scheme"
        )));
    }
    let task_ids = asked.task_ids.unwrap_or_default();
    if task_ids.len() > MAX_RESOURCE_SUBSCRIPTIONS {
        return Err(ErrorObject::invalid_params(format!(
            "Too many taskIds: at most {MAX_RESOURCE_SUBSCRIPTIONS}"
        )));
    }
    let keep = |asked: Option<bool>, ok: bool| (asked == Some(true) && ok).then_some(true);
    Ok(SubscriptionFilter {
        tools_list_changed: keep(asked.tools_list_changed, honoured.tools),
        prompts_list_changed: keep(asked.prompts_list_changed, honoured.prompts),
        resources_list_changed: keep(asked.resources_list_changed, honoured.resources),
        resource_subscriptions: (honoured.resources && !uris.is_empty()).then_some(uris),
        task_ids: (honoured.tasks && !task_ids.is_empty()).then_some(task_ids),
    })
}

/// Whether an update of `updated` concerns a subscription to `subscribed`: the same URI, or
/// a sub-resource of it (`subscribed` followed by `/`, `?` or `#`, or `subscribed` ending in
/// `/`).
pub(crate) fn covers(subscribed: &str, updated: &str) -> bool {
    match updated.strip_prefix(subscribed) {
        Some("") => true,
        Some(rest) => subscribed.ends_with('/') || rest.starts_with(['/', '?', '#']),
        None => false,
    }
}

struct State {
    id: EncodedId,
    filter: SubscriptionFilter,
    pending: VecDeque<Bytes>,
    /// Filled by the replica's fan-out ([`super::fanout`]).
    inbox: Arc<Inbox>,
    shutdown: CancellationToken,
    deadline: Option<tokio::time::Instant>,
    /// Shared with the server: copied only into the closing result.
    server_info: Arc<Implementation>,
    done: bool,
    _registration: Registration,
    _slot: Slot,
}

/// The graceful `SubscriptionsListenResult` that closes the listen stream `id`.
pub(crate) fn listen_closed(id: &RequestId, server_info: &Implementation) -> Bytes {
    let mut result = SubscriptionsListenResult::new(id.clone());
    result.meta.server_info = Some(server_info.clone());
    Reply::result(id, &result).into_bytes()
}

impl State {
    fn meta(&self) -> SubscriptionMeta {
        SubscriptionMeta {
            subscription_id: self.id.id().clone(),
        }
    }

    fn list_changed(&mut self, method: &'static str) {
        metrics::record_notification_delivered(method);
        let meta = self.meta();
        self.pending
            .push_back(encode(method, ListChangedParams { meta }));
    }

    fn updated(&mut self, uri: &str) {
        metrics::record_notification_delivered(RESOURCES_UPDATED);
        let meta = self.meta();
        self.pending.push_back(encode(
            RESOURCES_UPDATED,
            ResourceUpdatedParams {
                meta,
                uri: uri.to_owned(),
            },
        ));
    }

    /// Messages were skipped: every followed list and subscribed resource may have changed.
    fn resync(&mut self) {
        let f = &self.filter;
        let follows = [
            f.tools_list_changed == Some(true),
            f.prompts_list_changed == Some(true),
            f.resources_list_changed == Some(true),
        ];
        for method in changed_lists(follows, None) {
            self.list_changed(method);
        }
        for uri in self
            .filter
            .resource_subscriptions
            .clone()
            .unwrap_or_default()
        {
            self.updated(&uri);
        }
    }

    fn close(&mut self) {
        self.pending
            .push_back(listen_closed(self.id.id(), &self.server_info));
        self.done = true;
    }

    async fn next(mut self) -> Option<(Bytes, Self)> {
        loop {
            if let Some(next) = self.pending.pop_front() {
                return Some((next, self));
            }
            if self.done {
                return None;
            }
            let deadline = self.deadline;
            let lifetime = async move {
                match deadline {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            let inbox = self.inbox.clone();
            tokio::select! {
                biased;
                _ = self.shutdown.cancelled() => self.close(),
                _ = lifetime => self.close(),
                received = inbox.recv(&self.id) => match received {
                    Received::Message(m) => self.pending.push_back(m),
                    Received::Resync => self.resync(),
                    // The bus is gone: nothing more can arrive; close gracefully.
                    Received::Closed => self.close(),
                },
            }
        }
    }
}

impl Listeners {
    /// Opens a stream for the listen request `id` with the honoured `filter`, fed by
    /// `notifier`'s bus through the replica's fan-out, or answers 503 when the replica is
    /// full.
    pub(crate) fn start(
        &self,
        id: RequestId,
        filter: SubscriptionFilter,
        principal: Option<String>,
        notifier: &Notifier,
        server_info: Arc<Implementation>,
    ) -> Result<Listen, Reply> {
        let Some(slot) = self.acquire() else {
            let secs = self.limits.retry_after.as_secs().max(1);
            let mut reply = Reply::error(
                Some(id),
                ErrorObject::internal_error(format!(
                    "Server busy: this replica holds its maximum of {} listen streams; retry in {secs} s",
                    self.limits.max_streams
                )),
            );
            reply.retry_after_secs = Some(u32::try_from(secs).unwrap_or(u32::MAX));
            return Err(reply);
        };
        let deadline = self.limits.max_lifetime.map(|life| {
            let jitter = life.mul_f64(f64::from(OsRng.next_u32() % 1000) / 10_000.0);
            tokio::time::Instant::now() + life.saturating_sub(jitter)
        });
        let ack = encode(
            SUBSCRIPTIONS_ACKNOWLEDGED,
            AcknowledgedParams {
                meta: SubscriptionMeta {
                    subscription_id: id.clone(),
                },
                notifications: filter.clone(),
            },
        );
        let id = EncodedId::new(id);
        let interest = Interest {
            follows: [
                filter.tools_list_changed == Some(true),
                filter.prompts_list_changed == Some(true),
                filter.resources_list_changed == Some(true),
            ],
            uris: filter.resource_subscriptions.clone().unwrap_or_default(),
            task_ids: filter.task_ids.clone().unwrap_or_default(),
            principal,
        };
        let (inbox, registration) = self.hub.register(interest, notifier);
        let state = State {
            id,
            filter,
            pending: VecDeque::from([ack]),
            inbox,
            shutdown: self.shutdown.clone(),
            deadline,
            server_info,
            done: false,
            _registration: registration,
            _slot: slot,
        };
        Ok(Listen {
            messages: Box::pin(futures_util::stream::unfold(state, State::next)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sub_resources_are_covered() {
        assert!(covers("file:///p", "file:///p"));
        assert!(covers("file:///p", "file:///p/config.json"));
        assert!(covers("file:///p/", "file:///p/a"));
        assert!(covers("db://t", "db://t?row=1"));
        assert!(!covers("file:///p", "file:///project"));
        assert!(!covers("file:///p/a", "file:///p"));
    }

    #[test]
    fn the_filter_keeps_what_the_server_honours() {
        let raw = RawValue::from_string(
            r#"{"toolsListChanged":true,"promptsListChanged":true,"resourcesListChanged":false,
                "resourceSubscriptions":["file:///a"]}"#
                .into(),
        )
        .unwrap();
        let f = filter(
            Some(&raw),
            &Advertised {
                tools: true,
                prompts: false,
                resources: true,
                tasks: false,
                skills: false,
            },
        )
        .unwrap();
        assert_eq!(
            serde_json::to_value(&f).unwrap(),
            serde_json::json!({"toolsListChanged": true, "resourceSubscriptions": ["file:///a"]})
        );
        for bad in [
            r#"[]"#,
            r#"{"resourceSubscriptions":["nope"]}"#,
            r#"{"toolsListChanged":1}"#,
        ] {
            let raw = RawValue::from_string(bad.into()).unwrap();
            let h = Advertised {
                tools: true,
                prompts: true,
                resources: true,
                tasks: true,
                skills: false,
            };
            assert_eq!(filter(Some(&raw), &h).unwrap_err().code, -32602, "{bad}");
        }
        let h = Advertised {
            tools: true,
            prompts: true,
            resources: true,
            tasks: true,
            skills: false,
        };
        assert!(filter(None, &h).is_err());
    }
}
