//! The in-process session store.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::SystemTime;

use futures_util::future::BoxFuture;

use super::{MAX_SESSION_SUBSCRIPTIONS, SessionSettings, SessionStore};
use crate::Error;
use crate::protocol::LoggingLevel;

/// The most sessions a [`MemorySessionStore`] holds by default.
pub(crate) const DEFAULT_MAX_SESSIONS: usize = 100_000;

/// A [`SessionStore`] in this process's memory: enough for one replica (another replica
/// would not see a `setLevel` or a `DELETE` made here). Expired sessions are dropped as new
/// ones arrive; when it holds `max_sessions` live ones it refuses new writes with
/// [`ErrorKind::Unavailable`](crate::ErrorKind::Unavailable).
///
/// ```
/// use std::sync::Arc;
/// use stateless_mcp::Server;
/// use stateless_mcp::backends::MemorySessionStore;
///
/// let store = Arc::new(MemorySessionStore::new(10_000));
/// let server = Server::builder().session_store(store.clone()).build().unwrap();
/// assert!(store.is_empty());
/// # drop(server);
/// ```
#[derive(Debug)]
pub struct MemorySessionStore {
    max_sessions: usize,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    sessions: HashMap<String, (SessionSettings, SystemTime)>,
    /// Size after the last sweep of expired sessions; the next sweep happens at twice that.
    swept_at: usize,
}

impl Default for MemorySessionStore {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_SESSIONS)
    }
}

impl MemorySessionStore {
    /// A store holding at most `max_sessions` live sessions.
    pub fn new(max_sessions: usize) -> Self {
        MemorySessionStore {
            max_sessions: max_sessions.max(1),
            inner: Mutex::new(Inner::default()),
        }
    }

    /// How many sessions it holds now (expired ones included until the next sweep).
    pub fn len(&self) -> usize {
        self.lock().sessions.len()
    }

    /// Whether it holds no session.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn load_at(&self, session: &str, now: SystemTime) -> SessionSettings {
        match self.lock().sessions.get(session) {
            Some((settings, until)) if *until > now => settings.clone(),
            _ => SessionSettings::default(),
        }
    }

    /// Changes the session's entry (made empty when absent or expired) with `change`.
    fn update<T>(
        &self,
        session: &str,
        expires: SystemTime,
        now: SystemTime,
        change: impl FnOnce(&mut SessionSettings) -> T,
    ) -> Result<T, Error> {
        let mut inner = self.lock();
        let len = inner.sessions.len();
        if !inner.sessions.contains_key(session)
            && (len >= self.max_sessions || len >= (inner.swept_at * 2).max(1024))
        {
            inner.sessions.retain(|_, (_, until)| *until > now);
            inner.swept_at = inner.sessions.len();
            if inner.sessions.len() >= self.max_sessions {
                return Err(Error::unavailable(
                    "the session store is full",
                    format!("{} sessions are alive", self.max_sessions),
                ));
            }
        }
        let entry = inner
            .sessions
            .entry(session.to_owned())
            .or_insert_with(|| (SessionSettings::default(), expires));
        if entry.1 <= now {
            *entry = (SessionSettings::default(), expires);
        }
        entry.1 = entry.1.max(expires);
        Ok(change(&mut entry.0))
    }
}

impl SessionStore for MemorySessionStore {
    fn load<'a>(&'a self, session: &'a str) -> BoxFuture<'a, Result<SessionSettings, Error>> {
        let settings = self.load_at(session, SystemTime::now());
        Box::pin(async move { Ok(settings) })
    }

    fn set_log_level<'a>(
        &'a self,
        session: &'a str,
        level: LoggingLevel,
        expires: SystemTime,
    ) -> BoxFuture<'a, Result<(), Error>> {
        let done = self.update(session, expires, SystemTime::now(), |s| {
            s.log_level = Some(level);
        });
        Box::pin(async move { done })
    }

    fn subscribe<'a>(
        &'a self,
        session: &'a str,
        uri: &'a str,
        expires: SystemTime,
    ) -> BoxFuture<'a, Result<bool, Error>> {
        let done = self.update(session, expires, SystemTime::now(), |s| {
            if s.subscriptions.contains(uri) {
                return true;
            }
            if s.subscriptions.len() >= MAX_SESSION_SUBSCRIPTIONS {
                return false;
            }
            s.subscriptions.insert(uri.to_owned());
            true
        });
        Box::pin(async move { done })
    }

    fn unsubscribe<'a>(
        &'a self,
        session: &'a str,
        uri: &'a str,
    ) -> BoxFuture<'a, Result<(), Error>> {
        if let Some((settings, _)) = self.lock().sessions.get_mut(session) {
            settings.subscriptions.remove(uri);
        }
        Box::pin(async { Ok(()) })
    }

    fn touch<'a>(
        &'a self,
        session: &'a str,
        at: SystemTime,
        expires: SystemTime,
    ) -> BoxFuture<'a, Result<(), Error>> {
        let done = self.update(session, expires, SystemTime::now(), |s| {
            s.last_used = Some(s.last_used.map_or(at, |t| t.max(at)));
        });
        Box::pin(async move { done })
    }

    fn revoke<'a>(
        &'a self,
        session: &'a str,
        expires: SystemTime,
    ) -> BoxFuture<'a, Result<(), Error>> {
        let done = self.update(session, expires, SystemTime::now(), |s| s.revoked = true);
        Box::pin(async move { done })
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn expired_sessions_read_as_new_and_are_swept() {
        let store = MemorySessionStore::new(2);
        let now = SystemTime::now();
        let soon = now + Duration::from_secs(1);
        store.update("a", soon, now, |s| s.revoked = true).unwrap();
        store.update("b", soon, now, |s| s.revoked = true).unwrap();
        assert!(store.load_at("a", now).revoked);
        let later = soon + Duration::from_secs(1);
        assert_eq!(store.load_at("a", later), SessionSettings::default());
        // Full of live sessions: refused. Once they expired: swept, and room again.
        assert!(store.update("c", soon, now, |_| ()).is_err());
        store
            .update("c", later + Duration::from_secs(9), later, |_| ())
            .unwrap();
        assert_eq!(store.len(), 1);
        // An expired entry written again starts empty.
        store.update("e", soon, now, |s| s.revoked = true).unwrap();
        let fresh = store
            .update("e", later + Duration::from_secs(9), later, |s| s.revoked)
            .unwrap();
        assert!(!fresh);
    }
}
