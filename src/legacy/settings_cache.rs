//! The settings of the sessions this replica loaded lately from the shared
//! [`SessionStore`](super::store::SessionStore), so that a session in use costs a store read
//! about once per [`SETTINGS_TTL`] on each replica rather than one per request.
//!
//! # How stale an entry can be
//!
//! A session's settings change only through a request (`logging/setLevel`,
//! `resources/subscribe`/`unsubscribe`, `DELETE`), and the replica that makes the change
//! forgets its own entry at once and announces the change on the bus (`session_changed`)
//! before it answers. Every replica's cache drops the entry of a session announced, and all
//! its entries when the bus says events may have been lost ([`Delivery::Resync`]: a lagging
//! subscriber, a broker reconnect). It reads the bus on every lookup, before answering, so
//! what the bus delivered is never served stale. An entry the bus did not invalidate (its
//! event lost with no resync yet, e.g. the broker unreachable when the change was made)
//! lives at most [`SETTINGS_TTL`]: that is the staleness bound.
//!
//! A load that started before an invalidation is not kept (each invalidation bumps a
//! generation the load's [`Ticket`] names), so a slow read cannot bring back what an event
//! just dropped.
//!
//! The cache is on only over a bus that joins replicas ([`Notifier::is_shared`](
//! crate::notify::Notifier::is_shared)): over an in-process bus nothing would tell this
//! replica about changes made by another process sharing the store, so every request reads
//! the store, as before.
//!
//! The last use a cached entry holds (`last_used`, for the idle limit) may lag another
//! replica's; the caller reads the store again before it refuses a session as idle or
//! records its use (see `Legacy::session`).
//!
//! Bounded: at most [`MAX_ENTRIES`] entries and about [`MAX_BYTES`] bytes; when full,
//! expired entries go first, then arbitrary ones until half the room is free.

use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

use super::bounded::Bounded;
use super::store::SessionSettings;
use crate::backends::bus::{BusReceiver, Delivery};
use crate::notify::ChangeEvent;

/// How long a session's settings are served from the cache at most.
pub(crate) const SETTINGS_TTL: Duration = Duration::from_secs(1);
/// The most sessions remembered.
pub(crate) const MAX_ENTRIES: usize = 16 * 1024;
/// About the most bytes the remembered settings take.
pub(crate) const MAX_BYTES: usize = 8 * 1024 * 1024;

/// What one entry costs besides its key and subscriptions (map slot, key box, bookkeeping).
const ENTRY_OVERHEAD: usize = 96;

struct Entry {
    settings: SessionSettings,
    loaded: Instant,
}

struct Inner {
    map: Bounded<Entry>,
    /// The bus the invalidations arrive on; `None`: the cache is off.
    bus: Option<BusReceiver>,
    /// Bumped by every invalidation.
    generation: u64,
}

/// Names the moment a load from the store started: [`SettingsCache::put`] keeps what it
/// loaded only if nothing was invalidated since.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ticket(u64);

/// The replica's cache of session settings (see the [module docs](self)).
pub(crate) struct SettingsCache {
    inner: Mutex<Inner>,
}

impl std::fmt::Debug for SettingsCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SettingsCache")
            .field("entries", &self.lock().map.len())
            .finish_non_exhaustive()
    }
}

impl Inner {
    /// Applies what the bus delivered since the last look.
    fn catch_up(&mut self) {
        loop {
            let Some(bus) = self.bus.as_mut() else {
                return;
            };
            match bus.try_recv() {
                Ok(None) => return,
                Ok(Some(Delivery::Event(event))) => {
                    if let ChangeEvent::SessionChanged { session } = &*event {
                        self.forget(session);
                    }
                }
                Ok(Some(Delivery::Resync)) => self.clear(),
                Err(_closed) => {
                    self.bus = None;
                    self.clear();
                }
            }
        }
    }

    fn forget(&mut self, key: &str) {
        self.generation += 1;
        self.map.remove(key);
    }

    fn clear(&mut self) {
        self.generation += 1;
        self.map.clear();
    }
}

impl SettingsCache {
    /// A cache invalidated by what `bus` delivers (`None`: off, every lookup misses).
    pub(crate) fn new(bus: Option<BusReceiver>) -> Self {
        Self::with_bounds(bus, MAX_ENTRIES, MAX_BYTES)
    }

    fn with_bounds(bus: Option<BusReceiver>, max_entries: usize, max_bytes: usize) -> Self {
        SettingsCache {
            inner: Mutex::new(Inner {
                map: Bounded::new(max_entries, max_bytes),
                bus,
                generation: 0,
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The settings of session `key` when loaded less than [`SETTINGS_TTL`] ago and not
    /// invalidated since; otherwise the [`Ticket`] to [`put`](Self::put) a fresh load with.
    pub(crate) fn get(&self, key: &str) -> Result<SessionSettings, Ticket> {
        self.get_at(key, Instant::now())
    }

    fn get_at(&self, key: &str, now: Instant) -> Result<SessionSettings, Ticket> {
        let mut inner = self.lock();
        inner.catch_up();
        match inner.map.get(key) {
            Some(e) if now.duration_since(e.loaded) < SETTINGS_TTL => Ok(e.settings.clone()),
            _ => Err(Ticket(inner.generation)),
        }
    }

    /// A ticket for a load that bypasses the cache (it is then put back fresh).
    pub(crate) fn ticket(&self) -> Ticket {
        let mut inner = self.lock();
        inner.catch_up();
        Ticket(inner.generation)
    }

    /// Keeps `settings`, loaded from the store for session `key` after `ticket` was given,
    /// unless something was invalidated meanwhile (or the cache is off).
    pub(crate) fn put(&self, key: &str, settings: &SessionSettings, ticket: Ticket) {
        self.put_at(key, settings, ticket, Instant::now());
    }

    fn put_at(&self, key: &str, settings: &SessionSettings, ticket: Ticket, now: Instant) {
        let size = key.len()
            + settings
                .subscriptions
                .iter()
                .map(String::len)
                .sum::<usize>()
            + ENTRY_OVERHEAD;
        let mut inner = self.lock();
        inner.catch_up();
        if inner.bus.is_none() || inner.generation != ticket.0 {
            return;
        }
        let entry = Entry {
            settings: settings.clone(),
            loaded: now,
        };
        let stale = |e: &Entry| now.duration_since(e.loaded) >= SETTINGS_TTL;
        inner.map.insert(key, entry, size, stale);
    }

    /// Records in the cached entry of `key` (if any) that this replica just recorded the
    /// session's use at `at` in the store.
    pub(crate) fn touched(&self, key: &str, at: SystemTime) {
        if let Some(e) = self.lock().map.get_mut(key) {
            e.settings.last_used = Some(at);
        }
    }

    /// Forgets session `key`: this replica changed its settings.
    pub(crate) fn forget(&self, key: &str) {
        self.lock().forget(key);
    }

    /// How many sessions it holds now.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.lock().map.len()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use futures_util::future::BoxFuture;

    use super::super::session::tests::{K1, ring};
    use super::*;
    use crate::backends::bus::{Fanout, MemoryBus, NotifyBus};
    use crate::legacy::store::{MemorySessionStore, SessionStore};
    use crate::legacy::{Legacy, Refusal};
    use crate::notify::Notifier;
    use crate::protocol::{ClientCapabilities, LoggingLevel};
    use crate::server::Server;

    /// An in-process bus that says it joins replicas, as a broker's does.
    struct Shared(MemoryBus);

    impl NotifyBus for Shared {
        fn publish(&self, event: ChangeEvent) -> BoxFuture<'_, Result<(), crate::Error>> {
            self.0.publish(event)
        }
        fn subscribe(&self) -> BusReceiver {
            self.0.subscribe()
        }
    }

    #[tokio::test]
    async fn replicas_on_a_shared_bus_read_the_store_once_a_second_and_hear_changes_at_once() {
        let store = Arc::new(MemorySessionStore::default());
        let notifier = Notifier::new(Arc::new(Shared(MemoryBus::default())));
        let replica = || {
            let server = Server::builder()
                .state_keys(ring(K1))
                .notifier(notifier.clone())
                .session_store(store.clone())
                .build()
                .unwrap();
            Legacy::of(&server).unwrap()
        };
        let (a, b) = (replica(), replica());
        let caps = ClientCapabilities::default();
        let token =
            super::super::session::issue(&ring(K1), "2025-11-25", &caps, None, None).unwrap();
        let (session, settings) = b.session(None, Some(&token), None).await.unwrap();
        assert_eq!(settings.log_level, None);
        assert_eq!(b.state.settings_cache.len(), 1, "cached on b");
        // Written in the store behind b's back (no announcement): b serves what it cached,
        // for at most SETTINGS_TTL.
        store
            .set_log_level(&session.key, LoggingLevel::Debug, session.expires)
            .await
            .unwrap();
        let (_, settings) = b.session(None, Some(&token), None).await.unwrap();
        assert_eq!(settings.log_level, None, "cached");
        // A change made on a (announced on the bus): b sees it on its next request.
        a.session_changed(&session.key).await;
        let (_, settings) = b.session(None, Some(&token), None).await.unwrap();
        assert_eq!(settings.log_level, Some(LoggingLevel::Debug));
        // Deleted on a: refused on b at once.
        let (_, _) = a.session(None, Some(&token), None).await.unwrap();
        store.revoke(&session.key, session.expires).await.unwrap();
        a.session_changed(&session.key).await;
        for replica in [&a, &b] {
            let refused = replica.session(None, Some(&token), None).await.unwrap_err();
            assert_eq!(refused.refusal, Some(Refusal::Unknown));
        }
    }

    fn level(l: LoggingLevel) -> SessionSettings {
        SessionSettings {
            log_level: Some(l),
            ..SessionSettings::default()
        }
    }

    fn changed(key: &str) -> ChangeEvent {
        ChangeEvent::SessionChanged {
            session: key.to_owned(),
        }
    }

    #[test]
    fn an_entry_lives_until_its_session_changes_or_a_second_passes() {
        let bus = Fanout::new(16);
        let cache = SettingsCache::new(Some(bus.subscribe()));
        let now = Instant::now();
        let ticket = cache.get_at("a", now).unwrap_err();
        cache.put_at("a", &level(LoggingLevel::Info), ticket, now);
        let ticket = cache.get_at("b", now).unwrap_err();
        cache.put_at("b", &level(LoggingLevel::Debug), ticket, now);
        assert_eq!(cache.get_at("a", now), Ok(level(LoggingLevel::Info)));
        // Another session's change leaves it; its own drops it at once.
        bus.deliver(changed("b"));
        assert!(cache.get_at("a", now).is_ok());
        assert!(cache.get_at("b", now).is_err());
        bus.deliver(ChangeEvent::tools_list_changed());
        bus.deliver(changed("a"));
        assert!(cache.get_at("a", now).is_err());
        // Past the TTL it misses, whatever the bus said.
        let ticket = cache.ticket();
        cache.put_at("a", &level(LoggingLevel::Info), ticket, now);
        assert!(cache.get_at("a", now + SETTINGS_TTL / 2).is_ok());
        assert!(cache.get_at("a", now + SETTINGS_TTL).is_err());
        // This replica's own change: forgotten without the bus.
        let ticket = cache.ticket();
        cache.put_at("a", &level(LoggingLevel::Info), ticket, now);
        cache.forget("a");
        assert!(cache.get_at("a", now).is_err());
    }

    #[test]
    fn a_load_older_than_an_invalidation_is_not_kept() {
        let bus = Fanout::new(16);
        let cache = SettingsCache::new(Some(bus.subscribe()));
        let now = Instant::now();
        let ticket = cache.get_at("a", now).unwrap_err();
        // The session changes while its (old) settings are read from the store.
        bus.deliver(changed("a"));
        cache.put_at("a", &SessionSettings::default(), ticket, now);
        assert!(cache.get_at("a", now).is_err());
        let ticket = cache.ticket();
        cache.forget("zzz");
        cache.put_at("a", &SessionSettings::default(), ticket, now);
        assert!(
            cache.get_at("a", now).is_err(),
            "conservative: any invalidation"
        );
    }

    #[test]
    fn a_resync_or_a_closed_bus_drops_everything() {
        let bus = Fanout::new(2);
        let cache = SettingsCache::new(Some(bus.subscribe()));
        let now = Instant::now();
        for key in ["a", "b"] {
            let ticket = cache.ticket();
            cache.put_at(key, &SessionSettings::default(), ticket, now);
        }
        assert_eq!(cache.len(), 2);
        // Lagging behind a ring of 2 is a resync.
        for _ in 0..5 {
            bus.deliver(ChangeEvent::tools_list_changed());
        }
        assert!(cache.get_at("a", now).is_err());
        assert_eq!(cache.len(), 0);
        let ticket = cache.ticket();
        cache.put_at("a", &SessionSettings::default(), ticket, now);
        assert!(cache.get_at("a", now).is_ok());
        drop(bus);
        assert!(cache.get_at("a", now).is_err());
        let ticket = cache.ticket();
        cache.put_at("a", &SessionSettings::default(), ticket, now);
        assert_eq!(cache.len(), 0, "off once the bus is gone");
        // Off from the start without a bus.
        let off = SettingsCache::new(None);
        off.put_at("a", &SessionSettings::default(), off.ticket(), now);
        assert!(off.get_at("a", now).is_err());
    }

    #[test]
    fn it_stays_within_its_bounds() {
        let bus = Fanout::new(16);
        let cache = SettingsCache::with_bounds(Some(bus.subscribe()), 8, MAX_BYTES);
        let now = Instant::now();
        for i in 0..40 {
            let key = format!("session-{i}");
            let ticket = cache.ticket();
            cache.put_at(&key, &SessionSettings::default(), ticket, now);
            assert!(cache.len() <= 8);
            assert!(cache.get_at(&key, now).is_ok(), "the newest is kept");
        }
        let big = SessionSettings {
            subscriptions: (0..100).map(|i| format!("test://{i:0100}")).collect(),
            ..SessionSettings::default()
        };
        let small = SettingsCache::with_bounds(Some(bus.subscribe()), 1000, 40_000);
        for i in 0..20 {
            let ticket = small.ticket();
            small.put_at(&format!("s{i}"), &big, ticket, now);
            let (bytes, counted) = small.lock().map.bytes();
            assert!(bytes <= 40_000);
            assert_eq!(bytes, counted);
        }
        let ticket = small.ticket();
        let huge = SessionSettings {
            subscriptions: (0..1000).map(|i| format!("test://{i:0100}")).collect(),
            ..SessionSettings::default()
        };
        small.put_at("huge", &huge, ticket, now);
        assert!(small.get_at("huge", now).is_err(), "too large to keep");
    }
}
